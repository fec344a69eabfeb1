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
/* Natural orbitals of each root's rdm (LAPACKE dsyevd): occupations occ (k x norb), descending,
 * and, unless vec is NULL, the orbitals vec (k x norb x norb, row-major per root): column i,
 * vec[v][p][i], holds orbital p's coefficient in natural orbital i, the sign chosen so that
 * its largest component (the first of equal ones) is positive. */
cis_err cis_natural_orbitals(int norb, int k, const double *rdm, double *occ, double *vec);
/* The occupations alone. */
cis_err cis_natural_occupations(int norb, int k, const double *rdm, double *occ);

#endif
