/* Frozen core and active orbitals: the integrals of the kept orbitals (hamiltonian/orbitals.h). */
#include "hamiltonian/orbitals.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "hamiltonian/strings.h"

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* One decimal orbital number at *c (1 .. CIS_MAX_NORB), *c advanced past it. */
static cis_err orbital_number(const char **c, const char *text, const char *what, int *out) {
  long v = 0;
  CIS_CHECK(isdigit((unsigned char)**c), CIS_ERR_USAGE,
            "%s: '%s' is not a list of orbital numbers and ranges (e.g. 3-10 or 2,3,5-7)", what,
            text);
  while (isdigit((unsigned char)**c)) {
    v = 10 * v + (**c - '0');
    (*c)++;
    CIS_CHECK(v <= CIS_MAX_NORB, CIS_ERR_USAGE, "%s: orbital numbers go up to %d, in '%s'", what,
              CIS_MAX_NORB, text);
  }
  CIS_CHECK(v >= 1, CIS_ERR_USAGE, "%s: orbitals are numbered from 1 (as in the FCIDUMP), in '%s'",
            what, text);
  *out = (int)v;
  return CIS_OK;
}

cis_err cis_orbitals_parse(const char *text, const char *what, int **out, int *n) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  int *l = NULL, len = 0, cap = 0;
  *out = NULL;
  *n = 0;
  const char *c = text;
  if (!(*c))
    CIS_FAIL(CIS_ERR_USAGE, "%s: empty orbital list", what);
  for (;;) {
    int lo, hi;
    CIS_TRY(orbital_number(&c, text, what, &lo));
    hi = lo;
    if (*c == '-') {
      c++;
      CIS_TRY(orbital_number(&c, text, what, &hi));
      if (hi < lo)
        CIS_FAIL(CIS_ERR_USAGE, "%s: the range %d-%d descends, in '%s'", what, lo, hi, text);
    }
    if (len + (hi - lo + 1) > cap) {
      cap = 2 * (len + (hi - lo + 1));
      CIS_TRY(cis_realloc(&l, (size_t)cap, sizeof *l, "orbital list"));
    }
    for (int p = lo; p <= hi; p++) l[len++] = p - 1;
    if (*c == '\0') break;
    if (*c != ',')
      CIS_FAIL(CIS_ERR_USAGE, "%s: unexpected '%c' in '%s' (expected orbital numbers and ranges "
               "separated by commas, e.g. 3-10 or 2,3,5-7)", what, *c, text);
    c++;
  }
  qsort(l, (size_t)len, sizeof *l, cmp_int);
  for (int i = 1; i < len; i++)
    if (l[i] == l[i - 1])
      CIS_FAIL(CIS_ERR_USAGE, "%s: orbital %d is given twice in '%s'", what, l[i] + 1, text);
  *out = l;
  *n = len;
  l = NULL;
cleanup:
  cis_free(&l);
  return err;
}

void cis_orbitals_format(const int *orb, int n, char *buf, size_t cap) {
  size_t used = 0;
  buf[0] = '\0';
  if (n == 0) {
    snprintf(buf, cap, "none");
    return;
  }
  for (int i = 0; i < n && used < cap;) {
    int j = i;
    while (j + 1 < n && orb[j + 1] == orb[j] + 1) j++;
    int w = j > i ? snprintf(buf + used, cap - used, "%s%d-%d", i ? "," : "", orb[i] + 1, orb[j] + 1)
                  : snprintf(buf + used, cap - used, "%s%d", i ? "," : "", orb[i] + 1);
    if (w < 0) return;
    used += (size_t)w;
    i = j + 1;
  }
  if (used >= cap && cap > 4) snprintf(buf + cap - 4, 4, "...");
}

/* One determinant string of the input, in the kept orbitals: frozen ones must be occupied and
 * deleted ones empty. */
static cis_err map_string(const uint64_t *in, int norb_in, const int *kept, int nkept, int nfrozen,
                          uint64_t *out, const char *what, int64_t idx, const char *spin) {
  int nw_out = cis_nwords(nkept), k = 0;
  memset(out, 0, sizeof *out * (size_t)nw_out);
  for (int p = 0; p < norb_in; p++) {
    int occ = cis_str_test(in, p);
    int is_kept = k < nkept && kept[k] == p;
    if (is_kept) {
      if (occ) cis_str_set(out, k);
      k++;
    } else if (p < nfrozen) {
      CIS_CHECK(occ, CIS_ERR_INPUT, "%s determinant %lld leaves frozen orbital %d without its %s "
                "electron", what, (long long)idx, p + 1, spin);
    } else {
      CIS_CHECK(!occ, CIS_ERR_INPUT, "%s determinant %lld occupies orbital %d (%s), which "
                "--frozen/--active delete", what, (long long)idx, p + 1, spin);
    }
  }
  return CIS_OK;
}

/* The n determinants (a, b) of the input mapped to the kept orbitals, in place (*a, *b
 * reallocated to the new width). */
static cis_err map_dets(uint64_t **a, uint64_t **b, int64_t n, int norb_in, const int *kept,
                        int nkept, int nfrozen, const char *what) {
  if (n <= 0 || !*a || !*b) return CIS_OK;
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  int nw_in = cis_nwords(norb_in), nw = cis_nwords(nkept);
  uint64_t *na = NULL, *nb = NULL;
  CIS_TRY(cis_malloc(&na, (size_t)(n * nw), sizeof *na, "mapped alpha strings"));
  CIS_TRY(cis_malloc(&nb, (size_t)(n * nw), sizeof *nb, "mapped beta strings"));
  for (int64_t i = 0; i < n; i++) {
    CIS_TRY(map_string(*a + i * nw_in, norb_in, kept, nkept, nfrozen, na + i * nw, what, i,
                       "alpha"));
    CIS_TRY(map_string(*b + i * nw_in, norb_in, kept, nkept, nfrozen, nb + i * nw, what, i,
                       "beta"));
  }
  cis_free(a);
  cis_free(b);
  *a = na;
  *b = nb;
  na = nb = NULL;
cleanup:
  cis_free(&na);
  cis_free(&nb);
  return err;
}

/* The kept orbitals: the active list, or every orbital above the frozen ones. */
static cis_err kept_orbitals(int norb, int nfrozen, const int *active, int nactive, int **kept,
                             int *nkept) {
  if (active) {
    CIS_CHECK(active[nactive - 1] < norb, CIS_ERR_USAGE,
              "--active: orbital %d is beyond the input's %d orbitals", active[nactive - 1] + 1,
              norb);
    CIS_CHECK(active[0] >= nfrozen, CIS_ERR_USAGE,
              "--active: orbital %d is one of the %d frozen orbitals (--frozen %d freezes "
              "orbitals 1-%d)", active[0] + 1, nfrozen, nfrozen, nfrozen);
  }
  *nkept = active ? nactive : norb - nfrozen;
  CIS_CHECK(*nkept >= 1, CIS_ERR_USAGE,
            "--frozen %d leaves no orbital of the input's %d", nfrozen, norb);
  CIS_CALL(cis_malloc(kept, (size_t)*nkept, sizeof **kept, "kept orbitals"));
  for (int i = 0; i < *nkept; i++) (*kept)[i] = active ? active[i] : nfrozen + i;
  return CIS_OK;
}

/* h', eri' and ecore' of the kept orbitals (the formulas of orbitals.h). */
static cis_err fold_integrals(cis_integrals *I, int nfrozen, const int *kept, int nk) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  int n = I->norb;
  double *h = NULL, *eri = NULL;
  const double *g = I->eri;
  CIS_TRY(cis_malloc(&h, (size_t)nk * (size_t)nk, sizeof *h, "active one-electron integrals"));
  CIS_TRY(cis_malloc(&eri, (size_t)cis_eri_size(nk), sizeof *eri,
                     "active two-electron integrals"));
  double ecore = I->ecore;
  for (int c = 0; c < nfrozen; c++) {
    ecore += 2.0 * I->h1e[c * n + c];
    for (int d = 0; d < nfrozen; d++)
      ecore += 2.0 * g[cis_eri_index(c, c, d, d)] - g[cis_eri_index(c, d, d, c)];
  }
  for (int i = 0; i < nk; i++)
    for (int j = 0; j <= i; j++) {
      int P = kept[i], Q = kept[j];
      double v = I->h1e[P * n + Q];
      for (int c = 0; c < nfrozen; c++)
        v += 2.0 * g[cis_eri_index(P, Q, c, c)] - g[cis_eri_index(P, c, c, Q)];
      h[i * nk + j] = h[j * nk + i] = v;
    }
  for (int i = 0; i < nk; i++)
    for (int j = 0; j <= i; j++)
      for (int k = 0; k <= i; k++)
        for (int l = 0; l <= (k == i ? j : k); l++)
          eri[cis_eri_index(i, j, k, l)] = g[cis_eri_index(kept[i], kept[j], kept[k], kept[l])];
  cis_free(&I->h1e);
  cis_free(&I->eri);
  I->h1e = h;
  I->eri = eri;
  I->ecore = ecore;
  h = eri = NULL;
cleanup:
  cis_free(&h);
  cis_free(&eri);
  return err;
}

cis_err cis_orbitals_apply(cis_problem *p, int nfrozen, const int *active, int nactive) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  cis_integrals *I = &p->ints;
  cis_space_spec *sp = &p->space;
  int norb = I->norb, *kept = NULL, nk = 0, *sym = NULL;
  if (active && nactive <= 0) active = NULL;
  if (nfrozen < 0) nfrozen = active ? active[0] : 0;
  if (!(nfrozen <= norb))
    CIS_FAIL(CIS_ERR_USAGE, "--frozen %d: the input has %d orbitals", nfrozen,
            norb);
  if (!(nfrozen <= I->nalpha && nfrozen <= I->nbeta))
    CIS_FAIL(CIS_ERR_USAGE,
            "--frozen %d doubly occupies %d orbitals (%d electrons): the input has %d alpha and "
            "%d beta electrons", nfrozen, nfrozen, 2 * nfrozen, I->nalpha, I->nbeta);
  CIS_TRY(kept_orbitals(norb, nfrozen, active, nactive, &kept, &nk));
  if (!(I->nalpha - nfrozen <= nk && I->nbeta - nfrozen <= nk))
    CIS_FAIL(CIS_ERR_USAGE,
            "%d alpha and %d beta electrons above the %d frozen orbitals do not fit in the %d "
            "kept ones", I->nalpha - nfrozen, I->nbeta - nfrozen, nfrozen, nk);
  CIS_TRY(map_dets(&sp->ref_alpha, &sp->ref_beta, sp->nref_dets, norb, kept, nk, nfrozen,
                   "reference"));
  CIS_TRY(map_dets(&sp->det_alpha, &sp->det_beta, sp->ndets, norb, kept, nk, nfrozen, "list"));
  if (I->orbsym) {
    CIS_TRY(cis_malloc(&sym, (size_t)nk, sizeof *sym, "kept orbital symmetries"));
    for (int i = 0; i < nk; i++) sym[i] = I->orbsym[kept[i]];
    cis_free(&I->orbsym);
    I->orbsym = sym;
    sym = NULL;
  }
  p->window.ecore_input = I->ecore;
  CIS_TRY(fold_integrals(I, nfrozen, kept, nk));
  I->norb = nk;
  I->nalpha -= nfrozen;
  I->nbeta -= nfrozen;
  p->window.applied = 1;
  p->window.norb_input = norb;
  p->window.nfrozen = nfrozen;
  cis_free(&p->window.kept);
  p->window.kept = kept;
  kept = NULL;
cleanup:
  cis_free(&kept);
  cis_free(&sym);
  return err;
}
