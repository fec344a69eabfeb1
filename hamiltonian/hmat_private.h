/* cisolve: the rules a Hamiltonian build decides by, shared by the build (hmat.c) and its plan
 * (hmat.c for CI matrices, hmat_csr.c for explicit ones) and its plan (hmat_plan.c,
 * --dry-run), so that a plan takes the build's decisions by the build's own functions. Private
 * to hamiltonian/. */
#ifndef CIS_HMAT_PRIVATE_H
#define CIS_HMAT_PRIVATE_H

#include <stdint.h>

#include "hamiltonian/hmat.h"
#include "hamiltonian/rowgen.h"

#define CIS_ELL_SLICE 32       /* rows per ELL slice */
#define CIS_BUILD_SAMPLE 512  /* rows a CI build samples to choose its blocks and budget */
#define CIS_PLAN_SAMPLE 16384 /* rows a plan samples to estimate the nonzeros */
#define CIS_PLAN_SLICES 1024   /* ELL slices a plan samples to estimate their padding */

/* Connected components of an explicit matrix given a row of their own in the Reference region. */
#define CIS_HMAT_REF_COMPONENTS 64

/* The public struct first, so that a cis_hmat * is also a hmat_impl *. */
typedef struct {
  cis_hmat pub;
  cis_rowgen *rg;    /* CI problems: also hyb.regen_ctx */
  double *hdiag_own; /* pub.hdiag where this matrix owns it (NULL: the space's) */
} hmat_impl;

/* Uniform Expansion blocks of about 2^20 entries, at least 8 per thread when rows allow. */
int64_t cis_hmat_auto_block_rows(int64_t n, int64_t nnz_exp, int nt);
/* The budget asked for, or the default less the resident ELL block. */
int64_t cis_hmat_resolve_budget(const cis_hmat_opts *opts, int64_t n, int64_t ell_bytes);
/* The OpenMP threads of `n` asked (0: the default). */
int cis_hmat_nthreads(int n);
/* Bytes of a cached Expansion block: 8 (rows + 1) + 12 nnz. */
int64_t cis_hmat_block_bytes(int64_t nrows, int64_t nnz);

/* The Expansion blocks of rows [0, n), block_rows each (row ranges set, none cached). */
cis_err cis_hmat_alloc_blocks(cis_hyb *hy, int64_t n, int64_t block_rows);

/* Reference and Expansion entries per row from m rows spread evenly over the space (row
 * s n / m), on nt threads; optionally each sampled row's Reference and Expansion entries
 * (ref_len, exp_len: m each) and the seconds the threads spent generating them, summed
 * (busy). */
cis_err cis_hmat_sample_rows(const cis_rowgen *g, int64_t m, int nt, double *ref_per_row,
                             double *exp_per_row, int32_t *ref_len, int32_t *exp_len,
                             double *busy);

/* What a CI build decides before its pass, from its sample of CIS_BUILD_SAMPLE rows: the block
 * size, the ELL block's estimated bytes, the budget for cached blocks (0 when every block fits
 * in cis_hmat_opts.cache_none_within). */
typedef struct {
  int64_t nloc;            /* the rows this process stores (opts->rows_split), else n */
  double ref_row, exp_row; /* the sample's entries per row */
  int64_t block_rows, nblocks, ell_est, budget;
  int cache_none;
} cis_hmat_ci_decision;
cis_err cis_hmat_ci_decide(const cis_rowgen *g, const cis_hmat_opts *opts,
                           cis_hmat_ci_decision *d);

/* The start of a CI build, on the host or the GPU: its decisions (cis_hmat_ci_decide), its
 * blocks, the rows [*r0, *r1) this process stores (opts->rows_split, checked to be whole
 * blocks; else every row) and the ELL's row lengths, zero, for them. */
cis_err cis_hmat_ci_begin(cis_hmat *h, const cis_rowgen *g, const cis_hmat_opts *opts,
                          cis_hmat_ci_decision *dec, int64_t *r0, int64_t *r1);
/* A census of h's rows (spmv/census.h) with its value dictionary, chosen from a sample of rows
 * g generates; hyb.nnz_exp set to the sampled estimate of the rows this process stores. */
struct cis_census;
cis_err cis_hmat_census_start(cis_hmat *h, const cis_rowgen *g, const cis_hmat_ci_decision *dec,
                              struct cis_census **out);
/* The sliced ELL's slices from its row lengths (e->row_len), without its entries. */
cis_err cis_hmat_ell_slices(cis_ell *e, int64_t n, int64_t nref);
/* opts->gpu_build (hamiltonian/hmat_gpu.c, CUDA builds): the rows counted on the GPU and none
 * stored on the host (hyb.device_built), *built set; where the GPU cannot (rows the device
 * generator does not make, no room or no usable device) h is left to the host's build with
 * stats.gpu_build_note saying why; other errors are returned. */
cis_err cis_hmat_try_gpu_build(cis_hmat *h, const cis_rowgen *g, const cis_hmat_opts *opts,
                               int *built);

/* Our order of an explicit matrix (cis_hmat_build_csr's rule: ascending diagonal, ties by
 * index, the lowest row of each of the first connected components first): perm[new] = old,
 * inv[old] = new, diag[new] its diagonal, and optionally comp[new] the row's component (its
 * smallest row, input numbering). */
cis_err cis_hmat_csr_order(const cis_csr *m, int64_t *perm, int64_t *inv, double *diag,
                           int64_t *comp);
/* What an explicit build decides: the Reference region, its Expansion entries, the block size,
 * the ELL block's bytes as the default budget counts them, the budget, and the bytes the
 * Expansion blocks need (always all cached: the build fails with CIS_ERR_NOMEM when
 * need > budget). */
typedef struct {
  int64_t nref, nnz_exp, block_rows, ell_est, budget, need;
} cis_hmat_csr_decision;
void cis_hmat_csr_decide(const cis_csr *m, const int64_t *perm, const int64_t *inv,
                         const cis_hmat_opts *opts, cis_hmat_csr_decision *d);

#endif
