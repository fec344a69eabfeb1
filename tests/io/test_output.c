/* output.h5: written atomically, read back with the plain HDF5 API.
 * usage: test_output SCRATCH_DIR
 *
 * The determinant space here is a stand-in with three determinants, defined in this file:
 * cis_output_write only asks a space for its sizes, description and strings, and this test
 * must pin down what lands in the file, not how spaces are built.
 */
#define _POSIX_C_SOURCE 200809L
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tests/tools/expect.h"
#include "tests/tools/leftovers.h"
#include "app/output.h"


/* ---- the stand-in space: norb 3, one alpha and one beta electron ---- */
struct cis_space {
  uint64_t a[3], b[3];
};
static struct cis_space fake = {{0x1, 0x2, 0x1}, {0x1, 0x1, 0x4}};
int64_t cis_space_ndet(const cis_space *s) { return (void)s, 3; }
int64_t cis_space_nref(const cis_space *s) { return (void)s, 1; }
int cis_space_norb(const cis_space *s) { return (void)s, 3; }
int cis_space_nwords(const cis_space *s) { return (void)s, 1; }
int cis_space_nalpha(const cis_space *s) { return (void)s, 1; }
int cis_space_nbeta(const cis_space *s) { return (void)s, 1; }
const char *cis_space_describe(const cis_space *s) { return (void)s, "test space"; }
int cis_space_irrep(const cis_space *s) { return (void)s, 0; }
const uint64_t *cis_space_alpha(const cis_space *s, int64_t i) { return &s->a[i]; }
const uint64_t *cis_space_beta(const cis_space *s, int64_t i) { return &s->b[i]; }

static int read_ds(hid_t f, const char *name, hid_t type, void *buf) {
  hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
  int ok = d >= 0 && H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0;
  if (d >= 0) H5Dclose(d);
  EXPECT(ok, "cannot read %s", name);
  return ok;
}

static long long read_attr(hid_t f, const char *obj, const char *name) {
  long long v = -999;
  hid_t a = H5Aopen_by_name(f, obj, name, H5P_DEFAULT, H5P_DEFAULT);
  EXPECT(a >= 0 && H5Aread(a, H5T_NATIVE_LLONG, &v) >= 0, "cannot read %s attribute %s", obj,
         name);
  if (a >= 0) H5Aclose(a);
  return v;
}

static double evecs[6] = {0.8, 0.6, 0.0, 0.0, 0.6, -0.8}; /* 3 x 2, column-major */
static double evals[2] = {-1.25, -0.5}, rnorm[2] = {1e-7, 3e-4}, s2[2] = {0.0, 2.0};
static int conv[2] = {1, 0};

static int write_out(const char *path, cis_hmat *h, int with_s2) {
  cis_options opt;
  memset(&opt, 0, sizeof opt);
  snprintf(opt.input, sizeof opt.input, "in.h5");
  opt.nroots = 2;
  opt.solver = CIS_SOLVER_LANCZOS;
  cis_eig_result res = {.nroots = 2, .evals = evals, .evecs = evecs, .rnorm = rnorm,
                        .converged = conv, .all_converged = 0, .iterations = 7, .matvecs = 20};
  cis_output o = {&opt, h, &res, with_s2 ? s2 : NULL, "9.9.9", "cpu test"};
  cis_err e = cis_output_write(path, &o);
  EXPECT(e == CIS_OK, "writing %s: %s", path, cis_error_message());
  EXPECT(cis_test_leftovers(path) == 0, "a temporary file of %s left behind", path);
  return e == CIS_OK;
}

static void check_ci(const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/out_ci.h5", dir);
  cis_hmat h;
  memset(&h, 0, sizeof h);
  h.n = 3;
  h.nref = 1;
  h.ecore = 10.0;
  h.space = &fake;
  if (!write_out(path, &h, 1)) return;
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  EXPECT(f >= 0, "cannot open %s", path);
  if (f < 0) return;
  double e[2], v[6], s[2];
  uint64_t a[3], b[3];
  signed char c[2];
  if (read_ds(f, "/results/energies", H5T_NATIVE_DOUBLE, e))
    EXPECT(e[0] == 8.75 && e[1] == 9.5, "energies %g %g, expected evals + ecore", e[0], e[1]);
  if (read_ds(f, "/results/vectors", H5T_NATIVE_DOUBLE, v))
    EXPECT(memcmp(v, evecs, sizeof v) == 0, "vectors: row j must be root j");
  if (read_ds(f, "/results/s2", H5T_NATIVE_DOUBLE, s)) EXPECT(s[1] == 2.0, "s2 %g", s[1]);
  if (read_ds(f, "/results/converged", H5T_NATIVE_SCHAR, c))
    EXPECT(c[0] == 1 && c[1] == 0, "converged %d %d", c[0], c[1]);
  if (read_ds(f, "/determinants/alpha", H5T_NATIVE_UINT64, a) &&
      read_ds(f, "/determinants/beta", H5T_NATIVE_UINT64, b))
    EXPECT(a[1] == 0x2 && b[2] == 0x4, "determinant strings");
  EXPECT(read_attr(f, "/results", "iterations") == 7, "iterations");
  EXPECT(read_attr(f, "/results", "matvecs") == 20, "matvecs");
  EXPECT(read_attr(f, "/results", "all_converged") == 0, "all_converged");
  EXPECT(read_attr(f, "/problem", "norb") == 3 && read_attr(f, "/problem", "nref") == 1,
         "problem attributes");
  EXPECT(read_attr(f, "/options", "nroots") == 2, "options attributes");
  H5Fclose(f);
}

/* An explicit matrix: vectors go back to the input's row order through perm. */
static void check_matrix(const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/out_matrix.h5", dir);
  int64_t perm[3] = {2, 0, 1};
  cis_hmat h;
  memset(&h, 0, sizeof h);
  h.n = 3;
  h.nref = 1;
  h.perm = perm;
  if (!write_out(path, &h, 0)) return;
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  EXPECT(f >= 0, "cannot open %s", path);
  if (f < 0) return;
  double v[6], e[2];
  if (read_ds(f, "/results/vectors", H5T_NATIVE_DOUBLE, v))
    for (int j = 0; j < 2; j++)
      for (int i = 0; i < 3; i++)
        EXPECT(v[j * 3 + perm[i]] == evecs[j * 3 + i], "vector %d, our row %d", j, i);
  if (read_ds(f, "/results/energies", H5T_NATIVE_DOUBLE, e))
    EXPECT(e[0] == -1.25, "energy %g (no ecore for explicit matrices)", e[0]);
  EXPECT(H5Lexists(f, "/determinants", H5P_DEFAULT) == 0, "no determinants for a matrix");
  H5Fclose(f);
}

static void check_failure(const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/missing-dir/out.h5", dir);
  cis_hmat h;
  memset(&h, 0, sizeof h);
  h.n = 3;
  h.space = &fake;
  cis_eig_result res = {.nroots = 2, .evals = evals, .evecs = evecs, .rnorm = rnorm,
                        .converged = conv};
  cis_output o = {NULL, &h, &res, NULL, "9.9.9", "cpu"};
  cis_err e = cis_output_write(path, &o);
  EXPECT(e == CIS_ERR_IO && strstr(cis_error_message(), "missing-dir/out.h5.") &&
             strstr(cis_error_message(), "No such file"),
         "unwritable output: %s %s", cis_err_name(e), cis_error_message());
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s SCRATCH_DIR\n", argv[0]);
    return 2;
  }
  check_ci(argv[1]);
  check_matrix(argv[1]);
  check_failure(argv[1]);
  return cis_test_summary();
}
