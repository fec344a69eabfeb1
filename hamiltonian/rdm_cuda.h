/* cisolve: the density matrices' intermediates filled on a CUDA device (private to
 * hamiltonian/rdm.c).
 *
 * The tables of a set of rows (hamiltonian/rdm_impl.h: the strings, their single excitations,
 * the space's alpha-major lookup, the closure's maps) copied to the device of a CUDA backend,
 * and a kernel that fills a block of rows of a vector's intermediates there, a thread per row,
 * with the terms rdm.c's row_terms writes on the host: the block never passes through the host,
 * and the products (the backend's gemm_tn) read it where it is made.
 *
 * Ownership: the device copies are the struct's; R is not needed after creation.
 */
#ifndef CIS_RDM_CUDA_H
#define CIS_RDM_CUDA_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "base/error.h"
#include "hamiltonian/rdm_impl.h"
#include "kernels/backend.h"

typedef struct cis_rdm_cuda cis_rdm_cuda;

/* The tables of R on the device of be (a CUDA backend), its work on be's stream. */
cis_err cis_rdm_cuda_create(const rdm_rows *R, cis_backend *be, cis_rdm_cuda **out);
void cis_rdm_cuda_destroy(cis_rdm_cuda **d);

/* Rows [k0, k0 + cur) of the intermediates of v (the space's ndet values, on the device):
 * XA[pq * cur + r] = <K_r|E^A_pq|v>, XB likewise, every one of the norb^2 columns written (zero
 * where no term reaches); XA == XB: their sum <K_r|E_pq|v>. With w_rows: w_rows[r] = w[K_r], the other vector's value at row r
 * (0 where K_r is outside the space), so that <w|E_pq|v> over the block is a product. Device
 * arrays, ordered on the backend's stream. */
cis_err cis_rdm_cuda_fill(const cis_rdm_cuda *d, int64_t k0, int64_t cur, const double *v,
                          double *XA, double *XB, const double *w, double *w_rows);

#ifdef __cplusplus
}
#endif

#endif
