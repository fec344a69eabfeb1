/* cisolve: the exact symmetries of H that a determinant carries, found from the integrals.
 *
 * An orbital label g_p in Z2^nbits is a symmetry of H when every nonzero integral conserves it:
 * g_p = g_q for h_pq != 0 and g_p ^ g_q ^ g_r ^ g_s = 0 for (pq|rs) != 0. A determinant's label
 * is then the XOR of the labels of its occupied spin-orbitals, and H never couples determinants
 * of different labels. The abelian point groups (D2h and its subgroups, whose irreps FCIDUMP's
 * ORBSYM numbers) are such symmetries, and so is any other one the integrals have, whether or
 * not the file says so. cis_orbsym_find solves the conditions over GF(2) and keeps every
 * independent solution (up to 63), with orbital 0's label fixed at 0 (labels are defined up to
 * the electron-count parity, which is the same for every determinant of a space).
 *
 * Ownership: cis_orbsym_find fills *out; cis_orbsym_free releases it.
 */
#ifndef CIS_SYMMETRY_H
#define CIS_SYMMETRY_H

#include <stdint.h>

#include "base/problem.h"

/* Integrals of magnitude at most this are treated as zero by the symmetry search. */
#define CIS_SYM_ZERO 1e-10

typedef enum {
  CIS_ORBSYM_ABSENT = 0,   /* the file has no ORBSYM (or only one irrep) */
  CIS_ORBSYM_AGREES,       /* every ORBSYM symmetry is one of those found */
  CIS_ORBSYM_BROKEN        /* the integrals do not have ORBSYM's symmetry */
} cis_orbsym_status;

typedef struct {
  int norb;
  int nbits;        /* independent Z2 symmetries found */
  uint64_t *orb;    /* norb labels */
  cis_orbsym_status orbsym; /* how the file's ORBSYM compares */
  int orbsym_bits;  /* independent symmetries ORBSYM states */
} cis_orbsym;

cis_err cis_orbsym_find(const cis_integrals *ints, cis_orbsym *out);
void cis_orbsym_free(cis_orbsym *o);

/* Label of an occupation string of nw words. */
static inline uint64_t cis_orbsym_string(const cis_orbsym *o, const uint64_t *s, int nw) {
  uint64_t g = 0;
  for (int w = 0; w < nw; w++)
    for (uint64_t x = s[w]; x; x &= x - 1) g ^= o->orb[w * 64 + __builtin_ctzll(x)];
  return g;
}

#endif
