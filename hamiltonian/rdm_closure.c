/* The rows of the density matrices' intermediates (rdm_impl.h): the space itself, or its
 * single-excitation closure, with the single excitations of their strings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "hamiltonian/rdm_impl.h"

#define NW_MAX (CIS_MAX_NORB / 64)
/* Lists below SMALL strings are done on one thread. */
#define SMALL 256

/* Singles a+_a a_i of string S of list src that land in list tgt (out NULL: count only). */
static int64_t singles_of(const cis_strlist *src, const cis_strlist *tgt, int norb, int64_t S,
                          rdm_sx *out) {
  const uint64_t *s = cis_strlist_at(src, S);
  uint64_t t[NW_MAX];
  int occ[CIS_MAX_NORB];
  int nel = cis_str_occ(s, src->nw, occ);
  int64_t c = 0;
  for (int k = 0; k < nel; k++) {
    int i = occ[k];
    for (int a = 0; a < norb; a++) {
      if (cis_str_test(s, a)) continue;
      memcpy(t, s, sizeof(uint64_t) * (size_t)src->nw);
      cis_str_clear(t, i);
      cis_str_set(t, a);
      int64_t J = cis_strlist_find(tgt, t);
      if (J < 0) continue;
      if (out) out[c] = (rdm_sx){(int32_t)J, (int16_t)i, (int16_t)a, cis_str_sign(s, i, a)};
      c++;
    }
  }
  return c;
}

/* The singles of every string of src into tgt, counted, checked, listed. */
static cis_err sx_build(const cis_space *s, const cis_strlist *src, const cis_strlist *tgt,
                        const char *what, rdm_sx_list *L) {
  int norb = s->norb;
  int64_t n = src->n;
  CIS_CALL(cis_calloc(&L->ptr, (size_t)n + 1, sizeof(int64_t), "single excitation pointers"));
#pragma omp parallel for schedule(dynamic, 64) if (n > SMALL)
  for (int64_t S = 0; S < n; S++) L->ptr[S + 1] = singles_of(src, tgt, norb, S, NULL);
  for (int64_t S = 0; S < n; S++) L->ptr[S + 1] += L->ptr[S];
  CIS_CALL(cis_space_check_room(s, (double)L->ptr[n] * sizeof(rdm_sx), "a density-matrix computation", what));
  CIS_CALL(cis_malloc(&L->x, (size_t)CIS_MAX(L->ptr[n], 1), sizeof(rdm_sx), what));
#pragma omp parallel for schedule(dynamic, 64) if (n > SMALL)
  for (int64_t S = 0; S < n; S++) singles_of(src, tgt, norb, S, L->x + L->ptr[S]);
  return CIS_OK;
}

static void sx_free(rdm_sx_list *L) {
  cis_free(&L->ptr);
  cis_free(&L->x);
}

/* l's strings and every string one single excitation from one of them, sorted. */
static cis_err closure_strings(const cis_space *s, const cis_strlist *l, int nel,
                               const char *what, cis_strlist *out) {
  int norb = s->norb, nw = l->nw;
  int64_t per = 1 + (int64_t)nel * (norb - nel);
  CIS_CALL(cis_space_check_room(s, (double)l->n * (double)per * nw * 8.0, "a density-matrix computation",
                                what));
  out->nw = nw;
  out->n = l->n * per;
  CIS_CALL(cis_malloc(&out->bits, (size_t)(out->n * nw), sizeof(uint64_t), what));
#pragma omp parallel for schedule(static) if (l->n > SMALL)
  for (int64_t S = 0; S < l->n; S++) {
    const uint64_t *src = cis_strlist_at(l, S);
    uint64_t *dst = out->bits + S * per * nw;
    int occ[CIS_MAX_NORB];
    int ne = cis_str_occ(src, nw, occ);
    memcpy(dst, src, sizeof(uint64_t) * (size_t)nw);
    dst += nw;
    for (int k = 0; k < ne; k++)
      for (int a = 0; a < norb; a++) {
        if (cis_str_test(src, a)) continue;
        memcpy(dst, src, sizeof(uint64_t) * (size_t)nw);
        cis_str_clear(dst, occ[k]);
        cis_str_set(dst, a);
        dst += nw;
      }
  }
  cis_strlist_sort_unique(out);
  CIS_CALL(cis_realloc(&out->bits, (size_t)(out->n * nw), sizeof(uint64_t), what));
  return CIS_OK;
}

/* map[i] = index of string i of `from` in `to`, or -1. */
static cis_err index_map(const cis_strlist *from, const cis_strlist *to, int32_t **map) {
  CIS_CALL(cis_malloc(map, (size_t)CIS_MAX(from->n, 1), sizeof(int32_t), "string index map"));
  int32_t *m = *map;
#pragma omp parallel for schedule(static) if (from->n > SMALL)
  for (int64_t i = 0; i < from->n; i++)
    m[i] = (int32_t)cis_strlist_find(to, cis_strlist_at(from, i));
  return CIS_OK;
}

static int cmp_i32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* The B strings kb of the closure's row ka, sorted, into list; returns their number. (ka, kb)
 * is in the closure when a determinant of the space is (ka or a single of it, kb) or (ka, a
 * single of kb). binv: index in B of each beta string of the space; lbo: the singles of the
 * space's beta strings into B. mark: B.n flags, clear on entry and on return. */
static int64_t closure_row(const rdm_rows *R, const int32_t *binv, const rdm_sx_list *lbo,
                           int64_t ka, unsigned char *mark, int32_t *list) {
  const cis_space *s = R->s;
  int64_t n = 0, ja0 = R->amap[ka];
  for (int64_t t = R->la.ptr[ka] - 1; t < R->la.ptr[ka + 1]; t++) {
    int64_t ja = t < R->la.ptr[ka] ? ja0 : R->la.x[t].tgt;
    if (ja < 0) continue;
    for (int64_t d = s->aptr[ja]; d < s->aptr[ja + 1]; d++) {
      int32_t kb = binv[s->amaj_ib[d]];
      if (!mark[kb]) {
        mark[kb] = 1;
        list[n++] = kb;
      }
    }
  }
  if (ja0 >= 0)
    for (int64_t d = s->aptr[ja0]; d < s->aptr[ja0 + 1]; d++) {
      int32_t jb = s->amaj_ib[d];
      for (int64_t t = lbo->ptr[jb]; t < lbo->ptr[jb + 1]; t++) {
        int32_t kb = lbo->x[t].tgt;
        if (!mark[kb]) {
          mark[kb] = 1;
          list[n++] = kb;
        }
      }
    }
  for (int64_t t = 0; t < n; t++) mark[list[t]] = 0;
  qsort(list, (size_t)n, sizeof *list, cmp_i32);
  return n;
}

/* kptr and kb of the closure: rows counted, checked, then listed. */
static cis_err closure_rows(rdm_rows *R, const int32_t *binv, const rdm_sx_list *lbo) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  int64_t *kptr = NULL, nA = R->A.n;
  int32_t *kb = NULL;
  int fail = 0;
  CIS_TRY(cis_calloc(&kptr, (size_t)nA + 1, sizeof *kptr, "closure rows"));
  for (int pass = 0; pass < 2; pass++) {
#pragma omp parallel if (nA > SMALL)
    {
      unsigned char *mark = calloc((size_t)R->B.n, 1);
      int32_t *list = malloc(sizeof(int32_t) * (size_t)R->B.n);
      if (!mark || !list) {
#pragma omp atomic write
        fail = 1;
      }
#pragma omp for schedule(dynamic, 16)
      for (int64_t ka = 0; ka < nA; ka++) {
        if (!mark || !list) continue;
        int64_t m = closure_row(R, binv, lbo, ka, mark, list);
        if (pass == 0)
          kptr[ka + 1] = m;
        else
          memcpy(kb + kptr[ka], list, sizeof(int32_t) * (size_t)m);
      }
      free(mark);
      free(list);
    }
    if (fail) CIS_FAIL(CIS_ERR_NOMEM, "out of host memory for the closure's rows");
    if (pass == 1) break;
    for (int64_t ka = 0; ka < nA; ka++) kptr[ka + 1] += kptr[ka];
    char parts[96];
    snprintf(parts, sizeof parts, "the %lld determinants of the space's single-excitation "
             "closure", (long long)kptr[nA]);
    CIS_TRY(cis_space_check_room(R->s, (double)kptr[nA] * 4.0, "a density-matrix computation", parts));
    CIS_TRY(cis_malloc(&kb, (size_t)CIS_MAX(kptr[nA], 1), sizeof *kb, "closure rows"));
  }
  R->nk = kptr[nA];
  R->kptr = kptr;
  R->kb = kb;
  kptr = NULL;
  kb = NULL;
cleanup:
  cis_free(&kptr);
  cis_free(&kb);
  return err;
}

static int is_fci(const cis_space *s) {
  return s->astr.n == cis_binomial(s->norb, s->nalpha) &&
         s->bstr.n == cis_binomial(s->norb, s->nbeta) && s->ndet == s->astr.n * s->bstr.n;
}

cis_err cis_rdm_rows_build(const cis_space *s, int closure, rdm_rows *R) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  int32_t *binv = NULL;
  rdm_sx_list lbo = {0};
  memset(R, 0, sizeof *R);
  R->s = s;
  if (!closure || is_fci(s)) {
    R->A = s->astr;
    R->B = s->bstr;
    R->nk = s->ndet;
    R->kptr = s->aptr;
    R->kb = s->amaj_ib;
    CIS_TRY(sx_build(s, &s->astr, &s->astr, "the alpha strings' single excitations", &R->la));
    CIS_TRY(sx_build(s, &s->bstr, &s->bstr, "the beta strings' single excitations", &R->lb));
    goto cleanup;
  }
  R->own = 1;
  CIS_TRY(closure_strings(s, &s->astr, s->nalpha, "the closure's alpha strings", &R->A));
  CIS_TRY(closure_strings(s, &s->bstr, s->nbeta, "the closure's beta strings", &R->B));
  CIS_TRY(index_map(&R->A, &s->astr, &R->amap));
  CIS_TRY(index_map(&R->B, &s->bstr, &R->bmap));
  CIS_TRY(index_map(&s->bstr, &R->B, &binv));
  CIS_TRY(sx_build(s, &R->A, &s->astr, "the closure's alpha single excitations", &R->la));
  CIS_TRY(sx_build(s, &R->B, &s->bstr, "the closure's beta single excitations", &R->lb));
  CIS_TRY(sx_build(s, &s->bstr, &R->B, "the beta strings' single excitations", &lbo));
  CIS_TRY(closure_rows(R, binv, &lbo));
cleanup:
  cis_free(&binv);
  sx_free(&lbo);
  return err;
}

void cis_rdm_rows_free(rdm_rows *R) {
  if (R->own) {
    cis_strlist_free(&R->A);
    cis_strlist_free(&R->B);
    int64_t *kptr = (int64_t *)R->kptr;
    int32_t *kb = (int32_t *)R->kb;
    cis_free(&kptr);
    cis_free(&kb);
  }
  cis_free(&R->amap);
  cis_free(&R->bmap);
  sx_free(&R->la);
  sx_free(&R->lb);
  memset(R, 0, sizeof *R);
}
