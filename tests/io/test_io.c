/* Readers of io/ against PySCF's numbers, against each other, and on bad inputs.
 * usage: test_io DATA_DIR SCRATCH_DIR
 */
#include <math.h>
#include <signal.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/tools/expect.h"
#include "tests/tools/leftovers.h"
#include "base/problem.h"
#include "base/util.h"
#include "data/reference_values.h"
#include "io/input.h"
#include "io/io_private.h"

static const char *data_dir, *scratch_dir;

static const char *data(const char *name) {
  static char buf[8][4096];
  static int k;
  k = (k + 1) % 8;
  snprintf(buf[k], sizeof buf[k], "%s/%s", data_dir, name);
  return buf[k];
}

static int read_ok(const char *path, cis_problem *p) {
  cis_err e = cis_input_read(path, p);
  EXPECT(e == CIS_OK, "reading %s: %s", path, cis_error_message());
  return e == CIS_OK;
}

/* Values printed by make_fixtures.py from PySCF's own arrays. tol: the FCIDUMP holds 16
 * significant digits, input.h5 the exact doubles. */
static void check_reference(const char *name, double tol) {
  cis_problem p;
  if (!read_ok(data(name), &p)) return;
  const cis_integrals *I = &p.ints;
  EXPECT(p.kind == CIS_PROBLEM_INTEGRALS, "%s: kind %d", name, p.kind);
  EXPECT(I->norb == REF_NORB, "%s: norb %d", name, I->norb);
  EXPECT(I->nalpha + I->nbeta == REF_NELEC && I->nalpha - I->nbeta == REF_MS2,
         "%s: nalpha %d nbeta %d", name, I->nalpha, I->nbeta);
  EXPECT(fabs(I->ecore - REF_ECORE) <= tol * fabs(REF_ECORE), "%s: ecore %.17g", name, I->ecore);
  for (size_t k = 0; k < sizeof ref_h1e / sizeof ref_h1e[0]; k++) {
    int a = ref_h1e[k].p, b = ref_h1e[k].q;
    double x = I->h1e[a * I->norb + b], y = I->h1e[b * I->norb + a];
    EXPECT(fabs(x - ref_h1e[k].v) <= tol * 40 && x == y, "%s: h1e[%d][%d] = %.17g, expected "
           "%.17g", name, a, b, x, ref_h1e[k].v);
  }
  for (size_t k = 0; k < sizeof ref_eri / sizeof ref_eri[0]; k++) {
    double x = I->eri[cis_eri_index(ref_eri[k].p, ref_eri[k].q, ref_eri[k].r, ref_eri[k].s)];
    EXPECT(fabs(x - ref_eri[k].v) <= tol * 10, "%s: (%d%d|%d%d) = %.17g, expected %.17g", name,
           ref_eri[k].p, ref_eri[k].q, ref_eri[k].r, ref_eri[k].s, x, ref_eri[k].v);
  }
  cis_problem_free(&p);
}

static double max_diff(const double *a, const double *b, int64_t n) {
  double d = 0;
  for (int64_t i = 0; i < n; i++) d = fmax(d, fabs(a[i] - b[i]));
  return d;
}

/* PySCF's FCIDUMP, the other dialects and input.h5 hold the same integrals. */
static void check_same_integrals(void) {
  enum { N = 6 };
  const char *names[N] = {"h2o.h5",           "h2o.fcidump",       "h2o_molpro.fcidump",
                          "h2o_psi4.fcidump", "h2o_hande.fcidump", "h2o_dollar.fcidump"};
  cis_problem p[N];
  int ok = 1;
  for (int k = 0; k < N; k++) ok &= read_ok(data(names[k]), &p[k]);
  if (!ok) return;
  for (int k = 1; k < N; k++) {
    const cis_integrals *a = &p[0].ints, *b = &p[k].ints;
    EXPECT(a->norb == b->norb && a->nalpha == b->nalpha && a->nbeta == b->nbeta,
           "%s: sizes differ from h2o.h5", names[k]);
    if (a->norb != b->norb) continue;
    double dh = max_diff(a->h1e, b->h1e, (int64_t)a->norb * a->norb);
    double dg = max_diff(a->eri, b->eri, cis_eri_size(a->norb));
    EXPECT(dh < 1e-14 && dg < 1e-14 && fabs(a->ecore - b->ecore) < 1e-14,
           "%s vs h2o.h5: max |dh1e| %.3g, |deri| %.3g, |decore| %.3g", names[k], dh, dg,
           fabs(a->ecore - b->ecore));
    EXPECT(b->orbsym && a->orbsym && memcmp(a->orbsym, b->orbsym, a->norb * sizeof(int)) == 0,
           "%s: orbsym differs", names[k]);
    EXPECT(b->isym == 1 && p[k].space.kind == CIS_SPACE_FCI && !p[k].space_from_file,
           "%s: isym %d space %d", names[k], b->isym, p[k].space.kind);
    printf("%-19s vs h2o.h5: max |dh1e| %.3g, max |deri| %.3g\n", names[k], dh, dg);
  }
  for (int k = 0; k < N; k++) cis_problem_free(&p[k]);
}

static const char *option(const cis_problem *p, const char *key) {
  for (int i = 0; i < p->file_options.n; i++)
    if (strcmp(p->file_options.kv[i].key, key) == 0) return p->file_options.kv[i].value;
  return "(absent)";
}

static void check_h5_space_options(void) {
  cis_problem p;
  if (!read_ok(data("h2o.h5"), &p)) return;
  const cis_space_spec *s = &p.space;
  EXPECT(p.space_from_file && s->kind == CIS_SPACE_TRUNCATED && s->level == 2,
         "h2o.h5: space kind %d level %d", s->kind, s->level);
  EXPECT(s->nref_dets == 1 && s->ref_alpha && s->ref_alpha[0] == 0x1f && s->ref_beta[0] == 0x1f,
         "h2o.h5: reference (%lld dets)", (long long)s->nref_dets);
  EXPECT(p.file_options.n == 3, "h2o.h5: %d options", p.file_options.n);
  EXPECT(strcmp(option(&p, "nroots"), "3") == 0, "nroots = %s", option(&p, "nroots"));
  EXPECT(strtod(option(&p, "tol"), NULL) == 1e-8, "tol = %s", option(&p, "tol"));
  EXPECT(strcmp(option(&p, "solver"), "davidson") == 0, "solver = %s", option(&p, "solver"));
  cis_problem_free(&p);
}

static void to_dense(const cis_csr *m, double *a) {
  memset(a, 0, (size_t)(m->n * m->n) * sizeof *a);
  for (int64_t i = 0; i < m->n; i++)
    for (int64_t k = m->rowptr[i]; k < m->rowptr[i + 1]; k++) {
      if (k > m->rowptr[i]) EXPECT(m->col[k] > m->col[k - 1], "row %lld not sorted", (long long)i);
      a[i * m->n + m->col[k]] = m->val[k];
    }
}

static void check_matrix(const char *name, const double *want, int n) {
  cis_problem p;
  double a[64];
  if (!read_ok(data(name), &p)) return;
  EXPECT(p.kind == CIS_PROBLEM_MATRIX && p.matrix.n == n, "%s: kind %d n %lld", name, p.kind,
         (long long)p.matrix.n);
  if (p.matrix.n == n) {
    to_dense(&p.matrix, a);
    EXPECT(max_diff(a, want, n * n) == 0, "%s: entries differ", name);
  }
  cis_problem_free(&p);
}

static void check_matrices(void) {
  static const double sym[16] = {-2.5, 0.125, 0, 0, 0.125, -1, 0, 0.0625,
                                 0,    0,     0.5, 0, 0, 0.0625, 0, 1};
  static const double gen[16] = {-2, 1, 0, 0, 1, -1, 0, 3, 0, 0, 5, 0, 0, 3, 0, 1};
  check_matrix("mat_sym.mtx", sym, 4);
  check_matrix("mat_lower.h5", sym, 4);
  check_matrix("mat_general.mtx", gen, 4);
}

/* The whole file at path (NUL-terminated, caller frees), or NULL. */
static char *slurp(const char *path, long *len) {
  FILE *f = fopen(path, "rb");
  char *s = NULL;
  if (f && fseek(f, 0, SEEK_END) == 0 && (*len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
      (s = malloc((size_t)*len + 1)) && fread(s, 1, (size_t)*len, f) == (size_t)*len)
    s[*len] = '\0';
  else
    free(s), s = NULL;
  if (f) fclose(f);
  return s;
}

/* cis_matrix_write then read back: equal to the last bit, and no temporary left; written from
 * chunks of 2 rows, three at a time, the same (a Matrix Market file byte for byte, and as the
 * writer that held the whole matrix wrote it: the size line, then the lower triangle row by
 * row with %.17g values). */
static void check_roundtrip(const char *ext) {
  int64_t rowptr[6] = {0, 2, 5, 7, 9, 11};
  int32_t col[11] = {0, 1, 0, 1, 4, 2, 3, 2, 3, 1, 4};
  double val[11] = {1.0 / 3, M_PI, M_PI, -1e-300, 2.0 / 7, 1e300, -0.1, -0.1, 5, 2.0 / 7, -7};
  cis_csr m = {5, 11, rowptr, col, val};
  cis_row_source src;
  cis_csr_row_source(&m, &src);
  char path[4096], path2[4096];
  snprintf(path, sizeof path, "%s/roundtrip%s", scratch_dir, ext);
  snprintf(path2, sizeof path2, "%s/roundtrip_chunked%s", scratch_dir, ext);
  cis_err e = cis_matrix_write(path, &src);
  EXPECT(e == CIS_OK, "writing %s: %s", path, cis_error_message());
  EXPECT(cis_test_leftovers(path) == 0, "a temporary file of %s left behind", path);
  EXPECT(src.nchunks == 1 && src.chunk_nnz == 11, "one chunk: %lld chunks, %lld entries",
         (long long)src.nchunks, (long long)src.chunk_nnz);
  src.chunk_rows = 2;
  src.nchunks = 3;
  src.chunk_nnz = 5;
  omp_set_num_threads(3);
  e = cis_matrix_write(path2, &src);
  EXPECT(e == CIS_OK, "writing %s: %s", path2, cis_error_message());
  if (strcmp(ext, ".mtx") == 0) {
    long n1 = 0, n2 = 0;
    char *a = slurp(path, &n1), *b = slurp(path2, &n2);
    const char *want =
        "%%MatrixMarket matrix coordinate real symmetric\n"
        "% written by cisolve: lower triangle, 1-based\n"
        "5 5 8\n"
        "1 1 0.33333333333333331\n"
        "2 1 3.1415926535897931\n"
        "2 2 -1e-300\n"
        "3 3 1.0000000000000001e+300\n"
        "4 3 -0.10000000000000001\n"
        "4 4 5\n"
        "5 2 0.2857142857142857\n"
        "5 5 -7\n";
    EXPECT(a && strcmp(a, want) == 0, "%s reads\n%s\nexpected\n%s", path, a ? a : "(none)", want);
    EXPECT(a && b && n1 == n2 && memcmp(a, b, (size_t)n1) == 0, "%s and %s differ", path, path2);
    free(a);
    free(b);
  }
  const char *written[2] = {path2, path};
  for (int w = 0; w < 2; w++) {
    cis_problem p;
    if (!read_ok(written[w], &p)) return;
    EXPECT(p.matrix.n == 5 && p.matrix.nnz == 11, "%s: n %lld nnz %lld", written[w],
           (long long)p.matrix.n, (long long)p.matrix.nnz);
    if (p.matrix.nnz == 11) {
      EXPECT(memcmp(p.matrix.rowptr, rowptr, sizeof rowptr) == 0 &&
             memcmp(p.matrix.col, col, sizeof col) == 0 &&
             memcmp(p.matrix.val, val, sizeof val) == 0, "%s: read back differs", written[w]);
    }
    cis_problem_free(&p);
  }
  snprintf(path, sizeof path, "%s/no-such-dir/x%s", scratch_dir, ext);
  EXPECT(cis_matrix_write(path, &src) == CIS_ERR_IO && strstr(cis_error_message(), "no-such-dir"),
         "writing into a missing directory: %s", cis_error_message());
}

static void expect_error(const char *name, cis_err code, const char *needle) {
  cis_problem p;
  const char *path = data(name);
  cis_error_clear();
  cis_err e = cis_input_read(path, &p);
  const char *msg = cis_error_message();
  EXPECT(e == code, "%s: code %s, expected %s (%s)", name, cis_err_name(e), cis_err_name(code),
         msg);
  EXPECT(strstr(msg, name) != NULL, "%s: message does not name the file: %s", name, msg);
  EXPECT(strstr(msg, needle) != NULL, "%s: message lacks '%s': %s", name, needle, msg);
  EXPECT(p.ints.h1e == NULL && p.matrix.val == NULL, "%s: problem not left empty", name);
  printf("%-22s -> %s\n", name, msg);
}

static void check_errors(void) {
  expect_error("bad_truncated.fcidump", CIS_ERR_INPUT, "line 7: fewer than 5 fields");
  expect_error("bad_no_nelec.fcidump", CIS_ERR_INPUT, "has no NELEC");
  expect_error("bad_nelec.fcidump", CIS_ERR_INPUT, "NELEC=6 exceeds 2*NORB=4");
  expect_error("bad_index.fcidump", CIS_ERR_INPUT, "line 13: orbital index 3 outside 1..NORB=2");
  expect_error("bad_nan.fcidump", CIS_ERR_INPUT, "line 6: value is not a finite number");
  expect_error("bad_uhf.fcidump", CIS_ERR_INPUT, "UHF=.TRUE.: unrestricted");
  expect_error("bad_noend.fcidump", CIS_ERR_INPUT, "has no end (&END or /)");
  expect_error("bad_empty.fcidump", CIS_ERR_INPUT, "empty file");
  expect_error("bad_missing_h1e.h5", CIS_ERR_INPUT, "dataset /integrals/h1e is missing");
  expect_error("bad_shape.h5", CIS_ERR_INPUT, "/integrals/h1e has shape 5x5, expected 7x7 (norb=7)");
  expect_error("bad_not_hdf5.h5", CIS_ERR_INPUT, "not an HDF5 file");
  expect_error("bad_asym.mtx", CIS_ERR_INPUT, "not symmetric");
  expect_error("bad_nonsquare.mtx", CIS_ERR_INPUT, "line 2: the matrix is 3 x 4");
  expect_error("no_such_file", CIS_ERR_IO, "No such file");
}

/* The child read of an input.h5 (io/h5probe.c): a read that crashes there is a refusal naming
 * the file; one that fails or succeeds leaves the outcome to the caller's own read. */
/* SIGABRT stands for libhdf5's SIGSEGV: the same to the probe, and left alone by the
 * sanitizers, which would report a SIGSEGV of their own. */
static cis_err read_crashes(const char *path, cis_problem *p) {
  (void)path, (void)p;
  raise(SIGABRT);
  return CIS_OK;
}
static cis_err read_fails(const char *path, cis_problem *p) {
  (void)p;
  CIS_ERROR(CIS_ERR_INPUT, "%s: not this one", path);
}
static void check_probe(void) {
  cis_error_clear();
  cis_err e = cis_h5_probe("probe.h5", read_crashes);
  EXPECT(e == CIS_ERR_INPUT && strstr(cis_error_message(), "probe.h5: the HDF5 library crashed "
                                      "reading it (signal 6"), "probe of a crash: %s (%s)",
         cis_err_name(e), cis_error_message());
  cis_error_clear();
  e = cis_h5_probe("probe.h5", read_fails);
  EXPECT(e == CIS_OK, "probe of a failing read: %s", cis_err_name(e));
  printf("probe: a crashing read is refused, a failing one left to the caller\n");
}

/* test_io --same A B: both files hold the same integrals to 1e-14 and B a CISD space (the
 * test of cisolve --write-input --space cisd); test_io --converted A B: and B also holds
 * nroots 3 (the converter's test). */
static int same(const char *a, const char *b, int converted) {
  cis_problem p, q;
  if (!read_ok(a, &p) || !read_ok(b, &q)) return 1;
  int n = p.ints.norb;
  EXPECT(n == q.ints.norb && p.ints.nalpha == q.ints.nalpha && p.ints.nbeta == q.ints.nbeta,
         "sizes differ");
  if (n == q.ints.norb) {
    double dh = max_diff(p.ints.h1e, q.ints.h1e, (int64_t)n * n);
    double dg = max_diff(p.ints.eri, q.ints.eri, cis_eri_size(n));
    EXPECT(dh < 1e-14 && dg < 1e-14 && fabs(p.ints.ecore - q.ints.ecore) < 1e-14,
           "max |dh1e| %.3g, |deri| %.3g", dh, dg);
  }
  EXPECT(q.space.kind == CIS_SPACE_TRUNCATED && q.space.level == 2, "%s: space not CISD", b);
  if (converted)
    EXPECT(strcmp(option(&q, "nroots"), "3") == 0, "%s: nroots = %s", b, option(&q, "nroots"));
  cis_problem_free(&p);
  cis_problem_free(&q);
  return cis_test_summary();
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "--same") == 0) return same(argv[2], argv[3], 0);
  if (argc == 4 && strcmp(argv[1], "--converted") == 0) return same(argv[2], argv[3], 1);
  if (argc != 3) {
    fprintf(stderr, "usage: %s DATA_DIR SCRATCH_DIR\n", argv[0]);
    return 2;
  }
  data_dir = argv[1];
  scratch_dir = argv[2];
  check_reference("h2o.h5", 0);
  check_reference("h2o.fcidump", 1e-15);
  check_reference("h2o_molpro.fcidump", 0);
  check_same_integrals();
  check_h5_space_options();
  check_matrices();
  check_roundtrip(".mtx");
  check_roundtrip(".h5");
  check_errors();
  check_probe();
  return cis_test_summary();
}
