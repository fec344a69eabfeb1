/* The Reference region of a determinant space: which determinants come first (docs/format.md).
 *
 * The region serves the solver's guess and preconditioner as much as the storage, so it is
 * chosen to show every part of the spectrum the solver must find:
 *   1. the reference determinant(s);
 *   2. the lowest determinant of each symmetry block of H (hamiltonian/symmetry.h), the blocks
 *      taken in the order of their lowest diagonal energies, at most CIS_REF_BLOCKS of them;
 *   3. the lowest remaining diagonal energies, up to the requested size;
 *   4. every configuration met so far completed: all determinants with the same doubly and
 *      singly occupied orbitals and the same Ms that the space holds (configurations of more
 *      than CIS_REF_CONF_MAX determinants are left as they are). H_PP then commutes with S^2,
 *      and with Ms = 0 with the exchange of alpha and beta strings, so its eigenvectors have a
 *      spin and, with Ms = 0, a spin parity.
 * The region may therefore hold more determinants than were asked for. An MRCI space's region
 * is its model space alone, by ascending diagonal energy: the rules are then the model's (a CAS
 * holds whole configurations; the symmetry blocks are those the model space reaches). */
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "hamiltonian/space_impl.h"

/* Symmetry blocks given a determinant of their own in the region, at most. */
#define CIS_REF_BLOCKS 64
/* Configurations are completed when they hold at most this many determinants. */
#define CIS_REF_CONF_MAX 256
/* Distinct symmetry labels tracked while the blocks are counted (more are counted, not kept). */
#define CIS_REF_LABEL_SLOTS 4096

typedef struct {
  double e;
  int64_t pos;
} epos;
static int epos_less(epos a, epos b) { return a.e < b.e || (a.e == b.e && a.pos < b.pos); }
static int cmp_epos(const void *a, const void *b) {
  epos x = *(const epos *)a, y = *(const epos *)b;
  return epos_less(x, y) ? -1 : epos_less(y, x) ? 1 : 0;
}

static void heap_sift_down(epos *h, int64_t n, int64_t i) {
  for (;;) {
    int64_t l = 2 * i + 1, r = l + 1, big = i;
    if (l < n && epos_less(h[big], h[l])) big = l;
    if (r < n && epos_less(h[big], h[r])) big = r;
    if (big == i) return;
    epos t = h[i];
    h[i] = h[big];
    h[big] = t;
    i = big;
  }
}

/* The m lowest diagonal energies among positions not yet taken, ascending, into order[]
 * (max-heap of size m: O(n log m), the Reference region is small). */
static cis_err pick_lowest(const double *hd, int64_t n, const unsigned char *taken, int64_t m,
                           int64_t *order) {
  epos *h = NULL;
  if (m <= 0) return CIS_OK;
  CIS_CALL(cis_malloc(&h, (size_t)m, sizeof(epos), "reference selection heap"));
  int64_t len = 0;
  for (int64_t k = 0; k < n; k++) {
    if (taken[k]) continue;
    epos x = {hd[k], k};
    if (len < m) {
      h[len++] = x;
      if (len == m)
        for (int64_t i = m / 2 - 1; i >= 0; i--) heap_sift_down(h, m, i);
    } else if (epos_less(x, h[0])) {
      h[0] = x;
      heap_sift_down(h, m, 0);
    }
  }
  qsort(h, (size_t)len, sizeof(epos), cmp_epos);
  for (int64_t i = 0; i < len; i++) order[i] = h[i].pos;
  cis_free(&h);
  return CIS_OK;
}

/* Symmetry label of alpha-major position k. */
static uint64_t label_at(const cis_space *s, const int64_t *keys, int64_t k) {
  return s->alab[keys[k] >> 32] ^ s->blab[keys[k] & 0xffffffff];
}

/* The lowest position of each symmetry label (open addressing), ascending; s->nblocks counts
 * the labels kept, s->nblocks_more says there were more. */
static cis_err block_lowest(cis_space *s, const double *hd, const int64_t *keys, epos **out,
                            int *nout) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  uint64_t *lab = NULL;
  epos *low = NULL;
  int used = 0;
  CIS_TRY(cis_malloc(&lab, CIS_REF_LABEL_SLOTS, sizeof *lab, "symmetry labels"));
  CIS_TRY(cis_malloc(&low, CIS_REF_LABEL_SLOTS, sizeof *low, "symmetry blocks"));
  for (int i = 0; i < CIS_REF_LABEL_SLOTS; i++) low[i].pos = -1;
  s->nblocks_more = 0;
  for (int64_t k = 0; k < s->ndet; k++) {
    uint64_t g = label_at(s, keys, k);
    unsigned slot = (unsigned)((g * 0x9E3779B97F4A7C15ull) >> 52) % CIS_REF_LABEL_SLOTS;
    while (low[slot].pos >= 0 && lab[slot] != g) slot = (slot + 1) % CIS_REF_LABEL_SLOTS;
    epos x = {hd[k], k};
    if (low[slot].pos < 0) {
      if (used >= CIS_REF_LABEL_SLOTS / 2) { /* keep the table sparse */
        s->nblocks_more = 1;
        continue;
      }
      used++;
      lab[slot] = g;
      low[slot] = x;
    } else if (epos_less(x, low[slot])) {
      low[slot] = x;
    }
  }
  int m = 0;
  for (int i = 0; i < CIS_REF_LABEL_SLOTS; i++)
    if (low[i].pos >= 0) low[m++] = low[i];
  qsort(low, (size_t)m, sizeof *low, cmp_epos);
  s->nblocks = m;
  *nout = m;
  *out = low;
  low = NULL;
cleanup:
  cis_free(&lab);
  cis_free(&low);
  return err;
}

/* Append to order[*m] the determinants of the configuration of position k that the space holds
 * and that are not yet taken. w: 4 * nw words of scratch. */
static void complete_configuration(const cis_space *s, const int64_t *keys, int64_t k,
                                   unsigned char *taken, int64_t *order, int64_t *m,
                                   uint64_t *w) {
  int nw = s->nw, open[128], nopen = 0;
  const uint64_t *A = cis_strlist_at(&s->astr, keys[k] >> 32);
  const uint64_t *B = cis_strlist_at(&s->bstr, keys[k] & 0xffffffff);
  uint64_t *a = w, *b = w + nw;
  int na_open = 0;
  for (int x = 0; x < nw; x++) {
    for (uint64_t o = A[x] ^ B[x]; o; o &= o - 1) {
      if (nopen == 128) return;
      open[nopen++] = 64 * x + __builtin_ctzll(o);
    }
    na_open += __builtin_popcountll(A[x] & ~B[x]);
  }
  if (nopen > 62 || cis_binomial(nopen, na_open) > CIS_REF_CONF_MAX) return;
  if (na_open == 0 || na_open == nopen) return; /* a single determinant */
  /* every subset of the open shells with na_open members is an alpha choice (Gosper's hack) */
  for (uint64_t c = ((uint64_t)1 << na_open) - 1; c < ((uint64_t)1 << nopen);) {
    for (int x = 0; x < nw; x++) a[x] = b[x] = A[x] & B[x];
    for (int i = 0; i < nopen; i++)
      cis_str_set((c >> i) & 1 ? a : b, open[i]);
    int64_t ia = cis_strlist_find(&s->astr, a), ib = ia < 0 ? -1 : cis_strlist_find(&s->bstr, b);
    int64_t q = ib < 0 ? -1 : cis_space_lookup(s, ia, (int32_t)ib);
    if (q >= 0 && !taken[q]) {
      taken[q] = 1;
      order[(*m)++] = q;
    }
    uint64_t u = c & -c, v = c + u;
    c = v + (((v ^ c) / u) >> 2);
  }
}

/* An MRCI model space (s->ref_exact): the region is the references alone, by ascending
 * diagonal energy (the preconditioner's dense block takes its lowest part), then the rest. */
static cis_err order_model_space(cis_space *s, const double *hd, const int64_t *refpos,
                                 int64_t nr, unsigned char *taken, int64_t *order) {
  epos *e = NULL;
  int64_t m = 0;
  CIS_CALL(cis_malloc(&e, (size_t)CIS_MAX(nr, 1), sizeof *e, "model space order"));
  for (int64_t r = 0; r < nr; r++) {
    if (refpos[r] < 0 || taken[refpos[r]]) continue;
    taken[refpos[r]] = 1;
    e[m++] = (epos){hd[refpos[r]], refpos[r]};
  }
  qsort(e, (size_t)m, sizeof *e, cmp_epos);
  for (int64_t i = 0; i < m; i++) order[i] = e[i].pos;
  cis_free(&e);
  s->nref = m;
  for (int64_t k = 0; k < s->ndet; k++)
    if (!taken[k]) order[m++] = k;
  return CIS_OK;
}

cis_err cis_space_order(cis_space *s, const double *hd, const int64_t *keys,
                        const int64_t *refpos, int64_t nr, int64_t *order) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  unsigned char *taken = NULL;
  uint64_t *w = NULL;
  epos *low = NULL;
  int nlow = 0;
  int64_t n = s->ndet, m = 0;
  CIS_TRY(cis_calloc(&taken, (size_t)n, 1, "determinant marks"));
  CIS_TRY(cis_malloc(&w, (size_t)(4 * s->nw), sizeof *w, "configuration strings"));
  CIS_TRY(block_lowest(s, hd, keys, &low, &nlow)); /* the report's count of blocks */
  if (s->ref_exact) {
    CIS_TRY(order_model_space(s, hd, refpos, nr, taken, order));
    goto cleanup;
  }
  for (int64_t r = 0; r < nr; r++) {
    if (refpos[r] < 0 || taken[refpos[r]]) continue; /* absent or repeated reference */
    taken[refpos[r]] = 1;
    order[m++] = refpos[r];
  }
  for (int i = 0; i < nlow && i < CIS_REF_BLOCKS; i++)
    if (!taken[low[i].pos]) {
      taken[low[i].pos] = 1;
      order[m++] = low[i].pos;
    }
  s->nblocks_ref = CIS_MIN(nlow, CIS_REF_BLOCKS);
  int64_t more = CIS_MIN(s->nref, n) - m;
  CIS_TRY(pick_lowest(hd, n, taken, more, order + m));
  for (int64_t i = m; i < m + CIS_MAX(more, 0); i++) taken[order[i]] = 1;
  m += CIS_MAX(more, 0);
  for (int64_t i = 0, end = m; i < end; i++)
    complete_configuration(s, keys, order[i], taken, order, &m, w);
  s->nref = m;
  for (int64_t k = 0; k < n; k++)
    if (!taken[k]) order[m++] = k;
cleanup:
  cis_free(&taken);
  cis_free(&w);
  cis_free(&low);
  return err;
}

cis_err cis_space_ref_symmetry(cis_space *s) {
  int64_t nref = s->nref;
  CIS_CALL(cis_malloc(&s->ref_label, (size_t)nref, sizeof *s->ref_label, "Reference labels"));
  for (int64_t i = 0; i < nref; i++)
    s->ref_label[i] = s->alab[s->det_ia[i]] ^ s->blab[s->det_ib[i]];
  if (s->nalpha != s->nbeta) return CIS_OK;
  /* alpha and beta strings are then drawn from the same strings, not always the same lists */
  CIS_CALL(cis_malloc(&s->ref_partner, (size_t)nref, sizeof *s->ref_partner,
                      "Reference spin partners"));
  for (int64_t i = 0; i < nref; i++) {
    int64_t j = cis_space_find(s, cis_space_beta(s, i), cis_space_alpha(s, i));
    s->ref_partner[i] = j >= 0 && j < nref ? j : -1;
  }
  return CIS_OK;
}
