/* Density matrices with their intermediates filled and multiplied on the CUDA backend against
 * the host's (hamiltonian/rdm.h, rdm_cuda.h): FCI (4,3) in 8 orbitals (3920 determinants, the
 * space its own closure), CISD (3,3) in 10 orbitals (the single-excitation closure), FCI (1,1)
 * in 65 orbitals (two words a string) and (3,1) in 12; seeded random vectors, bra == ket and
 * bra != ket, with the automatic block of rows, blocks of 333 rows (the last one short) and of 5
 * rows (the host's columns compacted). Every element of every block, and of the spin sums dm1 and
 * dm2 (one product of the summed intermediates), and <S^2> of the two vectors (cis_rdm_s2, the
 * dot of their intermediates) against cis_space_s2, within 1e-10. --small: the
 * first two cases (compute-sanitizer).
 * Exit 77 (skipped) when no CUDA device is usable.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "hamiltonian/rdm.h"
#include "kernels/backend.h"

#define TOL 1e-10

static int g_fail = 0;

static void die(cis_err e) {
  if (e != CIS_OK) {
    fprintf(stderr, "test_rdm_gpu: %s\n", cis_error_message());
    exit(1);
  }
}

static uint64_t g_rng = 88172645463325252ull;
static double urand(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return (double)(g_rng >> 11) / (double)(1ull << 53) * 2.0 - 1.0;
}

/* All six matrices of bra and ket on backend be (NULL: host) into m[6]. */
static void compute(const cis_space *s, cis_backend *be, const double *bra, const double *ket,
                    double **m) {
  int64_t n2 = (int64_t)cis_space_norb(s) * cis_space_norb(s);
  for (int b = 0; b < 6; b++) m[b] = calloc((size_t)(b < 2 ? n2 : n2 * n2), sizeof(double));
  cis_rdm_out o = {m[0], m[1], m[2], m[3], m[4], m[5], NULL, NULL};
  die(cis_rdm12s(s, be, bra, ket, &o));
}

/* nrows: how many of the block sizes (automatic, 333, 5) to try. */
static void run(const char *tag, int norb, int na, int nb, cis_space_kind kind, int level,
                int nrows) {
  static const char *names[6] = {"dm1a", "dm1b", "dm2aa", "dm2ab", "dm2ba", "dm2bb"};
  cis_integrals ints = {.norb = norb, .nalpha = na, .nbeta = nb};
  ints.h1e = calloc((size_t)norb * norb, sizeof(double));
  ints.eri = calloc((size_t)cis_eri_size(norb), sizeof(double));
  for (int p = 0; p < norb; p++) ints.h1e[p * norb + p] = -1.0 + 0.1 * p;
  cis_space_spec spec = {.kind = kind, .level = level};
  cis_space_opts so = {0};
  cis_space *s = NULL;
  die(cis_space_build(&ints, &spec, &so, &s));
  int64_t n = cis_space_ndet(s), n2 = (int64_t)norb * norb;
  double *ket = malloc(sizeof(double) * (size_t)n), *bra = malloc(sizeof(double) * (size_t)n);
  for (int64_t i = 0; i < n; i++) {
    ket[i] = urand();
    bra[i] = urand();
  }
  cis_backend *be = NULL;
  die(cis_backend_create_cuda(n, -1, &be));
  const int64_t rows[3] = {0, 333, 5};
  for (int t = 0; t < 2; t++)
    for (int r = 0; r < nrows; r++) {
      double *h[6], *d[6];
      cis_rdm_set_block_rows(rows[r]);
      compute(s, NULL, t ? bra : ket, ket, h);
      compute(s, be, t ? bra : ket, ket, d);
      { /* the spin sums, asked alone: one product of the summed intermediates */
        int64_t n4 = n2 * n2;
        double *d1 = calloc((size_t)n2, sizeof(double)), *d2 = calloc((size_t)n4, sizeof(double));
        cis_rdm_out o = {.dm1 = d1, .dm2 = d2};
        die(cis_rdm12s(s, be, t ? bra : ket, ket, &o));
        double e1 = 0.0, e2 = 0.0;
        for (int64_t i = 0; i < n2; i++) e1 = fmax(e1, fabs(h[0][i] + h[1][i] - d1[i]));
        for (int64_t i = 0; i < n4; i++)
          e2 = fmax(e2, fabs(h[2][i] + h[3][i] + h[4][i] + h[5][i] - d2[i]));
        if (!(e1 <= TOL && e2 <= TOL)) {
          fprintf(stderr, "FAIL %s %s, block rows %lld: spin sums GPU against host: dm1 %.3e, "
                  "dm2 %.3e\n", tag, t ? "bra|ket" : "ket|ket", (long long)rows[r], e1, e2);
          g_fail = 1;
        }
        free(d1);
        free(d2);
      }
      for (int b = 0; b < 6; b++) {
        double e = 0.0;
        for (int64_t i = 0; i < (b < 2 ? n2 : n2 * n2); i++) e = fmax(e, fabs(h[b][i] - d[b][i]));
        if (!(e <= TOL)) {
          fprintf(stderr, "FAIL %s %s, block rows %lld: %s GPU against host: %.3e\n", tag,
                  t ? "bra|ket" : "ket|ket", (long long)rows[r], names[b], e);
          g_fail = 1;
        }
        free(h[b]);
        free(d[b]);
      }
    }
  cis_rdm_set_block_rows(0);
  { /* <S^2> of the two vectors from the dot of their intermediates, against the host's */
    double *C = malloc(sizeof(double) * 2 * (size_t)n), h2[2], d2[2];
    memcpy(C, ket, sizeof(double) * (size_t)n);
    memcpy(C + n, bra, sizeof(double) * (size_t)n);
    die(cis_space_s2(s, 2, C, h2));
    die(cis_rdm_s2(s, be, 2, C, d2));
    for (int j = 0; j < 2; j++)
      if (!(fabs(h2[j] - d2[j]) <= TOL * fmax(1.0, fabs(h2[j])))) {
        fprintf(stderr, "FAIL %s: <S^2> of vector %d on the GPU %.15g, host %.15g\n", tag, j,
                d2[j], h2[j]);
        g_fail = 1;
      }
    free(C);
  }
  printf("%s: %lld determinants, GPU products and <S^2> matched the host's\n", tag, (long long)n);
  cis_backend_destroy(&be);
  cis_space_destroy(&s);
  free(ket);
  free(bra);
  free(ints.h1e);
  free(ints.eri);
}

/* --small: the first two cases only (for compute-sanitizer). */
int main(int argc, char **argv) {
  int small = argc > 1 && strcmp(argv[1], "--small") == 0;
  if (cis_backend_cuda_device_count() == 0) {
    printf("no usable CUDA device: skipped\n");
    return 77;
  }
  run("FCI (4,3) in 8 orbitals", 8, 4, 3, CIS_SPACE_FCI, 0, 3);
  run("CISD (3,3) in 10 orbitals", 10, 3, 3, CIS_SPACE_TRUNCATED, 2, 3);
  if (!small) {
    run("FCI (3,1) in 12 orbitals", 12, 3, 1, CIS_SPACE_FCI, 0, 2);
    run("FCI (1,1) in 65 orbitals", 65, 1, 1, CIS_SPACE_FCI, 0, 1);
  }
  return g_fail;
}
