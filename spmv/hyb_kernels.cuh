/* cisolve: what every layout's product kernel shares: the views of the device arrays and the
 * reads of a row's entries (docs/gpu.md). The kernels of each layout are in their own headers:
 * spmv/hyb_kernels_hybrid.cuh (sliced ELL + CSR, and the streamed blocks), _tiled.cuh (the
 * Reference region in column tiles), _sell.cuh (SELL-32), _pool.cuh (the build's pool).
 *
 * The hybrid kernel: one launch per product, a sub-warp of W lanes per row (W = 4..32, picked from
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

#include <cuda_runtime.h>
#include <stdint.h>

extern "C" {
#include "spmv/hyb_place.h"
}

#define CIS_HYB_BLOCK 256
/* Threads per block of the kernel with a coded part: 64 to 256 consecutive rows per block
 * share their gathers of x in one SM's L1 (rows with the same alpha string reach the same
 * columns), which made it faster than blocks of 256 (docs/BENCHMARKS.md). The plain kernel
 * keeps 256, which its sub-warp choice was measured with. */
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
 * interleaves X (hyb_cuda_launch.cu, launch_kernel): its blocks start, and load their rows' offsets,
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
 * hybrid kernel when every block loaded it (the gathers of x, not of the table, bound the
 * kernel), and slower with resident blocks striding over the rows (docs/BENCHMARKS.md); the
 * SELL-32 kernel reads it from shared memory for one vector. */
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

#endif
