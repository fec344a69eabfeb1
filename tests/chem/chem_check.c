/* chem_check: checks of cisolve outputs against external references.
 *
 *   chem_check dense MATRIX.mtx OUTPUT.h5 TOL
 *     Densifies the Matrix Market matrix (cisolve --export-matrix of the same run), diagonalises
 *     it with LAPACKE dsyevd and checks /results/energies - /problem@ecore against its lowest
 *     eigenvalues to TOL.
 *   chem_check noons OUTPUT.h5 REF.noons TOL
 *     Checks /results/natural_occupations of root 0 against a reference list (one value a line,
 *     '#' comments; tests/data/h2o_sto3g.noons from PySCF) to TOL, and that they sum to the
 *     electron count (/problem@nalpha + nbeta) to TOL.
 * Exit 0 on agreement, 1 on a mismatch, 2 on unreadable input. */
#include <hdf5.h>
#include <lapacke.h>
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

static int dense(const char *mtx, const char *out, double tol) {
  FILE *f = fopen(mtx, "r");
  char line[512];
  long n = 0, m = 0, nnz = 0;
  if (!f) return 2;
  while (fgets(line, sizeof line, f))
    if (line[0] != '%' && sscanf(line, "%ld %ld %ld", &n, &m, &nnz) == 3) break;
  if (n <= 0 || n != m) return 2;
  double *A = calloc((size_t)(n * n), sizeof *A), *w = malloc((size_t)n * sizeof *w);
  if (!A || !w) return 2;
  for (long k = 0; k < nnz; k++) {
    long i, j;
    double v;
    if (fscanf(f, "%ld %ld %lf", &i, &j, &v) != 3) return 2;
    A[(i - 1) + (j - 1) * n] = A[(j - 1) + (i - 1) * n] = v;
  }
  fclose(f);
  if (LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'N', 'U', (lapack_int)n, A, (lapack_int)n, w) != 0)
    return 2;
  hid_t h = H5Fopen(out, H5F_ACC_RDONLY, H5P_DEFAULT);
  hsize_t k = 0;
  double ecore = 0.0, *e = h < 0 ? NULL : read_all(h, "/results/energies", &k);
  if (!e || read_attr(h, "/problem", "ecore", H5T_NATIVE_DOUBLE, &ecore) < 0) {
    fprintf(stderr, "chem_check: cannot read energies and ecore from %s\n", out);
    return 2;
  }
  H5Fclose(h);
  int bad = 0;
  for (hsize_t j = 0; j < k; j++) {
    double d = e[j] - ecore - w[j];
    printf("root %llu: cisolve %.12f  dsyevd %.12f  diff %+.2e %s\n", (unsigned long long)j,
           e[j], w[j] + ecore, d, fabs(d) <= tol ? "ok" : "MISMATCH");
    bad += !(fabs(d) <= tol);
  }
  printf("%s: %llu roots against dense dsyevd (n = %ld)\n", bad ? "FAIL" : "ok",
         (unsigned long long)k, n);
  free(A);
  free(w);
  free(e);
  return bad ? 1 : 0;
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
  if (argc == 5 && strcmp(argv[1], "dense") == 0) return dense(argv[2], argv[3], atof(argv[4]));
  if (argc == 5 && strcmp(argv[1], "noons") == 0) return noons(argv[2], argv[3], atof(argv[4]));
  fprintf(stderr, "usage: chem_check dense MATRIX.mtx OUTPUT.h5 TOL | noons OUTPUT.h5 REF TOL\n");
  return 2;
}
