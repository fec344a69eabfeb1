/* The C API of libcisolve (include/cisolve.h) as a program that links libcisolve.so uses it:
 * H2O/STO-3G FCI from the FCIDUMP's integrals against PySCF's energies (tests/data/h2o_sto3g.ref
 * and h2o_sto3g_4roots.ref, made by tests/data/make_refs.py), several roots, --spin, a guess that
 * shortens the solve, other integrals for a handle, and refusals that leave the handle usable.
 * usage: test_api H2O_STO3G_FCIDUMP [DEVICE]   (DEVICE: the option "device", default cpu) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cisolve.h"

static int failures = 0;
static const char *g_device = "cpu";
#define CHECK(cond, ...)                                   \
  do {                                                     \
    if (!(cond)) {                                         \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                        \
      fprintf(stderr, "\n");                               \
      failures++;                                          \
    }                                                      \
  } while (0)

/* PySCF FCI energies (Eh) of tests/data/h2o_sto3g_4roots.ref: singlet, triplet, singlet, triplet. */
static const double k_ref[4] = {-75.012578241092, -74.614610640006, -74.554878955510,
                                -74.510996620377};

static long pair(long p, long q) { return p >= q ? p * (p + 1) / 2 + q : q * (q + 1) / 2 + p; }

typedef struct {
  int norb, nelec, ms2;
  double *h1e, *eri, ecore;
} ints;

/* The FCIDUMP's integrals: the header's NORB, NELEC, MS2, then "value i j k l" records. */
static int read_fcidump(const char *path, ints *I) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  char line[512], head[4096] = "";
  while (fgets(line, sizeof line, f)) {
    strncat(head, line, sizeof head - strlen(head) - 1);
    if (strstr(line, "&END") || strstr(line, "/")) break;
  }
  char *p = strstr(head, "NORB="), *q = strstr(head, "NELEC="), *r = strstr(head, "MS2=");
  if (!p || !q || !r) return fclose(f), 0;
  I->norb = atoi(p + 5);
  I->nelec = atoi(q + 6);
  I->ms2 = atoi(r + 4);
  long n = I->norb, np = n * (n + 1) / 2;
  I->h1e = calloc((size_t)(n * n), sizeof(double));
  I->eri = calloc((size_t)(np * (np + 1) / 2), sizeof(double));
  I->ecore = 0;
  double v;
  int i, j, k, l;
  while (fscanf(f, "%lf %d %d %d %d", &v, &i, &j, &k, &l) == 5) {
    if (i && k)
      I->eri[pair(pair(i - 1, j - 1), pair(k - 1, l - 1))] = v;
    else if (i)
      I->h1e[(i - 1) * n + (j - 1)] = I->h1e[(j - 1) * n + (i - 1)] = v;
    else
      I->ecore = v;
  }
  fclose(f);
  return 1;
}

static cisolve *make(const ints *I) {
  cisolve *c = NULL;
  int rc = cisolve_create(I->norb, (I->nelec + I->ms2) / 2, (I->nelec - I->ms2) / 2, I->h1e,
                          I->eri, I->ecore, &c);
  CHECK(rc == 0 && c, "cisolve_create returned %d: %s", rc, cisolve_last_error());
  return c;
}

/* Solve with the given options; the energies, the iterations. */
static int solve(const ints *I, const char *const *kv, const double *guess, int nguess,
                 double *e, double *s2, int *iters, double **vec, long *ndet) {
  cisolve *c = make(I);
  if (!c) return 0;
  CHECK(cisolve_set_option(c, "device", g_device) == 0, "device %s: %s", g_device,
        cisolve_last_error());
  for (int i = 0; kv && kv[i]; i += 2)
    CHECK(cisolve_set_option(c, kv[i], kv[i + 1]) == 0, "%s %s: %s", kv[i], kv[i + 1],
          cisolve_last_error());
  if (guess) CHECK(cisolve_set_guess(c, nguess, guess) == 0, "guess: %s", cisolve_last_error());
  int rc = cisolve_solve(c);
  CHECK(rc == 0, "cisolve_solve returned %d: %s", rc, cisolve_last_error());
  int k = cisolve_nroots(c), conv[8];
  CHECK(cisolve_energies(c, e) == 0 && cisolve_s2(c, s2) == 0 && cisolve_converged(c, conv) == 0,
        "results: %s", cisolve_last_error());
  for (int j = 0; j < k; j++) CHECK(conv[j] == 1, "root %d not converged", j);
  CHECK(cisolve_iterations(c, iters, NULL) == 0, "iterations: %s", cisolve_last_error());
  CHECK(strncmp(cisolve_backend(c), strcmp(g_device, "cpu") ? "GPU" : "CPU", 3) == 0,
        "device %s ran on '%s'", g_device, cisolve_backend(c));
  *ndet = (long)cisolve_ndet(c);
  if (vec) {
    *vec = malloc((size_t)*ndet * (size_t)k * sizeof(double));
    CHECK(cisolve_vectors(c, *vec) == 0, "vectors: %s", cisolve_last_error());
  }
  cisolve_destroy(&c);
  CHECK(c == NULL, "cisolve_destroy left the handle");
  return k;
}

static void expect_refusal(int rc, int code, const char *what, const char *pattern) {
  CHECK(rc == code, "%s: returned %d, expected %d", what, rc, code);
  CHECK(strstr(cisolve_last_error(), pattern) != NULL, "%s: message '%s' lacks '%s'", what,
        cisolve_last_error(), pattern);
}

int main(int argc, char **argv) {
  ints I;
  if (argc < 2 || argc > 3 || !read_fcidump(argv[1], &I)) {
    fprintf(stderr, "usage: test_api H2O_STO3G_FCIDUMP (readable) [DEVICE]\n");
    return 2;
  }
  if (argc == 3) g_device = argv[2];
  double e[4], s2[4], *X = NULL;
  int it1 = 0, it2 = 0;
  long ndet = 0;

  /* one root, the ground state; its determinants and vector. A Reference region smaller than
   * the space (441 determinants) leaves the solver iterations to save with a guess. */
  const char *const small_ref[] = {"ref-size", "20", NULL};
  int k = solve(&I, small_ref, NULL, 0, e, s2, &it1, &X, &ndet);
  CHECK(k == 1 && fabs(e[0] - k_ref[0]) < 1e-8, "1 root: E = %.12f, expected %.12f", e[0],
        k_ref[0]);
  CHECK(fabs(s2[0]) < 1e-6, "<S^2> = %g, expected 0", s2[0]);
  CHECK(ndet == 441, "ndet = %ld, expected 441", ndet);
  double nrm = 0;
  for (long i = 0; i < ndet; i++) nrm += X[i] * X[i];
  CHECK(fabs(nrm - 1) < 1e-10, "|x|^2 = %.15f", nrm);

  /* four roots; two singlets with spin 0 */
  const char *const four[] = {"nroots", "4", "tol", "1e-11", NULL};
  k = solve(&I, four, NULL, 0, e, s2, &it2, NULL, &ndet);
  for (int j = 0; j < 4 && k == 4; j++)
    CHECK(fabs(e[j] - k_ref[j]) < 1e-8, "4 roots: E[%d] = %.12f, expected %.12f", j, e[j],
          k_ref[j]);
  const char *const singlets[] = {"nroots", "2", "spin", "0", NULL};
  k = solve(&I, singlets, NULL, 0, e, s2, &it2, NULL, &ndet);
  CHECK(k == 2 && fabs(e[0] - k_ref[0]) < 1e-8 && fabs(e[1] - k_ref[2]) < 1e-8,
        "spin 0: E = %.12f %.12f, expected %.12f %.12f", e[0], e[1], k_ref[0], k_ref[2]);
  CHECK(fabs(s2[0]) < 1e-6 && fabs(s2[1]) < 1e-6, "spin 0: <S^2> = %g %g", s2[0], s2[1]);

  /* the converged vector as the guess: fewer iterations, the same energy */
  k = solve(&I, small_ref, X, 1, e, s2, &it2, NULL, &ndet);
  CHECK(k == 1 && fabs(e[0] - k_ref[0]) < 1e-8, "guess: E = %.12f", e[0]);
  CHECK(it2 < it1, "guess: %d iterations, without it %d", it2, it1);
  /* a guess for fewer roots than asked is completed: 2 roots from 1 vector */
  const char *const two[] = {"nroots", "2", "ref-size", "20", NULL};
  k = solve(&I, two, X, 1, e, s2, &it2, NULL, &ndet);
  CHECK(k == 2 && fabs(e[0] - k_ref[0]) < 1e-8 && fabs(e[1] - k_ref[1]) < 1e-8,
        "guess of 1 for 2 roots: E = %.12f %.12f", e[0], e[1]);

  /* other integrals for a handle whose space is built: h1e + 0.1 I moves every energy of the
   * 10 electrons by exactly 1 Eh; refused integrals leave it as it was */
  cisolve *c = make(&I);
  int rc;
  CHECK(cisolve_set_option(c, "device", g_device) == 0 && cisolve_set_option(c, "nroots", "2") == 0,
        "options: %s", cisolve_last_error());
  CHECK(cisolve_solve(c) == 0, "solve: %s", cisolve_last_error());
  for (int p = 0; p < I.norb; p++) I.h1e[p * I.norb + p] += 0.1;
  CHECK(cisolve_set_integrals(c, I.h1e, I.eri, I.ecore) == 0, "set_integrals: %s",
        cisolve_last_error());
  CHECK(cisolve_ndet(c) == 441 && cisolve_nroots(c) == 0, "set_integrals: the space kept (%ld), "
        "the results discarded (%d roots)", (long)cisolve_ndet(c), cisolve_nroots(c));
  rc = cisolve_solve(c);
  CHECK(rc == 0 && cisolve_energies(c, e) == 0 && fabs(e[0] - k_ref[0] - 1.0) < 1e-8 &&
            fabs(e[1] - k_ref[1] - 1.0) < 1e-8,
        "h1e + 0.1 I: E = %.12f %.12f, expected %.12f %.12f", e[0], e[1], k_ref[0] + 1.0,
        k_ref[1] + 1.0);
  for (int p = 0; p < I.norb; p++) I.h1e[p * I.norb + p] -= 0.1;
  double g0 = I.eri[5];
  I.eri[5] = INFINITY;
  expect_refusal(cisolve_set_integrals(c, I.h1e, I.eri, I.ecore), CISOLVE_ERR_INPUT,
                 "set_integrals with Inf", "eri[5] (8-fold packed) = inf is not a finite number");
  I.eri[5] = g0;
  CHECK(cisolve_nroots(c) == 2 && cisolve_energies(c, e) == 0 && fabs(e[0] - k_ref[0] - 1.0) < 1e-8,
        "a refused set_integrals changed the results: %d roots, E = %.12f", cisolve_nroots(c), e[0]);
  { /* the spin sums of the transition density matrices <1| ... |0>, against the spin blocks */
    int n1 = I.norb * I.norb, n2 = n1 * n1;
    double *X = malloc(sizeof(double) * 2 * 441), *m = calloc((size_t)(8 * n2), sizeof(double));
    double *d1 = m, *d2 = d1 + n1, *a1 = d2 + n2, *b1 = a1 + n1, *blk = b1 + n1;
    CHECK(cisolve_vectors(c, X) == 0, "vectors: %s", cisolve_last_error());
    CHECK(cisolve_rdm12(c, X + 441, X, d1, d2) == 0 &&
              cisolve_rdm12s(c, X + 441, X, a1, b1, blk, blk + n2, blk + 2 * n2, blk + 3 * n2) == 0,
          "rdm12 / rdm12s: %s", cisolve_last_error());
    double err = 0.0;
    for (int t = 0; t < n1; t++) err = fmax(err, fabs(d1[t] - a1[t] - b1[t]));
    for (int t = 0; t < n2; t++)
      err = fmax(err, fabs(d2[t] - blk[t] - blk[n2 + t] - blk[2 * n2 + t] - blk[3 * n2 + t]));
    CHECK(err < 1e-12, "cisolve_rdm12 differs from the sums of cisolve_rdm12s by %.2e", err);
    free(X);
    free(m);
  }
  { /* H X of the two roots is (E - ecore) X to their residual; H e_i gives the diagonal's i */
    double *X = malloc(sizeof(double) * 2 * 441), *Y = malloc(sizeof(double) * 2 * 441);
    double *d = malloc(sizeof(double) * 441), r = 0.0;
    CHECK(cisolve_vectors(c, X) == 0 && cisolve_apply(c, 2, X, Y) == 0 &&
              cisolve_diagonal(c, d) == 0, "apply / diagonal: %s", cisolve_last_error());
    for (int j = 0; j < 2; j++)
      for (int i = 0; i < 441; i++)
        r = fmax(r, fabs(Y[j * 441 + i] - (e[j] - I.ecore) * X[j * 441 + i]));
    CHECK(r < 1e-5, "cisolve_apply: |H x - (E - ecore) x| = %.2e", r);
    CHECK(cisolve_nroots(c) == 2, "cisolve_apply discarded the results");
    double s2a[2], s2b[2];
    CHECK(cisolve_s2(c, s2a) == 0 && cisolve_spin_square(c, 2, X, s2b) == 0 &&
              fabs(s2a[0] - s2b[0]) < 1e-12 && fabs(s2a[1] - s2b[1]) < 1e-12,
          "cisolve_spin_square of the roots %g %g, cisolve_s2 %g %g", s2b[0], s2b[1], s2a[0],
          s2a[1]);
    for (int i = 0; i < 441; i++) X[i] = i == 7;
    CHECK(cisolve_apply(c, 1, X, Y) == 0 && fabs(Y[7] - d[7]) < 1e-12,
          "H e_7 = %.15f at 7, the diagonal %.15f", Y[7], d[7]);
    expect_refusal(cisolve_apply(c, 0, X, Y), CISOLVE_ERR_INPUT, "apply to 0 vectors", "k >= 1");
    free(X);
    free(Y);
    free(d);
  }
  { /* where the last solve's time went */
    double t[CISOLVE_NTIMINGS], parts = 0.0;
    CHECK(cisolve_timings(c, t) == 0, "timings: %s", cisolve_last_error());
    for (int i = 0; i < CISOLVE_NTIMINGS; i++) CHECK(t[i] >= 0.0, "timing %d = %g", i, t[i]);
    for (int i = CISOLVE_T_SPACE; i <= CISOLVE_T_RESULTS; i++)
      if (i != CISOLVE_T_PRODUCTS && i != CISOLVE_T_ORTHO) parts += t[i];
    CHECK(t[CISOLVE_T_TOTAL] > 0.0 && parts <= t[CISOLVE_T_TOTAL] * (1 + 1e-9) &&
              t[CISOLVE_T_PRODUCTS] <= t[CISOLVE_T_SOLVER],
          "timings: steps %g s, products %g s of the solver's %g s, total %g s", parts,
          t[CISOLVE_T_PRODUCTS], t[CISOLVE_T_SOLVER], t[CISOLVE_T_TOTAL]);
    expect_refusal(cisolve_timings(c, NULL), CISOLVE_ERR_INPUT, "timings into NULL",
                   "the output array is NULL");
  }
  cisolve_destroy(&c);

  /* refusals: each leaves the handle as it was */
  expect_refusal(cisolve_create(I.norb, 8, 5, I.h1e, I.eri, I.ecore, &c), CISOLVE_ERR_INPUT,
                 "8 alpha electrons in 7 orbitals", "cannot occupy 7 orbitals");
  CHECK(c == NULL, "a refused create left a handle");
  double h0 = I.h1e[3];
  I.h1e[3] = NAN;
  expect_refusal(cisolve_create(I.norb, 5, 5, I.h1e, I.eri, I.ecore, &c), CISOLVE_ERR_INPUT,
                 "NaN in h1e", "h1e[0][3] = nan is not a finite number");
  I.h1e[3] = h0;
  c = make(&I);
  CHECK(cisolve_set_option(c, "device", g_device) == 0, "device: %s", cisolve_last_error());
  expect_refusal(cisolve_set_option(c, "nroot", "2"), CISOLVE_ERR_INPUT, "unknown option",
                 "unknown option 'nroot'");
  expect_refusal(cisolve_set_option(c, "nroots", "0"), CISOLVE_ERR_INPUT, "nroots 0",
                 "--nroots: 0 is out of range");
  expect_refusal(cisolve_set_option(c, "output", "x.h5"), CISOLVE_ERR_INPUT, "a path option",
                 "names a file");
  expect_refusal(cisolve_set_option(c, "walltime", "10"), CISOLVE_ERR_INPUT, "walltime",
                 "belongs to the cisolve program");
  expect_refusal(cisolve_energies(c, e), CISOLVE_ERR_INPUT, "energies before a solve",
                 "no results");
  CHECK(cisolve_set_guess(c, 1, X) == 0, "guess: %s", cisolve_last_error());
  CHECK(cisolve_ndet(c) == 441, "the guess built the space: ndet %ld", (long)cisolve_ndet(c));
  CHECK(cisolve_set_option(c, "nroots", "442") == 0, "nroots 442: %s", cisolve_last_error());
  expect_refusal(cisolve_solve(c), CISOLVE_ERR_INPUT, "more roots than determinants", "441");
  CHECK(cisolve_nroots(c) == 0, "a failed solve left results");
  /* another space: the guess, in the order of the old one, goes with it */
  CHECK(cisolve_set_option(c, "space", "cisd") == 0, "space cisd: %s", cisolve_last_error());
  CHECK(cisolve_set_option(c, "nroots", "1") == 0, "nroots 1: %s", cisolve_last_error());
  CHECK(cisolve_ndet(c) == -1, "the space was kept: %ld", (long)cisolve_ndet(c));
  rc = cisolve_solve(c);
  CHECK(rc == 0 && cisolve_ndet(c) > 0 && cisolve_ndet(c) < 441, "CISD: %d, %ld determinants: %s",
        rc, (long)cisolve_ndet(c), cisolve_last_error());
  CHECK(cisolve_set_option(c, "space", "fci") == 0, "space fci: %s", cisolve_last_error());
  rc = cisolve_solve(c);
  CHECK(rc == 0 && cisolve_energies(c, e) == 0 && fabs(e[0] - k_ref[0]) < 1e-8,
        "solve after the refusals: %d, E = %.12f: %s", rc, e[0], cisolve_last_error());
  CHECK(cisolve_last_error()[0] == '\0', "a success left the message '%s'", cisolve_last_error());
  /* not converged: results there, flagged */
  CHECK(cisolve_set_option(c, "max-iter", "2") == 0 && cisolve_set_option(c, "ref-size", "20") == 0,
        "max-iter, ref-size: %s", cisolve_last_error());
  rc = cisolve_solve(c);
  int conv = 1;
  CHECK(rc == CISOLVE_NOT_CONVERGED && cisolve_converged(c, &conv) == 0 && conv == 0,
        "max-iter 2: returned %d, converged %d", rc, conv);
  cisolve_destroy(&c);
  cisolve_destroy(&c);

  free(X);
  free(I.h1e);
  free(I.eri);
  if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
  else printf("ok: the C API solves H2O/STO-3G as PySCF, with options, a guess and refusals\n");
  return failures ? 1 : 0;
}
