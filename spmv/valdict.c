/* cisolve: a dictionary of matrix values (spmv/valdict.h). */
#include "spmv/valdict.h"

#include <stdlib.h>

#include "base/util.h"

typedef struct {
  uint64_t key;
  int64_t count, first; /* first: order of first appearance in the sample */
} key_count;

/* Most frequent first; equal counts by key, so that the table does not depend on hash order. */
static int by_count(const void *a, const void *b) {
  const key_count *x = a, *y = b;
  if (x->count != y->count) return x->count < y->count ? 1 : -1;
  return (x->key > y->key) - (x->key < y->key);
}

static int by_first(const void *a, const void *b) {
  const key_count *x = a, *y = b;
  return (x->first > y->first) - (x->first < y->first);
}

void cis_vdict_free(cis_vdict *d) {
  cis_free(&d->table);
  cis_free(&d->keys);
  cis_free(&d->slot);
  d->size = 0;
}

cis_err cis_vdict_from_values(const double *mag, int32_t count, cis_vdict *out) {
  cis_err err = CIS_OK;
  const uint64_t nslots = (uint64_t)1 << CIS_VDICT_SLOTS_LOG2, mask = nslots - 1;
  memset(out, 0, sizeof *out);
  CIS_CHECK(count >= 0 && count <= CIS_VDICT_MAX, CIS_ERR_INTERNAL,
            "value dictionary of %d entries: at most %d", (int)count, CIS_VDICT_MAX);
  CIS_CLEANUP_FUNCTION;
  CIS_TRY(cis_malloc(&out->table, (size_t)CIS_MAX(count, 1), sizeof *out->table,
                     "value dictionary"));
  CIS_TRY(cis_malloc(&out->keys, nslots, sizeof *out->keys, "value dictionary hash keys"));
  CIS_TRY(cis_malloc(&out->slot, nslots, sizeof *out->slot, "value dictionary hash slots"));
  for (uint64_t s = 0; s < nslots; s++) out->slot[s] = CIS_VDICT_EMPTY;
  for (int32_t i = 0; i < count; i++) {
    uint64_t key = cis_vdict_bits(mag[i]) & ~(1ull << 63);
    uint64_t s = cis_vdict_hash(key, CIS_VDICT_SLOTS_LOG2);
    while (out->slot[s] != CIS_VDICT_EMPTY) {
      if (out->keys[s] == key)
        CIS_FAIL(CIS_ERR_INTERNAL, "value dictionary: magnitude %.17g given twice", mag[i]);
      s = (s + 1) & mask;
    }
    out->keys[s] = key;
    out->slot[s] = (uint16_t)i;
    memcpy(&out->table[i], &key, sizeof key);
  }
  out->size = count;
cleanup:
  if (err != CIS_OK) cis_vdict_free(out);
  return err;
}

/* The sample's magnitudes and their counts: an open-addressing table of 2^log2 slots, kept at
 * most half full by doubling. It starts small: a CI matrix's sample of 2 M entries holds some
 * 25 thousand magnitudes, and a table sized for 2 M distinct ones (100 MB) made every count a
 * cache and TLB miss. */
typedef struct {
  uint64_t *keys;
  int64_t *counts, *first;
  int log2;
  int64_t distinct;
} sample_table;

static void sample_free(sample_table *t) {
  cis_free(&t->keys);
  cis_free(&t->counts);
  cis_free(&t->first);
}

static cis_err sample_alloc(sample_table *t, int log2) {
  size_t nslots = (size_t)1 << log2;
  t->log2 = log2;
  CIS_CALL(cis_malloc(&t->keys, nslots, sizeof *t->keys, "value sample hash keys"));
  CIS_CALL(cis_calloc(&t->counts, nslots, sizeof *t->counts, "value sample hash counts"));
  CIS_CALL(cis_malloc(&t->first, nslots, sizeof *t->first, "value sample hash order"));
  return CIS_OK;
}

/* The slot of key: where it is, or the free slot where it goes. */
static uint64_t sample_slot(const sample_table *t, uint64_t key) {
  const uint64_t mask = ((uint64_t)1 << t->log2) - 1;
  uint64_t s = cis_vdict_hash(key, t->log2);
  while (t->counts[s] && t->keys[s] != key) s = (s + 1) & mask;
  return s;
}

static cis_err sample_grow(sample_table *t) {
  sample_table old = *t, nt = {0};
  cis_err err = sample_alloc(&nt, old.log2 + 1);
  if (err != CIS_OK) {
    sample_free(&nt);
    return err;
  }
  for (size_t s = 0; s < (size_t)1 << old.log2; s++)
    if (old.counts[s]) {
      uint64_t d = sample_slot(&nt, old.keys[s]);
      nt.keys[d] = old.keys[s];
      nt.counts[d] = old.counts[s];
      nt.first[d] = old.first[s];
    }
  nt.distinct = old.distinct;
  sample_free(&old);
  *t = nt;
  return CIS_OK;
}

/* Count the magnitudes of a block's entries. */
static cis_err count_block(const cis_csr_block *b, sample_table *t) {
  for (int64_t p = 0; p < b->nnz; p++) {
    uint64_t key = cis_vdict_bits(b->val[p]) & ~(1ull << 63);
    uint64_t s = sample_slot(t, key);
    if (!t->counts[s]) {
      if (2 * (t->distinct + 1) > ((int64_t)1 << t->log2)) {
        CIS_CALL(sample_grow(t));
        s = sample_slot(t, key);
      }
      t->keys[s] = key;
      t->first[s] = t->distinct++;
    }
    t->counts[s]++;
  }
  return CIS_OK;
}

cis_err cis_vdict_build(const cis_hyb *h, int64_t sample, int32_t max_size, cis_vdict *out) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  sample_table t = {0};
  key_count *kc = NULL;
  double *mag = NULL;
  cis_csr_block scratch;
  int64_t total = 0, taken = 0;
  memset(out, 0, sizeof *out);
  memset(&scratch, 0, sizeof scratch);
  /* the blocks to sample: every block when the uncached ones can be regenerated, else the
   * cached ones */
  for (int64_t b = 0; b < h->nblocks; b++)
    if (cis_csr_block_cached(&h->blocks[b])) total += h->blocks[b].nnz;
  if (h->regen) total = h->nnz_exp;
  if (total == 0 || sample <= 0) return CIS_OK;
  /* every step-th of them, whole, until about `sample` entries */
  int64_t step = CIS_MAX((int64_t)1, (total + sample - 1) / sample);
  CIS_TRY(sample_alloc(&t, 16));
  for (int64_t b = 0, i = 0; b < h->nblocks; b++) {
    const cis_csr_block *blk = NULL;
    if (!cis_csr_block_cached(&h->blocks[b]) && !h->regen) continue;
    if (i++ % step != 0) continue;
    CIS_TRY(cis_hyb_block_rows(h, b, &scratch, &blk));
    CIS_TRY(count_block(blk, &t));
    taken += blk->nnz;
  }
  /* magnitudes seen at least twice, most frequent first */
  CIS_TRY(cis_malloc(&kc, (size_t)CIS_MAX(t.distinct, (int64_t)1), sizeof *kc, "value sample"));
  int64_t m = 0;
  for (size_t s = 0; s < (size_t)1 << t.log2; s++)
    if (t.counts[s] >= 2) kc[m++] = (key_count){t.keys[s], t.counts[s], t.first[s]};
  qsort(kc, (size_t)m, sizeof *kc, by_count);
  m = CIS_MIN(m, (int64_t)CIS_MIN(max_size, CIS_VDICT_MAX));
  int64_t covered = 0;
  for (int64_t i = 0; i < m; i++) covered += kc[i].count;
  /* The kept magnitudes in the order they first appear: a row's neighbouring entries (a
   * double excitation's integrals, in the generator's loop order) then read neighbouring
   * table entries, a few cache lines per warp instead of one per lane. */
  qsort(kc, (size_t)m, sizeof *kc, by_first);
  double cover = taken ? (double)covered / (double)taken : 0.0;
  if (cover >= CIS_VDICT_MIN_COVER) {
    CIS_TRY(cis_malloc(&mag, (size_t)m, sizeof *mag, "value dictionary magnitudes"));
    for (int64_t i = 0; i < m; i++) memcpy(&mag[i], &kc[i].key, sizeof mag[i]);
    CIS_TRY(cis_vdict_from_values(mag, (int32_t)m, out));
  }
  out->cover = cover;
  out->sampled = taken;
cleanup:
  cis_csr_block_free(&scratch);
  sample_free(&t);
  cis_free(&kc);
  cis_free(&mag);
  if (err != CIS_OK) cis_vdict_free(out);
  return err;
}

int64_t cis_vdict_count_block(const cis_vdict *d, const cis_csr_block *b, int32_t *ncoded) {
  int64_t sum = 0;
  for (int64_t l = 0; l < b->nrows; l++) {
    int32_t c = 0;
    for (int64_t p = b->rowptr[l]; p < b->rowptr[l + 1]; p++) c += cis_vdict_code(d, b->val[p]) >= 0;
    ncoded[l] = c;
    sum += c;
  }
  return sum;
}
