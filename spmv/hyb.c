/* cisolve: hybrid ELL + CSR storage: construction from CSR, sizes, and the CPU reference
 * product. See spmv/hyb.h for the layout. */
#include "spmv/hyb.h"

#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "spmv/census.h"

/* Expansion blocks of about this many nonzeros when the caller lets us choose: large enough
 * that per-block overheads vanish, small enough that a GPU can double-buffer two of them. */
#define CIS_HYB_AUTO_BLOCK_NNZ ((int64_t)1 << 22)
#define CIS_HYB_DEFAULT_SLICE 32

cis_err cis_csr_block_reserve(cis_csr_block *b, int64_t nrows, int64_t cap) {
  CIS_CHECK(nrows >= 0 && cap >= 0, CIS_ERR_INTERNAL,
            "CSR block reserve: negative size (nrows %lld, cap %lld)", (long long)nrows,
            (long long)cap);
  /* The row-pointer capacity is not tracked, so it is resized every time; realloc to the
   * same size is cheap. */
  int fresh = b->rowptr == NULL;
  CIS_CALL(cis_realloc(&b->rowptr, (size_t)nrows + 1, sizeof *b->rowptr,
                       "CSR block row pointers"));
  if (fresh) b->rowptr[0] = 0;
  if (cap > b->cap || !b->val || !b->col) {
    int64_t newcap = CIS_MAX(cap, b->cap);
    CIS_CALL(cis_realloc(&b->col, (size_t)newcap, sizeof *b->col, "CSR block columns"));
    CIS_CALL(cis_realloc(&b->val, (size_t)newcap, sizeof *b->val, "CSR block values"));
    b->cap = newcap;
  }
  return CIS_OK;
}

void cis_csr_block_free(cis_csr_block *b) {
  if (!b) return;
  cis_free(&b->rowptr);
  cis_free(&b->col);
  cis_free(&b->val);
  b->nnz = 0;
  b->cap = 0;
}

void cis_ell_free(cis_ell *e) {
  if (!e) return;
  cis_free(&e->slice_ptr);
  cis_free(&e->slice_width);
  cis_free(&e->row_len);
  cis_free(&e->col);
  cis_free(&e->val);
  e->nslices = 0;
  e->nnz = 0;
}

void cis_hyb_free(cis_hyb *h) {
  if (!h) return;
  if (h->census) cis_census_free(h->census);
  cis_free(&h->census);
  cis_ell_free(&h->ell);
  if (h->blocks)
    for (int64_t b = 0; b < h->nblocks; b++) cis_csr_block_free(&h->blocks[b]);
  cis_free(&h->blocks);
  h->nblocks = 0;
  h->ncached = 0;
}

int64_t cis_ell_bytes_of(int64_t entries, int64_t nslices, int64_t nrows) {
  return entries * (int64_t)(sizeof(int32_t) + sizeof(double)) +
         (nslices + 1) * (int64_t)sizeof(int64_t) + nslices * (int64_t)sizeof(int32_t) +
         nrows * (int64_t)sizeof(int32_t);
}

int64_t cis_ell_bytes(const cis_ell *e) {
  return cis_ell_bytes_of(e->slice_ptr ? e->slice_ptr[e->nslices] : 0, e->nslices, e->nrows);
}

/* Only the CSR blocks: the ELL part is counted by cis_ell_bytes. */
int64_t cis_hyb_cached_bytes(const cis_hyb *h) {
  int64_t bytes = 0;
  for (int64_t b = 0; b < h->nblocks; b++) {
    const cis_csr_block *blk = &h->blocks[b];
    if (!cis_csr_block_cached(blk)) continue;
    bytes += (blk->nrows + 1) * (int64_t)sizeof(int64_t) +
             blk->cap * (int64_t)(sizeof(int32_t) + sizeof(double));
  }
  return bytes;
}

/* ---- construction ----------------------------------------------------------------------- */

static cis_err check_csr(int64_t n, const int64_t *rowptr, const int32_t *col, int64_t boundary) {
  CIS_CHECK(n >= 0 && n <= INT32_MAX, CIS_ERR_INPUT,
            "hybrid matrix: %lld rows, expected 0..2^31-1", (long long)n);
  CIS_CHECK(boundary >= 0 && boundary <= n, CIS_ERR_INPUT,
            "hybrid matrix: boundary %lld outside 0..%lld", (long long)boundary, (long long)n);
  CIS_CHECK(rowptr[0] == 0, CIS_ERR_INPUT, "CSR matrix: rowptr[0] = %lld, expected 0",
            (long long)rowptr[0]);
  for (int64_t i = 0; i < n; i++) {
    CIS_CHECK(rowptr[i + 1] >= rowptr[i], CIS_ERR_INPUT,
              "CSR matrix: rowptr decreases at row %lld", (long long)i);
    for (int64_t p = rowptr[i]; p < rowptr[i + 1]; p++)
      CIS_CHECK(col[p] >= 0 && col[p] < n, CIS_ERR_INPUT,
                "CSR matrix: row %lld has column %d, expected 0..%lld", (long long)i,
                (int)col[p], (long long)(n - 1));
  }
  return CIS_OK;
}

/* Row lengths and slice shapes; arrays are then filled by ell_fill. */
static cis_err ell_shape(int64_t n, const int64_t *rowptr, const int32_t *col, int64_t boundary,
                         int slice, cis_ell *e) {
  e->nrows = n;
  e->boundary = boundary;
  e->slice = slice;
  e->nslices = (n + slice - 1) / slice;
  CIS_CALL(cis_calloc(&e->row_len, (size_t)n, sizeof *e->row_len, "ELL row lengths"));
  CIS_CALL(cis_calloc(&e->slice_width, (size_t)e->nslices, sizeof *e->slice_width,
                      "ELL slice widths"));
  CIS_CALL(cis_calloc(&e->slice_ptr, (size_t)e->nslices + 1, sizeof *e->slice_ptr,
                      "ELL slice offsets"));
  e->nnz = 0;
  for (int64_t i = 0; i < n; i++) {
    int32_t len = 0;
    for (int64_t p = rowptr[i]; p < rowptr[i + 1]; p++) len += col[p] < boundary;
    e->row_len[i] = len;
    e->nnz += len;
    int64_t s = i / slice;
    if (len > e->slice_width[s]) e->slice_width[s] = len;
  }
  for (int64_t s = 0; s < e->nslices; s++) {
    int64_t rows = CIS_MIN((int64_t)slice, n - s * slice);
    e->slice_ptr[s + 1] = e->slice_ptr[s] + rows * e->slice_width[s];
  }
  return CIS_OK;
}

static cis_err ell_fill(const int64_t *rowptr, const int32_t *col, const double *val,
                        cis_ell *e) {
  int64_t entries = e->slice_ptr[e->nslices];
  /* calloc: padding is (col 0, val 0.0), harmless to read. */
  CIS_CALL(cis_calloc(&e->col, (size_t)entries, sizeof *e->col, "ELL column indices"));
  CIS_CALL(cis_calloc(&e->val, (size_t)entries, sizeof *e->val, "ELL values"));
  for (int64_t i = 0; i < e->nrows; i++) {
    int64_t s = i / e->slice, l = i % e->slice;
    int64_t q = e->slice_ptr[s] + l * e->slice_width[s];
    for (int64_t p = rowptr[i]; p < rowptr[i + 1]; p++) {
      if (col[p] >= e->boundary) continue;
      e->col[q] = col[p];
      e->val[q] = val[p];
      q++;
    }
  }
  return CIS_OK;
}

static cis_err block_fill(const int64_t *rowptr, const int32_t *col, const double *val,
                          int64_t boundary, cis_csr_block *b) {
  int64_t nnz = 0;
  for (int64_t i = b->row0; i < b->row0 + b->nrows; i++)
    for (int64_t p = rowptr[i]; p < rowptr[i + 1]; p++) nnz += col[p] >= boundary;
  CIS_CALL(cis_csr_block_reserve(b, b->nrows, nnz));
  int64_t q = 0;
  b->rowptr[0] = 0;
  for (int64_t l = 0; l < b->nrows; l++) {
    int64_t i = b->row0 + l;
    for (int64_t p = rowptr[i]; p < rowptr[i + 1]; p++) {
      if (col[p] < boundary) continue;
      b->col[q] = col[p];
      b->val[q] = val[p];
      q++;
    }
    b->rowptr[l + 1] = q;
  }
  b->nnz = q;
  return CIS_OK;
}

static int64_t auto_block_rows(int64_t n, int64_t nnz_exp) {
  if (n == 0) return 1;
  double per_row = nnz_exp > 0 ? (double)nnz_exp / (double)n : 1.0;
  int64_t rows = (int64_t)((double)CIS_HYB_AUTO_BLOCK_NNZ / per_row);
  return CIS_MAX((int64_t)1, CIS_MIN(rows, n));
}

static cis_err hyb_blocks(const int64_t *rowptr, const int32_t *col, const double *val,
                          int64_t block_rows, cis_hyb *h) {
  int64_t n = h->n;
  h->nnz_exp = rowptr[n] - h->ell.nnz;
  h->block_rows = block_rows > 0 ? block_rows : auto_block_rows(n, h->nnz_exp);
  h->nblocks = (n + h->block_rows - 1) / h->block_rows;
  CIS_CALL(cis_calloc(&h->blocks, (size_t)h->nblocks, sizeof *h->blocks, "Expansion blocks"));
  for (int64_t b = 0; b < h->nblocks; b++) {
    cis_csr_block *blk = &h->blocks[b];
    blk->row0 = b * h->block_rows;
    blk->nrows = CIS_MIN(h->block_rows, n - blk->row0);
    CIS_CALL(block_fill(rowptr, col, val, h->ell.boundary, blk));
    h->ncached++;
  }
  return CIS_OK;
}

cis_err cis_hyb_from_csr(int64_t n, const int64_t *rowptr, const int32_t *col,
                         const double *val, int64_t boundary, int64_t block_rows, int slice,
                         cis_hyb *out) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  memset(out, 0, sizeof *out);
  CIS_TRY(check_csr(n, rowptr, col, boundary));
  if (slice <= 0) slice = CIS_HYB_DEFAULT_SLICE;
  out->n = n;
  CIS_TRY(ell_shape(n, rowptr, col, boundary, slice, &out->ell));
  CIS_TRY(ell_fill(rowptr, col, val, &out->ell));
  CIS_TRY(hyb_blocks(rowptr, col, val, block_rows, out));
cleanup:
  if (err != CIS_OK) cis_hyb_free(out);
  return err;
}

/* ---- the CPU product ---------------------------------------------------------------------- */

/* Y[i, :] = ELL row i times X (overwrites). */
static void ell_row(const cis_ell *e, int64_t n, int k, const double *X, double *Y, int64_t i) {
  const int64_t q = cis_ell_row_start(e, i);
  const int32_t *c = e->col + q;
  const double *v = e->val + q;
  int32_t len = e->row_len[i];
  for (int j = 0; j < k; j++) {
    const double *x = X + (int64_t)j * n;
    double acc = 0.0;
    for (int32_t t = 0; t < len; t++) acc += v[t] * x[c[t]];
    Y[(int64_t)j * n + i] = acc;
  }
}

/* Y[i, :] += local row l of block b times X. */
static void csr_row(const cis_csr_block *b, int64_t n, int k, const double *X, double *Y,
                    int64_t l) {
  int64_t p0 = b->rowptr[l], p1 = b->rowptr[l + 1];
  int64_t i = b->row0 + l;
  for (int j = 0; j < k; j++) {
    const double *x = X + (int64_t)j * n;
    double acc = 0.0;
    for (int64_t p = p0; p < p1; p++) acc += b->val[p] * x[b->col[p]];
    Y[(int64_t)j * n + i] += acc;
  }
}

static const cis_csr_block *block_of_row(const cis_hyb *h, int64_t i) {
  int64_t b = i / h->block_rows;
  /* Blocks are uniform by construction; the guard keeps a foreign layout correct. */
  if (b >= h->nblocks || i < h->blocks[b].row0 || i >= h->blocks[b].row0 + h->blocks[b].nrows) {
    for (b = 0; b < h->nblocks; b++)
      if (i >= h->blocks[b].row0 && i < h->blocks[b].row0 + h->blocks[b].nrows) break;
    if (b == h->nblocks) return NULL;
  }
  return &h->blocks[b];
}

cis_err cis_hyb_regen_rows(const cis_hyb *h, int64_t row0, int64_t nrows, cis_csr_block *out) {
  CIS_CHECK(h->regen != NULL, CIS_ERR_INTERNAL,
            "Expansion rows %lld..%lld are not cached and there is no regenerator",
            (long long)row0, (long long)(row0 + nrows - 1));
  out->nnz = 0;
  CIS_CALL(h->regen(h->regen_ctx, row0, nrows, out));
  CIS_CHECK(out->rowptr && out->rowptr[0] == 0, CIS_ERR_INTERNAL,
            "regenerated rows from %lld: row pointers missing or rowptr[0] != 0",
            (long long)row0);
  for (int64_t l = 0; l < nrows; l++)
    CIS_CHECK(out->rowptr[l + 1] >= out->rowptr[l], CIS_ERR_INTERNAL,
              "regenerated rows from %lld: row pointers decrease at row %lld", (long long)row0,
              (long long)(row0 + l));
  int64_t nnz = out->rowptr[nrows];
  CIS_CHECK(nnz <= out->cap && (nnz == 0 || (out->col && out->val)), CIS_ERR_INTERNAL,
            "regenerated rows from %lld: %lld entries but room for %lld", (long long)row0,
            (long long)nnz, (long long)out->cap);
  for (int64_t p = 0; p < nnz; p++)
    CIS_CHECK(out->col[p] >= h->ell.boundary && out->col[p] < h->n, CIS_ERR_INTERNAL,
              "regenerated rows from %lld: column %d outside the Expansion Space %lld..%lld",
              (long long)row0, (int)out->col[p], (long long)h->ell.boundary,
              (long long)(h->n - 1));
  out->row0 = row0;
  out->nrows = nrows;
  out->nnz = nnz;
  return CIS_OK;
}

cis_err cis_hyb_block_rows(const cis_hyb *h, int64_t b, cis_csr_block *scratch,
                           const cis_csr_block **src) {
  const cis_csr_block *want = &h->blocks[b];
  if (cis_csr_block_cached(want)) {
    *src = want;
    return CIS_OK;
  }
  CIS_CALL(cis_hyb_regen_rows(h, want->row0, want->nrows, scratch));
  *src = scratch;
  return CIS_OK;
}

/* Expansion entries of the rows of block b into lens (from its row0): cached, counted by the
 * census, or regenerated into scratch. */
static cis_err block_lengths(const cis_hyb *h, int64_t b, cis_csr_block *scratch, int64_t *lens) {
  const cis_csr_block *blk = &h->blocks[b];
  const cis_census *c = h->census;
  if (!cis_csr_block_cached(blk) && c && c->counted[b]) {
    for (int64_t l = 0; l < blk->nrows; l++) lens[blk->row0 + l] = c->rlen[blk->row0 + l];
    return CIS_OK;
  }
  CIS_CALL(cis_hyb_block_rows(h, b, scratch, &blk));
  for (int64_t l = 0; l < blk->nrows; l++)
    lens[blk->row0 + l] = blk->rowptr[l + 1] - blk->rowptr[l];
  return CIS_OK;
}

cis_err cis_hyb_to_csr(const cis_hyb *h, const int32_t *rlen, cis_csr *out) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  cis_worker_error we = {CIS_OK, ""};
  int bad = 0;
  memset(out, 0, sizeof *out);
  out->n = h->n;
  CIS_TRY(cis_malloc(&out->rowptr, (size_t)h->n + 1, sizeof *out->rowptr, "matrix row pointers"));
  int64_t *rp = out->rowptr;
  rp[0] = 0;
  if (rlen) {
    for (int64_t r = 0; r < h->n; r++) rp[r + 1] = rlen[r];
  } else {
#pragma omp parallel
    {
      cis_csr_block scratch;
      memset(&scratch, 0, sizeof scratch);
#pragma omp for schedule(dynamic, 1)
      for (int64_t b = 0; b < h->nblocks; b++) {
        if (cis_worker_error_seen(&we)) continue;
        cis_err e = block_lengths(h, b, &scratch, rp + 1);
        if (e != CIS_OK) cis_worker_error_keep(&we, e);
      }
      cis_csr_block_free(&scratch);
    }
    if (we.code != CIS_OK) CIS_FAIL(we.code, "%s", we.msg);
  }
  for (int64_t r = 0; r < h->n; r++) rp[r + 1] += rp[r] + h->ell.row_len[r];
  out->nnz = rp[h->n];
  CIS_TRY(cis_malloc(&out->col, (size_t)CIS_MAX(out->nnz, (int64_t)1), sizeof *out->col,
                     "matrix columns"));
  CIS_TRY(cis_malloc(&out->val, (size_t)CIS_MAX(out->nnz, (int64_t)1), sizeof *out->val,
                     "matrix values"));
#pragma omp parallel reduction(| : bad)
  {
    cis_csr_block scratch;
    memset(&scratch, 0, sizeof scratch);
#pragma omp for schedule(dynamic, 1)
    for (int64_t b = 0; b < h->nblocks; b++) {
      const cis_csr_block *blk = NULL;
      if (cis_worker_error_seen(&we)) continue;
      cis_err e = cis_hyb_block_rows(h, b, &scratch, &blk);
      if (e != CIS_OK) {
        cis_worker_error_keep(&we, e);
        continue;
      }
      for (int64_t l = 0; l < blk->nrows; l++) {
        int64_t r = blk->row0 + l, e0 = cis_ell_row_start(&h->ell, r), q = rp[r];
        int64_t p0 = blk->rowptr[l], p1 = blk->rowptr[l + 1];
        if (q + h->ell.row_len[r] + (p1 - p0) != rp[r + 1]) {
          bad = 1;
          break;
        }
        memcpy(out->col + q, h->ell.col + e0, (size_t)h->ell.row_len[r] * sizeof *out->col);
        memcpy(out->val + q, h->ell.val + e0, (size_t)h->ell.row_len[r] * sizeof *out->val);
        q += h->ell.row_len[r];
        memcpy(out->col + q, blk->col + p0, (size_t)(p1 - p0) * sizeof *out->col);
        memcpy(out->val + q, blk->val + p0, (size_t)(p1 - p0) * sizeof *out->val);
      }
    }
    cis_csr_block_free(&scratch);
  }
  if (we.code != CIS_OK) CIS_FAIL(we.code, "%s", we.msg);
  if (bad) CIS_FAIL(CIS_ERR_INTERNAL, "whole matrix: Expansion rows changed since they were counted");
cleanup:
  if (err != CIS_OK) cis_csr_free(out);
  return err;
}

static cis_err apply_uncached(const cis_hyb *h, const cis_csr_block *want, cis_csr_block *scratch,
                              int k, const double *X, double *Y) {
  CIS_CALL(cis_hyb_regen_rows(h, want->row0, want->nrows, scratch));
  for (int64_t l = 0; l < want->nrows; l++) csr_row(scratch, h->n, k, X, Y, l);
  return CIS_OK;
}

static void apply_resident(const cis_hyb *h, int k, const double *X, double *Y) {
#pragma omp parallel for schedule(dynamic, 256)
  for (int64_t i = 0; i < h->n; i++) {
    ell_row(&h->ell, h->n, k, X, Y, i);
    const cis_csr_block *b = block_of_row(h, i);
    if (b && cis_csr_block_cached(b)) csr_row(b, h->n, k, X, Y, i - b->row0);
  }
}

static void apply_streamed(const cis_hyb *h, int k, const double *X, double *Y,
                           cis_worker_error *we) {
#pragma omp parallel
  {
    cis_csr_block scratch;
    memset(&scratch, 0, sizeof scratch);
#pragma omp for schedule(dynamic, 1)
    for (int64_t b = 0; b < h->nblocks; b++) {
      if (cis_csr_block_cached(&h->blocks[b]) || cis_worker_error_seen(we)) continue;
      const cis_csr_block *blk = &h->blocks[b];
      cis_err e = h->regen_apply
                      ? h->regen_apply(h->regen_ctx, blk->row0, blk->nrows, k, X, Y, h->n)
                      : apply_uncached(h, blk, &scratch, k, X, Y);
      if (e != CIS_OK) cis_worker_error_keep(we, e);
    }
    cis_csr_block_free(&scratch);
  }
}

cis_err cis_hyb_apply_cpu(const cis_hyb *h, int k, const double *X, double *Y) {
  CIS_CHECK(k >= 0, CIS_ERR_INTERNAL, "hybrid product: %d vectors", k);
  if (h->n == 0 || k == 0) return CIS_OK;
  CIS_CHECK(h->nblocks > 0 && h->block_rows > 0, CIS_ERR_INTERNAL,
            "hybrid product: matrix of %lld rows has no Expansion blocks", (long long)h->n);
  apply_resident(h, k, X, Y);
  if (h->ncached == h->nblocks) return CIS_OK;
  CIS_CHECK(h->regen != NULL, CIS_ERR_INTERNAL,
            "hybrid product: %lld of %lld Expansion blocks are not cached and there is no "
            "regenerator", (long long)(h->nblocks - h->ncached), (long long)h->nblocks);
  cis_worker_error we = {CIS_OK, ""};
  apply_streamed(h, k, X, Y, &we);
  CIS_WORKER_RERAISE(we);
  return CIS_OK;
}

void cis_lane_order(int64_t p0, int64_t p1, int v, int lanes, int32_t *to) {
  int64_t k = 0;
  if (lanes == 0) {
    for (; k < p1 - p0; k++) to[k] = (int32_t)k;
    return;
  }
  for (int64_t a = p0 & -(int64_t)v; a < p1; a += (int64_t)v * lanes)
    for (int j = 0; j < v; j++)
      for (int l = 0; l < lanes; l++) {
        int64_t pos = a + (int64_t)v * l + j;
        if (pos >= p0 && pos < p1) to[k++] = (int32_t)(pos - p0);
      }
}

int64_t cis_ell_tile_offsets(const cis_ell *e, int64_t group, int rows, int tile_cols,
                             int64_t ntiles, uint32_t *off) {
  int64_t row0 = group * rows, total = 0;
  memset(off, 0, (size_t)(ntiles * rows + 1) * sizeof *off);
  for (int l = 0; l < rows && row0 + l < e->nrows; l++) {
    const int32_t *col = e->col + cis_ell_row_start(e, row0 + l);
    for (int32_t t = 0; t < e->row_len[row0 + l]; t++)
      off[(int64_t)(col[t] / tile_cols) * rows + l]++;
  }
  for (int64_t i = 0; i < ntiles * rows; i++) {
    uint32_t c = off[i];
    off[i] = (uint32_t)total;
    total += c;
    if (total > (int64_t)UINT32_MAX) return -1;
  }
  off[ntiles * rows] = (uint32_t)total;
  return total;
}

void cis_ell_tile_fill(const cis_ell *e, int64_t group, int rows, int tile_cols, int64_t ntiles,
                       const uint32_t *off, uint32_t *cursor, uint16_t *col, double *val) {
  int64_t row0 = group * rows;
  memcpy(cursor, off, (size_t)(ntiles * rows) * sizeof *cursor);
  for (int l = 0; l < rows && row0 + l < e->nrows; l++) {
    const int64_t q = cis_ell_row_start(e, row0 + l);
    const int32_t *c = e->col + q;
    const double *v = e->val + q;
    for (int32_t t = 0; t < e->row_len[row0 + l]; t++) {
      int32_t tile = c[t] / tile_cols;
      uint32_t at = cursor[(int64_t)tile * rows + l]++;
      col[at] = (uint16_t)(c[t] - tile * tile_cols);
      val[at] = v[t];
    }
  }
}
