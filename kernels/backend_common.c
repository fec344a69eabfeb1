/* cisolve: what every backend shares, and a backend's part of the rows of a run's vectors
 * (cis_backend_part): the owner's operations on fewer rows, gemm_tn and dot summed over the
 * ranks. */
#include <stddef.h>
#include <string.h>

#include "base/util.h"
#include "kernels/backend.h"
#include "kernels/comm.h"

void cis_backend_destroy(cis_backend **be) {
  if (!be || !*be) return;
  (*be)->ops->destroy(*be);
  *be = NULL;
}

int cis_backend_is_part(const cis_backend *be) { return be && be->owner != NULL; }

cis_err cis_backend_sum(const cis_backend *be, double *v, int64_t count) {
  if (!cis_backend_is_part(be) || count <= 0) return CIS_OK;
  return cis_comm_sum_f64(v, count);
}

/* cis_backend_whole's gather into `whole`. */
static cis_err gather_part(const cis_backend *be, const double *mine, int k, double *whole) {
  int64_t N = be->n_global, n = be->n;
  for (int j = 0; j < k && n > 0; j++)
    memcpy(whole + (int64_t)j * N + be->row0, mine + (int64_t)j * n, (size_t)n * sizeof *whole);
  if (!cis_backend_is_part(be)) return CIS_OK;
  int P = cis_comm_size();
  int64_t *bounds = NULL;
  CIS_CALL(cis_malloc(&bounds, (size_t)P + 1, sizeof *bounds, "rows split"));
  cis_err err = cis_comm_allgather(&be->row0, (int)sizeof be->row0, bounds);
  bounds[P] = N;
  if (err == CIS_OK) err = cis_comm_gather_rows(whole, N, k, bounds);
  cis_free(&bounds);
  return err;
}

cis_err cis_backend_whole(const cis_backend *be, const double *mine, int k, double **whole) {
  CIS_CALL(cis_malloc(whole, (size_t)be->n_global * (size_t)k, sizeof **whole, "whole vectors"));
  cis_err err = gather_part(be, mine, k, *whole);
  if (err != CIS_OK) cis_free(whole);
  return err;
}

void cis_backend_take_part(const cis_backend *be, const double *whole, int k, double *mine) {
  int64_t N = be->n_global, n = be->n;
  for (int j = 0; j < k && n > 0; j++)
    memcpy(mine + (int64_t)j * n, whole + (int64_t)j * N + be->row0, (size_t)n * sizeof *mine);
}

/* ---- a part: the owner's operations, on the part's n (its struct is passed to them) ---- */

#define OWNER(be) ((be)->owner->ops)

static cis_err part_alloc(cis_backend *be, int64_t count, double **p) {
  return OWNER(be)->alloc(be, count, p);
}
static void part_free(cis_backend *be, double **p) { OWNER(be)->free(be, p); }
static cis_err part_to_host(cis_backend *be, double *host, const double *src, int64_t count) {
  return OWNER(be)->to_host(be, host, src, count);
}
static cis_err part_from_host(cis_backend *be, double *dst, const double *host, int64_t count) {
  return OWNER(be)->from_host(be, dst, host, count);
}
static cis_err part_copy(cis_backend *be, double *dst, const double *src, int64_t count) {
  return OWNER(be)->copy(be, dst, src, count);
}
static cis_err part_gemm_tn(cis_backend *be, int m, int k, const double *A, const double *B,
                            double *G) {
  if (m <= 0 || k <= 0) return CIS_OK;
  CIS_CALL(OWNER(be)->gemm_tn(be, m, k, A, B, G));
  double t0 = cis_wtime();
  CIS_CALL(cis_comm_sum_f64(G, (int64_t)m * k));
  be->t_ortho += cis_wtime() - t0;
  return CIS_OK;
}
static cis_err part_gemm_nn(cis_backend *be, int m, int k, const double *A, const double *S,
                            double beta, double *C) {
  return OWNER(be)->gemm_nn(be, m, k, A, S, beta, C);
}
static cis_err part_axpy(cis_backend *be, int64_t count, double alpha, const double *x,
                         double *y) {
  return OWNER(be)->axpy(be, count, alpha, x, y);
}
static cis_err part_scal(cis_backend *be, int64_t count, double alpha, double *x) {
  return OWNER(be)->scal(be, count, alpha, x);
}
static cis_err part_dot(cis_backend *be, int64_t count, const double *x, const double *y,
                        double *out) {
  CIS_CALL(OWNER(be)->dot(be, count, x, y, out));
  return cis_comm_sum_f64(out, 1);
}
static cis_err part_precond(cis_backend *be, const double *d, double shift, double floor,
                            const double *r, double *t) {
  return OWNER(be)->precond(be, d, shift, floor, r, t);
}
static cis_err part_sync(cis_backend *be) { return OWNER(be)->sync(be); }
static void part_destroy(cis_backend *be) { cis_free(&be); }

static const cis_backend_ops part_ops = {
    .alloc = part_alloc,
    .free = part_free,
    .to_host = part_to_host,
    .from_host = part_from_host,
    .copy = part_copy,
    .gemm_tn = part_gemm_tn,
    .gemm_nn = part_gemm_nn,
    .axpy = part_axpy,
    .scal = part_scal,
    .dot = part_dot,
    .precond = part_precond,
    .sync = part_sync,
    .destroy = part_destroy,
};

cis_err cis_backend_part(cis_backend *owner, int64_t row0, int64_t n, cis_backend **out) {
  cis_backend *be = NULL;
  *out = NULL;
  CIS_CHECK(owner && !owner->owner && row0 >= 0 && n >= 0 && row0 + n <= owner->n,
            CIS_ERR_INTERNAL, "backend part: rows [%lld, %lld) of %lld",
            (long long)row0, (long long)(row0 + n), owner ? (long long)owner->n : -1LL);
  CIS_CALL(cis_calloc(&be, 1, sizeof *be, "backend part"));
  *be = *owner;
  be->ops = &part_ops;
  be->n = n;
  be->n_global = owner->n;
  be->row0 = row0;
  be->owner = owner;
  be->t_ortho = 0.0;
  *out = be;
  return CIS_OK;
}
