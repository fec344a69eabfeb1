/* The split of a matrix over thread-block clusters (spmv/split.h), checked on the host: the
 * layout of cis_split_build is walked as cis_split_kernel (spmv/hyb_kernels.cuh) walks it, word
 * by word, each thread its run, the unfinished rows finished in the kernel's order, and the
 * product compared with a plain CSR product on seeded random matrices (tests/tools/random_csr.h):
 * empty rows, rows longer than a thread's run, values from a dictionary with some escaped, no
 * dictionary (every value escaped), more clusters than rows (empty groups), 2 to 8 parts. Also
 * each block's words: a column inside its part, one row end per row of its group, its escaped
 * values used up; and the matrices it must refuse. The device runs the same layout in
 * tests/gpu/test_gpu.cu. */
#include <math.h>
#include <string.h>

#include "core/util.h"
#include "spmv/split.h"
#include "spmv/valdict.h"
#include "tests/tools/expect.h"
#include "tests/tools/random_csr.h"

/* y = A x through the layout, as the kernel computes it; 0 when every word is well formed. */
static int split_apply(const cis_split *s, const double *x, double *y) {
  const int P = s->parts, T = CIS_SPLIT_T;
  double *part = malloc((size_t)P * 65536 * sizeof *part), carry[CIS_SPLIT_T];
  int carry_row[CIS_SPLIT_T], first_row[CIS_SPLIT_T], last_row[CIS_SPLIT_T], bad = 0;
  if (!part) return 1;
  for (int g = 0; g < s->groups; g++) {
    const int nr = s->blk[g * P].nr, r0 = s->blk[g * P].r0;
    for (int h = 0; h < P; h++) {
      const cis_split_blk *k = &s->blk[g * P + h];
      double *yp = part + (size_t)h * 65536;
      int ends = 0, used = 0;
      if (k->nr != nr || k->r0 != r0) bad = 1;
      for (int l = 0; l < nr; l++) yp[l] = NAN; /* every row must be stored */
      for (int t = 0; t < T; t++) {
        uint32_t f = s->first[(size_t)(g * P + h) * T + t];
        int row = (int)(f & 0xFFFFu);
        const double *ep = s->esc + k->e0 + (f >> 16);
        double acc = 0.0;
        first_row[t] = row;
        for (int64_t i = 0; i < 4 * (int64_t)k->steps; i++) {
          uint32_t w = s->w[4 * (k->base + (i / 4) * T + t) + i % 4];
          unsigned c = w >> 16, idx = c & 0x7FFFu;
          double v;
          if (idx == CIS_SPLIT_ESC) {
            v = *ep++;
            used++;
          } else {
            if ((int)idx >= s->ntab1) bad = 1;
            v = (c >> 15) ? -s->table[idx] : s->table[idx];
          }
          if ((int)(w & 0x3FFFu) >= k->cw) bad = 1;
          acc = fma(v, x[k->c0 + (w & 0x3FFFu)], acc);
          if (w & CIS_SPLIT_END) {
            if (row >= nr) bad = 1;
            yp[row] = acc;
            acc = 0.0;
            row++;
            ends++;
          }
        }
        last_row[t] = row;
        carry[t] = acc;
        carry_row[t] = row < nr ? row : -1;
      }
      for (int t = 1; t < T; t++) /* after the barrier, in the kernel's order */
        if (last_row[t] > first_row[t] && carry_row[t - 1] == first_row[t]) {
          double sum = 0.0;
          for (int u = t - 1; u >= 0 && carry_row[u] == first_row[t]; u--) sum += carry[u];
          yp[first_row[t]] += sum;
        }
      if (ends != nr || used != k->ne) bad = 1;
    }
    for (int l = 0; l < nr; l++) {
      double sum = 0.0;
      for (int h = 0; h < P; h++) sum += part[(size_t)h * 65536 + l];
      y[r0 + l] = sum;
    }
  }
  free(part);
  return bad;
}

static void check(const char *label, const csr *m, const cis_vdict *d, int P, int G) {
  cis_split s;
  int fits = 0;
  cis_err e = cis_split_build(m->n, m->rowptr, m->col, m->val, d, P, G, &fits, &s);
  EXPECT(e == CIS_OK && fits, "%s, %d clusters of %d blocks: %s", label, G, P,
         e == CIS_OK ? "does not fit" : cis_error_message());
  if (e != CIS_OK || !fits) return;
  double *x = calloc((size_t)m->n, sizeof *x), *y = calloc((size_t)m->n, sizeof *y);
  double *r = calloc((size_t)m->n, sizeof *r);
  if (!x || !y || !r) {
    fprintf(stderr, "test_split: out of memory\n");
    exit(1);
  }
  for (int64_t i = 0; i < m->n; i++) x[i] = 2.0 * urand() - 1.0;
  for (int64_t i = 0; i < m->n; i++)
    for (int64_t p = m->rowptr[i]; p < m->rowptr[i + 1]; p++) r[i] += m->val[p] * x[m->col[p]];
  for (int64_t i = 0; i < m->n; i++) y[i] = NAN; /* every row must be written */
  int bad = split_apply(&s, x, y), finite = 1;
  double num = 0.0, den = 0.0;
  for (int64_t i = 0; i < m->n; i++) {
    finite = finite && isfinite(y[i]);
    num += (y[i] - r[i]) * (y[i] - r[i]);
    den += r[i] * r[i];
  }
  double rel = den > 0 ? sqrt(num / den) : sqrt(num);
  EXPECT(!bad, "%s, %d clusters of %d blocks: malformed words", label, G, P);
  EXPECT(finite && rel <= 1e-12, "%s, %d clusters of %d blocks: relative error %.2e%s", label, G,
         P, rel, finite ? "" : " (rows not written)");
  EXPECT(s.xw <= CIS_SPLIT_PART &&
             cis_split_shared(s.xw, s.ntab1, s.maxesc, s.maxrows) <= CIS_SPLIT_SHARED,
         "%s: a part of %d columns, %lld bytes of shared memory", label, s.xw,
         (long long)cis_split_shared(s.xw, s.ntab1, s.maxesc, s.maxrows));
  printf("%s, %d clusters of %d blocks: rel %.2e, %lld words (%lld dummy, %lld padding), %lld "
         "escaped\n", label, G, P, rel, (long long)s.nwords, (long long)s.dummies,
         (long long)s.padding, (long long)s.nesc);
  free(x);
  free(y);
  free(r);
  cis_split_free(&s);
}

/* A split it must refuse: *fits 0, nothing allocated. */
static void check_refused(const char *label, const csr *m, const cis_vdict *d, int P, int G) {
  cis_split s;
  int fits = 1;
  cis_err e = cis_split_build(m->n, m->rowptr, m->col, m->val, d, P, G, &fits, &s);
  EXPECT(e == CIS_OK && !fits && s.w == NULL && s.blk == NULL,
         "%s, %d clusters of %d blocks: not refused", label, G, P);
}

int main(void) {
  double mag[300];
  for (int i = 0; i < 300; i++) mag[i] = 1.0 / (1.0 + i); /* make_csr's magnitudes */
  cis_vdict d, none;
  memset(&none, 0, sizeof none);
  if (cis_vdict_from_values(mag, 300, &d) != CIS_OK) {
    printf("FAIL dictionary: %s\n", cis_error_message());
    return 1;
  }
  csr a, b, c, e;
  make_csr(3000, 40, 1500, 300, 0, 0, 0, &a); /* rows much longer than a run */
  make_csr(40000, 12, 600, 300, 0, 0, 0, &b); /* needs 3 parts at least */
  make_csr(500, 30, 400, 0, 0, 0, 0, &c);     /* values that do not repeat */
  make_csr(70, 10, 60, 300, 0, 0, 0, &e);     /* fewer rows than clusters */
  for (int P = 2; P <= CIS_SPLIT_MAXP; P *= 2) check("3000 rows", &a, &d, P, 132 / P);
  check("3000 rows", &a, &d, 3, 44);
  check("3000 rows, one cluster", &a, &d, 3, 1);
  check("40000 rows", &b, &d, 4, 30);
  check("40000 rows", &b, &d, 7, 18);
  check("500 rows, no dictionary", &c, &none, 3, 44);
  check("70 rows", &e, &d, 3, 44);
  check_refused("40000 rows, 2 parts of at most 16384 columns", &b, &d, 2, 66);
  check_refused("40000 rows, every value escaped in 30 blocks", &b, &none, 3, 10);
  csr_free(&a);
  csr_free(&b);
  csr_free(&c);
  csr_free(&e);
  cis_vdict_free(&d);
  return cis_test_summary();
}
