/* cisolve: a dictionary of matrix values, for storing an entry's value as a 16-bit code
 * (docs/format.md, "Coded values").
 *
 * Most nonzeros of a CI Hamiltonian are double excitations, whose value is one signed
 * two-electron integral or a difference of two: a few thousand distinct magnitudes repeated
 * hundreds of millions of times. A dictionary holds up to CIS_VDICT_MAX distinct magnitudes
 * |v| (compared bit for bit); an entry whose |v| is in it is stored as the code
 *   bit 15: the sign of v, bits 0..14: the index of |v| in the table,
 * and decodes to exactly the same double (the table entry with its sign bit set from the
 * code). Entries not in it (single excitations and the diagonal, whose values depend on the
 * whole determinant) keep their 8-byte value. Nothing in this depends on chemistry: a matrix
 * whose values do not repeat gets an empty dictionary, and correctness never depends on which
 * values are in it.
 *
 * The table is chosen from a sample of the Expansion blocks (regenerated where the host does
 * not cache them and the matrix has a regenerator; else the cached ones): the most frequent
 * magnitudes seen at least twice, ordered by their first appearance (so that neighbouring
 * entries of a row, which the generator produces in integral order, read neighbouring table
 * entries). It is kept (size > 0) only when the sample says that at least CIS_VDICT_MIN_COVER
 * of the entries would be coded.
 *
 * Ownership: a cis_vdict owns its arrays; lookups are read-only and thread-safe. */
#ifndef CIS_VALDICT_H
#define CIS_VALDICT_H

#include <stdint.h>
#include <string.h>

#include "base/error.h"
#include "spmv/hyb.h"

#define CIS_VDICT_MAX 32767
#define CIS_VDICT_MIN_COVER 0.5
#define CIS_VDICT_SLOTS_LOG2 17 /* 131072 slots, at most a quarter full */
#define CIS_VDICT_EMPTY 0xFFFFu

typedef struct cis_vdict {
  int32_t size;       /* entries in table (0: no dictionary) */
  double *table;      /* magnitudes, sign bit clear */
  uint64_t *keys;     /* hash slots: the bits of |v| */
  uint16_t *slot;     /* hash slots: index into table, CIS_VDICT_EMPTY when free */
  double cover;       /* fraction of the sampled entries the table codes */
  int64_t sampled;    /* entries sampled */
} cis_vdict;

static inline uint64_t cis_vdict_bits(double v) {
  uint64_t b;
  memcpy(&b, &v, sizeof b);
  return b;
}

static inline uint64_t cis_vdict_hash(uint64_t key, int log2) {
  return (key * 0x9E3779B97F4A7C15ull) >> (64 - log2);
}

/* The code of v (0..65535), or -1 when |v| is not in the dictionary. */
static inline int cis_vdict_code(const cis_vdict *d, double v) {
  uint64_t b = cis_vdict_bits(v), key = b & ~(1ull << 63);
  uint64_t mask = ((uint64_t)1 << CIS_VDICT_SLOTS_LOG2) - 1;
  for (uint64_t s = cis_vdict_hash(key, CIS_VDICT_SLOTS_LOG2);; s = (s + 1) & mask) {
    uint16_t i = d->slot[s];
    if (i == CIS_VDICT_EMPTY) return -1;
    if (d->keys[s] == key) return (int)i | (int)((b >> 63) << 15);
  }
}

/* The value a code stands for (the host's view of the device decoder). */
static inline double cis_vdict_value(const cis_vdict *d, uint16_t code) {
  uint64_t b = cis_vdict_bits(d->table[code & 0x7FFF]) | ((uint64_t)(code >> 15) << 63);
  double v;
  memcpy(&v, &b, sizeof v);
  return v;
}

/* Choose the dictionary, of at most max_size (<= CIS_VDICT_MAX) magnitudes, from about `sample`
 * entries of h's Expansion blocks (evenly spread over the blocks; all of them when h->regen can
 * regenerate those the host does not cache, else the cached ones); out->size is 0 when it would
 * not pay. */
cis_err cis_vdict_build(const cis_hyb *h, int64_t sample, int32_t max_size, cis_vdict *out);
/* A dictionary of the given magnitudes (at most CIS_VDICT_MAX, distinct, sign ignored). */
cis_err cis_vdict_from_values(const double *mag, int32_t count, cis_vdict *out);
void cis_vdict_free(cis_vdict *d);

/* Coded entries of each row of a block: ncoded[l] for l < b->nrows; returns their sum. */
int64_t cis_vdict_count_block(const cis_vdict *d, const cis_csr_block *b, int32_t *ncoded);

#endif
