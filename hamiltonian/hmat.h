/* cisolve: the Hamiltonian of a determinant space (or an explicit matrix) in hybrid storage.
 *
 * cis_hmat_build_ci: Slater-Condon matrix elements over `space` (borrowed, must outlive the
 * hmat), generated row block by row block on OpenMP threads through alpha/beta string link
 * tables. Reference columns go to the resident ELL block; Expansion rows to CSR blocks, kept
 * while `host_cache` allows and regenerated on the fly (hyb.regen) otherwise.
 *
 * cis_hmat_build_csr: an explicit symmetric matrix. It is permuted so that the lowest diagonal
 * element of each connected component comes first (the components with the lowest ones, at most
 * CIS_HMAT_REF_COMPONENTS of them), then the rest by ascending diagonal: the Reference region
 * is its first rows; `perm` maps back.
 *
 * Ownership: *out is allocated here; cis_hmat_destroy(&h) frees it and sets h = NULL.
 */
#ifndef CIS_HMAT_H
#define CIS_HMAT_H

#include <stdint.h>

#include "base/problem.h"
#include "hamiltonian/space.h"
#include "spmv/hyb.h"

typedef struct {
  int64_t host_cache; /* bytes for cached Expansion blocks; < 0: the default,
                         cis_hmat_default_budget with solver_vectors, less the ELL block */
  int64_t ref_size;   /* explicit matrices only: Reference region size; 0 = automatic */
  int64_t block_rows; /* rows per Expansion block; 0 = automatic */
  int nthreads;       /* 0 = OpenMP default */
  int census;         /* CI matrices: take the census of the Expansion rows while they are
                         generated (hyb.census, spmv/census.h), with a value dictionary chosen
                         from a sample of rows first, for a later store that codes them */
  int64_t solver_vectors; /* with host_cache < 0: the n-length vectors the default leaves to
                         the solver (the caller's count, solver/eigs.h cis_eig_vectors) */
  int64_t cache_none_within; /* CI matrices, > 0: when the Expansion blocks fit in this many
                         bytes (by the sampled row length, at 12 bytes an entry), the host caches
                         none of them whatever host_cache says: the caller has another store
                         that takes them all (sent there as they are generated through `sink`,
                         or regenerated once when they are stored) */
  cis_block_sink *sink; /* CI matrices with a census, optional: each Expansion block is sent
                         there as it is generated (spmv/hyb.h); when the sink takes them,
                         hyb.sink keeps it for the store */
  cis_progress *progress; /* optional: told how the pass over the rows advances (CI matrices),
                         and kept in hyb.progress for later passes */
  int rows_split;      /* CI matrices, with row_begin, row_end: the rows [row_begin, row_end)
                         this process multiplies, a rank of several (kernels/comm.h), as
                         cis_hmat_split_cut gave them (whole Expansion blocks: block_rows must be
                         the split's; the range may be empty); the other rows are neither
                         generated nor stored (empty blocks, ELL rows of no entries) and the
                         budgets count only these. 0: every row. */
  int64_t row_begin, row_end;
  int host_regen;      /* CI matrices in CUDA builds: no device regenerator (hyb.regen_dev), so
                         that a GPU upload sends the blocks it does not keep from the host */
  int gpu_build;       /* CI matrices in CUDA builds: count the rows on GPU gpu_device and store
                         none on the host (hyb.device_built): a GPU upload generates them into its
                         layouts. Where the GPU cannot (no usable device, a row the device
                         generator does not make), the host builds them as usual and
                         stats.gpu_build_note says why. */
  int gpu_device;
  int no_rows;         /* CI matrices: store no row (--matrix-free): only the diagonal, the
                         preconditioner's block and the row generator are made, and every
                         product generates the rows again (hamiltonian/hmat_op.h); hyb stays
                         empty (n = 0) */
} cis_hmat_opts;

typedef struct {
  double t_build;            /* seconds to build (ELL + cached blocks) */
  int64_t elements_generated;/* matrix elements produced while building */
  int64_t ell_bytes, cached_bytes, streamed_bytes_per_matvec;
  int64_t budget;            /* the budget that was applied */
  int gpu_built;             /* the rows were counted on the GPU (hyb.device_built) ... */
  double t_gpu_count;        /* ... in this many seconds (its generator's tables included) */
  char gpu_build_note[200];  /* gpu_build asked for, not done: why */
} cis_hmat_stats;

/* The preconditioner's dense block is the Reference block of the first
 * min(nref, CIS_HMAT_PRECOND_MAX) determinants: it is diagonalised once (O(npre^3) on the host)
 * and applied through two dense products per correction, so a Reference region chosen wide for
 * the storage (--ref-size) does not make the solver's setup and corrections grow with it
 * (docs/solvers.md gives what larger blocks cost). */
#define CIS_HMAT_PRECOND_MAX 2048

typedef struct cis_hmat {
  int64_t n;
  int64_t nref;        /* Reference region size (= hyb.ell.boundary) */
  int64_t npre;        /* the preconditioner's block: min(nref, CIS_HMAT_PRECOND_MAX) */
  double ecore;        /* constant added to eigenvalues of H (0 for explicit matrices) */
  cis_hyb hyb;         /* what backends apply */
  const double *hdiag; /* n, host: a CI matrix's without a spin penalty is its space's */
  double *hpp;         /* npre x npre, the leading Reference block, host, column-major */
  int64_t *perm;       /* explicit matrices: our row i is input row perm[i]; NULL for CI */
  /* The symmetry of H on the preconditioner's block (solver/refblock.h cis_refsym): npre
   * labels (H couples only equal ones: the symmetry labels of hamiltonian/symmetry.h for CI,
   * the connected components of an explicit matrix) and, for CI with Ms = 0, npre exchange
   * partners (-1 outside the block), else NULL. */
  uint64_t *ref_label;
  int64_t *ref_partner;
  /* Explicit matrices: for each of the npre, the Gershgorin lower bound of its component's
   * spectrum (min of H_ii - sum_j |H_ij| over the component's rows); NULL for CI. */
  double *ref_bound;
  const cis_space *space; /* CI problems; NULL for explicit matrices */
  cis_hmat_stats stats;
  /* Built with opts.no_rows: no row stored (hyb is empty); the rows [mf_begin, mf_end) that this
   * process multiplies (every row, or its rank's), of about mf_nnz entries (sampled). */
  int matrix_free;
  int64_t mf_begin, mf_end;
  double mf_nnz;
} cis_hmat;

cis_err cis_hmat_build_ci(const cis_integrals *ints, const cis_space *space,
                          const cis_hmat_opts *opts, cis_hmat **out);
/* The same for H + spin_shift * (S^2 - spin_s2), the spin penalty of --spin
 * (docs/solvers.md): S^2 is added to the elements as they are generated, so every backend and
 * every regenerated block applies it. spin_shift 0 gives H. */
cis_err cis_hmat_build_ci_penalty(const cis_integrals *ints, const cis_space *space,
                                  const cis_hmat_opts *opts, double spin_shift, double spin_s2,
                                  cis_hmat **out);
cis_err cis_hmat_build_csr(const cis_csr *m, const cis_hmat_opts *opts, cis_hmat **out);
void cis_hmat_destroy(cis_hmat **h);

/* The default memory budget for cached Expansion blocks: three quarters of the host memory the
 * process may still take (cis_host_mem_available: free memory, cgroup limits, RLIMIT_AS and
 * RLIMIT_DATA) less `nvectors` n-length vectors for the solver (never negative). The
 * builders use it, with opts->solver_vectors and less the ELL block, when host_cache < 0; a
 * caller's plan (app/plan.c) passes it with the vectors its options imply. */
int64_t cis_hmat_default_budget(int64_t n, int64_t nvectors);

/* What a build with these options would store, without building (--dry-run): the build's own
 * decisions, taken by the same functions from the same sample of rows, and the nonzeros, counted
 * for an explicit matrix and estimated for a CI matrix from a larger sample of rows spread
 * evenly over the space (every row when the space is small enough: then exact). */
typedef struct {
  int64_t n, nref, npre;
  /* nonzeros: Reference (ELL) and Expansion entries */
  int64_t nnz_ref, nnz_exp;
  int exact;               /* counted, not estimated */
  int64_t nsample;         /* rows sampled (CI) */
  double rel_err;          /* the estimate's relative standard error (as for a random sample) */
  double gen_rate;         /* matrix elements one thread generated per second in the sample */
  /* the build's decisions */
  int64_t block_rows, nblocks;
  int64_t budget;          /* bytes for cached Expansion blocks, as the build applies it */
  int cache_none;          /* budget 0: every block fits in opts->cache_none_within */
  int64_t build_nnz_exp;   /* the Expansion entries the build's own sample predicts (what
                              cache_none_within and a sink's room are measured against) */
  int64_t ell_slots;       /* the resident ELL block's entries, padding included (a CI matrix:
                              estimated from sampled slices), */
  int64_t ell_dev_slots;   /* the same with the device layout's slice widths
                              (spmv/hyb_place.h cis_place_slice_width), */
  int64_t ell_nslices;     /* its slices */
  int64_t ell_bytes;       /* and its bytes on the host */
  int64_t table_bytes;     /* the row generator's string link tables (CI) */
  int64_t devgen_bytes;    /* the device row generator's tables (CI, CUDA builds; 0: none, as
                              without CUDA, with opts->host_regen, or where the rows cannot be
                              generated on the device: hamiltonian/rowgen_cuda.h) */
  int dict_size;           /* with opts->census: the value dictionary the build would choose, */
  double dict_cover;       /* and the share of its sample it codes (spmv/valdict.h) */
  int64_t exp_bytes;       /* every Expansion block, cached */
  int64_t ncached, cached_bytes; /* blocks kept within the budget, in row order */
  int64_t need;            /* explicit matrices: bytes the budget must hold (else exit 4) */
  int64_t regen_rows;      /* rows of the blocks not cached: regenerated in every CPU product */
  int64_t regen_elements;  /* the elements generated for them (their whole rows) */
} cis_hmat_plan;

/* The plan of cis_hmat_build_ci_penalty with the same arguments. */
cis_err cis_hmat_plan_ci(const cis_integrals *ints, const cis_space *space,
                         const cis_hmat_opts *opts, double spin_shift, double spin_s2,
                         cis_hmat_plan *out);
/* The plan of cis_hmat_build_csr. */
cis_err cis_hmat_plan_csr(const cis_csr *m, const cis_hmat_opts *opts, cis_hmat_plan *out);

/* The rows of a run of `parts` ranks: bounds[0..parts], contiguous ranges of whole Expansion
 * blocks with about equal nonzeros. A CI matrix is split before it is built, by the entries of
 * rows sampled in every block, in three steps the ranks share: its blocks (*block_rows:
 * opts->block_rows or the build's own choice, which rank 0 makes for all), the sampling (each of
 * `shares` ranks weighs the blocks share, share + shares, ... into w[0..nblocks), leaving the
 * others as they are), and the cut of the weights summed over the shares (deterministic).
 * A built matrix is cut by its entries. */
cis_err cis_hmat_split_blocks(const cis_integrals *ints, const cis_space *space,
                              const cis_hmat_opts *opts, int64_t *block_rows);
cis_err cis_hmat_split_weigh(const cis_integrals *ints, const cis_space *space, int nthreads,
                             int64_t block_rows, int share, int shares, double *w);
void cis_hmat_split_cut(const double *w, int64_t n, int64_t block_rows, int parts,
                        int64_t *bounds);
void cis_hmat_split_built(const cis_hmat *h, int parts, int64_t *bounds);
/* A built matrix reduced to rows [r0, r1) (whole blocks, as cis_hmat_split_built gave them):
 * the other rows' entries are freed and they multiply to nothing; the diagonal and the
 * preconditioner's block stay whole. The nonzeros kept: *nnz. */
cis_err cis_hmat_keep_rows(cis_hmat *h, int64_t r0, int64_t r1, int64_t *nnz);

/* The whole matrix (our order) as CSR, both triangles, rows sorted (for tests). Allocates
 * *out's arrays. */
cis_err cis_hmat_to_csr(const cis_hmat *h, cis_csr *out);
/* The same rows a chunk at a time (--export-matrix): a chunk is an Expansion block's rows,
 * each row its Reference and its Expansion entries sorted by column, the block regenerated
 * where the host does not cache it (h is borrowed). */
void cis_hmat_row_source(const cis_hmat *h, cis_row_source *src);

#endif
