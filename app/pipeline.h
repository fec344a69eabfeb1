/* cisolve: the steps from a problem to its converged roots, shared by the program (app/main.c)
 * and the library's C API (app/api.c, include/cisolve.h), so both solve alike:
 *
 *   cis_pipeline_space        the determinant space (integral problems)
 *   cis_pipeline_hamiltonian  the plan's decisions (app/plan.c) and the Hamiltonian
 *   cis_pipeline_backend      the backend (--device) and the matrix as the solver's operator
 *   cis_pipeline_states       the Reference block's states and the solver's options
 *   cis_pipeline_solve        Davidson or Lanczos, then the check that no lower state was missed
 *   cis_pipeline_results      <S^2>, the spin-penalty correction, degenerate groups, RDMs
 *
 * in this order; a caller adds its own between them (the program: its report, checkpoints,
 * restart, --export-matrix) and may set fields of `eo` (callbacks, a guess) after
 * cis_pipeline_states. What is the program's alone (files, signals, the report, output.h5)
 * stays with it. Messages go to stdout only as the options say (quiet: none).
 *
 * Ownership: everything a cis_pipeline points to is its own, except `eo`'s callbacks and guess
 * (the caller's); cis_pipeline_free releases it all, cis_pipeline_free_solve all but the space.
 * The problem given to the steps is borrowed and must outlive the pipeline (the matrix reads
 * its integrals when it regenerates rows). */
#ifndef CIS_PIPELINE_H
#define CIS_PIPELINE_H

#include "app/analysis.h"
#include "app/options.h"
#include "app/target.h"
#include "app/output.h"
#include "app/plan.h"
#include "base/problem.h"
#include "base/progress.h"
#include "hamiltonian/hmat.h"
#include "hamiltonian/space.h"
#include "kernels/backend.h"
#include "kernels/operator.h"
#include "solver/eigs.h"
#include "solver/refblock.h"

typedef struct {
  cis_space *space;         /* integral problems; NULL for an explicit matrix */
  cis_hmat *h;
  cis_backend *be;
  cis_operator *op;
  cis_block_sink *pool;     /* the GPU pool the build sent its blocks to, or NULL */
  cis_plan_decisions dec;
  double spin_shift, spin_s2; /* --spin's penalty (0, 0 without --spin) */
  cis_refstates rst;
  cis_refblock rst_view;    /* rst's decomposition of H_PP, borrowed by the preconditioner */
  cis_eig_opts eo;
  cis_eig_result res;
  double *s2;               /* res.nroots <S^2> values; NULL for an explicit matrix */
  cis_analysis an;
  cis_analysis_buf abuf;
  double t_space, t_hmat, t_device, t_upload; /* seconds the steps took */
  double t_solve, t_check;                    /* cis_pipeline_solve's: the solver, the check */
  /* A run of several ranks (kernels/comm.h): the rows each holds (ranks + 1 bounds, rank 0's
   * split) and this rank's nonzeros; NULL with one process. */
  int64_t *bounds;
  int64_t nnz_local;
  struct cis_nccl *nccl; /* GPU ranks: NCCL's set-up, begun before the build, for the operator */
} cis_pipeline;

void cis_pipeline_init(cis_pipeline *pl);
void cis_pipeline_free(cis_pipeline *pl);
/* Everything but the space: the pipeline can solve again from cis_pipeline_hamiltonian. */
void cis_pipeline_free_solve(cis_pipeline *pl);

/* --space and --ms2, then --frozen / --active (app/spaces.h), the target irrep and reference
 * determinant (app/target.h, into *t for the report) and the MRCI model space, applied to the
 * problem as read. */
cis_err cis_pipeline_resolve_problem(const cis_options *o, cis_problem *p, cis_target *t);
/* --spin S: a spin the electrons and orbitals can reach; the penalty's shift and S(S+1)
 * (0, 0 without --spin). */
cis_err cis_pipeline_spin_penalty(const cis_options *o, const cis_problem *p, double *shift,
                                  double *s2);

/* The determinant space of an integral problem (resolved), unless pl->space is built already;
 * nothing for an explicit matrix. */
cis_err cis_pipeline_space(cis_pipeline *pl, const cis_options *o, const cis_problem *p);
/* The plan's decisions, the spin penalty, the Hamiltonian (the space built first when it is
 * not), and the check that --nroots fits the space. With several ranks, each builds only its
 * rows (pl->bounds). `progress` (may be NULL) follows the build. */
cis_err cis_pipeline_hamiltonian(cis_pipeline *pl, const cis_options *o, const cis_problem *p,
                                 cis_progress *progress);
/* The backend for --device (auto: a usable GPU, else the CPU, saying why unless quiet) and the
 * matrix as its operator (uploaded to a GPU with room for the solver's vectors). */
cis_err cis_pipeline_backend(cis_pipeline *pl, const cis_options *o);
/* The Reference block's states within symmetry blocks (the guess and the check) and `eo` from
 * the options (no callbacks, no guess). */
cis_err cis_pipeline_states(cis_pipeline *pl, const cis_options *o);
/* Solve with `eo`, then the check of --check-roots (a missed state is included in res).
 * CIS_ERR_INTERRUPTED when eo's callbacks stopped it (res holds the current vectors). */
cis_err cis_pipeline_solve(cis_pipeline *pl, const cis_options *o);
/* <S^2> of the roots into pl->s2 (integral problems; with s2, or a spin penalty, which the
 * analysis takes out of the energies with it), then the analysis (app/analysis.h): the
 * spin-penalty correction of res.evals, degenerate groups, --rdm1. */
cis_err cis_pipeline_results(cis_pipeline *pl, const cis_options *o, int s2);

#endif
