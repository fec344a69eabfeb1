/* cisolve: the row generator on a CUDA device (private to hamiltonian/; docs/gpu.md).
 *
 * The host generator's tables (hamiltonian/rowgen.h: string link tables, pair classes, the
 * space's alpha-major lookup, the pair-square integrals or the packed ones) copied to the device,
 * and kernels that generate the same rows there: a group of lanes per row (a warp; 4 lanes in
 * products), the lanes taking a row's candidates
 * (alpha singles times beta singles, beta singles, same-spin doubles) a lane each in the host's
 * order, each kept when its column is in the space and |H_ij| > CIS_ROWGEN_DROP, with
 * the value the host computes by the same expression. The diagonal (the space's, plus the spin
 * penalty's) is taken from the host.
 *  - count and fill: rows into a device CSR (the entries of columns >= min_col), each row in a
 *    fixed order (the host's, but for the alpha-beta doubles' lanes);
 *  - apply: Y[r, j] += (row r, columns >= min_col) x_j, each row multiplied as it is generated,
 *    no entry stored: the product of the Expansion blocks that a GPU does not keep.
 * Not on the device (cis_rowgen_cuda_why says so, and the host's generator does the work): the
 * squared spin penalty (a spin above the lowest of the space's Ms), more than
 * CIS_ROWGEN_CUDA_MAX_NORB orbitals, more than 2^31 - 1 determinants.
 *
 * Ownership: the device generator owns its device copies; the host generator is not needed
 * after creation.
 */
#ifndef CIS_ROWGEN_CUDA_H
#define CIS_ROWGEN_CUDA_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "base/error.h"
#include "hamiltonian/rowgen.h"
#include "spmv/hyb.h"

/* Two occupation lists of this many pairs fit a warp's shared memory. */
#define CIS_ROWGEN_CUDA_MAX_NORB 1024

typedef struct cis_rowgen_cuda cis_rowgen_cuda;

/* NULL when g's rows can be generated on the device, else why not. */
const char *cis_rowgen_cuda_why(const cis_rowgen *g);
/* Device bytes a generator of g takes. */
int64_t cis_rowgen_cuda_bytes(const cis_rowgen *g);
/* On the current device; CIS_ERR_USAGE (with cis_rowgen_cuda_why's reason) where it cannot. */
cis_err cis_rowgen_cuda_create(const cis_rowgen *g, cis_rowgen_cuda **out);
/* The same on CUDA device `device` (< 0: 0), made the calling thread's current device;
 * CIS_ERR_RESOURCE when it is not usable. */
cis_err cis_rowgen_cuda_create_on(const cis_rowgen *g, int device, cis_rowgen_cuda **out);
void cis_rowgen_cuda_destroy(cis_rowgen_cuda **d);
/* Device bytes it holds. */
int64_t cis_rowgen_cuda_size(const cis_rowgen_cuda *d);
/* The diagonal it holds on the device (ndet values, our order, with the spin penalty's part). */
const double *cis_rowgen_cuda_diag(const cis_rowgen_cuda *d);
/* The lanes that generate a row in products (4, 8, 16 or 32; count and fill take 32): 4 by
 * default (fewer where shared memory is short: rowgen_cuda.cu lanes_for); set (tests,
 * benchmarks). */
int cis_rowgen_cuda_lanes(const cis_rowgen_cuda *d);
cis_err cis_rowgen_cuda_set_lanes(cis_rowgen_cuda *d, int lanes);

/* Entries of rows [row0, row0 + nrows) in columns >= min_col (the diagonal always counted when
 * row >= min_col) into len[nrows]; then, at rowptr[l] - rowptr[0], their columns and values.
 * Device arrays, on `stream` (a cudaStream_t; NULL: the legacy stream). */
cis_err cis_rowgen_cuda_count(const cis_rowgen_cuda *d, int64_t row0, int64_t nrows,
                              int64_t min_col, int32_t *len, void *stream);
cis_err cis_rowgen_cuda_fill(const cis_rowgen_cuda *d, int64_t row0, int64_t nrows,
                             int64_t min_col, const int64_t *rowptr, int32_t *col, double *val,
                             void *stream);
/* Y[r, j] += (entries of row r in columns >= min_col) x_j, r in [row0, row0 + nrows),
 * j < k <= 8; x the vector (k = 1), or k vectors interleaved (ldx 0: x[c * k + j]) or
 * column-major (x[j * ldx + c]); Y column-major, leading dimension ldy. Device arrays, on
 * `stream`. */
cis_err cis_rowgen_cuda_apply(const cis_rowgen_cuda *d, int64_t row0, int64_t nrows,
                              int64_t min_col, int k, const double *x, int64_t ldx, double *Y,
                              int64_t ldy, void *stream);

/* A matrix built on the device (docs/gpu.md): for rows [row0, row0 + nrows), host arrays of
 * nrows: each row's entries in columns < nref (the Reference region: ell_len), its other ones
 * (exp_len), and of them those whose magnitude `dict` codes (exp_coded; 0 without a dictionary),
 * counted as cis_rowgen_cuda_place stores them. */
struct cis_vdict;
cis_err cis_rowgen_cuda_census(const cis_rowgen_cuda *d, int64_t row0, int64_t nrows,
                               const struct cis_vdict *dict, int32_t *ell_len, int32_t *exp_len,
                               int32_t *exp_coded);
/* The rows of L written into the device layouts it describes (spmv/hyb.h cis_dev_layout), on
 * `stream`, which it waits for; ell_len: each row's Reference entries (device, n). */
cis_err cis_rowgen_cuda_place(const cis_rowgen_cuda *d, const cis_dev_layout *L,
                              const int32_t *ell_len, void *stream);

/* cis_regen_dev_fn (spmv/hyb.h) of a cis_rowgen: the Expansion rows (columns >= nref). */
cis_err cis_rowgen_regen_dev(void *ctx, int64_t *bytes, char *why, cis_regen_dev **out);

#ifdef __cplusplus
}
#endif

#endif
