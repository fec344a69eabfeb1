/* cisolve: the hybrid ELL + CSR matrix (spmv/hyb.h) as the solver's operator
 * (kernels/operator.h), on the CPU or on a CUDA device.
 *
 * cis_hyb_op_create: products on the host by cis_hyb_apply_cpu (OpenMP over rows; blocks the
 * host does not cache regenerated in every product); needs a host backend.
 *
 * cis_hyb_cuda_op_create: the resident parts uploaded to the CUDA backend's device
 * (spmv/hyb_cuda.h), the rest streamed in every product, on the backend's stream. budget
 * (bytes, <= 0: 95% of the device's free memory) bounds what the matrix takes; nvec n-length
 * vectors (the solver's: solver/eigs.h cis_eig_vectors, through the plan; 0: none) are kept
 * free beside it. Its report
 * says where the matrix was placed and how the products' time split. Without CUDA:
 * CIS_ERR_NOT_COMPILED.
 *
 * Ownership: H, the backend and the arrays of info are borrowed and must outlive the operator;
 * cis_operator_destroy frees the operator (and, on a device, the uploaded matrix).
 */
#ifndef CIS_HYB_OP_H
#define CIS_HYB_OP_H

#include <stdint.h>

#include "base/error.h"
#include "kernels/operator.h"
#include "spmv/hyb.h"

cis_err cis_hyb_op_create(const cis_hyb *H, const cis_operator_info *info, cis_backend *be,
                          cis_operator **out);

cis_err cis_hyb_cuda_op_create(const cis_hyb *H, const cis_operator_info *info,
                               cis_backend *be, int64_t budget, int64_t nvec,
                               cis_operator **out);

/* The pool a GPU run's build sends its Expansion blocks to as it generates them, so that the
 * upload (cis_hyb_cuda_op_create) generates none again (spmv/hyb_cuda.h,
 * cis_hyb_cuda_pool_create; give it to the build as cis_hmat_opts.sink): for GPU `device`
 * (< 0: device 0), which offers the matrix `device_bytes`. Without CUDA: CIS_ERR_NOT_COMPILED.
 * cis_hyb_cuda_op_pool_destroy frees it (after the upload) and sets *s = NULL. */
cis_err cis_hyb_cuda_op_pool_create(int device, int64_t device_bytes, cis_block_sink **out);
void cis_hyb_cuda_op_pool_destroy(cis_block_sink **s);

#endif
