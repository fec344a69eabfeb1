/* One-particle density matrices (see rdm.h). Single excitations of every alpha and beta string
 * are listed once (target string, i, a, sign), so a determinant's contributions cost one
 * lookup per excitation. */
#include "hamiltonian/rdm.h"

#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "hamiltonian/space_impl.h"

typedef struct {
  int32_t tgt;
  int16_t i, a;
  int32_t sign;
} sx;

typedef struct {
  int64_t *ptr; /* strings + 1 */
  sx *x;
} sx_list;

/* Singles of string S inside the list l (out NULL: count only). */
static int64_t singles_of(const cis_strlist *l, int norb, int64_t S, uint64_t *t, sx *out) {
  const uint64_t *s = cis_strlist_at(l, S);
  int64_t c = 0;
  for (int i = 0; i < norb; i++) {
    if (!cis_str_test(s, i)) continue;
    for (int a = 0; a < norb; a++) {
      if (cis_str_test(s, a)) continue;
      memcpy(t, s, sizeof(uint64_t) * (size_t)l->nw);
      cis_str_clear(t, i);
      cis_str_set(t, a);
      int64_t J = cis_strlist_find(l, t);
      if (J < 0) continue;
      if (out) out[c] = (sx){(int32_t)J, (int16_t)i, (int16_t)a, cis_str_sign(s, i, a)};
      c++;
    }
  }
  return c;
}

static cis_err sx_build(const cis_strlist *l, int norb, sx_list *L) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  uint64_t *t = NULL;
  CIS_TRY(cis_malloc(&t, (size_t)l->nw, sizeof *t, "string scratch"));
  CIS_TRY(cis_calloc(&L->ptr, (size_t)l->n + 1, sizeof(int64_t), "single excitation pointers"));
  for (int64_t S = 0; S < l->n; S++) L->ptr[S + 1] = L->ptr[S] + singles_of(l, norb, S, t, NULL);
  CIS_TRY(cis_malloc(&L->x, (size_t)CIS_MAX(L->ptr[l->n], 1), sizeof(sx), "single excitations"));
  for (int64_t S = 0; S < l->n; S++) singles_of(l, norb, S, t, L->x + L->ptr[S]);
cleanup:
  cis_free(&t);
  return err;
}

static void sx_free(sx_list *L) {
  cis_free(&L->ptr);
  cis_free(&L->x);
}

/* Determinant d's terms of gamma (norb x norb, accumulated): <J| a+_a a_i |d> c_J c_d. */
static void det_terms(const cis_space *s, const sx_list *la, const sx_list *lb, int64_t d,
                      const double *c, double *g) {
  int norb = s->norb;
  int32_t ia = s->det_ia[d], ib = s->det_ib[d];
  const uint64_t *a = cis_strlist_at(&s->astr, ia), *b = cis_strlist_at(&s->bstr, ib);
  double cd = c[d];
  if (cd == 0.0) return;
  for (int p = 0; p < norb; p++)
    g[p * norb + p] += cd * cd * (cis_str_test(a, p) + cis_str_test(b, p));
  for (int64_t q = la->ptr[ia]; q < la->ptr[ia + 1]; q++) {
    const sx *x = &la->x[q];
    int64_t J = cis_space_lookup(s, x->tgt, ib);
    if (J >= 0) g[x->a * norb + x->i] += x->sign * c[J] * cd;
  }
  /* A number-conserving pair a+ a passes the alpha string with even parity. */
  for (int64_t q = lb->ptr[ib]; q < lb->ptr[ib + 1]; q++) {
    const sx *x = &lb->x[q];
    int64_t J = cis_space_lookup(s, ia, x->tgt);
    if (J >= 0) g[x->a * norb + x->i] += x->sign * c[J] * cd;
  }
}

cis_err cis_rdm1(const cis_space *s, int k, const double *C, double *rdm) {
  cis_err err = CIS_OK;
  sx_list la = {0}, lb = {0};
  int norb = s->norb, fail = 0;
  int64_t n = s->ndet, nn = (int64_t)norb * norb;
  CIS_CHECK(norb < 32768, CIS_ERR_INPUT, "rdm1: %d orbitals (at most 32767)", norb);
  CIS_CLEANUP_FUNCTION;
  CIS_TRY(sx_build(&s->astr, norb, &la));
  CIS_TRY(sx_build(&s->bstr, norb, &lb));
  memset(rdm, 0, sizeof(double) * (size_t)(k * nn));
  for (int v = 0; v < k; v++) {
    double *g = rdm + v * nn;
#pragma omp parallel
    {
      double *my = calloc((size_t)nn, sizeof(double));
      if (!my) {
#pragma omp atomic write
        fail = 1;
      }
#pragma omp for schedule(dynamic, 256)
      for (int64_t d = 0; d < n; d++)
        if (my) det_terms(s, &la, &lb, d, C + v * n, my);
#pragma omp critical
      for (int64_t t = 0; my && t < nn; t++) g[t] += my[t];
      free(my);
    }
    for (int p = 0; p < norb; p++) /* symmetric to rounding */
      for (int q = 0; q < p; q++)
        g[p * norb + q] = g[q * norb + p] = 0.5 * (g[p * norb + q] + g[q * norb + p]);
  }
  if (fail) CIS_FAIL(CIS_ERR_NOMEM, "out of host memory for density matrices");
cleanup:
  sx_free(&la);
  sx_free(&lb);
  return err;
}

/* Column i of the eigenvectors A (column-major, ascending) as natural orbital norb-1-i of vec
 * (row-major, descending), its largest component positive. */
static void store_orbital(int norb, const double *a, int i, double *vec) {
  int big = 0;
  for (int p = 1; p < norb; p++)
    if (fabs(a[p]) > fabs(a[big])) big = p;
  double sign = a[big] < 0 ? -1.0 : 1.0;
  for (int p = 0; p < norb; p++) vec[(int64_t)p * norb + (norb - 1 - i)] = sign * a[p];
}

cis_err cis_natural_orbitals(int norb, int k, const double *rdm, double *occ, double *vec) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  double *A = NULL, *w = NULL;
  int64_t nn = (int64_t)norb * norb;
  CIS_TRY(cis_malloc(&A, (size_t)nn, sizeof *A, "density matrix copy"));
  CIS_TRY(cis_malloc(&w, (size_t)norb, sizeof *w, "natural occupations"));
  for (int v = 0; v < k; v++) {
    memcpy(A, rdm + v * nn, sizeof(double) * (size_t)nn);
    lapack_int info = LAPACKE_dsyevd(LAPACK_COL_MAJOR, vec ? 'V' : 'N', 'U', norb, A, norb, w);
    if (info != 0)
      CIS_FAIL(CIS_ERR_NUMERIC, "LAPACKE_dsyevd failed (info %d) on the density matrix of "
               "root %d", (int)info, v);
    for (int p = 0; p < norb; p++) occ[v * norb + p] = w[norb - 1 - p];
    for (int i = 0; vec && i < norb; i++)
      store_orbital(norb, A + (int64_t)i * norb, i, vec + v * nn);
  }
cleanup:
  cis_free(&A);
  cis_free(&w);
  return err;
}

cis_err cis_natural_occupations(int norb, int k, const double *rdm, double *occ) {
  return cis_natural_orbitals(norb, k, rdm, occ, NULL);
}
