/* cisolve: the hybrid upload: the Reference region (one sliced ELL block or column tiles), the
 * census and the choice of resident Expansion blocks, and the resident Expansion CSR with its
 * coded part, split from the host's blocks on OpenMP threads (or placed from the build's pool,
 * hyb_cuda_pool.cu, or, for a matrix built on the GPU, generated in place there). */
#include <omp.h>
#include <string.h>

#include "spmv/hyb_cuda_private.cuh"

/* Host staging for the ELL upload, in entries. */
#define CIS_ELL_CHUNK ((int64_t)1 << 22)
/* Host staging for the Expansion upload, in entries (18 bytes each at most), two buffers. */
#define CIS_CODE_CHUNK ((int64_t)1 << 22)

static int64_t even(int64_t w) { return w + (w & 1); }

/* Device slice offsets for even widths; entries = total device ELL entries. */
static cis_err device_slice_ptr(const cis_ell *e, int64_t **out) {
  int64_t *p;
  CIS_CALL(cis_malloc(&p, (size_t)e->nslices + 1, sizeof *p, "device ELL slice offsets"));
  p[0] = 0;
  for (int64_t s = 0; s < e->nslices; s++) {
    int64_t rows = CIS_MIN((int64_t)e->slice, e->nrows - s * e->slice);
    p[s + 1] = p[s] + rows * cis_place_slice_width(e->slice_width[s]);
  }
  *out = p;
  return CIS_OK;
}

static int64_t ell_entries(const cis_ell *e) {
  int64_t m = 0;
  for (int64_t s = 0; s < e->nslices; s++)
    m += CIS_MIN((int64_t)e->slice, e->nrows - s * e->slice) *
         cis_place_slice_width(e->slice_width[s]);
  return m;
}

/* The Reference region in column tiles, unless the flags say otherwise, when
 *  - it is wider than CIS_TILE_AUTO_COLS columns (its slice of x, 8 bytes a column, no longer
 *    stays in L1),
 *  - the matrix has at least CIS_TILE_AUTO_ROWS rows (512 groups, one block each: about 4 per
 *    multiprocessor),
 *  - and its rows have at least CIS_TILE_LANES entries per tile on average, enough for the
 *    lanes that take a row's entries of a tile.
 * Fewer rows leave multiprocessors idle, and sparser tiles leave the lanes idle: tiles then
 * lose to one sliced ELL block (docs/gpu.md, docs/BENCHMARKS.md). And when a group's entries can
 * be counted in 32 bits. (The thresholds: spmv/hyb_place.h.) */
int hyb_tiled_layout(const cis_hyb *h, int flags) {
  const cis_ell *e = &h->ell;
  if (h->device_built) return 0; /* its rows are placed in a sliced ELL only */
  if (!cis_place_tiled_wanted(h->n, e->boundary, e->nnz, flags)) return 0;
  int32_t longest = 0;
  for (int64_t r = 0; r < e->nrows; r++) longest = CIS_MAX(longest, e->row_len[r]);
  return cis_place_tiled_fits(longest);
}

/* Device bytes of the tiled Reference region: 10 per entry, the offsets, the group starts. */
int64_t hyb_tiled_bytes(const cis_hyb *h) {
  return cis_place_tiled_bytes(h->n, h->ell.boundary, h->ell.nnz);
}

/* ELL columns: 16-bit when boundary <= 65536, and always in tiles (counted from the tile). */
int hyb_index_bits(const cis_hyb *h, int tiled) {
  return cis_place_index_bits(tiled, h->ell.boundary);
}

/* 16-bit resident Expansion columns when every column fits: 10 bytes a plain entry instead of
 * 12, 4 a coded one instead of 6. (Stored as column - boundary they would fit for
 * n <= boundary + 65536, but the offset slowed matrices whose columns are 32-bit anyway: the
 * index arithmetic of every gather changed, docs/BENCHMARKS.md.) */
int hyb_csr_bits(const cis_hyb *h, int tiled) {
  return cis_place_csr_bits(hyb_index_bits(h, tiled), h->n);
}

/* Device bytes of the sliced ELL with `bits`-bit columns. */
int64_t hyb_sliced_bytes(const cis_ell *e, int bits) {
  return cis_place_sliced_bytes(ell_entries(e), e->nslices, e->nrows, bits);
}

/* Copy slices [s0, s1) into pinned staging with even widths, narrowed columns and each row's
 * entries in lane order (`to`: room for the widest slice). */
static void ell_pack(const cis_ell *e, const int64_t *dptr, int64_t s0, int64_t s1, int bits,
                     int lanes, int32_t *to, double *val, void *col) {
  int64_t base = dptr[s0];
  for (int64_t s = s0; s < s1; s++) {
    int64_t w = e->slice_width[s], dw = cis_place_slice_width(w);
    int64_t rows = CIS_MIN((int64_t)e->slice, e->nrows - s * e->slice);
    for (int64_t l = 0; l < rows; l++) {
      const int32_t *sc = e->col + e->slice_ptr[s] + l * w;
      const double *sv = e->val + e->slice_ptr[s] + l * w;
      int64_t q = dptr[s] + l * dw - base, len = e->row_len[s * e->slice + l];
      cis_lane_order(0, len, 2, lanes, to); /* the row starts 16-byte aligned */
      for (int64_t t = 0; t < dw; t++) {
        int32_t c = t < w ? sc[t] : 0;
        int64_t at = q + (t < len ? to[t] : t);
        val[at] = t < w ? sv[t] : 0.0;
        if (bits == 16)
          ((uint16_t *)col)[at] = (uint16_t)c;
        else
          ((int32_t *)col)[at] = c;
      }
    }
  }
}

static cis_err ell_upload(cis_hyb_cuda *d, const cis_ell *e, const int64_t *dptr, int bits) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  int cb = bits / 8;
  int64_t chunk = CIS_ELL_CHUNK, wmax = 1;
  for (int64_t s = 0; s < e->nslices; s++) {
    chunk = CIS_MAX(chunk, dptr[s + 1] - dptr[s]);
    wmax = CIS_MAX(wmax, (int64_t)e->slice_width[s]);
  }
  char *stage = NULL;
  int32_t *to = NULL;
  size_t per = sizeof(double) + (size_t)cb;
  CIS_TRY(cis_malloc(&to, (size_t)wmax, sizeof *to, "ELL lane order"));
  CIS_CUDA_TRY(cudaMallocHost((void **)&stage, (size_t)chunk * per));
  for (int64_t s0 = 0; s0 < e->nslices;) {
    int64_t s1 = s0 + 1;
    while (s1 < e->nslices && dptr[s1 + 1] - dptr[s0] <= chunk) s1++;
    int64_t m = dptr[s1] - dptr[s0];
    double *val = (double *)stage;
    char *col = stage + (size_t)chunk * 8;
    ell_pack(e, dptr, s0, s1, bits, d->tune.lane_order, to, val, col);
    CIS_CUDA_TRY(cudaMemcpy(d->ell.val + dptr[s0], val, (size_t)m * 8, cudaMemcpyHostToDevice));
    CIS_CUDA_TRY(cudaMemcpy((char *)d->ell.col + (size_t)dptr[s0] * cb, col, (size_t)m * cb,
                            cudaMemcpyHostToDevice));
    s0 = s1;
  }
cleanup:
  if (stage) cudaFreeHost(stage);
  cis_free(&to);
  return err;
}

/* The Reference region as one sliced ELL block with `bits`-bit columns. */
cis_err hyb_ell_create(cis_hyb_cuda *d, const cis_ell *e, int bits) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  int64_t *dptr = NULL;
  int32_t *dwidth = NULL;
  int cb = bits / 8;
  int64_t m = 0;
  CIS_TRY(device_slice_ptr(e, &dptr));
  CIS_TRY(cis_malloc(&dwidth, (size_t)e->nslices, sizeof *dwidth, "device ELL slice widths"));
  for (int64_t s = 0; s < e->nslices; s++)
    dwidth[s] = (int32_t)cis_place_slice_width(e->slice_width[s]);
  m = dptr[e->nslices] + 2;
  CIS_TRY(hyb_dev_alloc(&d->ell.slice_ptr, (size_t)(e->nslices + 1) * 8, "ELL slice offsets"));
  CIS_TRY(hyb_dev_alloc(&d->ell.slice_width, (size_t)e->nslices * 4, "ELL slice widths"));
  CIS_TRY(hyb_dev_alloc(&d->ell.row_len, (size_t)e->nrows * 4, "ELL row lengths"));
  CIS_TRY(hyb_dev_alloc(&d->ell.val, (size_t)m * 8, "ELL values"));
  CIS_TRY(hyb_dev_alloc(&d->ell.col, (size_t)m * cb, "ELL column indices"));
  CIS_CUDA_TRY(cudaMemset(d->ell.val, 0, (size_t)m * 8));
  CIS_CUDA_TRY(cudaMemset(d->ell.col, 0, (size_t)m * cb));
  CIS_CUDA_TRY(cudaMemcpy(d->ell.slice_ptr, dptr, (size_t)(e->nslices + 1) * 8,
                          cudaMemcpyHostToDevice));
  CIS_CUDA_TRY(cudaMemcpy(d->ell.slice_width, dwidth, (size_t)e->nslices * 4,
                          cudaMemcpyHostToDevice));
  CIS_CUDA_TRY(cudaMemcpy(d->ell.row_len, e->row_len, (size_t)e->nrows * 4,
                          cudaMemcpyHostToDevice));
  if (!d->h->device_built) /* else placed with the Expansion rows (hyb_csr_upload) */
    CIS_TRY(ell_upload(d, e, dptr, bits));
  d->info.ell_bytes = hyb_sliced_bytes(e, bits);
cleanup:
  cis_free(&dptr);
  cis_free(&dwidth);
  return err;
}

/* The Reference region in column tiles (d->tiles.on): every group's offsets counted on OpenMP
 * threads, then its entries packed into pinned staging, a chunk of groups at a time, and
 * copied from there. */
cis_err hyb_tiles_create(cis_hyb_cuda *d, const cis_ell *e) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  const int64_t ng = d->tiles.ngroups, nt = d->tiles.ntiles, per = nt * CIS_TILE_ROWS + 1;
  int64_t *base = NULL, chunk = CIS_ELL_CHUNK;
  uint32_t *off = NULL, *cursor = NULL;
  char *stage = NULL;
  int nthr = omp_get_max_threads(), bad = 0;
  CIS_TRY(cis_malloc(&base, (size_t)ng + 1, sizeof *base, "tile group starts"));
  CIS_TRY(cis_malloc(&off, (size_t)(ng * per), sizeof *off, "tile offsets"));
  CIS_TRY(cis_malloc(&cursor, (size_t)(nthr * (per - 1)), sizeof *cursor, "tile cursors"));
  base[0] = 0;
#pragma omp parallel for schedule(dynamic, 16) reduction(| : bad)
  for (int64_t g = 0; g < ng; g++) {
    int64_t c = cis_ell_tile_offsets(e, g, CIS_TILE_ROWS, CIS_TILE_COLS, nt, off + g * per);
    bad |= c < 0;
    base[g + 1] = c;
  }
  if (bad)
    CIS_FAIL(CIS_ERR_INTERNAL, "upload: a group of %d rows has 2^32 Reference entries or more",
             CIS_TILE_ROWS);
  for (int64_t g = 0; g < ng; g++) {
    chunk = CIS_MAX(chunk, base[g + 1]);
    base[g + 1] += base[g];
  }
  CIS_TRY(hyb_dev_alloc(&d->tiles.base, (size_t)(ng + 1) * 8, "tile group starts"));
  CIS_TRY(hyb_dev_alloc(&d->tiles.off, (size_t)(ng * per) * 4, "tile offsets"));
  CIS_TRY(hyb_dev_alloc(&d->tiles.col, (size_t)(base[ng] + 1) * 2, "tiled Reference columns"));
  CIS_TRY(hyb_dev_alloc(&d->tiles.val, (size_t)(base[ng] + 1) * 8, "tiled Reference values"));
  CIS_CUDA_TRY(cudaMemcpy(d->tiles.base, base, (size_t)(ng + 1) * 8, cudaMemcpyHostToDevice));
  CIS_CUDA_TRY(cudaMemcpy(d->tiles.off, off, (size_t)(ng * per) * 4, cudaMemcpyHostToDevice));
  CIS_CUDA_TRY(cudaMallocHost((void **)&stage, (size_t)chunk * 10));
  for (int64_t g0 = 0; g0 < ng;) {
    int64_t g1 = g0 + 1;
    while (g1 < ng && base[g1 + 1] - base[g0] <= chunk) g1++;
    int64_t m = base[g1] - base[g0];
    double *val = (double *)stage;
    uint16_t *col = (uint16_t *)(stage + (size_t)chunk * 8);
#pragma omp parallel for schedule(dynamic, 4)
    for (int64_t g = g0; g < g1; g++)
      cis_ell_tile_fill(e, g, CIS_TILE_ROWS, CIS_TILE_COLS, nt, off + g * per,
                        cursor + (int64_t)omp_get_thread_num() * (per - 1),
                        col + (base[g] - base[g0]), val + (base[g] - base[g0]));
    CIS_CUDA_TRY(cudaMemcpy(d->tiles.val + base[g0], val, (size_t)m * 8, cudaMemcpyHostToDevice));
    CIS_CUDA_TRY(cudaMemcpy(d->tiles.col + base[g0], col, (size_t)m * 2, cudaMemcpyHostToDevice));
    g0 = g1;
  }
  d->info.ell_bytes = hyb_tiled_bytes(d->h);
cleanup:
  if (stage) cudaFreeHost(stage);
  cis_free(&base);
  cis_free(&off);
  cis_free(&cursor);
  return err;
}

/* Whether block b may stay resident: unless every block is streamed, a block the host caches,
 * or one it can regenerate (once, at upload: the device copy needs no host copy). */
static int may_reside(const cis_hyb *h, int64_t b, int flags) {
  if (flags & CIS_HYB_CUDA_NO_CACHE) return 0;
  return cis_csr_block_cached(&h->blocks[b]) || h->regen != NULL;
}

/* Whether the resident entries are to be coded, when the blocks that may be resident take
 * `bytes` plain: unless the caller wants plain values or they would be read from L2 anyway,
 * where decoding costs more than the bytes it saves (docs/gpu.md, "Coded values"). */
cis_err hyb_codes_pay(int flags, int64_t bytes, int *coded) {
  int64_t l2 = 0;
  if (!(flags & (CIS_HYB_CUDA_PLAIN | CIS_HYB_CUDA_NO_CACHE | CIS_HYB_CUDA_CODED)))
    CIS_CALL(hyb_device_l2(&l2));
  *coded = cis_place_codes_pay(flags, bytes, l2);
  return CIS_OK;
}

/* The same for the blocks of d's matrix that may be resident (may_reside). */
static cis_err want_coded(const cis_hyb_cuda *d, int flags, int *coded) {
  const cis_hyb *h = d->h;
  int64_t bytes = h->regen ? 12 * h->nnz_exp : 0;
  for (int64_t b = 0; b < h->nblocks && !h->regen; b++)
    if (cis_csr_block_cached(&h->blocks[b])) bytes += h->blocks[b].nnz * 12;
  return hyb_codes_pay(flags, bytes, coded);
}

/* The census of the blocks that may be resident, and the dictionary: the host's census when it
 * took one while building the matrix (with its dictionary, when the entries are to be coded),
 * else one taken here (spmv/census.h), a block the host does not cache regenerated for it (and
 * again when it is stored). */
cis_err hyb_census_setup(cis_hyb_cuda *d, int flags) {
  const cis_hyb *h = d->h;
  int coded = 0;
  unsigned char *want = NULL;
  CIS_CALL(want_coded(d, flags, &coded));
  if (h->census && cis_census_complete(h->census)) {
    d->cen = h->census;
  } else {
    CIS_CALL(cis_census_init(&d->own, h, coded));
    CIS_CALL(cis_calloc(&want, (size_t)CIS_MAX(h->nblocks, (int64_t)1), 1, "census blocks"));
    for (int64_t b = 0; b < h->nblocks; b++) want[b] = (unsigned char)may_reside(h, b, flags);
    cis_err e = cis_census_take(&d->own, h, want);
    cis_free(&want);
    CIS_CALL(e);
    d->cen = &d->own;
  }
  d->coded.dict = coded && d->cen->dict.size ? &d->cen->dict : NULL;
  d->info.dict_cover = d->cen->dict.cover;
  return CIS_OK;
}

/* Device bytes of a resident block: 8 per plain entry and 2 per coded one, plus its column. */
static int64_t block_bytes(const cis_hyb_cuda *d, int64_t b) {
  return cis_place_entries_bytes(d->cen->bnnz[b], d->coded.dict ? d->cen->bcoded[b] : 0,
                                 d->csr.bits);
}

/* Device bytes of the coded part besides its entries: row pointers, padding, the table. */
static int64_t coded_overhead(const cis_hyb_cuda *d) {
  return cis_place_coded_overhead(d->h->n, d->csr.bits, d->coded.dict ? d->coded.dict->size : 0);
}

/* Which blocks stay resident: those that may (may_reside), in order, while they fit in `avail`
 * bytes. */
cis_err hyb_choose_resident(cis_hyb_cuda *d, int64_t avail, int flags, char *resident) {
  const cis_hyb *h = d->h;
  int64_t row = 0;
  if (d->coded.dict && avail < coded_overhead(d)) d->coded.dict = NULL;
  if (d->coded.dict) avail -= coded_overhead(d);
  for (int64_t b = 0; b < h->nblocks; b++) {
    const cis_csr_block *blk = &h->blocks[b];
    CIS_CHECK(blk->row0 == row && blk->nrows >= 0, CIS_ERR_INTERNAL,
              "hybrid matrix: Expansion block %lld starts at row %lld, expected %lld",
              (long long)b, (long long)blk->row0, (long long)row);
    row += blk->nrows;
    resident[b] = 0;
    if (!may_reside(h, b, flags) || block_bytes(d, b) > avail) continue;
    resident[b] = 1;
    avail -= block_bytes(d, b);
    d->info.regenerated_blocks += !cis_csr_block_cached(blk);
  }
  CIS_CHECK(row == h->n, CIS_ERR_INTERNAL,
            "hybrid matrix: Expansion blocks cover %lld rows, expected %lld", (long long)row,
            (long long)h->n);
  return CIS_OK;
}

/* Column c at a[i] in the device's width. */
static inline void put_col(const cis_hyb_cuda *d, void *a, int64_t i, int32_t c) {
  if (d->csr.bits == 16)
    ((uint16_t *)a)[i] = (uint16_t)c;
  else
    ((int32_t *)a)[i] = c;
}

/* Split rows [l0, l1) of a block into plain entries (at rp[row] - x0) and coded ones (at
 * crp[row] - c0), each row's in lane order (`to`: room for the longest row); without a
 * dictionary (crp NULL) every entry is plain. 0 when every row's counts match its row
 * pointers. */
static int encode_rows(const cis_hyb_cuda *d, const cis_csr_block *blk, int64_t l0, int64_t l1,
                       const int64_t *rp, const int64_t *crp, int64_t x0, int64_t c0,
                       int32_t *to, double *xval, void *xcol, void *ccol, uint16_t *ccode) {
  for (int64_t l = l0; l < l1; l++) {
    int64_t r = blk->row0 + l, xi = rp[r] - x0, ci = crp ? crp[r] - c0 : 0;
    int64_t nx = rp[r + 1] - rp[r], nc = crp ? crp[r + 1] - crp[r] : 0, kx = 0, kc = 0;
    int64_t len = blk->rowptr[l + 1] - blk->rowptr[l];
    if (nx + nc != len) return 1;
    int32_t *tox = to, *toc = to + nx;
    cis_lane_order(rp[r], rp[r + 1], 2, d->tune.lane_order, tox);
    if (crp) cis_lane_order(crp[r], crp[r + 1], 4, d->tune.lane_order, toc);
    for (int64_t p = blk->rowptr[l]; p < blk->rowptr[l + 1]; p++) {
      int code = crp ? cis_vdict_code(d->coded.dict, blk->val[p]) : -1;
      if (code >= 0) {
        if (kc == nc) return 1;
        put_col(d, ccol, ci + toc[kc], blk->col[p]);
        ccode[ci + toc[kc++]] = (uint16_t)code;
      } else {
        if (kx == nx) return 1;
        put_col(d, xcol, xi + tox[kx], blk->col[p]);
        xval[xi + tox[kx++]] = blk->val[p];
      }
    }
  }
  return 0;
}

/* Rows per task when a group of blocks is split on OpenMP threads: fewer where the rows are
 * regenerated first, so that a group's tasks, which take longer, still spread over the threads
 * (a group holds about 4 blocks of H2O/6-31G FCI). */
#define CIS_ROWS_PER_TASK 256
#define CIS_REGEN_ROWS_PER_TASK 64

/* Copy the resident blocks into place: in groups of about CIS_CODE_CHUNK entries, split
 * (encode_rows) into pinned staging on OpenMP threads, CIS_ROWS_PER_TASK rows per task (rows
 * the host does not cache are regenerated by the task first), and copied from there; two
 * staging buffers, so that a group is split while the one before it is copied. crp NULL: no
 * coded part. */
static cis_err blocks_upload(cis_hyb_cuda *d, const char *resident, const int64_t *rp,
                             const int64_t *crp) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  const cis_hyb *h = d->h;
  int64_t total = 0, biggest = 0, ntask = 0, cap, maxtask, cb = d->csr.bits / 8;
  int64_t rows_total = 0, rows_done = 0;
  int64_t longest = CIS_MAX(d->cen->longest, (int64_t)1);
  int64_t(*task)[3] = NULL; /* block, first row, end row */
  int32_t *to = NULL;       /* lane order, one longest row per thread */
  cis_csr_block *scratch = NULL; /* regenerated rows, one task's per thread */
  int nthr = omp_get_max_threads();
  char *stage[2] = {NULL, NULL};
  cudaEvent_t copied[2] = {NULL, NULL};
  int slot = 0;
  for (int64_t b = 0; b < h->nblocks; b++)
    if (resident[b]) {
      total += d->cen->bnnz[b];
      biggest = CIS_MAX(biggest, d->cen->bnnz[b]);
      rows_total += h->blocks[b].nrows;
    }
  if (total == 0) return CIS_OK;
  cis_progress_update(h->progress, "GPU upload", 0, rows_total);
  CIS_TRY(cis_malloc(&to, (size_t)(nthr * longest), sizeof *to, "upload lane order"));
  CIS_TRY(cis_calloc(&scratch, (size_t)nthr, sizeof *scratch, "upload regenerated rows"));
  /* small matrices get small staging: pinning host memory costs time too */
  cap = even(CIS_MAX(CIS_MIN(CIS_CODE_CHUNK, total / 8 + 1), biggest));
  maxtask = h->n / CIS_REGEN_ROWS_PER_TASK + h->nblocks + 1;
  CIS_TRY(cis_malloc(&task, (size_t)maxtask, sizeof *task, "upload tasks"));
  for (int i = 0; i < 2; i++) {
    CIS_CUDA_TRY(cudaMallocHost((void **)&stage[i], (size_t)cap * 18));
    CIS_CUDA_TRY(cudaEventCreateWithFlags(&copied[i], cudaEventDisableTiming));
  }
  /* the arrays were cleared on the legacy stream, which copy_stream does not wait for */
  CIS_CUDA_TRY(cudaDeviceSynchronize());
  for (int64_t b = 0; b < h->nblocks;) {
    int64_t sum = 0, first = -1, last = -1, group_rows = 0;
    ntask = 0;
    for (; b < h->nblocks; b++) {
      const cis_csr_block *blk = &h->blocks[b];
      if (!resident[b] || d->cen->bnnz[b] == 0) continue;
      if (first >= 0 && sum + d->cen->bnnz[b] > cap) break;
      if (first < 0) first = b;
      last = b;
      sum += d->cen->bnnz[b];
      group_rows += blk->nrows;
      int64_t per = cis_csr_block_cached(blk) ? CIS_ROWS_PER_TASK : CIS_REGEN_ROWS_PER_TASK;
      for (int64_t l = 0; l < blk->nrows; l += per) {
        task[ntask][0] = b;
        task[ntask][1] = l;
        task[ntask++][2] = CIS_MIN(l + per, blk->nrows);
      }
    }
    if (first < 0) break;
    const cis_csr_block *f = &h->blocks[first], *l = &h->blocks[last];
    int64_t x0 = rp[f->row0], c0 = crp ? crp[f->row0] : 0;
    int64_t x1 = rp[l->row0 + l->nrows], c1 = crp ? crp[l->row0 + l->nrows] : 0;
    char *st = stage[slot];
    double *xval = (double *)st;
    char *xcol = st + cap * 8, *ccol = st + cap * 12;
    uint16_t *ccode = (uint16_t *)(st + cap * 16);
    int bad = 0;
    double tw = cis_wtime();
    CIS_CUDA_TRY(cudaEventSynchronize(copied[slot]));
    double te = cis_wtime();
    d->info.csr_wait_seconds += te - tw;
    cis_worker_error we = {CIS_OK, ""};
#pragma omp parallel for schedule(dynamic, 1) reduction(| : bad)
    for (int64_t t = 0; t < ntask; t++) {
      const cis_csr_block *blk = &h->blocks[task[t][0]];
      int64_t l0 = task[t][1], l1 = task[t][2];
      int me = omp_get_thread_num();
      if (cis_worker_error_seen(&we)) continue;
      if (!cis_csr_block_cached(blk)) {
        cis_err e = cis_hyb_regen_rows(h, blk->row0 + l0, l1 - l0, &scratch[me]);
        if (e != CIS_OK) {
          cis_worker_error_keep(&we, e);
          continue;
        }
        blk = &scratch[me];
        l1 -= l0;
        l0 = 0;
      }
      bad |= encode_rows(d, blk, l0, l1, rp, crp, x0, c0, to + (int64_t)me * longest, xval,
                         xcol, ccol, ccode);
    }
    d->info.csr_split_seconds += cis_wtime() - te;
    if (we.code != CIS_OK) CIS_FAIL(we.code, "%s", we.msg);
    if (bad)
      CIS_FAIL(CIS_ERR_INTERNAL,
               "upload: Expansion blocks from row %lld changed since they were counted",
               (long long)f->row0);
    cudaStream_t cs = d->copy_stream;
    CIS_CUDA_TRY(cudaMemcpyAsync(d->csr.val + x0, xval, (size_t)(x1 - x0) * 8,
                                 cudaMemcpyHostToDevice, cs));
    CIS_CUDA_TRY(cudaMemcpyAsync((char *)d->csr.col + x0 * cb, xcol, (size_t)(x1 - x0) * cb,
                                 cudaMemcpyHostToDevice, cs));
    if (crp) {
      CIS_CUDA_TRY(cudaMemcpyAsync((char *)d->coded.col + c0 * cb, ccol, (size_t)(c1 - c0) * cb,
                                   cudaMemcpyHostToDevice, cs));
      CIS_CUDA_TRY(cudaMemcpyAsync(d->coded.code + c0, ccode, (size_t)(c1 - c0) * 2,
                                   cudaMemcpyHostToDevice, cs));
    }
    CIS_CUDA_TRY(cudaEventRecord(copied[slot], cs));
    slot ^= 1;
    rows_done += group_rows;
    cis_progress_update(h->progress, "GPU upload", rows_done, rows_total);
  }
  {
    double tw = cis_wtime();
    CIS_CUDA_TRY(cudaStreamSynchronize(d->copy_stream));
    d->info.csr_wait_seconds += cis_wtime() - tw;
  }
cleanup:
  cis_progress_finish(h->progress);
  /* no copy may still read the staging when it is freed (after an error too) */
  if (d->copy_stream) cudaStreamSynchronize(d->copy_stream);
  for (int i = 0; i < 2; i++) {
    if (stage[i]) cudaFreeHost(stage[i]);
    if (copied[i]) cudaEventDestroy(copied[i]);
  }
  if (scratch)
    for (int i = 0; i < nthr; i++) cis_csr_block_free(&scratch[i]);
  cis_free(&scratch);
  cis_free(&task);
  cis_free(&to);
  return err;
}

/* The dictionary's magnitudes on the device (the coded entries' value table). */
cis_err hyb_table_upload(cis_hyb_cuda *d) {
  CIS_CALL(hyb_dev_alloc(&d->coded.table, (size_t)d->coded.dict->size * 8, "value dictionary"));
  CIS_CUDA(cudaMemcpy(d->coded.table, d->coded.dict->table, (size_t)d->coded.dict->size * 8,
                      cudaMemcpyHostToDevice));
  return CIS_OK;
}

/* A matrix built on the device: the Reference entries of its rows into the sliced ELL and the
 * Expansion entries of its resident blocks into the CSR, plain and coded, generated once more
 * on the device and written in place (the rows' counts gave the layouts). */
static cis_err device_place(cis_hyb_cuda *d) {
  const cis_hyb *h = d->h;
  int *bad = NULL, hbad = 0;
  CIS_CHECK(d->gen && d->gen->place, CIS_ERR_INTERNAL,
            "a matrix built on the GPU, but no device generator to place its rows");
  CIS_CUDA(cudaMalloc((void **)&bad, sizeof *bad));
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  CIS_CUDA_TRY(cudaMemset(bad, 0, sizeof *bad));
  cis_dev_layout L;
  memset(&L, 0, sizeof L);
  L.row0 = h->dev_row0;
  L.nrows = h->dev_row1 - h->dev_row0;
  L.nref = h->ell.boundary;
  L.lanes = d->tune.lane_order;
  L.slice = (int)h->ell.slice;
  L.ell_bits = d->ell.bits;
  L.ell_ptr = d->ell.slice_ptr;
  L.ell_width = d->ell.slice_width;
  L.ell_len = d->ell.row_len;
  L.ell_col = d->ell.col;
  L.ell_val = d->ell.val;
  L.csr_bits = d->csr.bits;
  L.rp = d->csr.rowptr;
  L.col = d->csr.col;
  L.val = d->csr.val;
  L.crp = d->coded.dict ? d->coded.rowptr : NULL;
  L.ccol = d->coded.col;
  L.code = d->coded.code;
  L.dict = d->coded.dict;
  L.bad = bad;
  CIS_CUDA_TRY(cudaDeviceSynchronize()); /* the arrays were cleared on the legacy stream */
  CIS_TRY(d->gen->place(d->gen, &L, (void *)d->stream));
  CIS_CUDA_TRY(cudaMemcpy(&hbad, bad, sizeof hbad, cudaMemcpyDeviceToHost));
  if (hbad)
    CIS_FAIL(CIS_ERR_INTERNAL, "the rows generated on the GPU do not match their counts");
  d->info.gpu_placed = 1;
  d->info.regenerated_blocks = 0;
cleanup:
  cudaFree(bad);
  return err;
}

cis_err hyb_csr_upload(cis_hyb_cuda *d, const char *resident, cis_hyb_cuda_pool *pool) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  const cis_hyb *h = d->h;
  int coded = d->coded.dict != NULL;
  int64_t cb = d->csr.bits / 8;
  int64_t *rp = NULL, *crp = NULL, nnz = 0, cnnz = 0, ns = 0;
  CIS_TRY(cis_malloc(&rp, (size_t)h->n + 1, sizeof *rp, "resident CSR row pointers"));
  if (coded)
    CIS_TRY(cis_malloc(&crp, (size_t)h->n + 1, sizeof *crp, "resident coded row pointers"));
  rp[0] = 0;
  if (coded) crp[0] = 0;
  for (int64_t b = 0; b < h->nblocks; b++) {
    const cis_csr_block *blk = &h->blocks[b];
    for (int64_t l = 0; l < blk->nrows; l++) {
      int64_t r = blk->row0 + l;
      int64_t len = resident[b] ? d->cen->rlen[r] : 0;
      int64_t c = resident[b] && coded ? d->cen->ncoded[r] : 0;
      rp[r + 1] = rp[r] + len - c;
      if (coded) crp[r + 1] = crp[r] + c;
    }
    ns += !resident[b];
  }
  nnz = rp[h->n];
  cnnz = coded ? crp[h->n] : 0;
  CIS_TRY(hyb_dev_alloc(&d->csr.rowptr, (size_t)(h->n + 1) * 8, "CSR row pointers"));
  CIS_TRY(hyb_dev_alloc(&d->csr.col, (size_t)(nnz + 2) * cb, "CSR column indices"));
  CIS_TRY(hyb_dev_alloc(&d->csr.val, (size_t)(nnz + 2) * 8, "CSR values"));
  CIS_CUDA_TRY(cudaMemset(d->csr.col, 0, (size_t)(nnz + 2) * cb));
  CIS_CUDA_TRY(cudaMemset(d->csr.val, 0, (size_t)(nnz + 2) * 8));
  CIS_CUDA_TRY(cudaMemcpy(d->csr.rowptr, rp, (size_t)(h->n + 1) * 8, cudaMemcpyHostToDevice));
  if (coded) {
    CIS_TRY(hyb_dev_alloc(&d->coded.rowptr, (size_t)(h->n + 1) * 8, "coded CSR row pointers"));
    CIS_TRY(hyb_dev_alloc(&d->coded.col, (size_t)(cnnz + 4) * cb, "coded CSR column indices"));
    CIS_TRY(hyb_dev_alloc(&d->coded.code, (size_t)(cnnz + 4) * 2, "coded CSR value codes"));
    CIS_CUDA_TRY(cudaMemset(d->coded.col, 0, (size_t)(cnnz + 4) * cb));
    CIS_CUDA_TRY(cudaMemset(d->coded.code, 0, (size_t)(cnnz + 4) * 2));
    CIS_CUDA_TRY(cudaMemcpy(d->coded.rowptr, crp, (size_t)(h->n + 1) * 8, cudaMemcpyHostToDevice));
    CIS_TRY(hyb_table_upload(d));
  }
  if (h->device_built)
    CIS_TRY(device_place(d));
  else
    CIS_TRY(pool ? hyb_pool_place(d, pool) : blocks_upload(d, resident, rp, crp));
  CIS_TRY(cis_malloc(&d->st.ids, (size_t)ns, sizeof *d->st.ids, "streamed block list"));
  for (int64_t b = 0; b < h->nblocks; b++)
    if (!resident[b]) d->st.ids[d->st.nblocks++] = b;
  d->info.csr_bytes =
      (nnz + 2) * (8 + cb) + (h->n + 1) * 8 + (coded ? cnnz * (2 + cb) + coded_overhead(d) : 0);
  d->info.coded_nnz = cnnz;
  d->info.dict_size = coded ? d->coded.dict->size : 0;
  d->info.resident_blocks = h->nblocks - ns;
  d->info.streamed_blocks = ns;
cleanup:
  cis_free(&rp);
  cis_free(&crp);
  return err;
}

/* The sliced ELL and the resident CSR, plain and coded (the value table stays). */
void hyb_hybrid_free(cis_hyb_cuda *d) {
  hyb_dev_free(&d->ell.slice_ptr);
  hyb_dev_free(&d->ell.slice_width);
  hyb_dev_free(&d->ell.row_len);
  hyb_dev_free(&d->ell.col);
  hyb_dev_free(&d->ell.val);
  hyb_dev_free(&d->csr.rowptr);
  hyb_dev_free(&d->csr.col);
  hyb_dev_free(&d->csr.val);
  hyb_dev_free(&d->coded.rowptr);
  hyb_dev_free(&d->coded.col);
  hyb_dev_free(&d->coded.code);
}

