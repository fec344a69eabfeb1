/* cisolve: the column split of a small matrix over a thread-block cluster (spmv/split.h). */
#include "spmv/split.h"

#include <string.h>

#include "core/util.h"

void cis_split_free(cis_split *s) {
  cis_free(&s->blk);
  cis_free(&s->first);
  cis_free(&s->w);
  cis_free(&s->esc);
  cis_free(&s->table);
  memset(s, 0, sizeof *s);
}

int64_t cis_split_bytes(const cis_split *s) {
  int64_t blocks = (int64_t)s->groups * s->parts;
  return s->nwords * 4 + s->nesc * 8 + s->ntab1 * 8 +
         blocks * (CIS_SPLIT_T * 4 + (int64_t)sizeof(cis_split_blk));
}

/* The first i in [0, n] with a[i] >= v (a: n + 1 ascending values; counts of entries, exact
 * in a double up to 2^53). */
static int64_t lower_bound(const double *a, int64_t n, double v) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (a[mid] < v)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* For the groups grow[0..G], each group's part cuts (c0[g * (P + 1) + h]), the ratio of its
 * largest part to the mean (excess), the largest part of all (*worst) and the widest (*xw).
 * cum: n + 1 scratch. */
static void part_cuts(int64_t n, const int64_t *rp, const int32_t *col, int P, int G,
                      const int32_t *grow, double *cum, int32_t *c0all, double *excess,
                      int64_t *worst, int *xw) {
  *worst = 0;
  *xw = 0;
  for (int g = 0; g < G; g++) {
    memset(cum, 0, (size_t)(n + 1) * sizeof *cum);
    for (int64_t p = rp[grow[g]]; p < rp[grow[g + 1]]; p++) cum[col[p] + 1]++;
    for (int64_t c = 0; c < n; c++) cum[c + 1] += cum[c];
    int32_t *c0 = c0all + (size_t)g * (P + 1);
    int64_t most = 0;
    c0[0] = 0;
    c0[P] = (int32_t)n;
    for (int h = 1; h <= P; h++) {
      if (h < P) {
        /* the entries left shared evenly among the parts left, each part at least one column
         * and at most CIS_SPLIT_PART, the parts left able to hold the columns left */
        double done = cum[c0[h - 1]];
        int64_t c = lower_bound(cum, n, done + (cum[n] - done) / (P - h + 1));
        c = CIS_MAX(c, CIS_MAX((int64_t)c0[h - 1] + 1, n - (int64_t)(P - h) * CIS_SPLIT_PART));
        c = CIS_MIN(c, (int64_t)c0[h - 1] + CIS_SPLIT_PART);
        c0[h] = (int32_t)CIS_MIN(c, n);
      }
      most = CIS_MAX(most, (int64_t)(cum[c0[h]] - cum[c0[h - 1]]));
      *xw = CIS_MAX(*xw, c0[h] - c0[h - 1]);
    }
    excess[g] = cum[n] > 0 ? (double)P * (double)most / cum[n] : 1.0;
    *worst = CIS_MAX(*worst, most);
  }
}

/* The part of column c among a group's cuts (c0[0] = 0 <= c < c0[P] = n). */
static int part_of(const int32_t *c0, int P, int32_t c) {
  int h = 0;
  while (h + 1 < P && c >= c0[h + 1]) h++;
  return h;
}

/* Words and escaped values of block (g, h) of the layout: the stream (wd, its rows' group rows
 * and the escaped values before each word) when wd is not NULL; returns the word count. */
static int64_t block_stream(const int64_t *rp, const int32_t *col, const double *val,
                            const cis_vdict *d, const int32_t *c0, int P, int h, int32_t r0,
                            int32_t r1, uint32_t *wd, uint16_t *wrow, int32_t *wesc,
                            double *esc, int64_t *nesc, int64_t *ndummy) {
  const uint32_t zero = (uint32_t)d->size << 16;
  int64_t s = 0, e = 0, dummy = 0;
  for (int32_t r = r0; r < r1; r++) {
    int64_t first = s;
    for (int64_t p = rp[r]; p < rp[r + 1]; p++) {
      if (part_of(c0, P, col[p]) != h) continue;
      int code = d->size ? cis_vdict_code(d, val[p]) : -1;
      if (wd) {
        wesc[s] = (int32_t)e;
        wrow[s] = (uint16_t)(r - r0);
        if (code < 0) esc[e] = val[p];
        wd[s] = (uint32_t)(col[p] - c0[h]) | (code < 0 ? CIS_SPLIT_ESC : (uint32_t)code) << 16;
      }
      e += code < 0;
      s++;
    }
    if (s == first) { /* a dummy word: 0 x x[c0[h]] */
      if (wd) {
        wesc[s] = (int32_t)e;
        wrow[s] = (uint16_t)(r - r0);
        wd[s] = zero;
      }
      s++;
      dummy++;
    }
    if (wd) wd[s - 1] |= CIS_SPLIT_END;
  }
  *nesc = e;
  *ndummy = dummy;
  return s;
}

cis_err cis_split_build(int64_t n, const int64_t *rp, const int32_t *col, const double *val,
                        const cis_vdict *d, int parts, int groups, int *fits, cis_split *out) {
  cis_err err = CIS_OK;
  const int P = parts, G = groups, B = parts * groups;
  double *wcum = NULL, *excess = NULL, *cum = NULL;
  int64_t *count = NULL, *ecount = NULL, best = INT64_MAX;
  int32_t *grow = NULL, *c0all = NULL, *bgrow = NULL, *bc0 = NULL;
  int bxw = 0;
  memset(out, 0, sizeof *out);
  *fits = 0;
  CIS_CHECK(P >= 1 && P <= CIS_SPLIT_MAXP && G >= 1 && n >= 0, CIS_ERR_INTERNAL,
            "split layout: %d clusters of %d blocks", G, P);
  CIS_CLEANUP_FUNCTION;
  if ((int64_t)P * CIS_SPLIT_PART < n || n < P || d->size >= (int32_t)CIS_SPLIT_ESC) return CIS_OK;
  CIS_TRY(cis_malloc(&wcum, (size_t)n + 1, sizeof *wcum, "split row weights"));
  CIS_TRY(cis_malloc(&cum, (size_t)n + 1, sizeof *cum, "split column counts"));
  CIS_TRY(cis_malloc(&excess, (size_t)G, sizeof *excess, "split group excess"));
  CIS_TRY(cis_malloc(&grow, (size_t)G + 1, sizeof *grow, "split groups"));
  CIS_TRY(cis_malloc(&bgrow, (size_t)G + 1, sizeof *bgrow, "split groups"));
  CIS_TRY(cis_malloc(&c0all, (size_t)G * (P + 1), sizeof *c0all, "split parts"));
  CIS_TRY(cis_malloc(&bc0, (size_t)G * (P + 1), sizeof *bc0, "split parts"));
  for (int64_t r = 0; r <= n; r++) wcum[r] = (double)rp[r];
  for (int pass = 0; pass < CIS_SPLIT_PASSES; pass++) {
    int64_t worst = 0;
    int xw = 0;
    grow[0] = 0;
    grow[G] = (int32_t)n;
    for (int g = 1; g < G; g++) grow[g] = (int32_t)lower_bound(wcum, n, wcum[n] * g / G);
    part_cuts(n, rp, col, P, G, grow, cum, c0all, excess, &worst, &xw);
    if (worst < best) {
      best = worst;
      bxw = xw;
      memcpy(bgrow, grow, (size_t)(G + 1) * sizeof *grow);
      memcpy(bc0, c0all, (size_t)G * (P + 1) * sizeof *c0all);
    }
    for (int64_t r = 0, g = 0; r < n; r++) { /* the next pass's weights */
      while (r >= grow[g + 1]) g++;
      wcum[r + 1] = wcum[r] + (double)(rp[r + 1] - rp[r]) * excess[g];
    }
  }
  /* each block's words and escaped values, then its runs */
  CIS_TRY(cis_calloc(&count, (size_t)B, sizeof *count, "split block words"));
  CIS_TRY(cis_calloc(&ecount, (size_t)B, sizeof *ecount, "split block escapes"));
  int64_t dummies = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : dummies)
  for (int b = 0; b < B; b++) {
    int g = b / P;
    int64_t dm = 0;
    count[b] = block_stream(rp, col, val, d, bc0 + (size_t)g * (P + 1), P, b % P, bgrow[g],
                            bgrow[g + 1], NULL, NULL, NULL, NULL, &ecount[b], &dm);
    dummies += dm;
  }
  out->parts = P;
  out->groups = G;
  out->xw = bxw;
  out->ntab1 = d->size + 1;
  int64_t words = 0, nesc = 0, longest = 0;
  for (int g = 0; g < G; g++) out->maxrows = CIS_MAX(out->maxrows, bgrow[g + 1] - bgrow[g]);
  for (int b = 0; b < B; b++) {
    int64_t L = ((count[b] + CIS_SPLIT_T - 1) / CIS_SPLIT_T + 3) / 4 * 4;
    if (ecount[b] > 65535 || L > INT32_MAX / 4) goto cleanup; /* does not fit */
    out->maxesc = (int)CIS_MAX((int64_t)out->maxesc, ecount[b]);
    longest = CIS_MAX(longest, count[b]);
    words += L * CIS_SPLIT_T;
    nesc += ecount[b];
  }
  if (out->maxrows > 65535 ||
      cis_split_shared(out->xw, out->ntab1, out->maxesc, out->maxrows) > CIS_SPLIT_SHARED)
    goto cleanup;
  CIS_TRY(cis_calloc(&out->blk, (size_t)B, sizeof *out->blk, "split blocks"));
  CIS_TRY(cis_malloc(&out->first, (size_t)B * CIS_SPLIT_T, sizeof *out->first, "split runs"));
  CIS_TRY(cis_malloc(&out->w, (size_t)CIS_MAX(words, (int64_t)4), sizeof *out->w, "split words"));
  CIS_TRY(cis_malloc(&out->esc, (size_t)CIS_MAX(nesc, (int64_t)1), sizeof *out->esc,
                     "split escaped values"));
  CIS_TRY(cis_malloc(&out->table, (size_t)out->ntab1, sizeof *out->table, "split value table"));
  if (d->size) memcpy(out->table, d->table, (size_t)d->size * sizeof *out->table);
  out->table[d->size] = 0.0;
  out->nwords = words;
  out->nesc = nesc;
  out->dummies = dummies;
  for (int b = 0, g; b < B; b++) {
    cis_split_blk *k = &out->blk[b];
    int64_t L = ((count[b] + CIS_SPLIT_T - 1) / CIS_SPLIT_T + 3) / 4 * 4;
    g = b / P;
    k->base = b ? out->blk[b - 1].base + (int64_t)out->blk[b - 1].steps * CIS_SPLIT_T : 0;
    k->c0 = bc0[(size_t)g * (P + 1) + b % P];
    k->cw = bc0[(size_t)g * (P + 1) + b % P + 1] - k->c0;
    k->r0 = bgrow[g];
    k->nr = bgrow[g + 1] - bgrow[g];
    k->steps = (int32_t)(L / 4);
    k->e0 = (int32_t)(b ? out->blk[b - 1].e0 + out->blk[b - 1].ne : 0);
    k->ne = (int32_t)ecount[b];
    out->padding += L * CIS_SPLIT_T - count[b];
  }
  {
    cis_worker_error we = {CIS_OK, ""};
    const uint32_t zero = (uint32_t)d->size << 16;
#pragma omp parallel
    {
      uint32_t *wd = NULL;
      uint16_t *wrow = NULL;
      int32_t *wesc = NULL;
      cis_err e = cis_malloc(&wd, (size_t)CIS_MAX(longest, (int64_t)1), sizeof *wd, "split stream");
      if (e == CIS_OK)
        e = cis_malloc(&wrow, (size_t)CIS_MAX(longest, (int64_t)1), sizeof *wrow, "split stream");
      if (e == CIS_OK)
        e = cis_malloc(&wesc, (size_t)CIS_MAX(longest, (int64_t)1), sizeof *wesc, "split stream");
      if (e != CIS_OK) cis_worker_error_keep(&we, e);
#pragma omp for schedule(dynamic, 1)
      for (int b = 0; b < B; b++) {
        if (cis_worker_error_seen(&we)) continue;
        const cis_split_blk *k = &out->blk[b];
        const int g = b / P;
        int64_t ne = 0, dm = 0;
        const int64_t S = block_stream(rp, col, val, d, bc0 + (size_t)g * (P + 1), P, b % P,
                                       bgrow[g], bgrow[g + 1], wd, wrow, wesc, out->esc + k->e0,
                                       &ne, &dm);
        const int64_t L = (int64_t)k->steps * 4;
        for (int t = 0; t < CIS_SPLIT_T; t++) {
          const int64_t p0 = (int64_t)t * L;
          const uint32_t row = p0 < S ? wrow[p0] : (uint32_t)k->nr;
          const uint32_t eb = p0 < S ? (uint32_t)wesc[p0] : (uint32_t)ne;
          out->first[(size_t)b * CIS_SPLIT_T + t] = row | eb << 16;
          for (int64_t i = 0; i < L; i++) {
            const int64_t q = 4 * (k->base + (i / 4) * CIS_SPLIT_T + t) + i % 4;
            out->w[q] = p0 + i < S ? wd[p0 + i] : zero;
          }
        }
      }
      cis_free(&wd);
      cis_free(&wrow);
      cis_free(&wesc);
    }
    if (we.code != CIS_OK) CIS_FAIL(we.code, "%s", we.msg);
  }
  *fits = 1;
cleanup:
  if (err != CIS_OK || !*fits) cis_split_free(out);
  cis_free(&wcum);
  cis_free(&cum);
  cis_free(&excess);
  cis_free(&grow);
  cis_free(&bgrow);
  cis_free(&c0all);
  cis_free(&bc0);
  cis_free(&count);
  cis_free(&ecount);
  return err;
}
