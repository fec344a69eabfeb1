/* cisolve: the kernels of the SELL-32 layout: its product, and its fill from the hybrid
 * upload. */
#ifndef CIS_HYB_KERNELS_SELL_CUH
#define CIS_HYB_KERNELS_SELL_CUH

#include "spmv/hyb_kernels.cuh"

/* The whole resident matrix as SELL-32 (docs/gpu.md, "A lane per row"): slices of 32 rows,
 * column-major within a slice, so that entry t of the slice's 32 rows is one coalesced load;
 * a thread per row. A block's 1024 rows go through their entries roughly in step (a barrier
 * every SYNC entries, or none): with the columns of each row in order, the block's gathers of x
 * fall at any time in a narrow band of columns, which L1 keeps; in a CI matrix the t-th entries
 * of neighbouring rows are the same excitation of neighbouring determinants, and gather
 * neighbouring parts of x (its measurements against the hybrid kernel: docs/BENCHMARKS.md). */
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
 * 4 a step, one block of 1024 threads, which beat 2 a step with two blocks and 8 a step. The
 * barrier's best period depends on the matrix (matrices with rows in column order gain from
 * it, coded CI matrices lose), so the kernel is built with a barrier every 32 entries and with
 * none, and the upload keeps the faster (docs/BENCHMARKS.md). */
#define CIS_SELL_SYNC 32
#define CIS_SELL_STEP 4

/* A row's entries of one SELL-32 part, `len` of the block's `steps` (its longest row), U a step
 * with a barrier every SYNC (0: none): columns at col[32 t], values (V: double, or a 16-bit code)
 * at val[32 t], each turned into its double by value(). */
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

/* SYNC: a barrier every SYNC entries, or none (0); the upload times both (hyb_cuda_launch.cu,
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
   * the first barrier, which was faster than through L1. Several: through L1, which was faster
   * than shared memory, where the table takes L1's room. */
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

/* The SELL-32 kernel for K vectors: with coded values or not, a barrier every CIS_SELL_SYNC
 * entries (launch 0) or none (launch 1). */
template <int K>
static inline void (*cis_sell_kernel_for(bool coded, int launch))(cis_sell_view, const double *,
                                                                  double *, int64_t) {
  if (coded) return launch ? cis_sell_kernel<K, true, 0> : cis_sell_kernel<K, true, CIS_SELL_SYNC>;
  return launch ? cis_sell_kernel<K, false, 0> : cis_sell_kernel<K, false, CIS_SELL_SYNC>;
}

#endif
