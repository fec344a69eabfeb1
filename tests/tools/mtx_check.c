/* mtx_check MATRIX.mtx OUTPUT.h5 TOL
 *
 * Reads a Matrix Market symmetric matrix with a plain parser of its own, diagonalises it densely
 * with LAPACKE dsyevd, and checks that /results/energies - /problem@ecore of cisolve's output
 * are its lowest eigenvalues to TOL. The matrix is either the input itself (ecore 0) or the run's
 * own --export-matrix of a CI Hamiltonian (which holds H without the core energy). Exit 0 on
 * agreement, 1 on a mismatch. */
#include <hdf5.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: mtx_check MATRIX.mtx OUTPUT.h5 TOL\n");
    return 2;
  }
  double tol = atof(argv[3]);
  FILE *f = fopen(argv[1], "r");
  if (!f) return 2;
  char line[512];
  long n = 0, m = 0, nnz = 0;
  while (fgets(line, sizeof line, f))
    if (line[0] != '%' && sscanf(line, "%ld %ld %ld", &n, &m, &nnz) == 3) break;
  if (n <= 0 || n != m) return 2;
  double *A = calloc((size_t)(n * n), sizeof *A), *w = malloc((size_t)n * sizeof *w);
  for (long k = 0; k < nnz; k++) {
    long i, j;
    double v;
    if (fscanf(f, "%ld %ld %lf", &i, &j, &v) != 3) return 2;
    A[(i - 1) + (j - 1) * n] = A[(j - 1) + (i - 1) * n] = v;
  }
  fclose(f);
  if (LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'N', 'U', (lapack_int)n, A, (lapack_int)n, w) != 0) return 2;
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  hid_t h = H5Fopen(argv[2], H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t d = h >= 0 ? H5Dopen2(h, "/results/energies", H5P_DEFAULT) : -1;
  if (d < 0) {
    fprintf(stderr, "mtx_check: cannot read /results/energies from %s\n", argv[2]);
    return 1;
  }
  double ecore = 0.0;
  hid_t a = H5Aopen_by_name(h, "/problem", "ecore", H5P_DEFAULT, H5P_DEFAULT);
  if (a < 0 || H5Aread(a, H5T_NATIVE_DOUBLE, &ecore) < 0) {
    fprintf(stderr, "mtx_check: cannot read /problem@ecore from %s\n", argv[2]);
    return 1;
  }
  H5Aclose(a);
  hid_t s = H5Dget_space(d);
  hsize_t k = 0;
  H5Sget_simple_extent_dims(s, &k, NULL);
  double *e = malloc((size_t)k * sizeof *e);
  H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, e);
  H5Sclose(s);
  H5Dclose(d);
  H5Fclose(h);
  int bad = 0;
  for (hsize_t j = 0; j < k; j++) {
    double d = e[j] - ecore - w[j];
    int ok = fabs(d) <= tol;
    printf("eigenvalue %llu: cisolve %.14f  dsyevd %.14f  diff %+.2e %s\n", (unsigned long long)j,
           e[j], w[j] + ecore, d, ok ? "ok" : "MISMATCH");
    bad += !ok;
  }
  printf("%s: %llu eigenvalues compared\n", bad ? "FAIL" : "ok", (unsigned long long)k);
  free(A);
  free(w);
  free(e);
  return bad ? 1 : 0;
}
