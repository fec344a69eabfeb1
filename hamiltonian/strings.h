/* cisolve: occupation bit strings of one spin (private to hamiltonian/).
 *
 * A string of norb orbitals is nw = cis_nwords(norb) uint64 words; orbital p is bit p % 64 of
 * word p / 64 (base/problem.h). Strings compare as nw-word unsigned integers, most significant
 * word last in memory; for norb < 64 that order is PySCF's cistring order.
 *
 * Sign convention (PySCF cistring): a_a^+ a_i |s> = (-1)^(occupied orbitals strictly between i
 * and a) |s - i + a>.
 */
#ifndef CIS_STRINGS_H
#define CIS_STRINGS_H

#include <stdint.h>

#include "base/error.h"

static inline int cis_str_test(const uint64_t *s, int p) {
  return (int)((s[p >> 6] >> (p & 63)) & 1u);
}
static inline void cis_str_set(uint64_t *s, int p) { s[p >> 6] |= (uint64_t)1 << (p & 63); }
static inline void cis_str_clear(uint64_t *s, int p) { s[p >> 6] &= ~((uint64_t)1 << (p & 63)); }

static inline int cis_str_popcount(const uint64_t *s, int nw) {
  int c = 0;
  for (int w = 0; w < nw; w++) c += __builtin_popcountll(s[w]);
  return c;
}

/* Occupied orbitals strictly between p and q (p != q). */
static inline int cis_str_count_between(const uint64_t *s, int p, int q) {
  int lo = p < q ? p : q, hi = p < q ? q : p;
  lo++; /* count bits in [lo, hi) */
  int c = 0;
  for (int w = lo >> 6; w <= (hi - 1) >> 6 && lo < hi; w++) {
    uint64_t m = ~(uint64_t)0;
    if (w == lo >> 6) m &= ~(uint64_t)0 << (lo & 63);
    if (w == hi >> 6) m &= ((uint64_t)1 << (hi & 63)) - 1;
    c += __builtin_popcountll(s[w] & m);
  }
  return c;
}

/* Sign of a_a^+ a_i on s (i occupied, a empty or a == i). */
static inline int cis_str_sign(const uint64_t *s, int i, int a) {
  if (i == a) return 1;
  return (cis_str_count_between(s, i, a) & 1) ? -1 : 1;
}

/* -1, 0, 1 as the integer value of a is below, equal to, above that of b. */
static inline int cis_str_cmp(const uint64_t *a, const uint64_t *b, int nw) {
  for (int w = nw - 1; w >= 0; w--)
    if (a[w] != b[w]) return a[w] < b[w] ? -1 : 1;
  return 0;
}

/* Occupied orbitals of s, ascending, into occ; returns their number. */
static inline int cis_str_occ(const uint64_t *s, int nw, int *occ) {
  int n = 0;
  for (int w = 0; w < nw; w++)
    for (uint64_t x = s[w]; x; x &= x - 1) occ[n++] = 64 * w + __builtin_ctzll(x);
  return n;
}

/* A sorted list of distinct strings. */
typedef struct {
  int64_t n;
  int nw;
  uint64_t *bits; /* n * nw */
} cis_strlist;

static inline const uint64_t *cis_strlist_at(const cis_strlist *l, int64_t i) {
  return l->bits + i * l->nw;
}
/* Index of s in l, or -1 (binary search). */
int64_t cis_strlist_find(const cis_strlist *l, const uint64_t *s);
/* Sort and remove duplicates in place. */
void cis_strlist_sort_unique(cis_strlist *l);
void cis_strlist_free(cis_strlist *l);

/* All strings of nel electrons in norb orbitals (sorted). CIS_ERR_INPUT when there are more
 * than 2^31-1 of them. */
cis_err cis_strlist_all(int norb, int nel, cis_strlist *out);
/* Append to out (unsorted) every string within `level` excitations (electrons moved) of ref. */
cis_err cis_strlist_append_within(int norb, const uint64_t *ref, int level, cis_strlist *out);

/* Electrons moved between two strings of equal electron count. */
static inline int cis_str_excitation(const uint64_t *a, const uint64_t *b, int nw) {
  int c = 0;
  for (int w = 0; w < nw; w++) c += __builtin_popcountll(a[w] & ~b[w]);
  return c;
}

/* Largest norb handled (occupation lists live on the stack). */
#define CIS_MAX_NORB 4096

/* Binomial coefficient, or -1 past 2^62. */
int64_t cis_binomial(int n, int k);

#endif
