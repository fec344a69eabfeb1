/* check_output OUTPUT.h5 [MAX_RESIDUAL]
 * Whether an output.h5 agrees with itself: a root flagged converged has a residual norm below
 * the tol_residual written in /options, and /results all_converged is 1 exactly when every root
 * is flagged. With MAX_RESIDUAL, every root's residual must also be below it. Prints each root
 * and "ok"; exit 0 when all holds, 1 otherwise. */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>

static int read_attr(hid_t f, const char *obj, const char *name, hid_t type, void *v) {
  hid_t a = H5Aopen_by_name(f, obj, name, H5P_DEFAULT, H5P_DEFAULT);
  int ok = a >= 0 && H5Aread(a, type, v) >= 0;
  if (a >= 0) H5Aclose(a);
  return ok;
}

static int read_ds(hid_t f, const char *name, hid_t type, void *v) {
  hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
  int ok = d >= 0 && H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0;
  if (d >= 0) H5Dclose(d);
  return ok;
}

int main(int argc, char **argv) {
  if (argc != 2 && argc != 3) {
    fprintf(stderr, "usage: check_output OUTPUT.h5 [MAX_RESIDUAL]\n");
    return 2;
  }
  double cap = argc == 3 ? atof(argv[2]) : 0.0, tol = -1;
  long long k = 0, all = -1;
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  hid_t f = H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0 || !read_attr(f, "/results", "nroots", H5T_NATIVE_LLONG, &k) || k < 1 || k > 100000 ||
      !read_attr(f, "/results", "all_converged", H5T_NATIVE_LLONG, &all) ||
      !read_attr(f, "/options", "tol_residual", H5T_NATIVE_DOUBLE, &tol)) {
    fprintf(stderr, "check_output: %s: cannot read /results or /options\n", argv[1]);
    return 1;
  }
  double *r = malloc((size_t)k * sizeof *r);
  signed char *c = malloc((size_t)k);
  if (!r || !c || !read_ds(f, "/results/residual_norms", H5T_NATIVE_DOUBLE, r) ||
      !read_ds(f, "/results/converged", H5T_NATIVE_SCHAR, c)) {
    fprintf(stderr, "check_output: %s: cannot read the residuals and flags\n", argv[1]);
    return 1;
  }
  int bad = 0, every = 1;
  for (long long j = 0; j < k; j++) {
    printf("root %lld residual %.3e converged %d\n", j, r[j], c[j]);
    every &= c[j] != 0;
    if (c[j] && !(r[j] < tol)) {
      printf("root %lld: flagged converged with residual %.3e, the criterion is %.3e\n", j, r[j],
             tol);
      bad = 1;
    }
    if (cap > 0 && !(r[j] < cap)) {
      printf("root %lld: residual %.3e, expected below %.3e\n", j, r[j], cap);
      bad = 1;
    }
  }
  if (all != every) {
    printf("all_converged %lld, but the flags say %d\n", all, every);
    bad = 1;
  }
  H5Fclose(f);
  free(r);
  free(c);
  printf(bad ? "INCONSISTENT\n" : "ok\n");
  return bad;
}
