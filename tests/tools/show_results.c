/* show_results OUTPUT.h5
 * Prints the energies of a cisolve output in the reference-file format of tests/data/*.ref
 * ("root energy"), preceded by "# matvecs N" and "# iterations N" comment lines, so that one
 * run's results can serve as the reference of another (restart tests). */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: show_results OUTPUT.h5\n");
    return 2;
  }
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  hid_t f = H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t g = f >= 0 ? H5Gopen2(f, "/results", H5P_DEFAULT) : -1;
  hid_t d = g >= 0 ? H5Dopen2(g, "energies", H5P_DEFAULT) : -1;
  if (d < 0) {
    fprintf(stderr, "show_results: cannot read /results/energies of %s\n", argv[1]);
    return 1;
  }
  long long mv = -1, it = -1;
  hid_t a = H5Aopen(g, "matvecs", H5P_DEFAULT);
  if (a >= 0) H5Aread(a, H5T_NATIVE_LLONG, &mv), H5Aclose(a);
  a = H5Aopen(g, "iterations", H5P_DEFAULT);
  if (a >= 0) H5Aread(a, H5T_NATIVE_LLONG, &it), H5Aclose(a);
  hid_t s = H5Dget_space(d);
  hsize_t k = 0;
  H5Sget_simple_extent_dims(s, &k, NULL);
  double *e = malloc((size_t)k * sizeof *e);
  if (!e || H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, e) < 0) return 1;
  printf("# matvecs %lld\n# iterations %lld\n", mv, it);
  for (hsize_t j = 0; j < k; j++) printf("%llu %.14f\n", (unsigned long long)j, e[j]);
  free(e);
  H5Sclose(s);
  H5Dclose(d);
  H5Gclose(g);
  H5Fclose(f);
  return 0;
}
