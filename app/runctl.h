/* cisolve: run control between the solver and the outside world. Wraps the per-iteration
 * report, keeps the energy/residual history, decides when to write a checkpoint (every N
 * iterations, every T seconds, on a signal, before the walltime) and when to stop. */
#ifndef CIS_RUNCTL_H
#define CIS_RUNCTL_H

#include "app/options.h"
#include "io/checkpoint.h"
#include "app/report.h"
#include "kernels/operator.h"

typedef struct {
  cis_report *rep;
  const cis_options *opt;
  const cis_operator *op; /* the solver's: its products counted, its length */
  cis_fingerprint fp;
  int64_t matvecs_before;  /* products done by earlier runs (restart) */
  double t_before;         /* solver seconds of earlier runs */
  double t_solve_start;
  double t_last_iter, t_last_ckpt;
  double iter_secs, ckpt_secs; /* estimates for the walltime decision */
  int last_saved_iter, nsaved;
  int restarted;           /* this run resumed from a checkpoint */
  int resumed_at;          /* its iteration: judged again first, already in the history */
  int last_act;            /* what cis_runctl_iter asked for last */
  int stopping;            /* a stop was requested; why[] says why */
  char why[256];
  int nhist, cap, k;
  double *hist_e, *hist_r; /* nhist x k */
} cis_runctl;

cis_err cis_runctl_init(cis_runctl *rc, cis_report *rep, const cis_options *opt,
                        const cis_operator *op, const cis_fingerprint *fp,
                        const cis_ckpt *restart);
void cis_runctl_free(cis_runctl *rc);
int cis_runctl_iter(void *ctx, int iter, int k, const double *evals, const double *rnorm,
                    const int *conv, int nbasis);
/* Between iterations the caller does not see (the searches of the root check): whether to stop
 * now, on a signal or before the walltime (the last checkpoint stands). */
int cis_runctl_poll(void *ctx);
cis_err cis_runctl_save(void *ctx, int iter, int k, const double *evals, const double *rnorm,
                        const int *conv, const double *X, const double *HX);

/* The solver stopped on request at iteration `iter`, its checkpoint written: print why, where
 * the checkpoint is and the command that resumes the run (argv with --restart). */
void cis_runctl_report_stop(const cis_runctl *rc, int iter, int argc, char **argv);
/* Between the steps before the solver (reading, building): when a signal asked to stop, print
 * that it did while `doing` and that there is nothing to checkpoint yet (a restart's checkpoint
 * is left as it was), with the command that runs it again, and return 1 (exit code 3); else 0.
 * The walltime is left to the solver, which checkpoints its first iteration before stopping. */
int cis_runctl_stop_before_solver(const cis_options *o, const char *doing, int argc,
                                  char **argv);

#endif
