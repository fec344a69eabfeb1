/* cisolve: the kernel of the layout with the Reference region in column tiles, the resident
 * CSR beside it. */
#ifndef CIS_HYB_KERNELS_TILED_CUH
#define CIS_HYB_KERNELS_TILED_CUH

#include "spmv/hyb_kernels.cuh"

/* The Reference region in column tiles (spmv/hyb.h, cis_ell_tile_offsets): one block per group
 * of CIS_TILE_ROWS rows. The block's warps take the tiles in step (a barrier between tiles):
 * CIS_TILE_LANES lanes per row add the row's entries of the tile into the row's partial sum in
 * shared memory. The rows' Expansion parts follow at W lanes per row, as in cis_hyb_kernel, and y
 * is written once. A block's gathers of x then stay within one tile's slice (16 KB) at a time,
 * which L1 keeps, where a Reference slice larger than L1 sent one 32-byte L2 sector per entry.
 * (Copying the tile's slice into shared memory first was slower for one vector,
 * docs/BENCHMARKS.md.) */
/* (CIS_TILE_ROWS, CIS_TILE_COLS, CIS_TILE_LANES: spmv/hyb_place.h) */
#define CIS_TILE_BLOCK 512

struct cis_tiled_view {
  int64_t nrows, ntiles;
  const int64_t *base;  /* groups + 1: each group's first entry */
  const uint32_t *off;  /* per group, ntiles * CIS_TILE_ROWS + 1 */
  const uint16_t *col;  /* column - the tile's first column */
  const double *val;
};

/* Shared memory of the tiled kernel for K vectors: the rows' partial sums and the tile's
 * offsets. */
static constexpr size_t cis_tiled_shared(int K) {
  return (size_t)CIS_TILE_ROWS * K * sizeof(double) + (CIS_TILE_ROWS + 2) * sizeof(uint32_t);
}

template <int W, int K, typename CE, bool CODED>
__global__ void __launch_bounds__(CIS_TILE_BLOCK)
    cis_tiled_kernel(cis_tiled_view tv, cis_csr_view<CE> m, cis_coded_view<CE> cm,
                     const double *__restrict__ xt, double *__restrict__ Y, int64_t ldy) {
  extern __shared__ double cis_tiled_sh[];
  double *part = cis_tiled_sh;
  uint32_t *soff = reinterpret_cast<uint32_t *>(part + CIS_TILE_ROWS * K);
  const int64_t g = blockIdx.x, row0 = g * CIS_TILE_ROWS;
  const uint32_t *off = tv.off + g * (tv.ntiles * CIS_TILE_ROWS + 1);
  const uint16_t *col = tv.col + tv.base[g];
  const double *val = tv.val + tv.base[g];
  const int tl = threadIdx.x % CIS_TILE_LANES;
  for (int i = threadIdx.x; i < CIS_TILE_ROWS * K; i += blockDim.x) part[i] = 0.0;
  if constexpr (K > 1) cis_grid_wait();
  for (int64_t t = 0; t < tv.ntiles; t++) {
    int64_t c0 = t * CIS_TILE_COLS;
    const double *xg = xt + c0 * K;
    __syncthreads(); /* the previous tile is done with */
    for (int i = threadIdx.x; i <= CIS_TILE_ROWS; i += blockDim.x)
      soff[i] = __ldcs(off + t * CIS_TILE_ROWS + i);
    __syncthreads();
    /* every sub-warp takes the same number of rows (empty past the end): full-warp shuffles.
     * Two entries per lane and step, both loads issued before either is used: a row has a few
     * dozen entries in a tile, so most take one step. */
    for (int l = threadIdx.x / CIS_TILE_LANES; l < CIS_TILE_ROWS;
         l += CIS_TILE_BLOCK / CIS_TILE_LANES) {
      uint32_t p0 = soff[l], p1 = soff[l + 1];
      double acc[K];
#pragma unroll
      for (int j = 0; j < K; j++) acc[j] = 0.0;
      for (uint32_t p = p0 + tl; p < p1; p += 2 * CIS_TILE_LANES) {
        uint32_t q = p + CIS_TILE_LANES;
        double v = __ldcs(val + p), w = 0.0;
        int c = __ldcs(col + p), d = 0;
        if (q < p1) {
          w = __ldcs(val + q);
          d = __ldcs(col + q);
        }
        cis_fma_x<K>(acc, v, xg, c);
        if (q < p1) cis_fma_x<K>(acc, w, xg, d);
      }
#pragma unroll
      for (int o = CIS_TILE_LANES / 2; o > 0; o >>= 1)
#pragma unroll
        for (int j = 0; j < K; j++)
          acc[j] += __shfl_xor_sync(0xffffffffu, acc[j], o, CIS_TILE_LANES);
      if (tl == 0)
#pragma unroll
        for (int j = 0; j < K; j++) part[l * K + j] += acc[j];
    }
  }
  __syncthreads();
  const int lane = threadIdx.x % W;
  for (int l = threadIdx.x / W; l < CIS_TILE_ROWS; l += CIS_TILE_BLOCK / W) {
    int64_t row = row0 + l;
    bool active = row < tv.nrows;
    double acc[K];
#pragma unroll
    for (int j = 0; j < K; j++) acc[j] = active && lane == 0 ? part[l * K + j] : 0.0;
    if (active) {
      if constexpr (CODED)
        cis_coded_row<W, K, CE>(cm, cm.rowptr[row], cm.rowptr[row + 1], lane, xt, acc);
      cis_csr_row<W, K, CE>(m, m.rowptr[row], m.rowptr[row + 1], lane, xt, acc);
    }
    cis_row_store<W, K, false>(acc, lane, active, row, Y, ldy);
  }
}

#endif
