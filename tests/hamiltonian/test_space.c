/* Determinant spaces: truncated-space sizes against the combinatorial formula, membership
 * against brute force over the FCI space, the Reference-region order, input errors, and the
 * explicit-matrix path (permutation, budget error), and the build's cache decisions (a caller's
 * store taking every block: none cached; the default budget with the caller's vectors), and the
 * host memory a space needs, refused before it is stored. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/tools/expect.h"
#include "tests/tools/random_ints.h"
#include "base/util.h"
#include "hamiltonian/hmat.h"


static double binom(int n, int k) {
  if (k < 0 || k > n) return 0;
  double r = 1;
  for (int i = 1; i <= k; i++) r = r * (n - k + i) / i;
  return r;
}

/* Determinants with (alpha level + beta level) <= L: choose la holes among nalpha occupied
 * and la particles among norb - nalpha virtuals, the same for beta. */
static int64_t truncated_count(int norb, int na, int nb, int L) {
  double c = 0;
  for (int la = 0; la <= L; la++)
    for (int lb = 0; lb <= L - la; lb++)
      c += binom(na, la) * binom(norb - na, la) * binom(nb, lb) * binom(norb - nb, lb);
  return (int64_t)llround(c);
}

static int level_of(const uint64_t *a, const uint64_t *b, const uint64_t *ra, const uint64_t *rb,
                    int nw) {
  int l = 0;
  for (int w = 0; w < nw; w++)
    l += __builtin_popcountll(a[w] & ~ra[w]) + __builtin_popcountll(b[w] & ~rb[w]);
  return l;
}

static int same_configuration(const cis_space *s, int64_t i, int64_t j) {
  const uint64_t *ai = cis_space_alpha(s, i), *bi = cis_space_beta(s, i);
  const uint64_t *aj = cis_space_alpha(s, j), *bj = cis_space_beta(s, j);
  for (int w = 0; w < cis_space_nwords(s); w++)
    if ((ai[w] & bi[w]) != (aj[w] & bj[w]) || (ai[w] ^ bi[w]) != (aj[w] ^ bj[w])) return 0;
  return 1;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The Reference region's rule (docs/format.md), for random integrals (no symmetry: one block):
 * besides the reference and the block's lowest determinant, it holds the lowest diagonal
 * energies up to `want` determinants, and with every determinant every determinant of its
 * configuration in the space. */
static void check_region(const cis_space *s, int64_t want) {
  int64_t n = cis_space_ndet(s), nref = cis_space_nref(s);
  const double *hd = cis_space_hdiag(s);
  double *sorted = malloc((size_t)n * sizeof *sorted);
  if (!sorted) return;
  memcpy(sorted, hd, (size_t)n * sizeof *sorted);
  qsort(sorted, (size_t)n, sizeof *sorted, cmp_double);
  EXPECT(nref >= want || nref == n, "region of %ld, asked for %ld", (long)nref, (long)want);
  double t = sorted[want - 3 < n ? want - 3 : n - 1];
  for (int64_t j = nref; j < n; j++)
    EXPECT(hd[j] >= t, "determinant %ld (%.6f) outside the region is below %.6f", (long)j, hd[j],
           t);
  for (int64_t i = 0; i < nref; i++)
    for (int64_t j = nref; j < n; j++)
      EXPECT(!same_configuration(s, i, j), "determinant %ld shares the configuration of %ld "
             "in the region", (long)j, (long)i);
  free(sorted);
}

static void test_truncated(int norb, int na, int nb, int L) {
  cis_integrals in;
  random_ints(&in, norb, na, nb, 1);
  cis_space_spec spec = {.kind = CIS_SPACE_TRUNCATED, .level = L};
  cis_space_opts so = {50, 0, 0};
  cis_space *s = NULL;
  if (cis_space_build(&in, &spec, &so, &s)) {
    EXPECT(0, "truncated build: %s", cis_error_message());
    return;
  }
  int nw = cis_nwords(norb);
  uint64_t ra[2] = {0}, rb[2] = {0};
  for (int p = 0; p < na; p++) ra[p / 64] |= (uint64_t)1 << (p % 64);
  for (int p = 0; p < nb; p++) rb[p / 64] |= (uint64_t)1 << (p % 64);
  int64_t n = cis_space_ndet(s), want = truncated_count(norb, na, nb, L);
  printf("%s norb %d (%d,%d): %ld determinants, formula %ld, nref %ld\n", cis_space_describe(s),
         norb, na, nb, (long)n, (long)want, (long)cis_space_nref(s));
  EXPECT(n == want, "count %ld, formula %ld", (long)n, (long)want);
  for (int64_t i = 0; i < n; i++) {
    int l = level_of(cis_space_alpha(s, i), cis_space_beta(s, i), ra, rb, nw);
    EXPECT(l <= L, "determinant %ld at level %d", (long)i, l);
    EXPECT(cis_space_find(s, cis_space_alpha(s, i), cis_space_beta(s, i)) == i, "find %ld",
           (long)i);
  }
  check_region(s, 50);
  EXPECT(level_of(cis_space_alpha(s, 0), cis_space_beta(s, 0), ra, rb, nw) == 0,
         "determinant 0 is not the reference");
  cis_space_destroy(&s);
  free(in.h1e);
  free(in.eri);
}

/* Two references, level 1: membership equals "within 1 of either", by brute force over FCI. */
static void test_multiref(void) {
  int norb = 8, na = 2, nb = 2;
  cis_integrals in;
  random_ints(&in, norb, na, nb, 2);
  uint64_t ra[2] = {0x3, 0x30}, rb[2] = {0x3, 0x30};
  cis_space_spec fs = {.kind = CIS_SPACE_FCI};
  cis_space_spec ts = {.kind = CIS_SPACE_TRUNCATED, .level = 1, .nref_dets = 2,
                       .ref_alpha = ra, .ref_beta = rb};
  cis_space *f = NULL, *t = NULL;
  if (cis_space_build(&in, &fs, NULL, &f) || cis_space_build(&in, &ts, NULL, &t)) {
    EXPECT(0, "multi-reference build: %s", cis_error_message());
    return;
  }
  int64_t inside = 0;
  for (int64_t i = 0; i < cis_space_ndet(f); i++) {
    const uint64_t *a = cis_space_alpha(f, i), *b = cis_space_beta(f, i);
    int want = level_of(a, b, &ra[0], &rb[0], 1) <= 1 || level_of(a, b, &ra[1], &rb[1], 1) <= 1;
    inside += want;
    EXPECT((cis_space_find(t, a, b) >= 0) == want, "FCI determinant %ld membership", (long)i);
  }
  printf("two references, level 1: %ld determinants, brute force %ld\n", (long)cis_space_ndet(t),
         (long)inside);
  EXPECT(cis_space_ndet(t) == inside, "multi-reference count");
  EXPECT(cis_space_alpha(t, 0)[0] == ra[0] && cis_space_alpha(t, 1)[0] == ra[1],
         "references first");
  cis_space_destroy(&f);
  cis_space_destroy(&t);
  free(in.h1e);
  free(in.eri);
}

static void expect_error(const cis_integrals *in, const cis_space_spec *spec, const char *what) {
  cis_space *s = NULL;
  cis_err e = cis_space_build(in, spec, NULL, &s);
  printf("expected error: %s\n", cis_error_message());
  EXPECT(e == CIS_ERR_INPUT && s == NULL, "no input error for %s", what);
  EXPECT(strstr(cis_error_message(), what) != NULL, "message lacks '%s'", what);
  cis_error_clear();
}

static void test_errors(void) {
  cis_integrals in;
  random_ints(&in, 4, 2, 1, 3);
  uint64_t a[3] = {0x3, 0x5, 0x3}, b[3] = {0x1, 0x2, 0x1};
  cis_space_spec spec = {.kind = CIS_SPACE_LIST, .ndets = 3, .det_alpha = a, .det_beta = b};
  expect_error(&in, &spec, "repeats determinant 0");
  b[2] = 0x3;
  expect_error(&in, &spec, "list determinant 2 has 2 alpha and 2 beta");
  b[2] = 0x10;
  expect_error(&in, &spec, "list determinant 2 occupies an orbital beyond norb");
  b[2] = 0x4;
  uint64_t ra = 0xc, rb = 0x1;
  spec.nref_dets = 1;
  spec.ref_alpha = &ra;
  spec.ref_beta = &rb;
  expect_error(&in, &spec, "reference determinant 0 is not in");
  in.nalpha = 5;
  cis_space_spec fci = {.kind = CIS_SPACE_FCI};
  expect_error(&in, &fci, "more than the 4 orbitals");
  free(in.h1e);
  free(in.eri);
}

/* Explicit matrix: rows ordered by ascending diagonal, values kept, budget error named. */
static void test_explicit(void) {
  /* Symmetric 5 x 5, diagonal 3 1 2 5 4, off-diagonals (0,1)=0.5 (2,4)=-0.25 (3,0)=0.125. */
  int64_t rp[6] = {0, 3, 5, 7, 9, 11};
  int32_t col[11] = {0, 1, 3, 0, 1, 2, 4, 0, 3, 2, 4};
  double val[11] = {3, .5, .125, .5, 1, 2, -.25, .125, 5, -.25, 4};
  cis_csr m = {5, 11, rp, col, val};
  cis_hmat_opts o = {.host_cache = -1, .ref_size = 2};
  cis_hmat *h = NULL;
  cis_csr out = {0};
  if (cis_hmat_build_csr(&m, &o, &h) || cis_hmat_to_csr(h, &out)) {
    EXPECT(0, "explicit build: %s", cis_error_message());
    return;
  }
  int64_t want[5] = {1, 2, 0, 4, 3};
  for (int i = 0; i < 5; i++) EXPECT(h->perm[i] == want[i], "perm[%d] = %ld", i, (long)h->perm[i]);
  EXPECT(out.nnz == 11 && h->nref == 2, "nnz %ld nref %ld", (long)out.nnz, (long)h->nref);
  for (int64_t i = 0; i < 5; i++)
    for (int64_t q = out.rowptr[i]; q < out.rowptr[i + 1]; q++) {
      int64_t oi = h->perm[i], oj = h->perm[out.col[q]];
      double v = 0;
      for (int64_t p = rp[oi]; p < rp[oi + 1]; p++)
        if (col[p] == oj) v = val[p];
      EXPECT(v == out.val[q], "element (%ld,%d)", (long)i, out.col[q]);
    }
  EXPECT(h->hpp[0] == 1 && h->hpp[1 + 2 * 0] == 0 && h->hpp[3] == 2, "Reference block");
  cis_csr_free(&out);
  cis_hmat_destroy(&h);
  o.host_cache = 10;
  cis_err e = cis_hmat_build_csr(&m, &o, &h);
  printf("expected error: %s\n", cis_error_message());
  EXPECT(e == CIS_ERR_NOMEM && h == NULL && strstr(cis_error_message(), "at least"),
         "budget too small not reported");
  cis_error_clear();
}

/* The build's cache decisions, and the plan's (cis_hmat_plan_ci) the same: every block fits in
 * cache_none_within, so none is cached whatever host_cache says; a bound below the blocks
 * leaves host_cache in force; host_cache < 0 takes the default less the caller's vectors (so
 * many here that nothing is left for the cache). */
static void test_cache_decisions(void) {
  cis_integrals in;
  random_ints(&in, 10, 3, 3, 3);
  cis_space_spec spec = {.kind = CIS_SPACE_FCI};
  cis_space_opts so = {20, 0, 0};
  cis_space *s = NULL;
  if (cis_space_build(&in, &spec, &so, &s)) {
    EXPECT(0, "FCI build: %s", cis_error_message());
    return;
  }
  int64_t within[3] = {(int64_t)1 << 40, 100, 0}, cache[3] = {1 << 30, 1 << 30, -1};
  for (int c = 0; c < 3; c++) {
    cis_hmat_opts o = {.host_cache = cache[c], .block_rows = 64, .cache_none_within = within[c],
                       .solver_vectors = (int64_t)1 << 40};
    cis_hmat *h = NULL;
    cis_hmat_plan pl;
    if (cis_hmat_build_ci(&in, s, &o, &h) || cis_hmat_plan_ci(&in, s, &o, 0.0, 0.0, &pl)) {
      EXPECT(0, "build %d: %s", c, cis_error_message());
      cis_hmat_destroy(&h);
      continue;
    }
    int64_t want = c == 1 ? cache[c] : 0, cached = c == 1 ? h->hyb.nblocks : 0;
    printf("cache_none_within %lld, host_cache %lld: budget %lld, %lld of %lld blocks cached\n",
           (long long)within[c], (long long)cache[c], (long long)h->stats.budget,
           (long long)h->hyb.ncached, (long long)h->hyb.nblocks);
    EXPECT(h->stats.budget == want && h->hyb.ncached == cached, "case %d: budget %lld, %lld "
           "cached", c, (long long)h->stats.budget, (long long)h->hyb.ncached);
    EXPECT(pl.cache_none == (c == 0) && pl.budget == h->stats.budget, "case %d: plan %d/%lld", c,
           pl.cache_none, (long long)pl.budget);
    cis_hmat_destroy(&h);
  }
  cis_space_destroy(&s);
  free(in.h1e);
  free(in.eri);
}

/* The host memory a space needs, refused before it is stored (CIS_ERR_NOMEM, naming the space
 * and its count): FCI builds within exactly cis_space_fci_bytes, which is no less than what the
 * space and its link tables then hold, and not within one byte less; a truncated space and a
 * list are refused before their determinants are stored, and link tables past the limit when
 * the row generator has counted them. Spaces too large to count within
 * int64 are refused as input (more than 2^31-1 strings), not wrapped into a small count. */
static void expect_nomem(const cis_integrals *in, const cis_space_spec *spec, int64_t host_mem,
                         const char *what) {
  cis_space_opts so = {0, 0, host_mem};
  cis_space *s = NULL;
  cis_err e = cis_space_build(in, spec, &so, &s);
  printf("expected error: %s\n", cis_error_message());
  EXPECT(e == CIS_ERR_NOMEM && s == NULL, "no memory error for %s", what);
  EXPECT(strstr(cis_error_message(), what) != NULL, "message lacks '%s'", what);
  cis_error_clear();
  cis_space_destroy(&s);
}

static void test_memory(void) {
  cis_integrals in;
  random_ints(&in, 10, 3, 3, 5);
  cis_space_spec fci = {.kind = CIS_SPACE_FCI};
  double need = cis_space_fci_bytes(10, 3, 3);
  cis_space_opts so = {0, 0, (int64_t)ceil(need)};
  cis_space *s = NULL;
  if (cis_space_build(&in, &fci, &so, &s)) {
    EXPECT(0, "FCI within %.0f bytes: %s", need, cis_error_message());
  } else {
    cis_hmat_opts o = {.host_cache = 0};
    cis_hmat_plan pl;
    EXPECT(cis_hmat_plan_ci(&in, s, &o, 0.0, 0.0, &pl) == CIS_OK, "plan: %s",
           cis_error_message());
    printf("FCI(10, 3, 3): %.0f bytes counted, %lld held with its link tables\n", need,
           (long long)(cis_space_bytes(s) + pl.table_bytes));
    EXPECT(cis_space_bytes(s) + pl.table_bytes <= need, "held %lld > counted %.0f",
           (long long)(cis_space_bytes(s) + pl.table_bytes), need);
  }
  cis_space_destroy(&s);
  expect_nomem(&in, &fci, (int64_t)ceil(need) - 1,
               "FCI of 14400 determinants needs");
  cis_space_spec cisd = {.kind = CIS_SPACE_TRUNCATED, .level = 2};
  expect_nomem(&in, &cisd, 20000, "CISD (level 2) of");
  /* within the limit, but not its link tables: refused once the row generator counts them */
  cis_space_opts so2 = {0, 0, 50000};
  if (cis_space_build(&in, &cisd, &so2, &s)) {
    EXPECT(0, "CISD within 50000 bytes: %s", cis_error_message());
  } else {
    cis_hmat_opts o = {.host_cache = 0};
    cis_hmat_plan pl;
    cis_err e = cis_hmat_plan_ci(&in, s, &o, 0.0, 0.0, &pl);
    printf("expected error: %s\n", cis_error_message());
    EXPECT(e == CIS_ERR_NOMEM && strstr(cis_error_message(), "CISD (level 2) of 610 "
                                                            "determinants needs") &&
               strstr(cis_error_message(), "string link tables"),
           "link tables within 50000 bytes: %s", cis_error_message());
    cis_error_clear();
  }
  cis_space_destroy(&s);
  expect_nomem(&in, &cisd, 1000, "CISD (level 2) with 85 alpha and 85 beta strings needs");
  uint64_t a[2] = {0x7, 0xb}, b[2] = {0x7, 0x7};
  cis_space_spec list = {.kind = CIS_SPACE_LIST, .ndets = 2, .det_alpha = a, .det_beta = b};
  expect_nomem(&in, &list, 100, "explicit list of 2 determinants needs");
  free(in.h1e);
  free(in.eri);
  /* C(70, 35) passes 2^62: refused, not counted as a wrapped product */
  random_ints(&in, 70, 35, 35, 6);
  cis_space *big = NULL;
  EXPECT(cis_space_build(&in, &fci, NULL, &big) == CIS_ERR_INPUT && big == NULL &&
             strstr(cis_error_message(), "more than 2^31-1 strings"),
         "FCI(70, 35, 35): %s", cis_error_message());
  cis_error_clear();
  cis_space_spec high = {.kind = CIS_SPACE_TRUNCATED, .level = 70};
  EXPECT(cis_space_build(&in, &high, NULL, &big) == CIS_ERR_INPUT && big == NULL &&
             strstr(cis_error_message(), "2^31-1 strings of one spin"),
         "CI level 70 of (70, 35, 35): %s", cis_error_message());
  cis_error_clear();
  free(in.h1e);
  free(in.eri);
}

/* FCI of one irrep: its determinants are those whose strings' irreps multiply to it (counted
 * here one by one), the dimensions of every irrep add up to the whole FCI, and its memory is
 * counted for its own determinants: it builds where the whole FCI is refused. */
static void test_irrep(void) {
  cis_integrals in;
  random_ints(&in, 10, 3, 3, 7);
  int orbsym[10] = {1, 2, 3, 4, 5, 6, 7, 8, 1, 5};
  in.orbsym = orbsym;
  double need = cis_space_fci_bytes(10, 3, 3), sum = 0.0;
  for (int g = 1; g <= 8; g++) {
    cis_space_spec spec = {.kind = CIS_SPACE_FCI, .irrep = g};
    cis_space_opts so = {0, 0, (int64_t)ceil(need) - 1};
    cis_space *s = NULL;
    if (cis_space_build(&in, &spec, &so, &s)) {
      EXPECT(0, "FCI of irrep %d within the whole FCI's bytes less one: %s", g,
             cis_error_message());
      cis_error_clear();
      continue;
    }
    int64_t count = 0;
    for (int a = 0; a < 1024; a++)
      for (int b = 0; b < 1024; b++) {
        if (__builtin_popcount(a) != 3 || __builtin_popcount(b) != 3) continue;
        int x = 0;
        for (int p = 0; p < 10; p++) x ^= ((a >> p & 1) + (b >> p & 1)) % 2 ? orbsym[p] - 1 : 0;
        count += x == g - 1;
      }
    double dims[8];
    EXPECT(cis_space_irrep_dims(s, dims), "irrep %d: no dimensions", g);
    EXPECT(cis_space_ndet(s) == count && dims[g - 1] == (double)count,
           "irrep %d: %lld determinants (dims %.0f), counted %lld", g,
           (long long)cis_space_ndet(s), dims[g - 1], (long long)count);
    for (int64_t d = 0; d < cis_space_ndet(s); d++) {
      uint64_t a = cis_space_alpha(s, d)[0], b = cis_space_beta(s, d)[0];
      int x = 0;
      for (int p = 0; p < 10; p++) x ^= ((a >> p & 1) + (b >> p & 1)) % 2 ? orbsym[p] - 1 : 0;
      if (x != g - 1) {
        EXPECT(0, "irrep %d: determinant %lld is of irrep %d", g, (long long)d, x + 1);
        break;
      }
    }
    sum += dims[g - 1];
    cis_space_destroy(&s);
  }
  EXPECT(sum == 14400.0, "dimensions add up to %.0f, not 14400", sum);
  in.orbsym = NULL;
  free(in.h1e);
  free(in.eri);
}

int main(void) {
  test_truncated(10, 3, 2, 2);
  test_truncated(10, 3, 2, 3);
  test_truncated(12, 4, 4, 4);
  test_truncated(70, 2, 2, 2);
  test_truncated(6, 3, 3, 9); /* level above the electron count: FCI */
  test_multiref();
  test_errors();
  test_explicit();
  test_cache_decisions();
  test_memory();
  test_irrep();
  return cis_test_summary();
}
