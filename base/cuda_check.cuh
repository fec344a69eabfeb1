/* cisolve: CUDA, cuBLAS and cuSPARSE statuses as cis_err values.
 *
 * Each library status is translated where it is returned, naming the status and the call.
 * An out-of-memory status becomes CIS_ERR_NOMEM (exit 4, "memory"); any other failure is
 * CIS_ERR_RESOURCE (exit 4: the GPU or a library could not do its part).
 * CIS_CUDA / CIS_CUBLAS / CIS_CUSPARSE return from the function; the _TRY forms jump to the
 * function's `cleanup:` label with `err` set, like CIS_FAIL.
 */
#ifndef CIS_CUDA_CHECK_CUH
#define CIS_CUDA_CHECK_CUH

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

extern "C" {
#include "base/error.h"
}

static inline cis_err cis_cuda_code(cudaError_t e) {
  return e == cudaErrorMemoryAllocation ? CIS_ERR_NOMEM : CIS_ERR_RESOURCE;
}
static inline cis_err cis_cublas_code(cublasStatus_t s) {
  return s == CUBLAS_STATUS_ALLOC_FAILED ? CIS_ERR_NOMEM : CIS_ERR_RESOURCE;
}
static inline cis_err cis_cusparse_code(cusparseStatus_t s) {
  return s == CUSPARSE_STATUS_ALLOC_FAILED ? CIS_ERR_NOMEM : CIS_ERR_RESOURCE;
}

#define CIS_CUDA(call)                                                                    \
  do {                                                                                    \
    cudaError_t cis_ce_ = (call);                                                         \
    if (cis_ce_ != cudaSuccess)                                                           \
      CIS_ERROR(cis_cuda_code(cis_ce_), "%s: %s (%s)", #call, cudaGetErrorName(cis_ce_),  \
                cudaGetErrorString(cis_ce_));                                             \
  } while (0)

#define CIS_CUDA_TRY(call)                                                               \
  do {                                                                                   \
    cudaError_t cis_ce_ = (call);                                                        \
    if (cis_ce_ != cudaSuccess)                                                          \
      CIS_FAIL(cis_cuda_code(cis_ce_), "%s: %s (%s)", #call, cudaGetErrorName(cis_ce_),  \
               cudaGetErrorString(cis_ce_));                                             \
  } while (0)

#define CIS_CUBLAS(call)                                                                  \
  do {                                                                                    \
    cublasStatus_t cis_bs_ = (call);                                                      \
    if (cis_bs_ != CUBLAS_STATUS_SUCCESS)                                                 \
      CIS_ERROR(cis_cublas_code(cis_bs_), "%s: %s (%s)", #call,                          \
                cublasGetStatusName(cis_bs_), cublasGetStatusString(cis_bs_));            \
  } while (0)

#define CIS_CUBLAS_TRY(call)                                                             \
  do {                                                                                   \
    cublasStatus_t cis_bs_ = (call);                                                     \
    if (cis_bs_ != CUBLAS_STATUS_SUCCESS)                                                \
      CIS_FAIL(cis_cublas_code(cis_bs_), "%s: %s (%s)", #call,                          \
               cublasGetStatusName(cis_bs_), cublasGetStatusString(cis_bs_));            \
  } while (0)

#define CIS_CUSPARSE(call)                                                                \
  do {                                                                                    \
    cusparseStatus_t cis_ss_ = (call);                                                    \
    if (cis_ss_ != CUSPARSE_STATUS_SUCCESS)                                               \
      CIS_ERROR(cis_cusparse_code(cis_ss_), "%s: %s (%s)", #call,                        \
                cusparseGetErrorName(cis_ss_), cusparseGetErrorString(cis_ss_));          \
  } while (0)

#endif
