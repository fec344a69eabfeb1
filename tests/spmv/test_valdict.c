/* The value dictionary (spmv/valdict.h): every code decodes to the very bits of the value it
 * was made from (both signs, zero, subnormals), values outside the dictionary get none, the
 * dictionary chosen from a matrix whose values repeat codes most entries and is refused for
 * one whose values do not, and the per-row counts match the lookups. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spmv/valdict.h"
#include "tests/tools/expect.h"

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint64_t next_u64(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}
static double urand(void) { return (double)(next_u64() >> 11) * (1.0 / 9007199254740992.0); }

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

int main(void) {
  check_round_trip();
  check_build();
  return cis_test_summary();
}
