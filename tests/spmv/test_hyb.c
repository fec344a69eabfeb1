/* cis_hyb_apply_cpu against a plain CSR product on seeded random matrices: sizes larger than a
 * slice, empty rows, rows much longer than a slice, boundaries 0..n, k = 1 and 3, cached and
 * regenerated Expansion blocks (the product, and the whole matrix gathered back by
 * cis_hyb_to_csr), and an error raised inside a regenerating worker thread; the
 * lane order and the column tiles of the device layout. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "spmv/hyb.h"

typedef struct {
  int64_t n, *rowptr;
  int32_t *col;
  double *val;
} csr;

static uint64_t rng_state = 88172645463325252ull;
static double urand(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (double)(rng_state >> 11) * (1.0 / 9007199254740992.0);
}

/* Row kinds: every 7th row empty, every 29th row dense (longer than 32 x any ELL width seen
 * in a slice), the rest at `density`. Columns ascending. */
static int make_csr(int64_t n, double density, csr *m) {
  m->n = n;
  m->rowptr = calloc((size_t)n + 1, sizeof *m->rowptr);
  m->col = malloc((size_t)(n * n) * sizeof *m->col);
  m->val = malloc((size_t)(n * n) * sizeof *m->val);
  if (!m->rowptr || !m->col || !m->val) return 1;
  int64_t q = 0;
  for (int64_t i = 0; i < n; i++) {
    double d = i % 7 == 3 ? 0.0 : i % 29 == 5 ? 0.9 : density;
    for (int64_t j = 0; j < n; j++)
      if (urand() < d) {
        m->col[q] = (int32_t)j;
        m->val[q++] = 2.0 * urand() - 1.0;
      }
    m->rowptr[i + 1] = q;
  }
  return 0;
}

static void csr_apply(const csr *m, int k, const double *X, double *Y) {
  for (int j = 0; j < k; j++)
    for (int64_t i = 0; i < m->n; i++) {
      double acc = 0.0;
      for (int64_t p = m->rowptr[i]; p < m->rowptr[i + 1]; p++)
        acc += m->val[p] * X[j * m->n + m->col[p]];
      Y[j * m->n + i] = acc;
    }
}

typedef struct {
  const csr *m;
  int64_t boundary;
  int64_t fail_row0; /* raise an error when asked for the block at this row; -1 never */
} regen_ctx;

/* Grows the output row by row through cis_csr_block_reserve, as a real generator would. */
static cis_err fake_regen(void *vctx, int64_t row0, int64_t nrows, cis_csr_block *out) {
  const regen_ctx *c = vctx;
  if (row0 == c->fail_row0)
    CIS_ERROR(CIS_ERR_NUMERIC, "fake generator failed at row %lld", (long long)row0);
  CIS_CALL(cis_csr_block_reserve(out, nrows, 1));
  int64_t q = 0;
  out->rowptr[0] = 0;
  for (int64_t l = 0; l < nrows; l++) {
    int64_t i = row0 + l;
    for (int64_t p = c->m->rowptr[i]; p < c->m->rowptr[i + 1]; p++) {
      if (c->m->col[p] < c->boundary) continue;
      if (q + 1 > out->cap) CIS_CALL(cis_csr_block_reserve(out, nrows, 2 * out->cap + 1));
      out->col[q] = c->m->col[p];
      out->val[q++] = c->m->val[p];
    }
    out->rowptr[l + 1] = q;
  }
  out->nnz = q;
  return CIS_OK;
}

/* Drop every other block from the cache so it must be regenerated. */
static void uncache_some(cis_hyb *h, regen_ctx *ctx) {
  for (int64_t b = 0; b < h->nblocks; b += 2) {
    cis_csr_block_free(&h->blocks[b]);
    h->ncached--;
  }
  h->regen = fake_regen;
  h->regen_ctx = ctx;
}

static double max_err(int64_t count, const double *a, const double *b) {
  double e = 0.0;
  for (int64_t i = 0; i < count; i++) e = fmax(e, fabs(a[i] - b[i]));
  return e;
}

static int check_case(const csr *m, int64_t boundary, int64_t block_rows, int slice, int k,
                      int uncached) {
  int64_t n = m->n;
  double *X = malloc((size_t)(n * k) * sizeof *X), *Y = malloc((size_t)(n * k) * sizeof *Y);
  double *R = malloc((size_t)(n * k) * sizeof *R);
  if (!X || !Y || !R) return 1;
  for (int64_t i = 0; i < n * k; i++) X[i] = 2.0 * urand() - 1.0, Y[i] = NAN;
  cis_hyb h;
  regen_ctx ctx = {m, boundary, -1};
  int bad = 0;
  if (cis_hyb_from_csr(n, m->rowptr, m->col, m->val, boundary, block_rows, slice, &h)) {
    cis_error_print(1);
    return 1;
  }
  if (h.ell.nnz + h.nnz_exp != m->rowptr[n]) bad = 1;
  if (uncached) uncache_some(&h, &ctx);
  csr_apply(m, k, X, R);
  if (cis_hyb_apply_cpu(&h, k, X, Y)) {
    cis_error_print(1);
    bad = 1;
  }
  double e = max_err(n * k, Y, R);
  if (!(e < 1e-12)) bad = 1;
  /* the whole matrix gathered back (cis_hyb_to_csr), rows sorted: the CSR it came from */
  cis_csr w;
  if (cis_hyb_to_csr(&h, NULL, &w) != CIS_OK || cis_csr_sort_rows(&w) != CIS_OK) {
    cis_error_print(1);
    bad = 1;
  } else {
    int same = w.n == n && w.nnz == m->rowptr[n] &&
               !memcmp(w.rowptr, m->rowptr, (size_t)(n + 1) * sizeof *w.rowptr) &&
               !memcmp(w.col, m->col, (size_t)w.nnz * sizeof *w.col) &&
               !memcmp(w.val, m->val, (size_t)w.nnz * sizeof *w.val);
    if (!same) {
      printf("FAIL n=%lld boundary=%lld uncached=%d: cis_hyb_to_csr differs from the source\n",
             (long long)n, (long long)boundary, uncached);
      bad = 1;
    }
    cis_csr_free(&w);
  }
  printf("%s n=%lld boundary=%lld block_rows=%lld slice=%d k=%d uncached=%d: max|dy| = %.2e\n",
         bad ? "FAIL" : "ok  ", (long long)n, (long long)boundary, (long long)h.block_rows,
         h.ell.slice, k, uncached, e);
  cis_hyb_free(&h);
  free(X), free(Y), free(R);
  return bad;
}

/* A generator error in a worker thread comes back to the caller with its code and message. */
static int check_worker_error(const csr *m) {
  cis_hyb h;
  regen_ctx ctx = {m, 10, 40};
  if (cis_hyb_from_csr(m->n, m->rowptr, m->col, m->val, 10, 20, 0, &h)) return 1;
  uncache_some(&h, &ctx);
  double *X = calloc((size_t)m->n, sizeof *X), *Y = calloc((size_t)m->n, sizeof *Y);
  if (!X || !Y) return 1;
  cis_error_clear();
  cis_err e = cis_hyb_apply_cpu(&h, 1, X, Y);
  int bad = e != CIS_ERR_NUMERIC || !strstr(cis_error_message(), "fake generator failed at row 40");
  printf("%s worker error: code %s, message \"%s\"\n", bad ? "FAIL" : "ok  ", cis_err_name(e),
         cis_error_message());
  cis_csr w;
  cis_error_clear();
  e = cis_hyb_to_csr(&h, NULL, &w);
  int bad2 = e != CIS_ERR_NUMERIC || !strstr(cis_error_message(), "fake generator failed at row 40") ||
             w.rowptr != NULL;
  printf("%s worker error in cis_hyb_to_csr: code %s, message \"%s\"\n", bad2 ? "FAIL" : "ok  ",
         cis_err_name(e), cis_error_message());
  bad |= bad2;
  cis_hyb_free(&h);
  free(X), free(Y);
  return bad;
}

/* cis_lane_order on rows of every length from every alignment: a permutation of the row that
 * keeps each entry in its window of v * lanes positions, places a window's entries component
 * by component (position a + v l + j for the entry number j * lanes + l of a full window), and
 * is the identity for lanes 0; cis_lane_pos gives each entry's place alike. */
static int check_lane_order(void) {
  int32_t to[300];
  char seen[300];
  int bad = 0, cases = 0;
  const int vs[] = {2, 4}, lanes_list[] = {0, 4, 8, 16, 32};
  for (int vi = 0; vi < 2; vi++)
    for (int li = 0; li < 5; li++)
      for (int64_t p0 = 1000; p0 < 1008; p0++)
        for (int64_t len = 0; len <= 280; len += (len < 70 ? 1 : 13)) {
          int v = vs[vi], lanes = lanes_list[li];
          int64_t p1 = p0 + len, base = p0 & -(int64_t)v, win = (int64_t)v * lanes;
          cis_lane_order(p0, p1, v, lanes, to);
          memset(seen, 0, sizeof seen);
          int64_t prev_key = -1, prev_win = -1;
          for (int64_t k = 0; k < len && !bad; k++) {
            int64_t pos = p0 + to[k];
            if (to[k] < 0 || to[k] >= len || seen[to[k]]) bad = 1;
            if (bad) break;
            seen[to[k]] = 1;
            if (lanes == 0) {
              bad = to[k] != k;
              continue;
            }
            int64_t w = (pos - base) / win, a = base + w * win;
            int64_t key = ((pos - a) % v) * lanes + (pos - a) / v;
            if (w != (p0 + k - base) / win) bad = 1;             /* left its window */
            if (w == prev_win && key <= prev_key) bad = 1;       /* not component by component */
            if (a >= p0 && a + win <= p1) {                      /* a full window: closed form */
              int64_t e = p0 + k - a;
              if (pos != a + v * (e % lanes) + e / lanes) bad = 1;
            }
            prev_key = key, prev_win = w;
          }
          for (int64_t k = 0; k < len && !bad; k++) /* one entry at a time, as the device does */
            if (cis_lane_pos(p0, p1, v, lanes, k) != p0 + to[k]) bad = 1;
          cases++;
          if (bad) {
            printf("FAIL lane order: p0 %lld, %lld entries, v %d, %d lanes\n", (long long)p0,
                   (long long)len, v, lanes);
            return 1;
          }
        }
  printf("ok   lane order: %d rows (v 2 and 4, 0 to 32 lanes, every alignment)\n", cases);
  return 0;
}

/* The Reference region in column tiles (cis_ell_tile_offsets, cis_ell_tile_fill): the product
 * of its entries, each at its tile's first column plus its 16-bit column, equals the product of
 * the matrix's columns below the boundary; every segment stays inside its tile, its columns
 * ascend (the row's order), and the offsets end at the ELL's entry count. */
static int check_tiles(const csr *m, int64_t boundary, int tile_cols, int rows) {
  int64_t n = m->n, ntiles = (boundary + tile_cols - 1) / tile_cols, total = 0;
  int64_t ngroups = (n + rows - 1) / rows, per = ntiles * rows + 1;
  double *x = malloc((size_t)n * sizeof *x), *y = calloc((size_t)n, sizeof *y);
  double *r = calloc((size_t)n, sizeof *r);
  uint32_t *off = malloc((size_t)per * sizeof *off), *cur = malloc((size_t)per * sizeof *cur);
  uint16_t *col = malloc((size_t)(m->rowptr[n] + 1) * sizeof *col);
  double *val = malloc((size_t)(m->rowptr[n] + 1) * sizeof *val);
  cis_hyb h;
  int bad = 0;
  if (!x || !y || !r || !off || !cur || !col || !val) return 1;
  if (cis_hyb_from_csr(n, m->rowptr, m->col, m->val, boundary, 0, 0, &h)) {
    cis_error_print(1);
    return 1;
  }
  for (int64_t i = 0; i < n; i++) x[i] = 2.0 * urand() - 1.0;
  for (int64_t i = 0; i < n; i++)
    for (int64_t p = m->rowptr[i]; p < m->rowptr[i + 1]; p++)
      if (m->col[p] < boundary) r[i] += m->val[p] * x[m->col[p]];
  for (int64_t g = 0; g < ngroups && !bad; g++) {
    int64_t cnt = cis_ell_tile_offsets(&h.ell, g, rows, tile_cols, ntiles, off);
    if (cnt < 0 || off[ntiles * rows] != (uint32_t)cnt) bad = 1;
    if (bad) break;
    total += cnt;
    cis_ell_tile_fill(&h.ell, g, rows, tile_cols, ntiles, off, cur, col, val);
    for (int64_t t = 0; t < ntiles; t++)
      for (int l = 0; l < rows; l++) {
        uint32_t p0 = off[t * rows + l], p1 = off[t * rows + l + 1];
        if (p1 < p0 || (g * rows + l >= n && p1 > p0)) bad = 1;
        for (uint32_t p = p0; p < p1 && !bad; p++) {
          int64_t c = t * tile_cols + col[p];
          if (col[p] >= tile_cols || c >= boundary || (p > p0 && col[p] <= col[p - 1])) bad = 1;
          else y[g * rows + l] += val[p] * x[c];
        }
      }
  }
  double e = max_err(n, y, r);
  if (bad || total != h.ell.nnz || !(e < 1e-12)) bad = 1;
  printf("%s tiles: boundary %lld, %d columns a tile, %d rows a group: %lld entries, "
         "max|dy| = %.2e\n", bad ? "FAIL" : "ok  ", (long long)boundary, tile_cols, rows,
         (long long)total, e);
  cis_hyb_free(&h);
  free(x), free(y), free(r), free(off), free(cur), free(col), free(val);
  return bad;
}

int main(void) {
  int fails = 0;
  fails += check_lane_order();
  csr m;
  if (make_csr(301, 0.08, &m)) return 1;
  int64_t n = m.n;
  int64_t bounds[] = {0, 1, 37, n / 2, n - 1, n};
  for (size_t b = 0; b < sizeof bounds / sizeof *bounds; b++)
    for (int k = 1; k <= 3; k += 2) {
      fails += check_case(&m, bounds[b], 0, 0, k, 0);
      fails += check_case(&m, bounds[b], 40, 7, k, 0);
      fails += check_case(&m, bounds[b], 40, 32, k, 1);
      fails += check_case(&m, bounds[b], 1, 64, k, 1);
    }
  for (size_t b = 1; b < sizeof bounds / sizeof *bounds; b++) {
    fails += check_tiles(&m, bounds[b], 16, 7);
    fails += check_tiles(&m, bounds[b], 64, 32);
  }
  fails += check_worker_error(&m);
  free(m.rowptr), free(m.col), free(m.val);
  printf("%d failure(s)\n", fails);
  return fails != 0;
}
