/* cisolve: the kernel that places the build's pool of Expansion entries in the resident CSR. */
#ifndef CIS_HYB_KERNELS_POOL_CUH
#define CIS_HYB_KERNELS_POOL_CUH

#include "spmv/hyb_kernels.cuh"

/* A row's entries k = 0, 1, ... (columns scol[s + k], values sval[s + k]) to their places in
 * [p0, p1) of col and val: lane order for `lanes` lanes reading v consecutive positions a step,
 * as the host's upload places them (spmv/hyb.c, cis_lane_order), or with lanes 0 the row's own
 * order. */
template <typename CE, typename T>
__device__ void cis_place_row(int64_t p0, int64_t p1, int v, int lanes, int64_t s,
                              const int32_t *__restrict__ scol, const T *__restrict__ sval,
                              CE *__restrict__ col, T *__restrict__ val) {
  if (lanes == 0) {
    for (int64_t k = 0; k < p1 - p0; k++) {
      col[p0 + k] = (CE)scol[s + k];
      val[p0 + k] = sval[s + k];
    }
    return;
  }
  int64_t k = 0;
  for (int64_t a = p0 & -(int64_t)v; a < p1; a += (int64_t)v * lanes)
    for (int j = 0; j < v; j++)
      for (int l = 0; l < lanes; l++) {
        int64_t pos = a + (int64_t)v * l + j;
        if (pos < p0 || pos >= p1) continue;
        col[pos] = (CE)scol[s + k];
        val[pos] = sval[s + k++];
      }
}

/* Row r's Expansion entries from the build's pool (spmv/hyb_cuda_pool.cu: its plain entries from
 * ps[r], its coded ones from cs[r], each row's in its own order) into the resident CSR laid out
 * by rp and crp (crp NULL: no coded part), plain entries in lane order of 2 positions a step,
 * coded ones of 4, as the host's upload stores them: a thread per row. */
template <typename CE>
__global__ void cis_pool_place_kernel(int64_t nrows, int lanes, const int64_t *__restrict__ ps,
                                      const int64_t *__restrict__ rp,
                                      const int32_t *__restrict__ pcol,
                                      const double *__restrict__ pval, CE *__restrict__ col,
                                      double *__restrict__ val, const int64_t *__restrict__ cs,
                                      const int64_t *__restrict__ crp,
                                      const int32_t *__restrict__ pccol,
                                      const uint16_t *__restrict__ pcode, CE *__restrict__ ccol,
                                      uint16_t *__restrict__ code) {
  const int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= nrows) return;
  cis_place_row(rp[r], rp[r + 1], 2, lanes, ps[r], pcol, pval, col, val);
  if (crp) cis_place_row(crp[r], crp[r + 1], 4, lanes, cs[r], pccol, pcode, ccol, code);
}

#endif
