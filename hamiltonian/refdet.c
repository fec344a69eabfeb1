/* The reference determinant of truncated CI (hamiltonian/refdet.h). */
#include "hamiltonian/refdet.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "hamiltonian/strings.h"

static double J(const cis_integrals *I, int p, int q) {
  return I->eri[cis_eri_index(p, p, q, q)];
}
static double K(const cis_integrals *I, int p, int q) {
  return I->eri[cis_eri_index(p, q, q, p)];
}

double cis_refdet_energy(const cis_integrals *I, const uint64_t *a, const uint64_t *b) {
  int n = I->norb;
  double e = 0.0;
  for (int p = 0; p < n; p++) {
    int pa = cis_str_test(a, p), pb = cis_str_test(b, p);
    if (!pa && !pb) continue;
    e += (pa + pb) * I->h1e[p * n + p];
    for (int q = 0; q < n; q++) {
      int qa = cis_str_test(a, q), qb = cis_str_test(b, q);
      double j = J(I, p, q), k = K(I, p, q);
      e += 0.5 * (pa * qa + pb * qb) * (j - k) + pa * qb * j;
    }
  }
  return e;
}

/* One spin's string of "0 1 2": orbitals set in s; count in *n. */
static cis_err parse_spin(const char *t, const char *end, const cis_integrals *I, uint64_t *s,
                          int *n, const char *full, const char *spin) {
  *n = 0;
  while (t < end) {
    while (t < end && (isspace((unsigned char)*t) || *t == ',')) t++;
    if (t >= end) break;
    char *e;
    errno = 0;
    long p = strtol(t, &e, 10);
    CIS_CHECK(e != t && e <= end && !errno, CIS_ERR_USAGE, "--ref-det '%s': %s orbitals: "
              "expected 0-based orbital numbers, found '%.*s'", full, spin, (int)(end - t), t);
    CIS_CHECK(p >= 0 && p < I->norb, CIS_ERR_USAGE, "--ref-det '%s': %s orbital %ld is outside "
              "0..%d (0-based, norb = %d)", full, spin, p, I->norb - 1, I->norb);
    CIS_CHECK(!cis_str_test(s, (int)p), CIS_ERR_USAGE, "--ref-det '%s': %s orbital %ld is "
              "given twice", full, spin, p);
    cis_str_set(s, (int)p);
    (*n)++;
    t = e;
  }
  return CIS_OK;
}

cis_err cis_refdet_parse(const char *text, const cis_integrals *I, uint64_t *a, uint64_t *b) {
  int nw = cis_nwords(I->norb), na, nb;
  memset(a, 0, sizeof *a * (size_t)nw);
  memset(b, 0, sizeof *b * (size_t)nw);
  const char *slash = strchr(text, '/');
  CIS_CHECK(slash && !strchr(slash + 1, '/'), CIS_ERR_USAGE, "--ref-det '%s': expected "
            "'ALPHA/BETA', 0-based occupied orbitals of each spin, e.g. '0 1 2 5/0 1 2 5'", text);
  CIS_CALL(parse_spin(text, slash, I, a, &na, text, "alpha"));
  CIS_CALL(parse_spin(slash + 1, slash + strlen(slash), I, b, &nb, text, "beta"));
  CIS_CHECK(na == I->nalpha && nb == I->nbeta, CIS_ERR_USAGE, "--ref-det '%s' has %d alpha and "
            "%d beta electrons; the run has %d and %d", text, na, nb, I->nalpha, I->nbeta);
  return CIS_OK;
}

/* Rule 2: OCC / CLOSED. Returns 1 when applied; else why says why not (when they are there). */
static int from_occ(const cis_integrals *I, uint64_t *a, uint64_t *b, char *why, size_t len) {
  if (!I->nocc && !I->nclosed) return 0;
  const int *oa = I->nocc ? I->occ : I->closed, *ob = I->nclosed ? I->closed : I->occ;
  int ng = I->nocc ? I->nocc : I->nclosed;
  if (!I->orbsym) {
    snprintf(why, len, "; OCC/CLOSED not used: no ORBSYM to place them");
    return 0;
  }
  int sa = 0, sb = 0;
  for (int g = 0; g < ng; g++) sa += oa[g];
  for (int g = 0; g < (I->nclosed ? I->nclosed : ng); g++) sb += ob[g];
  if (sa != I->nalpha || sb != I->nbeta) {
    snprintf(why, len, "; OCC/CLOSED not used: they place %d alpha and %d beta electrons, the "
             "run has %d and %d", sa, sb, I->nalpha, I->nbeta);
    return 0;
  }
  int seen[8] = {0}, nw = cis_nwords(I->norb);
  memset(a, 0, sizeof *a * (size_t)nw);
  memset(b, 0, sizeof *b * (size_t)nw);
  int placed_a = 0, placed_b = 0;
  for (int p = 0; p < I->norb; p++) {
    int g = I->orbsym[p] - 1;
    if (g < 0 || g >= 8) continue;
    if (g < ng && seen[g] < oa[g]) cis_str_set(a, p), placed_a++;
    if (g < (I->nclosed ? I->nclosed : ng) && seen[g] < ob[g]) cis_str_set(b, p), placed_b++;
    seen[g]++;
  }
  if (placed_a != sa || placed_b != sb) {
    snprintf(why, len, "; OCC/CLOSED not used: they ask for more orbitals of an irrep than "
             "ORBSYM has");
    return 0;
  }
  snprintf(why, len, "from OCC/CLOSED in the header");
  return 1;
}

/* The n lowest of f (ties: the lower orbital) into s. */
static void lowest(const double *f, int norb, int n, int *idx, uint64_t *s, int nw) {
  for (int p = 0; p < norb; p++) idx[p] = p;
  for (int i = 1; i < norb; i++) { /* insertion sort by f, stable */
    int x = idx[i], j = i - 1;
    for (; j >= 0 && f[idx[j]] > f[x]; j--) idx[j + 1] = idx[j];
    idx[j + 1] = x;
  }
  memset(s, 0, sizeof *s * (size_t)nw);
  for (int i = 0; i < n; i++) cis_str_set(s, idx[i]);
}

/* Rule 3: aufbau by diagonal Fock energies, to self-consistent occupations. */
static cis_err aufbau(const cis_integrals *I, uint64_t *a, uint64_t *b, int *cycled) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  int n = I->norb, nw = cis_nwords(n);
  double *fa = NULL, *fb = NULL, best = 0.0;
  int *idx = NULL;
  uint64_t *na = NULL, *nb = NULL, *ba = NULL, *bb = NULL;
  CIS_TRY(cis_malloc(&fa, (size_t)n, sizeof *fa, "orbital energies"));
  CIS_TRY(cis_malloc(&fb, (size_t)n, sizeof *fb, "orbital energies"));
  CIS_TRY(cis_malloc(&idx, (size_t)n, sizeof *idx, "orbital order"));
  CIS_TRY(cis_calloc(&na, (size_t)(4 * nw), sizeof *na, "trial determinants"));
  nb = na + nw;
  ba = nb + nw;
  bb = ba + nw;
  for (int p = 0; p < n; p++) fa[p] = I->h1e[p * n + p];
  lowest(fa, n, I->nalpha, idx, a, nw);
  lowest(fa, n, I->nbeta, idx, b, nw);
  *cycled = 1;
  for (int it = 0; it < 100; it++) {
    double e = cis_refdet_energy(I, a, b);
    if (it == 0 || e < best) {
      best = e;
      memcpy(ba, a, sizeof *a * (size_t)nw);
      memcpy(bb, b, sizeof *b * (size_t)nw);
    }
    for (int p = 0; p < n; p++) {
      double j = 0.0, ka = 0.0, kb = 0.0;
      for (int q = 0; q < n; q++) {
        int qa = cis_str_test(a, q), qb = cis_str_test(b, q);
        if (!qa && !qb) continue;
        j += (qa + qb) * J(I, p, q);
        if (qa) ka += K(I, p, q);
        if (qb) kb += K(I, p, q);
      }
      fa[p] = I->h1e[p * n + p] + j - ka;
      fb[p] = I->h1e[p * n + p] + j - kb;
    }
    lowest(fa, n, I->nalpha, idx, na, nw);
    lowest(fb, n, I->nbeta, idx, nb, nw);
    if (!cis_str_cmp(na, a, nw) && !cis_str_cmp(nb, b, nw)) {
      *cycled = 0;
      break;
    }
    memcpy(a, na, sizeof *a * (size_t)nw);
    memcpy(b, nb, sizeof *b * (size_t)nw);
  }
  if (*cycled) {
    memcpy(a, ba, sizeof *a * (size_t)nw);
    memcpy(b, bb, sizeof *b * (size_t)nw);
  }
cleanup:
  cis_free(&fa);
  cis_free(&fb);
  cis_free(&idx);
  cis_free(&na);
  return err;
}

cis_err cis_refdet_choose(const cis_integrals *I, uint64_t *a, uint64_t *b, char *why,
                          size_t len) {
  char occ_why[160] = "";
  if (from_occ(I, a, b, occ_why, sizeof occ_why)) {
    snprintf(why, len, "%s", occ_why);
    return CIS_OK;
  }
  int cycled = 0;
  CIS_CALL(aufbau(I, a, b, &cycled));
  snprintf(why, len, "aufbau by diagonal Fock energies%s%s",
           cycled ? " (the occupations cycled: the lowest diagonal energy visited)" : "",
           occ_why);
  return CIS_OK;
}

void cis_refdet_format(int norb, const uint64_t *a, const uint64_t *b, char *buf, size_t len) {
  size_t at = 0;
  for (int s = 0; s < 2; s++) {
    const uint64_t *x = s ? b : a;
    int first = 1;
    if (s && at + 1 < len) buf[at++] = '/';
    for (int p = 0; p < norb; p++) {
      if (!cis_str_test(x, p)) continue;
      char w[16];
      int k = snprintf(w, sizeof w, "%s%d", first ? "" : " ", p);
      first = 0;
      if (at + (size_t)k + 4 >= len) {
        snprintf(buf + CIS_MIN(at, len - 4), 4, "...");
        return;
      }
      memcpy(buf + at, w, (size_t)k);
      at += (size_t)k;
    }
  }
  buf[CIS_MIN(at, len - 1)] = '\0';
}
