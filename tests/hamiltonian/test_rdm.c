/* Density matrices (hamiltonian/rdm.h) against PySCF and against a brute-force count.
 *
 * usage: test_rdm pyscf FILE.h5 GROUP   PySCF's make_rdm12s / trans_rdm12s (make_rdm_ref.py)
 *        test_rdm brute FILE.h5 GROUP SPACE   SPACE: cisd, cisdt or list, on GROUP's integrals
 *        test_rdm wide                  norb 65 (two-word strings), a list space
 *        test_rdm nomem FILE.h5 GROUP   a host memory limit below a block: CIS_ERR_NOMEM
 * Every case runs with the automatic block of rows and with blocks of a few rows (the last one
 * short), for bra == ket and a transition pair bra != ket, and asks for the one-particle
 * matrices alone, and for dm2ba without dm2ab (its own product). Brute force: each operator
 * string a+_p a+_r a_s a_q (and a+_q a_p) applied to each determinant bit by bit, signs counted
 * over the occupied spin orbitals in PySCF's order (all alpha, then all beta), the result
 * looked up in the space. bra == ket, normalised: sum_p dm1[p,p] = N and
 * sum_pq dm2[p,p,q,q] = N(N-1) (spin-summed). Tolerance 1e-10.
 */
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "hamiltonian/rdm.h"

#define TOL 1e-10

static int g_fail = 0;

static void check(const char *what, double err) {
  if (!(err <= TOL)) {
    fprintf(stderr, "FAIL %s: error %.3e\n", what, err);
    g_fail = 1;
  }
}

static void die(cis_err e) {
  if (e != CIS_OK) {
    fprintf(stderr, "test_rdm: %s\n", cis_error_message());
    exit(1);
  }
}

/* ------------------------------------------------------------------ data */

static void *read_all(hid_t f, const char *name, hid_t type, size_t size, int64_t *count) {
  hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
  if (d < 0) {
    fprintf(stderr, "test_rdm: dataset %s missing\n", name);
    exit(1);
  }
  hid_t sp = H5Dget_space(d);
  int64_t n = (int64_t)H5Sget_simple_extent_npoints(sp);
  void *buf = malloc((size_t)CIS_MAX(n, 1) * size);
  if (!buf || H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
    fprintf(stderr, "test_rdm: cannot read %s\n", name);
    exit(1);
  }
  H5Sclose(sp);
  H5Dclose(d);
  if (count) *count = n;
  return buf;
}

static int read_int(hid_t f, const char *name) {
  int64_t *v = read_all(f, name, H5T_NATIVE_INT64, 8, NULL);
  int x = (int)v[0];
  free(v);
  return x;
}

typedef struct {
  cis_integrals ints;
  int fci;
  int64_t na, nb;
  uint64_t *astr, *bstr;
  double *ket, *bra; /* PySCF order */
  hid_t f;
  char group[64];
} ref_case;

static void read_case(const char *path, const char *group, ref_case *c) {
  char name[128];
  memset(c, 0, sizeof *c);
  snprintf(c->group, sizeof c->group, "%s", group);
  c->f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (c->f < 0) {
    fprintf(stderr, "test_rdm: cannot open %s\n", path);
    exit(1);
  }
#define NM(x) (snprintf(name, sizeof name, "%s/%s", group, x), name)
  c->ints.norb = read_int(c->f, NM("norb"));
  c->ints.nalpha = read_int(c->f, NM("nalpha"));
  c->ints.nbeta = read_int(c->f, NM("nbeta"));
  c->ints.h1e = read_all(c->f, NM("h1e"), H5T_NATIVE_DOUBLE, 8, NULL);
  c->ints.eri = read_all(c->f, NM("eri"), H5T_NATIVE_DOUBLE, 8, NULL);
  c->astr = read_all(c->f, NM("alpha_strings"), H5T_NATIVE_UINT64, 8, &c->na);
  c->bstr = read_all(c->f, NM("beta_strings"), H5T_NATIVE_UINT64, 8, &c->nb);
  c->ket = read_all(c->f, NM("ket"), H5T_NATIVE_DOUBLE, 8, NULL);
  c->bra = read_all(c->f, NM("bra"), H5T_NATIVE_DOUBLE, 8, NULL);
  c->fci = read_int(c->f, NM("fci"));
#undef NM
}

static double *read_ref(const ref_case *c, const char *what) {
  char name[128];
  snprintf(name, sizeof name, "%s/%s", c->group, what);
  return read_all(c->f, name, H5T_NATIVE_DOUBLE, 8, NULL);
}

static void free_case(ref_case *c) {
  free(c->ints.h1e);
  free(c->ints.eri);
  free(c->astr);
  free(c->bstr);
  free(c->ket);
  free(c->bra);
  H5Fclose(c->f);
}

/* PySCF's vector x in our order; components outside the space must be zero. */
static double *to_ours(const ref_case *c, const cis_space *s, const double *x) {
  double *v = calloc((size_t)cis_space_ndet(s), sizeof *v);
  for (int64_t ia = 0; ia < c->na; ia++)
    for (int64_t ib = 0; ib < c->nb; ib++) {
      int64_t d = cis_space_find(s, c->astr + ia, c->bstr + ib);
      double xv = x[ia * c->nb + ib];
      if (d >= 0)
        v[d] = xv;
      else if (xv != 0.0)
        check("a reference vector has weight outside the space", fabs(xv));
    }
  return v;
}

/* ------------------------------------------------------------- brute force */

typedef struct {
  int nw;
  uint64_t a[4], b[4];
} det;

/* a_o (create 0) or a+_o (create 1) on spin orbital (o, spin); 0 when it vanishes. */
static int apply1(det *d, int o, int spin, int create) {
  uint64_t *s = spin ? d->b : d->a;
  uint64_t bit = (uint64_t)1 << (o & 63);
  int occ = (s[o >> 6] & bit) != 0;
  if (occ == create) return 0;
  int before = 0;
  if (spin)
    for (int w = 0; w < d->nw; w++) before += __builtin_popcountll(d->a[w]);
  for (int w = 0; w < (o >> 6); w++) before += __builtin_popcountll(s[w]);
  before += __builtin_popcountll(s[o >> 6] & (bit - 1));
  s[o >> 6] ^= bit;
  return before & 1 ? -1 : 1;
}

/* ops (orbital, spin, create) applied right to left to determinant J of s; returns the
 * target's index (or -1) and its sign. */
static int64_t apply(const cis_space *s, int64_t J, int n, int ops[][3], int *sign) {
  det d = {.nw = cis_space_nwords(s)};
  memcpy(d.a, cis_space_alpha(s, J), 8 * (size_t)d.nw);
  memcpy(d.b, cis_space_beta(s, J), 8 * (size_t)d.nw);
  *sign = 1;
  for (int k = n - 1; k >= 0; k--) {
    int sg = apply1(&d, ops[k][0], ops[k][1], ops[k][2]);
    if (!sg) return -1;
    *sign *= sg;
  }
  return cis_space_find(s, d.a, d.b);
}

/* out -= the brute-force matrices of bra and ket (blocks of out that are NULL: skipped). */
static void brute_subtract(const cis_space *s, const double *bra, const double *ket,
                           cis_rdm_out *out) {
  int norb = cis_space_norb(s);
  int64_t n = cis_space_ndet(s), no = norb;
  double *d1[2] = {out->dm1a, out->dm1b};
  double *d2[4] = {out->dm2aa, out->dm2ab, out->dm2ba, out->dm2bb};
  int spins[4][2] = {{0, 0}, {0, 1}, {1, 0}, {1, 1}};
  for (int64_t J = 0; J < n; J++) {
    if (ket[J] == 0.0) continue;
    int sign;
    for (int sp = 0; sp < 2; sp++)
      for (int p = 0; p < norb && d1[sp]; p++)
        for (int q = 0; q < norb; q++) { /* dm1[p,q] = <bra|a+_q a_p|ket> */
          int ops[2][3] = {{q, sp, 1}, {p, sp, 0}};
          int64_t I = apply(s, J, 2, ops, &sign);
          if (I >= 0) d1[sp][p * norb + q] -= bra[I] * sign * ket[J];
        }
    for (int b = 0; b < 4; b++) {
      if (!d2[b]) continue;
      int s1 = spins[b][0], s2 = spins[b][1];
      for (int q = 0; q < norb; q++)
        for (int x = 0; x < norb; x++) { /* x = s */
          det d = {.nw = cis_space_nwords(s)};
          memcpy(d.a, cis_space_alpha(s, J), 8 * (size_t)d.nw);
          memcpy(d.b, cis_space_beta(s, J), 8 * (size_t)d.nw);
          if (!apply1(&d, q, s1, 0) || !apply1(&d, x, s2, 0)) continue;
          for (int p = 0; p < norb; p++)
            for (int r = 0; r < norb; r++) {
              int ops[4][3] = {{p, s1, 1}, {r, s2, 1}, {x, s2, 0}, {q, s1, 0}};
              int64_t I = apply(s, J, 4, ops, &sign);
              if (I >= 0) d2[b][((p * no + q) * no + r) * no + x] -= bra[I] * sign * ket[J];
            }
        }
    }
  }
}

/* ------------------------------------------------------------------ checks */

static double maxabs(const double *x, int64_t n) {
  double m = 0.0;
  for (int64_t i = 0; i < n; i++) m = fmax(m, fabs(x[i]));
  return m;
}

static double maxdiff(const double *x, const double *y, int64_t n) {
  double m = 0.0;
  for (int64_t i = 0; i < n; i++) m = fmax(m, fabs(x[i] - y[i]));
  return m;
}

typedef struct {
  double *m[6]; /* dm1a, dm1b, dm2aa, dm2ab, dm2ba, dm2bb */
} rdm_set;

static const char *k_names[6] = {"dm1a", "dm1b", "dm2aa", "dm2ab", "dm2ba", "dm2bb"};

static void set_alloc(rdm_set *r, int norb, unsigned mask) {
  int64_t n2 = (int64_t)norb * norb;
  for (int b = 0; b < 6; b++)
    r->m[b] = mask >> b & 1 ? calloc((size_t)(b < 2 ? n2 : n2 * n2), sizeof(double)) : NULL;
}

static void set_free(rdm_set *r) {
  for (int b = 0; b < 6; b++) free(r->m[b]);
}

static cis_rdm_out as_out(rdm_set *r) {
  return (cis_rdm_out){r->m[0], r->m[1], r->m[2], r->m[3], r->m[4], r->m[5], NULL, NULL};
}

/* cis_rdm12s of the blocks in mask into r. */
static void compute_on(const cis_space *s, cis_backend *be, const double *bra,
                       const double *ket, unsigned mask, rdm_set *r) {
  set_alloc(r, cis_space_norb(s), mask);
  cis_rdm_out o = as_out(r);
  die(cis_rdm12s(s, be, bra, ket, &o));
}

static void compute(const cis_space *s, const double *bra, const double *ket, unsigned mask,
                    rdm_set *r) {
  compute_on(s, NULL, bra, ket, mask, r);
}

/* Trace identities of bra == ket, normalised. */
static void check_traces(const char *tag, int norb, int na, int nb, const rdm_set *r) {
  char what[160];
  double t1a = 0, t1b = 0, t2 = 0;
  int64_t no = norb;
  for (int p = 0; p < norb; p++) {
    t1a += r->m[0][p * norb + p];
    t1b += r->m[1][p * norb + p];
    for (int q = 0; q < norb; q++)
      for (int b = 2; b < 6; b++) t2 += r->m[b][((p * no + p) * no + q) * no + q];
  }
  int N = na + nb;
  snprintf(what, sizeof what, "%s: trace dm1a = nalpha", tag);
  check(what, fabs(t1a - na));
  snprintf(what, sizeof what, "%s: trace dm1b = nbeta", tag);
  check(what, fabs(t1b - nb));
  snprintf(what, sizeof what, "%s: sum dm2[p,p,q,q] = N(N-1)", tag);
  check(what, fabs(t2 - (double)N * (N - 1)));
}

/* The spin sums dm1 and dm2 of the same pair, asked alone (one product of the summed
 * intermediates), with dm2aa, or with dm1a and dm1b (every block, then their sum), on the host
 * or through backend be's gemm_tn (NULL: the host), against the sums of full's blocks. */
static void check_sums(const char *tag, const cis_space *s, cis_backend *be, const double *bra,
                       const double *ket, const rdm_set *full) {
  char what[200];
  int norb = cis_space_norb(s);
  int64_t n2 = (int64_t)norb * norb, n4 = n2 * n2;
  double *dm1 = calloc((size_t)n2, sizeof(double)), *dm2 = calloc((size_t)n4, sizeof(double));
  double *aa = calloc((size_t)n4, sizeof(double)), *s1 = malloc(sizeof(double) * (size_t)n2);
  double *s2 = malloc(sizeof(double) * (size_t)n4);
  for (int64_t t = 0; t < n2; t++) s1[t] = full->m[0][t] + full->m[1][t];
  for (int64_t t = 0; t < n4; t++)
    s2[t] = full->m[2][t] + full->m[3][t] + full->m[4][t] + full->m[5][t];
  double *d1a = calloc((size_t)n2, sizeof(double)), *d1b = calloc((size_t)n2, sizeof(double));
  for (int with = 0; with < 3; with++) {
    int with_aa = with == 1;
    cis_rdm_out o = {.dm1 = dm1, .dm2 = dm2, .dm2aa = with_aa ? aa : NULL,
                     .dm1a = with == 2 ? d1a : NULL, .dm1b = with == 2 ? d1b : NULL};
    die(cis_rdm12s(s, be, bra, ket, &o));
    const char *how = with == 1 ? "with dm2aa" : with == 2 ? "with dm1a, dm1b" : "alone";
    const char *on = be ? "through a backend's gemm_tn" : "on the host";
    snprintf(what, sizeof what, "%s: dm1 = dm1a + dm1b, %s, %s", tag, how, on);
    check(what, maxdiff(dm1, s1, n2));
    snprintf(what, sizeof what, "%s: dm2 = the sum of the spin blocks, %s, %s", tag, how, on);
    check(what, maxdiff(dm2, s2, n4));
    if (with_aa) {
      snprintf(what, sizeof what, "%s: dm2aa asked with dm2, %s", tag, on);
      check(what, maxdiff(aa, full->m[2], n4));
    }
    if (with == 2) {
      snprintf(what, sizeof what, "%s: dm1a and dm1b asked with dm2, %s", tag, on);
      check(what, fmax(maxdiff(d1a, full->m[0], n2), maxdiff(d1b, full->m[1], n2)));
    }
  }
  free(d1a);
  free(d1b);
  free(dm1);
  free(dm2);
  free(aa);
  free(s1);
  free(s2);
}

/* The same pair with the other code paths: one-particle matrices alone, dm2ba without dm2ab,
 * blocks of 5 rows, and the path of a device backend (its intermediates copied to the
 * backend's vectors, each product by its gemm_tn and scattered into the matrices) taken by the
 * CPU backend posing as one, with the automatic blocks and blocks of 5 rows; the spin sums on
 * each of these paths. */
static void check_paths(const char *tag, const cis_space *s, const double *bra,
                        const double *ket, const rdm_set *full) {
  char what[160];
  int norb = cis_space_norb(s);
  int64_t n2 = (int64_t)norb * norb;
  rdm_set r;
  compute(s, bra, ket, 0x3, &r);
  for (int b = 0; b < 2; b++) {
    snprintf(what, sizeof what, "%s: %s alone", tag, k_names[b]);
    check(what, maxdiff(r.m[b], full->m[b], n2));
  }
  set_free(&r);
  compute(s, bra, ket, 0x10, &r);
  snprintf(what, sizeof what, "%s: dm2ba without dm2ab", tag);
  check(what, maxdiff(r.m[4], full->m[4], n2 * n2));
  set_free(&r);
  cis_backend *be = NULL;
  die(cis_backend_create_cpu(cis_space_ndet(s), 0, &be));
  be->is_device = 1;
  check_sums(tag, s, NULL, bra, ket, full);
  for (int v = 0; v < 3; v++) {
    cis_rdm_set_block_rows(v == 1 ? 0 : 5);
    compute_on(s, v ? be : NULL, bra, ket, 0x3f, &r);
    if (v != 1) check_sums(tag, s, v ? be : NULL, bra, ket, full);
    cis_rdm_set_block_rows(0);
    for (int b = 0; b < 6; b++) {
      snprintf(what, sizeof what, "%s: %s %s", tag, k_names[b],
               v == 0 ? "in blocks of 5 rows" : v == 1 ? "through a backend's gemm_tn"
                      : "through a backend's gemm_tn in blocks of 5 rows");
      check(what, maxdiff(r.m[b], full->m[b], b < 2 ? n2 : n2 * n2));
    }
    set_free(&r);
  }
  cis_backend_destroy(&be);
}

static cis_space *build(const cis_integrals *ints, cis_space_spec *spec) {
  cis_space *s = NULL;
  cis_space_opts so = {0};
  die(cis_space_build(ints, spec, &so, &s));
  return s;
}

static int run_pyscf(const char *path, const char *group) {
  ref_case c;
  read_case(path, group, &c);
  cis_space_spec spec = {.kind = c.fci ? CIS_SPACE_FCI : CIS_SPACE_TRUNCATED, .level = 2};
  cis_space *s = build(&c.ints, &spec);
  int norb = c.ints.norb;
  int64_t n2 = (int64_t)norb * norb;
  double *ket = to_ours(&c, s, c.ket), *bra = to_ours(&c, s, c.bra);
  char what[160];
  for (int t = 0; t < 2; t++) { /* 0: <ket|..|ket>, 1: <bra|..|ket> */
    const double *b = t ? bra : ket;
    rdm_set r;
    compute(s, b, ket, 0x3f, &r);
    for (int k = 0; k < 6; k++) {
      char name[32];
      double *ref = NULL;
      if (k == 4 && !t) { /* make_rdm12s has no ba: ab[r,s,p,q] */
        ref = malloc(sizeof(double) * (size_t)(n2 * n2));
        double *ab = read_ref(&c, "dm2ab");
        for (int64_t i = 0; i < n2; i++)
          for (int64_t j = 0; j < n2; j++) ref[i * n2 + j] = ab[j * n2 + i];
        free(ab);
      } else {
        snprintf(name, sizeof name, "%s%s", t ? "t_" : "", k_names[k]);
        ref = read_ref(&c, name);
      }
      snprintf(what, sizeof what, "%s %s: %s against PySCF", group, t ? "bra|ket" : "ket|ket",
               k_names[k]);
      check(what, maxdiff(r.m[k], ref, k < 2 ? n2 : n2 * n2));
      free(ref);
    }
    snprintf(what, sizeof what, "%s %s", group, t ? "bra|ket" : "ket|ket");
    if (!t) check_traces(what, norb, c.ints.nalpha, c.ints.nbeta, &r);
    check_paths(what, s, b, ket, &r);
    set_free(&r);
  }
  printf("%s %s: %lld determinants, PySCF's matrices matched\n", path, group,
         (long long)cis_space_ndet(s));
  free(ket);
  free(bra);
  cis_space_destroy(&s);
  free_case(&c);
  return g_fail;
}

static uint64_t g_rng = 88172645463325252ull;
static double urand(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return (double)(g_rng >> 11) / (double)(1ull << 53) * 2.0 - 1.0;
}

static double *random_vector(int64_t n) {
  double *v = malloc(sizeof *v * (size_t)n), nrm = 0.0;
  for (int64_t i = 0; i < n; i++) {
    v[i] = urand();
    nrm += v[i] * v[i];
  }
  for (int64_t i = 0; i < n; i++) v[i] /= sqrt(nrm);
  return v;
}

/* Brute force on s: bra == ket and bra != ket, all blocks at once (mask 0x3f) or in groups. */
static void run_brute_space(const char *tag, const cis_space *s, const unsigned *masks,
                            int nmasks, int paths) {
  int norb = cis_space_norb(s);
  int64_t n = cis_space_ndet(s), n2 = (int64_t)norb * norb;
  double *ket = random_vector(n), *bra = random_vector(n);
  char what[200];
  for (int t = 0; t < 2; t++) {
    const double *b = t ? bra : ket;
    for (int m = 0; m < nmasks; m++) {
      rdm_set r;
      compute(s, b, ket, masks[m], &r);
      if (!t && masks[m] == 0x3f) check_traces(tag, norb, cis_space_nalpha(s),
                                               cis_space_nbeta(s), &r);
      if (paths) check_paths(tag, s, b, ket, &r);
      cis_rdm_out o = as_out(&r);
      brute_subtract(s, b, ket, &o);
      for (int k = 0; k < 6; k++) {
        if (!r.m[k]) continue;
        snprintf(what, sizeof what, "%s %s: %s against brute force", tag,
                 t ? "bra|ket" : "ket|ket", k_names[k]);
        check(what, maxabs(r.m[k], k < 2 ? n2 : n2 * n2));
      }
      set_free(&r);
    }
  }
  printf("%s: %lld determinants, brute force matched\n", tag, (long long)n);
  free(ket);
  free(bra);
}

static int run_brute(const char *path, const char *group, const char *kind) {
  ref_case c;
  read_case(path, group, &c);
  cis_space_spec spec = {0};
  uint64_t *la = NULL, *lb = NULL;
  if (strcmp(kind, "cisd") == 0 || strcmp(kind, "cisdt") == 0) {
    spec.kind = CIS_SPACE_TRUNCATED;
    spec.level = kind[4] ? 3 : 2;
  } else { /* every third FCI determinant and a few more */
    spec.kind = CIS_SPACE_LIST;
    la = malloc(sizeof *la * (size_t)(c.na * c.nb));
    lb = malloc(sizeof *lb * (size_t)(c.na * c.nb));
    for (int64_t i = 0; i < c.na * c.nb; i++)
      if (i % 3 == 0 || i % 7 == 1) {
        la[spec.ndets] = c.astr[i / c.nb];
        lb[spec.ndets++] = c.bstr[i % c.nb];
      }
    spec.det_alpha = la;
    spec.det_beta = lb;
  }
  cis_space *s = build(&c.ints, &spec);
  char tag[160];
  snprintf(tag, sizeof tag, "%s %s %s", path, group, kind);
  unsigned all = 0x3f;
  run_brute_space(tag, s, &all, 1, 1);
  cis_space_destroy(&s);
  free(la);
  free(lb);
  free_case(&c);
  return g_fail;
}

/* norb 65: strings of two words, a list space of determinants across the word boundary; the
 * blocks two at a time (each is norb^4 doubles). */
static int run_wide(void) {
  int norb = 65;
  int64_t ne = cis_eri_size(norb);
  cis_integrals ints = {.norb = norb, .nalpha = 2, .nbeta = 1};
  ints.h1e = calloc((size_t)norb * norb, sizeof(double));
  ints.eri = calloc((size_t)ne, sizeof(double));
  for (int p = 0; p < norb; p++) ints.h1e[p * norb + p] = -1.0 + 0.01 * p;
  uint64_t la[2 * 4] = {0}, lb[2 * 4] = {0};
  const int occ[4][3] = {{0, 64, 63}, {63, 64, 64}, {1, 2, 0}, {62, 64, 63}};
  for (int d = 0; d < 4; d++) {
    la[2 * d + occ[d][0] / 64] |= 1ull << (occ[d][0] % 64);
    la[2 * d + occ[d][1] / 64] |= 1ull << (occ[d][1] % 64);
    lb[2 * d + occ[d][2] / 64] |= 1ull << (occ[d][2] % 64);
  }
  cis_space_spec spec = {.kind = CIS_SPACE_LIST, .ndets = 4, .det_alpha = la, .det_beta = lb};
  cis_space *s = build(&ints, &spec);
  unsigned masks[2] = {0x0f, 0x30};
  run_brute_space("norb 65 list", s, masks, 2, 0);
  cis_space_destroy(&s);
  free(ints.h1e);
  free(ints.eri);
  return g_fail;
}

/* A host memory limit too small for a block of intermediates: CIS_ERR_NOMEM naming it; the
 * one-particle matrices alone still fit. */
static int run_nomem(const char *path, const char *group) {
  ref_case c;
  read_case(path, group, &c);
  cis_space_spec spec = {.kind = CIS_SPACE_FCI};
  cis_space *s = NULL;
  cis_space_opts so = {.host_mem = 100000};
  die(cis_space_build(&c.ints, &spec, &so, &s));
  double *ket = to_ours(&c, s, c.ket);
  rdm_set r;
  set_alloc(&r, c.ints.norb, 0x3f);
  cis_rdm_out o = as_out(&r);
  cis_err e = cis_rdm12s(s, NULL, ket, ket, &o);
  const char *msg = cis_error_message();
  if (e != CIS_ERR_NOMEM || !strstr(msg, "each block of the two-particle density matrices needs")) {
    fprintf(stderr, "FAIL: expected CIS_ERR_NOMEM naming the block, got %d: %s\n", (int)e, msg);
    g_fail = 1;
  } else {
    printf("refused: %s\n", msg);
  }
  cis_error_clear();
  o.dm2aa = o.dm2ab = o.dm2ba = o.dm2bb = NULL;
  die(cis_rdm12s(s, NULL, ket, ket, &o));
  double t = 0.0;
  for (int p = 0; p < c.ints.norb; p++) t += r.m[0][p * c.ints.norb + p];
  check("trace dm1a under the limit", fabs(t - c.ints.nalpha));
  set_free(&r);
  free(ket);
  cis_space_destroy(&s);
  free_case(&c);
  return g_fail;
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "nomem") == 0) return run_nomem(argv[2], argv[3]);
  if (argc == 4 && strcmp(argv[1], "pyscf") == 0) return run_pyscf(argv[2], argv[3]);
  if (argc == 5 && strcmp(argv[1], "brute") == 0) return run_brute(argv[2], argv[3], argv[4]);
  if (argc == 2 && strcmp(argv[1], "wide") == 0) return run_wide();
  fprintf(stderr, "usage: test_rdm pyscf FILE GROUP | brute FILE GROUP cisd|cisdt|list | wide\n");
  return 2;
}
