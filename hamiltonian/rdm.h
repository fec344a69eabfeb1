/* cisolve: one-particle density matrices of CI vectors over a determinant space.
 *
 * gamma_pq = sum_sigma <Psi| a+_p,sigma a_q,sigma |Psi> (spin-summed), from the single
 * excitations that stay inside the space (in a truncated space only in-space terms count).
 * Natural occupations are its eigenvalues, descending; they sum to the electron count for a
 * normalised vector.
 *
 * Input: k host vectors C (n x k, ld n, our determinant order). Output: rdm (k x norb x norb,
 * row-major per root) and occ (k x norb), both allocated by the caller.
 */
#ifndef CIS_RDM_H
#define CIS_RDM_H

#include "base/error.h"
#include "hamiltonian/space.h"

cis_err cis_rdm1(const cis_space *s, int k, const double *C, double *rdm);
/* Eigenvalues of each root's rdm (LAPACKE dsyevd), descending. */
cis_err cis_natural_occupations(int norb, int k, const double *rdm, double *occ);

#endif
