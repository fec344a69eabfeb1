/* cisolve: the Hamiltonian of a determinant space (or an explicit matrix) in hybrid storage.
 *
 * cis_hmat_build_ci: Slater-Condon matrix elements over `space` (borrowed, must outlive the
 * hmat), generated row block by row block on OpenMP threads through alpha/beta string link
 * tables. Reference columns go to the resident ELL block; Expansion rows to CSR blocks, kept
 * while `mem_budget` allows and regenerated on the fly (hyb.regen) otherwise.
 *
 * cis_hmat_build_csr: an explicit symmetric matrix. It is permuted so that its lowest
 * diagonal elements come first (the Reference region); `perm` maps back.
 *
 * Ownership: *out is allocated here; cis_hmat_destroy(&h) frees it and sets h = NULL.
 */
#ifndef CIS_HMAT_H
#define CIS_HMAT_H

#include <stdint.h>

#include "core/problem.h"
#include "hamiltonian/space.h"
#include "spmv/hyb.h"

typedef struct {
  int64_t mem_budget; /* bytes for cached Expansion blocks; < 0 = default (see hmat.c) */
  int64_t ref_size;   /* explicit matrices only: Reference region size; 0 = automatic */
  int64_t block_rows; /* rows per Expansion block; 0 = automatic */
  int nthreads;       /* 0 = OpenMP default */
  int census;         /* CI matrices: take the census of the Expansion rows for a GPU upload
                         while they are generated (hyb.census, spmv/census.h), with a value
                         dictionary chosen from a sample of rows first */
  int64_t device_bytes; /* CI matrices, > 0: the bytes a GPU offers the matrix. When the
                         Expansion blocks fit in them (by the sampled row length, at 12 bytes
                         an entry), none is cached on the host whatever mem_budget says: the
                         GPU holds them all, sent to it as they are generated (sink) or
                         regenerated once at upload */
  cis_block_sink *sink; /* CI matrices with a census, optional: each Expansion block is sent
                         there as it is generated (spmv/hyb.h); when the sink takes them,
                         hyb.sink keeps it for the upload */
} cis_hmat_opts;

typedef struct {
  double t_build;            /* seconds to build (ELL + cached blocks) */
  int64_t elements_generated;/* matrix elements produced while building */
  int64_t ell_bytes, cached_bytes, streamed_bytes_per_matvec;
  int64_t budget;            /* the budget that was applied */
} cis_hmat_stats;

/* The preconditioner's dense block is the Reference block of the first
 * min(nref, CIS_HMAT_PRECOND_MAX) determinants: it is diagonalised once (O(npre^3) on the host)
 * and applied through two dense products per correction, so a Reference region chosen wide for
 * the storage (--ref-size) does not make the solver's setup and corrections grow with it. (On a
 * 2-core host the 4096 block of OH/6-31G with --ref-size 6000 took 8 s to diagonalise; with a
 * 40000 block, 12.8 GB, H2O/6-31G FCI had not reached its first iteration after 10 minutes on
 * a 16-core host.) */
#define CIS_HMAT_PRECOND_MAX 2048

typedef struct cis_hmat {
  int64_t n;
  int64_t nref;        /* Reference region size (= hyb.ell.boundary) */
  int64_t npre;        /* the preconditioner's block: min(nref, CIS_HMAT_PRECOND_MAX) */
  double ecore;        /* constant added to eigenvalues of H (0 for explicit matrices) */
  cis_hyb hyb;         /* what backends apply */
  double *hdiag;       /* n, host */
  double *hpp;         /* npre x npre, the leading Reference block, host, column-major */
  int64_t *perm;       /* explicit matrices: our row i is input row perm[i]; NULL for CI */
  const cis_space *space; /* CI problems; NULL for explicit matrices */
  cis_hmat_stats stats;
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
 * builders use it, with 60 vectors and less the ELL block, when mem_budget < 0; the driver passes
 * it with the vectors its options imply. */
int64_t cis_hmat_default_budget(int64_t n, int64_t nvectors);

/* The whole matrix (our order) as CSR, both triangles, rows sorted (for tests). Allocates
 * *out's arrays. */
cis_err cis_hmat_to_csr(const cis_hmat *h, cis_csr *out);
/* The same rows a chunk at a time (--export-matrix): a chunk is an Expansion block's rows,
 * each row its Reference and its Expansion entries sorted by column, the block regenerated
 * where the host does not cache it (h is borrowed). */
void cis_hmat_row_source(const cis_hmat *h, cis_row_source *src);

#endif
