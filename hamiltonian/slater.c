#include "hamiltonian/slater.h"

#include <string.h>

#include "base/util.h"

cis_err cis_sc_init(const cis_integrals *ints, cis_sc *sc) {
  cis_err err = CIS_OK;
  int n = ints->norb;
  memset(sc, 0, sizeof *sc);
  sc->norb = n;
  sc->npair = (int64_t)n * (n + 1) / 2;
  sc->h1e = ints->h1e;
  sc->eri = ints->eri;
  CIS_CHECK(ints->h1e && ints->eri, CIS_ERR_INPUT, "integrals are missing (h1e or eri)");
  CIS_CLEANUP_FUNCTION;
  CIS_TRY(cis_malloc(&sc->J, (size_t)n * n, sizeof(double), "Coulomb table J"));
  CIS_TRY(cis_malloc(&sc->K, (size_t)n * n, sizeof(double), "exchange table K"));
  for (int p = 0; p < n; p++)
    for (int q = 0; q < n; q++) {
      sc->J[p * n + q] = ints->eri[cis_eri_index(p, p, q, q)];
      sc->K[p * n + q] = ints->eri[cis_eri_index(p, q, q, p)];
    }
  if (n <= CIS_SC_VPP_MAX) {
    int64_t np = sc->npair;
    CIS_TRY(cis_malloc(&sc->vpp, (size_t)(np * np), sizeof(double), "pair-square integrals"));
#pragma omp parallel for schedule(static)
    for (int64_t P = 0; P < np; P++)
      for (int64_t Q = 0; Q < np; Q++) sc->vpp[P * np + Q] = ints->eri[cis_pair(P, Q)];
  }
cleanup:
  if (err) cis_sc_free(sc);
  return err;
}

void cis_sc_free(cis_sc *sc) {
  if (!sc) return;
  cis_free(&sc->vpp);
  cis_free(&sc->J);
  cis_free(&sc->K);
}

double cis_sc_string_energy(const cis_sc *sc, const int *occ, int n) {
  int no = sc->norb;
  double e = 0.0;
  for (int x = 0; x < n; x++) {
    int i = occ[x];
    e += sc->h1e[i * no + i];
    for (int y = 0; y < x; y++) e += sc->J[i * no + occ[y]] - sc->K[i * no + occ[y]];
  }
  return e;
}

double cis_sc_single_same(const cis_sc *sc, const int *occ, int n, int i, int a) {
  int64_t P = cis_pair(i, a);
  double v = sc->h1e[i * sc->norb + a];
  for (int x = 0; x < n; x++) {
    int k = occ[x];
    v += cis_sc_v(sc, P, cis_pair(k, k)) - cis_sc_eri(sc, i, k, k, a);
  }
  return v;
}
