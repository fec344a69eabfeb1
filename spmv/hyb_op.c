/* cisolve: the hybrid matrix as an operator on the CPU (spmv/hyb_op.h). */
#include "spmv/hyb_op.h"

static cis_err hyb_cpu_apply(cis_operator *op, int k, const double *X, double *Y) {
  return cis_hyb_apply_cpu(op->impl, k, X, Y);
}

/* The matrix is borrowed: nothing to free. */
static void hyb_cpu_destroy(cis_operator *op) { op->impl = NULL; }

static const cis_operator_ops hyb_cpu_ops = {
    .apply = hyb_cpu_apply,
    .report = NULL,
    .destroy = hyb_cpu_destroy,
};

cis_err cis_hyb_op_create(const cis_hyb *H, const cis_operator_info *info, cis_backend *be,
                          cis_operator **out) {
  *out = NULL;
  CIS_CHECK(H && H->n == info->n, CIS_ERR_INTERNAL,
            "hybrid operator: a matrix of %lld rows described as %lld", H ? (long long)H->n : -1LL,
            (long long)info->n);
  CIS_CHECK(!be->is_device, CIS_ERR_INTERNAL,
            "hybrid operator on the CPU: the backend's vectors live on a device (%s)", be->desc);
  CIS_CALL(cis_operator_new(&hyb_cpu_ops, be, info, out));
  (*out)->impl = (void *)H;
  return CIS_OK;
}
