/* cisolve: the hybrid ELL + CSR matrix on a CUDA device, and its products (docs/gpu.md).
 *
 * Upload (cis_hyb_cuda_create) copies the resident parts of a host cis_hyb to the device:
 *  - the sliced ELL block of Reference columns, always; its column indices are 16-bit when
 *    boundary <= 65536, else 32-bit; slice widths are rounded up to even so that a row starts
 *    on a 16-byte boundary (values are read as double2);
 *  - the cached Expansion blocks, concatenated into one CSR (64-bit row pointers over all n
 *    rows; rows of blocks that are not resident have empty ranges), while the budget allows.
 * Blocks that are not resident (not cached on the host, or over the budget) are streamed in
 * every product: regenerated through h->regen (or read from the host cache), staged in pinned
 * buffers, copied asynchronously and applied by a second kernel, two buffers in flight.
 *
 * Products: Y = H X for k column-major vectors (ld n) in device memory, on `stream`.
 *
 * Ownership: the cis_hyb_cuda owns its device and pinned memory; the host cis_hyb is borrowed
 * and must outlive it when any block is streamed. Errors name the CUDA status (CIS_ERR_RESOURCE,
 * CIS_ERR_NOMEM) or the budget that would suffice (CIS_ERR_NOMEM).
 */
#ifndef CIS_HYB_CUDA_H
#define CIS_HYB_CUDA_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "core/error.h"
#include "spmv/hyb.h"

typedef struct cis_hyb_cuda cis_hyb_cuda;

enum {
  CIS_HYB_CUDA_PAPER = 1,    /* also keep 32-bit ELL columns for cis_hyb_cuda_apply_paper */
  CIS_HYB_CUDA_INDEX32 = 2,  /* 32-bit ELL columns even when 16 bits would do */
  CIS_HYB_CUDA_NO_CACHE = 4  /* stream every Expansion block (tests) */
};

typedef struct {
  int64_t ell_bytes;       /* device ELL: values, columns, row lengths, slice data */
  int64_t csr_bytes;       /* resident Expansion CSR: values, columns, row pointers */
  int64_t work_bytes;      /* multi-vector workspace */
  int64_t paper_bytes;     /* 32-bit ELL columns kept for the paper's kernel */
  int64_t resident_blocks, streamed_blocks;
  int index_bits;          /* 16 or 32 */
  int subwarp;             /* lanes per row in our kernels */
} cis_hyb_cuda_info;

/* Device bytes the resident ELL block and the workspace need: the smallest usable budget. */
int64_t cis_hyb_cuda_min_bytes(const cis_hyb *h, int flags);

/* budget <= 0: no limit beyond the device's free memory. */
cis_err cis_hyb_cuda_create(const cis_hyb *h, int64_t budget, int flags, cudaStream_t stream,
                            cis_hyb_cuda **out);
void cis_hyb_cuda_destroy(cis_hyb_cuda **d);
void cis_hyb_cuda_get_info(const cis_hyb_cuda *d, cis_hyb_cuda_info *info);
/* Override the lanes per row (4, 8, 16 or 32) picked at upload (benchmarks). */
cis_err cis_hyb_cuda_set_subwarp(cis_hyb_cuda *d, int lanes);
/* Vectors per pass of the multi-vector kernel, 1..CIS_HYB_CUDA_MAX_K (default the maximum). */
cis_err cis_hyb_cuda_set_group(cis_hyb_cuda *d, int k);

/* Y = H X with our kernels: k = 1 uses the single-vector kernel, k > 1 the multi-vector kernel
 * on groups of up to CIS_HYB_CUDA_MAX_K vectors (cis_hyb_cuda_set_group), each group one pass
 * over the matrix. */
#define CIS_HYB_CUDA_MAX_K 8
cis_err cis_hyb_cuda_apply(cis_hyb_cuda *d, int k, const double *X, double *Y);
/* The multi-vector kernel forced, also for k = 1 (tests and benchmarks). */
cis_err cis_hyb_cuda_apply_multi(cis_hyb_cuda *d, int k, const double *X, double *Y);
/* The 2018 paper's kernel (Algorithm 7): resident matrices only, created with
 * CIS_HYB_CUDA_PAPER. Benchmarks only. */
cis_err cis_hyb_cuda_apply_paper(cis_hyb_cuda *d, const double *x, double *y);

#ifdef __cplusplus
}
#endif

#endif
