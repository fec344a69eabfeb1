#define _POSIX_C_SOURCE 200809L
#include "app/runctl.h"
#include "kernels/comm.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/signals.h"
#include "base/util.h"
#include "app/runfiles.h"

cis_err cis_runctl_init(cis_runctl *rc, cis_report *rep, const cis_options *opt,
                        const cis_operator *op, const cis_fingerprint *fp,
                        const cis_ckpt *restart) {
  memset(rc, 0, sizeof *rc);
  rc->rep = rep;
  rc->opt = opt;
  rc->op = op;
  rc->fp = *fp;
  rc->t_solve_start = rc->t_last_iter = rc->t_last_ckpt = cis_wtime();
  if (restart) {
    rc->restarted = 1;
    rc->matvecs_before = restart->matvecs;
    rc->t_before = restart->t_elapsed;
    rc->last_saved_iter = rc->resumed_at = restart->iteration;
    rc->k = restart->k;
    rc->nhist = rc->cap = restart->nhist;
    size_t hk = (size_t)restart->nhist * (size_t)restart->k;
    CIS_CALL(cis_malloc(&rc->hist_e, hk, sizeof(double), "energy history"));
    CIS_CALL(cis_malloc(&rc->hist_r, hk, sizeof(double), "residual history"));
    if (hk) {
      memcpy(rc->hist_e, restart->hist_evals, hk * sizeof(double));
      memcpy(rc->hist_r, restart->hist_rnorm, hk * sizeof(double));
    }
  }
  return CIS_OK;
}

void cis_runctl_free(cis_runctl *rc) {
  cis_free(&rc->hist_e);
  cis_free(&rc->hist_r);
}

static void push_history(cis_runctl *rc, int k, const double *e, const double *r) {
  if (rc->k == 0) rc->k = k;
  if (rc->nhist == rc->cap) {
    int cap = rc->cap ? 2 * rc->cap : 64;
    /* History is diagnostic: if memory is that short, keep going without it. */
    if (cis_realloc(&rc->hist_e, (size_t)cap * (size_t)k, sizeof(double), "history") != CIS_OK ||
        cis_realloc(&rc->hist_r, (size_t)cap * (size_t)k, sizeof(double), "history") != CIS_OK) {
      cis_error_clear();
      return;
    }
    rc->cap = cap;
  }
  memcpy(rc->hist_e + (size_t)rc->nhist * (size_t)k, e, (size_t)k * sizeof(double));
  memcpy(rc->hist_r + (size_t)rc->nhist * (size_t)k, r, (size_t)k * sizeof(double));
  rc->nhist++;
}

int cis_runctl_iter(void *ctx, int iter, int k, const double *evals, const double *rnorm,
                    const int *conv, int nbasis) {
  cis_runctl *rc = (cis_runctl *)ctx;
  const cis_options *o = rc->opt;
  double now = cis_wtime();
  /* A running estimate of one iteration's cost, for the walltime decision. */
  double dt = now - rc->t_last_iter;
  rc->iter_secs = rc->iter_secs > 0 ? 0.5 * (rc->iter_secs + dt) : dt;
  rc->t_last_iter = now;
  cis_report_iter(rc->rep, iter, k, evals, rnorm, conv, nbasis);
  if (!(rc->restarted && iter <= rc->resumed_at)) push_history(rc, k, evals, rnorm);
  int act = CIS_ITER_CONTINUE;
  if (o->checkpoint_every > 0 && iter - rc->last_saved_iter >= o->checkpoint_every)
    act |= CIS_ITER_SAVE;
  if (o->checkpoint_interval > 0 && now - rc->t_last_ckpt >= o->checkpoint_interval)
    act |= CIS_ITER_SAVE;
  if (cis_stop_requested(1.5 * rc->iter_secs + 2.0 * rc->ckpt_secs + 1.0, rc->why,
                         sizeof rc->why)) {
    rc->stopping = 1;
    act |= CIS_ITER_SAVE | CIS_ITER_STOP;
  }
  /* several ranks act as one: a checkpoint or a stop asked on any (a signal, a clock) is done
   * by all */
  act = cis_comm_or(act);
  if ((act & CIS_ITER_STOP) && !rc->stopping) {
    rc->stopping = 1;
    snprintf(rc->why, sizeof rc->why, "another rank of the run was asked to stop");
  }
  rc->last_act = act;
  return act;
}

int cis_runctl_poll(void *ctx) {
  cis_runctl *rc = (cis_runctl *)ctx;
  if (!rc->stopping &&
      cis_stop_requested(1.5 * rc->iter_secs + 1.0, rc->why, sizeof rc->why))
    rc->stopping = 1;
  if (cis_comm_or(rc->stopping) && !rc->stopping) {
    rc->stopping = 1;
    snprintf(rc->why, sizeof rc->why, "another rank of the run was asked to stop");
  }
  return rc->stopping;
}

cis_err cis_runctl_save(void *ctx, int iter, int k, const double *evals, const double *rnorm,
                        const int *conv, const double *X, const double *HX) {
  cis_runctl *rc = (cis_runctl *)ctx;
  /* The solver's final save: only worth a file when this run already lives by checkpoints. */
  if (!(rc->last_act & CIS_ITER_SAVE) && rc->nsaved == 0 && !rc->restarted) return CIS_OK;
  double t0 = cis_wtime();
  int all = 1;
  for (int j = 0; j < k; j++) all &= conv[j] != 0;
  /* with several ranks the solver holds this rank's rows: the file holds whole vectors */
  const cis_backend *be = rc->op->be;
  double *wx = NULL, *whx = NULL;
  if (cis_backend_is_part(be)) {
    cis_err e = cis_backend_whole(be, X, k, &wx);
    if (e == CIS_OK) e = cis_backend_whole(be, HX, k, &whx);
    if (e != CIS_OK) {
      cis_free(&wx);
      return e;
    }
    X = wx;
    HX = whx;
  }
  cis_ckpt c = {
      .fp = rc->fp,
      .iteration = iter,
      .matvecs = rc->matvecs_before + rc->op->n_matvec,
      .converged = all,
      .n = be->n_global,
      .k = k,
      .X = (double *)X,
      .HX = (double *)HX,
      .evals = (double *)evals,
      .rnorm = (double *)rnorm,
      .nhist = rc->nhist,
      .hist_evals = rc->hist_e,
      .hist_rnorm = rc->hist_r,
      .t_elapsed = rc->t_before + (t0 - rc->t_solve_start),
  };
  cis_err e = cis_comm_rank() == 0 ? cis_ckpt_write(rc->opt->checkpoint, &c) : CIS_OK; /* one */
  cis_free(&wx);
  cis_free(&whx);
  CIS_CALL(e);
  double dt = cis_wtime() - t0;
  rc->rep->t_ckpt += dt;
  rc->ckpt_secs = rc->ckpt_secs > dt ? rc->ckpt_secs : dt;
  rc->t_last_ckpt = cis_wtime();
  rc->last_saved_iter = iter;
  rc->nsaved++;
  if (!rc->opt->quiet && rc->opt->verbose)
    printf("      checkpoint %s (iteration %d, %.3f s)\n", rc->opt->checkpoint, iter, dt);
  return CIS_OK;
}

/* "to resume" and the command, with the folder it runs in as a shell comment (its relative
 * paths are relative to that folder). */
static void print_resume(int argc, char **argv, int restart) {
  char cwd[4096];
  printf("to resume        ");
  cis_options_print_command(stdout, argc, argv, restart);
  if (getcwd(cwd, sizeof cwd)) printf("   # in %s", cwd);
  printf("\n");
  fflush(stdout);
}

void cis_runctl_report_stop(const cis_runctl *rc, int iter, int argc, char **argv) {
  printf("\nstopped          %s, at iteration %d\n", rc->why, iter);
  printf("checkpoint       %s\n", rc->opt->checkpoint);
  print_resume(argc, argv, 1);
}

int cis_runctl_stop_before_solver(const cis_options *o, const char *doing, int argc,
                                  char **argv) {
  int sig = cis_signal_pending();
  if (!cis_comm_or(sig != 0)) return 0; /* several ranks stop together */
  if (sig)
    printf("\nstopped          received %s while %s, before the solver started: ",
           cis_signal_name(sig), doing);
  else
    printf("\nstopped          another rank of the run received a signal while %s, before the "
           "solver started: ", doing);
  if (o->restart_set)
    printf("the checkpoint %s is as it was\n", cis_files_restart_path(o));
  else
    printf("nothing to checkpoint yet\n");
  print_resume(argc, argv, 0);
  return 1;
}
