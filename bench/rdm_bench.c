/* Time of cis_rdm12s (hamiltonian/rdm.h) on an FCI vector, for comparison with PySCF's
 * direct_spin1.make_rdm12s on the same vector (bench/rdm_pyscf.py).
 *
 * usage: rdm_bench NORB NALPHA NBETA [--gpu] [--reps R] [--out PREFIX]
 * A seeded random normalised vector over FCI (diagonal one-electron integrals: the order of the
 * determinants does not matter here); the best of R calls (default 3) of cis_rdm12s with every
 * spin block (dm1a, dm1b, dm2aa, dm2ab, dm2bb), on the host's BLAS or (--gpu) the CUDA
 * backend's. --out writes PREFIX.vec (the vector in PySCF's layout, na_strings x nb_strings,
 * float64) and PREFIX.rdm (dm1a, dm1b, dm2aa, dm2ab, dm2bb, float64) for rdm_pyscf.py.
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "hamiltonian/rdm.h"
#include "hamiltonian/space_impl.h"

static void die(cis_err e) {
  if (e != CIS_OK) {
    fprintf(stderr, "rdm_bench: %s\n", cis_error_message());
    exit(1);
  }
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: rdm_bench NORB NALPHA NBETA [--gpu] [--reps R] [--out PREFIX]\n");
    return 2;
  }
  int norb = atoi(argv[1]), gpu = 0, reps = 3;
  const char *out = NULL;
  cis_integrals ints = {.norb = norb, .nalpha = atoi(argv[2]), .nbeta = atoi(argv[3])};
  for (int i = 4; i < argc; i++) {
    if (strcmp(argv[i], "--gpu") == 0)
      gpu = 1;
    else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
      reps = atoi(argv[++i]);
    else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
      out = argv[++i];
  }
  ints.h1e = calloc((size_t)norb * norb, sizeof(double));
  ints.eri = calloc((size_t)cis_eri_size(norb), sizeof(double));
  for (int p = 0; p < norb; p++) ints.h1e[p * norb + p] = -1.0 + 0.1 * p;
  cis_space_spec spec = {.kind = CIS_SPACE_FCI};
  cis_space_opts so = {0};
  cis_space *s = NULL;
  die(cis_space_build(&ints, &spec, &so, &s));
  int64_t n = cis_space_ndet(s), n2 = (int64_t)norb * norb;
  double *c = malloc(sizeof *c * (size_t)n), nrm = 0.0;
  uint64_t x = 88172645463325252ull;
  for (int64_t i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    c[i] = (double)(x >> 11) / (double)(1ull << 53) - 0.5;
    nrm += c[i] * c[i];
  }
  for (int64_t i = 0; i < n; i++) c[i] /= sqrt(nrm);
  cis_backend *be = NULL;
  if (gpu) die(cis_backend_create_cuda(n, -1, &be));
  double *m[5];
  for (int b = 0; b < 5; b++) m[b] = calloc((size_t)(b < 2 ? n2 : n2 * n2), sizeof(double));
  cis_rdm_out o = {m[0], m[1], m[2], m[3], NULL, m[4], NULL, NULL};
  double best = 1e30;
  for (int r = 0; r < reps; r++) {
    double t0 = cis_wtime();
    die(cis_rdm12s(s, be, c, c, &o));
    best = fmin(best, cis_wtime() - t0);
  }
  printf("cis_rdm12s FCI (%d,%d) in %d orbitals, %lld determinants, %s, %d threads: %.3f s "
         "(best of %d)\n", ints.nalpha, ints.nbeta, norb, (long long)n,
         be ? be->desc : "host BLAS", omp_get_max_threads(), best, reps);
  if (out) { /* PySCF's layout: strings ascending as integers, element ia * nb + ib */
    char path[4096];
    int64_t nb = s->bstr.n;
    double *v = calloc((size_t)n, sizeof *v);
    for (int64_t d = 0; d < n; d++) v[(int64_t)s->det_ia[d] * nb + s->det_ib[d]] = c[d];
    snprintf(path, sizeof path, "%s.vec", out);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(v, sizeof *v, (size_t)n, f) != (size_t)n || fclose(f)) return 1;
    snprintf(path, sizeof path, "%s.rdm", out);
    f = fopen(path, "wb");
    for (int b = 0; f && b < 5; b++) fwrite(m[b], sizeof(double), (size_t)(b < 2 ? n2 : n2 * n2), f);
    if (!f || fclose(f)) return 1;
    free(v);
  }
  cis_backend_destroy(&be);
  for (int b = 0; b < 5; b++) free(m[b]);
  free(c);
  cis_space_destroy(&s);
  free(ints.h1e);
  free(ints.eri);
  return 0;
}
