/* cisolve: what CUDA code outside the backend needs of a CUDA backend (an operator whose
 * products run on the device: spmv/hyb_cuda_op.cu). CUDA sources only. */
#ifndef CIS_BACKEND_CUDA_H
#define CIS_BACKEND_CUDA_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "kernels/backend.h"

/* The stream every operation of the CUDA backend `be` is ordered on: work an operator puts on
 * it is ordered with the vectors' operations. be must come from cis_backend_create_cuda. */
cudaStream_t cis_backend_cuda_stream(const cis_backend *be);

#ifdef __cplusplus
}
#endif

#endif
