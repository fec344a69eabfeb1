/* cisolve: Slater-Condon matrix elements from cis_integrals (private to hamiltonian/).
 *
 * Pair indices P = cis_pair(p, q) address (pq|rs) = V(P, Q). For norb <= CIS_SC_VPP_MAX the
 * pair-square V (npair x npair, 4-fold: 8 bytes * npair^2, 35 MB at norb = 64) is unpacked
 * once so that a row of V is contiguous in the hot loop; above that, the 8-fold packed array
 * is indexed directly. J(p,q) = (pp|qq) and K(p,q) = (pq|qp) serve the diagonal.
 *
 * Element formulas for a determinant |alpha>|beta> (signs: hamiltonian/strings.h):
 *   single alpha i->a: s_a * (h_ia + sum_{k in alpha} [(ia|kk) - (ik|ka)] + sum_{k in beta} (ia|kk))
 *   double alpha i->a, j->b (i<j, a<b): s * [(ai|bj) - (aj|bi)], s = sign of i->a then j->b
 *   double alpha i->a, beta j->b: s_a * s_b * (ai|bj)
 */
#ifndef CIS_SLATER_H
#define CIS_SLATER_H

#include <stdint.h>

#include "base/problem.h"

#define CIS_SC_VPP_MAX 64

typedef struct {
  int norb;
  int64_t npair;
  const double *h1e; /* borrowed */
  const double *eri; /* borrowed, 8-fold packed */
  double *vpp;       /* npair x npair, or NULL */
  double *J, *K;     /* norb x norb */
} cis_sc;

cis_err cis_sc_init(const cis_integrals *ints, cis_sc *sc);
void cis_sc_free(cis_sc *sc);

static inline double cis_sc_v(const cis_sc *sc, int64_t P, int64_t Q) {
  if (sc->vpp) return sc->vpp[P * sc->npair + Q];
  return sc->eri[cis_pair(P, Q)];
}
static inline double cis_sc_eri(const cis_sc *sc, int p, int q, int r, int s) {
  return cis_sc_v(sc, cis_pair(p, q), cis_pair(r, s));
}

/* h_ii and same-spin Coulomb minus exchange of one string (occ ascending, n of them). */
double cis_sc_string_energy(const cis_sc *sc, const int *occ, int n);
/* Same-spin part of a single i->a (no sign): h_ia + sum_{k in occ} [(ia|kk) - (ik|ka)]. */
double cis_sc_single_same(const cis_sc *sc, const int *occ, int n, int i, int a);
/* (ai|bj) - (aj|bi). */
static inline double cis_sc_double_same(const cis_sc *sc, int i, int j, int a, int b) {
  return cis_sc_eri(sc, a, i, b, j) - cis_sc_eri(sc, a, j, b, i);
}

#endif
