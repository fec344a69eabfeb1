/* cisolve: a CI Hamiltonian as a matrix-free operator (kernels/operator.h; --matrix-free).
 *
 * cis_hmat_rowgen_op_create: every product generates every row of H again with the row
 * generator (hamiltonian/rowgen.h: the same Slater-Condon rows, spin penalty included, that
 * the build stores) and multiplies it as it comes; nothing of the matrix is kept between
 * products. On a CPU backend on OpenMP threads, a row per step, with a row's scratch per
 * thread; on a CUDA backend by the device row generator (hamiltonian/rowgen_cuda.h), a warp per
 * row, which holds the generator's tables on the GPU (cis_hmat_rowgen_cuda_op_create). Its
 * products equal the stored hybrid matrix's (spmv/hyb_op.h) to rounding. A matrix built with
 * no_rows under several ranks multiplies its rank's rows [mf_begin, mf_end) and leaves the
 * others zero (kernels/dist_op.c gathers them). The diagonal and the Reference block are h's.
 *
 * Errors: CIS_ERR_USAGE for an explicit matrix (its rows are stored, not generated), or rows the
 * device generator does not take (the squared spin penalty: rowgen_cuda.h); CIS_ERR_NOT_COMPILED
 * for a device backend without CUDA. Ownership: h and be are borrowed and must outlive the
 * operator; cis_operator_destroy frees it.
 */
#ifndef CIS_HMAT_OP_H
#define CIS_HMAT_OP_H

#include "base/error.h"
#include "hamiltonian/hmat.h"
#include "hamiltonian/rowgen.h"
#include "kernels/operator.h"

cis_err cis_hmat_rowgen_op_create(const cis_hmat *h, cis_backend *be, cis_operator **out);

/* The CUDA half (hamiltonian/hmat_op_cuda.cu), for cis_hmat_rowgen_op_create. */
cis_err cis_hmat_rowgen_cuda_op_create(const cis_hmat *h, const cis_rowgen *g, cis_backend *be,
                                       cis_operator **out);

#endif
