/* cis_davidson_solve on the CPU backend, with the dense operator (kernels/operator.h), against
 * LAPACKE_dsyevd of the same dense matrix.
 * Seeded random sparse symmetric matrices: CI-like (growing, diagonally dominant), clustered
 * eigenvalues, an exactly degenerate spectrum; K = 1, 4, 8; forced collapses; nref = 0 and n;
 * early stop from on_iter; too many roots; a tiny space; NaN input. */
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/backend.h"
#include "kernels/operator.h"
#include "solver/eigs.h"

typedef struct {
  int64_t n;
  double *A; /* dense, column-major; symmetric */
} dense;

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static double urand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (double)(rng >> 11) * (1.0 / 9007199254740992.0);
}

enum { CI_LIKE, CLUSTERED, DEGENERATE };

/* CI-like: diagonal growing like excitation energies, weak couplings. Clustered: groups of 5
 * nearly equal diagonal values. Degenerate: two identical uncoupled copies (every eigenvalue
 * exactly twice). */
static int make_matrix(int kind, int64_t n, double density, dense *M) {
  M->n = n;
  M->A = calloc((size_t)(n * n), sizeof *M->A);
  if (!M->A) return 1;
  int64_t h = kind == DEGENERATE ? n / 2 : n;
  for (int64_t i = 0; i < h; i++) {
    M->A[i + i * n] = kind == CLUSTERED ? 0.5 * (double)(i / 5) + 1e-3 * urand()
                                         : 0.05 * (double)i + 0.5 * urand();
    for (int64_t j = 0; j < i; j++)
      if (urand() < density) {
        double v = (kind == CLUSTERED ? 0.02 : 0.1) * (2.0 * urand() - 1.0);
        M->A[i + j * n] = M->A[j + i * n] = v;
      }
  }
  if (kind != DEGENERATE) return 0;
  /* Interleave the two copies (state s of copy c at row 2s + c) so that the Reference region
   * holds both copies of its states, as spin or spatial symmetry partners would. */
  double *B = calloc((size_t)(n * n), sizeof *B);
  if (!B) return 1;
  for (int64_t j = 0; j < h; j++)
    for (int64_t i = 0; i < h; i++)
      for (int c = 0; c < 2; c++) B[(2 * i + c) + (2 * j + c) * n] = M->A[i + j * n];
  free(M->A);
  M->A = B;
  return 0;
}

static int dense_evals(const dense *M, double *w) {
  int64_t n = M->n;
  double *B = malloc((size_t)(n * n) * sizeof *B);
  if (!B) return 1;
  memcpy(B, M->A, (size_t)(n * n) * sizeof *B);
  int info = (int)LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'N', 'U', (int)n, B, (int)n, w);
  free(B);
  return info != 0;
}

/* ||A x - e x|| computed here, independent of the operator's product. */
static double true_residual(const dense *M, const double *x, double e) {
  int64_t n = M->n;
  double s = 0.0;
  for (int64_t i = 0; i < n; i++) {
    double y = -e * x[i];
    for (int64_t j = 0; j < n; j++) y += M->A[i + j * n] * x[j];
    s += y * y;
  }
  return sqrt(s);
}

typedef struct {
  int stop_after, calls, collapses, last_nbasis;
} iter_log;

static int on_iter(void *ctx, int iter, int k, const double *ev, const double *rn,
                   const int *conv, int nbasis) {
  iter_log *l = ctx;
  (void)k, (void)ev, (void)rn, (void)conv;
  l->calls++;
  /* Every iteration adds at least one vector, so a basis that does not grow was collapsed. */
  if (iter > 1 && nbasis <= l->last_nbasis) l->collapses++;
  l->last_nbasis = nbasis;
  return l->stop_after > 0 && iter >= l->stop_after ? CIS_ITER_STOP : CIS_ITER_CONTINUE;
}

typedef struct {
  const char *name;
  int kind;
  int64_t n, nref;
  int K, max_subspace, min_collapses, stop_after;
  double density;
  cis_err want;
} tcase;

static int run_solver(const tcase *t, const dense *M, cis_eig_result *res, iter_log *log) {
  cis_backend *be = NULL;
  cis_operator *op = NULL;
  if (cis_backend_create_cpu(M->n, 0, &be) || cis_dense_op_create(be, M->n, M->A, t->nref, &op))
    return -1;
  cis_eig_opts o;
  cis_eig_opts_default(&o, t->K);
  if (t->max_subspace) o.max_subspace = t->max_subspace;
  o.on_iter = on_iter;
  o.on_iter_ctx = log;
  cis_error_clear();
  cis_err e = cis_davidson_solve(be, op, &o, res);
  cis_operator_destroy(&op);
  cis_backend_destroy(&be);
  return (int)e;
}

static int check_accuracy(const tcase *t, const dense *M, const cis_eig_result *res) {
  double *w = malloc((size_t)M->n * sizeof *w), de = 0.0, rmax = 0.0;
  if (!w || dense_evals(M, w)) return 1;
  for (int i = 0; i < t->K; i++) {
    de = fmax(de, fabs(res->evals[i] - w[i]));
    rmax = fmax(rmax, true_residual(M, res->evecs + i * M->n, res->evals[i]));
  }
  int bad = !(de < 1e-9) || !(rmax < 1e-5) || !res->all_converged;
  printf("%s %-28s n=%-5lld nref=%-4lld K=%d: iter %d, matvecs %lld, max|dE| %.1e, "
         "max||Hx-ex|| %.1e, E0 %.10f\n",
         bad ? "FAIL" : "ok  ", t->name, (long long)M->n, (long long)t->nref, t->K,
         res->iterations, (long long)res->matvecs, de, rmax, res->evals[0]);
  free(w);
  return bad;
}

static int run_case(const tcase *t) {
  dense M;
  cis_eig_result res;
  iter_log log = {t->stop_after, 0, 0, 0};
  if (make_matrix(t->kind, t->n, t->density, &M)) return 1;
  int e = run_solver(t, &M, &res, &log), bad = 0;
  if (e != (int)t->want) {
    printf("FAIL %s: returned %s (%s), expected %s\n", t->name, cis_err_name((cis_err)e),
           cis_error_message(), cis_err_name(t->want));
    free(M.A);
    return 1;
  }
  if (e == CIS_OK) {
    bad = check_accuracy(t, &M, &res);
    if (log.collapses < t->min_collapses) {
      printf("FAIL %s: %d collapses, expected at least %d\n", t->name, log.collapses,
             t->min_collapses);
      bad = 1;
    } else if (t->min_collapses) {
      printf("ok   %s: %d collapses\n", t->name, log.collapses);
    }
  } else if (e == CIS_ERR_INTERRUPTED) {
    bad = log.calls != t->stop_after || res.iterations != t->stop_after || !res.evecs;
    printf("%s %s: %s after %d iterations (\"%s\")\n", bad ? "FAIL" : "ok  ", t->name,
           cis_err_name((cis_err)e), res.iterations, cis_error_message());
  } else {
    printf("ok   %s: %s (\"%s\")\n", t->name, cis_err_name((cis_err)e), cis_error_message());
  }
  cis_eig_result_free(&res);
  free(M.A);
  return bad;
}

/* Too many roots: the message names both numbers. NaN in the matrix: a numeric error. */
static int run_errors(void) {
  int bad = 0;
  tcase t = {"too many roots", CI_LIKE, 3, 0, 5, 0, 0, 0, 0.5, CIS_ERR_USAGE};
  bad += run_case(&t);
  if (!strstr(cis_error_message(), "asked for 5 roots but the space has only 3 determinants")) {
    printf("FAIL too many roots: message \"%s\"\n", cis_error_message());
    bad++;
  }
  dense M;
  cis_eig_result res;
  iter_log log = {0, 0, 0, 0};
  tcase u = {"NaN in the matrix", CI_LIKE, 100, 10, 2, 0, 0, 0, 0.05, CIS_ERR_NUMERIC};
  if (make_matrix(u.kind, u.n, u.density, &M)) return 1;
  M.A[70 + 80 * 100] = M.A[80 + 70 * 100] = NAN;
  int e = run_solver(&u, &M, &res, &log);
  int ok = e == CIS_ERR_NUMERIC && strstr(cis_error_message(), "NaN");
  printf("%s NaN in the matrix: %s (\"%s\")\n", ok ? "ok  " : "FAIL", cis_err_name((cis_err)e),
         cis_error_message());
  bad += !ok;
  free(M.A);
  return bad;
}

/* The CPU backend describes itself; without CUDA the GPU entry points say so. */
static int run_backend_checks(void) {
  int bad = 0;
  cis_backend *be = NULL;
  if (cis_backend_create_cpu(10, 0, &be) || !strstr(be->desc, "CPU (OpenBLAS, ")) bad++;
  printf("%s CPU backend: \"%s\"\n", bad ? "FAIL" : "ok  ", be ? be->desc : "");
  cis_backend_destroy(&be);
  bad += be != NULL;
#ifndef CISOLVE_HAVE_CUDA
  cis_err e = cis_backend_create_cuda(10, -1, &be);
  int ok = e == CIS_ERR_NOT_COMPILED && !be && cis_backend_cuda_device_count() == 0 &&
           strstr(cis_error_message(), "built without CUDA");
  printf("%s CUDA stub: %s (\"%s\")\n", ok ? "ok  " : "FAIL", cis_err_name(e),
         cis_error_message());
  bad += !ok;
#endif
  return bad;
}

int main(void) {
  const tcase cases[] = {
      {"CI-like", CI_LIKE, 200, 20, 1, 0, 0, 0, 0.05, CIS_OK},
      {"CI-like", CI_LIKE, 1000, 50, 4, 0, 0, 0, 0.02, CIS_OK},
      {"CI-like", CI_LIKE, 2000, 100, 8, 0, 0, 0, 0.01, CIS_OK},
      {"clustered", CLUSTERED, 600, 30, 4, 0, 0, 0, 0.03, CIS_OK},
      {"clustered", CLUSTERED, 800, 40, 8, 0, 0, 0, 0.03, CIS_OK},
      {"degenerate pairs", DEGENERATE, 400, 20, 4, 0, 0, 0, 0.05, CIS_OK},
      {"small subspace (collapses)", CI_LIKE, 500, 10, 4, 9, 2, 0, 0.05, CIS_OK},
      {"small subspace K=1", CLUSTERED, 300, 0, 1, 3, 2, 0, 0.05, CIS_OK},
      {"nref = 0", CI_LIKE, 300, 0, 4, 0, 0, 0, 0.05, CIS_OK},
      {"nref = n", CI_LIKE, 200, 200, 4, 0, 0, 0, 0.05, CIS_OK},
      {"nref < K", CI_LIKE, 300, 2, 4, 0, 0, 0, 0.05, CIS_OK},
      {"tiny (n = K + 1)", CI_LIKE, 5, 0, 4, 0, 0, 0, 0.6, CIS_OK},
      {"tiny (n = K)", CI_LIKE, 3, 1, 3, 0, 0, 0, 0.6, CIS_OK},
      {"stop after 2 iterations", CI_LIKE, 300, 10, 2, 0, 0, 2, 0.05, CIS_ERR_INTERRUPTED},
  };
  int fails = 0;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) fails += run_case(&cases[i]);
  fails += run_errors();
  fails += run_backend_checks();
  printf("%d failure(s)\n", fails);
  return fails != 0;
}
