/* cisolve: the operator the eigensolvers see (PETSc's Mat ops table, PRIMME's matvec pointer).
 *
 * An operator is a symmetric matrix A as the solver needs it: its product Y = A X with a block
 * of k >= 1 vectors that live on a backend (kernels/backend.h: n x k, column-major, leading
 * dimension n), its diagonal and the leading nref x nref block of A (the Reference block of the
 * preconditioner and the initial guess; nref may be 0), both host arrays. How A is stored, or
 * whether it is stored at all, is the implementation's business:
 *   spmv/hyb_op.c       the hybrid ELL + CSR matrix, products on the CPU (spmv/hyb.h)
 *   spmv/hyb_cuda_op.cu the same matrix uploaded to a CUDA device (spmv/hyb_cuda.h)
 *   kernels/dense_op.c  a dense host matrix, products with the backend's gemm (tests)
 *   hamiltonian/hmat_op.c every row generated again in every product (matrix-free, CPU)
 *   kernels/dist_op.c   rows split over MPI ranks, vectors too: another operator's rows
 * Adding one means a file that fills a cis_operator_ops and calls cis_operator_new; neither
 * solver/ nor the backends change (docs/solvers.md).
 *
 * Products go through cis_operator_apply, which checks the arguments, counts the
 * single-vector products and times them (n_matvec, t_matvec: the report's "matvec").
 *
 * On a backend that holds a part of the rows (kernels/backend.h, cis_backend_part: rows
 * [be->row0, be->row0 + be->n) of vectors of be->n_global), X and Y hold those rows and the
 * product is that of the whole vectors; diag and ref_block describe the whole matrix (diag has
 * be->n_global entries, diag_dev the part's).
 *
 * Ownership: the backend is borrowed and must outlive the operator; diag and ref_block are
 * borrowed from the creator unless the implementation says it owns them. cis_operator_destroy
 * frees the operator and leaves the pointer NULL.
 */
#ifndef CIS_OPERATOR_H
#define CIS_OPERATOR_H

#include <stdint.h>
#include <stdio.h>

#include "base/error.h"
#include "kernels/backend.h"

typedef struct cis_operator cis_operator;

typedef struct {
  /* Y = A X for k >= 1 vectors on op->be (Y overwritten; Y and X do not overlap). Returns when
   * Y is complete, as far as the backend's later operations can tell. */
  cis_err (*apply)(cis_operator *op, int k, const double *X, double *Y);
  /* Optional (may be NULL): the operator's own report lines (a device: where the matrix was
   * placed, and how the products' time split), in the driver's "label            text"
   * layout. */
  void (*report)(const cis_operator *op, FILE *out);
  /* Frees what impl holds (not the operator itself). */
  void (*destroy)(cis_operator *op);
} cis_operator_ops;

/* What the solver needs of a matrix besides its products (host arrays, borrowed). */
typedef struct {
  int64_t n;
  const double *diag;      /* n */
  int64_t nref;            /* the Reference block's order, 0..n */
  const double *ref_block; /* nref x nref, column-major (the upper triangle is read); NULL
                              when nref is 0 */
} cis_operator_info;

struct cis_operator {
  const cis_operator_ops *ops;
  cis_backend *be;          /* where X and Y live (borrowed) */
  int64_t n;
  const double *diag;
  int64_t nref;
  const double *ref_block;
  /* The diagonal on be, where the implementation keeps one (the solver copies it from there
   * instead of uploading diag): be->n entries, the part's rows; NULL: none. */
  const double *diag_dev;
  void *impl;
  /* Products since creation: single-vector products counted (k per apply) and their wall
   * time, seconds (cis_operator_apply). */
  int64_t n_matvec;
  double t_matvec;
};

/* For implementations: a zero-filled operator with these ops, on `be`, described by `info`
 * (checked: n equals be->n, 0 <= nref <= n, the arrays given where needed), impl NULL. */
cis_err cis_operator_new(const cis_operator_ops *ops, cis_backend *be,
                         const cis_operator_info *info, cis_operator **out);

/* Y = A X for k >= 1 vectors on op->be; counted and timed. */
cis_err cis_operator_apply(cis_operator *op, int k, const double *X, double *Y);
/* The operator's report lines, if it has any. */
void cis_operator_report(const cis_operator *op, FILE *out);
void cis_operator_destroy(cis_operator **op);

/* A dense symmetric host matrix A (n x n, column-major; copied) as an operator on `be`
 * (kernels/dense_op.c): products by the backend's gemm_nn, the diagonal and the leading
 * nref x nref block taken from A and owned by the operator. For tests and small problems. */
cis_err cis_dense_op_create(cis_backend *be, int64_t n, const double *A, int64_t nref,
                            cis_operator **out);

/* The operator of a run of several ranks (kernels/comm.h, kernels/dist_op.c): *local
 * multiplies this rank's rows, bounds[r] .. bounds[r+1] (ranks + 1 entries, the same on every
 * rank; the other rows of its products are ignored), of whole vectors, holding nnz_local
 * nonzeros. The operator returned works on this rank's rows of the vectors: its backend is the
 * part of (*local)->be that holds them (cis_backend_part, owned by the operator), and each
 * product gathers X's rows from every rank first. Takes *local (left NULL). Collective. */
/* Whole vectors such an operator gathers for one pass of the local operator, at most: its
 * products of more vectors run in passes of this many. */
#define CIS_DIST_CHUNK 8
/* started: a communicator between the ranks' GPUs whose set-up cis_nccl_start began (taken, left
 * NULL), or NULL: the operator sets one up where every rank is on a GPU. */
struct cis_nccl;
cis_err cis_dist_op_create(cis_operator **local, const int64_t *bounds, int64_t nnz_local,
                           struct cis_nccl **started, cis_operator **out);

#endif
