#include "core/runctl.h"

#include <stdio.h>
#include <string.h>

#include "core/signals.h"
#include "core/util.h"

cis_err cis_runctl_init(cis_runctl *rc, cis_report *rep, const cis_options *opt, cis_backend *be,
                        const cis_fingerprint *fp, const cis_ckpt *restart) {
  memset(rc, 0, sizeof *rc);
  rc->rep = rep;
  rc->opt = opt;
  rc->be = be;
  rc->fp = *fp;
  rc->t_solve_start = rc->t_last_iter = rc->t_last_ckpt = cis_wtime();
  if (restart) {
    rc->restarted = 1;
    rc->matvecs_before = restart->matvecs;
    rc->t_before = restart->t_elapsed;
    rc->last_saved_iter = restart->iteration;
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
  push_history(rc, k, evals, rnorm);
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
  rc->last_act = act;
  return act;
}

int cis_runctl_poll(void *ctx) {
  cis_runctl *rc = (cis_runctl *)ctx;
  if (!rc->stopping &&
      cis_stop_requested(1.5 * rc->iter_secs + 1.0, rc->why, sizeof rc->why))
    rc->stopping = 1;
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
  cis_ckpt c = {
      .fp = rc->fp,
      .iteration = iter,
      .matvecs = rc->matvecs_before + rc->be->n_matvec,
      .converged = all,
      .n = rc->be->n,
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
  CIS_CALL(cis_ckpt_write(rc->opt->checkpoint, &c));
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
