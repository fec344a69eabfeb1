/* cisolve: the hybrid ELL + CSR storage of a symmetric CI matrix (see docs/format.md).
 *
 * Every row is split at the column BOUNDARY (= the size of the Reference region):
 *  - columns [0, boundary) of every row live in a sliced ELLPACK block (`cis_ell`), resident;
 *  - columns [boundary, n) live in CSR row blocks (`cis_csr_block`) of `block_rows` rows each.
 *    A block is either cached (its arrays are filled) or not (val == NULL); a block that is not
 *    cached is regenerated through `regen` whenever it is needed (matrix-free, on the fly).
 *
 * Sliced ELL layout: rows are grouped in slices of `slice` consecutive rows; slice s holds
 * slice_width[s] entries per row, row-major within the slice, starting at slice_ptr[s]. So the
 * entries of row r (slice s = r / slice, local row l = r % slice) are
 *   col/val[slice_ptr[s] + l * slice_width[s] + t], t < row_len[r],
 * contiguous (one warp per row reads them coalesced). Entries t >= row_len[r] are padding
 * (col 0, val 0.0) and may be read harmlessly.
 *
 * Ownership: a cis_hyb owns its ELL arrays, its cached blocks and its census; regen_ctx is
 * borrowed.
 */
#ifndef CIS_HYB_H
#define CIS_HYB_H

#include <stdint.h>

#include "base/error.h"
#include "base/progress.h"
#include "base/problem.h"

typedef struct {
  int64_t nrows;
  int64_t boundary;      /* Reference region size; ELL columns are < boundary */
  int slice;             /* rows per slice */
  int64_t nslices;
  int64_t *slice_ptr;    /* nslices + 1 */
  int32_t *slice_width;  /* nslices */
  int32_t *row_len;      /* nrows: true entries of each row */
  int32_t *col;          /* slice_ptr[nslices] */
  double *val;
  int64_t nnz;           /* true entries (sum of row_len) */
} cis_ell;

typedef struct {
  int64_t row0, nrows;
  int64_t nnz, cap;      /* entries used / allocated */
  int64_t *rowptr;       /* nrows + 1, rowptr[0] = 0 */
  int32_t *col;          /* global column indices, all >= boundary */
  double *val;
} cis_csr_block;

/* Fill `out` with the Expansion part (columns >= boundary) of rows [row0, row0+nrows).
 * Must be callable from several threads at once with different `out`; grows out's arrays
 * as needed (cis_csr_block_reserve). */
typedef cis_err (*cis_regen_fn)(void *ctx, int64_t row0, int64_t nrows, cis_csr_block *out);
/* Optional, with regen: Y[r, :] += (Expansion part of row r) X for r in [row0, row0+nrows),
 * X and Y n x k with leading dimension n, each row multiplied as it is generated (no CSR
 * block written). The CPU product uses it for blocks that are not cached when it is set. */
typedef cis_err (*cis_regen_apply_fn)(void *ctx, int64_t row0, int64_t nrows, int k,
                                      const double *X, double *Y, int64_t n);

struct cis_census;
typedef struct cis_block_sink cis_block_sink;

/* A regenerator of Expansion rows on a CUDA device, made by the upload (through
 * cis_hyb.regen_dev) for the blocks it does not keep resident: they are then generated and
 * multiplied on the device in every product instead of being sent from the host. A CI matrix
 * has one (hamiltonian/rowgen_cuda.h); an explicit matrix has none.
 *  apply: Y[r, j] += (Expansion part of row r) x_j for r in [row0, row0 + nrows), j < k <= 8,
 *    on `stream` (a cudaStream_t); x is the vector (k = 1) or the k vectors interleaved
 *    (x[c * k + j]), Y column-major with leading dimension ldy; device pointers.
 *  destroy: frees it (device memory included). */
typedef struct cis_regen_dev cis_regen_dev;
struct cis_vdict;
/* Where place writes a matrix's rows on the device (device arrays; spmv/hyb_cuda_private.cuh
 * describes the layouts): the Reference entries (columns < nref) of every row into the sliced
 * ELL (ell_col NULL: not written), rows in slices of `slice`, slice s at ell_ptr[s] with width
 * ell_width[s], each row's entries in lane order of 2; the Expansion entries of the rows whose
 * ranges rp[r]..rp[r+1] (plain) and crp[r]..crp[r+1] (coded; crp NULL: none) hold them (rp NULL:
 * not written), plain ones in lane order of 2, coded ones (their magnitude in `dict`) of 4.
 * lanes: the lanes the lane order is for (0: each row's own order). bits: 16 or 32-bit columns.
 * *bad (device) is set when a row's entries do not match their ranges. */
typedef struct {
  int64_t row0, nrows, nref;
  int lanes;
  int slice, ell_bits;
  const int64_t *ell_ptr;
  const int32_t *ell_width, *ell_len; /* ell_len: each row's Reference entries (n) */
  void *ell_col;
  double *ell_val;
  int csr_bits;
  const int64_t *rp, *crp;
  void *col, *ccol;
  double *val;
  uint16_t *code;
  const struct cis_vdict *dict; /* host; NULL: no coded part */
  int *bad;
} cis_dev_layout;
struct cis_regen_dev {
  int64_t bytes; /* device memory it holds */
  cis_err (*apply)(cis_regen_dev *g, int64_t row0, int64_t nrows, int k, const double *x,
                   double *Y, int64_t ldy, void *stream);
  /* Optional: rows [L->row0, L->row0 + L->nrows) written into the layouts L describes, on
   * `stream` (a matrix built on the device: its rows exist nowhere else). */
  cis_err (*place)(cis_regen_dev *g, const cis_dev_layout *L, void *stream);
  void (*destroy)(cis_regen_dev *g);
};
/* Makes the device regenerator of ctx on the current device (*out), or says in why[160] why it
 * cannot (*out NULL, CIS_OK): then the upload streams from the host. *bytes: the device memory
 * it will take, set in both cases (-1 when it cannot). With out NULL only *bytes and why are
 * set. */
typedef cis_err (*cis_regen_dev_fn)(void *ctx, int64_t *bytes, char *why, cis_regen_dev **out);

typedef struct {
  int64_t n;
  cis_ell ell;
  int64_t block_rows;
  int64_t nblocks;
  cis_csr_block *blocks; /* nblocks; row0/nrows always set; arrays only when cached */
  int64_t nnz_exp;       /* Expansion nonzeros of the whole matrix (cached or not) */
  int64_t ncached;       /* blocks that are cached */
  cis_regen_fn regen;    /* NULL when every block is cached */
  void *regen_ctx;
  cis_regen_apply_fn regen_apply; /* optional (NULL: regen, then multiply) */
  cis_regen_dev_fn regen_dev;     /* optional: a device regenerator of the Expansion rows for */
  void *regen_dev_ctx;            /* the blocks a GPU upload does not keep (CUDA builds) */
  struct cis_census *census;      /* optional, owned: the census of the Expansion rows taken
                                     while they were generated (spmv/census.h) */
  /* Built on the GPU (hamiltonian/hmat.c): the rows exist only as counts, the ELL's row lengths
   * and slices (no col or val) and a complete census; no block of rows [dev_row0, dev_row1) is
   * cached (other rows are another rank's, empty). Only a GPU upload takes such a matrix: it
   * writes the rows into its layouts on the device (cis_regen_dev place). */
  int device_built;
  int64_t dev_row0, dev_row1;
  cis_block_sink *sink;           /* optional, borrowed: where the build sent every Expansion
                                     block as it generated it (cis_block_sink below) */
  cis_progress *progress;         /* optional, borrowed: told how long passes over the rows
                                     (an upload that generates them) advance */
} cis_hyb;

/* Where a build sends each Expansion block as soon as it has generated it (cis_hmat_opts.sink):
 * the GPU upload's pool (spmv/hyb_cuda.h), which stores the blocks on the device while the
 * matrix is built, so that a GPU run that keeps no host copy generates no row twice.
 *  begin: once, before the pass, with the matrix's blocks (row ranges set), the sampled count
 *    of its Expansion entries, the census that will count them (its dictionary chosen) and the
 *    threads that will generate them; returns 0 to decline, and then no block is sent;
 *  block: block b's rows as soon as they are generated, on the thread (< nthreads) that
 *    generated them, for distinct blocks at once. The sink counts them in the census in the
 *    build's place (cis_census_block, or cis_census_split, which splits them on the way), kept
 *    or not. A sink that cannot keep a block drops it and says so to its consumer, who then
 *    regenerates it: a sink never fails a build.
 * A build whose sink took the blocks leaves it in hyb.sink. */
struct cis_block_sink {
  int (*begin)(cis_block_sink *s, const cis_hyb *h, int64_t est_nnz, struct cis_census *c,
               int nthreads);
  void (*block)(cis_block_sink *s, int64_t b, const cis_csr_block *rows);
};

static inline int cis_csr_block_cached(const cis_csr_block *b) { return b->val != 0; }

/* Where row r's ELL entries start in col/val (see the layout above). */
static inline int64_t cis_ell_row_start(const cis_ell *e, int64_t r) {
  int64_t s = r / e->slice;
  return e->slice_ptr[s] + (r - s * e->slice) * e->slice_width[s];
}

/* Make room for `cap` entries and nrows+1 row pointers (keeps contents). */
cis_err cis_csr_block_reserve(cis_csr_block *b, int64_t nrows, int64_t cap);
void cis_csr_block_free(cis_csr_block *b);
void cis_ell_free(cis_ell *e);
void cis_hyb_free(cis_hyb *h);

/* Bytes held: ELL (values + indices + slice data), cached CSR blocks; an ELL of `entries`
 * (padding included) in nslices slices of nrows rows. */
int64_t cis_ell_bytes(const cis_ell *e);
int64_t cis_ell_bytes_of(int64_t entries, int64_t nslices, int64_t nrows);
int64_t cis_hyb_cached_bytes(const cis_hyb *h);

/* Split an explicit CSR matrix (n x n, our order) at `boundary` into a fully cached hybrid
 * matrix with Expansion blocks of `block_rows` rows (0 = automatic) and ELL slices of `slice`
 * rows (0 = 32). Used for explicit matrices and by tests. */
cis_err cis_hyb_from_csr(int64_t n, const int64_t *rowptr, const int32_t *col,
                         const double *val, int64_t boundary, int64_t block_rows, int slice,
                         cis_hyb *out);

/* Rows [row0, row0 + nrows) of the Expansion part regenerated into `out` (grown as needed) with
 * h->regen, and checked: row pointers from 0 and not decreasing, entries within out's room,
 * columns in [boundary, n). out->row0, nrows and nnz describe the rows. An error when h has no
 * regenerator. */
cis_err cis_hyb_regen_rows(const cis_hyb *h, int64_t row0, int64_t nrows, cis_csr_block *out);
/* The rows of block b: *src is the cached block, or `scratch` with the block regenerated into
 * it (cis_hyb_regen_rows). */
cis_err cis_hyb_block_rows(const cis_hyb *h, int64_t b, cis_csr_block *scratch,
                           const cis_csr_block **src);
/* The whole matrix as one CSR: each row's ELL part, then its Expansion part, each in its stored
 * order (so not sorted by column), a block per OpenMP task, blocks the host does not cache
 * regenerated (cis_hyb_block_rows). The rows are placed by their Expansion entries: rlen (n, as
 * a census counts them) when given, else those of the cached blocks, of the blocks h->census
 * counted, and of the others regenerated once more to count them. Allocates out's arrays. */
cis_err cis_hyb_to_csr(const cis_hyb *h, const int32_t *rlen, cis_csr *out);

/* Lane order (docs/gpu.md), the device layout of a row's entries. The row's entries sit at
 * positions [p0, p1) and are read by `lanes` lanes, v consecutive positions per lane and step,
 * from p0 rounded down to a multiple of v. to[k] is where, counted from p0, the row's k-th
 * entry goes: every window of v * lanes positions keeps its own entries, in order, component
 * by component, so that the lanes reading component j of a step hold consecutive entries of
 * the row. lanes 0: the row's own order (to[k] = k). */
void cis_lane_order(int64_t p0, int64_t p1, int v, int lanes, int32_t *to);
/* The same, one entry at a time, for writers on the device: where the row's k-th entry goes
 * (p0 + to[k] of cis_lane_order), 0 <= k < p1 - p0. v and lanes are powers of two (shifts, not
 * divisions: a device divides 64-bit integers slowly). */
#ifdef __CUDACC__
__host__ __device__
#endif
static inline int64_t cis_lane_pos(int64_t p0, int64_t p1, int v, int lanes, int64_t k) {
  if (lanes == 0) return p0 + k;
  int lv = 0, ll = 0;
  while ((1 << lv) < v) lv++;
  while ((1 << ll) < lanes) ll++;
  int lw = lv + ll;
  int64_t W = (int64_t)1 << lw, a = p0 & -(int64_t)v;
  int64_t first = (a + W < p1 ? a + W : p1) - p0; /* the first window's entries */
  if (k >= first) {
    k -= first;
    a += W + ((k >> lw) << lw);
    k &= W - 1;
  }
  int64_t lo = a > p0 ? a : p0, hi = a + W < p1 ? a + W : p1;
  if (lo == a && hi == a + W) /* a whole window: lane k mod lanes, component k / lanes */
    return a + ((k & (lanes - 1)) << lv) + (k >> ll);
  for (int j = 0; j < v; j++) { /* component j: lanes l with lo <= a + v l + j < hi */
    int64_t num = lo - a - j, top = hi - 1 - a - j;
    int64_t lmin = num <= 0 ? 0 : (num + v - 1) >> lv;
    int64_t lmax = top < 0 ? -1 : top >> lv;
    if (lmax > lanes - 1) lmax = lanes - 1;
    int64_t cnt = lmax >= lmin ? lmax - lmin + 1 : 0;
    if (k < cnt) return a + ((lmin + k) << lv) + j;
    k -= cnt;
  }
  return -1;
}

/* Column tiles of the Reference region (docs/gpu.md), the device layout used when the
 * Reference slice of x is too large to stay in a multiprocessor's L1. Rows are taken in groups
 * of `rows` (group g: rows [g * rows, (g + 1) * rows)); a group's ELL entries are stored tile by
 * tile (tile t: columns [t * tile_cols, (t + 1) * tile_cols)), row by row within a tile, each
 * row's entries of a tile in the row's order, with 16-bit columns counted from the tile's first
 * column (tile_cols <= 65536). off[t * rows + l] is where the entries of row l in tile t start,
 * counted from the group's first entry, and off[ntiles * rows] is the group's entry count; rows
 * past the matrix's end have none. cis_ell_tile_offsets fills off (ntiles * rows + 1 entries)
 * and returns the count, or -1 when it would not fit in 32 bits; cis_ell_tile_fill then writes
 * the group's entries (cursor: room for ntiles * rows). */
int64_t cis_ell_tile_offsets(const cis_ell *e, int64_t group, int rows, int tile_cols,
                             int64_t ntiles, uint32_t *off);
void cis_ell_tile_fill(const cis_ell *e, int64_t group, int rows, int tile_cols, int64_t ntiles,
                       const uint32_t *off, uint32_t *cursor, uint16_t *col, double *val);

/* Reference kernels on the CPU (OpenMP over rows). X and Y are n x k, column-major with
 * leading dimension n. Y = H X (Y is overwritten). Non-cached blocks are regenerated. */
cis_err cis_hyb_apply_cpu(const cis_hyb *h, int k, const double *X, double *Y);

#endif
