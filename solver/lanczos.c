/* cisolve: Lanczos with full reorthogonalisation and thick restart (docs/solvers.md).
 *
 * The basis V (n x (maxsub + 1)) lives on the backend; T = V^T H V on the host. Every new
 * product w = H v_j is projected against the whole basis twice, and column j of T is taken
 * from those projections rather than from the three-term recurrence: after a thick restart
 * T is an arrowhead, and reading T off the projections gives it without special cases. The
 * residual norm of a Ritz pair (theta, y) is |beta_m y_m|, beta_m = ||w|| after projection.
 *
 * Thick restart (Wu and Simon 2000): when the basis is full, keep the `keep` lowest Ritz
 * vectors and the last Lanczos vector; T becomes diag(theta) bordered by beta_m y_m.
 */
#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "base/util.h"
#include "solver/eigs.h"
#include "solver/refblock.h"

/* ||w|| below this fraction of ||H v|| means the Krylov space is invariant. */
#define LZ_BREAKDOWN 1e-12

typedef struct {
  cis_backend *be;
  cis_operator *op;
  int64_t n, N, row0;     /* rows held (be->n), the whole vectors' length, the first row held */
  int K, keep, maxsub, m; /* roots, vectors kept at restart, basis capacity, products taken */
  double *V;              /* backend, n x (maxsub + 1) */
  double *S;              /* backend, n x keep: restart scratch */
  double *T;              /* host, (maxsub + 1)^2, ld maxsub + 1 */
  double *A, *w, *G;      /* host: eigenvectors of T (maxsub^2), eigenvalues, 2 x projections */
  double *theta, *eprev, *rnorm;
  int *conv;
  double beta;            /* coupling of v_m to the basis */
  double *hostn;          /* host, N: a whole vector, of which the part's rows are taken */
  uint64_t rng;
  double t_ortho;
} lz;

static cis_err lz_alloc(lz *s) {
  const cis_backend_ops *o = s->be->ops;
  int64_t n = s->n, ms = s->maxsub, ld = ms + 1;
  CIS_CALL(o->alloc(s->be, n * ld, &s->V));
  CIS_CALL(o->alloc(s->be, n * s->keep, &s->S));
  CIS_CALL(cis_calloc(&s->T, (size_t)(ld * ld), sizeof(double), "Lanczos matrix"));
  CIS_CALL(cis_malloc(&s->A, (size_t)(ms * ms), sizeof(double), "Lanczos eigenvectors"));
  CIS_CALL(cis_malloc(&s->w, (size_t)ms, sizeof(double), "Lanczos eigenvalues"));
  CIS_CALL(cis_malloc(&s->G, 2 * (size_t)ld, sizeof(double), "Lanczos projections"));
  CIS_CALL(cis_malloc(&s->theta, (size_t)s->K, sizeof(double), "Ritz values"));
  CIS_CALL(cis_malloc(&s->eprev, (size_t)s->K, sizeof(double), "previous Ritz values"));
  CIS_CALL(cis_malloc(&s->rnorm, (size_t)s->K, sizeof(double), "residual norms"));
  CIS_CALL(cis_calloc(&s->conv, (size_t)s->K, sizeof(int), "convergence flags"));
  CIS_CALL(cis_malloc(&s->hostn, (size_t)s->N, sizeof(double), "start vector"));
  for (int i = 0; i < s->K; i++) s->eprev[i] = HUGE_VAL;
  return CIS_OK;
}

static void lz_free(lz *s) {
  s->be->ops->free(s->be, &s->V);
  s->be->ops->free(s->be, &s->S);
  double **host[] = {&s->T, &s->A, &s->w, &s->G, &s->theta, &s->eprev, &s->rnorm, &s->hostn};
  for (size_t i = 0; i < sizeof host / sizeof *host; i++) cis_free(host[i]);
  cis_free(&s->conv);
}

static double lz_rand(lz *s) {
  s->rng ^= s->rng << 13;
  s->rng ^= s->rng >> 7;
  s->rng ^= s->rng << 17;
  return (double)(s->rng >> 11) * (1.0 / 9007199254740992.0) - 0.5;
}

/* w -= V[:, 0..j] (V^T w), twice; the first pass's coefficients go to G. */
static cis_err lz_project(lz *s, int j, double *wv, double *G) {
  cis_backend *be = s->be;
  double t0 = cis_wtime(), *g2 = G + j + 1;
  for (int pass = 0; pass < 2; pass++) {
    double *g = pass ? g2 : G;
    CIS_CALL(be->ops->gemm_tn(be, j + 1, 1, s->V, wv, g));
    for (int i = 0; i <= j; i++) g[i] = -g[i];
    CIS_CALL(be->ops->gemm_nn(be, j + 1, 1, s->V, g, 1.0, wv));
    for (int i = 0; i <= j; i++) g[i] = -g[i];
  }
  s->t_ortho += cis_wtime() - t0;
  return CIS_OK;
}

/* The start vector: the K lowest eigenvectors of H_PP summed, plus a seeded random part so
 * that no state (of any spin or symmetry) is missing from the Krylov space. */
static cis_err lz_start(lz *s, int64_t nref, const cis_refblock *rb) {
  int64_t n = s->N;
  int from_ref = (int)CIS_MIN((int64_t)s->K, nref);
  for (int64_t i = 0; i < n; i++) s->hostn[i] = 0.1 * lz_rand(s) / sqrt((double)n);
  for (int j = 0; j < from_ref; j++)
    for (int64_t i = 0; i < nref; i++) s->hostn[i] += rb->U[i + j * nref];
  double nrm = 0.0;
  for (int64_t i = 0; i < n; i++) nrm += s->hostn[i] * s->hostn[i];
  for (int64_t i = 0; i < n; i++) s->hostn[i] /= sqrt(nrm);
  CIS_CALL(s->be->ops->from_host(s->be, s->V, s->hostn + s->row0, s->n));
  return CIS_OK;
}

/* After a breakdown: a random vector orthogonal to the basis continues the iteration (the
 * Krylov space found so far is invariant; the rest of the spectrum is elsewhere). */
static cis_err lz_random_next(lz *s, int j, int *ok) {
  double *v = s->V + (int64_t)(j + 1) * s->n, nrm;
  for (int64_t i = 0; i < s->N; i++) s->hostn[i] = lz_rand(s);
  CIS_CALL(s->be->ops->from_host(s->be, v, s->hostn + s->row0, s->n));
  CIS_CALL(lz_project(s, j, v, s->G));
  CIS_CALL(s->be->ops->dot(s->be, s->n, v, v, &nrm));
  *ok = sqrt(nrm) > 1e-8 * sqrt((double)s->N);
  if (*ok) CIS_CALL(s->be->ops->scal(s->be, s->n, 1.0 / sqrt(nrm), v));
  return CIS_OK;
}

/* One Lanczos step on v_j: column j of T, and v_{j+1}. *exact: the basis spans the space. */
static cis_err lz_step(lz *s, int *exact) {
  cis_backend *be = s->be;
  int j = s->m, ld = s->maxsub + 1;
  int64_t n = s->n;
  double *vj = s->V + (int64_t)j * n, *wv = vj + n, hn, bn;
  CIS_CALL(cis_operator_apply(s->op, 1, vj, wv));
  CIS_CALL(be->ops->dot(be, n, wv, wv, &hn));
  CIS_CHECK(isfinite(hn), CIS_ERR_NUMERIC,
            "the matrix-vector product gave NaN/Inf (Lanczos vector %d)", j + 1);
  CIS_CALL(lz_project(s, j, wv, s->G));
  for (int i = 0; i <= j; i++) s->T[i + j * ld] = s->T[j + i * ld] = s->G[i];
  CIS_CALL(be->ops->dot(be, n, wv, wv, &bn));
  s->beta = sqrt(bn);
  s->m = j + 1;
  *exact = 0;
  if (s->beta > LZ_BREAKDOWN * sqrt(hn) && s->beta > 0.0) {
    CIS_CALL(be->ops->scal(be, n, 1.0 / s->beta, wv));
  } else {
    s->beta = 0.0;
    int ok = 0;
    if (s->m < n) CIS_CALL(lz_random_next(s, j, &ok));
    *exact = !ok;
  }
  s->T[(j + 1) + j * ld] = s->T[j + (j + 1) * ld] = s->beta;
  return CIS_OK;
}

/* Ritz pairs of T (m x m): A holds the eigenvectors, w the values; residuals |beta y_m|. */
static cis_err lz_ritz(lz *s) {
  int m = s->m, ld = s->maxsub + 1;
  for (int j = 0; j < m; j++) memcpy(s->A + (int64_t)j * m, s->T + (int64_t)j * ld, (size_t)m * sizeof(double));
  lapack_int info = LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'V', 'U', m, s->A, m, s->w);
  CIS_CHECK(info == 0, CIS_ERR_NUMERIC, "LAPACKE_dsyevd failed (info %d) on the %d x %d Lanczos "
            "matrix", (int)info, m, m);
  for (int i = 0; i < s->K && i < m; i++) {
    CIS_CHECK(isfinite(s->w[i]), CIS_ERR_NUMERIC, "Ritz value %d is not finite", i + 1);
    s->theta[i] = s->w[i];
    s->rnorm[i] = fabs(s->beta * s->A[(m - 1) + (int64_t)i * m]);
  }
  return CIS_OK;
}

static int lz_check(lz *s, const cis_eig_opts *o) {
  int nconv = 0;
  if (s->m < s->K) return 0;
  for (int i = 0; i < s->K; i++) {
    s->conv[i] = fabs(s->theta[i] - s->eprev[i]) < o->tol_energy && s->rnorm[i] < o->tol_residual;
    s->eprev[i] = s->theta[i];
    nconv += s->conv[i];
  }
  return nconv;
}

/* Keep the `keep` lowest Ritz vectors and v_m; T becomes diag(theta) bordered by the
 * couplings beta y_m (recomputed from the projections when v_keep is multiplied). */
static cis_err lz_restart(lz *s) {
  cis_backend *be = s->be;
  int m = s->m, k = s->keep, ld = s->maxsub + 1;
  int64_t n = s->n;
  CIS_CALL(be->ops->gemm_nn(be, m, k, s->V, s->A, 0.0, s->S));
  CIS_CALL(be->ops->copy(be, s->V, s->S, n * k));
  CIS_CALL(be->ops->copy(be, s->V + (int64_t)k * n, s->V + (int64_t)m * n, n));
  memset(s->T, 0, (size_t)ld * (size_t)ld * sizeof *s->T);
  for (int i = 0; i < k; i++) {
    s->T[i + i * ld] = s->w[i];
    s->T[k + i * ld] = s->T[i + k * ld] = s->beta * s->A[(m - 1) + (int64_t)i * m];
  }
  s->m = k;
  return CIS_OK;
}

/* X = V Y for the K lowest Ritz vectors, into res (host). */
static cis_err lz_vectors(lz *s, double *Xb) {
  return s->be->ops->gemm_nn(s->be, s->m, s->K, s->V, s->A, 0.0, Xb);
}

static cis_err lz_save(lz *s, const cis_eig_opts *o, int it) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  /* Lanczos keeps no H V: a checkpoint's H X costs K products, counted like any other. */
  int64_t nk = s->n * s->K;
  double *Xb = NULL, *HXb = NULL, *X = NULL, *HX = NULL;
  CIS_TRY(s->be->ops->alloc(s->be, nk, &Xb));
  CIS_TRY(s->be->ops->alloc(s->be, nk, &HXb));
  CIS_TRY(lz_vectors(s, Xb));
  CIS_TRY(cis_operator_apply(s->op, s->K, Xb, HXb));
  CIS_TRY(cis_malloc(&X, (size_t)nk, sizeof *X, "checkpoint vectors"));
  CIS_TRY(cis_malloc(&HX, (size_t)nk, sizeof *HX, "checkpoint products"));
  CIS_TRY(s->be->ops->to_host(s->be, X, Xb, nk));
  CIS_TRY(s->be->ops->to_host(s->be, HX, HXb, nk));
  CIS_TRY(o->on_save(o->on_iter_ctx, it, s->K, s->theta, s->rnorm, s->conv, X, HX));
cleanup:
  s->be->ops->free(s->be, &Xb);
  s->be->ops->free(s->be, &HXb);
  cis_free(&X);
  cis_free(&HX);
  return err;
}

/* Steps until convergence, a full basis (restart) or the whole space; one call is one
 * iteration. *done: converged or exact. */
static cis_err lz_cycle(lz *s, const cis_eig_opts *o, int *done) {
  int exact = 0;
  *done = 0;
  if (s->m == s->maxsub) CIS_CALL(lz_restart(s));
  while (s->m < s->maxsub) {
    CIS_CALL(lz_step(s, &exact));
    CIS_CALL(lz_ritz(s));
    int nconv = lz_check(s, o);
    if (exact && s->m >= s->K) {
      for (int i = 0; i < s->K; i++) s->conv[i] = 1;
      *done = 1;
      return CIS_OK;
    }
    if (nconv == s->K) {
      *done = 1;
      return CIS_OK;
    }
  }
  return CIS_OK;
}

static cis_err lz_iterate(lz *s, const cis_eig_opts *o, cis_eig_result *res, int *stopped) {
  *stopped = 0;
  for (int it = o->iter_start + 1;; it++) {
    int done;
    CIS_CALL(lz_cycle(s, o, &done));
    res->iterations = it;
    int act = o->on_iter ? o->on_iter(o->on_iter_ctx, it, s->K, s->theta, s->rnorm, s->conv, s->m)
                         : CIS_ITER_CONTINUE;
    done = done || it >= o->max_iter;
    if (o->on_save && ((act & CIS_ITER_SAVE) || (done && o->save_final)))
      CIS_CALL(lz_save(s, o, it));
    if (act & CIS_ITER_STOP) {
      *stopped = 1;
      return CIS_OK;
    }
    if (done) return CIS_OK;
  }
}

static cis_err lz_setup(lz *s, cis_backend *be, cis_operator *op, const cis_eig_opts *o) {
  memset(s, 0, sizeof *s);
  s->be = be;
  s->op = op;
  s->n = be->n;
  s->N = be->n_global;
  s->row0 = be->row0;
  s->K = o->nroots;
  s->rng = 0x9E3779B97F4A7C15ull;
  CIS_CHECK(o->nroots >= 1 && s->N >= o->nroots, CIS_ERR_USAGE,
            "asked for %d roots of a space of %lld determinants", o->nroots, (long long)s->N);
  CIS_CHECK(o->max_iter >= 1 && o->tol_energy >= 0.0 && o->tol_residual >= 0.0, CIS_ERR_USAGE,
            "solver options: max_iter %d, tol_energy %g, tol_residual %g (expected >= 1, >= 0, "
            ">= 0)", o->max_iter, o->tol_energy, o->tol_residual);
  /* Room for the kept vectors plus enough new Krylov directions to be worth a restart. */
  s->maxsub = (int)CIS_MIN((int64_t)CIS_MAX(o->max_subspace, 2 * s->K + 8), s->N);
  s->keep = CIS_MIN(s->K + CIS_MAX(2, (s->maxsub - s->K) / 3), s->maxsub - 1);
  s->keep = CIS_MAX(s->keep, CIS_MIN(s->K, s->maxsub));
  return lz_alloc(s);
}

static cis_err lz_result(lz *s, cis_eig_result *res) {
  int K = s->K;
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  double *Xb = NULL;
  CIS_TRY(cis_eig_result_fill(res, K, s->n, s->theta, s->rnorm, s->conv));
  CIS_TRY(s->be->ops->alloc(s->be, s->n * K, &Xb));
  CIS_TRY(lz_vectors(s, Xb));
  CIS_TRY(s->be->ops->to_host(s->be, res->evecs, Xb, s->n * K));
cleanup:
  s->be->ops->free(s->be, &Xb);
  return err;
}

cis_err cis_lanczos_solve(cis_backend *be, cis_operator *op, const cis_eig_opts *opts,
                          cis_eig_result *res) {
  cis_err err = CIS_OK;
  int stopped = 0;
  cis_refblock rb;
  lz s;
  memset(&rb, 0, sizeof rb);
  memset(&s, 0, sizeof s);
  memset(res, 0, sizeof *res);
  CIS_CALL(cis_eig_check_operator(be, op));
  double t0 = cis_wtime(), tm0 = op->t_matvec;
  int64_t nm0 = op->n_matvec;
  CIS_CLEANUP_FUNCTION;
  CIS_TRY(lz_setup(&s, be, op, opts));
  CIS_TRY(cis_refblock_init(op->nref, op->ref_block, &rb));
  CIS_TRY(lz_start(&s, op->nref, &rb));
  CIS_TRY(lz_iterate(&s, opts, res, &stopped));
  CIS_TRY(lz_result(&s, res));
  res->matvecs = op->n_matvec - nm0;
  res->t_matvec = op->t_matvec - tm0;
  res->t_ortho = s.t_ortho;
  res->t_total = cis_wtime() - t0;
  if (stopped)
    CIS_FAIL(CIS_ERR_INTERRUPTED, "Lanczos stopped at iteration %d by request (Ritz vectors kept)",
             res->iterations);
cleanup:
  if (s.be) lz_free(&s);
  cis_refblock_free(&rb);
  if (err != CIS_OK && err != CIS_ERR_INTERRUPTED) cis_eig_result_free(res);
  return err;
}
