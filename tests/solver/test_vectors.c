/* cis_eig_vectors against what the solvers allocate: the CPU backend's alloc and free wrapped
 * to count the n-length vectors held, and the peak of every phase a run goes through (Davidson
 * with checkpoints, Lanczos with checkpoints, the lowest-state check of cis_check_roots) must
 * not exceed the count for the backend; Davidson's peak must equal its term (2m + 4K + 1), so
 * that the count follows the solver when it changes. The driver's old counts (2m + 4K + 8 for a
 * device, a flat 60 in the library) fell below the check's peak with a small --max-subspace
 * (K = 1, m = 8: 28 against 58). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/backend.h"
#include "kernels/operator.h"
#include "solver/eigs.h"

#define N 240
#define NREF 24

static cis_backend_ops g_ops;             /* the CPU backend's, with alloc and free counting */
static const cis_backend_ops *g_cpu;
static int64_t g_held, g_peak;            /* doubles held now, and at most */
static struct { double *p; int64_t count; } g_live[64];

static cis_err count_alloc(cis_backend *be, int64_t count, double **p) {
  cis_err e = g_cpu->alloc(be, count, p);
  if (e != CIS_OK) return e;
  for (int i = 0; i < 64; i++)
    if (!g_live[i].p) {
      g_live[i].p = *p, g_live[i].count = count;
      break;
    }
  g_held += count;
  if (g_held > g_peak) g_peak = g_held;
  return CIS_OK;
}

static void count_free(cis_backend *be, double **p) {
  for (int i = 0; *p && i < 64; i++)
    if (g_live[i].p == *p) {
      g_held -= g_live[i].count;
      g_live[i].p = NULL;
    }
  g_cpu->free(be, p);
}

static cis_err on_save(void *ctx, int iter, int k, const double *evals, const double *rnorm,
                       const int *conv, const double *X, const double *HX) {
  (void)ctx, (void)iter, (void)k, (void)evals, (void)rnorm, (void)conv, (void)X, (void)HX;
  return CIS_OK;
}

static int on_iter(void *ctx, int iter, int k, const double *evals, const double *rnorm,
                   const int *conv, int nbasis) {
  (void)ctx, (void)iter, (void)k, (void)evals, (void)rnorm, (void)conv, (void)nbasis;
  return CIS_ITER_SAVE;
}

/* A CI-like matrix (dense, column-major): growing diagonal, couplings to the next rows and one
 * further away. */
static void make_matrix(double *A) {
  for (int64_t j = 0; j < N; j++)
    for (int64_t i = 0; i < N; i++) {
      long d = labs((long)(i - j));
      A[i + j * N] = i == j ? 1.0 + 0.5 * (double)i : (d == 1 || d == 7) ? 0.1 : 0.0;
    }
}

int main(void) {
  static double A[N * N];
  int fail = 0;
  make_matrix(A);
  int cases[][2] = {{1, 0}, {1, 8}, {3, 0}, {4, 9}, {8, 0}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    int K = cases[c][0], asked = cases[c][1];
    int64_t want = cis_eig_vectors(K, asked, CIS_EIG_BACKEND);
    int64_t m = cis_eig_max_subspace(asked, K) > 2 * K ? cis_eig_max_subspace(asked, K) : 2 * K;
    int64_t peak[3] = {0, 0, 0};
    for (int phase = 0; phase < 3; phase++) {
      cis_backend *be = NULL;
      cis_operator *op = NULL;
      cis_eig_result res;
      cis_rootcheck rc;
      memset(&res, 0, sizeof res);
      if (cis_backend_create_cpu(N, 0, &be) || cis_dense_op_create(be, N, A, NREF, &op)) return 1;
      g_cpu = be->ops;
      g_ops = *be->ops;
      g_ops.alloc = count_alloc;
      g_ops.free = count_free;
      be->ops = &g_ops;
      cis_eig_opts o;
      cis_eig_opts_default(&o, K);
      if (asked) o.max_subspace = asked;
      o.on_iter = on_iter;
      o.on_save = on_save;
      o.max_iter = 30;
      cis_err e = phase == 1 ? cis_lanczos_solve(be, op, &o, &res)
                             : cis_davidson_solve(be, op, &o, &res);
      if (e == CIS_OK && phase == 2) {
        o.on_iter = NULL;
        o.on_save = NULL;
        g_peak = g_held;
        e = cis_check_roots(be, op, &o, 1e-6, &res, &rc);
      }
      peak[phase] = g_peak;
      if (e != CIS_OK) {
        printf("FAIL K=%d max_subspace %d phase %d: %s\n", K, asked, phase, cis_error_message());
        fail = 1;
      }
      be->ops = g_cpu;
      cis_eig_result_free(&res);
      cis_operator_destroy(&op);
      cis_backend_destroy(&be);
      g_held = g_peak = 0;
    }
    int ok = peak[0] <= want * N && peak[1] <= want * N && peak[2] <= want * N &&
             peak[0] == (2 * m + 4 * K + 1) * N;
    printf("%-4s K=%d max_subspace %d: count %lld vectors; peaks: Davidson %lld, Lanczos %lld, "
           "the check %lld\n", ok ? "ok" : "FAIL", K, asked, (long long)want,
           (long long)(peak[0] / N), (long long)(peak[1] / N), (long long)(peak[2] / N));
    fail |= !ok;
  }
  return fail;
}
