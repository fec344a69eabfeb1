#include "hamiltonian/strings.h"

#include <stdlib.h>
#include <string.h>

#include "base/problem.h"
#include "base/util.h"

#define CIS_MAX_INDEX ((int64_t)0x7fffffff)

int64_t cis_binomial(int n, int k) {
  if (k < 0 || n < 0 || k > n) return 0;
  if (k > n - k) k = n - k;
  int64_t r = 1;
  for (int i = 1; i <= k; i++) {
    /* r * (n-k+i) / i is exact at every step; guard the product. */
    if (r > ((int64_t)1 << 62) / (n - k + i)) return -1;
    r = r * (n - k + i) / i;
  }
  return r;
}

int64_t cis_strlist_find(const cis_strlist *l, const uint64_t *s) {
  int64_t lo = 0, hi = l->n - 1;
  while (lo <= hi) {
    int64_t mid = lo + (hi - lo) / 2;
    int c = cis_str_cmp(cis_strlist_at(l, mid), s, l->nw);
    if (c == 0) return mid;
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return -1;
}

static _Thread_local int g_sort_nw;
static int cmp_strings(const void *a, const void *b) {
  return cis_str_cmp((const uint64_t *)a, (const uint64_t *)b, g_sort_nw);
}

void cis_strlist_sort_unique(cis_strlist *l) {
  if (l->n < 2) return;
  g_sort_nw = l->nw;
  qsort(l->bits, (size_t)l->n, sizeof(uint64_t) * (size_t)l->nw, cmp_strings);
  int64_t m = 1;
  for (int64_t i = 1; i < l->n; i++) {
    if (cis_str_cmp(cis_strlist_at(l, i), cis_strlist_at(l, m - 1), l->nw) == 0) continue;
    if (m != i) memcpy(l->bits + m * l->nw, cis_strlist_at(l, i), sizeof(uint64_t) * l->nw);
    m++;
  }
  l->n = m;
}

void cis_strlist_free(cis_strlist *l) {
  if (!l) return;
  cis_free(&l->bits);
  l->n = 0;
}

/* Next k-subset of [0, m) in colex order (c ascending); 0 when c was the last one. */
static int next_comb(int *c, int k, int m) {
  for (int j = 0; j < k; j++) {
    int limit = (j + 1 < k) ? c[j + 1] : m;
    if (c[j] + 1 < limit) {
      c[j]++;
      for (int t = 0; t < j; t++) c[t] = t;
      return 1;
    }
  }
  return 0;
}

cis_err cis_strlist_all(int norb, int nel, cis_strlist *out) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  int *c = NULL;
  int64_t n = cis_binomial(norb, nel);
  out->nw = cis_nwords(norb);
  out->n = 0;
  out->bits = NULL;
  if (n < 0 || n > CIS_MAX_INDEX)
    CIS_FAIL(CIS_ERR_INPUT, "%d electrons in %d orbitals give more than 2^31-1 strings", nel,
             norb);
  CIS_TRY(cis_calloc(&out->bits, (size_t)n * out->nw, sizeof(uint64_t), "string list"));
  CIS_TRY(cis_malloc(&c, (size_t)nel + 1, sizeof(int), "combination"));
  for (int j = 0; j < nel; j++) c[j] = j;
  for (int64_t i = 0; i < n; i++) {
    uint64_t *s = out->bits + i * out->nw;
    for (int j = 0; j < nel; j++) cis_str_set(s, c[j]);
    next_comb(c, nel, norb);
  }
  out->n = n;
cleanup:
  cis_free(&c);
  if (err) cis_strlist_free(out);
  return err;
}

static cis_err append_level(int nw, const uint64_t *ref, const int *occ, int nel,
                            const int *vir, int nvir, int h, cis_strlist *out) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  int *ch = NULL, *cp = NULL;
  int64_t add = cis_binomial(nel, h) * cis_binomial(nvir, h);
  if (add < 0 || out->n + add > CIS_MAX_INDEX)
    CIS_FAIL(CIS_ERR_INPUT, "the truncated space has more than 2^31-1 strings of one spin");
  CIS_TRY(cis_realloc(&out->bits, (size_t)(out->n + add) * nw, sizeof(uint64_t), "strings"));
  CIS_TRY(cis_malloc(&ch, (size_t)h + 1, sizeof(int), "holes"));
  CIS_TRY(cis_malloc(&cp, (size_t)h + 1, sizeof(int), "particles"));
  for (int j = 0; j < h; j++) ch[j] = j;
  do {
    for (int j = 0; j < h; j++) cp[j] = j;
    do {
      uint64_t *s = out->bits + out->n * nw;
      memcpy(s, ref, sizeof(uint64_t) * nw);
      for (int j = 0; j < h; j++) {
        cis_str_clear(s, occ[ch[j]]);
        cis_str_set(s, vir[cp[j]]);
      }
      out->n++;
    } while (next_comb(cp, h, nvir));
  } while (next_comb(ch, h, nel));
cleanup:
  cis_free(&ch);
  cis_free(&cp);
  return err;
}

cis_err cis_strlist_append_within(int norb, const uint64_t *ref, int level, cis_strlist *out) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  int nw = cis_nwords(norb);
  int *occ = NULL, *vir = NULL;
  CIS_TRY(cis_malloc(&occ, (size_t)norb, sizeof(int), "occupied orbitals"));
  CIS_TRY(cis_malloc(&vir, (size_t)norb, sizeof(int), "virtual orbitals"));
  int nel = 0, nvir = 0;
  for (int p = 0; p < norb; p++) {
    if (cis_str_test(ref, p))
      occ[nel++] = p;
    else
      vir[nvir++] = p;
  }
  out->nw = nw;
  for (int h = 0; h <= level && h <= nel && h <= nvir; h++)
    CIS_TRY(append_level(nw, ref, occ, nel, vir, nvir, h, out));
cleanup:
  cis_free(&occ);
  cis_free(&vir);
  return err;
}
