/* cisolve: the CPU backend. Vectors are plain host arrays; dense block operations go to
 * OpenBLAS, the preconditioner to an OpenMP loop. */
#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "kernels/backend.h"

static cis_err cpu_alloc(cis_backend *be, int64_t count, double **p) {
  (void)be;
  CIS_CHECK(count >= 0, CIS_ERR_INTERNAL, "CPU backend: allocating %lld doubles",
            (long long)count);
  CIS_CALL(cis_calloc(p, (size_t)count, sizeof **p, "vector block"));
  return CIS_OK;
}

static void cpu_free(cis_backend *be, double **p) {
  (void)be;
  cis_free(p);
}

static cis_err cpu_copy(cis_backend *be, double *dst, const double *src, int64_t count) {
  (void)be;
  if (count > 0 && dst != src) memmove(dst, src, (size_t)count * sizeof *dst);
  return CIS_OK;
}

static cis_err cpu_gemm_tn(cis_backend *be, int m, int k, const double *A, const double *B,
                           double *G) {
  if (m <= 0 || k <= 0) return CIS_OK;
  double t0 = cis_wtime();
  int n = (int)be->n;
  if (n == 0)
    memset(G, 0, (size_t)m * (size_t)k * sizeof *G);
  else
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, m, k, n, 1.0, A, n, B, n, 0.0, G, m);
  be->t_ortho += cis_wtime() - t0;
  return CIS_OK;
}

static cis_err cpu_scal(cis_backend *be, int64_t count, double alpha, double *x);

static cis_err cpu_gemm_nn(cis_backend *be, int m, int k, const double *A, const double *S,
                           double beta, double *C) {
  if (k <= 0 || be->n == 0) return CIS_OK;
  int n = (int)be->n;
  if (m <= 0) return cpu_scal(be, (int64_t)n * k, beta, C);
  double t0 = cis_wtime();
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, k, m, 1.0, A, n, S, m, beta, C, n);
  be->t_ortho += cis_wtime() - t0;
  return CIS_OK;
}

static cis_err cpu_axpy(cis_backend *be, int64_t count, double alpha, const double *x,
                        double *y) {
  (void)be;
  if (count > 0) cblas_daxpy((int)count, alpha, x, 1, y, 1);
  return CIS_OK;
}

/* beta = 0 must clear NaN/Inf left in C, which dscal does not promise. */
static cis_err cpu_scal(cis_backend *be, int64_t count, double alpha, double *x) {
  (void)be;
  if (count <= 0) return CIS_OK;
  if (alpha == 0.0)
    memset(x, 0, (size_t)count * sizeof *x);
  else
    cblas_dscal((int)count, alpha, x, 1);
  return CIS_OK;
}

static cis_err cpu_dot(cis_backend *be, int64_t count, const double *x, const double *y,
                       double *out) {
  (void)be;
  *out = count > 0 ? cblas_ddot((int)count, x, 1, y, 1) : 0.0;
  return CIS_OK;
}

static cis_err cpu_precond(cis_backend *be, const double *d, double shift, double floor,
                           const double *r, double *t) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < be->n; i++) {
    double den = d[i] - shift;
    if (fabs(den) < floor) den = den < 0.0 ? -floor : floor;
    t[i] = r[i] / den;
  }
  return CIS_OK;
}

static cis_err cpu_sync(cis_backend *be) {
  (void)be;
  return CIS_OK;
}

static void cpu_destroy(cis_backend *be) { cis_free(&be); }

static const cis_backend_ops cpu_ops = {
    .alloc = cpu_alloc,
    .free = cpu_free,
    .to_host = cpu_copy,
    .from_host = cpu_copy,
    .copy = cpu_copy,
    .gemm_tn = cpu_gemm_tn,
    .gemm_nn = cpu_gemm_nn,
    .axpy = cpu_axpy,
    .scal = cpu_scal,
    .dot = cpu_dot,
    .precond = cpu_precond,
    .sync = cpu_sync,
    .destroy = cpu_destroy,
};

/* nthreads > 0 sets the OpenMP team size for the whole process (the operator's products and
 * the BLAS calls run on the same threads). */
cis_err cis_backend_create_cpu(int64_t n, int nthreads, cis_backend **out) {
  cis_err err = CIS_OK;
  cis_backend *be = NULL;
  *out = NULL;
  CIS_CHECK(n >= 0 && n <= INT32_MAX, CIS_ERR_INTERNAL,
            "CPU backend: vector length %lld outside 0..2^31-1", (long long)n);
  CIS_CLEANUP_FUNCTION;
  CIS_TRY(cis_calloc(&be, 1, sizeof *be, "CPU backend"));
  if (nthreads > 0) omp_set_num_threads(nthreads);
  be->ops = &cpu_ops;
  be->n = n;
  be->n_global = n;
  be->is_device = 0;
  int nt = omp_get_max_threads(), nb = openblas_get_num_threads();
  snprintf(be->desc, sizeof be->desc, "CPU (OpenBLAS, %d OpenMP thread%s, %d BLAS thread%s)", nt,
           nt == 1 ? "" : "s", nb, nb == 1 ? "" : "s");
  *out = be;
  be = NULL;
cleanup:
  cis_free(&be);
  return err;
}
