/* Determinant spaces: FCI, truncated CI around one or more references, explicit lists.
 * The order rule (Reference region, then the Expansion Space) is documented in docs/format.md.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "hamiltonian/irrep.h"
#include "hamiltonian/slater.h"
#include "hamiltonian/space_impl.h"

#define CIS_MAX_DETS ((int64_t)0x7fffffff)

static int nthreads_of(int n) { return n > 0 ? n : omp_get_max_threads(); }

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static int64_t pair_key(int64_t ia, int64_t ib) { return (ia << 32) | ib; }

/* ---- host memory, counted before it is stored ------------------------------------------- */

/* A space's determinants take 48 bytes each while it is built (pair keys; the alpha-major
 * lookup; diagonal energies in alpha-major and in our order; the order; determinant indices)
 * and 24 once built (cis_space_bytes). */
#define DET_BYTES_BUILD 48.0
#define DET_BYTES_HELD 24.0

static double binom_d(int n, int k) {
  if (k < 0 || k > n) return 0.0;
  double r = 1.0;
  for (int i = 1; i <= k; i++) r = r * (double)(n - k + i) / (double)i;
  return r;
}

/* Strings: their bits, symmetry labels and link pointers, the alpha-major row pointers and
 * the row generator's single groups of the beta strings (rowgen.h: 17 int32 at most). */
static double string_bytes(int nw, double na, double nb) {
  return (na + nb) * (8.0 * nw + 8.0 + 16.0) + 8.0 * (na + 1.0) + 68.0 * nb;
}

/* The link tables of one FCI string of nel electrons (rowgen.h): every single (24 bytes) and
 * every same-spin double (16, counted before the vanishing ones are closed up). */
static double fci_link_bytes(int norb, int nel) {
  int nvir = norb - nel;
  return 24.0 * nel * nvir + 16.0 * binom_d(nel, 2) * binom_d(nvir, 2);
}

/* FCI's bytes with n of its determinants kept (fewer than all: one irrep's). */
static double fci_bytes_of(int norb, int nalpha, int nbeta, double n) {
  double na = binom_d(norb, nalpha), nb = binom_d(norb, nbeta);
  double links = na * fci_link_bytes(norb, nalpha) + nb * fci_link_bytes(norb, nbeta);
  return string_bytes(cis_nwords(norb), na, nb) +
         CIS_MAX(DET_BYTES_BUILD * n, DET_BYTES_HELD * n + links);
}

double cis_space_fci_bytes(int norb, int nalpha, int nbeta) {
  return fci_bytes_of(norb, nalpha, nbeta, binom_d(norb, nalpha) * binom_d(norb, nbeta));
}

cis_err cis_space_check_room(const cis_space *s, double need, const char *what,
                             const char *parts) {
  double avail;
  const char *bound = "the caller's limit";
  if (s->host_mem > 0) {
    avail = (double)s->host_mem;
  } else if (!cis_host_mem_room(&avail, &bound)) {
    return CIS_OK;
  }
  char b1[32], b2[32];
  CIS_CHECK(need <= avail, CIS_ERR_NOMEM,
            "%s needs %s of host memory for %s; %s available (%s)", what,
            cis_format_bytes(need, b1, sizeof b1), parts, cis_format_bytes(avail, b2, sizeof b2),
            bound);
  return CIS_OK;
}

/* FCI's strings, determinants and link tables, from binomials (the lists within 2^31-1). */
static cis_err check_room_fci(const cis_space *s) {
  double n = s->irrep ? s->irrep_dim[s->irrep - 1]
                     : binom_d(s->norb, s->nalpha) * binom_d(s->norb, s->nbeta);
  char what[160];
  snprintf(what, sizeof what, "%s of %.0f determinants", s->desc, n);
  return cis_space_check_room(s, fci_bytes_of(s->norb, s->nalpha, s->nbeta, n), what,
                              "its determinant strings and link tables");
}

/* A truncated space's strings, as enumerated around nr references (repeats included). */
cis_err cis_space_check_strings(const cis_space *s, int level, int64_t nra, int64_t nrb) {
  double raw[2];
  int nel[2] = {s->nalpha, s->nbeta};
  int64_t nr[2] = {nra, nrb};
  for (int x = 0; x < 2; x++) {
    raw[x] = 0.0;
    for (int h = 0; h <= level; h++) raw[x] += binom_d(nel[x], h) * binom_d(s->norb - nel[x], h);
    raw[x] *= (double)nr[x];
    if (raw[x] > (double)CIS_MAX_DETS) return CIS_OK; /* refused as more than 2^31-1 strings */
  }
  char what[200];
  snprintf(what, sizeof what, "%s with %.0f alpha and %.0f beta strings", s->desc, raw[0],
           raw[1]);
  return cis_space_check_room(s, string_bytes(s->nw, raw[0], raw[1]), what, "its strings");
}

/* A truncated space or a list of (at most, `bound`) ndet determinants over na and nb strings
 * (the link tables are checked when the row generator has counted them: rowgen.c). */
cis_err cis_space_check_dets(const cis_space *s, int64_t na, int64_t nb, int64_t ndet,
                             int bound) {
  char what[160];
  snprintf(what, sizeof what, "%s of %s%lld determinants", s->desc, bound ? "at most " : "",
           (long long)ndet);
  double need = string_bytes(s->nw, (double)na, (double)nb) +
                DET_BYTES_BUILD * (double)ndet;
  return cis_space_check_room(s, need, what, "its determinant strings");
}

/* Electron counts and orbitals beyond norb of one determinant given by the user. */
static cis_err check_det(const cis_space *s, const uint64_t *a, const uint64_t *b,
                         const char *what, int64_t idx) {
  int nw = s->nw, tail = s->norb % 64;
  uint64_t extra_a = tail ? a[nw - 1] >> tail : 0, extra_b = tail ? b[nw - 1] >> tail : 0;
  CIS_CHECK(!extra_a && !extra_b, CIS_ERR_INPUT,
            "%s determinant %ld occupies an orbital beyond norb = %d", what, (long)idx, s->norb);
  int na = cis_str_popcount(a, nw), nb = cis_str_popcount(b, nw);
  CIS_CHECK(na == s->nalpha && nb == s->nbeta, CIS_ERR_INPUT,
            "%s determinant %ld has %d alpha and %d beta electrons, expected %d and %d", what,
            (long)idx, na, nb, s->nalpha, s->nbeta);
  return CIS_OK;
}

/* The references: spec's, or the aufbau determinant. Caller frees *ra, *rb. */
static cis_err get_refs(const cis_space *s, const cis_space_spec *spec, int64_t *nr,
                        uint64_t **ra, uint64_t **rb) {
  int nw = s->nw;
  *nr = spec->nref_dets > 0 && spec->ref_alpha && spec->ref_beta ? spec->nref_dets : 1;
  CIS_CALL(cis_calloc(ra, (size_t)(*nr * nw), sizeof(uint64_t), "reference alpha strings"));
  CIS_CALL(cis_calloc(rb, (size_t)(*nr * nw), sizeof(uint64_t), "reference beta strings"));
  if (*nr == spec->nref_dets && spec->ref_alpha) {
    memcpy(*ra, spec->ref_alpha, sizeof(uint64_t) * (size_t)(*nr * nw));
    memcpy(*rb, spec->ref_beta, sizeof(uint64_t) * (size_t)(*nr * nw));
    for (int64_t r = 0; r < *nr; r++)
      CIS_CALL(check_det(s, *ra + r * nw, *rb + r * nw, "reference", r));
  } else {
    for (int p = 0; p < s->nalpha; p++) cis_str_set(*ra, p);
    for (int p = 0; p < s->nbeta; p++) cis_str_set(*rb, p);
  }
  return CIS_OK;
}

/* Alpha-major sorted pair keys of a truncated space (union over references). */
static cis_err truncated_pairs(cis_space *s, int level, int64_t nr, const uint64_t *ra,
                               const uint64_t *rb, int64_t **keys, int64_t *nkeys) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  int nw = s->nw;
  int64_t na = s->astr.n, nb = s->bstr.n, total = 0, n = 0;
  int64_t *bstart = NULL, *border = NULL, *pos = NULL;
  int *la = NULL;
  CIS_TRY(cis_malloc(&bstart, (size_t)level + 2, sizeof(int64_t), "beta level buckets"));
  CIS_TRY(cis_malloc(&pos, (size_t)level + 2, sizeof(int64_t), "beta level buckets"));
  CIS_TRY(cis_malloc(&border, (size_t)nb, sizeof(int64_t), "beta level order"));
  CIS_TRY(cis_malloc(&la, (size_t)na, sizeof(int), "alpha levels"));
  for (int pass = 0; pass < 2; pass++) {
    for (int64_t r = 0; r < nr; r++) {
      /* Bucket the beta strings by their level relative to reference r. */
      memset(bstart, 0, sizeof(int64_t) * (size_t)(level + 2));
      for (int64_t ib = 0; ib < nb; ib++) {
        int l = cis_str_excitation(cis_strlist_at(&s->bstr, ib), rb + r * nw, nw);
        if (l <= level) bstart[l + 1]++;
      }
      for (int l = 0; l <= level; l++) bstart[l + 1] += bstart[l];
      memcpy(pos, bstart, sizeof(int64_t) * (size_t)(level + 1));
      for (int64_t ib = 0; ib < nb; ib++) {
        int l = cis_str_excitation(cis_strlist_at(&s->bstr, ib), rb + r * nw, nw);
        if (l <= level) border[pos[l]++] = ib;
      }
      for (int64_t ia = 0; ia < na; ia++) {
        la[ia] = cis_str_excitation(cis_strlist_at(&s->astr, ia), ra + r * nw, nw);
        if (la[ia] > level) continue;
        int64_t cnt = bstart[level - la[ia] + 1];
        if (pass == 0) { /* refused as soon as it passes the limit: the sum cannot wrap */
          total += cnt;
          if (total > 4 * CIS_MAX_DETS)
            CIS_FAIL(CIS_ERR_INPUT, "the truncated space has more than 2^31-1 determinants");
          continue;
        }
        for (int64_t t = 0; t < cnt; t++) (*keys)[n++] = pair_key(ia, border[t]);
      }
    }
    if (pass == 0) {
      CIS_TRY(cis_space_check_dets(s, na, nb, total, nr > 1));
      CIS_TRY(cis_malloc(keys, (size_t)total, sizeof(int64_t), "determinant keys"));
    }
  }
  qsort(*keys, (size_t)n, sizeof(int64_t), cmp_i64);
  int64_t m = 0;
  for (int64_t i = 0; i < n; i++)
    if (m == 0 || (*keys)[i] != (*keys)[m - 1]) (*keys)[m++] = (*keys)[i];
  *nkeys = m;
cleanup:
  cis_free(&bstart);
  cis_free(&pos);
  cis_free(&border);
  cis_free(&la);
  return err;
}

typedef struct {
  int64_t key, idx;
} keyed;
static int cmp_keyed(const void *a, const void *b) {
  const keyed *x = a, *y = b;
  if (x->key != y->key) return (x->key > y->key) - (x->key < y->key);
  return (x->idx > y->idx) - (x->idx < y->idx);
}

/* Strings and sorted pair keys of an explicit list; duplicates are an input error. */
static cis_err list_pairs(cis_space *s, const cis_space_spec *spec, int64_t **keys,
                          int64_t *nkeys) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  int nw = s->nw;
  int64_t n = spec->ndets;
  keyed *kd = NULL;
  if (n <= 0 || !spec->det_alpha || !spec->det_beta)
    CIS_FAIL(CIS_ERR_INPUT, "the determinant list is empty");
  if (n > CIS_MAX_DETS) CIS_FAIL(CIS_ERR_INPUT, "more than 2^31-1 determinants in the list");
  for (int64_t i = 0; i < n; i++)
    CIS_TRY(check_det(s, spec->det_alpha + i * nw, spec->det_beta + i * nw, "list", i));
  CIS_TRY(cis_space_check_dets(s, n, n, n, 0)); /* the strings' copies, before repeats go */
  CIS_TRY(cis_malloc(&s->astr.bits, (size_t)(n * nw), sizeof(uint64_t), "alpha strings"));
  CIS_TRY(cis_malloc(&s->bstr.bits, (size_t)(n * nw), sizeof(uint64_t), "beta strings"));
  memcpy(s->astr.bits, spec->det_alpha, sizeof(uint64_t) * (size_t)(n * nw));
  memcpy(s->bstr.bits, spec->det_beta, sizeof(uint64_t) * (size_t)(n * nw));
  s->astr.n = s->bstr.n = n;
  s->astr.nw = s->bstr.nw = nw;
  cis_strlist_sort_unique(&s->astr);
  cis_strlist_sort_unique(&s->bstr);
  CIS_TRY(cis_malloc(&kd, (size_t)n, sizeof(keyed), "determinant keys"));
  for (int64_t i = 0; i < n; i++) {
    int64_t ia = cis_strlist_find(&s->astr, spec->det_alpha + i * nw);
    int64_t ib = cis_strlist_find(&s->bstr, spec->det_beta + i * nw);
    kd[i].key = pair_key(ia, ib);
    kd[i].idx = i;
  }
  qsort(kd, (size_t)n, sizeof(keyed), cmp_keyed);
  for (int64_t i = 1; i < n; i++)
    if (kd[i].key == kd[i - 1].key)
      CIS_FAIL(CIS_ERR_INPUT, "list determinant %ld repeats determinant %ld", (long)kd[i].idx,
               (long)kd[i - 1].idx);
  CIS_TRY(cis_malloc(keys, (size_t)n, sizeof(int64_t), "determinant keys"));
  for (int64_t i = 0; i < n; i++) (*keys)[i] = kd[i].key;
  *nkeys = n;
cleanup:
  cis_free(&kd);
  return err;
}

/* FCI's determinants of the target irrep: for each alpha string, the beta strings of the
 * matching irrep (the row generator and the lookup serve such rows as truncated CI's). */
static cis_err fci_irrep_pairs(cis_space *s, int64_t **keys, int64_t *nkeys) {
  unsigned char *ga = NULL, *gb = NULL;
  int g = s->irrep - 1;
  int64_t n = (int64_t)s->irrep_dim[g], m = 0;
  cis_err err = cis_space_irrep_strings(s, &ga, &gb);
  if (err == CIS_OK)
    err = cis_malloc(keys, (size_t)CIS_MAX(n, 1), sizeof(int64_t), "determinant keys");
  for (int64_t ia = 0; err == CIS_OK && ia < s->astr.n; ia++)
    for (int64_t ib = 0; ib < s->bstr.n; ib++)
      if ((ga[ia] ^ gb[ib]) == g && m < n) (*keys)[m++] = pair_key(ia, ib);
  cis_free(&ga);
  cis_free(&gb);
  *nkeys = m;
  return err;
}

/* String lists and alpha-major pair keys for every kind of space. */
static cis_err make_pairs(cis_space *s, const cis_space_spec *spec, int64_t nr,
                          const uint64_t *ra, const uint64_t *rb, int64_t **keys,
                          int64_t *nkeys, int nt) {
  if (spec->kind == CIS_SPACE_LIST) return list_pairs(s, spec, keys, nkeys);
  if (spec->kind == CIS_SPACE_MRCI)
    return cis_space_mrci_pairs(s, CIS_MIN(spec->level, s->nalpha + s->nbeta), nr, ra, rb, nt,
                                keys, nkeys);
  if (spec->kind == CIS_SPACE_FCI) {
    int64_t ca = cis_binomial(s->norb, s->nalpha), cb = cis_binomial(s->norb, s->nbeta);
    /* counted before anything is stored: lists past 2^31-1 strings are refused by
     * cis_strlist_all, their product here, then what it all takes */
    if (ca >= 0 && cb >= 0 && ca <= CIS_MAX_DETS && cb <= CIS_MAX_DETS) {
      CIS_CHECK((s->irrep ? s->irrep_dim[s->irrep - 1] : (double)ca * (double)cb) <=
                    (double)CIS_MAX_DETS, CIS_ERR_INPUT,
                "FCI of (%d, %d) electrons in %d orbitals has %ld x %ld%s > 2^31-1 "
                "determinants", s->nalpha, s->nbeta, s->norb, (long)ca, (long)cb,
                s->irrep ? " (its target irrep's share of them)" : "");
      CIS_CALL(check_room_fci(s));
    }
    CIS_CALL(cis_strlist_all(s->norb, s->nalpha, &s->astr));
    CIS_CALL(cis_strlist_all(s->norb, s->nbeta, &s->bstr));
    int64_t na = s->astr.n, nb = s->bstr.n;
    if (s->irrep) return fci_irrep_pairs(s, keys, nkeys);
    CIS_CALL(cis_malloc(keys, (size_t)(na * nb), sizeof(int64_t), "determinant keys"));
    for (int64_t ia = 0; ia < na; ia++)
      for (int64_t ib = 0; ib < nb; ib++) (*keys)[ia * nb + ib] = pair_key(ia, ib);
    *nkeys = na * nb;
    return CIS_OK;
  }
  CIS_CHECK(spec->kind == CIS_SPACE_TRUNCATED, CIS_ERR_INPUT, "unknown space kind %d",
            (int)spec->kind);
  CIS_CHECK(spec->level >= 0, CIS_ERR_INPUT, "excitation level %d is negative", spec->level);
  int level = CIS_MIN(spec->level, s->nalpha + s->nbeta);
  s->astr.nw = s->bstr.nw = s->nw;
  CIS_CALL(cis_space_check_strings(s, level, nr, nr));
  for (int64_t r = 0; r < nr; r++) {
    CIS_CALL(cis_strlist_append_within(s->norb, ra + r * s->nw, level, &s->astr));
    CIS_CALL(cis_strlist_append_within(s->norb, rb + r * s->nw, level, &s->bstr));
  }
  cis_strlist_sort_unique(&s->astr);
  cis_strlist_sort_unique(&s->bstr);
  CIS_CALL(truncated_pairs(s, level, nr, ra, rb, keys, nkeys));
  CIS_CHECK(*nkeys <= CIS_MAX_DETS, CIS_ERR_INPUT, "more than 2^31-1 determinants");
  return CIS_OK;
}

/* Diagonal energies in alpha-major order (position k of the lookup). */
static cis_err diag_alpha_major(const cis_space *s, const cis_integrals *ints, double *hd,
                                int nt) {
  cis_sc sc;
  CIS_CALL(cis_sc_init(ints, &sc));
  int norb = s->norb, fail = 0;
  double *eb = NULL;
  if (cis_malloc(&eb, (size_t)s->bstr.n, sizeof(double), "beta string energies")) {
    cis_sc_free(&sc);
    return cis_error_code();
  }
#pragma omp parallel num_threads(nt)
  {
    int occ[2 * CIS_MAX_NORB], *occb = occ + CIS_MAX_NORB;
    double *jrow = malloc(sizeof(double) * (size_t)norb);
    if (!jrow) {
#pragma omp atomic write
      fail = 1;
    }
#pragma omp for schedule(static)
    for (int64_t ib = 0; ib < s->bstr.n; ib++) {
      int n = cis_str_occ(cis_strlist_at(&s->bstr, ib), s->nw, occb);
      eb[ib] = cis_sc_string_energy(&sc, occb, n);
    }
#pragma omp for schedule(dynamic, 16)
    for (int64_t ia = 0; ia < s->astr.n; ia++) {
      if (!jrow) continue;
      int n = cis_str_occ(cis_strlist_at(&s->astr, ia), s->nw, occ);
      double ea = cis_sc_string_energy(&sc, occ, n);
      /* Coulomb field of the alpha electrons, shared by every beta string of this row. */
      for (int q = 0; q < norb; q++) {
        double v = 0.0;
        for (int x = 0; x < n; x++) v += sc.J[occ[x] * norb + q];
        jrow[q] = v;
      }
      for (int64_t k = s->aptr[ia]; k < s->aptr[ia + 1]; k++) {
        int32_t ib = s->amaj_ib[k];
        int m = cis_str_occ(cis_strlist_at(&s->bstr, ib), s->nw, occb);
        double e = ea + eb[ib];
        for (int y = 0; y < m; y++) e += jrow[occb[y]];
        hd[k] = e;
      }
    }
    free(jrow);
  }
  cis_free(&eb);
  cis_sc_free(&sc);
  CIS_CHECK(!fail, CIS_ERR_NOMEM, "out of host memory computing diagonal energies");
  return CIS_OK;
}

static cis_err check_electrons(const cis_integrals *ints) {
  CIS_CHECK(ints->norb >= 1 && ints->norb <= CIS_MAX_NORB, CIS_ERR_INPUT,
            "norb = %d: expected 1 to %d orbitals", ints->norb, CIS_MAX_NORB);
  CIS_CHECK(ints->nalpha >= 0 && ints->nbeta >= 0, CIS_ERR_INPUT,
            "negative electron count (nalpha = %d, nbeta = %d)", ints->nalpha, ints->nbeta);
  CIS_CHECK(ints->nalpha <= ints->norb && ints->nbeta <= ints->norb, CIS_ERR_INPUT,
            "NELEC = %d with MS2 = %d needs %d alpha and %d beta electrons, more than the %d "
            "orbitals hold",
            ints->nalpha + ints->nbeta, ints->nalpha - ints->nbeta, ints->nalpha, ints->nbeta,
            ints->norb);
  return CIS_OK;
}

static void describe(cis_space *s, const cis_space_spec *spec) {
  static const char *names[] = {"CIS", "CISD", "CISDT", "CISDTQ"};
  if (spec->kind == CIS_SPACE_FCI)
    snprintf(s->desc, sizeof s->desc, "FCI");
  else if (spec->kind == CIS_SPACE_LIST)
    snprintf(s->desc, sizeof s->desc, "explicit list");
  else if (spec->kind == CIS_SPACE_MRCI && spec->cas_norb > 0)
    snprintf(s->desc, sizeof s->desc, "MRCI level %d around CAS(%d,%d)", spec->level,
             spec->cas_nelec, spec->cas_norb);
  else if (spec->kind == CIS_SPACE_MRCI)
    snprintf(s->desc, sizeof s->desc, "MRCI level %d around %lld model determinants",
             spec->level, (long long)spec->nref_dets);
  else if (spec->level >= 1 && spec->level <= 4)
    snprintf(s->desc, sizeof s->desc, "%s (level %d)", names[spec->level - 1], spec->level);
  else
    snprintf(s->desc, sizeof s->desc, "CI level %d", spec->level);
}

/* Alpha-major lookup from sorted keys; amaj_det is the identity until ordered. */
static cis_err make_lookup(cis_space *s, const int64_t *keys) {
  int64_t n = s->ndet, na = s->astr.n;
  CIS_CALL(cis_calloc(&s->aptr, (size_t)na + 1, sizeof(int64_t), "alpha-major row pointers"));
  CIS_CALL(cis_malloc(&s->amaj_ib, (size_t)n, sizeof(int32_t), "alpha-major beta indices"));
  CIS_CALL(cis_malloc(&s->amaj_det, (size_t)n, sizeof(int32_t), "alpha-major det indices"));
  for (int64_t k = 0; k < n; k++) {
    s->aptr[(keys[k] >> 32) + 1]++;
    s->amaj_ib[k] = (int32_t)(keys[k] & 0xffffffff);
    s->amaj_det[k] = (int32_t)k;
  }
  for (int64_t ia = 0; ia < na; ia++) s->aptr[ia + 1] += s->aptr[ia];
  return CIS_OK;
}

/* Put determinants in our order; hd is in alpha-major order. */
static cis_err apply_order(cis_space *s, const int64_t *order, const double *hd,
                           const int64_t *keys, int nt) {
  int64_t n = s->ndet;
  CIS_CALL(cis_malloc(&s->det_ia, (size_t)n, sizeof(int32_t), "determinant alpha indices"));
  CIS_CALL(cis_malloc(&s->det_ib, (size_t)n, sizeof(int32_t), "determinant beta indices"));
  CIS_CALL(cis_malloc(&s->hdiag, (size_t)n, sizeof(double), "diagonal energies"));
  /* order is a permutation: every d writes its own amaj_det[k] */
#pragma omp parallel for schedule(static) num_threads(nt) if (n > 65536)
  for (int64_t d = 0; d < n; d++) {
    int64_t k = order[d];
    s->det_ia[d] = (int32_t)(keys[k] >> 32);
    s->det_ib[d] = (int32_t)(keys[k] & 0xffffffff);
    s->hdiag[d] = hd[k];
    s->amaj_det[k] = (int32_t)d;
  }
  return CIS_OK;
}

/* The integrals' symmetries and the label of every string. */
static cis_err string_labels(cis_space *s, const cis_integrals *ints) {
  CIS_CALL(cis_orbsym_find(ints, &s->sym));
  CIS_CALL(cis_malloc(&s->alab, (size_t)s->astr.n, sizeof *s->alab, "alpha string labels"));
  CIS_CALL(cis_malloc(&s->blab, (size_t)s->bstr.n, sizeof *s->blab, "beta string labels"));
  for (int64_t i = 0; i < s->astr.n; i++)
    s->alab[i] = cis_orbsym_string(&s->sym, cis_strlist_at(&s->astr, i), s->nw);
  for (int64_t i = 0; i < s->bstr.n; i++)
    s->blab[i] = cis_orbsym_string(&s->sym, cis_strlist_at(&s->bstr, i), s->nw);
  return CIS_OK;
}

static cis_err find_refs(const cis_space *s, int64_t nr, const uint64_t *ra, const uint64_t *rb,
                         const cis_space_spec *spec, int64_t *refpos) {
  for (int64_t r = 0; r < nr; r++) {
    int64_t ia = cis_strlist_find(&s->astr, ra + r * s->nw);
    int64_t ib = cis_strlist_find(&s->bstr, rb + r * s->nw);
    refpos[r] = (ia < 0 || ib < 0) ? -1 : cis_space_lookup(s, ia, (int32_t)ib);
    int given = spec->nref_dets > 0 && spec->ref_alpha;
    /* a reference of another irrep than the target's defines the space without being in it */
    if (s->irrep && refpos[r] < 0 &&
        (cis_irrep_string(s->orbsym, ra + r * s->nw, s->nw) ^
         cis_irrep_string(s->orbsym, rb + r * s->nw, s->nw)) != s->irrep - 1)
      given = 0;
    CIS_CHECK(refpos[r] >= 0 || !given, CIS_ERR_INPUT,
              "reference determinant %ld is not in the %s space", (long)r, s->desc);
  }
  return CIS_OK;
}

cis_err cis_space_build(const cis_integrals *ints, const cis_space_spec *spec,
                        const cis_space_opts *opts, cis_space **out) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  cis_space *s = NULL;
  uint64_t *ra = NULL, *rb = NULL;
  int64_t *keys = NULL, *order = NULL, *refpos = NULL, nr = 0, nkeys = 0;
  double *hd = NULL;
  *out = NULL;
  CIS_TRY(check_electrons(ints));
  CIS_TRY(cis_calloc(&s, 1, sizeof *s, "space"));
  s->norb = ints->norb;
  s->nw = cis_nwords(ints->norb);
  s->nalpha = ints->nalpha;
  s->nbeta = ints->nbeta;
  s->host_mem = opts ? opts->host_mem : 0;
  describe(s, spec);
  if (spec->kind == CIS_SPACE_MRCI) {
    CIS_TRY(cis_space_mrci_model(s, spec, &nr, &ra, &rb));
    s->ref_exact = 1;
  } else {
    CIS_TRY(get_refs(s, spec, &nr, &ra, &rb));
  }
  CIS_TRY(cis_space_irrep_setup(s, ints, spec));
  CIS_TRY(make_pairs(s, spec, nr, ra, rb, &keys, &nkeys, nthreads_of(opts ? opts->nthreads : 0)));
  if (spec->kind != CIS_SPACE_FCI) CIS_TRY(cis_space_irrep_filter(s, keys, &nkeys));
  if (nkeys <= 0 && s->irrep)
    CIS_FAIL(CIS_ERR_INPUT, "the %s space has no determinant of irrep %d", s->desc, s->irrep);
  if (nkeys <= 0) CIS_FAIL(CIS_ERR_INPUT, "the %s space is empty", s->desc);
  s->ndet = nkeys;
  CIS_TRY(make_lookup(s, keys));
  CIS_TRY(cis_malloc(&hd, (size_t)nkeys, sizeof(double), "diagonal energies"));
  CIS_TRY(diag_alpha_major(s, ints, hd, nthreads_of(opts ? opts->nthreads : 0)));
  CIS_TRY(cis_malloc(&refpos, (size_t)nr, sizeof(int64_t), "reference positions"));
  CIS_TRY(find_refs(s, nr, ra, rb, spec, refpos));
  int64_t want = opts && opts->ref_size > 0 ? opts->ref_size : CIS_REF_AUTO_MAX;
  s->nref = CIS_MIN(want, s->ndet);
  CIS_TRY(string_labels(s, ints));
  CIS_TRY(cis_malloc(&order, (size_t)nkeys, sizeof(int64_t), "determinant order"));
  CIS_TRY(cis_space_order(s, hd, keys, refpos, nr, order));
  CIS_TRY(apply_order(s, order, hd, keys, nthreads_of(opts ? opts->nthreads : 0)));
  CIS_TRY(cis_space_ref_symmetry(s));
  *out = s;
  s = NULL;
cleanup:
  cis_free(&ra);
  cis_free(&rb);
  cis_free(&keys);
  cis_free(&order);
  cis_free(&refpos);
  cis_free(&hd);
  cis_space_destroy(&s);
  return err;
}

cis_err cis_space_set_integrals(cis_space *s, const cis_integrals *ints, int nthreads) {
  CIS_CHECK(ints->norb == s->norb && ints->nalpha == s->nalpha && ints->nbeta == s->nbeta,
            CIS_ERR_INTERNAL, "integrals of %d orbitals, %d+%d electrons for a space of %d, %d+%d",
            ints->norb, ints->nalpha, ints->nbeta, s->norb, s->nalpha, s->nbeta);
  double *hd = NULL;
  CIS_CALL(cis_malloc(&hd, (size_t)s->ndet, sizeof *hd, "diagonal energies"));
  cis_err err = diag_alpha_major(s, ints, hd, nthreads_of(nthreads));
  if (err == CIS_OK)
#pragma omp parallel for schedule(static) num_threads(nthreads_of(nthreads)) if (s->ndet > 65536)
    for (int64_t k = 0; k < s->ndet; k++) s->hdiag[s->amaj_det[k]] = hd[k];
  cis_free(&hd);
  CIS_CALL(err);
  cis_orbsym_free(&s->sym);
  cis_free(&s->alab);
  cis_free(&s->blab);
  cis_free(&s->ref_label);
  cis_free(&s->ref_partner);
  CIS_CALL(string_labels(s, ints));
  CIS_CALL(cis_space_ref_symmetry(s));
  return CIS_OK;
}

void cis_space_destroy(cis_space **sp) {
  if (!sp || !*sp) return;
  cis_space *s = *sp;
  cis_strlist_free(&s->astr);
  cis_strlist_free(&s->bstr);
  cis_free(&s->det_ia);
  cis_free(&s->det_ib);
  cis_free(&s->aptr);
  cis_free(&s->amaj_ib);
  cis_free(&s->amaj_det);
  cis_free(&s->hdiag);
  cis_orbsym_free(&s->sym);
  cis_free(&s->alab);
  cis_free(&s->blab);
  cis_free(&s->ref_label);
  cis_free(&s->ref_partner);
  cis_free(&s->orbsym);
  cis_free(sp);
}

int64_t cis_space_ndet(const cis_space *s) { return s->ndet; }
int64_t cis_space_nref(const cis_space *s) { return s->nref; }
int cis_space_norb(const cis_space *s) { return s->norb; }
int cis_space_nwords(const cis_space *s) { return s->nw; }
int cis_space_nalpha(const cis_space *s) { return s->nalpha; }
int cis_space_nbeta(const cis_space *s) { return s->nbeta; }
const char *cis_space_describe(const cis_space *s) { return s->desc; }
int64_t cis_space_bytes(const cis_space *s) {
  int64_t strings = (s->astr.n + s->bstr.n) * (int64_t)s->nw * 8 + (s->astr.n + 1) * 8;
  return strings + s->ndet * (4 + 4 + 4 + 4 + 8); /* det_ia, det_ib, amaj_ib, amaj_det, hdiag */
}
const double *cis_space_hdiag(const cis_space *s) { return s->hdiag; }
const uint64_t *cis_space_ref_labels(const cis_space *s) { return s->ref_label; }
const int64_t *cis_space_ref_partners(const cis_space *s) { return s->ref_partner; }
cis_space_symmetry cis_space_symmetry_info(const cis_space *s) {
  cis_space_symmetry y = {s->sym.nbits, s->nblocks, s->nblocks_more, s->nblocks_ref,
                          (int)s->sym.orbsym, s->sym.orbsym_bits};
  return y;
}
const uint64_t *cis_space_alpha(const cis_space *s, int64_t i) {
  return cis_strlist_at(&s->astr, s->det_ia[i]);
}
const uint64_t *cis_space_beta(const cis_space *s, int64_t i) {
  return cis_strlist_at(&s->bstr, s->det_ib[i]);
}
const int32_t *cis_space_alpha_index(const cis_space *s) { return s->det_ia; }
const int32_t *cis_space_beta_index(const cis_space *s) { return s->det_ib; }

int64_t cis_space_find(const cis_space *s, const uint64_t *alpha, const uint64_t *beta) {
  int64_t ia = cis_strlist_find(&s->astr, alpha);
  int64_t ib = ia < 0 ? -1 : cis_strlist_find(&s->bstr, beta);
  return ib < 0 ? -1 : cis_space_lookup(s, ia, (int32_t)ib);
}

void cis_space_det_string(const cis_space *s, int64_t i, char *buf) {
  const uint64_t *a = cis_space_alpha(s, i), *b = cis_space_beta(s, i);
  for (int p = 0; p < s->norb; p++) {
    int x = cis_str_test(a, p), y = cis_str_test(b, p);
    buf[p] = x && y ? '2' : x ? 'a' : y ? 'b' : '0';
  }
  buf[s->norb] = '\0';
}

static int64_t g_s2_table_limit = (int64_t)1 << 24;

void cis_space_set_s2_table_limit(int64_t entries) { g_s2_table_limit = entries; }

/* Targets of every string's single excitations within its list: t[(I * norb + i) * norb + a]
 * is the index of a_a^+ a_i |I> (i occupied, a empty), else -1. NULL (callers then search the
 * list) when the table would pass g_s2_table_limit entries or memory is short. */
static int32_t *single_targets(const cis_strlist *l, int norb) {
  int64_t per = (int64_t)norb * norb;
  if (l->n * per > g_s2_table_limit) return NULL;
  int32_t *t = malloc((size_t)(l->n * per) * sizeof *t);
  if (!t) return NULL;
  int fail = 0;
#pragma omp parallel
  {
    uint64_t *w = malloc(sizeof(uint64_t) * (size_t)l->nw);
#pragma omp for schedule(static)
    for (int64_t I = 0; I < l->n; I++) {
      const uint64_t *str = cis_strlist_at(l, I);
      int32_t *row = t + I * per;
      for (int i = 0; i < norb; i++)
        for (int x = 0; x < norb; x++) {
          row[i * norb + x] = -1;
          if (!w || !cis_str_test(str, i) || cis_str_test(str, x)) continue;
          memcpy(w, str, sizeof(uint64_t) * (size_t)l->nw);
          cis_str_clear(w, i);
          cis_str_set(w, x);
          row[i * norb + x] = (int32_t)cis_strlist_find(l, w);
        }
    }
    if (!w) {
#pragma omp atomic write
      fail = 1;
    }
    free(w);
  }
  if (fail) {
    free(t);
    return NULL;
  }
  return t;
}

void cis_s2_targets_make(const cis_space *s, cis_s2_targets *t) {
  t->alpha = single_targets(&s->astr, s->norb);
  t->beta = single_targets(&s->bstr, s->norb);
}

void cis_s2_targets_free(cis_s2_targets *t) {
  free(t->alpha);
  free(t->beta);
  t->alpha = t->beta = NULL;
}

/* The string q -> p of string I of l: from the table ta when there is one, else by search. */
static int64_t excite(const cis_strlist *l, const int32_t *ta, int norb, int64_t I, int q, int p,
                      uint64_t *w) {
  if (ta) return ta[(I * norb + q) * norb + p];
  memcpy(w, cis_strlist_at(l, I), sizeof(uint64_t) * (size_t)l->nw);
  cis_str_clear(w, q);
  cis_str_set(w, p);
  return cis_strlist_find(l, w);
}

int64_t cis_space_s2_row(const cis_space *s, const cis_s2_targets *t, int64_t d, int64_t *col,
                         double *val, uint64_t *w) {
  const uint64_t *a = cis_space_alpha(s, d), *b = cis_space_beta(s, d);
  int64_t ia = s->det_ia[d], ib = s->det_ib[d];
  double sz = 0.5 * (s->nalpha - s->nbeta);
  int open_b = 0; /* beta electrons whose orbital has no alpha electron */
  for (int x = 0; x < s->nw; x++) open_b += __builtin_popcountll(b[x] & ~a[x]);
  col[0] = d;
  val[0] = sz * (sz + 1.0) + open_b;
  int64_t c = 1;
  /* S_- S_+ moves an alpha electron q -> p and a beta electron p -> q (p in beta only, q in
   * alpha only), with element -s_alpha(q->p) s_beta(p->q) */
  for (int p = 0; p < s->norb; p++) {
    if (!cis_str_test(b, p) || cis_str_test(a, p)) continue;
    for (int q = 0; q < s->norb; q++) {
      if (!cis_str_test(a, q) || cis_str_test(b, q)) continue;
      int64_t ja = excite(&s->astr, t->alpha, s->norb, ia, q, p, w);
      int64_t jb = ja < 0 ? -1 : excite(&s->bstr, t->beta, s->norb, ib, p, q, w);
      int64_t j = jb < 0 ? -1 : cis_space_lookup(s, ja, (int32_t)jb);
      if (j < 0) continue;
      col[c] = j;
      val[c++] = -cis_str_sign(a, q, p) * cis_str_sign(b, p, q);
    }
  }
  return c;
}

cis_err cis_space_s2(const cis_space *s, int k, const double *C, double *s2) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  double *num = NULL, *nrm = NULL;
  cis_s2_targets t = {NULL, NULL};
  int64_t n = s->ndet, m = 1 + (int64_t)s->nalpha * s->nbeta;
  int nw = s->nw, fail = 0;
  CIS_TRY(cis_calloc(&num, (size_t)k, sizeof(double), "S^2 numerators"));
  CIS_TRY(cis_calloc(&nrm, (size_t)k, sizeof(double), "S^2 norms"));
  /* where the strings' single excitations lead, looked up once per string rather than once
   * per determinant (H2O/6-31G FCI: 1.66e6 determinants, 1287 strings) */
  cis_s2_targets_make(s, &t);
#pragma omp parallel
  {
    double *acc = calloc((size_t)k * 3 + (size_t)m, sizeof(double)), *mynum = acc + k,
           *mynrm = acc + 2 * k, *val = acc + 3 * k;
    int64_t *col = malloc(sizeof(int64_t) * (size_t)m);
    uint64_t *w = malloc(sizeof(uint64_t) * (size_t)nw);
    if (!acc || !col || !w) {
#pragma omp atomic write
      fail = 1;
    }
#pragma omp for schedule(dynamic, 64)
    for (int64_t d = 0; d < n; d++) {
      if (!acc || !col || !w) continue;
      int64_t c = cis_space_s2_row(s, &t, d, col, val, w);
      for (int v = 0; v < k; v++) {
        acc[v] = 0.0;
        for (int64_t x = 0; x < c; x++) acc[v] += val[x] * C[v * n + col[x]];
        mynum[v] += C[v * n + d] * acc[v];
        mynrm[v] += C[v * n + d] * C[v * n + d];
      }
    }
#pragma omp critical
    for (int v = 0; acc && v < k; v++) {
      num[v] += mynum[v];
      nrm[v] += mynrm[v];
    }
    free(acc);
    free(col);
    free(w);
  }
  if (fail) CIS_FAIL(CIS_ERR_NOMEM, "out of host memory computing <S^2>");
  for (int v = 0; v < k; v++) s2[v] = nrm[v] > 0 ? num[v] / nrm[v] : 0.0;
cleanup:
  cis_s2_targets_free(&t);
  cis_free(&num);
  cis_free(&nrm);
  return err;
}
