/* MRCI spaces and the frozen-core window: the size of MRCI spaces around a CAS against the
 * combinatorial formula, membership around random model lists against brute force over FCI,
 * the Reference region (exactly the model space, by ascending diagonal energy), input errors;
 * the orbital lists of --active, the window's electrons, ORBSYM and determinants, and its
 * refusals. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/tools/expect.h"
#include "tests/tools/random_ints.h"
#include "base/util.h"
#include "hamiltonian/orbitals.h"
#include "hamiltonian/space.h"

static double binom(int n, int k) {
  if (k < 0 || k > n) return 0;
  double r = 1;
  for (int i = 1; i <= k; i++) r = r * (n - k + i) / i;
  return r;
}

/* Strings of nel electrons whose distance to the CAS's strings of that spin is exactly h: k of
 * the ncore core orbitals, m of the no active, the rest among the nv virtual ones; the distance
 * is nel - k - min(m, nact) (the CAS string nearest keeps the core and covers min(m, nact) of
 * the active electrons). */
static double cas_level_count(int ncore, int no, int nv, int nel, int nact, int h) {
  double c = 0;
  for (int k = 0; k <= ncore; k++)
    for (int m = 0; m <= no; m++) {
      int v = nel - k - m;
      if (v < 0 || v > nv) continue;
      if (nel - k - (m < nact ? m : nact) == h) c += binom(ncore, k) * binom(no, m) * binom(nv, v);
    }
  return c;
}

static int64_t mrci_cas_count(int norb, int na, int nb, int ne, int no, int N) {
  int ncore = (na + nb - ne) / 2, nv = norb - ncore - no;
  double c = 0;
  for (int i = 0; i <= N; i++)
    for (int j = 0; j <= N - i; j++)
      c += cas_level_count(ncore, no, nv, na, na - ncore, i) *
           cas_level_count(ncore, no, nv, nb, nb - ncore, j);
  return (int64_t)llround(c);
}

static void free_ints(cis_integrals *in) {
  free(in->h1e);
  free(in->eri);
  free(in->orbsym);
}

/* The Reference region holds exactly the nm model determinants, by ascending diagonal. */
static void check_region(const cis_space *s, int64_t nm, const uint64_t *ma, const uint64_t *mb,
                         int nw) {
  EXPECT(cis_space_nref(s) == nm, "Reference region %lld, model space %lld",
         (long long)cis_space_nref(s), (long long)nm);
  for (int64_t i = 0; i < nm; i++) {
    int64_t d = cis_space_find(s, ma + i * nw, mb + i * nw);
    EXPECT(d >= 0 && d < nm, "model determinant %lld at %lld", (long long)i, (long long)d);
  }
  const double *hd = cis_space_hdiag(s);
  for (int64_t i = 1; i < cis_space_nref(s); i++)
    EXPECT(hd[i - 1] <= hd[i], "Reference region not by ascending diagonal at %lld", (long long)i);
}

static void test_cas(int norb, int na, int nb, int ne, int no, int N) {
  cis_integrals in;
  random_ints(&in, norb, na, nb, 7);
  cis_space_spec spec = {.kind = CIS_SPACE_MRCI, .level = N, .cas_nelec = ne, .cas_norb = no};
  cis_space *s = NULL;
  if (cis_space_build(&in, &spec, NULL, &s)) {
    EXPECT(0, "CAS(%d,%d) MRCI level %d: %s", ne, no, N, cis_error_message());
    free_ints(&in);
    return;
  }
  int64_t want = mrci_cas_count(norb, na, nb, ne, no, N);
  int ncore = (na + nb - ne) / 2;
  int64_t nm = (int64_t)llround(binom(no, na - ncore) * binom(no, nb - ncore));
  printf("norb %d (%d,%d) CAS(%d,%d) level %d: %lld determinants, formula %lld; region %lld\n",
         norb, na, nb, ne, no, N, (long long)cis_space_ndet(s), (long long)want,
         (long long)cis_space_nref(s));
  EXPECT(cis_space_ndet(s) == want, "CAS(%d,%d) level %d count", ne, no, N);
  EXPECT(cis_space_nref(s) == nm, "CAS(%d,%d): region %lld, model %lld", ne, no,
         (long long)cis_space_nref(s), (long long)nm);
  const double *hd = cis_space_hdiag(s);
  for (int64_t i = 1; i < cis_space_nref(s); i++)
    EXPECT(hd[i - 1] <= hd[i], "region not ascending at %lld", (long long)i);
  cis_space_destroy(&s);
  free_ints(&in);
}

static int moved(const uint64_t *a, const uint64_t *b, uint64_t ma, uint64_t mb) {
  return __builtin_popcountll(a[0] & ~ma) + __builtin_popcountll(b[0] & ~mb);
}

static uint64_t random_string(int norb, int nel) {
  uint64_t s = 0;
  while (__builtin_popcountll(s) < nel) s |= (uint64_t)1 << (rand() % norb);
  return s;
}

/* Random model lists: membership and count equal "within N of one model determinant" over FCI;
 * the region is the model space. */
static void test_list(int norb, int na, int nb, int nm, int N, unsigned seed) {
  cis_integrals in;
  random_ints(&in, norb, na, nb, seed);
  uint64_t ma[64], mb[64];
  int m = 0;
  while (m < nm) { /* distinct determinants, some sharing strings */
    uint64_t a = (m % 3 == 2) ? ma[m - 1] : random_string(norb, na);
    uint64_t b = (m % 4 == 3) ? mb[m - 2] : random_string(norb, nb);
    int dup = 0;
    for (int i = 0; i < m; i++) dup |= ma[i] == a && mb[i] == b;
    if (!dup) ma[m] = a, mb[m++] = b;
  }
  cis_space_spec fs = {.kind = CIS_SPACE_FCI};
  cis_space_spec ms = {.kind = CIS_SPACE_MRCI, .level = N, .nref_dets = nm, .ref_alpha = ma,
                       .ref_beta = mb};
  cis_space *f = NULL, *s = NULL;
  if (cis_space_build(&in, &fs, NULL, &f) || cis_space_build(&in, &ms, NULL, &s)) {
    EXPECT(0, "list model space: %s", cis_error_message());
    free_ints(&in);
    return;
  }
  int64_t inside = 0;
  for (int64_t i = 0; i < cis_space_ndet(f); i++) {
    const uint64_t *a = cis_space_alpha(f, i), *b = cis_space_beta(f, i);
    int want = 0;
    for (int r = 0; r < nm && !want; r++) want = moved(a, b, ma[r], mb[r]) <= N;
    inside += want;
    EXPECT((cis_space_find(s, a, b) >= 0) == want, "FCI determinant %lld membership",
           (long long)i);
  }
  printf("norb %d (%d,%d), %d model determinants, level %d: %lld determinants, brute force "
         "%lld\n", norb, na, nb, nm, N, (long long)cis_space_ndet(s), (long long)inside);
  EXPECT(cis_space_ndet(s) == inside, "list model space count");
  check_region(s, nm, ma, mb, 1);
  cis_space_destroy(&f);
  cis_space_destroy(&s);
  free_ints(&in);
}

static void expect_error(const cis_integrals *in, const cis_space_spec *spec, cis_err code,
                         const char *what) {
  cis_space *s = NULL;
  cis_err e = cis_space_build(in, spec, NULL, &s);
  printf("expected error: %s\n", cis_error_message());
  EXPECT(e == code && s == NULL, "no error %d for %s", (int)code, what);
  EXPECT(strstr(cis_error_message(), what) != NULL, "message lacks '%s'", what);
  cis_error_clear();
}

static void test_errors(void) {
  cis_integrals in;
  random_ints(&in, 6, 2, 2, 3);
  uint64_t a[3] = {0x3, 0x5, 0x3}, b[3] = {0x3, 0x3, 0x3};
  cis_space_spec spec = {.kind = CIS_SPACE_MRCI, .level = 2, .nref_dets = 3, .ref_alpha = a,
                         .ref_beta = b};
  expect_error(&in, &spec, CIS_ERR_INPUT, "model determinant 2 repeats determinant 0");
  b[2] = 0x7;
  expect_error(&in, &spec, CIS_ERR_INPUT, "model determinant 2 has 2 alpha and 3 beta");
  spec.nref_dets = 0;
  expect_error(&in, &spec, CIS_ERR_INPUT, "no model space");
  cis_space_spec cas = {.kind = CIS_SPACE_MRCI, .level = 1, .cas_nelec = 4, .cas_norb = 7};
  expect_error(&in, &cas, CIS_ERR_USAGE, "more than the 6");
  cas.cas_nelec = 3;
  cas.cas_norb = 3;
  expect_error(&in, &cas, CIS_ERR_USAGE, "an even number");
  free_ints(&in);
}

/* ---- the orbital window ------------------------------------------------------------------ */

static void expect_parse(const char *text, int n, const int *want) {
  int *l = NULL, m = 0;
  cis_err e = cis_orbitals_parse(text, "--active", &l, &m);
  EXPECT(e == CIS_OK && m == n, "parse '%s': %d orbitals (%s)", text, m,
         e ? cis_error_message() : "");
  for (int i = 0; !e && i < n && i < m; i++)
    EXPECT(l[i] == want[i], "parse '%s': orbital %d is %d, not %d", text, i, l[i], want[i]);
  cis_free(&l);
  cis_error_clear();
}

static void expect_parse_error(const char *text, const char *what) {
  int *l = NULL, m = 0;
  cis_err e = cis_orbitals_parse(text, "--active", &l, &m);
  printf("expected error: %s\n", cis_error_message());
  EXPECT(e == CIS_ERR_USAGE && l == NULL, "'%s' accepted", text);
  EXPECT(strstr(cis_error_message(), what) != NULL, "message for '%s' lacks '%s'", text, what);
  cis_error_clear();
}

static void make_problem(cis_problem *p, int norb, int na, int nb) {
  memset(p, 0, sizeof *p);
  p->kind = CIS_PROBLEM_INTEGRALS;
  random_ints(&p->ints, norb, na, nb, 11);
  p->ints.orbsym = malloc(sizeof(int) * (size_t)norb);
  for (int i = 0; i < norb; i++) p->ints.orbsym[i] = 1 + i % 4;
}

static void expect_apply_error(int norb, int na, int nb, int nfrozen, const int *act, int nact,
                               cis_err code, const char *what) {
  cis_problem p;
  make_problem(&p, norb, na, nb);
  cis_err e = cis_orbitals_apply(&p, nfrozen, act, nact);
  printf("expected error: %s\n", cis_error_message());
  EXPECT(e == code, "frozen %d: error %d, expected %d", nfrozen, (int)e, (int)code);
  EXPECT(strstr(cis_error_message(), what) != NULL, "message lacks '%s'", what);
  cis_error_clear();
  cis_problem_free(&p);
}

static void test_window(void) {
  expect_parse("3-5", 3, (int[]){2, 3, 4});
  expect_parse("7,2,4-5", 4, (int[]){1, 3, 4, 6});
  expect_parse_error("3-5,4", "orbital 4 is given twice");
  expect_parse_error("0-3", "numbered from 1");
  expect_parse_error("5-3", "descends");
  expect_parse_error("3;4", "unexpected ';'");
  expect_parse_error("", "empty");

  /* 8 orbitals, (3, 2) electrons; frozen 1, active 2,3,5,6 (orbitals 4, 7, 8 deleted) */
  cis_problem p;
  make_problem(&p, 8, 3, 2);
  uint64_t ra = 0x7, rb = 0x5; /* orbitals 1-3 alpha, 1 and 3 beta */
  p.space.nref_dets = 1;
  p.space.ref_alpha = malloc(8);
  p.space.ref_beta = malloc(8);
  p.space.ref_alpha[0] = ra;
  p.space.ref_beta[0] = rb;
  int act[4] = {1, 2, 4, 5};
  cis_err e = cis_orbitals_apply(&p, 1, act, 4);
  EXPECT(e == CIS_OK, "window: %s", e ? cis_error_message() : "");
  EXPECT(p.ints.norb == 4 && p.ints.nalpha == 2 && p.ints.nbeta == 1, "window: norb %d (%d,%d)",
         p.ints.norb, p.ints.nalpha, p.ints.nbeta);
  for (int i = 0; i < 4; i++)
    EXPECT(p.ints.orbsym[i] == 1 + act[i] % 4, "ORBSYM of kept orbital %d", i);
  EXPECT(p.space.ref_alpha[0] == 0x3 && p.space.ref_beta[0] == 0x2,
         "reference mapped to %llx %llx", (unsigned long long)p.space.ref_alpha[0],
         (unsigned long long)p.space.ref_beta[0]);
  EXPECT(p.window.applied && p.window.nfrozen == 1 && p.window.norb_input == 8,
         "window recorded");
  cis_problem_free(&p);
  cis_error_clear();

  /* a reference that leaves the frozen orbital half empty, or occupies a deleted one */
  make_problem(&p, 8, 3, 2);
  p.space.nref_dets = 1;
  p.space.ref_alpha = malloc(8);
  p.space.ref_beta = malloc(8);
  p.space.ref_alpha[0] = 0x7;
  p.space.ref_beta[0] = 0x6;
  e = cis_orbitals_apply(&p, 1, NULL, 0);
  EXPECT(e == CIS_ERR_INPUT && strstr(cis_error_message(), "frozen orbital 1 without its beta"),
         "half-empty frozen orbital: %s", cis_error_message());
  cis_problem_free(&p);
  cis_error_clear();
  make_problem(&p, 8, 3, 2);
  p.space.nref_dets = 1;
  p.space.ref_alpha = malloc(8);
  p.space.ref_beta = malloc(8);
  p.space.ref_alpha[0] = 0x0b; /* orbitals 1, 2, 4 */
  p.space.ref_beta[0] = 0x5;
  e = cis_orbitals_apply(&p, 1, act, 4);
  EXPECT(e == CIS_ERR_INPUT && strstr(cis_error_message(), "occupies orbital 4"),
         "deleted orbital occupied: %s", cis_error_message());
  cis_problem_free(&p);
  cis_error_clear();

  /* without --frozen, the orbitals below the active list are frozen */
  make_problem(&p, 8, 3, 3);
  int act2[3] = {2, 3, 4};
  e = cis_orbitals_apply(&p, -1, act2, 3);
  EXPECT(e == CIS_OK && p.window.nfrozen == 2 && p.ints.nalpha == 1 && p.ints.norb == 3,
         "default frozen below --active: %d", p.window.nfrozen);
  cis_problem_free(&p);
  cis_error_clear();

  expect_apply_error(8, 3, 2, 3, NULL, 0, CIS_ERR_USAGE, "the input has 3 alpha and 2 beta");
  expect_apply_error(8, 3, 2, 2, (int[]){1, 2}, 2, CIS_ERR_USAGE, "one of the 2 frozen");
  expect_apply_error(8, 3, 2, 1, (int[]){2, 8}, 2, CIS_ERR_USAGE, "orbital 9 is beyond");
  expect_apply_error(8, 3, 2, 0, (int[]){3, 4}, 2, CIS_ERR_USAGE, "do not fit in the 2 kept");
  expect_apply_error(8, 3, 3, 9, NULL, 0, CIS_ERR_USAGE, "the input has 8 orbitals");
}

int main(void) {
  test_cas(8, 3, 3, 2, 2, 1);
  test_cas(10, 4, 4, 4, 4, 2);
  test_cas(10, 5, 3, 4, 4, 2); /* Ms = 1 */
  test_cas(9, 4, 4, 6, 5, 3);
  test_cas(12, 3, 3, 6, 6, 2); /* no core */
  test_cas(70, 2, 2, 2, 2, 2); /* two-word strings */
  test_list(8, 3, 3, 5, 1, 1);
  test_list(8, 3, 3, 7, 2, 2);
  test_list(9, 4, 2, 6, 2, 3); /* Ms = 1 */
  test_list(7, 2, 2, 12, 3, 4);
  test_errors();
  test_window();
  return cis_test_summary();
}
