/* cisolve: the kernels of the hybrid layout (a sliced ELL block + the resident CSR, plain or
 * coded): the product, the product of a streamed Expansion batch added on top, and the
 * interleave of X for products of several vectors. Include once per program (launch file):
 * cis_interleave_kernel is not a template. */
#ifndef CIS_HYB_KERNELS_HYBRID_CUH
#define CIS_HYB_KERNELS_HYBRID_CUH

#include "spmv/hyb_kernels.cuh"

/* Eight vectors with plain values (cis_hyb_kernel): CIS_COOP_G(K) = K / 2 lanes per entry, each
 * loading two of its K values of x (one double2) and keeping two sums. A warp's load of x then
 * touches 32 / G entries' lines, where a lane per entry, loading all K, touched 32 lines per load
 * and made K / 2 loads, which bound the eight-vector product by L1's throughput. Four vectors
 * and coded values were slower this way: each of the G lanes loads the entry's column and value
 * (docs/BENCHMARKS.md). The sub-warp's W / G groups take a part's
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
 * picks the register budget: 0 leaves it to ptxas, 1 asks for 8 blocks of 256 threads per
 * multiprocessor (the most warps), 2 for one block (the most registers). Which is fastest
 * depends on the matrix; the upload times them (cis_hyb_cuda_info.tune_ms). Builds 0 and 2
 * load the row's offsets (ELL and CSR) before its entries, which was faster (docs/BENCHMARKS.md).
 * Build 1 would spill at 32 registers, the coded kernel would take more registers (half the
 * resident blocks of 1024 threads), and the plain k = 4 product was slower that way: those load
 * each part's offsets when it starts. */
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

/* Xt (n x k, row-major) = X (n x k, column-major, ld ldx). */
__global__ void cis_interleave_kernel(const double *__restrict__ X, int64_t ldx, int64_t n,
                                      int k, double *__restrict__ Xt) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  cis_grid_release();
  if (i >= n) return;
  for (int j = 0; j < k; j++) Xt[i * k + j] = X[i + (int64_t)j * ldx];
}

#endif
