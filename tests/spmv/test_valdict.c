/* The value dictionary (spmv/valdict.h): every code decodes to the very bits of the value it
 * was made from (both signs, zero, subnormals), values outside the dictionary get none, the
 * dictionary chosen from a matrix whose values repeat codes most entries and is refused for
 * one whose values do not, and the per-row counts match the lookups. The census (spmv/census.h)
 * of a matrix whose blocks are half regenerated: the same dictionary as from the cached
 * matrix, the counts of the blocks asked for and of no other, and a regenerator's error
 * reported, not counted; the census taken while splitting the entries as an upload stores
 * them (cis_census_split). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spmv/census.h"
#include "spmv/valdict.h"
#include "tests/tools/expect.h"
#include "tests/tools/rng.h"


static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

static void check_round_trip(void) {
  double mag[] = {0.0, 1.0, 0.125, DBL_MIN / 4, 3.0e-300, 0.7071067811865476, DBL_MAX};
  int32_t m = (int32_t)(sizeof mag / sizeof mag[0]);
  cis_vdict d;
  EXPECT(cis_vdict_from_values(mag, m, &d) == CIS_OK, "dictionary of %d values", (int)m);
  EXPECT(d.size == m, "size %d, expected %d", (int)d.size, (int)m);
  for (int32_t i = 0; i < m; i++)
    for (int s = 0; s < 2; s++) {
      double v = s ? -mag[i] : mag[i];
      int code = cis_vdict_code(&d, v);
      EXPECT(code >= 0 && (code & 0x7FFF) == i && (code >> 15) == s,
             "%.17g: code %d, expected index %d sign %d", v, code, (int)i, s);
      if (code >= 0)
        EXPECT(same_bits(cis_vdict_value(&d, (uint16_t)code), v), "%.17g decodes to %.17g", v,
               cis_vdict_value(&d, (uint16_t)code));
    }
  double absent[] = {0.5, -2.0, nextafter(1.0, 2.0), 0.12500000000000003};
  for (size_t i = 0; i < sizeof absent / sizeof absent[0]; i++)
    EXPECT(cis_vdict_code(&d, absent[i]) == -1, "%.17g is not in the dictionary", absent[i]);
  cis_vdict_free(&d);
  double twice[] = {0.25, -0.25};
  EXPECT(cis_vdict_from_values(twice, 2, &d) == CIS_ERR_INTERNAL,
         "a magnitude given twice is refused");
  cis_error_clear();
  cis_vdict_free(&d);
}

/* One cached block per `rows` rows; values: with probability `rep` one of `distinct`
 * magnitudes with a random sign, else uniform. */
static cis_hyb make_hyb(int64_t nblocks, int64_t rows, int per_row, double rep, int distinct) {
  cis_hyb h;
  memset(&h, 0, sizeof h);
  h.n = nblocks * rows;
  h.nblocks = nblocks;
  h.blocks = calloc((size_t)nblocks, sizeof *h.blocks);
  for (int64_t b = 0; b < nblocks; b++) {
    cis_csr_block *blk = &h.blocks[b];
    blk->row0 = b * rows;
    blk->nrows = rows;
    if (cis_csr_block_reserve(blk, rows, rows * per_row) != CIS_OK) exit(1);
    blk->rowptr[0] = 0;
    int64_t q = 0;
    for (int64_t l = 0; l < rows; l++) {
      int len = (int)(next_u64() % (uint64_t)(2 * per_row));
      if (l % 7 == 3) len = 0;
      for (int t = 0; t < len && q < rows * per_row; t++) {
        double v = 2.0 * urand() - 1.0;
        if (urand() < rep) {
          v = 0.01 * (double)(1 + next_u64() % (uint64_t)distinct) / 3.0;
          if (next_u64() & 1) v = -v;
        }
        blk->col[q] = (int32_t)(next_u64() % (uint64_t)h.n);
        blk->val[q++] = v;
      }
      blk->rowptr[l + 1] = q;
    }
    blk->nnz = q;
    h.nnz_exp += q;
    h.ncached++;
  }
  return h;
}

static void check_build(void) {
  cis_hyb h = make_hyb(40, 50, 30, 0.8, 300);
  cis_vdict d;
  EXPECT(cis_vdict_build(&h, 1 << 14, CIS_VDICT_MAX, &d) == CIS_OK, "dictionary from a repeating matrix");
  EXPECT(d.size > 0 && d.size <= 300, "dictionary of %d magnitudes, expected 1..300", d.size);
  EXPECT(d.cover > 0.7 && d.cover < 0.9, "sample cover %.3f, expected about 0.8", d.cover);
  EXPECT(d.sampled >= 1 << 13 && d.sampled < h.nnz_exp, "%lld of %lld entries sampled",
         (long long)d.sampled, (long long)h.nnz_exp);
  int64_t coded = 0, total = 0, wrong = 0, miscount = 0;
  int32_t *nc = malloc((size_t)h.blocks[0].nrows * sizeof *nc);
  for (int64_t b = 0; b < h.nblocks; b++) {
    const cis_csr_block *blk = &h.blocks[b];
    int64_t sum = cis_vdict_count_block(&d, blk, nc);
    int64_t seen = 0;
    for (int64_t l = 0; l < blk->nrows; l++) {
      int32_t c = 0;
      for (int64_t p = blk->rowptr[l]; p < blk->rowptr[l + 1]; p++) {
        int code = cis_vdict_code(&d, blk->val[p]);
        total++;
        if (code < 0) continue;
        c++;
        coded++;
        wrong += !same_bits(cis_vdict_value(&d, (uint16_t)code), blk->val[p]);
      }
      miscount += c != nc[l];
      seen += c;
    }
    miscount += seen != sum;
  }
  EXPECT(wrong == 0, "%lld coded entries decode to other bits", (long long)wrong);
  EXPECT(miscount == 0, "%lld per-row counts differ from the lookups", (long long)miscount);
  EXPECT(coded > 0.7 * (double)total, "%lld of %lld entries coded", (long long)coded,
         (long long)total);
  free(nc);
  cis_vdict_free(&d);
  cis_hyb_free(&h);

  cis_hyb r = make_hyb(20, 50, 30, 0.0, 1);
  EXPECT(cis_vdict_build(&r, 1 << 20, CIS_VDICT_MAX, &d) == CIS_OK, "dictionary from random values");
  EXPECT(d.size == 0 && d.cover < 0.01, "random values: %d magnitudes, cover %.3f, expected "
         "none", d.size, d.cover);
  cis_vdict_free(&d);
  cis_hyb_free(&r);

  /* A sample with far more distinct magnitudes than the sample table's first 65536 slots hold
   * (about 0.3 x 240,000 random ones): the table grows, and the 300 repeating magnitudes
   * still make the dictionary, in full. */
  cis_hyb g = make_hyb(300, 100, 10, 0.7, 300);
  EXPECT(cis_vdict_build(&g, 1 << 22, CIS_VDICT_MAX, &d) == CIS_OK,
         "dictionary from a sample of many distinct magnitudes");
  EXPECT(d.sampled == g.nnz_exp && d.sampled > 200000, "%lld of %lld entries sampled",
         (long long)d.sampled, (long long)g.nnz_exp);
  EXPECT(d.size == 300, "dictionary of %d magnitudes, expected the 300 that repeat", d.size);
  EXPECT(d.cover > 0.65 && d.cover < 0.75, "sample cover %.3f, expected about 0.7", d.cover);
  int missing = 0;
  for (int i = 1; i <= 300; i++) missing += cis_vdict_code(&d, 0.01 * (double)i / 3.0) < 0;
  EXPECT(missing == 0, "%d of the 300 repeating magnitudes not in the dictionary", missing);
  cis_vdict_free(&d);
  cis_hyb_free(&g);
}

/* The regenerator of the census test: copies of the blocks' rows (any row range), and an error
 * for rows of block `fail` (-1: none) or, with `badcol`, a column outside the matrix. */
typedef struct {
  const cis_hyb *full;
  int64_t fail;
  int badcol;
} regen_ctx;

static cis_err regen(void *vctx, int64_t row0, int64_t nrows, cis_csr_block *out) {
  const regen_ctx *c = vctx;
  const cis_hyb *f = c->full;
  int64_t b = row0 / f->blocks[0].nrows, nnz = 0;
  const cis_csr_block *src = &f->blocks[b];
  int64_t l0 = row0 - src->row0;
  if (b == c->fail && !c->badcol)
    CIS_ERROR(CIS_ERR_INTERNAL, "test regenerator: rows from %lld refused", (long long)row0);
  nnz = src->rowptr[l0 + nrows] - src->rowptr[l0];
  CIS_CALL(cis_csr_block_reserve(out, nrows, nnz + 1));
  for (int64_t l = 0; l <= nrows; l++) out->rowptr[l] = src->rowptr[l0 + l] - src->rowptr[l0];
  memcpy(out->col, src->col + src->rowptr[l0], sizeof(int32_t) * (size_t)nnz);
  memcpy(out->val, src->val + src->rowptr[l0], sizeof(double) * (size_t)nnz);
  if (b == c->fail && c->badcol && nnz > 0) out->col[0] = (int32_t)f->n;
  out->nnz = nnz;
  return CIS_OK;
}

/* Count mismatches between the census and a direct count of block b's rows (with c's
 * dictionary). */
static int64_t census_mismatch(const cis_census *c, const cis_csr_block *blk, int64_t b) {
  int64_t bad = 0, coded = 0;
  for (int64_t l = 0; l < blk->nrows; l++) {
    int32_t n = 0;
    for (int64_t p = blk->rowptr[l]; p < blk->rowptr[l + 1]; p++)
      n += cis_vdict_code(&c->dict, blk->val[p]) >= 0;
    bad += c->rlen[blk->row0 + l] != blk->rowptr[l + 1] - blk->rowptr[l];
    bad += c->ncoded[blk->row0 + l] != n;
    coded += n;
  }
  return bad + (c->bnnz[b] != blk->nnz) + (c->bcoded[b] != coded);
}

static void check_census(void) {
  /* h: the same matrix as full (the generator restarted), its odd blocks not cached */
  uint64_t seed = g_rng;
  cis_hyb full = make_hyb(24, 50, 30, 0.8, 300);
  g_rng = seed;
  cis_hyb h = make_hyb(24, 50, 30, 0.8, 300);
  regen_ctx ctx = {&full, -1, 0};
  for (int64_t b = 1; b < h.nblocks; b += 2) {
    cis_csr_block_free(&h.blocks[b]);
    h.ncached--;
  }
  h.regen = regen;
  h.regen_ctx = &ctx;
  cis_vdict d;
  cis_census c;
  EXPECT(cis_vdict_build(&full, CIS_CENSUS_SAMPLE, CIS_CENSUS_DICT, &d) == CIS_OK,
         "dictionary of the cached matrix");
  EXPECT(cis_census_init(&c, &h, 1) == CIS_OK, "census of the half-regenerated matrix");
  EXPECT(c.dict.size == d.size && d.size > 0 &&
             memcmp(c.dict.table, d.table, sizeof(double) * (size_t)d.size) == 0,
         "the census's dictionary (%d magnitudes) is the cached matrix's (%d)", c.dict.size,
         d.size);
  unsigned char want[24];
  for (int b = 0; b < 24; b++) want[b] = b % 3 == 0;
  EXPECT(cis_census_take(&c, &h, want) == CIS_OK, "census of every third block");
  int64_t bad = 0, extra = 0;
  for (int64_t b = 0; b < h.nblocks; b++) {
    extra += c.counted[b] != want[b];
    if (c.counted[b]) bad += census_mismatch(&c, &full.blocks[b], b);
  }
  EXPECT(extra == 0 && !cis_census_complete(&c), "only the blocks asked for are counted");
  EXPECT(cis_census_take(&c, &h, NULL) == CIS_OK && cis_census_complete(&c), "then all of them");
  for (int64_t b = 0; b < h.nblocks; b++) bad += census_mismatch(&c, &full.blocks[b], b);
  EXPECT(bad == 0, "%lld counts differ from the rows'", (long long)bad);
  cis_census_free(&c);
  /* a regenerator that fails, or gives a column outside the matrix: an error naming the rows */
  for (int badcol = 0; badcol <= 1; badcol++) {
    ctx.fail = 5;
    ctx.badcol = badcol;
    EXPECT(cis_census_init(&c, &h, 0) == CIS_OK, "census without a dictionary");
    cis_err e = cis_census_take(&c, &h, NULL);
    EXPECT(e == CIS_ERR_INTERNAL && strstr(cis_error_message(), badcol ? "outside" : "refused"),
           "a regenerator's %s is reported: '%s'", badcol ? "bad column" : "error",
           cis_error_message());
    EXPECT(!c.counted[5], "the failed block is not counted");
    cis_error_clear();
    cis_census_free(&c);
  }
  cis_vdict_free(&d);
  cis_hyb_free(&full);
  cis_hyb_free(&h);
}

/* cis_census_split against cis_census_block: the same counts, and the entries split as an
 * upload stores them: with `coded`, each coded entry's column and code (decoding to the very
 * bits of its value) and the others' values and columns, each in the rows' order; without, or
 * with a census that has no dictionary, every entry as it is. */
static void check_census_split(void) {
  cis_hyb h = make_hyb(6, 40, 30, 0.8, 300);
  int64_t cap = 0;
  for (int64_t b = 0; b < h.nblocks; b++) cap = h.blocks[b].nnz > cap ? h.blocks[b].nnz : cap;
  double *val = malloc(sizeof(double) * (size_t)cap);
  int32_t *col = malloc(sizeof(int32_t) * (size_t)cap), *ccol = malloc(sizeof(int32_t) * (size_t)cap);
  uint16_t *code = malloc(sizeof(uint16_t) * (size_t)cap);
  for (int variant = 0; variant < 3; variant++) {
    int with_dict = variant < 2, coded = variant == 1;
    cis_census a, c;
    EXPECT(cis_census_init(&a, &h, with_dict) == CIS_OK && cis_census_init(&c, &h, with_dict) == CIS_OK,
           "two censuses");
    EXPECT(!with_dict || (c.dict.size > 0 && c.dict.size == a.dict.size), "with a dictionary");
    int64_t ncoded = 0, bad = 0, misplaced = 0;
    for (int64_t b = 0; b < h.nblocks; b++) {
      const cis_csr_block *blk = &h.blocks[b];
      cis_census_block(&a, b, blk);
      int64_t nc = cis_census_split(&c, b, blk, coded, val, col, ccol, code), kp = 0, kc = 0;
      ncoded += nc;
      for (int64_t q = 0; q < blk->nnz; q++) {
        int k = c.dict.size ? cis_vdict_code(&c.dict, blk->val[q]) : -1;
        if (coded && k >= 0) {
          misplaced += kc >= nc || ccol[kc] != blk->col[q] || code[kc] != k ||
                       !same_bits(cis_vdict_value(&c.dict, code[kc]), blk->val[q]);
          kc++;
        } else {
          misplaced += kp >= blk->nnz - nc || col[kp] != blk->col[q] || !same_bits(val[kp], blk->val[q]);
          kp++;
        }
      }
      misplaced += kc != nc;
      bad += c.bnnz[b] != a.bnnz[b] || (with_dict && c.bcoded[b] != a.bcoded[b]) || !c.counted[b];
      for (int64_t r = blk->row0; r < blk->row0 + blk->nrows; r++)
        bad += c.rlen[r] != a.rlen[r] || (with_dict && c.ncoded[r] != a.ncoded[r]);
    }
    EXPECT(bad == 0 && c.longest == a.longest && cis_census_complete(&c),
           "split, variant %d: %lld counts differ from cis_census_block's", variant, (long long)bad);
    EXPECT(misplaced == 0, "split, variant %d: %lld entries misplaced", variant, (long long)misplaced);
    EXPECT(coded ? ncoded > 0 : ncoded == 0, "split, variant %d: %lld entries coded", variant,
           (long long)ncoded);
    cis_census_free(&a);
    cis_census_free(&c);
  }
  free(val);
  free(col);
  free(ccol);
  free(code);
  cis_hyb_free(&h);
}

int main(void) {
  g_rng = 0x2545F4914F6CDD1Dull; /* this test's seed */
  check_round_trip();
  check_build();
  check_census();
  check_census_split();
  return cis_test_summary();
}
