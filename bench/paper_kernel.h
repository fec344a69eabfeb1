/* bench: the 2018 paper's hybrid ELL + CSR product (Algorithm 7, as published), which
 * spmv_bench compares ours with. cisolve does not use it; it lives here with the format it
 * reads, built from the host cis_hyb: the Reference region as a sliced ELL with 32-bit columns
 * (slice widths rounded up to even, rows in their own order, the padding read too), the
 * Expansion blocks as one CSR with 32-bit columns, every block on the device.
 * Errors: cis_err (CUDA statuses named, CIS_ERR_NOMEM). paper_matrix_destroy frees what
 * paper_matrix_create allocated (also after a failure). */
#ifndef CIS_BENCH_PAPER_KERNEL_H
#define CIS_BENCH_PAPER_KERNEL_H

#include <stdint.h>

#include <cuda_runtime_api.h>

extern "C" {
#include "base/error.h"
#include "spmv/hyb.h"
}

typedef struct {
  int64_t n;
  int slice;
  int64_t *slice_ptr;
  int32_t *slice_width, *row_len, *col;
  double *val;
  int64_t *rowptr; /* the Expansion CSR, n + 1 */
  int32_t *ecol;   /* padded by 2 entries */
  double *eval;
  int64_t bytes;   /* device bytes of all the above */
} paper_matrix;

cis_err paper_matrix_create(const cis_hyb *h, paper_matrix *p);
void paper_matrix_destroy(paper_matrix *p);
/* y = H x on `stream` (y zeroed first: the kernel adds with atomicAdd). */
cis_err paper_matrix_apply(const paper_matrix *p, const double *x, double *y,
                           cudaStream_t stream);

#endif
