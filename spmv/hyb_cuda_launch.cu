/* cisolve: which kernel a product launches (the layout, the vectors at once, the lanes per row,
 * the column widths, the build), the timing of the candidate launches at upload, and the
 * products: the resident part, then the streamed batches added on top. */
#include <math.h>

#include "spmv/hyb_cuda_private.cuh"
#include "spmv/hyb_kernels_hybrid.cuh"
#include "spmv/hyb_kernels_tiled.cuh"

/* Blocks of `block` threads for `rows` rows at w lanes per row. */
static unsigned grid_for(int64_t rows, int w, int block) {
  return (unsigned)((rows * w + block - 1) / block);
}

/* Launch a product kernel on d->stream. One of several vectors (K > 1) always follows the
 * kernel that interleaves X (apply_group), and starts as its programmatic dependent where the
 * kernels wait for it (d->tune.pdl): its blocks load their rows' offsets while the interleave
 * finishes (hyb_kernels.cuh, cis_grid_wait). Errors reach cudaGetLastError like those of a
 * <<<>>> launch. */
template <int K, typename... P, typename... A>
static void launch_kernel(cis_hyb_cuda *d, void (*kern)(P...), unsigned grid, unsigned block,
                          size_t sh, A... args) {
  cudaLaunchAttribute at;
  at.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(grid);
  cfg.blockDim = dim3(block);
  cfg.dynamicSmemBytes = sh;
  cfg.stream = d->stream;
  cfg.attrs = &at;
  cfg.numAttrs = K > 1 && d->tune.pdl ? 1 : 0;
  (void)cudaLaunchKernelEx(&cfg, kern, args...);
}

/* Warps per multiprocessor of `kern` in blocks of `block` threads with `sh` bytes of shared
 * memory, into d->tune.probe_warps where the launch is asked for it (the upload's timing). */
template <typename... P>
static void probe_warps(cis_hyb_cuda *d, void (*kern)(P...), int block, size_t sh) {
  if (!d->tune.probe_warps) return;
  int blocks = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kern, block, sh) != cudaSuccess)
    blocks = 0;
  d->tune.probe_warps = blocks * block / 32;
}

/* The hybrid kernel: ELL columns CI and Expansion columns CE, coded values or not, build OCC. */
template <int W, int K, typename CI, typename CE, bool CODED, int OCC>
static void launch_hybrid(cis_hyb_cuda *d, const double *xt, double *Y, int64_t ldy) {
  const int b = CODED ? d->tune.coded_block : CIS_HYB_BLOCK;
  probe_warps(d, cis_hyb_kernel<W, K, CI, CE, CODED, OCC>, b, 0);
  launch_kernel<K>(d, cis_hyb_kernel<W, K, CI, CE, CODED, OCC>, grid_for(d->n, W, b), b, 0,
                   ell_view<CI>(d, d->ell.col), resident_view<CE>(d, d->csr.col),
                   coded_view<CE>(d), xt, Y, ldy);
}

/* The tiled kernel: one block per group of rows, its shared memory sized for K vectors (within
 * the 48 KB a block gets without asking). */
static_assert(cis_tiled_shared(CIS_HYB_CUDA_MAX_K) <= 48 * 1024,
              "the tiled kernel's shared memory for CIS_HYB_CUDA_MAX_K vectors exceeds 48 KB");
template <int W, int K, typename CE, bool CODED>
static void launch_tiled(cis_hyb_cuda *d, const double *xt, double *Y, int64_t ldy) {
  const size_t sh = cis_tiled_shared(K);
  const cis_tiled_view tv = {d->n,          d->tiles.ntiles, d->tiles.base,
                             d->tiles.off,  d->tiles.col,    d->tiles.val};
  probe_warps(d, cis_tiled_kernel<W, K, CE, CODED>, CIS_TILE_BLOCK, sh);
  launch_kernel<K>(d, cis_tiled_kernel<W, K, CE, CODED>, (unsigned)d->tiles.ngroups,
                   CIS_TILE_BLOCK, sh, tv, resident_view<CE>(d, d->csr.col), coded_view<CE>(d),
                   xt, Y, ldy);
}

/* SELL-32: coded values or not, a barrier every CIS_SELL_SYNC entries or none
 * (d->tune.plain_launch), whatever K. */
template <int K>
static void launch_sell(cis_hyb_cuda *d, const double *xt, double *Y, int64_t ldy) {
  void (*kern)(cis_sell_view, const double *, double *, int64_t) =
      cis_sell_kernel_for<K>(d->sell.ccode != NULL, d->tune.plain_launch);
  const cis_sell_view v = hyb_sell_view(d);
  const size_t sh = K == 1 ? v.ntable * sizeof(double) : 0; /* the value table, k = 1 */
  probe_warps(d, kern, CIS_SELL_BLOCK, sh);
  launch_kernel<K>(d, kern, (unsigned)((d->n + CIS_SELL_BLOCK - 1) / CIS_SELL_BLOCK),
                   CIS_SELL_BLOCK, sh, v, xt, Y, ldy);
}

/* A streamed batch m added on top: Y[rows of m] += m X (32-bit columns). */
template <int W, int K>
static void launch_add(cis_hyb_cuda *d, cis_csr_view<int32_t> m, const double *xt, double *Y,
                       int64_t ldy) {
  cis_csr_add_kernel<W, K><<<grid_for(m.nrows, W, CIS_HYB_BLOCK), CIS_HYB_BLOCK, 0,
                             d->stream>>>(m, xt, Y, ldy);
}

/* The launch for K vectors at W lanes per row, one line per case: what the upload chose (the
 * layout, the column widths, coded values or plain) and, for one vector with plain values in
 * the hybrid layout, the build the upload timed fastest (d->tune.plain_launch; hyb_kernels_
 * hybrid.cuh, OCC). Builds 1 and 2 exist only for K = 1. */
template <int W, int K>
static cis_err launch_wk(cis_hyb_cuda *d, const cis_csr_view<int32_t> *add, const double *xt,
                         double *Y, int64_t ldy) {
  typedef uint16_t u16;
  typedef int32_t i32;
  const bool c16 = d->csr.bits == 16, e16 = d->ell.bits == 16, coded = d->coded.table != NULL;
  const int occ = K == 1 && !coded ? d->tune.plain_launch : 0;
  if (add ? add->nrows == 0 : d->n == 0) return CIS_OK;
  if (add)                                 launch_add<W, K>(d, *add, xt, Y, ldy);
  else if (d->sell.on)                     launch_sell<K>(d, xt, Y, ldy);
  else if (d->tiles.on && c16 && coded)    launch_tiled<W, K, u16, true>(d, xt, Y, ldy);
  else if (d->tiles.on && c16)             launch_tiled<W, K, u16, false>(d, xt, Y, ldy);
  else if (d->tiles.on && coded)           launch_tiled<W, K, i32, true>(d, xt, Y, ldy);
  else if (d->tiles.on)                    launch_tiled<W, K, i32, false>(d, xt, Y, ldy);
  else if (c16 && coded)                   launch_hybrid<W, K, u16, u16, true, 0>(d, xt, Y, ldy);
  else if (e16 && coded)                   launch_hybrid<W, K, u16, i32, true, 0>(d, xt, Y, ldy);
  else if (coded)                          launch_hybrid<W, K, i32, i32, true, 0>(d, xt, Y, ldy);
  else if (c16 && occ == 0)                launch_hybrid<W, K, u16, u16, false, 0>(d, xt, Y, ldy);
  else if (e16 && occ == 0)                launch_hybrid<W, K, u16, i32, false, 0>(d, xt, Y, ldy);
  else if (occ == 0)                       launch_hybrid<W, K, i32, i32, false, 0>(d, xt, Y, ldy);
  else if constexpr (K == 1) {
    if (c16 && occ == 1)                   launch_hybrid<W, 1, u16, u16, false, 1>(d, xt, Y, ldy);
    else if (c16)                          launch_hybrid<W, 1, u16, u16, false, 2>(d, xt, Y, ldy);
    else if (e16 && occ == 1)              launch_hybrid<W, 1, u16, i32, false, 1>(d, xt, Y, ldy);
    else if (e16)                          launch_hybrid<W, 1, u16, i32, false, 2>(d, xt, Y, ldy);
    else if (occ == 1)                     launch_hybrid<W, 1, i32, i32, false, 1>(d, xt, Y, ldy);
    else                                   launch_hybrid<W, 1, i32, i32, false, 2>(d, xt, Y, ldy);
  }
  CIS_CUDA(cudaGetLastError());
  return CIS_OK;
}

/* The sub-warp width, then the vectors at once, as template arguments. */
template <int K>
static cis_err launch_k(cis_hyb_cuda *d, const cis_csr_view<int32_t> *add, const double *xt,
                        double *Y, int64_t ldy) {
  switch (d->tune.subwarp) {
    case 4: return launch_wk<4, K>(d, add, xt, Y, ldy);
    case 8: return launch_wk<8, K>(d, add, xt, Y, ldy);
    case 16: return launch_wk<16, K>(d, add, xt, Y, ldy);
    case 32: return launch_wk<32, K>(d, add, xt, Y, ldy);
  }
  CIS_ERROR(CIS_ERR_INTERNAL, "no kernel for a sub-warp of %d lanes", d->tune.subwarp);
}

cis_err hyb_launch(cis_hyb_cuda *d, int k, const cis_csr_view<int32_t> *add, const double *xt,
                   double *Y, int64_t ldy) {
  switch (k) {
    case 1: return launch_k<1>(d, add, xt, Y, ldy);
    case 2: return launch_k<2>(d, add, xt, Y, ldy);
    case 3: return launch_k<3>(d, add, xt, Y, ldy);
    case 4: return launch_k<4>(d, add, xt, Y, ldy);
    case 5: return launch_k<5>(d, add, xt, Y, ldy);
    case 6: return launch_k<6>(d, add, xt, Y, ldy);
    case 7: return launch_k<7>(d, add, xt, Y, ldy);
    case 8: return launch_k<8>(d, add, xt, Y, ldy);
  }
  CIS_ERROR(CIS_ERR_INTERNAL, "no kernel for %d vectors at once", k);
}

/* griddepcontrol is in the kernels only where their PTX is for sm_90 or later (a binary built
 * for an older architecture and run here JIT-compiles older PTX). */
cis_err hyb_launch_init(cis_hyb_cuda *d) {
  cudaFuncAttributes fa;
  CIS_CUDA(cudaFuncGetAttributes(&fa, cis_interleave_kernel));
  d->tune.pdl = fa.ptxVersion >= 90;
  return CIS_OK;
}

/* Candidate c of the single-vector launch: plain values, the kernel's build c (OCC in
 * hyb_kernels_hybrid.cuh); coded values, blocks of 1024 (c = 0) or 256 threads; SELL-32, a barrier
 * every CIS_SELL_SYNC entries (c = 0) or none, whose choice serves several vectors too; tiled,
 * the one launch (timed all the same, for the report). */
static int ncandidates(const cis_hyb_cuda *d) {
  return d->tiles.on ? 1 : d->sell.on || d->coded.table ? 2 : CIS_HYB_CUDA_PLAIN_LAUNCHES;
}

static void set_candidate(cis_hyb_cuda *d, int c) {
  if (d->tiles.on) return;
  if (d->coded.table && !d->sell.on)
    d->tune.coded_block = d->info.coded_block = c ? 256 : CIS_CODED_BLOCK;
  else
    d->tune.plain_launch = d->info.plain_launch = c;
}

/* Each matrix has its own fastest launch: more warps per multiprocessor win on some matrices
 * and lose on others, and so do smaller blocks of the coded kernel (docs/BENCHMARKS.md). So
 * every candidate is timed on the resident part of this matrix (x of zeros): each run once,
 * then up to three times in turn, and the smallest minimum kept (after one timed turn when its
 * best is already a fifth faster than every other: each turn costs a product per candidate). All compute the same products bit
 * for bit: the same rows on the same lanes, in the same order. */
/* One product of d->xt's first column into its second between the events ev[0] and ev[1], with
 * the launch chosen now; its time in *ms. */
static cis_err time_product(cis_hyb_cuda *d, cudaEvent_t *ev, float *ms) {
  CIS_CUDA(cudaEventRecord(ev[0], d->stream));
  CIS_CALL(hyb_launch(d, 1, NULL, d->xt, d->xt + d->n, d->n));
  CIS_CUDA(cudaEventRecord(ev[1], d->stream));
  CIS_CUDA(cudaEventSynchronize(ev[1]));
  CIS_CUDA(cudaEventElapsedTime(ms, ev[0], ev[1]));
  return CIS_OK;
}

/* Whether the fastest of nc times beats every other by a fifth (1 when there is no other). */
static int clear_winner(const double *t, int nc) {
  int b = 0;
  for (int c = 1; c < nc; c++)
    if (t[c] < t[b]) b = c;
  for (int c = 0; c < nc; c++)
    if (c != b && t[c] < 1.2 * t[b]) return 0;
  return 1;
}

cis_err hyb_tune_launch(cis_hyb_cuda *d) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  cudaEvent_t ev[2] = {NULL, NULL};
  double best[CIS_HYB_CUDA_PLAIN_LAUNCHES], t0 = cis_wtime();
  int nc = ncandidates(d), keep = 0;
  if (d->n == 0) return CIS_OK;
  for (int c = 0; c < nc; c++) best[c] = HUGE_VAL;
  for (int i = 0; i < 2; i++) CIS_CUDA_TRY(cudaEventCreate(&ev[i]));
  CIS_CUDA_TRY(cudaMemsetAsync(d->xt, 0, (size_t)d->n * 2 * sizeof(double), d->stream));
  for (int rep = 0; rep < 4; rep++) {
    for (int c = 0; c < nc; c++) {
      float ms = 0.f;
      set_candidate(d, c);
      d->tune.probe_warps = rep == 0;
      CIS_TRY(time_product(d, ev, &ms));
      if (rep == 0) d->info.tune_warps[c] = d->tune.probe_warps;
      if (rep > 0) best[c] = CIS_MIN(best[c], (double)ms);
    }
    if (rep > 0 && clear_winner(best, nc)) break;
  }
  for (int c = 0; c < nc; c++) {
    d->info.tune_ms[c] = best[c];
    if (best[c] < best[keep]) keep = c;
  }
  d->info.tune_candidates = nc;
  d->info.tune_kept = keep;
  set_candidate(d, keep);
  d->info.tune_seconds = cis_wtime() - t0;
cleanup:
  d->tune.probe_warps = 0;
  for (int i = 0; i < 2; i++)
    if (ev[i]) cudaEventDestroy(ev[i]);
  return err;
}

static double elapsed_s(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0.f;
  if (cudaEventElapsedTime(&ms, a, b) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0.0;
  }
  return 1e-3 * (double)ms;
}

/* After a timed pass: wait for its last kernel, then add up its events. */
static cis_err collect_times(cis_hyb_cuda *d, double t0) {
  CIS_CUDA(cudaStreamSynchronize(d->stream));
  d->timer.times.t_wall += cis_wtime() - t0;
  d->timer.times.t_kernel += elapsed_s(d->timer.ev[0], d->timer.ev[1]);
  if (d->gen) {
    if (d->st.nbatch) d->timer.times.t_devgen += elapsed_s(d->timer.ev[2], d->timer.ev[3]);
    return CIS_OK;
  }
  for (int64_t i = 0; i < d->st.nbatch; i++) {
    cudaEvent_t *e = d->timer.ev + 2 + 4 * i;
    d->timer.times.t_copy += elapsed_s(e[0], e[1]);
    d->timer.times.t_kernel += elapsed_s(e[2], e[3]);
  }
  return CIS_OK;
}

static cis_err apply_group(cis_hyb_cuda *d, int k, const double *X, double *Y, int multi) {
  const double *xt = X;
  double t0 = cis_wtime();
  if (d->timer.on) CIS_CUDA(cudaEventRecord(d->timer.ev[0], d->stream));
  if (multi || k > 1) {
    unsigned g = (unsigned)((d->n + 255) / 256);
    if (d->n) cis_interleave_kernel<<<g, 256, 0, d->stream>>>(X, d->n, d->n, k, d->xt);
    CIS_CUDA(cudaGetLastError());
    xt = d->xt;
  }
  CIS_CALL(hyb_launch(d, k, NULL, xt, Y, d->n));
  if (d->timer.on) CIS_CUDA(cudaEventRecord(d->timer.ev[1], d->stream));
  if (d->st.nblocks) CIS_CALL(hyb_apply_streamed(d, k, xt, Y, d->n));
  d->timer.times.passes++;
  if (d->timer.on) CIS_CALL(collect_times(d, t0));
  return CIS_OK;
}

cis_err hyb_apply_all(cis_hyb_cuda *d, int k, const double *X, double *Y, int multi) {
  CIS_CHECK(k >= 0, CIS_ERR_INTERNAL, "device product: %d vectors", k);
  for (int j = 0; j < k; j += d->tune.group) {
    int kc = CIS_MIN(d->tune.group, k - j);
    CIS_CALL(apply_group(d, kc, X + (int64_t)j * d->n, Y + (int64_t)j * d->n, multi));
  }
  return CIS_OK;
}

