/* test_symmetry FCIDUMP NBITS [--scramble-orbsym]
 *
 * The symmetries found in the integrals (hamiltonian/symmetry.c) and the Reference states built
 * on them (solver/refblock.c cis_refstates_make), against what does not depend on either:
 *  - NBITS independent symmetries (the point group's: 3 for D2h, 2 for C2v), each conserved by
 *    every integral above CIS_SYM_ZERO, and the file's ORBSYM (PySCF's irreps) among them; with
 *    --scramble-orbsym two orbitals of different irreps swap ORBSYM labels, which must be
 *    reported as not a symmetry;
 *  - H_PP couples only determinants of equal labels;
 *  - every Reference state is a normalised eigenvector of H_PP, and each of the 24 lowest has a
 *    spin: <S^2> = S(S+1) (cis_space_s2) with, for Ms = 0, S even in even blocks and odd in odd
 *    ones.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "hamiltonian/hmat.h"
#include "hamiltonian/symmetry.h"
#include "io/input.h"
#include "solver/refblock.h"
#include "tests/tools/expect.h"

/* Every nonzero integral conserves the labels. */
static void check_conserved(const cis_integrals *in, const cis_orbsym *y) {
  int n = in->norb;
  int64_t bad = 0, idx = 0;
  for (int p = 0; p < n; p++)
    for (int q = 0; q < n; q++)
      bad += fabs(in->h1e[p * n + q]) > CIS_SYM_ZERO && y->orb[p] != y->orb[q];
  for (int p = 0; p < n; p++)
    for (int q = 0; q <= p; q++)
      for (int r = 0; r < n; r++)
        for (int s = 0; s <= r; s++) {
          if (cis_pair(p, q) < cis_pair(r, s)) continue;
          idx = cis_eri_index(p, q, r, s);
          bad += fabs(in->eri[idx]) > CIS_SYM_ZERO &&
                 (y->orb[p] ^ y->orb[q] ^ y->orb[r] ^ y->orb[s]) != 0;
        }
  EXPECT(bad == 0, "%ld integrals break the labels found", (long)bad);
}

static void check_states(const cis_hmat *h, const cis_refstates *st) {
  int64_t m = h->npre, n = h->n;
  int ms0 = cis_space_nalpha(h->space) == cis_space_nbeta(h->space);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < m; j++)
      if (h->ref_label[i] != h->ref_label[j])
        EXPECT(fabs(h->hpp[i + j * m]) <= 1e-9, "H_PP(%ld,%ld) = %.3e joins labels", (long)i,
               (long)j, h->hpp[i + j * m]);
  int ns = st->m < 24 ? st->m : 24; /* <S^2> of the lowest states, in one pass */
  double *x = calloc((size_t)(n * ns), sizeof *x), s2all[24];
  if (!x) return;
  for (int c = 0; c < ns; c++)
    memcpy(x + (int64_t)c * n, st->U + (int64_t)c * m, (size_t)m * sizeof *x);
  if (cis_space_s2(h->space, ns, x, s2all) != CIS_OK) return;
  int parity_seen[3] = {0, 0, 0};
  for (int c = 0; c < st->m; c++) {
    const double *u = st->U + (int64_t)c * m;
    double r = 0.0, norm = 0.0;
    for (int64_t i = 0; i < m; i++) {
      double v = 0.0;
      for (int64_t j = 0; j < m; j++) v += h->hpp[i + j * m] * u[j];
      r += (v - st->lam[c] * u[i]) * (v - st->lam[c] * u[i]);
      norm += u[i] * u[i];
    }
    EXPECT(sqrt(r) < 1e-8 && fabs(norm - 1.0) < 1e-10, "state %d: residual %.2e, norm %.12f", c,
           sqrt(r), norm);
    EXPECT(c == 0 || st->lam[c] >= st->lam[c - 1], "states not ascending at %d", c);
    if (c >= ns) continue;
    double s2 = s2all[c], S = 0.5 * (sqrt(1.0 + 4.0 * s2) - 1.0), twoS = 2.0 * S;
    EXPECT(fabs(twoS - floor(twoS + 0.5)) < 1e-6, "state %d: <S^2> = %.8f is not S(S+1)", c, s2);
    int par = st->bparity[st->block[c]];
    parity_seen[par + 1]++;
    if (ms0 && par != 0)
      EXPECT(((int)floor(S + 0.5) % 2 == 0) == (par > 0), "state %d: S = %g in a block of parity %d",
             c, S, par);
  }
  if (ms0) EXPECT(parity_seen[0] && parity_seen[2], "Ms = 0: the lowest states lack a parity");
  printf("%d Reference states in %d blocks (even %d, odd %d, no parity %d)\n", st->m, st->nblocks,
         parity_seen[2], parity_seen[0], parity_seen[1]);
  free(x);

}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: test_symmetry FCIDUMP NBITS [--scramble-orbsym]\n");
    return 2;
  }
  int nbits = atoi(argv[2]), scramble = argc > 3 && !strcmp(argv[3], "--scramble-orbsym");
  cis_problem p;
  memset(&p, 0, sizeof p);
  if (cis_input_read(argv[1], &p)) {
    cis_error_print(1);
    return 1;
  }
  cis_integrals *in = &p.ints;
  if (scramble) {
    int a = 0, b = 1;
    while (b < in->norb && in->orbsym[b] == in->orbsym[a]) b++;
    if (b == in->norb) return 2;
    int t = in->orbsym[a];
    in->orbsym[a] = in->orbsym[b];
    in->orbsym[b] = t;
  }
  cis_orbsym y;
  if (cis_orbsym_find(in, &y)) {
    cis_error_print(1);
    return 1;
  }
  printf("%s: %d symmetries, ORBSYM status %d (%d bits)\n", argv[1], y.nbits, (int)y.orbsym,
         y.orbsym_bits);
  EXPECT(y.nbits == nbits, "%d symmetries found, expected %d", y.nbits, nbits);
  check_conserved(in, &y);
  if (scramble) {
    EXPECT(y.orbsym == CIS_ORBSYM_BROKEN, "a scrambled ORBSYM passed as a symmetry");
  } else {
    EXPECT(y.orbsym == CIS_ORBSYM_AGREES && y.orbsym_bits == nbits, "ORBSYM (%d bits) disagrees",
           y.orbsym_bits);
    cis_space_spec spec = {.kind = CIS_SPACE_FCI};
    cis_space_opts so = {0, 0, 0};
    cis_hmat_opts ho = {.host_cache = 1 << 30};
    cis_space *s = NULL;
    cis_hmat *h = NULL;
    cis_refstates st;
    cis_refsym sym;
    if (cis_space_build(in, &spec, &so, &s) || cis_hmat_build_ci(in, s, &ho, &h)) {
      cis_error_print(1);
      return 1;
    }
    sym = (cis_refsym){h->ref_label, h->ref_partner, h->ref_bound};
    if (cis_refstates_make(h->npre, h->hpp, &sym, &st)) {
      cis_error_print(1);
      return 1;
    }
    check_states(h, &st);
    cis_refstates_free(&st);
    cis_hmat_destroy(&h);
    cis_space_destroy(&s);
  }
  cis_orbsym_free(&y);
  cis_problem_free(&p);
  return cis_test_summary();
}
