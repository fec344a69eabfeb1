/* cisolve: the reference determinant of truncated CI (docs/usage.md, "Reference determinant").
 *
 * Truncated CI takes every determinant within N excitations of its reference, so the reference
 * must be the Hartree-Fock-like determinant, which in a file whose orbitals are sorted by irrep
 * (Molpro's order) is not the lowest-numbered orbitals. The rule, first that applies:
 *   1. given: --ref-det, or input.h5 /space/reference_alpha, reference_beta;
 *   2. the header's OCC= and CLOSED= (Molpro: occupied and doubly occupied orbitals per irrep):
 *      alpha electrons in the first OCC[g] orbitals of each irrep g (in file order), beta in the
 *      first CLOSED[g] (OCC[g] without CLOSED), when that gives the run's electron counts;
 *   3. aufbau by diagonal Fock energies: f_p(sigma) = h_pp + sum_q n_q (pp|qq) - sum_{q in
 *      sigma} (pq|qp) over the occupied orbitals q, each spin's electrons in its lowest f,
 *      repeated from the lowest h_pp until the occupation no longer changes (for canonical
 *      Hartree-Fock orbitals f_p is the orbital energy, so the Hartree-Fock determinant is the
 *      fixed point); where it cycles, the lowest diagonal energy among those visited.
 * Determinant strings are nw = cis_nwords(norb) words (base/problem.h).
 */
#ifndef CIS_REFDET_H
#define CIS_REFDET_H

#include <stddef.h>
#include <stdint.h>

#include "base/problem.h"

/* "0 1 2 5/0 1 2 5": 0-based occupied alpha / beta orbitals, as to_input_h5.py --reference
 * writes input.h5's reference. a, b: nw words each, set here. CIS_ERR_USAGE naming what is
 * wrong (not a number, beyond norb, repeated, wrong electron counts, no '/'). */
cis_err cis_refdet_parse(const char *text, const cis_integrals *ints, uint64_t *a, uint64_t *b);

/* Rules 2 then 3 above into a, b (nw words each); why: which rule, and why not OCC/CLOSED when
 * the header has them. */
cis_err cis_refdet_choose(const cis_integrals *ints, uint64_t *a, uint64_t *b, char *why,
                          size_t len);

/* <D|H|D> without the core energy. */
double cis_refdet_energy(const cis_integrals *ints, const uint64_t *a, const uint64_t *b);

/* "0 1 2 5/0 1 2 5" (the --ref-det syntax), cut with "..." past len. */
void cis_refdet_format(int norb, const uint64_t *a, const uint64_t *b, char *buf, size_t len);

#endif
