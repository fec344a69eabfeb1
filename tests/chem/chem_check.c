/* chem_check: checks of cisolve outputs against external references (dense eigenvalues are
 * tests/tools/mtx_check's).
 *
 *   chem_check noons OUTPUT.h5 REF.noons TOL
 *     Checks /results/natural_occupations of root 0 against a reference list (one value a line,
 *     '#' comments; tests/data/h2o_sto3g.noons from PySCF) to TOL, and that they sum to the
 *     electron count (/problem@nalpha + nbeta) to TOL.
 * Exit 0 on agreement, 1 on a mismatch, 2 on unreadable input. */
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double *read_all(hid_t f, const char *name, hsize_t *count) {
  hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
  if (d < 0) return NULL;
  hid_t s = H5Dget_space(d);
  hsize_t dims[3] = {1, 1, 1};
  int nd = H5Sget_simple_extent_dims(s, dims, NULL);
  *count = nd < 1 ? 0 : dims[0] * (nd > 1 ? dims[1] : 1) * (nd > 2 ? dims[2] : 1);
  double *b = malloc((size_t)*count * sizeof *b + 1);
  if (b && H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, b) < 0) {
    free(b);
    b = NULL;
  }
  H5Sclose(s);
  H5Dclose(d);
  return b;
}

static int read_attr(hid_t f, const char *obj, const char *name, hid_t type, void *v) {
  hid_t a = H5Aopen_by_name(f, obj, name, H5P_DEFAULT, H5P_DEFAULT);
  if (a < 0) return -1;
  int r = H5Aread(a, type, v) < 0 ? -1 : 0;
  H5Aclose(a);
  return r;
}

static int noons(const char *out, const char *ref, double tol) {
  hid_t h = H5Fopen(out, H5F_ACC_RDONLY, H5P_DEFAULT);
  hsize_t k = 0;
  long long na = 0, nb = 0;
  double *occ = h < 0 ? NULL : read_all(h, "/results/natural_occupations", &k);
  if (!occ || read_attr(h, "/problem", "nalpha", H5T_NATIVE_LLONG, &na) < 0 ||
      read_attr(h, "/problem", "nbeta", H5T_NATIVE_LLONG, &nb) < 0) {
    fprintf(stderr, "chem_check: cannot read natural occupations from %s\n", out);
    return 2;
  }
  H5Fclose(h);
  FILE *f = fopen(ref, "r");
  char line[256];
  int bad = 0, p = 0;
  double sum = 0.0;
  if (!f) return 2;
  while (fgets(line, sizeof line, f)) {
    double r;
    if (line[0] == '#' || sscanf(line, "%lf", &r) != 1) continue;
    if ((hsize_t)p >= k) return 2;
    int ok = fabs(occ[p] - r) <= tol;
    printf("orbital %d: cisolve %.10f  reference %.10f  diff %+.2e %s\n", p, occ[p], r,
           occ[p] - r, ok ? "ok" : "MISMATCH");
    bad += !ok;
    sum += occ[p++];
  }
  fclose(f);
  int sum_ok = p > 0 && fabs(sum - (double)(na + nb)) <= tol;
  printf("sum %.10f, electrons %lld %s\n", sum, na + nb, sum_ok ? "ok" : "MISMATCH");
  free(occ);
  return bad || !sum_ok ? 1 : 0;
}

int main(int argc, char **argv) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  if (argc == 5 && strcmp(argv[1], "noons") == 0) return noons(argv[2], argv[3], atof(argv[4]));
  fprintf(stderr, "usage: chem_check noons OUTPUT.h5 REF TOL\n");
  return 2;
}
