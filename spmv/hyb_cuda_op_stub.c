/* cisolve: the CUDA operator's entry points when CUDA is built out, so the core always links. */
#include <stddef.h>

#include "spmv/hyb_op.h"

cis_err cis_hyb_cuda_op_create(const cis_hyb *H, const cis_operator_info *info,
                               cis_backend *be, int64_t budget, int64_t nvec,
                               cis_operator **out) {
  (void)H, (void)info, (void)be, (void)budget, (void)nvec;
  *out = NULL;
  CIS_ERROR(CIS_ERR_NOT_COMPILED,
            "this cisolve was built without CUDA (CISOLVE_ENABLE_CUDA=OFF)");
}

cis_err cis_hyb_cuda_op_pool_create(int device, int64_t device_bytes, cis_block_sink **out) {
  (void)device, (void)device_bytes;
  *out = NULL;
  CIS_ERROR(CIS_ERR_NOT_COMPILED,
            "this cisolve was built without CUDA (CISOLVE_ENABLE_CUDA=OFF)");
}

void cis_hyb_cuda_op_pool_destroy(cis_block_sink **s) { *s = NULL; }
