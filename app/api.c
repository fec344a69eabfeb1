/* cisolve: the C API of libcisolve (include/cisolve.h). A handle holds the problem (integrals
 * copied in), the options (app/options.c, as the command line parses them) and the pipeline
 * (app/pipeline.c) that solves it as the program does; after a solve, the space, the backend and
 * the results. */
#define _POSIX_C_SOURCE 200809L
#include "cisolve.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/options.h"
#include "app/pipeline.h"
#include "app/target.h"
#include "app/version.h"
#include "base/error.h"
#include "base/problem.h"
#include "base/util.h"
#include "hamiltonian/rdm.h"
#include "hamiltonian/space.h"
#include "spmv/hyb_op.h"

struct cisolve {
  cis_problem prob;    /* the integrals; electrons and space as the options resolve them */
  int nalpha, nbeta;   /* as given: --ms2 redistributes them */
  cis_options opt;
  cis_pipeline pl;     /* its space (once built) and, after a solve, backend and results */
  int solved;
  double *guess;       /* guess_n x guess_k, or NULL */
  int guess_k;
  int64_t guess_n;
  double t[CISOLVE_NTIMINGS]; /* the last solve's (cisolve_timings) */
};

/* Every entry point: the code a caller sees, and the message printed when asked to be verbose. */
static int finish(const cisolve *c, cis_err e) {
  if (e == CIS_OK) return CISOLVE_OK;
  if (c && c->opt.verbose) cis_error_print(1);
  return cis_exit_code(e);
}

/* The options a step runs with: silent unless verbose. */
static cis_options run_options(const cisolve *c) {
  cis_options o = c->opt;
  if (!o.verbose) o.quiet = 1;
  return o;
}

static cis_err check_integrals(int norb, int nalpha, int nbeta, const double *h1e,
                               const double *eri) {
  CIS_CHECK(norb >= 1 && norb <= 100000, CIS_ERR_INPUT, "norb = %d, expected 1..100000", norb);
  CIS_CHECK(nalpha >= 0 && nbeta >= 0 && nalpha <= norb && nbeta <= norb, CIS_ERR_INPUT,
            "%d alpha and %d beta electrons cannot occupy %d orbitals (each spin needs "
            "0 <= n <= norb)", nalpha, nbeta, norb);
  CIS_CHECK(h1e && eri, CIS_ERR_INPUT, "h1e and eri must be given (NULL %s)", h1e ? "eri" : "h1e");
  int64_t n2 = (int64_t)norb * norb, ne = cis_eri_size(norb);
  CIS_CHECK(ne != INT64_MAX, CIS_ERR_INPUT, "norb = %d: its 8-fold packed integrals are more "
            "values than memory can hold", norb);
  double amax = 0;
  for (int64_t i = 0; i < n2; i++) {
    CIS_CHECK(isfinite(h1e[i]), CIS_ERR_INPUT, "h1e[%lld][%lld] = %g is not a finite number",
              (long long)(i / norb), (long long)(i % norb), h1e[i]);
    amax = CIS_MAX(amax, fabs(h1e[i]));
  }
  for (int i = 0; i < norb; i++)
    for (int j = 0; j < i; j++)
      CIS_CHECK(fabs(h1e[i * (int64_t)norb + j] - h1e[j * (int64_t)norb + i]) <=
                    1e-10 * CIS_MAX(1.0, amax), CIS_ERR_INPUT,
                "h1e is not symmetric: h1e[%d][%d] = %.17g, h1e[%d][%d] = %.17g", i, j,
                h1e[i * (int64_t)norb + j], j, i, h1e[j * (int64_t)norb + i]);
  for (int64_t i = 0; i < ne; i++)
    CIS_CHECK(isfinite(eri[i]), CIS_ERR_INPUT,
              "eri[%lld] (8-fold packed) = %g is not a finite number", (long long)i, eri[i]);
  return CIS_OK;
}

/* h1e and eri into I (allocated for I->norb orbitals); h1e symmetric to round-off is averaged,
 * as the input readers do (the Hamiltonian reads one triangle). */
static void copy_integrals(cis_integrals *I, const double *h1e, const double *eri) {
  int norb = I->norb;
  for (int i = 0; i < norb; i++)
    for (int j = 0; j < norb; j++)
      I->h1e[i * (int64_t)norb + j] =
          0.5 * (h1e[i * (int64_t)norb + j] + h1e[j * (int64_t)norb + i]);
  memcpy(I->eri, eri, (size_t)cis_eri_size(norb) * sizeof(double));
}

static cis_err create(int norb, int nalpha, int nbeta, const double *h1e, const double *eri,
                      double ecore, cisolve **out) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  cisolve *c = NULL;
  CIS_TRY(check_integrals(norb, nalpha, nbeta, h1e, eri));
  if (!isfinite(ecore)) CIS_FAIL(CIS_ERR_INPUT, "ecore = %g is not a finite number", ecore);
  CIS_TRY(cis_calloc(&c, 1, sizeof *c, "the cisolve handle"));
  cis_integrals *I = &c->prob.ints;
  int64_t n2 = (int64_t)norb * norb, ne = cis_eri_size(norb);
  CIS_TRY(cis_malloc(&I->h1e, (size_t)n2, sizeof(double), "h1e"));
  CIS_TRY(cis_malloc(&I->eri, (size_t)ne, sizeof(double), "eri"));
  I->norb = norb;
  copy_integrals(I, h1e, eri);
  I->nalpha = c->nalpha = nalpha;
  I->nbeta = c->nbeta = nbeta;
  I->ecore = ecore;
  c->prob.kind = CIS_PROBLEM_INTEGRALS;
  snprintf(c->prob.source, sizeof c->prob.source, "the problem in memory");
  cis_options_default(&c->opt);
  snprintf(c->opt.input, sizeof c->opt.input, "the problem in memory");
  cis_pipeline_init(&c->pl);
  *out = c;
  c = NULL;
cleanup:
  if (c) {
    cis_problem_free(&c->prob);
    cis_free(&c);
  }
  return err;
}

int cisolve_create(int norb, int nalpha, int nbeta, const double *h1e, const double *eri,
                   double ecore, cisolve **out) {
  cis_error_clear();
  if (!out) return finish(NULL, cis_error_raise(CIS_ERR_INPUT, __FILE__, __LINE__, __func__,
                                                "cisolve_create: out is NULL"));
  *out = NULL;
  return finish(NULL, create(norb, nalpha, nbeta, h1e, eri, ecore, out));
}

/* The results; with space_too the space and the guess, which is in its order. */
static void discard_results(cisolve *c, int space_too) {
  if (space_too) {
    cis_pipeline_free(&c->pl);
    cis_free(&c->guess);
    c->guess_k = 0;
  } else {
    cis_pipeline_free_solve(&c->pl);
  }
  c->solved = 0;
}

/* The calling thread's OpenMP thread count for a call's duration (--threads). */
static int threads_enter(const cis_options *o) {
  int before = omp_get_max_threads();
  if (o->threads > 0) omp_set_num_threads(o->threads);
  return before;
}

static cis_err set_integrals(cisolve *c, const double *h1e, const double *eri, double ecore) {
  cis_err err = CIS_OK;
  CIS_CHECK(c, CIS_ERR_INPUT, "cisolve_set_integrals: the handle is NULL");
  cis_integrals *I = &c->prob.ints, next = *I; /* the new integrals, swapped in once accepted */
  CIS_CALL(check_integrals(I->norb, c->nalpha, c->nbeta, h1e, eri));
  CIS_CHECK(isfinite(ecore), CIS_ERR_INPUT, "ecore = %g is not a finite number", ecore);
  next.h1e = next.eri = NULL;
  CIS_CLEANUP_FUNCTION;
  CIS_TRY(cis_malloc(&next.h1e, (size_t)I->norb * (size_t)I->norb, sizeof(double), "h1e"));
  CIS_TRY(cis_malloc(&next.eri, (size_t)cis_eri_size(I->norb), sizeof(double), "eri"));
  copy_integrals(&next, h1e, eri);
  cis_options o = run_options(c);
  /* a space of one irrep is kept only for integrals with the orbitals' irreps, as building it
   * checks */
  if (c->pl.space && cis_space_irrep(c->pl.space))
    CIS_TRY(cis_target_check_orbsym(&o, &next, "the option irrep"));
  double *h1e_old = I->h1e, *eri_old = I->eri;
  I->h1e = next.h1e;
  I->eri = next.eri;
  I->ecore = ecore;
  next.h1e = h1e_old; /* freed below */
  next.eri = eri_old;
  discard_results(c, 0);
  if (c->pl.space) {
    int before = threads_enter(&o);
    err = cis_space_set_integrals(c->pl.space, I, o.threads);
    omp_set_num_threads(before);
    if (err != CIS_OK) discard_results(c, 1); /* built again, from these integrals, when needed */
  }
cleanup:
  cis_free(&next.h1e);
  cis_free(&next.eri);
  return err;
}

int cisolve_set_integrals(cisolve *c, const double *h1e, const double *eri, double ecore) {
  cis_error_clear();
  return finish(c, set_integrals(c, h1e, eri, ecore));
}

/* The program's own options: they name files or steer its run control, which a library call
 * has none of. */
static int program_only(const char *key) {
  static const char *const keys[] = {"write-input", "checkpoint-every", "checkpoint-interval",
                                     "walltime", "rdm1", "rdm2", "trans-rdm", "molden"};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    if (strcmp(key, keys[i]) == 0) return 1;
  return 0;
}

/* The options the space is built from: a change discards it. */
static int shapes_space(const char *key) {
  static const char *const keys[] = {"space", "ms2", "ref-size", "ref-det", "cas", "irrep",
                                     "point-group"};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    if (strcmp(key, keys[i]) == 0) return 1;
  return 0;
}

static cis_err set_option(cisolve *c, const char *key, const char *value) {
  CIS_CHECK(c && key, CIS_ERR_INPUT, "cisolve_set_option: %s is NULL", c ? "key" : "the handle");
  if (strncmp(key, "--", 2) == 0) key += 2;
  CIS_CHECK(strcmp(key, "frozen") && strcmp(key, "active"), CIS_ERR_INPUT,
            "option '%s': the library takes the integrals of the orbitals to correlate (fold a "
            "frozen core into h1e and ecore, as PySCF's CASCI does, before cisolve_create)", key);
  CIS_CHECK(!program_only(key), CIS_ERR_INPUT,
            "option '%s' belongs to the cisolve program (its files and run control), not to the "
            "library", key);
  cis_options o = c->opt;
  CIS_CALL(cis_options_set(&o, key, value));
  CIS_CHECK(!(o.verbose && o.quiet), CIS_ERR_INPUT, "verbose and quiet exclude each other");
  c->opt = o;
  discard_results(c, shapes_space(key));
  return CIS_OK;
}

int cisolve_set_option(cisolve *c, const char *key, const char *value) {
  cis_error_clear();
  cis_err e = set_option(c, key, value);
  /* a refused option is a bad input, as in an input file */
  if (e == CIS_ERR_USAGE) e = CIS_ERR_INPUT;
  return finish(c, e);
}

static cis_err set_orbsym(cisolve *c, const int *orbsym) {
  CIS_CHECK(c, CIS_ERR_INPUT, "cisolve_set_orbsym: the handle is NULL");
  int norb = c->prob.ints.norb;
  int *copy = NULL;
  if (orbsym) {
    for (int p = 0; p < norb; p++)
      CIS_CHECK(orbsym[p] >= 1 && orbsym[p] <= 8, CIS_ERR_INPUT,
                "cisolve_set_orbsym: orbital %d has irrep %d (expected 1..8, Molpro's numbering "
                "as in an FCIDUMP's ORBSYM)", p + 1, orbsym[p]);
    CIS_CALL(cis_malloc(&copy, (size_t)norb, sizeof *copy, "orbital irreps"));
    memcpy(copy, orbsym, sizeof *copy * (size_t)norb);
  }
  cis_free(&c->prob.ints.orbsym);
  c->prob.ints.orbsym = copy;
  discard_results(c, 1);
  return CIS_OK;
}

int cisolve_set_orbsym(cisolve *c, const int *orbsym) {
  cis_error_clear();
  return finish(c, set_orbsym(c, orbsym));
}

/* The electrons and the space as the options say, then the space (once). */
static cis_err build_space(cisolve *c, const cis_options *o) {
  if (c->pl.space) return CIS_OK;
  c->prob.ints.nalpha = c->nalpha;
  c->prob.ints.nbeta = c->nbeta;
  cis_space_spec_free(&c->prob.space); /* resolved again from the options */
  cis_target target;
  memset(&target, 0, sizeof target);
  CIS_CALL(cis_pipeline_resolve_problem(o, &c->prob, &target));
  CIS_CALL(cis_pipeline_space(&c->pl, o, &c->prob));
  return CIS_OK;
}

int cisolve_build_space(cisolve *c) {
  cis_error_clear();
  if (!c) return finish(NULL, cis_error_raise(CIS_ERR_INPUT, __FILE__, __LINE__, __func__,
                                              "cisolve_build_space: the handle is NULL"));
  cis_options o = run_options(c);
  int before = threads_enter(&o);
  cis_err e = build_space(c, &o);
  omp_set_num_threads(before);
  return finish(c, e);
}

static cis_err set_guess(cisolve *c, int k, const double *X) {
  CIS_CHECK(c, CIS_ERR_INPUT, "cisolve_set_guess: the handle is NULL");
  CIS_CHECK(k >= 0, CIS_ERR_INPUT, "cisolve_set_guess: k = %d vectors", k);
  if (k == 0 || !X) {
    cis_free(&c->guess);
    c->guess_k = 0;
    return CIS_OK;
  }
  cis_options o = run_options(c);
  int before = threads_enter(&o);
  cis_err e = build_space(c, &o);
  omp_set_num_threads(before);
  CIS_CALL(e);
  int64_t n = cis_space_ndet(c->pl.space);
  for (int64_t i = 0; i < n * k; i++)
    CIS_CHECK(isfinite(X[i]), CIS_ERR_INPUT, "guess vector %lld, element %lld is not a finite "
              "number", (long long)(i / n), (long long)(i % n));
  if (!c->guess || c->guess_k != k || c->guess_n != n) { /* else the last guess's memory */
    double *G = NULL;
    CIS_CALL(cis_malloc(&G, (size_t)n * (size_t)k, sizeof *G, "the guess vectors"));
    cis_free(&c->guess);
    c->guess = G;
  }
  memcpy(c->guess, X, (size_t)n * (size_t)k * sizeof *X);
  c->guess_k = k;
  c->guess_n = n;
  return CIS_OK;
}

int cisolve_set_guess(cisolve *c, int k, const double *X) {
  cis_error_clear();
  return finish(c, set_guess(c, k, X));
}

/* The solver's guess: the caller's vectors (borrowed when there are nroots or more; *out stays
 * NULL), completed to nroots with the Reference block's lowest states (the default guess) where
 * they are fewer (*out: n x nroots, allocated). */
static cis_err make_guess(const cisolve *c, int nroots, const double **guess, double **out) {
  const cis_pipeline *pl = &c->pl;
  int64_t n = pl->h->n;
  CIS_CHECK(c->guess_n == n, CIS_ERR_INPUT,
            "the guess has %lld rows; the space has %lld determinants (a guess is in the order "
            "of the space the current options build)", (long long)c->guess_n, (long long)n);
  if (c->guess_k >= nroots) {
    *guess = c->guess;
    return CIS_OK;
  }
  CIS_CALL(cis_calloc(out, (size_t)n * (size_t)nroots, sizeof **out, "the solver's guess"));
  *guess = *out;
  int from_user = c->guess_k < nroots ? c->guess_k : nroots;
  memcpy(*out, c->guess, (size_t)n * (size_t)from_user * sizeof **out);
  const cis_refstates *st = &pl->rst;
  for (int j = from_user; j < nroots && j < st->m; j++)
    memcpy(*out + (int64_t)j * n, st->U + (int64_t)j * st->nref, (size_t)st->nref * sizeof **out);
  /* columns left at zero (a Reference block smaller than nroots): random ones take their place
   * in the solver */
  return CIS_OK;
}

static cis_err solve(cisolve *c) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  double *G = NULL;
  cis_options o = run_options(c);
  int before = threads_enter(&o);
  cis_pipeline *pl = &c->pl;
  double *t = c->t, t0 = cis_wtime(), t1;
  memset(c->t, 0, sizeof c->t);
  discard_results(c, 0);
  CIS_TRY(build_space(c, &o));
  t[CISOLVE_T_SPACE] = (t1 = cis_wtime()) - t0;
  if (o.device != CIS_DEVICE_CPU) cis_backend_cuda_prewarm(o.device_index);
  CIS_TRY(cis_pipeline_hamiltonian(pl, &o, &c->prob, NULL));
  t[CISOLVE_T_HAMILTONIAN] = cis_wtime() - t1;
  CIS_TRY(cis_pipeline_backend(pl, &o));
  t[CISOLVE_T_BACKEND] = pl->t_device;
  t[CISOLVE_T_OPERATOR] = pl->t_upload;
  t1 = cis_wtime();
  CIS_TRY(cis_pipeline_states(pl, &o));
  if (c->guess) {
    CIS_TRY(make_guess(c, o.nroots, &pl->eo.guess_X, &G));
  }
  t[CISOLVE_T_STATES] = cis_wtime() - t1;
  CIS_TRY(cis_pipeline_solve(pl, &o));
  t[CISOLVE_T_SOLVER] = pl->t_solve;
  t[CISOLVE_T_PRODUCTS] = pl->res.t_matvec;
  t[CISOLVE_T_ORTHO] = pl->res.t_ortho;
  t[CISOLVE_T_CHECK] = pl->t_check;
  t1 = cis_wtime();
  CIS_TRY(cis_pipeline_results(pl, &o, 0)); /* <S^2>: cisolve_s2, when asked */
  /* what the results need is kept; the matrix (on the host and a GPU) is released */
  pl->eo.guess_X = NULL;
  cis_operator_destroy(&pl->op);
  cis_hyb_cuda_op_pool_destroy(&pl->pool);
  cis_hmat_destroy(&pl->h);
  c->solved = 1;
  t[CISOLVE_T_RESULTS] = cis_wtime() - t1;
  t[CISOLVE_T_TOTAL] = cis_wtime() - t0;
cleanup:
  cis_backend_cuda_prewarm_join();
  cis_free(&G);
  if (err != CIS_OK) discard_results(c, 0);
  omp_set_num_threads(before);
  return err;
}

int cisolve_solve(cisolve *c) {
  cis_error_clear();
  if (!c) return finish(NULL, cis_error_raise(CIS_ERR_INPUT, __FILE__, __LINE__, __func__,
                                              "cisolve_solve: the handle is NULL"));
  cis_err e = solve(c);
  if (e != CIS_OK) return finish(c, e);
  const cis_eig_result *r = &c->pl.res;
  if (r->all_converged) return CISOLVE_OK;
  int bad = 0;
  for (int j = 0; j < r->nroots; j++) bad += !r->converged[j];
  cis_error_raise(CIS_ERR_NUMERIC, __FILE__, __LINE__, __func__,
                  "%d of %d roots not converged after %d iterations (raise max-iter, or loosen "
                  "tol / tol-residual); the results are those of the last iteration",
                  bad, r->nroots, r->iterations);
  if (c->opt.verbose) cis_error_print(0);
  return CISOLVE_NOT_CONVERGED;
}

/* Y = H X on a pipeline of its own that borrows the handle's space: the results stay. */
static cis_err apply(cisolve *c, int k, const double *X, double *Y) {
  cis_err err = CIS_OK;
  CIS_CHECK(c, CIS_ERR_INPUT, "cisolve_apply: the handle is NULL");
  CIS_CHECK(k >= 1 && X && Y, CIS_ERR_INPUT, "cisolve_apply: %d vectors at %p into %p (need k >= 1 "
            "and both arrays)", k, (const void *)X, (void *)Y);
  CIS_CLEANUP_FUNCTION;
  cis_options o = run_options(c);
  o.matrix_free = CIS_MATRIX_FREE_ON; /* one product: storing the rows would not pay */
  o.quiet = 1;
  int before = threads_enter(&o);
  cis_pipeline pl;
  cis_pipeline_init(&pl);
  double *dx = NULL, *dy = NULL;
  CIS_TRY(build_space(c, &o));
  pl.space = c->pl.space; /* borrowed: taken back below */
  CIS_TRY(cis_pipeline_hamiltonian(&pl, &o, &c->prob, NULL));
  CIS_TRY(cis_pipeline_backend(&pl, &o));
  int64_t n = pl.h->n;
  CIS_TRY(pl.be->ops->alloc(pl.be, n * k, &dx));
  CIS_TRY(pl.be->ops->alloc(pl.be, n * k, &dy));
  CIS_TRY(pl.be->ops->from_host(pl.be, dx, X, n * k));
  CIS_TRY(cis_operator_apply(pl.op, k, dx, dy));
  CIS_TRY(pl.be->ops->to_host(pl.be, Y, dy, n * k));
cleanup:
  if (dx) pl.be->ops->free(pl.be, &dx);
  if (dy) pl.be->ops->free(pl.be, &dy);
  cis_pipeline_free_solve(&pl);
  pl.space = NULL;
  omp_set_num_threads(before);
  return err;
}

int cisolve_apply(cisolve *c, int k, const double *X, double *Y) {
  cis_error_clear();
  return finish(c, apply(c, k, X, Y));
}

static cis_err diagonal(cisolve *c, double *d) {
  CIS_CHECK(c && d, CIS_ERR_INPUT, "cisolve_diagonal: the handle or the output array is NULL");
  cis_options o = run_options(c);
  int before = threads_enter(&o);
  cis_err e = build_space(c, &o);
  omp_set_num_threads(before);
  CIS_CALL(e);
  memcpy(d, cis_space_hdiag(c->pl.space), sizeof *d * (size_t)cis_space_ndet(c->pl.space));
  return CIS_OK;
}

int cisolve_diagonal(cisolve *c, double *d) {
  cis_error_clear();
  return finish(c, diagonal(c, d));
}

int64_t cisolve_ndet(const cisolve *c) {
  return c && c->pl.space ? cis_space_ndet(c->pl.space) : -1;
}

int cisolve_nwords(const cisolve *c) { return c ? cis_nwords(c->prob.ints.norb) : 0; }

int cisolve_nroots(const cisolve *c) { return c && c->solved ? c->pl.res.nroots : 0; }

static cis_err need_results(const cisolve *c, const void *out, const char *what) {
  CIS_CHECK(c, CIS_ERR_INPUT, "%s: the handle is NULL", what);
  CIS_CHECK(c->solved, CIS_ERR_INPUT, "%s: no results (cisolve_solve has not succeeded since the "
            "handle was made or its options changed)", what);
  CIS_CHECK(out, CIS_ERR_INPUT, "%s: the output array is NULL", what);
  return CIS_OK;
}

int cisolve_energies(const cisolve *c, double *e) {
  cis_error_clear();
  cis_err err = need_results(c, e, "cisolve_energies");
  if (err != CIS_OK) return finish(c, err);
  for (int j = 0; j < c->pl.res.nroots; j++) e[j] = c->pl.res.evals[j] + c->prob.ints.ecore;
  return CISOLVE_OK;
}

int cisolve_converged(const cisolve *c, int *conv) {
  cis_error_clear();
  cis_err err = need_results(c, conv, "cisolve_converged");
  if (err != CIS_OK) return finish(c, err);
  for (int j = 0; j < c->pl.res.nroots; j++) conv[j] = c->pl.res.converged[j] != 0;
  return CISOLVE_OK;
}

int cisolve_vectors(const cisolve *c, double *X) {
  cis_error_clear();
  cis_err err = need_results(c, X, "cisolve_vectors");
  if (err != CIS_OK) return finish(c, err);
  int64_t n = cis_space_ndet(c->pl.space);
  memcpy(X, c->pl.res.evecs, (size_t)n * (size_t)c->pl.res.nroots * sizeof *X);
  return CISOLVE_OK;
}

int cisolve_s2(const cisolve *c, double *s2) {
  cis_error_clear();
  cis_err err = need_results(c, s2, "cisolve_s2");
  if (err != CIS_OK) return finish(c, err);
  if (c->pl.s2) { /* computed by the solve (a spin penalty) */
    memcpy(s2, c->pl.s2, (size_t)c->pl.res.nroots * sizeof *s2);
    return CISOLVE_OK;
  }
  cis_options o = run_options(c);
  int before = threads_enter(&o);
  err = cis_rdm_s2(c->pl.space, c->pl.be, c->pl.res.nroots, c->pl.res.evecs, s2);
  omp_set_num_threads(before);
  return finish(c, err);
}

static cis_err spin_square(const cisolve *c, int k, const double *X, double *s2) {
  CIS_CHECK(c && c->pl.space, CIS_ERR_INPUT, "cisolve_spin_square: %s", c ? "no space "
            "(cisolve_build_space or cisolve_solve first)" : "the handle is NULL");
  CIS_CHECK(k >= 1 && X && s2, CIS_ERR_INPUT, "cisolve_spin_square: %d vectors at %p into %p "
            "(need k >= 1 and both arrays)", k, (const void *)X, (void *)s2);
  cis_options o = run_options(c);
  int before = threads_enter(&o);
  cis_err e = cis_rdm_s2(c->pl.space, c->solved ? c->pl.be : NULL, k, X, s2);
  omp_set_num_threads(before);
  return e;
}

int cisolve_spin_square(const cisolve *c, int k, const double *X, double *s2) {
  cis_error_clear();
  return finish(c, spin_square(c, k, X, s2));
}

int cisolve_iterations(const cisolve *c, int *iterations, int64_t *matvecs) {
  cis_error_clear();
  cis_err err = need_results(c, "", "cisolve_iterations");
  if (err != CIS_OK) return finish(c, err);
  if (iterations) *iterations = c->pl.res.iterations;
  if (matvecs) *matvecs = c->pl.res.matvecs;
  return CISOLVE_OK;
}

int cisolve_timings(const cisolve *c, double *t) {
  cis_error_clear();
  cis_err err = need_results(c, t, "cisolve_timings");
  if (err != CIS_OK) return finish(c, err);
  memcpy(t, c->t, sizeof c->t);
  return CISOLVE_OK;
}

const char *cisolve_backend(const cisolve *c) {
  return c && c->solved && c->pl.be ? c->pl.be->desc : "";
}

/* A call that reads the space into two output arrays: the handle, its space and the arrays. */
static cis_err need_space(const cisolve *c, const void *a, const void *b, const char *what) {
  CIS_CHECK(c, CIS_ERR_INPUT, "%s: the handle is NULL", what);
  CIS_CHECK(c->pl.space, CIS_ERR_INPUT, "%s: no space (cisolve_build_space or cisolve_solve "
            "first)", what);
  CIS_CHECK(a && b, CIS_ERR_INPUT, "%s: an output array is NULL", what);
  return CIS_OK;
}

static cis_err dets(const cisolve *c, uint64_t *alpha, uint64_t *beta) {
  CIS_CALL(need_space(c, alpha, beta, "cisolve_dets"));
  const cis_space *s = c->pl.space;
  int64_t n = cis_space_ndet(s);
  int nw = cis_space_nwords(s);
  for (int64_t i = 0; i < n; i++) {
    memcpy(alpha + i * nw, cis_space_alpha(s, i), (size_t)nw * sizeof *alpha);
    memcpy(beta + i * nw, cis_space_beta(s, i), (size_t)nw * sizeof *beta);
  }
  return CIS_OK;
}

int cisolve_dets(const cisolve *c, uint64_t *alpha, uint64_t *beta) {
  cis_error_clear();
  return finish(c, dets(c, alpha, beta));
}

static cis_err det_addresses(const cisolve *c, int32_t *ia, int32_t *ib) {
  CIS_CALL(need_space(c, ia, ib, "cisolve_det_addresses"));
  const cis_space *s = c->pl.space;
  size_t bytes = sizeof(int32_t) * (size_t)cis_space_ndet(s);
  memcpy(ia, cis_space_alpha_index(s), bytes);
  memcpy(ib, cis_space_beta_index(s), bytes);
  return CIS_OK;
}

int cisolve_det_addresses(const cisolve *c, int32_t *ia, int32_t *ib) {
  cis_error_clear();
  return finish(c, det_addresses(c, ia, ib));
}

static cis_err rdm12s(const cisolve *c, const double *bra, const double *ket, cis_rdm_out *out) {
  CIS_CHECK(c, CIS_ERR_INPUT, "cisolve_rdm12s: the handle is NULL");
  CIS_CHECK(c->pl.space, CIS_ERR_INPUT, "cisolve_rdm12s: no space (cisolve_build_space or "
            "cisolve_solve first)");
  CIS_CHECK(bra && ket, CIS_ERR_INPUT, "cisolve_rdm12s: bra or ket is NULL");
  cis_options o = run_options(c);
  int before = threads_enter(&o);
  cis_err e = cis_rdm12s(c->pl.space, c->solved ? c->pl.be : NULL, bra, ket, out);
  omp_set_num_threads(before);
  CIS_CALL(e);
  return CIS_OK;
}

int cisolve_rdm12s(const cisolve *c, const double *bra, const double *ket, double *dm1a,
                   double *dm1b, double *dm2aa, double *dm2ab, double *dm2ba, double *dm2bb) {
  cis_error_clear();
  cis_rdm_out out = {dm1a, dm1b, dm2aa, dm2ab, dm2ba, dm2bb, NULL, NULL};
  return finish(c, rdm12s(c, bra, ket, &out));
}

int cisolve_rdm12(const cisolve *c, const double *bra, const double *ket, double *dm1,
                  double *dm2) {
  cis_error_clear();
  cis_rdm_out out = {.dm1 = dm1, .dm2 = dm2};
  return finish(c, rdm12s(c, bra, ket, &out));
}

const char *cisolve_last_error(void) { return cis_error_message(); }

void cisolve_destroy(cisolve **c) {
  if (!c || !*c) return;
  cis_pipeline_free(&(*c)->pl);
  cis_problem_free(&(*c)->prob);
  cis_free(&(*c)->guess);
  cis_free(c);
}

const char *cisolve_version(void) { return CISOLVE_VERSION; }
