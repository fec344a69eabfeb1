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
#include "kernels/backend.h"

cis_err cis_rdm1(const cis_space *s, int k, const double *C, double *rdm);
/* Natural orbitals of each root's rdm (LAPACKE dsyevd): occupations occ (k x norb), descending,
 * and, unless vec is NULL, the orbitals vec (k x norb x norb, row-major per root): column i,
 * vec[v][p][i], holds orbital p's coefficient in natural orbital i, the sign chosen so that
 * its largest component (the first of equal ones) is positive. */
cis_err cis_natural_orbitals(int norb, int k, const double *rdm, double *occ, double *vec);
/* The occupations alone. */
cis_err cis_natural_occupations(int norb, int k, const double *rdm, double *occ);

/* Spin-resolved one- and two-particle (transition) density matrices, in PySCF's conventions
 * (pyscf.fci.direct_spin1.make_rdm12s / trans_rdm12s with reorder=True):
 *   dm1a[p,q]      = <bra| a+_pA a_qA |ket>
 *   dm2aa[p,q,r,s] = <bra| a+_pA a+_rA a_sA a_qA |ket>
 *   dm2ab[p,q,r,s] = <bra| a+_pA a+_rB a_sB a_qA |ket>
 *   dm2ba[p,q,r,s] = <bra| a+_pB a+_rA a_sA a_qB |ket>   (only differs from ab^T for bra != ket)
 *   dm2bb[p,q,r,s] = <bra| a+_pB a+_rB a_sB a_qB |ket>
 * Row-major, norb^2 / norb^4 doubles. */
typedef struct {
  double *dm1a, *dm1b;                   /* norb^2 each, NULL = not wanted */
  double *dm2aa, *dm2ab, *dm2ba, *dm2bb; /* norb^4 each, NULL = not wanted */
} cis_rdm_out;
/* bra and ket: host vectors of cis_space_ndet(s) in our order (bra == ket allowed: then the
 * ordinary RDMs). be: the backend whose block products (gemm) do the heavy part, or NULL for
 * the host. */
cis_err cis_rdm12s(const cis_space *s, cis_backend *be, const double *bra, const double *ket,
                   cis_rdm_out *out);

#endif
