/* cisolve: the eigensolvers' common interface.
 *
 * The solver sees the matrix only as an operator (kernels/operator.h): its products with blocks
 * of vectors, and two host arrays it needs for its preconditioner and initial guess, the
 * diagonal and the dense Reference block H_PP (op->diag, op->nref, op->ref_block). n-length
 * vectors live on the backend (kernels/backend.h) the operator was made for; everything
 * subspace-sized on the host. Products are counted and timed on the operator
 * (op->n_matvec, op->t_matvec); results report the solve's share.
 *
 * On a backend that holds a part of the rows of a run's vectors (kernels/backend.h,
 * cis_backend_part; docs/parallel.md), every rank runs the same solve on its rows: the n-length
 * host arrays exchanged with the solver (guess_X and guess_HX, deflate, the result's evecs,
 * on_save's X and H X) hold the part's rows (be->n of them), while op->diag and everything
 * about the Reference block describe the whole; the sums over rows are summed over the ranks,
 * so every rank sees the same subspace numbers and takes the same decisions.
 *
 * Ownership: cis_eig_result arrays are allocated by the solver and freed with
 * cis_eig_result_free.
 */
#ifndef CIS_EIGS_H
#define CIS_EIGS_H

#include <stdint.h>

#include "base/error.h"
#include "kernels/backend.h"
#include "kernels/operator.h"
#include "solver/refblock.h"

enum { CIS_ITER_CONTINUE = 0, CIS_ITER_SAVE = 1, CIS_ITER_STOP = 2 };

typedef struct {
  int nroots;          /* K lowest eigenpairs */
  double tol_energy;   /* |dE| per root between iterations, Eh (default 1e-10) */
  double tol_residual; /* ||r|| per root (default 1e-5) */
  int max_iter;        /* outer iterations (default 100) */
  int max_subspace;    /* collapse when the basis would exceed this (default max(8K, 24)) */
  double level_shift;  /* preconditioner: t = r / (D - E + shift) (default 0; docs/solvers.md) */
  int block;           /* new vectors per iteration: 0 = one per unconverged root */
  /* precond_fixed: the preconditioner's E is precond_at for every root and iteration, in
   * place of the root's Ritz value (the search of cis_check_roots). */
  int precond_fixed;
  double precond_at;
  /* Called after every iteration with the current Ritz values (k = nroots), residual norms
   * and convergence flags; may be NULL. Returns a combination of CIS_ITER_SAVE (call on_save
   * with the current vectors now) and CIS_ITER_STOP (stop: the solver returns
   * CIS_ERR_INTERRUPTED with the current Ritz vectors in the result); 0 continues. */
  int (*on_iter)(void *ctx, int iter, int k, const double *evals, const double *rnorm,
                 const int *conv, int nbasis);
  void *on_iter_ctx;
  /* Asked between the steps of work the caller sees no iteration of (the searches of
   * cis_check_blocks); nonzero stops it with CIS_ERR_INTERRUPTED. ctx is on_iter_ctx; may be
   * NULL. */
  int (*poll)(void *ctx);
  /* Receives the Ritz vectors X and H X (n x k, host, column-major) when on_iter asked for
   * CIS_ITER_SAVE, and once more at the end when save_final is set; ctx is on_iter_ctx. */
  cis_err (*on_save)(void *ctx, int iter, int k, const double *evals, const double *rnorm,
                     const int *conv, const double *X, const double *HX);
  int save_final;
  /* Restart: start from k = nroots orthonormal vectors guess_X (n x k, host) and their products
   * guess_HX (host; no product is computed for them), with guess_evals as the previous Ritz
   * values; iterations are counted from iter_start. guess_X without guess_HX: start from those
   * vectors (orthonormalised here) and their products. All NULL/0 for a fresh start (the guess
   * is then the lowest eigenvectors of the Reference block, within symmetry blocks when
   * `states` is given). */
  const double *guess_X, *guess_HX, *guess_evals;
  int iter_start;
  /* guess_X without guess_HX (Davidson): when > 0, guess_X holds only the first guess_rows
   * rows of each vector (guess_rows x k, column-major; the rest are zero), so that a guess on
   * the Reference region alone costs no n-length copy. 0: n x k. */
  int64_t guess_rows;
  /* When given, the Ritz vectors are copied into the result only if *want_vectors is nonzero
   * when the solver returns (a search that needs them only when its on_iter found something);
   * res->evecs is NULL otherwise. NULL: always. */
  const int *want_vectors;
  const cis_refstates *states;
  /* H_PP's eigendecomposition (solver/refblock.h) for the preconditioner, when the caller runs
   * several solves on one matrix (the searches of cis_check_blocks); NULL: made here. */
  const cis_refblock *refblock;
  /* Deflation (Davidson): keep the search space orthogonal to these ndeflate orthonormal host
   * vectors (n x ndeflate), so the solver finds the lowest states of the rest of the space;
   * the initial guess is then random (seeded). NULL/0: none. */
  const double *deflate;
  int ndeflate;
} cis_eig_opts;

typedef struct {
  int nroots;
  double *evals;        /* nroots, eigenvalues of H (without ecore) */
  double *evecs;        /* n x nroots host (the backend's rows), column-major, normalised */
  double *rnorm;        /* nroots */
  int *converged;       /* nroots */
  int all_converged;
  int iterations;
  int64_t matvecs;      /* single-vector products */
  double t_matvec, t_ortho, t_total;
} cis_eig_result;

void cis_eig_opts_default(cis_eig_opts *o, int nroots);
/* The basis size before a collapse: `asked` when positive, else the default max(8K, 24). */
int cis_eig_max_subspace(int asked, int nroots);

/* Where the n-length vectors of a solve live. */
typedef enum {
  CIS_EIG_BACKEND = 0, /* on the backend (a GPU's memory, or the host's with the CPU backend) */
  CIS_EIG_HOST         /* host copies, on every backend */
} cis_eig_where;

/* The n-length vectors a run's solves hold at most, with `nroots` (K) roots and the basis
 * `max_subspace` (0: the default; m below, at least 2K), the largest of the phases, counted
 * from what the solvers allocate:
 *  - CIS_EIG_BACKEND: Davidson (davidson.c dav_alloc): the basis and its products (2m), the
 *    Ritz vectors and residuals (2K), the collapse's scratch (2K), the diagonal (1). Lanczos
 *    (lanczos.c): the basis (m' + 1, m' = max(m, 2K + 8)), the vectors a restart keeps (fewer
 *    than m'), a checkpoint's X and H X (2K). The lowest-state check (rootcheck.c): a deflated
 *    search of two vectors with the default basis (2 x 24 + 8 + 1) against the K roots (K); the
 *    union of the roots with the states found (3K and two a state found) is smaller.
 *  - CIS_EIG_HOST: the result's vectors (K); a checkpoint's X and H X while one is written
 *    (2K); a restart's, read, for the whole run (2K); the check's included roots and their
 *    products while it converges again (2K); a random or start vector (1). */
int64_t cis_eig_vectors(int nroots, int max_subspace, cis_eig_where where);
void cis_eig_result_free(cis_eig_result *r);
/* Fill res for K roots of length n: allocate its arrays (evecs left for the caller to write) and
 * copy the Ritz values, residual norms and flags; all_converged is their conjunction. */
cis_err cis_eig_result_fill(cis_eig_result *res, int K, int64_t n, const double *evals,
                            const double *rnorm, const int *conv);

/* Of the whole vectors' first `rows` rows, how many be holds: on a part of the rows
 * (kernels/backend.h, cis_backend_part) they are its first ones, rows [be->row0, be->row0 +
 * held) of the whole; with the whole vectors, min(rows, n). */
int64_t cis_eig_lead_rows(const cis_backend *be, int64_t rows);

/* The operator multiplies the backend's vectors (op->be == be, op->n == be->n) and describes
 * its Reference block consistently: else CIS_ERR_INTERNAL / CIS_ERR_USAGE. */
cis_err cis_eig_check_operator(const cis_backend *be, const cis_operator *op);

/* Davidson (block, multi-root, restarts) for the lowest eigenpairs of op, vectors on be.
 * Returns CIS_OK also when not converged (res->all_converged == 0). */
cis_err cis_davidson_solve(cis_backend *be, cis_operator *op, const cis_eig_opts *opts,
                           cis_eig_result *res);

/* Lanczos with full reorthogonalisation and thick restart (keeps the nroots lowest Ritz
 * vectors plus a few more). Same arguments and results as cis_davidson_solve; an iteration is
 * one restart cycle, convergence is tested after every product. guess_X / deflate are not
 * used. */
cis_err cis_lanczos_solve(cis_backend *be, cis_operator *op, const cis_eig_opts *opts,
                          cis_eig_result *res);

/* The outcome of cis_check_roots. */
typedef struct {
  int missed;       /* states found below the highest root by more than the threshold */
  int conclusive;   /* the search proved a missed state or converged: the answer holds */
  int iterations;   /* of the search */
  double lowest;    /* lowest Ritz value found outside the K roots (without ecore) */
  double threshold; /* Eh */
  int64_t matvecs;  /* products the search cost */
} cis_rootcheck;

/* Iterations of the search for missed states, at most (2 products each). */
#define CIS_CHECK_ROOTS_MAX_ITER 200

/* After convergence: deflated block Davidson (2 vectors, the preconditioner built at E_K) from
 * random vectors orthogonal to the K roots in res, until a Ritz value falls below the K-th root
 * by more than `threshold`, which proves a missed state (a Rayleigh quotient outside span(X) is
 * below E_K), or until its lowest Ritz pair converges (residual 1e-4) above it, which shows
 * none, or CIS_CHECK_ROOTS_MAX_ITER iterations, which show nothing (conclusive 0). When a missed state is found, res is replaced by the K lowest
 * Ritz pairs of span(X, missed) and re-converged with Davidson from them (res->matvecs then
 * counts the re-run too). */
cis_err cis_check_roots(cis_backend *be, cis_operator *op, const cis_eig_opts *opts,
                        double threshold, cis_eig_result *res, cis_rootcheck *out);

/* One search of cis_check_blocks. */
typedef enum { CIS_SEARCH_PROVED = 0, CIS_SEARCH_ABOVE, CIS_SEARCH_DEGENERATE,
               CIS_SEARCH_UNSETTLED } cis_search_outcome;
typedef struct {
  int block;                  /* in the Reference states' numbering */
  double start, end, rnorm;   /* H_PP eigenvalue it started from; last Ritz value and residual */
  int products;
  cis_search_outcome outcome;
} cis_search_log;
#define CIS_SEARCH_LOG 32

/* The outcome of cis_check_blocks. */
typedef struct {
  int nblocks;      /* symmetry blocks of the Reference block */
  int searched;     /* states searched from (a block's, together; a block may be searched
                       again after a re-convergence) */
  int beyond;       /* blocks whose next state lies beyond the window: not searched */
  int bounded;      /* blocks whose spectrum is bounded from below above E_K: not searched */
  int exhausted;    /* blocks without a further state in the Reference block */
  int missed;       /* lower states found (and included) */
  int unsettled;    /* start states whose search ended without an answer */
  int degenerate;   /* a search converged onto E_K: the K-th root has a partner outside */
  int rounds;
  double window;    /* Eh above E_K within which a block's next H_PP state was searched */
  double lowest;    /* lowest Ritz value the searches reached (without ecore); HUGE_VAL: none */
  int64_t matvecs;  /* products of the searches (a re-convergence counts in res) */
  int nlog;         /* the first CIS_SEARCH_LOG searches */
  cis_search_log log[CIS_SEARCH_LOG];
} cis_blockcheck;

/* After convergence, the default check that the K roots in res are the K lowest states: for
 * every symmetry block of the Reference states `st` (solver/refblock.h) whose next states (the
 * first the roots do not hold) lie within a window above E_K (or, where the block has a lower
 * bound, whose bound lies below E_K), one deflated Davidson search from them together, until a
 * Ritz value falls below E_K - threshold (a missed state) or each stands above E_K by more than
 * its residual norm. Missed states are included as cis_check_roots does, res is converged again
 * with opts, and the blocks are searched again. `searched` and the log count start states. */
cis_err cis_check_blocks(cis_backend *be, cis_operator *op, const cis_refstates *st,
                         const cis_eig_opts *opts, double threshold, cis_eig_result *res,
                         cis_blockcheck *out);

#endif
