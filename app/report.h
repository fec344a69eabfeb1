/* cisolve: the human report on stdout. Everything a user reads about a run is printed here;
 * the numbers themselves come from the modules that computed them. */
#ifndef CIS_REPORT_H
#define CIS_REPORT_H

#include "app/options.h"
#include "app/plan.h"
#include "app/target.h"
#include "hamiltonian/hmat.h"
#include "app/output.h"
#include "kernels/backend.h"
#include "kernels/operator.h"
#include "solver/eigs.h"

/* The listener of long passes (base/progress.h; cis_report_progress): on a terminal, a line
 * that updates in place at most four times a second, from a second into the pass; in a log
 * (stdout not a terminal), a line every 10 seconds, the first after 10, so that a shorter pass
 * prints nothing; nothing with --quiet. The environment variable CISOLVE_PROGRESS_INTERVAL=SEC
 * sets both intervals and the first delay (tests; docs/usage.md). */
typedef struct {
  cis_progress base;
  int tty, shown;
  double first, every; /* seconds: before the first line, between lines */
  double t0, next;     /* the pass's start, the next line's earliest time */
} cis_report_meter;

typedef struct {
  const cis_options *opt;
  const cis_problem *prob;
  const cis_target *target; /* the irrep and reference determinant (app/target.h); may be NULL */
  const cis_hmat *h;
  const cis_backend *be;
  const cis_operator *op; /* the solver's operator (its report: a GPU's placement) */
  const cis_plan_decisions *dec; /* the plan's decisions (app/plan.h), printed with the matrix */
  double t_start;         /* cis_wtime() at program start */
  double t_space, t_hmat; /* seconds to build the space and the matrix */
  double t_upload;        /* seconds to make the operator (a GPU: the upload) */
  /* the rest of the run ("other" in the timings), seconds: reading the input and options, the
   * backend's start (a GPU's context and libraries), the solver's calls (besides its products
   * and orthogonalisation: the guess, the projected problems, checkpoints), checkpoint writes
   * alone, and <S^2> with the analysis of the roots */
  double t_read, t_device, t_solve, t_ckpt, t_analysis;
  /* several ranks: the fastest and slowest rank's build, upload and products (s) */
  double rank_min[3], rank_max[3];
  int last_iter_printed;
  const cis_analysis *an; /* may be NULL */
  cis_report_meter meter;  /* cis_report_progress's */
} cis_report;

void cis_report_problem(const cis_report *r);
/* The matrix as built and placed, with the plan's decisions (r->dec): the host cache, its
 * budget and why, the backend's placement, the solver's vectors. */
void cis_report_matrix(const cis_report *r);
/* The solver's per-iteration callback (ctx = cis_report*); never asks to stop. */
int cis_report_iter(void *ctx, int iter, int k, const double *evals, const double *rnorm,
                    const int *conv, int nbasis);
void cis_report_results(const cis_report *r, const cis_eig_result *res, const double *s2);
/* The listener to give long passes (cis_hmat_opts.progress), NULL with --quiet. */
cis_progress *cis_report_progress(cis_report *r);
/* The plan of a --dry-run: sizes, memory, placement, the cost of a product; a decision a run
 * prints too (the budget and why, the solver's vectors) is printed by the same function. */
void cis_report_plan(const cis_report *r, const cis_plan *pl);

#endif
