/* cisolve: device kernels of the hybrid ELL + CSR product (docs/gpu.md).
 *
 * Our kernel: one launch per product, a sub-warp of W lanes per row (W = 4..32, picked from
 * the mean row length), the row's ELL part then its CSR part, warp-shuffle reduction, y
 * written once by one lane. Matrix entries are read in pairs (double2 values, 2 column indices
 * per load) with the streaming cache hint, so that L1 stays for x; x is read through the
 * read-only path. Each row's ELL part starts 16-byte aligned (even slice widths); CSR pairs are
 * read from an even index and the entries outside the row are masked, which needs arrays padded
 * by two entries.
 *
 * The same code serves K vectors at once: X is then interleaved (row-major n x K), so that the
 * K values of one column are one contiguous 8K-byte read and each matrix entry is read once.
 */
#ifndef CIS_HYB_KERNELS_CUH
#define CIS_HYB_KERNELS_CUH

#include <cooperative_groups.h>
#include <cuda_pipeline.h>
#include <cuda_runtime.h>
#include <stdint.h>

extern "C" {
#include "spmv/hyb_place.h"
#include "spmv/split.h"
}

#define CIS_HYB_BLOCK 256
/* Threads per block of the kernel with a coded part: 64 to 256 consecutive rows per block
 * share their gathers of x in one SM's L1 (rows with the same alpha string reach the same
 * columns); 2.96 ms against 3.10 ms with 256 threads on H2O/6-31G FCI (docs/BENCHMARKS.md).
 * The plain kernel keeps 256, which its sub-warp choice was measured with. */
#define CIS_CODED_BLOCK 1024

template <typename CI>
struct cis_ell_view {
  int64_t nrows;
  int slice;
  const int64_t *slice_ptr;
  const int32_t *slice_width;
  const int32_t *row_len;
  const CI *col;
  const double *val;
  /* the position of row r's first entry (slices of `slice` rows, each row padded to its
   * slice's width) */
  __device__ __forceinline__ int64_t start(int64_t r) const {
    const int64_t s = r / slice;
    return slice_ptr[s] + (r - s * slice) * slice_width[s];
  }
};

/* Expansion CSR rows [row0, row0 + nrows): 16-bit columns when n <= 65536, else 32-bit. */
template <typename CE>
struct cis_csr_view {
  int64_t row0, nrows;   /* rows [row0, row0 + nrows) of the matrix */
  const int64_t *rowptr; /* nrows + 1, local */
  const CE *col;         /* padded by 2 entries */
  const double *val;     /* padded by 2 entries */
};

/* The coded part of the resident Expansion CSR (spmv/valdict.h): an entry's value is
 * table[code & 0x7FFF] with the sign bit of code; columns as in cis_csr_view. table == NULL:
 * no coded part. */
template <typename CE>
struct cis_coded_view {
  const int64_t *rowptr; /* n + 1, over all rows */
  const CE *col;         /* padded by 4 entries */
  const uint16_t *code;  /* padded by 4 entries */
  const double *table;
};

/* Two and four column indices in one load. */
template <typename CI>
struct cis_col_pair;
template <>
struct cis_col_pair<uint16_t> {
  typedef ushort2 type;
  typedef ushort4 quad;
};
template <>
struct cis_col_pair<int32_t> {
  typedef int2 type;
  typedef int4 quad;
};

/* A product of several vectors is launched as the programmatic dependent of the kernel that
 * interleaves X (hyb_cuda.cu, launch_kernel): its blocks start, and load their rows' offsets,
 * while the interleave finishes, and wait for it here before they read x. The interleave lets
 * them start as soon as each of its blocks has started (cis_grid_release). Without such a
 * launch, or before sm_90, both are no-ops. */
__device__ __forceinline__ void cis_grid_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ void cis_grid_release() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}

/* acc[j] += v * x_j[c] for the K interleaved vectors. */
template <int K>
__device__ __forceinline__ void cis_fma_x(double (&acc)[K], double v,
                                          const double *__restrict__ xt, int c) {
  const double *p = xt + (int64_t)c * K;
  if constexpr (K % 2 == 0) {
#pragma unroll
    for (int j = 0; j < K; j += 2) {
      double2 xv = __ldg(reinterpret_cast<const double2 *>(p + j));
      acc[j] += v * xv.x;
      acc[j + 1] += v * xv.y;
    }
  } else {
#pragma unroll
    for (int j = 0; j < K; j++) acc[j] += v * __ldg(p + j);
  }
}

/* The row's ELL part: `len` entries from q0. */
template <int W, int K, typename CI>
__device__ __forceinline__ void cis_ell_row(const cis_ell_view<CI> &e, int64_t q0, int len,
                                            int lane, const double *__restrict__ xt,
                                            double (&acc)[K]) {
  typedef typename cis_col_pair<CI>::type pair_t;
  int npairs = (len + 1) >> 1;
  const double2 *v2 = reinterpret_cast<const double2 *>(e.val + q0);
  const pair_t *c2 = reinterpret_cast<const pair_t *>(e.col + q0);
#pragma unroll 4
  for (int t = lane; t < npairs; t += W) {
    double2 v = __ldcs(v2 + t);
    pair_t c = __ldcs(c2 + t);
    cis_fma_x<K>(acc, v.x, xt, (int)c.x);
    if (2 * t + 1 < len) cis_fma_x<K>(acc, v.y, xt, (int)c.y);
  }
}

/* Entries [p0, p1) of a CSR. */
template <int W, int K, typename CE>
__device__ __forceinline__ void cis_csr_row(const cis_csr_view<CE> &m, int64_t p0, int64_t p1,
                                            int lane, const double *__restrict__ xt,
                                            double (&acc)[K]) {
  typedef typename cis_col_pair<CE>::type pair_t;
#pragma unroll 4
  for (int64_t p = (p0 & ~(int64_t)1) + 2 * lane; p < p1; p += 2 * W) {
    double2 v = __ldcs(reinterpret_cast<const double2 *>(m.val + p));
    pair_t c = __ldcs(reinterpret_cast<const pair_t *>(m.col + p));
    if (p >= p0) cis_fma_x<K>(acc, v.x, xt, (int)c.x);
    if (p + 1 < p1) cis_fma_x<K>(acc, v.y, xt, (int)c.y);
  }
}

/* A coded entry's value: the table's magnitude v with the code's sign bit. */
__device__ __forceinline__ double cis_apply_sign(double v, unsigned code) {
  unsigned long long b = __double_as_longlong(v);
  return __longlong_as_double(b | ((unsigned long long)(code >> 15) << 63));
}

/* The table is read through L1 (__ldg). Held in shared memory instead it was no faster for the
 * hybrid kernel on H2O/6-31G FCI when every block loaded it (the gathers of x, not of the table,
 * bound the kernel), and 5-50% slower with resident blocks striding over the rows
 * (docs/design-notes.md); the SELL-32 kernel reads it from shared memory for one vector. */
__device__ __forceinline__ double cis_decode(const double *__restrict__ table, unsigned code) {
  return cis_apply_sign(__ldg(table + (code & 0x7FFFu)), code);
}

/* Four coded entries per lane and step (16- or 8-byte column and 8-byte code loads): at 4 or 6
 * bytes an entry, two would leave too few bytes in flight. Entries [p0, p1); arrays padded by
 * 4 entries. */
template <int W, int K, typename CE>
__device__ __forceinline__ void cis_coded_row(const cis_coded_view<CE> &m, int64_t p0,
                                              int64_t p1, int lane,
                                              const double *__restrict__ xt, double (&acc)[K]) {
  typedef typename cis_col_pair<CE>::quad quad_t;
#pragma unroll 2
  for (int64_t p = (p0 & ~(int64_t)3) + 4 * lane; p < p1; p += 4 * W) {
    quad_t c = __ldcs(reinterpret_cast<const quad_t *>(m.col + p));
    ushort4 q = __ldcs(reinterpret_cast<const ushort4 *>(m.code + p));
    if (p >= p0) cis_fma_x<K>(acc, cis_decode(m.table, q.x), xt, (int)c.x);
    if (p + 1 >= p0 && p + 1 < p1) cis_fma_x<K>(acc, cis_decode(m.table, q.y), xt, (int)c.y);
    if (p + 2 >= p0 && p + 2 < p1) cis_fma_x<K>(acc, cis_decode(m.table, q.z), xt, (int)c.z);
    if (p + 3 < p1) cis_fma_x<K>(acc, cis_decode(m.table, q.w), xt, (int)c.w);
  }
}

/* Sum over the W lanes of a sub-warp, then lane j % W stores (or adds) vector j's result. */
template <int W, int K, bool ADD>
__device__ __forceinline__ void cis_row_store(double (&acc)[K], int lane, bool active,
                                              int64_t row, double *__restrict__ Y,
                                              int64_t ldy) {
#pragma unroll
  for (int off = W / 2; off > 0; off >>= 1)
#pragma unroll
    for (int j = 0; j < K; j++) acc[j] += __shfl_xor_sync(0xffffffffu, acc[j], off, W);
  if (!active) return;
#pragma unroll
  for (int j = 0; j < K; j++)
    if (lane == j % W) {
      double *y = Y + row + (int64_t)j * ldy;
      *y = ADD ? *y + acc[j] : acc[j];
    }
}

/* Eight vectors with plain values (cis_hyb_kernel): CIS_COOP_G(K) = K / 2 lanes per entry, each
 * loading two of its K values of x (one double2) and keeping two sums. A warp's load of x then
 * touches 32 / G entries' lines, where a lane per entry, loading all K, touched 32 lines per load
 * and made K / 2 loads: on H2O/6-31G CISDT the eight-vector product was bound by L1 (93% of its
 * throughput, H100) and took 11.0 us a vector, 10.0 this way. Four vectors (14.6 us against
 * 11.5) and coded values (12.2 against 11.4 at k = 8) were slower: each of the G lanes loads the
 * entry's column and value (docs/design-notes.md). The sub-warp's W / G groups take a part's
 * entries in turn, 4 at a time, every load issued before the gathers. The part's entries are
 * val[p0..p1) and col[p0..p1). */
#define CIS_COOP_G(K) ((K) / 2)
template <int W, int K, typename C>
__device__ __forceinline__ void cis_coop_part(int64_t p0, int64_t p1, int lane,
                                              const double *__restrict__ val,
                                              const C *__restrict__ col,
                                              const double *__restrict__ xt, double (&acc)[2]) {
  constexpr int G = CIS_COOP_G(K), E = W / G;
  static_assert(W >= G, "a sub-warp narrower than the lanes of one entry");
  const int sub = lane / G, part = lane % G;
  for (int64_t p = p0 + sub; p < p1; p += 4 * E) {
    double v[4];
    int c[4];
#pragma unroll
    for (int u = 0; u < 4; u++) {
      v[u] = 0.0;
      c[u] = 0;
      if (p + u * E < p1) {
        v[u] = __ldcs(val + p + u * E);
        c[u] = (int)__ldcs(col + p + u * E);
      }
    }
#pragma unroll
    for (int u = 0; u < 4; u++)
      if (p + u * E < p1) {
        double2 xv = __ldg(reinterpret_cast<const double2 *>(xt + (int64_t)c[u] * K) + part);
        acc[0] += v[u] * xv.x;
        acc[1] += v[u] * xv.y;
      }
  }
}

/* Sum each pair over the sub-warp's groups; then lane j < G stores (or adds) vectors 2j and
 * 2j + 1. */
template <int W, int K>
__device__ __forceinline__ void cis_coop_store(double (&acc)[2], int lane, bool active,
                                               int64_t row, double *__restrict__ Y, int64_t ldy) {
  constexpr int G = CIS_COOP_G(K);
#pragma unroll
  for (int off = W / 2; off >= G; off >>= 1) {
    acc[0] += __shfl_xor_sync(0xffffffffu, acc[0], off, W);
    acc[1] += __shfl_xor_sync(0xffffffffu, acc[1], off, W);
  }
  if (!active || lane >= G) return;
  Y[row + (int64_t)(2 * lane) * ldy] = acc[0];
  Y[row + (int64_t)(2 * lane + 1) * ldy] = acc[1];
}

/* Threads a multiprocessor holds: 2048 on sm_80 and sm_90, fewer on sm_75, sm_86/87/89 and
 * sm_120, where build 1 of cis_hyb_kernel asks for as many as there are. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 750
#define CIS_SM_THREADS 1024
#elif defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 870 || \
                                 __CUDA_ARCH__ == 890 || __CUDA_ARCH__ == 1200)
#define CIS_SM_THREADS 1536
#else
#define CIS_SM_THREADS 2048
#endif

/* Y = (ELL + resident CSR) X: every row of Y written once; CODED: the resident CSR has a coded
 * part too. Blocks of any size up to the bound (a multiple of W). OCC (plain values, k = 1)
 * picks the register budget: 0 leaves it to ptxas (40 registers, 48 warps per multiprocessor
 * on sm_90), 1 asks for 8 blocks of 256 threads per multiprocessor (32 registers, 64 warps), 2
 * for one block (52 registers, 32 warps). Which is fastest depends on the matrix; the upload
 * times them (cis_hyb_cuda_info.tune_ms). Builds 0 and 2 load the row's offsets (ELL and CSR)
 * before its entries: 3% faster on H2O CISDT, 2% on FCI (H200, docs/BENCHMARKS.md). Build 1
 * would spill at 32 registers, the coded kernel would take 40 registers instead of 32 (3.78 ms
 * against 2.94 on FCI: half the resident blocks of 1024 threads), and the plain k = 4 product
 * was 1.7% slower on FCI: those load each part's offsets when it starts. */
template <int W, int K, typename CI, typename CE, bool CODED, int OCC>
__global__ void __launch_bounds__(CODED ? CIS_CODED_BLOCK : CIS_HYB_BLOCK,
                                  OCC == 1 ? CIS_SM_THREADS / CIS_HYB_BLOCK : (OCC == 2 ? 1 : 0))
    cis_hyb_kernel(cis_ell_view<CI> e, cis_csr_view<CE> m, cis_coded_view<CE> cm,
                   const double *__restrict__ xt, double *__restrict__ Y, int64_t ldy) {
  int64_t row = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / W;
  int lane = threadIdx.x % W;
  bool active = row < e.nrows;
  if constexpr (K == 8 && !CODED) {
    /* G lanes per entry (cis_coop_part): the row's ELL part, then its Expansion part */
    double acc[2] = {0.0, 0.0};
    if (active) {
      const int64_t q0 = e.start(row);
      cis_grid_wait();
      cis_coop_part<W, K>(q0, q0 + e.row_len[row], lane, e.val, e.col, xt, acc);
      cis_coop_part<W, K>(m.rowptr[row], m.rowptr[row + 1], lane, m.val, m.col, xt, acc);
    }
    cis_coop_store<W, K>(acc, lane, active, row, Y, ldy);
  } else {
    double acc[K];
#pragma unroll
    for (int j = 0; j < K; j++) acc[j] = 0.0;
    if (active) {
      const int64_t q0 = e.start(row);
      const int len = e.row_len[row];
      if constexpr (K == 1 && !CODED && OCC != 1) {
        int64_t p0 = m.rowptr[row], p1 = m.rowptr[row + 1];
        cis_ell_row<W, K, CI>(e, q0, len, lane, xt, acc);
        cis_csr_row<W, K, CE>(m, p0, p1, lane, xt, acc);
      } else {
        if constexpr (K > 1) cis_grid_wait();
        cis_ell_row<W, K, CI>(e, q0, len, lane, xt, acc);
        if constexpr (CODED)
          cis_coded_row<W, K, CE>(cm, cm.rowptr[row], cm.rowptr[row + 1], lane, xt, acc);
        cis_csr_row<W, K, CE>(m, m.rowptr[row], m.rowptr[row + 1], lane, xt, acc);
      }
    }
    cis_row_store<W, K, false>(acc, lane, active, row, Y, ldy);
  }
}

/* The Reference region in column tiles (spmv/hyb.h, cis_ell_tile_offsets): one block per group
 * of CIS_TILE_ROWS rows. The block's warps take the tiles in step (a barrier between tiles):
 * CIS_TILE_LANES lanes per row add the row's entries of the tile into the row's partial sum in
 * shared memory. The rows' Expansion parts follow at W lanes per row, as in cis_hyb_kernel, and y
 * is written once. A block's gathers of x then stay within one tile's slice (16 KB) at a time,
 * which L1 keeps, where a Reference slice larger than L1 sent one 32-byte L2 sector per entry.
 * (Copying the tile's slice into shared memory first was slower for one vector: 5.63 ms against
 * 5.34 on the 1M-row matrix, H100, docs/design-notes.md.) */
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
      if constexpr (CODED) cis_coded_row<W, K, CE>(cm, cm.rowptr[row], cm.rowptr[row + 1], lane, xt, acc);
      cis_csr_row<W, K, CE>(m, m.rowptr[row], m.rowptr[row + 1], lane, xt, acc);
    }
    cis_row_store<W, K, false>(acc, lane, active, row, Y, ldy);
  }
}

/* The whole resident matrix as SELL-32 (docs/gpu.md, "A lane per row"): slices of 32 rows,
 * column-major within a slice, so that entry t of the slice's 32 rows is one coalesced load;
 * a thread per row. A block's 1024 rows go through their entries roughly in step (a barrier
 * every SYNC entries, or none): with the columns of each row in order, the block's gathers of x
 * fall at any time in a narrow band of columns, which L1 keeps; in a CI matrix the t-th entries
 * of neighbouring rows are the same excitation of neighbouring determinants, and gather
 * neighbouring parts of x. On the paper's 1M-row matrix (H100) the product took 4.72 ms against
 * 5.32 for our hybrid kernel with the Reference region in column tiles, and four vectors 1.53
 * ms a vector against 2.58 (docs/BENCHMARKS.md). */
#define CIS_SELL_BLOCK 1024

struct cis_sell_view {
  int64_t nrows;
  const int64_t *ptr;   /* slices + 1: entry t of row 32 s + l at ptr[s] + 32 t + l */
  const int32_t *len;   /* nrows: the row's entries */
  const int32_t *width; /* per block of CIS_SELL_BLOCK rows: its longest row */
  const int32_t *col;
  const double *val;
  /* coded values (table != NULL): each row's entries whose value is in the dictionary, in a
   * second SELL-32 of the same shape with a 16-bit code (as in cis_coded_view) for a value;
   * the ones above are the others */
  const int64_t *cptr;
  const int32_t *clen, *cwidth, *ccol;
  const uint16_t *ccode;
  const double *table;
  int ntable;
};

/* Entries per thread and step and the blocks per multiprocessor the registers are sized for:
 * 4 a step, one block of 1024 threads. On an H100 one vector took the 1M-row matrix in 4.71 ms,
 * against 4.77 with two blocks; four vectors 1.58 ms a vector on it, 1.51 on H2O/6-31G FCI with
 * plain values and 1.59 with coded ones, against 1.82, 1.73 and 1.55 with 2 a step and two
 * blocks (a barrier every 8 entries), and 8 a step was slower on coded FCI (3.06 ms against 3.00
 * for one vector). The barrier's period depends on the matrix: every 32 entries, the 1M-row
 * matrix took 4.72 ms against 4.74 every 64 and 4.97 with none; coded FCI 2.93 ms against 2.89
 * every 64, 2.86 every 128 and 2.81 with none (four vectors 1.52, 1.48, 1.45 and 1.41 ms a
 * vector). So the kernel is built with a barrier every 32 entries and with none, and the upload
 * keeps the faster (docs/BENCHMARKS.md). */
#define CIS_SELL_SYNC 32
#define CIS_SELL_STEP 4

/* A row's entries of one SELL-32 part, `len` of the block's `steps` (its longest row), U a step
 * with a barrier every SYNC (0: none): columns at col[32 t], values (V: double, or a 16-bit code) at
 * val[32 t], each turned into its double by value(). */
template <int K, int U, int SYNC, typename V, typename F>
__device__ __forceinline__ void cis_sell_part(const int32_t *col, const V *val, int len,
                                              int steps, F value,
                                              const double *__restrict__ xt, double (&acc)[K]) {
  for (int t = 0; t < steps; t += U) {
    if constexpr (SYNC > 0)
      if (t % SYNC == 0) __syncthreads(); /* steps is the block's: every thread gets here */
    int c[U];
    V v[U];
#pragma unroll
    for (int u = 0; u < U; u++) {
      const bool in = t + u < len;
      c[u] = in ? __ldcs(col + (int64_t)(t + u) * 32) : 0;
      v[u] = in ? __ldcs(val + (int64_t)(t + u) * 32) : V(0);
    }
#pragma unroll
    for (int u = 0; u < U; u++)
      if (t + u < len) cis_fma_x<K>(acc, value(v[u]), xt, c[u]);
  }
}

/* SYNC: a barrier every SYNC entries, or none (0); the upload times both (hyb_cuda.cu,
 * tune_launch). */
template <int K, bool CODED, int SYNC>
__global__ void __launch_bounds__(CIS_SELL_BLOCK, 1)
    cis_sell_kernel(cis_sell_view s, const double *__restrict__ xt, double *__restrict__ Y,
                    int64_t ldy) {
  constexpr int U = CIS_SELL_STEP;
  const int64_t row = (int64_t)blockIdx.x * CIS_SELL_BLOCK + threadIdx.x;
  const bool active = row < s.nrows;
  double acc[K];
#pragma unroll
  for (int j = 0; j < K; j++) acc[j] = 0.0;
  /* One vector: the value table in shared memory (ntable entries, 32 KB at most), read before
   * the first barrier: 2.99 ms against 3.12 through L1 on H2O/6-31G FCI (H100). Several: through
   * L1, 1.65 ms a vector at k = 4 against 1.79 from shared memory, where it takes L1's room. */
  constexpr bool SHARED_TABLE = CODED && K == 1;
  extern __shared__ double cis_sell_table[];
  if constexpr (SHARED_TABLE)
    for (int i = threadIdx.x; i < s.ntable; i += CIS_SELL_BLOCK) cis_sell_table[i] = s.table[i];
  if constexpr (K > 1) cis_grid_wait();
  if constexpr (CODED) {
    const int32_t *col = s.ccol + (active ? s.cptr[row >> 5] + (row & 31) : 0);
    const double *table = s.table;
    cis_sell_part<K, U, SYNC>(
        col, s.ccode + (col - s.ccol), active ? s.clen[row] : 0, s.cwidth[blockIdx.x],
        [table](unsigned short q) {
          return SHARED_TABLE ? cis_apply_sign(cis_sell_table[q & 0x7FFFu], q)
                              : cis_decode(table, q);
        },
        xt, acc);
  }
  const int32_t *col = s.col + (active ? s.ptr[row >> 5] + (row & 31) : 0);
  cis_sell_part<K, U, SYNC>(col, s.val + (col - s.col), active ? s.len[row] : 0,
                            s.width[blockIdx.x], [](double v) { return v; }, xt, acc);
  if (active)
#pragma unroll
    for (int j = 0; j < K; j++) Y[row + (int64_t)j * ldy] = acc[j];
}

/* A small matrix split by columns over the blocks of a thread-block cluster (spmv/split.h,
 * docs/gpu.md): block (g, h) of cluster g takes the entries of group g's rows whose columns lie
 * in part h, with that part of x, the value table and its escaped values copied into shared
 * memory (asynchronously, all at once), and goes through its stream of 4-byte words, each
 * thread its run of the stream. A row ends in one thread's run, which stores the row's sum
 * into the block's row sums in shared memory, and after a barrier adds the sums of the runs it
 * went through before, in their order. The cluster then
 * adds its blocks' row sums through distributed shared memory and writes y once. No row
 * offsets are read, every thread of a block has the same work, and the gathers of x and of the
 * values are from shared memory. On an H100, H2O/6-31G CISDT took 20.7 us against 28.3 for our
 * hybrid kernel and 31.9 for cuSPARSE's CSR ALG1 (docs/design-notes.md). Needs sm_90 (clusters);
 * one vector. */
struct cis_split_view {
  const cis_split_blk *blk;
  const uint32_t *first;
  const uint4 *w;
  const double *esc;
  const double *table;
  int ntab1, xw, maxesc; /* shared memory: xw doubles of x, the table, the block's escaped
                          * values (maxesc at most), then its row sums (cis_split_shared) */
};

/* One 16-byte step of a thread's run: the shared-memory gathers of its 4 words first (x, and
 * the value from the table or the escaped ones), then the sums row by row. (Word by word, a
 * row's store kept the next word's gathers behind it: they might alias.) */
__device__ __forceinline__ void cis_split_step(const uint4 &q, const double *xs,
                                               const double *tab, const double *&ep,
                                               double &acc, int &row, double *yp) {
  const unsigned wd[4] = {q.x, q.y, q.z, q.w};
  double xv[4], vv[4];
#pragma unroll
  for (int k = 0; k < 4; k++) {
    const unsigned c = wd[k] >> 16, idx = c & 0x7FFFu;
    /* one shared load for either kind of value (an escaped one has no sign bit in its code) */
    const bool e = idx == CIS_SPLIT_ESC;
    vv[k] = cis_apply_sign(*(e ? ep : tab + idx), c);
    ep += e;
    xv[k] = xs[wd[k] & 0x3FFFu];
  }
#pragma unroll
  for (int k = 0; k < 4; k++) {
    acc = fma(vv[k], xv[k], acc);
    if (wd[k] & CIS_SPLIT_END) { /* the one thread where the row ends: a plain store */
      yp[row] = acc;
      acc = 0.0;
      row++;
    }
  }
}

/* 16-byte words a thread loads a step ahead of their use: 2 (8 entries) */
#define CIS_SPLIT_U 2

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
/* clusters need sm_90: built empty below it (the upload never launches it there) */
__global__ void __launch_bounds__(CIS_SPLIT_T, 1)
    cis_split_kernel(cis_split_view, const double *__restrict__, double *__restrict__) {}
#else
__global__ void __launch_bounds__(CIS_SPLIT_T, 1)
    cis_split_kernel(cis_split_view v, const double *__restrict__ x, double *__restrict__ y) {
  namespace cg = cooperative_groups;
  extern __shared__ double cis_split_sh[];
  cg::cluster_group cl = cg::this_cluster();
  const int h = (int)cl.block_rank(), P = (int)cl.num_blocks();
  const int t = threadIdx.x;
  const cis_split_blk B = v.blk[blockIdx.x];
  double *xs = cis_split_sh, *tab = xs + v.xw, *es = tab + v.ntab1;
  double *yp = cis_split_sh + cis_split_front(v.xw, v.ntab1, v.maxesc);
  const uint4 *wp = v.w + B.base + t;
  uint4 q[CIS_SPLIT_U];
#pragma unroll
  for (int u = 0; u < CIS_SPLIT_U; u++)
    q[u] = u < B.steps ? __ldcs(wp + (int64_t)u * CIS_SPLIT_T) : make_uint4(0, 0, 0, 0);
  const uint32_t first = __ldcs(v.first + (int64_t)blockIdx.x * CIS_SPLIT_T + t);
  for (int i = t; i < B.cw; i += CIS_SPLIT_T) __pipeline_memcpy_async(xs + i, x + B.c0 + i, 8);
  for (int i = t; i < v.ntab1; i += CIS_SPLIT_T) __pipeline_memcpy_async(tab + i, v.table + i, 8);
  for (int i = t; i < B.ne; i += CIS_SPLIT_T) __pipeline_memcpy_async(es + i, v.esc + B.e0 + i, 8);
  __pipeline_commit();
  const int first_row = (int)(first & 0xFFFFu);
  int row = first_row;
  const double *ep = es + (first >> 16);
  double acc = 0.0;
  __pipeline_wait_prior(0);
  __syncthreads();
  for (int s = 0; s < B.steps; s += CIS_SPLIT_U) {
    uint4 nq[CIS_SPLIT_U];
#pragma unroll
    for (int u = 0; u < CIS_SPLIT_U; u++)
      nq[u] = s + CIS_SPLIT_U + u < B.steps
                  ? __ldcs(wp + (int64_t)(s + CIS_SPLIT_U + u) * CIS_SPLIT_T)
                  : q[u];
#pragma unroll
    for (int u = 0; u < CIS_SPLIT_U; u++)
      if (s + u < B.steps) cis_split_step(q[u], xs, tab, ep, acc, row, yp);
#pragma unroll
    for (int u = 0; u < CIS_SPLIT_U; u++) q[u] = nq[u];
  }
  /* The row each run stopped in, unfinished, is finished by the thread where it ends, which
   * adds the runs' sums in a fixed order (deterministic, unlike atomic adds): in the shared
   * memory of x, the table and the escaped values, done with after the barrier. */
  __syncthreads();
  double *carry = cis_split_sh;
  int *carry_row = reinterpret_cast<int *>(carry + CIS_SPLIT_T);
  carry[t] = acc;
  carry_row[t] = row < B.nr ? row : -1;
  __syncthreads();
  if (row > first_row && t > 0 && carry_row[t - 1] == first_row) {
    double sum = 0.0;
    for (int u = t - 1; u >= 0 && carry_row[u] == first_row; u--) sum += carry[u];
    yp[first_row] += sum;
  }
  cl.sync();
  for (int l = h + P * t; l < B.nr; l += P * CIS_SPLIT_T) {
    double part[CIS_SPLIT_MAXP];
#pragma unroll
    for (int r = 0; r < CIS_SPLIT_MAXP; r++) part[r] = r < P ? cl.map_shared_rank(yp, r)[l] : 0.0;
    double sum = 0.0;
#pragma unroll
    for (int r = 0; r < CIS_SPLIT_MAXP; r++) sum += part[r];
    y[B.r0 + l] = sum;
  }
  cl.sync(); /* the others' row sums are read before any block leaves */
}
#endif

/* The SELL-32 copy of row r's entries, its ELL part then its resident Expansion part, both in
 * the row's own order (an upload without lane order), and its coded part into the coded SELL-32
 * (cm.table != NULL): a thread per row. A row's Expansion entries are read from where
 * m.rowptr[r] and cm.rowptr[r] say it starts, as many as the SELL-32 row lengths leave: the
 * rows need not be consecutive (the build's pool stores blocks in the order they came). */
template <typename CI, typename CE>
__global__ void cis_sell_fill_kernel(cis_ell_view<CI> e, cis_csr_view<CE> m, cis_coded_view<CE> cm,
                                     int64_t nrows, cis_sell_view sv, int32_t *__restrict__ col,
                                     double *__restrict__ val, int32_t *__restrict__ ccol,
                                     uint16_t *__restrict__ ccode) {
  const int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= nrows) return;
  if (cm.table) {
    const int64_t cb = sv.cptr[r >> 5] + (r & 31), p0 = cm.rowptr[r];
    for (int64_t t = 0; t < sv.clen[r]; t++) {
      ccol[cb + 32 * t] = (int32_t)cm.col[p0 + t];
      ccode[cb + 32 * t] = cm.code[p0 + t];
    }
  }
  const int64_t base = sv.ptr[r >> 5] + (r & 31), q0 = e.start(r), p0 = m.rowptr[r];
  int64_t t = 0;
  for (int i = 0; i < e.row_len[r]; i++, t++) {
    col[base + 32 * t] = (int32_t)e.col[q0 + i];
    val[base + 32 * t] = e.val[q0 + i];
  }
  for (int64_t p = p0; t < sv.len[r]; p++, t++) {
    col[base + 32 * t] = (int32_t)m.col[p];
    val[base + 32 * t] = m.val[p];
  }
}

/* Y[rows of m] += m X: a streamed Expansion block (32-bit columns). */
template <int W, int K>
__global__ void __launch_bounds__(CIS_HYB_BLOCK)
    cis_csr_add_kernel(cis_csr_view<int32_t> m, const double *__restrict__ xt,
                       double *__restrict__ Y, int64_t ldy) {
  int64_t local = ((int64_t)blockIdx.x * CIS_HYB_BLOCK + threadIdx.x) / W;
  int lane = threadIdx.x % W;
  bool active = local < m.nrows;
  double acc[K];
#pragma unroll
  for (int j = 0; j < K; j++) acc[j] = 0.0;
  if (active) cis_csr_row<W, K, int32_t>(m, m.rowptr[local], m.rowptr[local + 1], lane, xt, acc);
  cis_row_store<W, K, true>(acc, lane, active, m.row0 + local, Y, ldy);
}

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

/* Row r's Expansion entries from the build's pool (spmv/hyb_cuda.cu: its plain entries from
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

/* c32[i] = c16[i]: the 32-bit columns the paper's kernel reads, from our 16-bit ones. */
__global__ void cis_widen_kernel(const uint16_t *__restrict__ c16, int64_t m,
                                 int32_t *__restrict__ c32) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < m) c32[i] = (int32_t)c16[i];
}

/* Xt (n x k, row-major) = X (n x k, column-major, ld ldx). */
__global__ void cis_interleave_kernel(const double *__restrict__ X, int64_t ldx, int64_t n,
                                      int k, double *__restrict__ Xt) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  cis_grid_release();
  if (i >= n) return;
  for (int j = 0; j < k; j++) Xt[i * k + j] = X[i + (int64_t)j * ldx];
}

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

#endif
