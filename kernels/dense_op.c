/* cisolve: a dense symmetric matrix as an operator (kernels/operator.h). A lives on the
 * backend, X is brought to the host and Y = A X is one gemm_nn (whose small operand is a host
 * array); the diagonal and the Reference block are host copies the operator owns. Meant for
 * tests of the solvers and small problems: every product reads all n^2 entries. */
#include <string.h>

#include "base/util.h"
#include "kernels/operator.h"

typedef struct {
  double *A;     /* backend, n x n */
  double *Xh;    /* host, n x cap: the block being multiplied */
  int64_t cap;   /* vectors Xh holds */
  double *diag;  /* host, n */
  double *ref;   /* host, nref x nref */
} dense_impl;

static cis_err dense_apply(cis_operator *op, int k, const double *X, double *Y) {
  dense_impl *d = op->impl;
  cis_backend *be = op->be;
  int64_t n = op->n;
  if (n == 0) return CIS_OK;
  if (k > d->cap) {
    CIS_CALL(cis_realloc(&d->Xh, (size_t)n * (size_t)k, sizeof *d->Xh, "dense operator block"));
    d->cap = k;
  }
  CIS_CALL(be->ops->to_host(be, d->Xh, X, n * k));
  CIS_CALL(be->ops->gemm_nn(be, (int)n, k, d->A, d->Xh, 0.0, Y));
  return be->ops->sync(be);
}

static void dense_destroy(cis_operator *op) {
  dense_impl *d = op->impl;
  if (!d) return;
  op->be->ops->free(op->be, &d->A);
  cis_free(&d->Xh);
  cis_free(&d->diag);
  cis_free(&d->ref);
  cis_free(&op->impl);
}

static const cis_operator_ops dense_ops = {
    .apply = dense_apply,
    .report = NULL,
    .destroy = dense_destroy,
};

cis_err cis_dense_op_create(cis_backend *be, int64_t n, const double *A, int64_t nref,
                            cis_operator **out) {
  cis_err err = CIS_OK;
  dense_impl *d = NULL;
  cis_operator *op = NULL;
  *out = NULL;
  CIS_CHECK(n >= 0 && n <= 46340 && nref >= 0 && nref <= n && (n == 0 || A), CIS_ERR_USAGE,
            "dense operator of order %lld (at most 46340) with a Reference block of %lld",
            (long long)n, (long long)nref);
  CIS_CLEANUP_FUNCTION;
  CIS_TRY(cis_calloc(&d, 1, sizeof *d, "dense operator"));
  CIS_TRY(cis_malloc(&d->diag, (size_t)n + 1, sizeof *d->diag, "dense operator diagonal"));
  CIS_TRY(cis_malloc(&d->ref, (size_t)(nref * nref) + 1, sizeof *d->ref,
                     "dense operator Reference block"));
  for (int64_t i = 0; i < n; i++) d->diag[i] = A[i + i * n];
  for (int64_t j = 0; j < nref; j++)
    memcpy(d->ref + j * nref, A + j * n, (size_t)nref * sizeof *d->ref);
  CIS_TRY(be->ops->alloc(be, n * n, &d->A));
  CIS_TRY(be->ops->from_host(be, d->A, A, n * n));
  cis_operator_info info = {n, d->diag, nref, nref ? d->ref : NULL};
  CIS_TRY(cis_operator_new(&dense_ops, be, &info, &op));
  op->impl = d;
  d = NULL;
  *out = op;
cleanup:
  if (d) {
    be->ops->free(be, &d->A);
    cis_free(&d->diag);
    cis_free(&d->ref);
    cis_free(&d);
  }
  return err;
}
