/* bench: the 2018 paper's kernel (Algorithm 7) and the upload of the format it reads
 * (bench/paper_kernel.h). */
#include <string.h>

#include <vector>

extern "C" {
#include "base/util.h"
}
#include "bench/paper_kernel.h"
#include "base/cuda_check.cuh"
#include "spmv/hyb_kernels.cuh"

/* The 2018 paper's kernel, Algorithm 7, as published: a warp per row, the ELL region reduced
 * through shared memory (ShMem1), then the CSR region (ShMem2), and thread 0 adding both to
 * y with atomicAdd (so y must be zeroed first). The ELL loop covers the full slice width,
 * padding included, with 32-bit column indices. __syncwarp() stands for the paper's
 * "SynchronousAdd": without it the tree reduction races on Volta and later. */
__global__ void cis_paper_kernel(cis_ell_view<int32_t> e, cis_csr_view<int32_t> m,
                                 const double *__restrict__ x, double *__restrict__ y) {
  extern __shared__ double cis_paper_sh[];
  double *sh1 = cis_paper_sh, *sh2 = cis_paper_sh + blockDim.x;
  int64_t tid = (int64_t)blockDim.x * blockIdx.x + threadIdx.x;
  int64_t warp = tid / 32;
  int lane = (int)(tid % 32);
  int t = threadIdx.x;
  if (warp >= e.nrows) return;
  int64_t q0 = e.start(warp);
  int width = e.slice_width[warp / e.slice];
  sh1[t] = 0.0;
  for (int r2 = lane; r2 < width; r2 += 32) sh1[t] += e.val[q0 + r2] * x[e.col[q0 + r2]];
  for (int off = 16; off > 0; off >>= 1) {
    __syncwarp();
    if (lane < off) sh1[t] += sh1[t + off];
  }
  __syncwarp();
  int64_t start = m.rowptr[warp], end = m.rowptr[warp + 1];
  sh2[t] = 0.0;
  if (end > start) {
    for (int64_t j = start + lane; j < end; j += 32) sh2[t] += m.val[j] * x[m.col[j]];
    for (int off = 16; off > 0; off >>= 1) {
      __syncwarp();
      if (lane < off) sh2[t] += sh2[t + off];
    }
    __syncwarp();
  }
  if (lane == 0) atomicAdd(&y[warp], sh1[t] + sh2[t]);
}

/* Device copy of `count` elements of `src` into a new array *dst. */
template <typename T>
static cis_err put(T **dst, const T *src, int64_t count, int64_t *bytes) {
  CIS_CUDA(cudaMalloc((void **)dst, (size_t)count * sizeof(T) + 16));
  CIS_CUDA(cudaMemcpy(*dst, src, (size_t)count * sizeof(T), cudaMemcpyHostToDevice));
  *bytes += count * (int64_t)sizeof(T);
  return CIS_OK;
}

cis_err paper_matrix_create(const cis_hyb *h, paper_matrix *p) {
  const cis_ell *e = &h->ell;
  memset(p, 0, sizeof *p);
  p->n = h->n;
  p->slice = e->slice;
  /* the sliced ELL: slice widths rounded up to even, two entries of padding at the end */
  std::vector<int64_t> ptr((size_t)e->nslices + 1, 0);
  std::vector<int32_t> width((size_t)e->nslices);
  for (int64_t s = 0; s < e->nslices; s++) {
    int64_t rows = CIS_MIN((int64_t)e->slice, e->nrows - s * e->slice);
    width[s] = e->slice_width[s] + (e->slice_width[s] & 1);
    ptr[s + 1] = ptr[s] + rows * width[s];
  }
  const int64_t m = ptr[e->nslices] + 2;
  std::vector<int32_t> col((size_t)m, 0);
  std::vector<double> val((size_t)m, 0.0);
  for (int64_t s = 0; s < e->nslices; s++) {
    int64_t rows = CIS_MIN((int64_t)e->slice, e->nrows - s * e->slice), w = e->slice_width[s];
    for (int64_t l = 0; l < rows; l++)
      for (int64_t t = 0; t < w; t++) {
        col[ptr[s] + l * width[s] + t] = e->col[e->slice_ptr[s] + l * w + t];
        val[ptr[s] + l * width[s] + t] = e->val[e->slice_ptr[s] + l * w + t];
      }
  }
  /* the Expansion blocks as one CSR, in row order */
  std::vector<int64_t> rp((size_t)h->n + 1, 0);
  std::vector<int32_t> ecol;
  std::vector<double> eval;
  cis_csr_block scratch;
  memset(&scratch, 0, sizeof scratch);
  for (int64_t b = 0; b < h->nblocks; b++) {
    const cis_csr_block *src = NULL;
    cis_err err = cis_hyb_block_rows(h, b, &scratch, &src);
    if (err != CIS_OK) {
      cis_csr_block_free(&scratch);
      return err;
    }
    for (int64_t l = 0; l < src->nrows; l++) {
      for (int64_t q = src->rowptr[l]; q < src->rowptr[l + 1]; q++) {
        ecol.push_back(src->col[q]);
        eval.push_back(src->val[q]);
      }
      rp[(size_t)(src->row0 + l + 1)] = (int64_t)ecol.size();
    }
  }
  cis_csr_block_free(&scratch);
  for (int i = 0; i < 2; i++) {
    ecol.push_back(0);
    eval.push_back(0.0);
  }
  CIS_CALL(put(&p->slice_ptr, ptr.data(), e->nslices + 1, &p->bytes));
  CIS_CALL(put(&p->slice_width, width.data(), e->nslices, &p->bytes));
  CIS_CALL(put(&p->row_len, e->row_len, e->nrows, &p->bytes));
  CIS_CALL(put(&p->col, col.data(), m, &p->bytes));
  CIS_CALL(put(&p->val, val.data(), m, &p->bytes));
  CIS_CALL(put(&p->rowptr, rp.data(), h->n + 1, &p->bytes));
  CIS_CALL(put(&p->ecol, ecol.data(), (int64_t)ecol.size(), &p->bytes));
  CIS_CALL(put(&p->eval, eval.data(), (int64_t)eval.size(), &p->bytes));
  return CIS_OK;
}

void paper_matrix_destroy(paper_matrix *p) {
  cudaFree(p->slice_ptr);
  cudaFree(p->slice_width);
  cudaFree(p->row_len);
  cudaFree(p->col);
  cudaFree(p->val);
  cudaFree(p->rowptr);
  cudaFree(p->ecol);
  cudaFree(p->eval);
  memset(p, 0, sizeof *p);
}

cis_err paper_matrix_apply(const paper_matrix *p, const double *x, double *y,
                           cudaStream_t stream) {
  if (p->n == 0) return CIS_OK;
  CIS_CUDA(cudaMemsetAsync(y, 0, (size_t)p->n * 8, stream));
  const int threads = 256;
  unsigned g = (unsigned)((p->n * 32 + threads - 1) / threads);
  cis_ell_view<int32_t> e = {p->n, p->slice, p->slice_ptr, p->slice_width, p->row_len, p->col,
                             p->val};
  cis_csr_view<int32_t> m = {0, p->n, p->rowptr, p->ecol, p->eval};
  cis_paper_kernel<<<g, threads, 2 * threads * sizeof(double), stream>>>(e, m, x, y);
  CIS_CUDA(cudaGetLastError());
  return CIS_OK;
}
