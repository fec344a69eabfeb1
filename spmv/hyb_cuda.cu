/* cisolve: the device matrix's public API (spmv/hyb_cuda.h): an upload's order of parts and its
 * budget, destroy, info and the setters; the parts are in spmv/hyb_cuda_*.cu (which file owns
 * what: spmv/hyb_cuda_private.cuh). */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "spmv/hyb_cuda_private.cuh"

static int pick_subwarp(const cis_hyb *h) {
  double avg = h->n ? (double)(h->ell.nnz + h->nnz_exp) / (double)h->n : 0.0;
  /* Two entries per lane per step: the smallest sub-warp that gives each lane about two steps
   * of work, at most 16 lanes (32 lanes gained nothing on long rows; docs/BENCHMARKS.md). */
  for (int w = 4; w < 16; w *= 2)
    if (4.0 * w >= avg) return w;
  return 16;
}

/* Vectors per pass of the multi-vector kernel, for a matrix of `bytes` on the device, every
 * block resident or not (`resident`), with n rows:
 *  - 8 (one pass) when the matrix fits the L2 cache: the matrix is read from L2 either way;
 *  - 8 also, every block resident, when the eight columns of X (n * 64 bytes) fit the L2 cache
 *    and eight plain vectors take four lanes an entry (`coop`: the untiled hybrid layout with
 *    plain values; cis_coop_part), or fit half of it and the Reference region is in column
 *    tiles with plain values (`tiled`; coded values were not measured there): the gathers of
 *    x then still hit L2;
 *  - else 4: two passes, each gathering four interleaved values of x per entry from a workspace
 *    half the size, which L2 keeps better than it loses by reading the matrix twice (SELL-32
 *    too). The measurements behind each case: docs/BENCHMARKS.md ("The group rule"). */
static int vectors_per_pass(int64_t bytes, int64_t l2, int resident, int coop, int tiled,
                            int64_t n) {
  const int64_t x8 = n * CIS_HYB_CUDA_MAX_K * 8;
  if (bytes <= l2) return CIS_HYB_CUDA_MAX_K;
  if (resident && ((coop && x8 <= l2) || (tiled && x8 <= l2 / 2))) return CIS_HYB_CUDA_MAX_K;
  return 4;
}

int64_t cis_hyb_cuda_min_bytes(const cis_hyb *h, int flags) {
  int tiled = hyb_tiled_layout(h, flags);
  int64_t b = tiled ? hyb_tiled_bytes(h) : hyb_sliced_bytes(&h->ell, hyb_index_bits(h, tiled));
  int64_t gen = 0; /* a matrix built on the GPU needs its generator to be placed */
  if (h->device_built && h->regen_dev && h->regen_dev(h->regen_dev_ctx, &gen, NULL, NULL) != CIS_OK)
    cis_error_clear();
  return cis_place_min_bytes(h->n, b, hyb_csr_bits(h, tiled)) + CIS_MAX(gen, (int64_t)0);
}

cis_err hyb_dev_alloc(void *pp, size_t bytes, const char *what) {
  void **p = (void **)pp;
  cudaError_t e = cudaMalloc(p, bytes ? bytes : 16);
  if (e != cudaSuccess) {
    char buf[32];
    *p = NULL;
    CIS_ERROR(cis_cuda_code(e), "cudaMalloc of %s (%s): %s (%s)", what,
              cis_format_bytes((double)bytes, buf, sizeof buf), cudaGetErrorName(e),
              cudaGetErrorString(e));
  }
  return CIS_OK;
}

void hyb_dev_free(void *pp) {
  void **p = (void **)pp;
  if (*p) cudaFree(*p);
  *p = NULL;
}

/* The current device's L2 cache, in bytes. */
cis_err hyb_device_l2(int64_t *bytes) {
  int dev = 0, l2 = 0;
  CIS_CUDA(cudaGetDevice(&dev));
  CIS_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  *bytes = l2;
  return CIS_OK;
}

/* The budget applied: the caller's, never more than 95% of the free memory less `reserve`;
 * `avail` is what is left for cached Expansion blocks. */
static cis_err check_budget(cis_hyb_cuda *d, int64_t budget, int64_t reserve, int flags,
                            int64_t *avail) {
  const cis_hyb *h = d->h;
  char b1[32], b2[32], b3[32], b4[32];
  size_t free_b = 0, total_b = 0;
  CIS_CUDA(cudaMemGetInfo(&free_b, &total_b));
  /* the build's pool holds Expansion blocks for this upload: its memory is the matrix's */
  free_b += (size_t)hyb_pool_device_bytes(hyb_pool_of(h));
  int64_t need = cis_hyb_cuda_min_bytes(h, flags);
  if (budget > 0 && need > budget)
    CIS_ERROR(CIS_ERR_NOMEM,
              "GPU memory budget %s is too small: the resident Reference-region (ELL) block of "
              "%lld rows x %lld columns and the workspace need %s; give a budget of at least %lld "
              "bytes",
              cis_format_bytes((double)budget, b1, sizeof b1), (long long)h->n,
              (long long)h->ell.boundary, cis_format_bytes((double)need, b2, sizeof b2),
              (long long)need);
  int64_t usable = (int64_t)(0.95 * (double)free_b) - reserve;
  if (need > usable)
    CIS_ERROR(CIS_ERR_NOMEM,
              "GPU has %s free; after 5%% and %s kept for the solver's vectors, %s is left, but "
              "the resident Reference-region (ELL) block and the workspace need %s",
              cis_format_bytes((double)free_b, b1, sizeof b1),
              cis_format_bytes((double)reserve, b2, sizeof b2),
              cis_format_bytes((double)CIS_MAX(usable, (int64_t)0), b3, sizeof b3),
              cis_format_bytes((double)need, b4, sizeof b4));
  int64_t limit = budget > 0 ? CIS_MIN(budget, usable) : usable;
  d->info.budget = limit;
  d->info.min_bytes = need;
  *avail = CIS_MAX((int64_t)0, limit - need - hyb_stream_reserve(h, d->st.nscratch));
  return CIS_OK;
}

static cis_err hyb_cuda_fill(cis_hyb_cuda *d, const cis_hyb *h, int64_t budget,
                             int64_t reserve, int flags) {
  cis_err err = CIS_OK;
  char *resident = NULL;
  int64_t avail = 0;
  CIS_CHECK(h->n == h->ell.nrows && h->n <= INT32_MAX, CIS_ERR_INTERNAL,
            "hybrid matrix: %lld rows but ELL block of %lld rows", (long long)h->n,
            (long long)h->ell.nrows);
  d->st.nscratch = CIS_MAX(1, omp_get_max_threads());
  CIS_CALL(check_budget(d, budget, reserve, flags, &avail));
  d->n = h->n;
  /* the same whether the Reference region ends up in tiles or not */
  d->csr.bits = d->info.csr_bits = hyb_csr_bits(h, hyb_tiled_layout(h, flags));
  d->tune.coded_block = d->info.coded_block = CIS_CODED_BLOCK;
  d->tune.subwarp = d->info.subwarp = pick_subwarp(h);
  CIS_CALL(hyb_slots_create(d));
  CIS_CLEANUP_FUNCTION;
  double t0 = cis_wtime();
  CIS_TRY(hyb_census_setup(d, flags));
  d->info.dict_seconds = cis_wtime() - t0;
  CIS_TRY(cis_malloc(&resident, (size_t)h->nblocks, 1, "resident block flags"));
  CIS_TRY(hyb_choose_resident(d, avail, flags, resident));
  CIS_TRY(hyb_devgen_setup(d, flags, &avail, resident));
  {
    /* SELL-32 is built from an upload in the rows' own order with the Reference region as one
     * sliced ELL block */
    sell_plan plan;
    cis_hyb_cuda_pool *pool = hyb_pool_of(h);
    d->sell.on = hyb_sell_layout(d, flags, resident, &plan);
    int pooled = pool && hyb_pool_usable(d, pool, resident);
    if (pool && !pooled) hyb_pool_release(pool); /* its memory back before the upload */
    d->tiles.on = !d->sell.on && hyb_tiled_layout(h, flags);
    d->ell.bits = d->info.index_bits = hyb_index_bits(h, d->tiles.on);
    d->tune.lane_order = d->info.lane_order = d->sell.on ? 0 : d->tune.subwarp;
    if (d->tiles.on) {
      d->tiles.ntiles = cis_place_tile_count(h->ell.boundary);
      d->tiles.ngroups = cis_place_group_count(h->n);
      d->info.tile_cols = CIS_TILE_COLS;
    }
    t0 = cis_wtime();
    if (d->tiles.on)
      CIS_TRY(hyb_tiles_create(d, &h->ell));
    else
      CIS_TRY(hyb_ell_create(d, &h->ell, d->ell.bits));
    d->info.ell_seconds = cis_wtime() - t0;
    t0 = cis_wtime();
    if (pooled && d->sell.on)
      CIS_TRY(hyb_pool_adopt(d, pool));
    else
      CIS_TRY(hyb_csr_upload(d, resident, pooled ? pool : NULL));
    if (d->sell.on) CIS_TRY(hyb_sell_create(d, &plan));
    d->info.csr_seconds = cis_wtime() - t0;
  }
  {
    int64_t l2 = 0, streamed = h->nnz_exp; /* the streamed blocks' entries, 12 bytes each */
    for (int64_t b = 0; b < h->nblocks; b++)
      if (resident[b]) streamed -= d->cen->bnnz[b];
    CIS_TRY(hyb_device_l2(&l2));
    d->tune.group = d->info.group = vectors_per_pass(
        d->info.ell_bytes + d->info.csr_bytes + 12 * streamed, l2, !d->st.nblocks,
        !d->sell.on && !d->tiles.on && !d->coded.dict, d->tiles.on && !d->coded.dict, h->n);
  }
  CIS_TRY(hyb_launch_init(d));
  CIS_TRY(hyb_dev_alloc(&d->xt, (size_t)h->n * CIS_HYB_CUDA_MAX_K * 8, "multi-vector workspace"));
  d->info.work_bytes = h->n * (int64_t)CIS_HYB_CUDA_MAX_K * 8;
  if (d->st.nblocks > 0 && !d->gen && !h->regen && h->ncached < h->nblocks)
    CIS_FAIL(CIS_ERR_INTERNAL,
             "hybrid matrix: %lld Expansion blocks are not cached and there is no regenerator",
             (long long)(h->nblocks - h->ncached));
  CIS_TRY(hyb_stream_setup(d));
  /* The uploads ran on the legacy stream, which a non-blocking `stream` does not wait for. */
  CIS_CUDA_TRY(cudaDeviceSynchronize());
cleanup:
  cis_free(&resident);
  return err;
}

cis_err cis_hyb_cuda_create2(const cis_hyb *h, int64_t budget, int64_t reserve, int flags,
                             cudaStream_t stream, cis_hyb_cuda **out) {
  cis_err err = CIS_OK;
  cis_hyb_cuda *d = NULL;
  *out = NULL;
  double t0 = cis_wtime();
  CIS_CALL(cis_calloc(&d, 1, sizeof *d, "device matrix"));
  CIS_CLEANUP_FUNCTION;
  d->h = h;
  d->stream = stream;
  CIS_TRY(hyb_cuda_fill(d, h, budget, reserve, flags));
  CIS_TRY(hyb_tune_launch(d));
  d->info.upload_seconds = cis_wtime() - t0;
  *out = d;
cleanup:
  if (err != CIS_OK) cis_hyb_cuda_destroy(&d);
  return err;
}

cis_err cis_hyb_cuda_create(const cis_hyb *h, int64_t budget, int flags, cudaStream_t stream,
                            cis_hyb_cuda **out) {
  return cis_hyb_cuda_create2(h, budget, 0, flags, stream, out);
}

void cis_hyb_cuda_destroy(cis_hyb_cuda **pd) {
  cis_hyb_cuda *d = *pd;
  if (!d) return;
  cudaStreamSynchronize(d->stream);
  if (d->copy_stream) cudaStreamSynchronize(d->copy_stream);
  hyb_dev_free(&d->tiles.base);
  hyb_dev_free(&d->tiles.off);
  hyb_dev_free(&d->tiles.col);
  hyb_dev_free(&d->tiles.val);
  hyb_hybrid_free(d);
  hyb_dev_free(&d->coded.table);
  hyb_dev_free(&d->sell.ptr);
  hyb_dev_free(&d->sell.len);
  hyb_dev_free(&d->sell.width);
  hyb_dev_free(&d->sell.col);
  hyb_dev_free(&d->sell.val);
  hyb_dev_free(&d->sell.cptr);
  hyb_dev_free(&d->sell.clen);
  hyb_dev_free(&d->sell.cwidth);
  hyb_dev_free(&d->sell.ccol);
  hyb_dev_free(&d->sell.ccode);
  cis_census_free(&d->own);
  hyb_dev_free(&d->xt);
  if (d->gen) d->gen->destroy(d->gen);
  for (int i = 0; i < CIS_NSLOTS; i++) {
    stream_slot *s = &d->st.slots[i];
    if (s->pinned) cudaFreeHost(s->pinned);
    hyb_dev_free(&s->dev);
    if (s->copied) cudaEventDestroy(s->copied);
    if (s->consumed) cudaEventDestroy(s->consumed);
  }
  for (int i = 0; d->st.scratch && i < d->st.nscratch; i++) cis_csr_block_free(&d->st.scratch[i]);
  for (int64_t i = 0; d->timer.ev && i < d->timer.nev; i++)
    if (d->timer.ev[i]) cudaEventDestroy(d->timer.ev[i]);
  if (d->copy_stream) cudaStreamDestroy(d->copy_stream);
  cis_free(&d->st.ids);
  cis_free(&d->st.batches);
  cis_free(&d->st.scratch);
  cis_free(&d->st.src);
  cis_free(&d->st.pack_off);
  cis_free(&d->timer.ev);
  cis_free(pd);
}

void cis_hyb_cuda_get_info(const cis_hyb_cuda *d, cis_hyb_cuda_info *info) { *info = d->info; }

void cis_hyb_cuda_set_timing(cis_hyb_cuda *d, int on) { d->timer.on = on != 0; }

void cis_hyb_cuda_get_times(const cis_hyb_cuda *d, cis_hyb_cuda_times *t) { *t = d->timer.times; }

cis_err cis_hyb_cuda_set_subwarp(cis_hyb_cuda *d, int lanes) {
  CIS_CHECK(lanes == 4 || lanes == 8 || lanes == 16 || lanes == 32, CIS_ERR_USAGE,
            "sub-warp of %d lanes: expected 4, 8, 16 or 32", lanes);
  d->tune.subwarp = d->info.subwarp = lanes;
  return CIS_OK;
}

cis_err cis_hyb_cuda_set_coded_block(cis_hyb_cuda *d, int threads) {
  CIS_CHECK(threads >= 32 && threads <= CIS_CODED_BLOCK && threads % 32 == 0, CIS_ERR_USAGE,
            "%d threads per block: expected a multiple of 32 up to %d", threads, CIS_CODED_BLOCK);
  d->tune.coded_block = d->info.coded_block = threads;
  return CIS_OK;
}

cis_err cis_hyb_cuda_set_plain_launch(cis_hyb_cuda *d, int which) {
  int n = d->sell.on ? 2 : CIS_HYB_CUDA_PLAIN_LAUNCHES;
  CIS_CHECK(which >= 0 && which < n, CIS_ERR_USAGE, "plain launch %d: expected 0..%d", which,
            n - 1);
  d->tune.plain_launch = d->info.plain_launch = which;
  return CIS_OK;
}

cis_err cis_hyb_cuda_set_group(cis_hyb_cuda *d, int k) {
  CIS_CHECK(k >= 1 && k <= CIS_HYB_CUDA_MAX_K, CIS_ERR_USAGE,
            "%d vectors per pass: expected 1..%d", k, CIS_HYB_CUDA_MAX_K);
  d->tune.group = d->info.group = k;
  return CIS_OK;
}

cis_err cis_hyb_cuda_apply(cis_hyb_cuda *d, int k, const double *X, double *Y) {
  return hyb_apply_all(d, k, X, Y, 0);
}

cis_err cis_hyb_cuda_apply_multi(cis_hyb_cuda *d, int k, const double *X, double *Y) {
  return hyb_apply_all(d, k, X, Y, 1);
}

