/* cisolve: spin-resolved one- and two-particle (transition) density matrices of CI vectors
 * over any determinant space, and natural orbitals.
 *
 * Conventions are PySCF's (pyscf.fci.direct_spin1.trans_rdm12s / make_rdm12s with
 * reorder=True, trans_rdm1s / make_rdm1s), for real vectors bra and ket:
 *   dm1a[p,q]      = <bra| a+_qA a_pA |ket>        (bra == ket: symmetric, <a+_p a_q>)
 *   dm2aa[p,q,r,s] = <bra| a+_pA a+_rA a_sA a_qA |ket>
 *   dm2ab[p,q,r,s] = <bra| a+_pA a+_rB a_sB a_qA |ket>
 *   dm2ba[p,q,r,s] = <bra| a+_pB a+_rA a_sA a_qB |ket> = dm2ab[r,s,p,q]
 *   dm2bb[p,q,r,s] = <bra| a+_pB a+_rB a_sB a_qB |ket>
 * (dm1b likewise), row-major, norb^2 and norb^4 doubles. The energy of bra == ket is
 * sum_pq h[p,q] dm1[q,p] + 1/2 sum_pqrs (pq|rs) dm2[p,q,r,s], with dm1 = dm1a + dm1b and
 * dm2 = aa + ab + ba + bb. The operators act on the vectors as they are: in a truncated space
 * these are the exact matrix elements between the two vectors (determinants outside the space
 * have no weight), which is PySCF's FCI result for the vectors embedded in FCI.
 *
 * Method: with E_pq = a+_p a_q of one spin and the intermediates t[K][pq] = <K|E_pq|v> over a
 * set K of determinants closed under one single excitation of the space (the space itself for
 * FCI; its single-excitation closure otherwise, found here),
 *   <bra|E_pq E_rs|ket> = sum_K <bra|E_pq|K> <K|E_rs|ket>,
 *   a+_p a+_r a_s a_q = E_pq E_rs - delta_qr E_ps (same spin),  = E^A_pq E^B_rs (opposite),
 * so each spin block is a product of two (K x norb^2) intermediates (the spin sum, asked alone,
 * one product of the intermediates of E_pq = E^A_pq + E^B_pq), formed a block of rows of
 * K at a time: where the backend is a GPU's (a CUDA build), filled on the GPU (at most
 * CIS_RDM_DEVICE_BLOCK_BYTES of them; hamiltonian/rdm_cuda.h) and multiplied there with cuBLAS;
 * otherwise filled on the host with OpenMP (at most CIS_RDM_BLOCK_BYTES) and multiplied with the
 * host's BLAS. The one-particle matrices alone need no intermediates and come from the space's
 * own single excitations.
 */
#ifndef CIS_RDM_H
#define CIS_RDM_H

#include "base/error.h"
#include "hamiltonian/space.h"
#include "kernels/backend.h"

typedef struct {
  double *dm1a, *dm1b;                   /* norb^2 each, NULL = not wanted */
  double *dm2aa, *dm2ab, *dm2ba, *dm2bb; /* norb^4 each, NULL = not wanted */
  double *dm1, *dm2; /* the spin sums dm1a + dm1b, dm2aa + dm2ab + dm2ba + dm2bb (PySCF's
                      * make_rdm12), NULL = not wanted; dm2 with neither a spin block nor dm1a,
                      * dm1b: one product of the summed intermediates, else the blocks' sum */
} cis_rdm_out;

/* The memory one block of intermediates may take: filled on the host (as much again on a
 * device that multiplies them), filled on a device. */
#define CIS_RDM_BLOCK_BYTES ((int64_t)128 << 20)
#define CIS_RDM_DEVICE_BLOCK_BYTES ((int64_t)1 << 30)

/* Density matrices of bra and ket: host vectors of cis_space_ndet(s) in our order (bra == ket
 * allowed: then the ordinary RDMs). be: the backend whose block products (gemm_tn) do the
 * heavy part when its vectors live on a device; NULL, or a CPU backend: the host's BLAS.
 * Outputs are written whole (the caller allocates them).
 * Errors: CIS_ERR_NOMEM naming what would not fit (the closure's strings and rows, the string
 * lists' single excitations, a block of intermediates) before it is allocated; CIS_ERR_INPUT
 * for more than 32767 orbitals; the backend's errors. */
cis_err cis_rdm12s(const cis_space *s, cis_backend *be, const double *bra, const double *ket,
                   cis_rdm_out *out);

/* <S^2> of k vectors C (host, cis_space_ndet(s) x k in our order; 0 for a zero vector), as
 * cis_space_s2 gives it: on be's GPU where be is a CUDA backend (S^2 = Sz(Sz+1) + N_beta -
 * sum_pq dm2ab[p,q,q,p], the sum a dot product of the intermediates of E^A and E^B), else,
 * or when the device has no room for a block of them, cis_space_s2 on the host. */
cis_err cis_rdm_s2(const cis_space *s, cis_backend *be, int k, const double *C, double *s2);

/* Natural orbitals of k spin-summed one-particle density matrices (k x norb x norb, symmetric):
 * occupations occ (k x norb), descending, and, when vec is not NULL, the orbitals (k x norb x
 * norb, row-major; column i of root j's matrix is the orbital of occupation occ[j][i] in the
 * basis of the input orbitals, its largest component positive). LAPACKE dsyevd. */
cis_err cis_natural_orbitals(int norb, int k, const double *rdm, double *occ, double *vec);

/* Rows of K per block (0: from CIS_RDM_BLOCK_BYTES, the default); tests set a few to check
 * the blocking. */
void cis_rdm_set_block_rows(int64_t rows);

#endif
