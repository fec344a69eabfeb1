/* cisolve: the command-line driver. One pass: read the input, build the determinant space and
 * the hybrid Hamiltonian, pick a backend, solve (the steps of app/pipeline.c, which the C API
 * shares), report, write output.h5. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "app/analysis.h"
#include "app/irrep_all.h"
#include "app/options.h"
#include "app/pipeline.h"
#include "app/plan.h"
#include "app/runctl.h"
#include "app/target.h"
#include "base/signals.h"
#include "base/util.h"
#include "app/version.h"
#include "hamiltonian/hmat.h"
#include "hamiltonian/space.h"
#include "io/checkpoint.h"
#include "app/runfiles.h"
#include "io/files.h"
#include "io/input.h"
#include "app/output.h"
#include "app/report.h"
#include "kernels/backend.h"
#include "kernels/comm.h"
#include "kernels/operator.h"
#include "solver/eigs.h"
#include "spmv/hyb_op.h"

/* INPUT's file name without directory and last extension, plus `suffix`, in the current
 * directory. */
static cis_err input_stem_path(const char *input, const char *suffix, char *dst, size_t cap) {
  const char *base = strrchr(input, '/');
  base = base ? base + 1 : input;
  char stem[4080];
  size_t len = strlen(base);
  CIS_CHECK(len < sizeof stem, CIS_ERR_USAGE, "input name too long: %s", base);
  memcpy(stem, base, len + 1);
  char *dot = strrchr(stem, '.');
  if (dot && dot != stem) *dot = '\0';
  int w = snprintf(dst, cap, "%s%s", stem, suffix);
  CIS_CHECK(w > 0 && (size_t)w < cap, CIS_ERR_USAGE, "output path too long");
  return CIS_OK;
}

/* A file beside the output (the checkpoint: ".ckpt.h5"; the Molden file: ".molden"): OUTPUT
 * without ".out.h5" (or ".h5"), plus `suffix`; with the output discarded, beside where it would
 * have gone. */
static cis_err beside_output(const cis_options *o, const char *suffix, char *dst, size_t cap) {
  if (cis_files_output_discarded(o)) return input_stem_path(o->input, suffix, dst, cap);
  char stem[4080];
  size_t n = strlen(o->output);
  CIS_CHECK(n < sizeof stem, CIS_ERR_USAGE, "output path too long: %s", o->output);
  memcpy(stem, o->output, n + 1);
  if (n > 7 && strcmp(stem + n - 7, ".out.h5") == 0)
    stem[n - 7] = '\0';
  else if (n > 3 && strcmp(stem + n - 3, ".h5") == 0)
    stem[n - 3] = '\0';
  int w = snprintf(dst, cap, "%s%s", stem, suffix);
  CIS_CHECK(w > 0 && (size_t)w < cap, CIS_ERR_USAGE, "%s path too long", suffix);
  return CIS_OK;
}

static cis_err export_matrix(const cis_options *o, const cis_hmat *h) {
  cis_row_source src;
  cis_hmat_row_source(h, &src);
  CIS_CALL(cis_matrix_write(o->export_matrix, &src));
  if (!o->quiet)
    printf("exported         %s (%lld x %lld, %lld nonzeros)\n", o->export_matrix,
           (long long)src.n, (long long)src.n, (long long)src.nnz);
  return CIS_OK;
}

/* Read the restart checkpoint and check that it belongs to this problem. */
static cis_err load_restart(const cis_options *o, const cis_fingerprint *fp, cis_ckpt *ck) {
  const char *path = cis_files_restart_path(o);
  CIS_CALL(cis_ckpt_read(path, ck));
  CIS_CALL(cis_fingerprint_check(path, &ck->fp, fp));
  CIS_CHECK(ck->n == fp->ndet && ck->k == fp->nroots, CIS_ERR_INPUT,
            "checkpoint %s holds %d vectors of length %lld; this run needs %d of length %lld", path,
            ck->k, (long long)ck->n, fp->nroots, (long long)fp->ndet);
  if (!o->quiet)
    printf("restart          %s: iteration %d, %lld matrix-vector products so far%s\n", path,
           ck->iteration, (long long)ck->matvecs, ck->converged ? ", converged" : "");
  return CIS_OK;
}

/* Several ranks: each takes its node's GPU of its rank (unless --device gpu:N names one), and
 * what needs the whole matrix in one process is refused. */
static cis_err ranks_options(cis_options *o) {
  char note[512];
  if (!o->quiet && cis_comm_cores_note(note, (int)sizeof note)) printf("note             %s\n", note);
  if (cis_comm_size() == 1) return CIS_OK;
  if (o->threads <= 0) o->threads = cis_comm_default_threads(); /* the ranks share the node */
  CIS_CHECK(!o->export_matrix[0], CIS_ERR_USAGE,
            "--export-matrix needs the whole matrix in one process: run it without mpirun/srun");
  int ngpu = o->device == CIS_DEVICE_CPU ? 0 : cis_backend_cuda_device_count();
  if (o->device_index < 0 && ngpu > 0) o->device_index = cis_comm_local_rank() % ngpu;
  return CIS_OK;
}

/* Several ranks: each rank's build, upload and products, for the fastest and slowest. */
static cis_err rank_times(cis_report *r, double t_matvec) {
  int P = cis_comm_size();
  if (P == 1) return CIS_OK;
  double mine[3] = {r->t_space + r->t_hmat, r->t_upload, t_matvec}, *all = NULL;
  CIS_CALL(cis_malloc(&all, (size_t)P * 3, sizeof *all, "ranks' times"));
  cis_err e = cis_comm_allgather(mine, (int)sizeof mine, all);
  for (int i = 0; i < 3 && e == CIS_OK; i++) {
    r->rank_min[i] = r->rank_max[i] = all[i];
    for (int p = 1; p < P; p++) {
      r->rank_min[i] = CIS_MIN(r->rank_min[i], all[3 * p + i]);
      r->rank_max[i] = CIS_MAX(r->rank_max[i], all[3 * p + i]);
    }
  }
  cis_free(&all);
  return e;
}

/* With several ranks, each solves on its rows: the checkpoint's whole vectors give way to this
 * rank's rows of them (be, the operator's backend: its part). */
static cis_err restart_part(const cis_backend *be, cis_ckpt *ck) {
  if (!cis_backend_is_part(be)) return CIS_OK;
  double **v[2] = {&ck->X, &ck->HX};
  for (int i = 0; i < 2; i++) {
    double *mine = NULL;
    CIS_CALL(cis_malloc(&mine, (size_t)be->n * (size_t)ck->k, sizeof *mine, "restart vectors"));
    cis_backend_take_part(be, *v[i], ck->k, mine);
    cis_free(v[i]);
    *v[i] = mine;
  }
  return CIS_OK;
}

static cis_err run(int argc, char **argv, int *exit_code) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  cis_options opt;
  cis_problem prob;
  cis_pipeline pl;
  cis_ckpt ck;
  cis_runctl rc;
  cis_pipeline_init(&pl);
  memset(&ck, 0, sizeof ck);
  memset(&rc, 0, sizeof rc);
  memset(&prob, 0, sizeof prob);
  cis_report rep = {0};
  cis_target target;
  memset(&target, 0, sizeof target);
  rep.t_start = cis_wtime();
  int exit_now = 0;

  cis_options_default(&opt);
  CIS_TRY(cis_options_parse(argc, argv, &opt, &exit_now));
  if (exit_now) goto cleanup;
  if (opt.write_input[0]) { /* a conversion: the input as input.h5, no solve */
    CIS_TRY(cis_files_check(&opt));
    CIS_TRY(cis_input_read(opt.input, &prob));
    CIS_TRY(cis_options_apply_file(&opt, &prob.file_options, argc, argv));
    CIS_TRY(cis_pipeline_resolve_problem(&opt, &prob, &target));
    if (cis_comm_rank() == 0) CIS_TRY(cis_h5input_write(opt.write_input, &prob));
    goto cleanup;
  }
  /* Paths come from the command line alone: every file is checked before any work. */
  if (!opt.output[0])
    CIS_TRY(input_stem_path(opt.input, ".out.h5", opt.output, sizeof opt.output));
  if (!opt.checkpoint[0])
    CIS_TRY(beside_output(&opt, ".ckpt.h5", opt.checkpoint, sizeof opt.checkpoint));
  if (opt.molden_set && !opt.molden[0])
    CIS_TRY(beside_output(&opt, ".molden", opt.molden, sizeof opt.molden));
  CIS_TRY(cis_irrep_all_paths(&opt));
  CIS_TRY(cis_files_check(&opt));
  cis_signals_install();
  CIS_TRY(cis_input_read(opt.input, &prob));
  if (cis_runctl_stop_before_solver(&opt, "reading the input", argc, argv)) {
    *exit_code = CIS_EXIT_INTERRUPTED;
    goto cleanup;
  }
  CIS_TRY(cis_options_apply_file(&opt, &prob.file_options, argc, argv));
  CIS_TRY(cis_irrep_all_paths(&opt));
  CIS_TRY(ranks_options(&opt));
  if (opt.matrix_free == CIS_MATRIX_FREE_ON && opt.export_matrix[0])
    CIS_FAIL(CIS_ERR_USAGE, "--export-matrix writes the stored matrix: --matrix-free stores none");
  if (opt.walltime > 0) cis_walltime_set(rep.t_start + opt.walltime);
  if (opt.threads > 0) {
    omp_set_num_threads(opt.threads);
    cis_blas_cap_threads(opt.threads);
  }
  CIS_TRY(cis_pipeline_resolve_problem(&opt, &prob, &target));
  CIS_TRY(cis_files_check_molden(&opt, &prob));
  /* Whether the restart checkpoint belongs to this problem, as far as it can be told before the
   * build (the space's size and Reference region are compared once built). */
  cis_fingerprint fp;
  cis_fingerprint_make(&prob, -1, -1, opt.nroots, opt.spin_set ? opt.spin2 : -1, opt.spin_shift,
                       &fp);
  if (opt.restart_set) CIS_TRY(cis_ckpt_check(cis_files_restart_path(&opt), &fp));
  rep.t_read = cis_wtime() - rep.t_start;
  /* a GPU's context starts while the matrix is built */
  if (opt.device != CIS_DEVICE_CPU && !opt.dry_run) cis_backend_cuda_prewarm(opt.device_index);
  rep.opt = &opt;
  rep.prob = &prob;
  rep.target = &target;
  cis_report_problem(&rep);

  double t0;
  double spin_shift = 0.0, spin_s2 = 0.0;
  CIS_TRY(cis_pipeline_spin_penalty(&opt, &prob, &spin_shift, &spin_s2));
  if (opt.dry_run) { /* the plan, printed: no matrix built, no file written */
    cis_plan plan;
    CIS_TRY(cis_plan_make(&opt, &prob, spin_shift, spin_s2, &plan));
    cis_report_plan(&rep, &plan);
    goto cleanup;
  }
  /* the space, the plan's decisions and the Hamiltonian (app/pipeline.c) */
  CIS_TRY(cis_pipeline_hamiltonian(&pl, &opt, &prob, cis_report_progress(&rep)));
  rep.t_space = pl.t_space;
  rep.t_hmat = pl.t_hmat;
  rep.h = pl.h;
  rep.dec = &pl.dec;
  if (opt.export_matrix[0]) CIS_TRY(export_matrix(&opt, pl.h));

  CIS_TRY(cis_pipeline_backend(&pl, &opt));
  rep.t_device = pl.t_device;
  rep.be = pl.be;
  rep.t_upload = pl.t_upload;
  rep.op = pl.op;
  cis_report_matrix(&rep);

  fp.ndet = pl.h->n;
  fp.nref = pl.h->nref;
  if (opt.restart_set) CIS_TRY(load_restart(&opt, &fp, &ck));
  if (opt.restart_set) CIS_TRY(restart_part(pl.op->be, &ck));

  CIS_TRY(cis_pipeline_states(&pl, &opt));
  cis_eig_opts *eo = &pl.eo;
  CIS_TRY(cis_runctl_init(&rc, &rep, &opt, pl.op, &fp, opt.restart_set ? &ck : NULL));
  eo->on_iter = cis_runctl_iter;
  eo->on_save = cis_runctl_save;
  eo->on_iter_ctx = &rc;
  eo->poll = cis_runctl_poll;
  eo->save_final = 1;
  /* A restart resumes the solver from the checkpoint's vectors, converged or not: its first
   * iteration is the checkpoint's, judged again by this run's criteria (no product; the run
   * goes on when they do not hold), and whatever follows a solve follows it here too. */
  if (opt.restart_set) {
    eo->guess_X = ck.X;
    eo->guess_HX = ck.HX;
    eo->guess_evals = cis_ckpt_previous_evals(&ck);
    eo->iter_start = ck.iteration - 1;
  }
  if (cis_runctl_stop_before_solver(&opt, "building the Hamiltonian", argc, argv)) {
    *exit_code = CIS_EXIT_INTERRUPTED;
    goto cleanup;
  }
  t0 = cis_wtime();
  err = cis_pipeline_solve(&pl, &opt);
  if (err == CIS_ERR_INTERRUPTED && rc.stopping) {
    cis_runctl_report_stop(&rc, pl.res.iterations, argc, argv);
    cis_error_clear();
    *exit_code = CIS_EXIT_INTERRUPTED;
    err = CIS_OK;
    goto cleanup;
  }
  CIS_TRY(err);
  rep.t_solve = cis_wtime() - t0;
  pl.res.matvecs += rc.matvecs_before;

  t0 = cis_wtime();
  CIS_TRY(cis_pipeline_results(&pl, &opt, 1));
  rep.t_analysis = cis_wtime() - t0;
  rep.an = &pl.an;
  CIS_TRY(rank_times(&rep, pl.res.t_matvec));
  cis_report_results(&rep, &pl.res, pl.s2);
  cis_output out = {.opt = &opt, .h = pl.h, .res = &pl.res, .s2 = pl.s2,
                    .version = CISOLVE_VERSION, .device_desc = pl.be->desc};
  if (cis_files_output_discarded(&opt)) {
    if (!opt.quiet) printf("results          not written (--output /dev/null)\n");
  } else if (cis_comm_rank() == 0) { /* one rank writes */
    CIS_TRY(cis_output_write_analysis(opt.output, &out, &pl.an));
    if (!opt.quiet) printf("results          %s\n", opt.output);
  }
  if (opt.molden_set && cis_comm_rank() == 0)
    CIS_TRY(cis_analysis_write_molden(&opt, &prob.orbitals, pl.res.nroots, &pl.an));
  *exit_code = pl.res.all_converged ? CIS_EXIT_OK : CIS_EXIT_NOT_CONVERGED;

cleanup:
  cis_backend_cuda_prewarm_join();
  cis_runctl_free(&rc);
  cis_ckpt_free(&ck);
  cis_pipeline_free(&pl);
  cis_problem_free(&prob);
  if (err != CIS_OK) *exit_code = cis_exit_code(err);
  return err;
}

int main(int argc, char **argv) {
  cis_io_init();
  int exit_code = 0;
  int verbose = 0;
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--verbose") == 0 || strcmp(argv[i], "-v") == 0) verbose = 1;
  cis_err e = cis_blas_prepare(argv);
  if (e == CIS_OK) e = cis_comm_init(&argc, &argv);
  if (e == CIS_OK)
    e = cis_irrep_all_asked(argc, argv) ? cis_irrep_all(argc, argv, run, &exit_code)
                                        : run(argc, argv, &exit_code);
  else exit_code = cis_exit_code(e);
  if (e != CIS_OK) {
    fflush(stdout);
    fputs(cis_comm_prefix(), stderr);
    cis_error_print(verbose);
    if (e == CIS_ERR_USAGE) fprintf(stderr, "(see cisolve --help)\n");
    /* the other ranks may be waiting for this one: the job ends here, with this code */
    cis_comm_abort(exit_code);
  }
  cis_comm_finalize();
  return exit_code;
}
