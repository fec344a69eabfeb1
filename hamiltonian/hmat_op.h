/* cisolve: a CI Hamiltonian as a matrix-free operator (kernels/operator.h).
 *
 * cis_hmat_rowgen_op_create: every product generates every row of H again with the row
 * generator (hamiltonian/rowgen.h: the same Slater-Condon rows, spin penalty included, that
 * the build stores) and multiplies it as it comes, on OpenMP threads, a row per step; nothing
 * of the matrix is kept between products, only a row's scratch per thread. Its products equal
 * the stored hybrid matrix's (spmv/hyb_op.h) to rounding. The diagonal and the Reference block
 * are h's. The vectors must live on the host (a CPU backend).
 *
 * Errors: CIS_ERR_USAGE for an explicit matrix (its rows are stored, not generated) or a
 * device backend. Ownership: h and be are borrowed and must outlive the operator;
 * cis_operator_destroy frees it.
 */
#ifndef CIS_HMAT_OP_H
#define CIS_HMAT_OP_H

#include "base/error.h"
#include "hamiltonian/hmat.h"
#include "kernels/operator.h"

cis_err cis_hmat_rowgen_op_create(const cis_hmat *h, cis_backend *be, cis_operator **out);

#endif
