/* cisolve: upload of a hybrid matrix to a CUDA device, and the products (spmv/hyb_cuda.h). */
#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Streamed blocks are generated on OpenMP threads: without OpenMP the pragmas below would
 * silently run them one at a time. */
#ifndef _OPENMP
#error "spmv/hyb_cuda.cu must be compiled with OpenMP (-Xcompiler=-fopenmp)"
#endif

extern "C" {
#include "core/util.h"
#include "spmv/census.h"
#include "spmv/valdict.h"
}
#include "kernels/cuda_check.cuh"
#include "spmv/hyb_cuda.h"
#include "spmv/hyb_kernels.cuh"

/* Host staging for the ELL upload, in entries. */
#define CIS_ELL_CHUNK ((int64_t)1 << 22)
/* Host staging for the Expansion upload, in entries (18 bytes each at most), two buffers. */
#define CIS_CODE_CHUNK ((int64_t)1 << 22)

/* A streamed batch's buffers: pinned host staging, its device copy, and the two events that
 * say when the staging may be refilled (copied) and the device copy overwritten (consumed). */
typedef struct {
  char *pinned;
  size_t pinned_cap;
  char *dev;
  size_t dev_cap;
  cudaEvent_t copied, consumed;
} stream_slot;

/* Consecutive streamed blocks (stream_ids[first .. first+count)) covering rows
 * [row0, row0+nrows) without a gap: one pinned buffer, one copy, one kernel. */
typedef struct {
  int64_t first, count, row0, nrows;
} stream_batch;

struct cis_hyb_cuda {
  const cis_hyb *h;
  cudaStream_t stream, copy_stream;
  int64_t n;
  int index_bits, subwarp;
  int lane_order;     /* lanes the resident entries are ordered for (0: row order) */
  int csr_bits;       /* 16 or 32: resident Expansion columns */
  int coded_block;    /* threads per block of the kernel with a coded part */
  int plain_launch;   /* build of the plain single-vector kernel (hyb_kernels.cuh, OCC) */
  int probe_warps;    /* nonzero: the next launch stores its warps per multiprocessor here */
  int group; /* vectors per pass of the multi-vector kernel */
  int pdl;   /* the kernels were compiled for sm_90 or later: products of several vectors start
                as programmatic dependents of the interleave (launch_kernel) */
  /* the Reference region in column tiles (tiled != 0; spmv/hyb.h, cis_ell_tile_offsets):
   * ngroups groups of CIS_TILE_ROWS rows, ntiles tiles of CIS_TILE_COLS columns */
  int tiled;
  int64_t ntiles, ngroups;
  /* the whole matrix as SELL-32 instead (sell != 0; hyb_kernels.cuh, cis_sell_view), built on
   * the device from the hybrid upload, whose arrays are then freed */
  int sell;
  int64_t *sell_ptr, *sell_cptr;
  int32_t *sell_len, *sell_width, *sell_col, *sell_clen, *sell_cwidth, *sell_ccol;
  double *sell_val;
  uint16_t *sell_ccode;
  /* a small matrix also split over a thread-block cluster, for products of one vector
   * (split != 0: its clusters' size; spmv/split.h, cis_split_kernel), beside the hybrid upload,
   * which products of several vectors use */
  int split, split_groups;
  size_t split_shared;
  cis_split_view sv;
  cis_vdict split_dict; /* its own dictionary where the upload codes no values */
  int64_t *tbase;
  uint32_t *toff;
  uint16_t *tcol;
  double *tval;
  /* device ELL (even slice widths) */
  int64_t *slice_ptr;
  int32_t *slice_width, *row_len;
  void *ell_col;
  int32_t *paper_col; /* == ell_col when 32-bit */
  double *ell_val;
  /* resident Expansion CSR over all rows: entries whose value is not in the dictionary */
  int64_t *rowptr;
  void *csr_col;
  int32_t *paper_csr_col; /* == csr_col when 32-bit */
  double *csr_val;
  /* its coded part (ctable != NULL): entries whose value is in the dictionary `dict` (NULL:
   * none), that of the census */
  const cis_vdict *dict;
  /* the census of the blocks that may be resident (may_reside): the one the host took while it
   * built the matrix (h->census), or the upload's own */
  const cis_census *cen;
  cis_census own;
  int64_t *crowptr;
  void *ccol;
  uint16_t *ccode;
  double *ctable;
  double *xt; /* n x CIS_HYB_CUDA_MAX_K interleaved vectors */
  /* streamed blocks, their batches, and one host scratch block per generating thread */
  int64_t nstream, *stream_ids;
  int64_t nbatch;
  stream_batch *batches;
  int nscratch;
  cis_csr_block *scratch;
  const cis_csr_block **src;
  int64_t *pack_off; /* nscratch + 1 entry offsets of a batch's blocks */
  stream_slot slots[CIS_NSLOTS];
  /* timing: events 0, 1 around the resident kernel, then 4 per batch (copy, kernel) */
  int timing;
  cudaEvent_t *ev;
  int64_t nev;
  cis_hyb_cuda_times times;
  cis_hyb_cuda_info info;
};

static int64_t even(int64_t w) { return w + (w & 1); }
static size_t align16(size_t b) { return (b + 15) & ~(size_t)15; }

static int pick_subwarp(const cis_hyb *h) {
  double avg = h->n ? (double)(h->ell.nnz + h->nnz_exp) / (double)h->n : 0.0;
  /* Two entries per lane per step: the smallest sub-warp that gives each lane about two steps
   * of work, at most 16 lanes. On the paper's matrix (950 per row) 16 lanes beat 32 by 3.5% on
   * an H200 and lose by 1.7% on an H100; on the 1M-row matrix they win by 1% on both
   * (docs/BENCHMARKS.md). */
  for (int w = 4; w < 16; w *= 2)
    if (4.0 * w >= avg) return w;
  return 16;
}

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

static int64_t tile_count(const cis_hyb *h) { return cis_place_tile_count(h->ell.boundary); }
static int64_t group_count(const cis_hyb *h) { return cis_place_group_count(h->n); }

/* Vectors per pass of the multi-vector kernel, for a matrix of `bytes` on the device, every
 * block resident or not (`resident`), with n rows:
 *  - 8 (one pass) when the matrix fits the L2 cache: H2O CISDT, plain values, 11.2 us a vector
 *    against 11.6 in two passes of 4 (H200, commit e690ab1);
 *  - 8 also, every block resident, when the eight columns of X (n * 64 bytes) fit the L2 cache
 *    and eight plain vectors take four lanes an entry (`coop`: the untiled hybrid layout with
 *    plain values; cis_coop_part), or fit half of it and the Reference region is in column
 *    tiles with plain values (`tiled`; coded values were not measured there). On an H100 (50
 *    MiB of L2) at a54084f and 684c639, ms a vector in one pass against two (docs/BENCHMARKS.md,
 *    "Passes of 8 vectors against the size of X"):
 *
 *      X's 8 columns                           2 MB     17 MB    34 MB    106 MB (H2O FCI)
 *      untiled, plain values (coop)           0.0300   0.344    0.868    2.00
 *                                             0.0465   0.488    1.007    1.85
 *      tiled                                  0.204    0.532    1.129    2.43
 *                                             0.231    0.691    1.084    2.32
 *
 *    (the paper's matrix at 32K, 256K and 512K rows, then FCI);
 *  - else 4: two passes, each gathering four interleaved values of x per entry from a workspace
 *    half the size. On an H200 FCI took 1.74 against 1.90 ms a vector with plain values and
 *    1.89 against 1.97 coded, the 1M-row matrix in tiles 2.35 against 2.42 (commit 0a30547);
 *    on the H100 above, SELL-32 took two passes on all four matrices (the paper's 0.0907
 *    against 0.1174, coded FCI 1.41 against 1.60). */
static int vectors_per_pass(int64_t bytes, int64_t l2, int resident, int coop, int tiled,
                            int64_t n) {
  const int64_t x8 = n * CIS_HYB_CUDA_MAX_K * 8;
  if (bytes <= l2) return CIS_HYB_CUDA_MAX_K;
  if (resident && ((coop && x8 <= l2) || (tiled && x8 <= l2 / 2))) return CIS_HYB_CUDA_MAX_K;
  return 4;
}

/* The Reference region in column tiles, unless the flags say otherwise, when
 *  - it is wider than CIS_TILE_AUTO_COLS columns (its slice of x, 8 bytes a column, no longer
 *    stays in L1),
 *  - the matrix has at least CIS_TILE_AUTO_ROWS rows (512 groups, one block each: about 4 per
 *    multiprocessor),
 *  - and its rows have at least CIS_TILE_LANES entries per tile on average, enough for the
 *    lanes that take a row's entries of a tile.
 * On an H100 the paper's 1M-row matrix (104,857 Reference columns, 12.6 entries per row and
 * tile, 2048 groups) took 5.35 ms tiled against 8.52 ms. Its 32K-row one (64 groups, so half the
 * multiprocessors idle) took 0.410 ms against 0.133, and on an H200 H2O/6-31G FCI with
 * --ref-size 40000 (0.8 entries per row and tile) 5.09 ms against 3.75 (docs/design-notes.md).
 * And when a group's entries can be counted in 32 bits. (The thresholds: spmv/hyb_place.h.) */
static int tiled_layout(const cis_hyb *h, int flags) {
  const cis_ell *e = &h->ell;
  if (!cis_place_tiled_wanted(h->n, e->boundary, e->nnz, flags)) return 0;
  int32_t longest = 0;
  for (int64_t r = 0; r < e->nrows; r++) longest = CIS_MAX(longest, e->row_len[r]);
  return cis_place_tiled_fits(longest);
}

/* Device bytes of the tiled Reference region: 10 per entry, the offsets, the group starts. */
static int64_t tiled_bytes(const cis_hyb *h) {
  return cis_place_tiled_bytes(h->n, h->ell.boundary, h->ell.nnz);
}

/* ELL columns: 16-bit when boundary <= 65536, and always in tiles (counted from the tile). */
static int index_bits(const cis_hyb *h, int flags) {
  return cis_place_index_bits(tiled_layout(h, flags), h->ell.boundary, flags);
}

/* 16-bit resident Expansion columns when every column fits: 10 bytes a plain entry instead of
 * 12, 4 a coded one instead of 6. (Stored as column - boundary they would fit for
 * n <= boundary + 65536, but the offset cost 4-8% on H2O/6-31G FCI, whose columns are 32-bit
 * anyway: the index arithmetic of every gather changed, docs/design-notes.md.) */
static int csr_bits(const cis_hyb *h, int flags) {
  return cis_place_csr_bits(index_bits(h, flags), h->n);
}

/* Device bytes of the sliced ELL with `bits`-bit columns (and `paper`: 32-bit ones too). */
static int64_t sliced_bytes(const cis_ell *e, int bits, int paper) {
  return cis_place_sliced_bytes(ell_entries(e), e->nslices, e->nrows, bits, paper);
}

int64_t cis_hyb_cuda_min_bytes(const cis_hyb *h, int flags) {
  int paper = (flags & CIS_HYB_CUDA_PAPER) != 0;
  int64_t b = 0;
  /* tiled, the paper's kernel still reads the sliced ELL, with 32-bit columns */
  if (tiled_layout(h, flags))
    b = tiled_bytes(h) + (paper ? sliced_bytes(&h->ell, 32, 0) : 0);
  else
    b = sliced_bytes(&h->ell, index_bits(h, flags), paper);
  return cis_place_min_bytes(h->n, b, csr_bits(h, flags));
}

/* ---- upload ------------------------------------------------------------------------------ */

static cis_err dev_alloc(void *pp, size_t bytes, const char *what) {
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

static void dev_free(void *pp) {
  void **p = (void **)pp;
  if (*p) cudaFree(*p);
  *p = NULL;
}

/* Copy slices [s0, s1) into pinned staging with even widths, narrowed columns and each row's
 * entries in lane order (`to`: room for the widest slice). */
static void ell_pack(const cis_ell *e, const int64_t *dptr, int64_t s0, int64_t s1, int bits,
                     int paper, int lanes, int32_t *to, double *val, void *col, int32_t *col32) {
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
        if (paper && bits == 16) col32[at] = c;
      }
    }
  }
}

static cis_err ell_upload(cis_hyb_cuda *d, const cis_ell *e, const int64_t *dptr, int bits,
                         int paper) {
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
  size_t per = sizeof(double) + (size_t)cb + (paper && bits == 16 ? 4 : 0);
  CIS_TRY(cis_malloc(&to, (size_t)wmax, sizeof *to, "ELL lane order"));
  CIS_CUDA_TRY(cudaMallocHost((void **)&stage, (size_t)chunk * per));
  for (int64_t s0 = 0; s0 < e->nslices;) {
    int64_t s1 = s0 + 1;
    while (s1 < e->nslices && dptr[s1 + 1] - dptr[s0] <= chunk) s1++;
    int64_t m = dptr[s1] - dptr[s0];
    double *val = (double *)stage;
    char *col = stage + (size_t)chunk * 8;
    int32_t *col32 = (int32_t *)(col + (size_t)chunk * cb);
    ell_pack(e, dptr, s0, s1, bits, paper, d->lane_order, to, val, col, col32);
    CIS_CUDA_TRY(cudaMemcpy(d->ell_val + dptr[s0], val, (size_t)m * 8, cudaMemcpyHostToDevice));
    CIS_CUDA_TRY(cudaMemcpy((char *)d->ell_col + (size_t)dptr[s0] * cb, col, (size_t)m * cb,
                            cudaMemcpyHostToDevice));
    if (paper && bits == 16)
      CIS_CUDA_TRY(cudaMemcpy(d->paper_col + dptr[s0], col32, (size_t)m * 4,
                              cudaMemcpyHostToDevice));
    s0 = s1;
  }
cleanup:
  if (stage) cudaFreeHost(stage);
  cis_free(&to);
  return err;
}

/* The sliced ELL with `bits`-bit columns; tiled, it is there for the paper's kernel only. */
static cis_err ell_create(cis_hyb_cuda *d, const cis_ell *e, int bits, int flags) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  int64_t *dptr = NULL;
  int32_t *dwidth = NULL;
  int paper = (flags & CIS_HYB_CUDA_PAPER) != 0, cb = bits / 8;
  int64_t m = 0;
  CIS_TRY(device_slice_ptr(e, &dptr));
  CIS_TRY(cis_malloc(&dwidth, (size_t)e->nslices, sizeof *dwidth, "device ELL slice widths"));
  for (int64_t s = 0; s < e->nslices; s++)
    dwidth[s] = (int32_t)cis_place_slice_width(e->slice_width[s]);
  m = dptr[e->nslices] + 2;
  CIS_TRY(dev_alloc(&d->slice_ptr, (size_t)(e->nslices + 1) * 8, "ELL slice offsets"));
  CIS_TRY(dev_alloc(&d->slice_width, (size_t)e->nslices * 4, "ELL slice widths"));
  CIS_TRY(dev_alloc(&d->row_len, (size_t)e->nrows * 4, "ELL row lengths"));
  CIS_TRY(dev_alloc(&d->ell_val, (size_t)m * 8, "ELL values"));
  CIS_TRY(dev_alloc(&d->ell_col, (size_t)m * cb, "ELL column indices"));
  CIS_CUDA_TRY(cudaMemset(d->ell_val, 0, (size_t)m * 8));
  CIS_CUDA_TRY(cudaMemset(d->ell_col, 0, (size_t)m * cb));
  if (paper && bits == 16) {
    CIS_TRY(dev_alloc(&d->paper_col, (size_t)m * 4, "ELL 32-bit column indices"));
    CIS_CUDA_TRY(cudaMemset(d->paper_col, 0, (size_t)m * 4));
    d->info.paper_bytes = m * 4;
  } else if (paper) {
    d->paper_col = (int32_t *)d->ell_col;
  }
  CIS_CUDA_TRY(cudaMemcpy(d->slice_ptr, dptr, (size_t)(e->nslices + 1) * 8,
                          cudaMemcpyHostToDevice));
  CIS_CUDA_TRY(cudaMemcpy(d->slice_width, dwidth, (size_t)e->nslices * 4,
                          cudaMemcpyHostToDevice));
  CIS_CUDA_TRY(cudaMemcpy(d->row_len, e->row_len, (size_t)e->nrows * 4,
                          cudaMemcpyHostToDevice));
  CIS_TRY(ell_upload(d, e, dptr, bits, paper));
  if (d->tiled)
    d->info.paper_bytes = sliced_bytes(e, bits, 0);
  else
    d->info.ell_bytes = sliced_bytes(e, bits, 0);
cleanup:
  cis_free(&dptr);
  cis_free(&dwidth);
  return err;
}

/* The Reference region in column tiles (d->tiled): every group's offsets counted on OpenMP
 * threads, then its entries packed into pinned staging, a chunk of groups at a time, and
 * copied from there. */
static cis_err tiles_create(cis_hyb_cuda *d, const cis_ell *e) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  const int64_t ng = d->ngroups, nt = d->ntiles, per = nt * CIS_TILE_ROWS + 1;
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
  CIS_TRY(dev_alloc(&d->tbase, (size_t)(ng + 1) * 8, "tile group starts"));
  CIS_TRY(dev_alloc(&d->toff, (size_t)(ng * per) * 4, "tile offsets"));
  CIS_TRY(dev_alloc(&d->tcol, (size_t)(base[ng] + 1) * 2, "tiled Reference columns"));
  CIS_TRY(dev_alloc(&d->tval, (size_t)(base[ng] + 1) * 8, "tiled Reference values"));
  CIS_CUDA_TRY(cudaMemcpy(d->tbase, base, (size_t)(ng + 1) * 8, cudaMemcpyHostToDevice));
  CIS_CUDA_TRY(cudaMemcpy(d->toff, off, (size_t)(ng * per) * 4, cudaMemcpyHostToDevice));
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
    CIS_CUDA_TRY(cudaMemcpy(d->tval + base[g0], val, (size_t)m * 8, cudaMemcpyHostToDevice));
    CIS_CUDA_TRY(cudaMemcpy(d->tcol + base[g0], col, (size_t)m * 2, cudaMemcpyHostToDevice));
    g0 = g1;
  }
  d->info.ell_bytes = tiled_bytes(d->h);
cleanup:
  if (stage) cudaFreeHost(stage);
  cis_free(&base);
  cis_free(&off);
  cis_free(&cursor);
  return err;
}

/* The current device's L2 cache, in bytes. */
static cis_err device_l2(int64_t *bytes) {
  int dev = 0, l2 = 0;
  CIS_CUDA(cudaGetDevice(&dev));
  CIS_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  *bytes = l2;
  return CIS_OK;
}

/* Whether block b may stay resident: unless every block is streamed, a block the host caches,
 * or one it can regenerate (once, at upload: the device copy needs no host copy). */
static int may_reside(const cis_hyb *h, int64_t b, int flags) {
  if (flags & CIS_HYB_CUDA_NO_CACHE) return 0;
  return cis_csr_block_cached(&h->blocks[b]) || h->regen != NULL;
}

/* Whether the resident entries are to be coded, when the blocks that may be resident take
 * `bytes` plain: unless the caller wants plain values (the paper's kernel reads the resident
 * CSR's values) or they would be read from L2 anyway: on H2O/6-31G CISDT (57 MB against a 63 MB
 * L2) the coded product took 32.5 us against 28.7 us plain; on FCI (13.6 GB) 2.94 ms against
 * 3.67 ms. */
static cis_err codes_pay(int flags, int64_t bytes, int *coded) {
  int64_t l2 = 0;
  if (!(flags & (CIS_HYB_CUDA_PLAIN | CIS_HYB_CUDA_PAPER | CIS_HYB_CUDA_NO_CACHE |
                 CIS_HYB_CUDA_CODED)))
    CIS_CALL(device_l2(&l2));
  *coded = cis_place_codes_pay(flags, bytes, l2);
  return CIS_OK;
}

/* The same for the blocks of d's matrix that may be resident (may_reside). */
static cis_err want_coded(const cis_hyb_cuda *d, int flags, int *coded) {
  const cis_hyb *h = d->h;
  int64_t bytes = h->regen ? 12 * h->nnz_exp : 0;
  for (int64_t b = 0; b < h->nblocks && !h->regen; b++)
    if (cis_csr_block_cached(&h->blocks[b])) bytes += h->blocks[b].nnz * 12;
  return codes_pay(flags, bytes, coded);
}

/* The census of the blocks that may be resident, and the dictionary: the host's census when it
 * took one while building the matrix (with its dictionary, when the entries are to be coded),
 * else one taken here (spmv/census.h), a block the host does not cache regenerated for it (and
 * again when it is stored). */
static cis_err census_setup(cis_hyb_cuda *d, int flags) {
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
  d->dict = coded && d->cen->dict.size ? &d->cen->dict : NULL;
  d->info.dict_cover = d->cen->dict.cover;
  return CIS_OK;
}

/* Device bytes of a resident block: 8 per plain entry and 2 per coded one, plus its column. */
static int64_t block_bytes(const cis_hyb_cuda *d, int64_t b) {
  return cis_place_entries_bytes(d->cen->bnnz[b], d->dict ? d->cen->bcoded[b] : 0, d->csr_bits);
}

/* Device bytes of the coded part besides its entries: row pointers, padding, the table. */
static int64_t coded_overhead(const cis_hyb_cuda *d) {
  return cis_place_coded_overhead(d->h->n, d->csr_bits, d->dict ? d->dict->size : 0);
}

/* Which blocks stay resident: those that may (may_reside), in order, while they fit in `avail`
 * bytes. */
static cis_err choose_resident(cis_hyb_cuda *d, int64_t avail, int flags, char *resident) {
  const cis_hyb *h = d->h;
  int64_t row = 0;
  if (d->dict && avail < coded_overhead(d)) d->dict = NULL;
  if (d->dict) avail -= coded_overhead(d);
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
  if (d->csr_bits == 16)
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
    cis_lane_order(rp[r], rp[r + 1], 2, d->lane_order, tox);
    if (crp) cis_lane_order(crp[r], crp[r + 1], 4, d->lane_order, toc);
    for (int64_t p = blk->rowptr[l]; p < blk->rowptr[l + 1]; p++) {
      int code = crp ? cis_vdict_code(d->dict, blk->val[p]) : -1;
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
  int64_t total = 0, biggest = 0, ntask = 0, cap, maxtask, cb = d->csr_bits / 8;
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
    CIS_CUDA_TRY(cudaMemcpyAsync(d->csr_val + x0, xval, (size_t)(x1 - x0) * 8,
                                 cudaMemcpyHostToDevice, cs));
    CIS_CUDA_TRY(cudaMemcpyAsync((char *)d->csr_col + x0 * cb, xcol, (size_t)(x1 - x0) * cb,
                                 cudaMemcpyHostToDevice, cs));
    if (crp) {
      CIS_CUDA_TRY(cudaMemcpyAsync((char *)d->ccol + c0 * cb, ccol, (size_t)(c1 - c0) * cb,
                                   cudaMemcpyHostToDevice, cs));
      CIS_CUDA_TRY(cudaMemcpyAsync(d->ccode + c0, ccode, (size_t)(c1 - c0) * 2,
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
static cis_err table_upload(cis_hyb_cuda *d) {
  CIS_CALL(dev_alloc(&d->ctable, (size_t)d->dict->size * 8, "value dictionary"));
  CIS_CUDA(cudaMemcpy(d->ctable, d->dict->table, (size_t)d->dict->size * 8,
                      cudaMemcpyHostToDevice));
  return CIS_OK;
}

/* The resident Expansion blocks as one CSR over all rows (rows of other blocks empty): with a
 * dictionary, a plain part (rp) and a coded part (crp); `paper`: 32-bit columns for the paper's
 * kernel too. The entries come from the host (blocks_upload), or from the build's pool. */
static cis_err pool_place(cis_hyb_cuda *d, cis_hyb_cuda_pool *p);

static cis_err csr_upload(cis_hyb_cuda *d, const char *resident, int paper,
                          cis_hyb_cuda_pool *pool) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  const cis_hyb *h = d->h;
  int coded = d->dict != NULL;
  int64_t cb = d->csr_bits / 8;
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
  CIS_TRY(dev_alloc(&d->rowptr, (size_t)(h->n + 1) * 8, "CSR row pointers"));
  CIS_TRY(dev_alloc(&d->csr_col, (size_t)(nnz + 2) * cb, "CSR column indices"));
  CIS_TRY(dev_alloc(&d->csr_val, (size_t)(nnz + 2) * 8, "CSR values"));
  CIS_CUDA_TRY(cudaMemset(d->csr_col, 0, (size_t)(nnz + 2) * cb));
  CIS_CUDA_TRY(cudaMemset(d->csr_val, 0, (size_t)(nnz + 2) * 8));
  CIS_CUDA_TRY(cudaMemcpy(d->rowptr, rp, (size_t)(h->n + 1) * 8, cudaMemcpyHostToDevice));
  if (coded) {
    CIS_TRY(dev_alloc(&d->crowptr, (size_t)(h->n + 1) * 8, "coded CSR row pointers"));
    CIS_TRY(dev_alloc(&d->ccol, (size_t)(cnnz + 4) * cb, "coded CSR column indices"));
    CIS_TRY(dev_alloc(&d->ccode, (size_t)(cnnz + 4) * 2, "coded CSR value codes"));
    CIS_CUDA_TRY(cudaMemset(d->ccol, 0, (size_t)(cnnz + 4) * cb));
    CIS_CUDA_TRY(cudaMemset(d->ccode, 0, (size_t)(cnnz + 4) * 2));
    CIS_CUDA_TRY(cudaMemcpy(d->crowptr, crp, (size_t)(h->n + 1) * 8, cudaMemcpyHostToDevice));
    CIS_TRY(table_upload(d));
  }
  CIS_TRY(pool ? pool_place(d, pool) : blocks_upload(d, resident, rp, crp));
  if (paper && d->csr_bits == 16) {
    CIS_TRY(dev_alloc(&d->paper_csr_col, (size_t)(nnz + 2) * 4, "CSR 32-bit column indices"));
    cis_widen_kernel<<<(unsigned)((nnz + 2 + 255) / 256), 256>>>(
        (const uint16_t *)d->csr_col, nnz + 2, d->paper_csr_col);
    CIS_CUDA_TRY(cudaGetLastError());
    d->info.paper_bytes += (nnz + 2) * 4;
  } else if (paper) {
    d->paper_csr_col = (int32_t *)d->csr_col;
  }
  CIS_TRY(cis_malloc(&d->stream_ids, (size_t)ns, sizeof *d->stream_ids, "streamed block list"));
  for (int64_t b = 0; b < h->nblocks; b++)
    if (!resident[b]) d->stream_ids[d->nstream++] = b;
  d->info.csr_bytes =
      (nnz + 2) * (8 + cb) + (h->n + 1) * 8 + (coded ? cnnz * (2 + cb) + coded_overhead(d) : 0);
  d->info.coded_nnz = cnnz;
  d->info.dict_size = coded ? d->dict->size : 0;
  d->info.resident_blocks = h->nblocks - ns;
  d->info.streamed_blocks = ns;
cleanup:
  cis_free(&rp);
  cis_free(&crp);
  return err;
}

/* ---- SELL-32 ------------------------------------------------------------------------------
 * The whole matrix as SELL-32, a lane per row (hyb_kernels.cuh, cis_sell_kernel), instead of
 * the hybrid layout: with CIS_HYB_CUDA_SELL wherever it can be; by default when the caller asked
 * for no layout of its own, the matrix has at least CIS_SELL_AUTO_ROWS rows (256 blocks of 1024
 * rows: two for each multiprocessor of an H100; the paper's 32K-row matrix, in 32 blocks, took
 * 0.28 ms against 0.12 for the hybrid kernel) and padding adds at most a quarter to its entries
 * (H2O/6-31G CISDT would take 70% more). It can be when every Expansion block is resident and
 * the budget holds the hybrid upload it is built from beside it. With coded values (a CI matrix
 * larger than twice the L2 cache) the coded entries go to a second SELL-32 of columns and
 * 16-bit codes. On an H100 it took the paper's 1M-row matrix in 4.69 ms against 5.31 in the
 * hybrid layout (Reference region in column tiles), and H2O/6-31G FCI with coded values in 2.93
 * ms against 3.05, four vectors in 1.52 ms a vector against 1.90 (docs/BENCHMARKS.md). */

/* Entries stored, padding included: plain ones (12 bytes: a 32-bit column and a value) and
 * coded ones (6 bytes: a 32-bit column and a 16-bit code). */
typedef struct {
  int64_t slots, cslots;
} sell_plan;

static int64_t sell_bytes(const cis_hyb_cuda *d, const sell_plan *p) {
  int64_t n = d->h->n, parts = d->dict ? 2 : 1;
  return (p->slots + 1) * 12 + (d->dict ? (p->cslots + 1) * 6 + d->dict->size * 8 : 0) +
         parts * (n * 4 + ((n + 31) / 32 + 1) * 8 + (n + CIS_SELL_BLOCK - 1) / CIS_SELL_BLOCK * 4);
}

/* Row r's SELL-32 entries (every block resident): coded ones, with a dictionary; the others,
 * its ELL part and the rest of its Expansion part. */
static int64_t sell_row_coded(const cis_hyb_cuda *d, int64_t r) {
  return d->dict ? d->cen->ncoded[r] : 0;
}

static int64_t sell_row_plain(const cis_hyb_cuda *d, int64_t r) {
  return (int64_t)d->h->ell.row_len[r] + d->cen->rlen[r] - sell_row_coded(d, r);
}

static void sell_count(const cis_hyb_cuda *d, sell_plan *p) {
  p->slots = p->cslots = 0;
  for (int64_t r0 = 0; r0 < d->h->n; r0 += 32) {
    int64_t w = 0, cw = 0;
    for (int64_t r = r0; r < CIS_MIN(r0 + 32, d->h->n); r++) {
      w = CIS_MAX(w, sell_row_plain(d, r));
      cw = CIS_MAX(cw, sell_row_coded(d, r));
    }
    p->slots += 32 * w;
    p->cslots += 32 * cw;
  }
}

/* Whether the upload is SELL-32 (after the census and the choice of resident blocks). */
static int sell_layout(const cis_hyb_cuda *d, int flags, const char *resident, sell_plan *p) {
  const cis_hyb *h = d->h;
  int force = (flags & CIS_HYB_CUDA_SELL) != 0;
  int64_t nnz = h->ell.nnz;
  p->slots = p->cslots = 0;
  if (!cis_place_sell_wanted(h->n, flags)) return 0;
  for (int64_t b = 0; b < h->nblocks; b++) {
    if (!resident[b]) return 0;
    nnz += d->cen->bnnz[b];
  }
  sell_count(d, p);
  if (!force && 4 * (p->slots + p->cslots) > 5 * nnz) return 0;
  /* the hybrid upload it is built from, at most 12 bytes an Expansion entry */
  int64_t hybrid = sliced_bytes(&h->ell, index_bits(h, flags | CIS_HYB_CUDA_UNTILED), 0) +
                   (nnz - h->ell.nnz + 6) * 12 + 2 * (h->n + 1) * 8 +
                   (d->dict ? d->dict->size * 8 : 0);
  return hybrid + sell_bytes(d, p) + h->n * (int64_t)CIS_HYB_CUDA_MAX_K * 8 <= d->info.budget;
}

/* ---- the build's pool ---------------------------------------------------------------------
 * A GPU run that keeps no host copy of its matrix generates every Expansion block in the build
 * (for the census) and, without the pool, once more in the upload, which took 0.92-1.10 s of a
 * 2.1-2.7 s run on H2O/6-31G FCI (H100, 16 host threads). The pool is the build's sink
 * (spmv/hyb.h): each block is counted for the census and split on its generating thread, one
 * dictionary lookup an entry for both (cis_census_split), into plain entries (a value and a
 * 32-bit column) and coded ones (a code and a column), each row's in its own order, into the
 * thread's pinned staging, and copied to device arrays at the next free places: blocks lie in
 * the order they came, a row's entries together. The
 * upload then fills SELL-32 from these arrays (pool_adopt; cis_sell_fill_kernel reads each row
 * from its start), or places their entries in the resident CSR on the device (pool_place,
 * cis_pool_place_kernel), instead of regenerating. */

/* A building thread's staging: values, columns, coded columns, codes; the copy that read it
 * (an event not yet recorded counts as complete). */
typedef struct {
  char *pinned;
  size_t cap;
  cudaEvent_t copied;
} pool_stage;

struct cis_hyb_cuda_pool {
  cis_block_sink sink; /* first: the build's cis_block_sink * is this pool */
  int device, flags, begun;
  int64_t device_bytes;
  cis_census *cen;
  const cis_vdict *dict; /* the census's, where the upload will code values; else NULL */
  int64_t *pbase, *cbase; /* per block: its first plain and coded entry in the arrays */
  int64_t pcap, ccap, pused, cused, stored;
  double *pval;
  int32_t *pcol, *ccol;
  uint16_t *ccode;
  cudaStream_t copy;
  int nstage;
  pool_stage *stage;
  int failed;
  char why[200];       /* why blocks were dropped (failed), or the pool declined */
  double seconds;      /* the building threads' time in pool_block, summed */
};

/* The pool's device arrays, in bytes (0 once an upload took or freed them). */
static int64_t pool_device_bytes(const cis_hyb_cuda_pool *p) {
  return p && p->pval ? p->pcap * 12 + p->ccap * 6 : 0;
}

/* The first reason blocks could not be stored; later blocks are dropped too. */
static void pool_fail(cis_hyb_cuda_pool *p, const char *fmt, ...) {
#pragma omp critical(cis_hyb_cuda_pool)
  if (!p->failed) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->why, sizeof p->why, fmt, ap);
    va_end(ap);
#pragma omp atomic write
    p->failed = 1;
  }
}

/* The device arrays, the staging and the copy stream (the arrays only where no upload took
 * them); safe to call twice. */
static void pool_release(cis_hyb_cuda_pool *p) {
  if (p->copy) cudaStreamSynchronize(p->copy);
  dev_free(&p->pval);
  dev_free(&p->pcol);
  dev_free(&p->ccol);
  dev_free(&p->ccode);
  for (int i = 0; p->stage && i < p->nstage; i++) {
    if (p->stage[i].pinned) cudaFreeHost(p->stage[i].pinned);
    if (p->stage[i].copied) cudaEventDestroy(p->stage[i].copied);
  }
  cis_free(&p->stage);
  p->nstage = 0;
  if (p->copy) cudaStreamDestroy(p->copy);
  p->copy = NULL;
  (void)cudaGetLastError();
}

static int pool_begin(cis_block_sink *s, const cis_hyb *h, int64_t est, cis_census *c,
                      int nthreads) {
  cis_hyb_cuda_pool *p = (cis_hyb_cuda_pool *)s;
  int coded = 0;
  if (p->begun) return 0; /* one build per pool */
  p->begun = 1;
  if (p->flags & (CIS_HYB_CUDA_PAPER | CIS_HYB_CUDA_SPLIT | CIS_HYB_CUDA_NO_CACHE)) {
    snprintf(p->why, sizeof p->why, "not taken: the upload keeps a layout of its own");
    return 0;
  }
  if (cudaSetDevice(p->device) != cudaSuccess || codes_pay(p->flags, 12 * est, &coded) != CIS_OK) {
    snprintf(p->why, sizeof p->why, "not taken: GPU %d not usable", p->device);
    cis_error_clear();
    (void)cudaGetLastError();
    return 0;
  }
  /* room for the sampled entries and more, and the layout built beside them */
  double cover = coded && c->dict.size ? c->dict.cover : 0.0;
  p->dict = cover > 0.0 ? &c->dict : NULL;
  if (!cis_place_pool_fits(est, cover, p->device_bytes, &p->pcap, &p->ccap)) {
    char b1[32], b2[32];
    snprintf(p->why, sizeof p->why, "not taken: %s of blocks, with the layout built beside "
             "them, exceed the %s the GPU offers",
             cis_format_bytes((double)p->pcap * 12 + 6.0 * p->ccap, b1, sizeof b1),
             cis_format_bytes((double)p->device_bytes, b2, sizeof b2));
    p->pcap = p->ccap = 0;
    return 0;
  }
  p->cen = c;
  p->nstage = nthreads;
  if (cis_calloc(&p->pbase, (size_t)CIS_MAX(h->nblocks, (int64_t)1), sizeof *p->pbase, "pool") ||
      cis_calloc(&p->cbase, (size_t)CIS_MAX(h->nblocks, (int64_t)1), sizeof *p->cbase, "pool") ||
      cis_calloc(&p->stage, (size_t)nthreads, sizeof *p->stage, "pool staging") ||
      dev_alloc(&p->pval, (size_t)p->pcap * 8, "pool values") ||
      dev_alloc(&p->pcol, (size_t)p->pcap * 4, "pool columns") ||
      dev_alloc(&p->ccol, (size_t)p->ccap * 4, "pool coded columns") ||
      dev_alloc(&p->ccode, (size_t)p->ccap * 2, "pool codes")) {
    snprintf(p->why, sizeof p->why, "not taken: %s", cis_error_message());
    cis_error_clear();
    pool_release(p);
    return 0;
  }
  cudaError_t e = cudaStreamCreateWithFlags(&p->copy, cudaStreamNonBlocking);
  for (int i = 0; i < nthreads && e == cudaSuccess; i++)
    e = cudaEventCreateWithFlags(&p->stage[i].copied, cudaEventDisableTiming);
  if (e != cudaSuccess) {
    snprintf(p->why, sizeof p->why, "not taken: %s", cudaGetErrorName(e));
    pool_release(p);
    return 0;
  }
  p->why[0] = 0;
  return 1;
}

/* Block b: counted in the census and split into the thread's staging (values, columns, coded
 * columns, codes; room for every entry in each) in one pass over its entries
 * (cis_census_split), then copied to the next free places in the device arrays. A block the
 * pool cannot keep is still counted. */
static void pool_block(cis_block_sink *s, int64_t b, const cis_csr_block *rows) {
  cis_hyb_cuda_pool *p = (cis_hyb_cuda_pool *)s;
  int me = omp_get_thread_num(), failed;
  double t0 = cis_wtime();
#pragma omp atomic read
  failed = p->failed;
  if (failed || me >= p->nstage) {
    cis_census_block(p->cen, b, rows);
    if (!failed) pool_fail(p, "thread %d of a build announced with %d", me, p->nstage);
    return;
  }
  pool_stage *st = &p->stage[me];
  int64_t nnz = rows->nnz;
  size_t need = (size_t)nnz * 18;
  cudaError_t e = cudaSetDevice(p->device);
  if (e == cudaSuccess) e = cudaEventSynchronize(st->copied);
  if (e == cudaSuccess && need > st->cap) {
    if (st->pinned) cudaFreeHost(st->pinned);
    st->pinned = NULL;
    st->cap = 0;
    e = cudaMallocHost((void **)&st->pinned, need + need / 4);
    if (e == cudaSuccess) st->cap = need + need / 4;
  }
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    cis_census_block(p->cen, b, rows);
    return pool_fail(p, "block %lld: %s", (long long)b, cudaGetErrorName(e));
  }
  double *val = (double *)st->pinned;
  int32_t *col = (int32_t *)(st->pinned + nnz * 8), *ccol = col + nnz;
  uint16_t *code = (uint16_t *)(ccol + nnz);
  int64_t nc = cis_census_split(p->cen, b, rows, p->dict != NULL, val, col, ccol, code);
  int64_t np = nnz - nc, pb, cb;
#pragma omp atomic capture
  {
    pb = p->pused;
    p->pused += np;
  }
#pragma omp atomic capture
  {
    cb = p->cused;
    p->cused += nc;
  }
  if (pb + np > p->pcap || cb + nc > p->ccap)
    return pool_fail(p, "the blocks outgrew the room the build's sample gave them (%lld and "
                     "%lld entries)", (long long)p->pcap, (long long)p->ccap);
  if (np > 0) e = cudaMemcpyAsync(p->pval + pb, val, (size_t)np * 8, cudaMemcpyHostToDevice, p->copy);
  if (np > 0 && e == cudaSuccess)
    e = cudaMemcpyAsync(p->pcol + pb, col, (size_t)np * 4, cudaMemcpyHostToDevice, p->copy);
  if (nc > 0 && e == cudaSuccess)
    e = cudaMemcpyAsync(p->ccol + cb, ccol, (size_t)nc * 4, cudaMemcpyHostToDevice, p->copy);
  if (nc > 0 && e == cudaSuccess)
    e = cudaMemcpyAsync(p->ccode + cb, code, (size_t)nc * 2, cudaMemcpyHostToDevice, p->copy);
  if (e == cudaSuccess) e = cudaEventRecord(st->copied, p->copy);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return pool_fail(p, "block %lld: %s", (long long)b, cudaGetErrorName(e));
  }
  p->pbase[b] = pb;
  p->cbase[b] = cb;
  double dt = cis_wtime() - t0;
#pragma omp atomic
  p->stored++;
#pragma omp atomic
  p->seconds += dt;
}

cis_err cis_hyb_cuda_pool_create(int device, int64_t device_bytes, int flags,
                                 cis_block_sink **out) {
  cis_hyb_cuda_pool *p = NULL;
  *out = NULL;
  CIS_CALL(cis_calloc(&p, 1, sizeof *p, "the build's pool"));
  p->sink.begin = pool_begin;
  p->sink.block = pool_block;
  p->device = device < 0 ? 0 : device;
  p->device_bytes = device_bytes;
  p->flags = flags;
  *out = &p->sink;
  return CIS_OK;
}

void cis_hyb_cuda_pool_destroy(cis_block_sink **s) {
  if (!*s) return;
  cis_hyb_cuda_pool *p = (cis_hyb_cuda_pool *)*s;
  pool_release(p);
  cis_free(&p->pbase);
  cis_free(&p->cbase);
  cis_free(&p);
  *s = NULL;
}

/* The build's pool of h, where it has one. */
static cis_hyb_cuda_pool *pool_of(const cis_hyb *h) {
  return h->sink && h->sink->begin == pool_begin ? (cis_hyb_cuda_pool *)h->sink : NULL;
}

/* Whether the upload takes its Expansion entries from the pool: it holds every block, counted
 * by the census the upload uses, coded as the upload codes them, and every block stays
 * resident. Else why not, in d->info.pool_note. */
static int pool_usable(cis_hyb_cuda *d, const cis_hyb_cuda_pool *p, const char *resident,
                       int flags) {
  int all = 1;
  for (int64_t b = 0; b < d->h->nblocks; b++) all = all && resident[b];
  const char *why = NULL;
  if (p->failed)
    why = p->why;
  else if (!p->pval)
    why = p->why[0] ? p->why : "not taken";
  else if (p->stored != d->h->nblocks || p->cen != d->cen)
    why = "it does not hold every block the census counted";
  else if ((p->dict != NULL) != (d->dict != NULL))
    why = "its values are coded where the upload's are not, or the reverse";
  else if (!all)
    why = "not every block stays on the GPU";
  else if (flags & (CIS_HYB_CUDA_PAPER | CIS_HYB_CUDA_SPLIT))
    why = "the upload keeps a layout of its own for the paper's kernel or the split";
  if (why) snprintf(d->info.pool_note, sizeof d->info.pool_note, "%s", why);
  return why == NULL;
}

/* Each row's first plain and coded entry in the pool's arrays, from the census and the blocks'
 * places, on the device: *dps, and with a dictionary *dcs (n + 1 entries each). */
static cis_err pool_starts(const cis_hyb_cuda *d, const cis_hyb_cuda_pool *p, int64_t **dps,
                           int64_t **dcs) {
  cis_err err = CIS_OK;
  const cis_hyb *h = d->h;
  const cis_census *c = d->cen;
  int64_t *ps = NULL, *cs = NULL;
  CIS_CUDA(cudaStreamSynchronize(p->copy));
  CIS_CLEANUP_FUNCTION;
  CIS_TRY(cis_malloc(&ps, (size_t)h->n + 1, sizeof *ps, "pool row starts"));
  CIS_TRY(cis_malloc(&cs, (size_t)h->n + 1, sizeof *cs, "pool coded row starts"));
  for (int64_t b = 0; b < h->nblocks; b++) {
    const cis_csr_block *blk = &h->blocks[b];
    int64_t at = p->pbase[b], cat = p->cbase[b];
    for (int64_t r = blk->row0; r < blk->row0 + blk->nrows; r++) {
      int64_t nc = d->dict ? c->ncoded[r] : 0;
      ps[r] = at;
      cs[r] = cat;
      at += c->rlen[r] - nc;
      cat += nc;
    }
  }
  ps[h->n] = p->pused;
  cs[h->n] = p->cused;
  CIS_TRY(dev_alloc(dps, (size_t)(h->n + 1) * 8, "pool row starts"));
  CIS_CUDA_TRY(cudaMemcpy(*dps, ps, (size_t)(h->n + 1) * 8, cudaMemcpyHostToDevice));
  if (d->dict) {
    CIS_TRY(dev_alloc(dcs, (size_t)(h->n + 1) * 8, "pool coded row starts"));
    CIS_CUDA_TRY(cudaMemcpy(*dcs, cs, (size_t)(h->n + 1) * 8, cudaMemcpyHostToDevice));
  }
cleanup:
  cis_free(&ps);
  cis_free(&cs);
  return err;
}

/* What the report says of an upload that took its Expansion entries from the pool. */
static void pool_taken(cis_hyb_cuda *d, const cis_hyb_cuda_pool *p) {
  d->info.pool_bytes = pool_device_bytes(p);
  d->info.pool_seconds = p->seconds;
  d->info.built_blocks = d->h->nblocks;
  d->info.regenerated_blocks = 0;
}

/* The pool's arrays as the resident Expansion CSR of an upload that turns it into SELL-32 at
 * once (sell_create, which frees them): each row's start (the row pointers' only use there),
 * 32-bit columns, the value table. */
static cis_err pool_adopt(cis_hyb_cuda *d, cis_hyb_cuda_pool *p) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  const cis_hyb *h = d->h;
  CIS_TRY(pool_starts(d, p, &d->rowptr, &d->crowptr));
  if (d->dict) CIS_TRY(table_upload(d));
  pool_taken(d, p);
  d->csr_val = p->pval;
  d->csr_col = p->pcol;
  d->ccol = p->ccol;
  d->ccode = p->ccode;
  p->pval = NULL;
  p->pcol = p->ccol = NULL;
  p->ccode = NULL;
  d->csr_bits = 32;
  d->info.coded_nnz = d->dict ? p->cused : 0;
  d->info.dict_size = d->dict ? d->dict->size : 0;
  d->info.resident_blocks = h->nblocks;
  d->info.streamed_blocks = 0;
  CIS_TRY(cis_malloc(&d->stream_ids, 1, sizeof *d->stream_ids, "streamed block list"));
cleanup:
  pool_release(p);
  return err;
}

/* The pool's entries into the resident Expansion CSR that csr_upload laid out (its row
 * pointers on the device), in lane order, on the device (cis_pool_place_kernel); then the
 * pool's arrays are freed. */
template <typename CE>
static void pool_place_launch(cis_hyb_cuda *d, const cis_hyb_cuda_pool *p, const int64_t *ps,
                              const int64_t *cs) {
  cis_pool_place_kernel<CE><<<(unsigned)((d->n + 255) / 256), 256>>>(
      d->n, d->lane_order, ps, d->rowptr, p->pcol, p->pval, (CE *)d->csr_col, d->csr_val, cs,
      d->dict ? d->crowptr : NULL, p->ccol, p->ccode, (CE *)d->ccol, d->ccode);
}

static cis_err pool_place(cis_hyb_cuda *d, cis_hyb_cuda_pool *p) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  int64_t *ps = NULL, *cs = NULL;
  CIS_TRY(pool_starts(d, p, &ps, &cs));
  if (d->csr_bits == 16)
    pool_place_launch<uint16_t>(d, p, ps, cs);
  else
    pool_place_launch<int32_t>(d, p, ps, cs);
  CIS_CUDA_TRY(cudaGetLastError());
  CIS_CUDA_TRY(cudaDeviceSynchronize());
  pool_taken(d, p);
cleanup:
  dev_free(&ps);
  dev_free(&cs);
  pool_release(p);
  return err;
}

/* ---- a small matrix split over a cluster -------------------------------------------------
 * The single-vector product of a small matrix is bound by the latency of its few rows, not by
 * its bytes: H2O/6-31G CISDT (25,761 rows) took 29.1 us on an H100 in the hybrid layout, where
 * reading its bytes alone takes 20.5. Split by columns over the blocks of a cluster (spmv/split.h,
 * cis_split_kernel), with x's part and the values in shared memory and 4 bytes an entry, it took
 * 20.4 us (docs/design-notes.md). With CIS_HYB_CUDA_SPLIT the split is built on the host beside
 * the hybrid upload (which products of several vectors keep using) where every Expansion block
 * is resident, the matrix has at most CIS_SPLIT_MAXP * CIS_SPLIT_PART rows and
 * CIS_SPLIT_MAX_NNZ entries, the device launches clusters, the layout fits a block's shared
 * memory and the budget holds both. Not by default: building it takes longer than it saves over
 * a solve (0.08 s on 16 threads for CISDT, where cisolve's ten products took 0.03 ms each;
 * docs/gpu.md). Its parts: two more than the fewest of at most CIS_SPLIT_PART columns, at least
 * 3, at most CIS_SPLIT_MAXP (on CISDT 3 and 4 parts took 20.7 us, 2 took 22.1, 8 took 21.9);
 * its clusters: as many as are resident at once. */
#define CIS_SPLIT_MAX_NNZ ((int64_t)1 << 25)
#define CIS_SPLIT_NEVER (CIS_HYB_CUDA_PAPER | CIS_HYB_CUDA_NO_CACHE | CIS_HYB_CUDA_SELL)

static void split_free(cis_hyb_cuda *d) {
  dev_free(&d->sv.blk);
  dev_free(&d->sv.first);
  dev_free(&d->sv.w);
  dev_free(&d->sv.esc);
  dev_free(&d->sv.table);
  cis_vdict_free(&d->split_dict);
  d->split = 0;
}

template <typename T>
static cis_err split_put(T **dst, const T *src, int64_t count, const char *what) {
  CIS_CALL(dev_alloc(dst, (size_t)CIS_MAX(count, (int64_t)1) * sizeof(T), what));
  if (count) CIS_CUDA(cudaMemcpy(*dst, src, (size_t)count * sizeof(T), cudaMemcpyHostToDevice));
  return CIS_OK;
}

/* The launch of a split product: a cluster of d->split blocks per group. */
static cudaLaunchConfig_t split_config(const cis_hyb_cuda *d, cudaLaunchAttribute *at) {
  cudaLaunchConfig_t cfg = {};
  at->id = cudaLaunchAttributeClusterDimension;
  at->val.clusterDim.x = (unsigned)d->split;
  at->val.clusterDim.y = 1;
  at->val.clusterDim.z = 1;
  cfg.gridDim = dim3((unsigned)(d->split * d->split_groups));
  cfg.blockDim = dim3(CIS_SPLIT_T);
  cfg.dynamicSmemBytes = d->split_shared;
  cfg.stream = d->stream;
  cfg.attrs = at;
  cfg.numAttrs = 1;
  return cfg;
}

/* Build and upload the split where it can be (after the hybrid upload, every block resident). */
static cis_err split_create(cis_hyb_cuda *d, int flags) {
  cis_err err = CIS_OK;
  const cis_hyb *h = d->h;
  int64_t nnz = h->ell.nnz;
  cis_csr whole;
  memset(&whole, 0, sizeof whole);
  cis_split sp;
  memset(&sp, 0, sizeof sp);
  int dev = 0, cluster = 0, fits = 0, groups = 0;
  if (!(flags & CIS_HYB_CUDA_SPLIT) || (flags & CIS_SPLIT_NEVER) || d->sell || d->nstream ||
      h->n < 64 || h->n > (int64_t)CIS_SPLIT_MAXP * CIS_SPLIT_PART)
    return CIS_OK;
  for (int64_t b = 0; b < h->nblocks; b++) nnz += d->cen->bnnz[b];
  if (nnz > CIS_SPLIT_MAX_NNZ) return CIS_OK;
  CIS_CUDA(cudaGetDevice(&dev));
  CIS_CUDA(cudaDeviceGetAttribute(&cluster, cudaDevAttrClusterLaunch, dev));
  if (!cluster) return CIS_OK;
  const int fewest = (int)((h->n + CIS_SPLIT_PART - 1) / CIS_SPLIT_PART);
  d->split = CIS_MIN(CIS_SPLIT_MAXP, CIS_MAX(fewest + 2, 3));
  d->split_shared = CIS_SPLIT_SHARED;
  CIS_CUDA(cudaFuncSetAttribute(cis_split_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                CIS_SPLIT_SHARED));
  CIS_CLEANUP_FUNCTION;
  {
    /* clusters resident at once, at the most shared memory a block may take (one block per
     * multiprocessor): a device or driver that cannot say gets no split */
    cudaLaunchAttribute at;
    d->split_groups = 1;
    cudaLaunchConfig_t cfg = split_config(d, &at);
    if (cudaOccupancyMaxActiveClusters(&groups, cis_split_kernel, &cfg) != cudaSuccess) {
      (void)cudaGetLastError();
      groups = 0;
    }
  }
  if (groups < 1) goto cleanup;
  d->split_groups = groups;
  {
    const cis_vdict *dict = d->dict ? d->dict : NULL;
    if (!dict && d->cen->dict.size) dict = &d->cen->dict;
    if (!dict) {
      CIS_TRY(cis_vdict_build(h, CIS_CENSUS_SAMPLE, CIS_CENSUS_DICT, &d->split_dict));
      dict = &d->split_dict;
    }
    CIS_TRY(cis_hyb_to_csr(h, d->cen->rlen, &whole));
    CIS_TRY(cis_split_build(h->n, whole.rowptr, whole.col, whole.val, dict, d->split, groups,
                            &fits, &sp));
  }
  if (!fits) goto cleanup;
  {
    int64_t bytes = cis_split_bytes(&sp), used = d->info.ell_bytes + d->info.csr_bytes +
                                                 d->info.paper_bytes +
                                                 h->n * (int64_t)CIS_HYB_CUDA_MAX_K * 8;
    if (used + bytes > d->info.budget) goto cleanup;
    const int nb = sp.parts * sp.groups;
    CIS_TRY(split_put((cis_split_blk **)&d->sv.blk, sp.blk, nb, "split: blocks"));
    CIS_TRY(split_put((uint32_t **)&d->sv.first, sp.first, (int64_t)nb * CIS_SPLIT_T,
                      "split: runs"));
    CIS_TRY(split_put((uint4 **)&d->sv.w, (const uint4 *)sp.w, sp.nwords / 4, "split: words"));
    CIS_TRY(split_put((double **)&d->sv.esc, sp.esc, sp.nesc, "split: escaped values"));
    CIS_TRY(split_put((double **)&d->sv.table, sp.table, sp.ntab1, "split: value table"));
    d->sv.ntab1 = sp.ntab1;
    d->sv.xw = sp.xw;
    d->sv.maxesc = sp.maxesc;
    d->split_shared = (size_t)cis_split_shared(sp.xw, sp.ntab1, sp.maxesc, sp.maxrows);
    d->info.split_parts = d->split;
    d->info.split_groups = d->split_groups;
    d->info.split_bytes = bytes;
    d->info.split_dict_size = sp.ntab1 - 1;
    d->info.split_escaped = sp.nesc;
  }
cleanup:
  if (err != CIS_OK || !d->info.split_parts) {
    split_free(d);
    d->info.split_parts = d->info.split_groups = 0;
  }
  cis_split_free(&sp);
  cis_csr_free(&whole);
  return err;
}

static cis_err launch_split(cis_hyb_cuda *d, const double *x, double *y) {
  cudaLaunchAttribute at;
  cudaLaunchConfig_t cfg = split_config(d, &at);
  CIS_CUDA(cudaLaunchKernelEx(&cfg, cis_split_kernel, d->sv, x, y));
  return CIS_OK;
}

/* Bytes kept back from the budget for the streaming buffers: two batches of `nscratch` blocks
 * of a quarter more than the mean block, on the device. */
static int64_t stream_reserve(const cis_hyb *h, int nscratch) {
  return cis_place_stream_reserve(h->nnz_exp, h->nblocks, h->block_rows, nscratch);
}

int64_t cis_hyb_cuda_stream_bytes(const cis_hyb *h) {
  return stream_reserve(h, CIS_MAX(1, omp_get_max_threads()));
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
  free_b += (size_t)pool_device_bytes(pool_of(h));
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
  *avail = CIS_MAX((int64_t)0, limit - need - stream_reserve(h, d->nscratch));
  return CIS_OK;
}

static cis_err slots_create(cis_hyb_cuda *d) {
  CIS_CUDA(cudaStreamCreateWithFlags(&d->copy_stream, cudaStreamNonBlocking));
  for (int i = 0; i < CIS_NSLOTS; i++) {
    CIS_CUDA(cudaEventCreateWithFlags(&d->slots[i].copied, cudaEventDisableTiming));
    CIS_CUDA(cudaEventCreateWithFlags(&d->slots[i].consumed, cudaEventDisableTiming));
  }
  return CIS_OK;
}

/* Group the streamed blocks into batches of at most nscratch blocks with consecutive rows. */
static cis_err make_batches(cis_hyb_cuda *d) {
  const cis_hyb *h = d->h;
  CIS_CALL(cis_calloc(&d->batches, (size_t)CIS_MAX(d->nstream, (int64_t)1),
                      sizeof *d->batches, "streamed batches"));
  d->nbatch = 0;
  for (int64_t i = 0; i < d->nstream; i++) {
    const cis_csr_block *blk = &h->blocks[d->stream_ids[i]];
    stream_batch *bt = d->nbatch ? &d->batches[d->nbatch - 1] : NULL;
    if (bt && bt->count < d->nscratch && bt->row0 + bt->nrows == blk->row0) {
      bt->count++;
      bt->nrows += blk->nrows;
      continue;
    }
    stream_batch nb = {i, 1, blk->row0, blk->nrows};
    d->batches[d->nbatch++] = nb;
  }
  d->info.batches = d->nbatch;
  return CIS_OK;
}

static cis_err stream_setup(cis_hyb_cuda *d) {
  CIS_CALL(make_batches(d));
  CIS_CALL(cis_calloc(&d->scratch, (size_t)d->nscratch, sizeof *d->scratch,
                      "streamed block scratch"));
  CIS_CALL(cis_calloc(&d->src, (size_t)d->nscratch, sizeof *d->src, "streamed block sources"));
  CIS_CALL(cis_calloc(&d->pack_off, (size_t)d->nscratch + 1, sizeof *d->pack_off,
                      "streamed block offsets"));
  d->nev = 2 + 4 * d->nbatch;
  CIS_CALL(cis_calloc(&d->ev, (size_t)d->nev, sizeof *d->ev, "timing events"));
  for (int64_t i = 0; i < d->nev; i++) CIS_CUDA(cudaEventCreate(&d->ev[i]));
  return CIS_OK;
}

static cis_err sell_create(cis_hyb_cuda *d, const sell_plan *p);

static cis_err hyb_cuda_fill(cis_hyb_cuda *d, const cis_hyb *h, int64_t budget,
                             int64_t reserve, int flags) {
  cis_err err = CIS_OK;
  char *resident = NULL;
  int64_t avail = 0;
  CIS_CHECK(h->n == h->ell.nrows && h->n <= INT32_MAX, CIS_ERR_INTERNAL,
            "hybrid matrix: %lld rows but ELL block of %lld rows", (long long)h->n,
            (long long)h->ell.nrows);
  d->nscratch = CIS_MAX(1, omp_get_max_threads());
  CIS_CALL(check_budget(d, budget, reserve, flags, &avail));
  d->n = h->n;
  d->csr_bits = d->info.csr_bits = csr_bits(h, flags); /* the same tiled or not */
  d->coded_block = d->info.coded_block = CIS_CODED_BLOCK;
  d->subwarp = d->info.subwarp = pick_subwarp(h);
  CIS_CALL(slots_create(d));
  CIS_CLEANUP_FUNCTION;
  double t0 = cis_wtime();
  CIS_TRY(census_setup(d, flags));
  d->info.dict_seconds = cis_wtime() - t0;
  CIS_TRY(cis_malloc(&resident, (size_t)h->nblocks, 1, "resident block flags"));
  CIS_TRY(choose_resident(d, avail, flags, resident));
  {
    /* SELL-32 is built from an upload in the rows' own order with the Reference region as one
     * sliced ELL block */
    sell_plan plan;
    cis_hyb_cuda_pool *pool = pool_of(h);
    d->sell = sell_layout(d, flags, resident, &plan);
    int pooled = pool && pool_usable(d, pool, resident, flags);
    if (pool && !pooled) pool_release(pool); /* its memory back before the upload */
    int lflags = d->sell ? flags | CIS_HYB_CUDA_UNTILED | CIS_HYB_CUDA_ROW_ORDER : flags;
    d->index_bits = d->info.index_bits = index_bits(h, lflags);
    d->lane_order = d->info.lane_order = (lflags & CIS_HYB_CUDA_ROW_ORDER) ? 0 : d->subwarp;
    d->tiled = tiled_layout(h, lflags);
    if (d->tiled) {
      d->ntiles = tile_count(h);
      d->ngroups = group_count(h);
      d->info.tile_cols = CIS_TILE_COLS;
    }
    t0 = cis_wtime();
    if (d->tiled) CIS_TRY(tiles_create(d, &h->ell));
    if (!d->tiled || (flags & CIS_HYB_CUDA_PAPER))
      CIS_TRY(ell_create(d, &h->ell, d->tiled ? 32 : d->index_bits, flags));
    d->info.ell_seconds = cis_wtime() - t0;
    t0 = cis_wtime();
    if (pooled && d->sell)
      CIS_TRY(pool_adopt(d, pool));
    else
      CIS_TRY(csr_upload(d, resident, (flags & CIS_HYB_CUDA_PAPER) != 0, pooled ? pool : NULL));
    if (d->sell) CIS_TRY(sell_create(d, &plan));
    d->info.csr_seconds = cis_wtime() - t0;
    t0 = cis_wtime();
    CIS_TRY(split_create(d, flags));
    d->info.split_seconds = cis_wtime() - t0;
  }
  {
    int64_t l2 = 0, streamed = h->nnz_exp; /* the streamed blocks' entries, 12 bytes each */
    for (int64_t b = 0; b < h->nblocks; b++)
      if (resident[b]) streamed -= d->cen->bnnz[b];
    CIS_TRY(device_l2(&l2));
    d->group = d->info.group =
        vectors_per_pass(d->info.ell_bytes + d->info.csr_bytes + 12 * streamed, l2,
                         !d->nstream, !d->sell && !d->tiled && !d->dict, d->tiled && !d->dict,
                         h->n);
  }
  {
    /* griddepcontrol is in the kernels only where their PTX is for sm_90 or later (a binary
     * built for an older architecture and run here JIT-compiles older PTX) */
    cudaFuncAttributes fa;
    CIS_CUDA_TRY(cudaFuncGetAttributes(&fa, cis_interleave_kernel));
    d->pdl = fa.ptxVersion >= 90;
  }
  CIS_TRY(dev_alloc(&d->xt, (size_t)h->n * CIS_HYB_CUDA_MAX_K * 8, "multi-vector workspace"));
  d->info.work_bytes = h->n * (int64_t)CIS_HYB_CUDA_MAX_K * 8;
  if (d->nstream > 0 && !h->regen && h->ncached < h->nblocks)
    CIS_FAIL(CIS_ERR_INTERNAL,
             "hybrid matrix: %lld Expansion blocks are not cached and there is no regenerator",
             (long long)(h->nblocks - h->ncached));
  CIS_TRY(stream_setup(d));
  /* The uploads ran on the legacy stream, which a non-blocking `stream` does not wait for. */
  CIS_CUDA_TRY(cudaDeviceSynchronize());
cleanup:
  cis_free(&resident);
  return err;
}

static cis_err tune_launch(cis_hyb_cuda *d);

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
  CIS_TRY(tune_launch(d));
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

/* The sliced ELL and the resident CSR, plain and coded (the value table stays). */
static void hybrid_free(cis_hyb_cuda *d) {
  dev_free(&d->slice_ptr);
  dev_free(&d->slice_width);
  dev_free(&d->row_len);
  dev_free(&d->ell_col);
  dev_free(&d->ell_val);
  dev_free(&d->rowptr);
  dev_free(&d->csr_col);
  dev_free(&d->csr_val);
  dev_free(&d->crowptr);
  dev_free(&d->ccol);
  dev_free(&d->ccode);
}

void cis_hyb_cuda_destroy(cis_hyb_cuda **pd) {
  cis_hyb_cuda *d = *pd;
  if (!d) return;
  cudaStreamSynchronize(d->stream);
  if (d->copy_stream) cudaStreamSynchronize(d->copy_stream);
  if (d->paper_col != d->ell_col) dev_free(&d->paper_col);
  if (d->paper_csr_col != d->csr_col) dev_free(&d->paper_csr_col);
  dev_free(&d->tbase);
  dev_free(&d->toff);
  dev_free(&d->tcol);
  dev_free(&d->tval);
  hybrid_free(d);
  split_free(d);
  dev_free(&d->ctable);
  dev_free(&d->sell_ptr);
  dev_free(&d->sell_len);
  dev_free(&d->sell_width);
  dev_free(&d->sell_col);
  dev_free(&d->sell_val);
  dev_free(&d->sell_cptr);
  dev_free(&d->sell_clen);
  dev_free(&d->sell_cwidth);
  dev_free(&d->sell_ccol);
  dev_free(&d->sell_ccode);
  cis_census_free(&d->own);
  dev_free(&d->xt);
  for (int i = 0; i < CIS_NSLOTS; i++) {
    stream_slot *s = &d->slots[i];
    if (s->pinned) cudaFreeHost(s->pinned);
    dev_free(&s->dev);
    if (s->copied) cudaEventDestroy(s->copied);
    if (s->consumed) cudaEventDestroy(s->consumed);
  }
  for (int i = 0; d->scratch && i < d->nscratch; i++) cis_csr_block_free(&d->scratch[i]);
  for (int64_t i = 0; d->ev && i < d->nev; i++)
    if (d->ev[i]) cudaEventDestroy(d->ev[i]);
  if (d->copy_stream) cudaStreamDestroy(d->copy_stream);
  cis_free(&d->stream_ids);
  cis_free(&d->batches);
  cis_free(&d->scratch);
  cis_free(&d->src);
  cis_free(&d->pack_off);
  cis_free(&d->ev);
  cis_free(pd);
}

void cis_hyb_cuda_get_info(const cis_hyb_cuda *d, cis_hyb_cuda_info *info) { *info = d->info; }

void cis_hyb_cuda_set_timing(cis_hyb_cuda *d, int on) { d->timing = on != 0; }

void cis_hyb_cuda_get_times(const cis_hyb_cuda *d, cis_hyb_cuda_times *t) { *t = d->times; }

cis_err cis_hyb_cuda_set_subwarp(cis_hyb_cuda *d, int lanes) {
  CIS_CHECK(lanes == 4 || lanes == 8 || lanes == 16 || lanes == 32, CIS_ERR_USAGE,
            "sub-warp of %d lanes: expected 4, 8, 16 or 32", lanes);
  d->subwarp = d->info.subwarp = lanes;
  return CIS_OK;
}

cis_err cis_hyb_cuda_set_coded_block(cis_hyb_cuda *d, int threads) {
  CIS_CHECK(threads >= 32 && threads <= CIS_CODED_BLOCK && threads % 32 == 0, CIS_ERR_USAGE,
            "%d threads per block: expected a multiple of 32 up to %d", threads, CIS_CODED_BLOCK);
  d->coded_block = d->info.coded_block = threads;
  return CIS_OK;
}

cis_err cis_hyb_cuda_set_plain_launch(cis_hyb_cuda *d, int which) {
  int n = d->sell ? 2 : CIS_HYB_CUDA_PLAIN_LAUNCHES;
  CIS_CHECK(which >= 0 && which < n, CIS_ERR_USAGE, "plain launch %d: expected 0..%d", which,
            n - 1);
  d->plain_launch = d->info.plain_launch = which;
  return CIS_OK;
}

cis_err cis_hyb_cuda_set_group(cis_hyb_cuda *d, int k) {
  CIS_CHECK(k >= 1 && k <= CIS_HYB_CUDA_MAX_K, CIS_ERR_USAGE,
            "%d vectors per pass: expected 1..%d", k, CIS_HYB_CUDA_MAX_K);
  d->group = d->info.group = k;
  return CIS_OK;
}

/* ---- launches ---------------------------------------------------------------------------- */

template <typename CE>
static cis_csr_view<CE> resident_view(const cis_hyb_cuda *d, const void *col) {
  cis_csr_view<CE> m = {0, d->n, d->rowptr, (const CE *)col, d->csr_val};
  return m;
}

template <typename CI>
static cis_ell_view<CI> ell_view(const cis_hyb_cuda *d, const void *col) {
  cis_ell_view<CI> e = {d->n, d->h->ell.slice, d->slice_ptr, d->slice_width, d->row_len,
                        (const CI *)col, d->ell_val};
  return e;
}

/* Blocks of `block` threads for `rows` rows at w lanes per row. */
static unsigned grid_for(int64_t rows, int w, int block) {
  return (unsigned)((rows * w + block - 1) / block);
}

template <typename CE>
static cis_coded_view<CE> coded_view(const cis_hyb_cuda *d) {
  cis_coded_view<CE> v = {d->crowptr, (const CE *)d->ccol, d->ccode, d->ctable};
  return v;
}

/* Launch a product kernel on d->stream. One of several vectors (K > 1) always follows the
 * kernel that interleaves X (apply_group), and starts as its programmatic dependent where the
 * kernels wait for it (d->pdl): its blocks load their rows' offsets while the interleave
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
  cfg.numAttrs = K > 1 && d->pdl ? 1 : 0;
  (void)cudaLaunchKernelEx(&cfg, kern, args...);
}

template <int W, int K, typename CI, typename CE, bool CODED, int OCC>
static void launch_main_t(cis_hyb_cuda *d, const double *xt, double *Y, int64_t ldy) {
  const int b = CODED ? d->coded_block : CIS_HYB_BLOCK;
  if (d->probe_warps) {
    int blocks = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &blocks, cis_hyb_kernel<W, K, CI, CE, CODED, OCC>, b, 0) != cudaSuccess)
      blocks = 0;
    d->probe_warps = blocks * b / 32;
  }
  launch_kernel<K>(d, cis_hyb_kernel<W, K, CI, CE, CODED, OCC>, grid_for(d->n, W, b), b, 0,
                   ell_view<CI>(d, d->ell_col), resident_view<CE>(d, d->csr_col),
                   coded_view<CE>(d), xt, Y, ldy);
}

/* The plain single-vector kernel in its three builds (d->plain_launch). */
template <int W, int K, typename CI, typename CE, bool CODED>
static void launch_main_o(cis_hyb_cuda *d, const double *xt, double *Y, int64_t ldy) {
  if constexpr (K == 1 && !CODED) {
    if (d->plain_launch == 1) return launch_main_t<W, K, CI, CE, CODED, 1>(d, xt, Y, ldy);
    if (d->plain_launch == 2) return launch_main_t<W, K, CI, CE, CODED, 2>(d, xt, Y, ldy);
  }
  launch_main_t<W, K, CI, CE, CODED, 0>(d, xt, Y, ldy);
}

/* The column widths: 16-bit Expansion columns only with 16-bit ELL ones (csr_bits). */
template <int W, int K, bool CODED>
static void launch_main_c(cis_hyb_cuda *d, const double *xt, double *Y, int64_t ldy) {
  if (d->csr_bits == 16)
    launch_main_o<W, K, uint16_t, uint16_t, CODED>(d, xt, Y, ldy);
  else if (d->index_bits == 16)
    launch_main_o<W, K, uint16_t, int32_t, CODED>(d, xt, Y, ldy);
  else
    launch_main_o<W, K, int32_t, int32_t, CODED>(d, xt, Y, ldy);
}

static cis_tiled_view tiled_view(const cis_hyb_cuda *d) {
  cis_tiled_view v = {d->n, d->ntiles, d->tbase, d->toff, d->tcol, d->tval};
  return v;
}

/* The SELL-32 kernel for K vectors: with coded values or not, a barrier every CIS_SELL_SYNC
 * entries (launch 0) or none (launch 1). */
template <int K>
static void (*sell_kernel(bool coded, int launch))(cis_sell_view, const double *, double *,
                                                   int64_t) {
  if (coded) return launch ? cis_sell_kernel<K, true, 0> : cis_sell_kernel<K, true, CIS_SELL_SYNC>;
  return launch ? cis_sell_kernel<K, false, 0> : cis_sell_kernel<K, false, CIS_SELL_SYNC>;
}

template <int K>
static cis_err sell_prefer_l1() {
  /* little shared memory (the value table): the rest for L1, which keeps the block's band of x */
  for (int c = 0; c < 4; c++)
    CIS_CUDA(cudaFuncSetAttribute(sell_kernel<K>(c & 1, c >> 1),
                                  cudaFuncAttributePreferredSharedMemoryCarveout, 0));
  return CIS_OK;
}

static_assert(CIS_CENSUS_DICT * sizeof(double) <= 48 * 1024,
              "the SELL-32 kernel's value table exceeds the 48 KB of shared memory a block gets");
static cis_sell_view sell_view(const cis_hyb_cuda *d) {
  cis_sell_view v = {d->n,        d->sell_ptr,   d->sell_len,  d->sell_width, d->sell_col,
                     d->sell_val, d->sell_cptr,  d->sell_clen, d->sell_cwidth, d->sell_ccol,
                     d->sell_ccode, d->sell_ccode ? d->ctable : NULL,
                     d->sell_ccode && d->dict ? d->dict->size : 0};
  return v;
}

template <typename CI, typename CE>
static void sell_fill(cis_hyb_cuda *d) {
  cis_sell_fill_kernel<CI, CE><<<(unsigned)((d->n + 255) / 256), 256>>>(
      ell_view<CI>(d, d->ell_col), resident_view<CE>(d, d->csr_col), coded_view<CE>(d), d->n,
      sell_view(d), d->sell_col, d->sell_val, d->sell_ccol, d->sell_ccode);
}

/* One SELL-32 part's slice offsets, row lengths (len(d, r)) and blocks' longest rows, on the
 * host and on the device; *slots: its entries with padding. */
static cis_err sell_shape(cis_hyb_cuda *d, int64_t (*len_of)(const cis_hyb_cuda *, int64_t),
                          int64_t **dptr, int32_t **dlen, int32_t **dwidth, int64_t *slots) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  const int64_t n = d->n, ns = (n + 31) / 32, nb = (n + CIS_SELL_BLOCK - 1) / CIS_SELL_BLOCK;
  int64_t *ptr = NULL;
  int32_t *len = NULL, *width = NULL;
  CIS_TRY(cis_malloc(&ptr, (size_t)ns + 1, sizeof *ptr, "SELL-32 slice offsets"));
  CIS_TRY(cis_malloc(&len, (size_t)n, sizeof *len, "SELL-32 row lengths"));
  CIS_TRY(cis_calloc(&width, (size_t)nb, sizeof *width, "SELL-32 block widths"));
  ptr[0] = 0;
  for (int64_t s = 0; s < ns; s++) {
    int32_t w = 0;
    for (int64_t r = 32 * s; r < CIS_MIN(32 * s + 32, n); r++) {
      len[r] = (int32_t)len_of(d, r);
      w = CIS_MAX(w, len[r]);
      width[r / CIS_SELL_BLOCK] = CIS_MAX(width[r / CIS_SELL_BLOCK], len[r]);
    }
    ptr[s + 1] = ptr[s] + 32 * (int64_t)w;
  }
  if (ptr[ns] != *slots)
    CIS_FAIL(CIS_ERR_INTERNAL, "upload: SELL-32 of %lld entries, counted %lld",
             (long long)ptr[ns], (long long)*slots);
  CIS_TRY(dev_alloc(dptr, (size_t)(ns + 1) * 8, "SELL-32 slice offsets"));
  CIS_TRY(dev_alloc(dlen, (size_t)n * 4, "SELL-32 row lengths"));
  CIS_TRY(dev_alloc(dwidth, (size_t)nb * 4, "SELL-32 block widths"));
  CIS_CUDA_TRY(cudaMemcpy(*dptr, ptr, (size_t)(ns + 1) * 8, cudaMemcpyHostToDevice));
  CIS_CUDA_TRY(cudaMemcpy(*dlen, len, (size_t)n * 4, cudaMemcpyHostToDevice));
  CIS_CUDA_TRY(cudaMemcpy(*dwidth, width, (size_t)nb * 4, cudaMemcpyHostToDevice));
cleanup:
  cis_free(&ptr);
  cis_free(&len);
  cis_free(&width);
  return err;
}

/* SELL-32 from the hybrid upload just made (every block resident, rows in their own order): the
 * shapes on the host, the entries copied on the device; then the hybrid arrays are freed (the
 * value table stays, for the coded part). */
static cis_err sell_create(cis_hyb_cuda *d, const sell_plan *p) {
  int64_t slots = p->slots, cslots = p->cslots;
  CIS_CALL(sell_shape(d, sell_row_plain, &d->sell_ptr, &d->sell_len, &d->sell_width, &slots));
  CIS_CALL(dev_alloc(&d->sell_col, (size_t)(slots + 1) * 4, "SELL-32 column indices"));
  CIS_CALL(dev_alloc(&d->sell_val, (size_t)(slots + 1) * 8, "SELL-32 values"));
  CIS_CUDA(cudaMemset(d->sell_col, 0, (size_t)(slots + 1) * 4));
  CIS_CUDA(cudaMemset(d->sell_val, 0, (size_t)(slots + 1) * 8));
  if (d->dict) {
    CIS_CALL(sell_shape(d, sell_row_coded, &d->sell_cptr, &d->sell_clen, &d->sell_cwidth, &cslots));
    CIS_CALL(dev_alloc(&d->sell_ccol, (size_t)(cslots + 1) * 4, "SELL-32 coded column indices"));
    CIS_CALL(dev_alloc(&d->sell_ccode, (size_t)(cslots + 1) * 2, "SELL-32 value codes"));
    CIS_CUDA(cudaMemset(d->sell_ccol, 0, (size_t)(cslots + 1) * 4));
    CIS_CUDA(cudaMemset(d->sell_ccode, 0, (size_t)(cslots + 1) * 2));
  }
  if (d->csr_bits == 16)
    sell_fill<uint16_t, uint16_t>(d);
  else if (d->index_bits == 16)
    sell_fill<uint16_t, int32_t>(d);
  else
    sell_fill<int32_t, int32_t>(d);
  CIS_CUDA(cudaGetLastError());
  CIS_CUDA(cudaDeviceSynchronize());
  CIS_CALL(sell_prefer_l1<1>());
  CIS_CALL(sell_prefer_l1<2>());
  CIS_CALL(sell_prefer_l1<3>());
  CIS_CALL(sell_prefer_l1<4>());
  CIS_CALL(sell_prefer_l1<5>());
  CIS_CALL(sell_prefer_l1<6>());
  CIS_CALL(sell_prefer_l1<7>());
  CIS_CALL(sell_prefer_l1<8>());
  hybrid_free(d);
  d->info.ell_bytes = 0;
  d->info.csr_bytes = sell_bytes(d, p);
  d->info.index_bits = d->info.csr_bits = 32;
  d->info.sell = 32;
  d->info.sell_slots = slots + cslots;
  return CIS_OK;
}

template <int K>
static cis_err launch_sell(cis_hyb_cuda *d, const double *xt, double *Y, int64_t ldy) {
  void (*kern)(cis_sell_view, const double *, double *, int64_t) =
      sell_kernel<K>(d->sell_ccode != NULL, d->plain_launch);
  const cis_sell_view v = sell_view(d);
  const size_t sh = K == 1 ? v.ntable * sizeof(double) : 0; /* the value table, k = 1 */
  if (d->probe_warps) {
    int blocks = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kern, CIS_SELL_BLOCK, sh) !=
        cudaSuccess)
      blocks = 0;
    d->probe_warps = blocks * CIS_SELL_BLOCK / 32;
  }
  launch_kernel<K>(d, kern, (unsigned)((d->n + CIS_SELL_BLOCK - 1) / CIS_SELL_BLOCK),
                   CIS_SELL_BLOCK, sh, v, xt, Y, ldy);
  CIS_CUDA(cudaGetLastError());
  return CIS_OK;
}

/* The tiled kernel: one block per group of rows, its shared memory sized for K vectors (within
 * the 48 KB a block gets without asking). */
static_assert(cis_tiled_shared(CIS_HYB_CUDA_MAX_K) <= 48 * 1024,
              "the tiled kernel's shared memory for CIS_HYB_CUDA_MAX_K vectors exceeds 48 KB");
template <int W, int K, typename CE, bool CODED>
static void launch_tiled_t(cis_hyb_cuda *d, const double *xt, double *Y, int64_t ldy) {
  const size_t sh = cis_tiled_shared(K);
  if (d->probe_warps) {
    int blocks = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &blocks, cis_tiled_kernel<W, K, CE, CODED>, CIS_TILE_BLOCK, sh) !=
        cudaSuccess)
      blocks = 0;
    d->probe_warps = blocks * CIS_TILE_BLOCK / 32;
  }
  launch_kernel<K>(d, cis_tiled_kernel<W, K, CE, CODED>, (unsigned)d->ngroups, CIS_TILE_BLOCK, sh,
                   tiled_view(d), resident_view<CE>(d, d->csr_col), coded_view<CE>(d), xt, Y,
                   ldy);
}

template <int W, int K, bool CODED>
static void launch_tiled_c(cis_hyb_cuda *d, const double *xt, double *Y, int64_t ldy) {
  if (d->csr_bits == 16)
    launch_tiled_t<W, K, uint16_t, CODED>(d, xt, Y, ldy);
  else
    launch_tiled_t<W, K, int32_t, CODED>(d, xt, Y, ldy);
}

template <int W, int K>
static cis_err launch_main_wk(cis_hyb_cuda *d, const double *xt, double *Y, int64_t ldy) {
  if (d->n == 0) return CIS_OK;
  if (d->tiled && d->ctable)
    launch_tiled_c<W, K, true>(d, xt, Y, ldy);
  else if (d->tiled)
    launch_tiled_c<W, K, false>(d, xt, Y, ldy);
  else if (d->ctable)
    launch_main_c<W, K, true>(d, xt, Y, ldy);
  else
    launch_main_c<W, K, false>(d, xt, Y, ldy);
  CIS_CUDA(cudaGetLastError());
  return CIS_OK;
}

template <int W, int K>
static cis_err launch_add_wk(cis_hyb_cuda *d, cis_csr_view<int32_t> m, const double *xt, double *Y,
                             int64_t ldy) {
  if (m.nrows == 0) return CIS_OK;
  cis_csr_add_kernel<W, K><<<grid_for(m.nrows, W, CIS_HYB_BLOCK), CIS_HYB_BLOCK, 0,
                                 d->stream>>>(m, xt, Y, ldy);
  CIS_CUDA(cudaGetLastError());
  return CIS_OK;
}

/* One (main or add) launch for the matrix's sub-warp width and K. */
template <int K>
static cis_err launch_k(cis_hyb_cuda *d, const cis_csr_view<int32_t> *add, const double *xt, double *Y,
                        int64_t ldy) {
  if (!add && d->sell) return d->n ? launch_sell<K>(d, xt, Y, ldy) : CIS_OK;
  switch (d->subwarp) {
#define CIS_W_CASE(W)                                                         \
  case W:                                                                     \
    return add ? launch_add_wk<W, K>(d, *add, xt, Y, ldy)                     \
               : launch_main_wk<W, K>(d, xt, Y, ldy);
    CIS_W_CASE(4)
    CIS_W_CASE(8)
    CIS_W_CASE(16)
    CIS_W_CASE(32)
#undef CIS_W_CASE
  }
  CIS_ERROR(CIS_ERR_INTERNAL, "no kernel for a sub-warp of %d lanes", d->subwarp);
}

static cis_err launch(cis_hyb_cuda *d, int k, const cis_csr_view<int32_t> *add, const double *xt,
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

/* Candidate c of the single-vector launch: plain values, the kernel's build c (OCC in
 * hyb_kernels.cuh); coded values, blocks of 1024 (c = 0) or 256 threads; SELL-32, a barrier
 * every CIS_SELL_SYNC entries (c = 0) or none, whose choice serves several vectors too; tiled,
 * the one launch (timed all the same, for the report). */
static int ncandidates(const cis_hyb_cuda *d) {
  return d->tiled ? 1 : d->sell || d->ctable ? 2 : CIS_HYB_CUDA_PLAIN_LAUNCHES;
}

static void set_candidate(cis_hyb_cuda *d, int c) {
  if (d->tiled) return;
  if (d->ctable && !d->sell)
    d->coded_block = d->info.coded_block = c ? 256 : CIS_CODED_BLOCK;
  else
    d->plain_launch = d->info.plain_launch = c;
}

/* Each matrix has its own fastest launch (docs/design-notes.md). On an H200, 64 warps per
 * multiprocessor take the paper's matrix in 0.097 ms against 0.101 with 48, but H2O/6-31G FCI
 * in 3.94 ms against 3.74, and 40 warps (48 registers) took FCI in 3.59 ms. Coded blocks of 256
 * threads take H2O CISDT in 27.8 us against 30.2 with 1024, but FCI in 3.03 ms against 2.75.
 * So every candidate is timed on the resident part of this matrix (x of zeros): each run once,
 * then three times in turn, and the smallest minimum kept. All compute the same products bit
 * for bit: the same rows on the same lanes, in the same order. */
/* One product of d->xt's first column into its second between the events ev[0] and ev[1], on
 * the split (split != 0) or with the launch chosen now; its time in *ms. */
static cis_err time_product(cis_hyb_cuda *d, cudaEvent_t *ev, int split, float *ms) {
  CIS_CUDA(cudaEventRecord(ev[0], d->stream));
  if (split)
    CIS_CALL(launch_split(d, d->xt, d->xt + d->n));
  else
    CIS_CALL(launch(d, 1, NULL, d->xt, d->xt + d->n, d->n));
  CIS_CUDA(cudaEventRecord(ev[1], d->stream));
  CIS_CUDA(cudaEventSynchronize(ev[1]));
  CIS_CUDA(cudaEventElapsedTime(ms, ev[0], ev[1]));
  return CIS_OK;
}

static cis_err tune_launch(cis_hyb_cuda *d) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  cudaEvent_t ev[2] = {NULL, NULL};
  double best[CIS_HYB_CUDA_PLAIN_LAUNCHES], t0 = cis_wtime();
  int nc = ncandidates(d), keep = 0;
  if (d->n == 0) return CIS_OK;
  for (int c = 0; c < nc; c++) best[c] = HUGE_VAL;
  for (int i = 0; i < 2; i++) CIS_CUDA_TRY(cudaEventCreate(&ev[i]));
  CIS_CUDA_TRY(cudaMemsetAsync(d->xt, 0, (size_t)d->n * 2 * sizeof(double), d->stream));
  for (int rep = 0; rep < 4; rep++)
    for (int c = 0; c < nc; c++) {
      float ms = 0.f;
      set_candidate(d, c);
      d->probe_warps = rep == 0;
      CIS_TRY(time_product(d, ev, 0, &ms));
      if (rep == 0) d->info.tune_warps[c] = d->probe_warps;
      if (rep > 0) best[c] = CIS_MIN(best[c], (double)ms);
    }
  for (int c = 0; c < nc; c++) {
    d->info.tune_ms[c] = best[c];
    if (best[c] < best[keep]) keep = c;
  }
  d->info.tune_candidates = nc;
  d->info.tune_kept = keep;
  set_candidate(d, keep);
  if (d->split) {
    /* the split, timed the same way, for the record */
    double ms_split = HUGE_VAL;
    for (int rep = 0; rep < 4; rep++) {
      float ms = 0.f;
      CIS_TRY(time_product(d, ev, 1, &ms));
      if (rep > 0) ms_split = CIS_MIN(ms_split, (double)ms);
    }
    d->info.split_ms = ms_split;
  }
  d->info.tune_seconds = cis_wtime() - t0;
cleanup:
  d->probe_warps = 0;
  for (int i = 0; i < 2; i++)
    if (ev[i]) cudaEventDestroy(ev[i]);
  return err;
}

/* ---- streamed Expansion blocks ------------------------------------------------------------- */

/* Regenerate (or look up) the batch's blocks, one block per OpenMP thread. */
static cis_err batch_generate(cis_hyb_cuda *d, const stream_batch *bt) {
  cis_worker_error we = {CIS_OK, ""};
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t j = 0; j < bt->count; j++) {
    if (cis_worker_error_seen(&we)) continue;
    cis_err e = cis_hyb_block_rows(d->h, d->stream_ids[bt->first + j], &d->scratch[j], &d->src[j]);
    if (e != CIS_OK) cis_worker_error_keep(&we, e);
  }
  CIS_WORKER_RERAISE(we);
  return CIS_OK;
}

typedef struct {
  size_t off_col, off_val, bytes;
} stage_layout;

static stage_layout layout_for(int64_t nrows, int64_t nnz) {
  stage_layout L;
  L.off_col = align16((size_t)(nrows + 1) * 8);
  L.off_val = align16(L.off_col + (size_t)(nnz + 2) * 4);
  L.bytes = L.off_val + (size_t)(nnz + 2) * 8;
  return L;
}

/* Pack the batch's blocks as one CSR into the slot's pinned buffer, once the previous copy out
 * of it is done; the blocks go in parallel, each to its offset. */
static cis_err batch_pack(cis_hyb_cuda *d, const stream_batch *bt, stream_slot *s,
                          stage_layout *Lout) {
  int64_t *off = d->pack_off;
  off[0] = 0;
  for (int64_t j = 0; j < bt->count; j++) off[j + 1] = off[j] + d->src[j]->rowptr[d->src[j]->nrows];
  int64_t nnz = off[bt->count];
  stage_layout L = layout_for(bt->nrows, nnz);
  CIS_CUDA(cudaEventSynchronize(s->copied));
  if (L.bytes > s->pinned_cap) {
    if (s->pinned) CIS_CUDA(cudaFreeHost(s->pinned));
    s->pinned = NULL;
    s->pinned_cap = 0;
    size_t cap = L.bytes + L.bytes / 4;
    CIS_CUDA(cudaMallocHost((void **)&s->pinned, cap));
    s->pinned_cap = cap;
  }
  int64_t *rp = (int64_t *)s->pinned;
  int32_t *col = (int32_t *)(s->pinned + L.off_col);
  double *val = (double *)(s->pinned + L.off_val);
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t j = 0; j < bt->count; j++) {
    const cis_csr_block *b = d->src[j];
    int64_t r0 = b->row0 - bt->row0, o = off[j], m = b->rowptr[b->nrows];
    for (int64_t l = 0; l < b->nrows; l++) rp[r0 + l] = o + b->rowptr[l];
    if (m) {
      memcpy(col + o, b->col, (size_t)m * 4);
      memcpy(val + o, b->val, (size_t)m * 8);
    }
  }
  rp[bt->nrows] = nnz;
  col[nnz] = col[nnz + 1] = 0;
  val[nnz] = val[nnz + 1] = 0.0;
  *Lout = L;
  return CIS_OK;
}

/* Copy the staged batch to the slot's device buffer once the previous kernel on it is done,
 * then add its product on the compute stream once the copy has landed. `ev`: 4 timing events
 * (copy start, end, kernel start, end) or NULL. */
static cis_err ship_and_apply(cis_hyb_cuda *d, stream_slot *s, const stream_batch *bt,
                              stage_layout L, int k, const double *xt, double *Y, int64_t ldy,
                              cudaEvent_t *ev) {
  if (L.bytes > s->dev_cap) {
    CIS_CUDA(cudaEventSynchronize(s->consumed));
    d->info.stream_buf_bytes -= (int64_t)s->dev_cap;
    dev_free(&s->dev);
    s->dev_cap = 0;
    size_t cap = L.bytes + L.bytes / 4;
    CIS_CALL(dev_alloc(&s->dev, cap, "streamed Expansion batch buffer"));
    s->dev_cap = cap;
    d->info.stream_buf_bytes += (int64_t)cap;
  }
  CIS_CUDA(cudaStreamWaitEvent(d->copy_stream, s->consumed, 0));
  if (ev) CIS_CUDA(cudaEventRecord(ev[0], d->copy_stream));
  CIS_CUDA(cudaMemcpyAsync(s->dev, s->pinned, L.bytes, cudaMemcpyHostToDevice, d->copy_stream));
  if (ev) CIS_CUDA(cudaEventRecord(ev[1], d->copy_stream));
  CIS_CUDA(cudaEventRecord(s->copied, d->copy_stream));
  CIS_CUDA(cudaStreamWaitEvent(d->stream, s->copied, 0));
  cis_csr_view<int32_t> m = {bt->row0, bt->nrows, (const int64_t *)s->dev,
                             (const int32_t *)(s->dev + L.off_col),
                             (const double *)(s->dev + L.off_val)};
  if (ev) CIS_CUDA(cudaEventRecord(ev[2], d->stream));
  CIS_CALL(launch(d, k, &m, xt, Y, ldy));
  if (ev) CIS_CUDA(cudaEventRecord(ev[3], d->stream));
  CIS_CUDA(cudaEventRecord(s->consumed, d->stream));
  return CIS_OK;
}

/* Host generation of batch i+1 overlaps the copy and the kernel of batch i. */
static cis_err apply_streamed(cis_hyb_cuda *d, int k, const double *xt, double *Y, int64_t ldy) {
  int64_t nnz = 0, bytes = 0;
  for (int64_t i = 0; i < d->nbatch; i++) {
    const stream_batch *bt = &d->batches[i];
    stream_slot *s = &d->slots[i % CIS_NSLOTS];
    stage_layout L;
    double t0 = cis_wtime();
    CIS_CALL(batch_generate(d, bt));
    CIS_CALL(batch_pack(d, bt, s, &L));
    d->times.t_gen += cis_wtime() - t0;
    CIS_CALL(ship_and_apply(d, s, bt, L, k, xt, Y, ldy, d->timing ? d->ev + 2 + 4 * i : NULL));
    nnz += (int64_t)((L.bytes - L.off_val) / 8) - 2;
    bytes += (int64_t)L.bytes;
  }
  d->info.streamed_nnz = nnz;
  d->info.streamed_bytes = bytes;
  d->times.bytes_copied += bytes;
  return CIS_OK;
}

/* ---- products ------------------------------------------------------------------------------ */

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
  d->times.t_wall += cis_wtime() - t0;
  d->times.t_kernel += elapsed_s(d->ev[0], d->ev[1]);
  for (int64_t i = 0; i < d->nbatch; i++) {
    cudaEvent_t *e = d->ev + 2 + 4 * i;
    d->times.t_copy += elapsed_s(e[0], e[1]);
    d->times.t_kernel += elapsed_s(e[2], e[3]);
  }
  return CIS_OK;
}

static cis_err apply_group(cis_hyb_cuda *d, int k, const double *X, double *Y, int multi) {
  const double *xt = X;
  double t0 = cis_wtime();
  if (d->timing) CIS_CUDA(cudaEventRecord(d->ev[0], d->stream));
  if (multi || k > 1) {
    unsigned g = (unsigned)((d->n + 255) / 256);
    if (d->n) cis_interleave_kernel<<<g, 256, 0, d->stream>>>(X, d->n, d->n, k, d->xt);
    CIS_CUDA(cudaGetLastError());
    xt = d->xt;
  }
  if (k == 1 && !multi && d->split)
    CIS_CALL(launch_split(d, X, Y));
  else
    CIS_CALL(launch(d, k, NULL, xt, Y, d->n));
  if (d->timing) CIS_CUDA(cudaEventRecord(d->ev[1], d->stream));
  if (d->nstream) CIS_CALL(apply_streamed(d, k, xt, Y, d->n));
  d->times.passes++;
  if (d->timing) CIS_CALL(collect_times(d, t0));
  return CIS_OK;
}

static cis_err apply_all(cis_hyb_cuda *d, int k, const double *X, double *Y, int multi) {
  CIS_CHECK(k >= 0, CIS_ERR_INTERNAL, "device product: %d vectors", k);
  for (int j = 0; j < k; j += d->group) {
    int kc = CIS_MIN(d->group, k - j);
    CIS_CALL(apply_group(d, kc, X + (int64_t)j * d->n, Y + (int64_t)j * d->n, multi));
  }
  return CIS_OK;
}

cis_err cis_hyb_cuda_apply(cis_hyb_cuda *d, int k, const double *X, double *Y) {
  return apply_all(d, k, X, Y, 0);
}

cis_err cis_hyb_cuda_apply_multi(cis_hyb_cuda *d, int k, const double *X, double *Y) {
  return apply_all(d, k, X, Y, 1);
}

cis_err cis_hyb_cuda_apply_paper(cis_hyb_cuda *d, const double *x, double *y) {
  CIS_CHECK(d->paper_col != NULL, CIS_ERR_INTERNAL,
            "the paper's kernel needs a matrix uploaded with CIS_HYB_CUDA_PAPER");
  CIS_CHECK(d->nstream == 0, CIS_ERR_INTERNAL,
            "the paper's kernel needs every Expansion block resident (%lld streamed)",
            (long long)d->nstream);
  if (d->n == 0) return CIS_OK;
  CIS_CUDA(cudaMemsetAsync(y, 0, (size_t)d->n * 8, d->stream));
  const int threads = 256;
  unsigned g = (unsigned)((d->n * 32 + threads - 1) / threads);
  cis_paper_kernel<<<g, threads, 2 * threads * sizeof(double), d->stream>>>(
      ell_view<int32_t>(d, d->paper_col), resident_view<int32_t>(d, d->paper_csr_col), x, y);
  CIS_CUDA(cudaGetLastError());
  return CIS_OK;
}
