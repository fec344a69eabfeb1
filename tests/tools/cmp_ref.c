/* cmp_ref OUTPUT.h5 REF.ref [TOL]
 *
 * Compares /results/energies of a cisolve output with the energies of a reference file
 * (tests/data/*.ref: '#' comment lines, then "root energy [s2]" per root) and checks that every
 * root converged. With a numeric s2 in the reference, /results/s2 must match to 1e-6.
 * Exit 0 when every root agrees within TOL (default 1e-8 Eh), 1 otherwise. */
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXR 256

static int read_1d(hid_t f, const char *name, hid_t type, void *buf, int max) {
  hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
  if (d < 0) return -1;
  hid_t s = H5Dget_space(d);
  hsize_t dims[2] = {0, 0};
  int nd = H5Sget_simple_extent_dims(s, dims, NULL);
  int n = nd == 1 ? (int)dims[0] : -1;
  if (n > max || n < 0 || H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) n = -1;
  H5Sclose(s);
  H5Dclose(d);
  return n;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: cmp_ref OUTPUT.h5 REF.ref [TOL]\n");
    return 2;
  }
  double tol = argc > 3 ? atof(argv[3]) : 1e-8;
  double ref_e[MAXR], ref_s2[MAXR];
  int nref = 0;
  FILE *fr = fopen(argv[2], "r");
  if (!fr) {
    fprintf(stderr, "cmp_ref: cannot open %s\n", argv[2]);
    return 2;
  }
  char line[1024];
  while (fgets(line, sizeof line, fr) && nref < MAXR) {
    if (line[0] == '#' || line[0] == '\n') continue;
    int root;
    char s2buf[64] = "nan";
    int got = sscanf(line, "%d %lf %63s", &root, &ref_e[nref], s2buf);
    if (got < 2) continue;
    ref_s2[nref] = strcmp(s2buf, "nan") == 0 ? NAN : atof(s2buf);
    nref++;
  }
  fclose(fr);
  if (nref == 0) {
    fprintf(stderr, "cmp_ref: no reference energies in %s\n", argv[2]);
    return 2;
  }
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  hid_t f = H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) {
    fprintf(stderr, "cmp_ref: cannot open %s\n", argv[1]);
    return 1;
  }
  double e[MAXR], s2[MAXR];
  signed char conv[MAXR];
  int ne = read_1d(f, "/results/energies", H5T_NATIVE_DOUBLE, e, MAXR);
  int ns = read_1d(f, "/results/s2", H5T_NATIVE_DOUBLE, s2, MAXR);
  int nc = read_1d(f, "/results/converged", H5T_NATIVE_SCHAR, conv, MAXR);
  H5Fclose(f);
  if (ne < nref || nc < nref) {
    fprintf(stderr, "cmp_ref: %s has %d energies, the reference %d\n", argv[1], ne, nref);
    return 1;
  }
  int bad = 0;
  for (int j = 0; j < nref; j++) {
    double d = e[j] - ref_e[j];
    int ok = fabs(d) <= tol && conv[j];
    printf("root %d: %.12f  reference %.12f  diff %+.2e %s\n", j, e[j], ref_e[j], d,
           ok ? "ok" : (conv[j] ? "MISMATCH" : "NOT CONVERGED"));
    bad += !ok;
    if (!isnan(ref_s2[j])) {
      int s2ok = ns > j && fabs(s2[j] - ref_s2[j]) <= 1e-6;
      printf("        <S^2> %.8f  reference %.8f %s\n", ns > j ? s2[j] : NAN, ref_s2[j],
             s2ok ? "ok" : "MISMATCH");
      bad += !s2ok;
    }
  }
  printf("%s: %d of %d roots checked, %d mismatches\n", bad ? "FAIL" : "ok", nref, nref, bad);
  return bad ? 1 : 0;
}
