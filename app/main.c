/* cisolve: the command-line driver. One pass: read the input, build the determinant space and
 * the hybrid Hamiltonian, pick a backend, solve, report, write output.h5. */
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

/* The checkpoint beside the output: OUTPUT without ".out.h5" (or ".h5"), plus ".ckpt.h5"; with
 * the output discarded, beside where it would have gone. */
static cis_err default_checkpoint(cis_options *o) {
  if (cis_files_output_discarded(o))
    return input_stem_path(o->input, ".ckpt.h5", o->checkpoint, sizeof o->checkpoint);
  char stem[4080];
  size_t n = strlen(o->output);
  CIS_CHECK(n < sizeof stem, CIS_ERR_USAGE, "output path too long: %s", o->output);
  memcpy(stem, o->output, n + 1);
  if (n > 7 && strcmp(stem + n - 7, ".out.h5") == 0)
    stem[n - 7] = '\0';
  else if (n > 3 && strcmp(stem + n - 3, ".h5") == 0)
    stem[n - 3] = '\0';
  int w = snprintf(o->checkpoint, sizeof o->checkpoint, "%s.ckpt.h5", stem);
  CIS_CHECK(w > 0 && (size_t)w < sizeof o->checkpoint, CIS_ERR_USAGE, "checkpoint path too long");
  return CIS_OK;
}

/* Apply --space and --ms2 to the problem read from the input, then the target (irrep and
 * reference determinant: app/target.h). */
static cis_err resolve_problem(const cis_options *o, cis_problem *p, cis_target *t) {
  if (p->kind == CIS_PROBLEM_MATRIX) {
    CIS_CALL(cis_target_resolve(o, p, t));
    CIS_CHECK(!o->space_set && !o->ms2_set, CIS_ERR_USAGE,
              "%s holds an explicit matrix: --space and --ms2 apply only to integral inputs",
              o->input);
    return CIS_OK;
  }
  if (o->ms2_set) {
    int nelec = p->ints.nalpha + p->ints.nbeta;
    CIS_CHECK(abs(o->ms2) <= nelec && (nelec + o->ms2) % 2 == 0, CIS_ERR_USAGE,
              "--ms2 %d is impossible with %d electrons (need |MS2| <= NELEC and the same parity)",
              o->ms2, nelec);
    p->ints.nalpha = (nelec + o->ms2) / 2;
    p->ints.nbeta = (nelec - o->ms2) / 2;
  }
  if (o->space_set) {
    if (o->space_kind == CIS_SPACE_LIST)
      CIS_CHECK(p->space.kind == CIS_SPACE_LIST && p->space.ndets > 0, CIS_ERR_USAGE,
                "--space list: %s has no determinant list (/space/det_alpha, det_beta)", o->input);
    p->space.kind = o->space_kind;
    p->space.level = o->space_level;
  }
  return cis_target_resolve(o, p, t);
}

/* --spin S: a spin the electrons and orbitals can reach (cis_problem_check_spin); sets the
 * penalty. */
static cis_err spin_penalty(const cis_options *o, const cis_problem *p, double *shift,
                            double *s2) {
  if (!o->spin_set) return CIS_OK;
  CIS_CHECK(p->kind == CIS_PROBLEM_INTEGRALS, CIS_ERR_USAGE,
            "--spin applies only to integral inputs (%s holds an explicit matrix)", o->input);
  CIS_CALL(cis_problem_check_spin(&p->ints, o->spin2));
  *shift = o->spin_shift;
  *s2 = 0.25 * o->spin2 * (o->spin2 + 2);
  return CIS_OK;
}

/* The backend for --device; `h` is the matrix built for it (a GPU run may have cached none of
 * it on the host, which the CPU then regenerates in every product). */
static cis_err make_backend(const cis_options *o, const cis_hmat *h, cis_backend **be) {
  int64_t n = h->n;
  if (o->device == CIS_DEVICE_CPU) return cis_backend_create_cpu(n, o->threads, be);
  if (o->device == CIS_DEVICE_GPU) {
    CIS_CALL(cis_backend_create_cuda(n, o->device_index, be));
    return CIS_OK;
  }
  /* auto: the GPU when one is usable, else the CPU, and say which and why. */
  if (cis_backend_cuda_device_count() > 0) {
    cis_err e = cis_backend_create_cuda(n, o->device_index, be);
    if (e == CIS_OK) return CIS_OK;
    if (!o->quiet) {
      printf("note             GPU not usable (%s); using the CPU\n", cis_error_message());
      if (h->hyb.ncached < h->hyb.nblocks && o->mem < 0)
        printf("note             the matrix was built for the GPU, with no host cache: the CPU "
               "regenerates it in every product (--device cpu caches it)\n");
    }
    cis_error_clear();
  } else if (!o->quiet) {
    printf("note             no usable GPU%s; using the CPU\n",
#ifdef CISOLVE_HAVE_CUDA
           ""
#else
           " (built without CUDA)"
#endif
    );
  }
  return cis_backend_create_cpu(n, o->threads, be);
}

/* The matrix as the solver's operator on `be`: uploaded to a device backend's GPU, with room
 * kept for the solver's vectors, or applied on the host. */
static cis_err make_operator(const cis_options *o, const cis_hmat *h, cis_backend *be,
                             int64_t nvec, cis_operator **op) {
  cis_operator_info info = {h->n, h->hdiag, h->npre, h->hpp};
  if (be->is_device)
    return cis_hyb_cuda_op_create(&h->hyb, &info, be, o->gpu_mem, nvec, op);
  return cis_hyb_op_create(&h->hyb, &info, be, op);
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

/* Davidson, or Lanczos when asked (a restart resumes with Davidson: the checkpoint holds Ritz
 * vectors and their products, which is what Davidson restarts from). */
static cis_err solve(const cis_options *o, cis_backend *be, cis_operator *op,
                     const cis_eig_opts *eo, cis_eig_result *res) {
  if (o->solver == CIS_SOLVER_LANCZOS && !o->restart_set)
    return cis_lanczos_solve(be, op, eo, res);
  if (o->solver == CIS_SOLVER_LANCZOS && !o->quiet)
    printf("note             a restart resumes with Davidson\n");
  return cis_davidson_solve(be, op, eo, res);
}

/* Solve, then make sure no lower state was missed. */
static cis_err solve_checked(const cis_options *o, cis_backend *be, cis_operator *op,
                             const cis_hmat *h, const cis_refstates *st, const cis_eig_opts *eo,
                             cis_eig_result *res, cis_analysis *an) {
  CIS_CALL(solve(o, be, op, eo, res));
  if (o->check_roots != CIS_CHECK_NONE)
    CIS_CALL(cis_analysis_check_blocks(o, be, op, st, eo, res, an));
  if (o->check_roots == CIS_CHECK_FULL)
    CIS_CALL(cis_analysis_check_roots(o, be, op, h, eo, res, an));
  return CIS_OK;
}

static cis_err run(int argc, char **argv, int *exit_code) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  cis_options opt;
  cis_problem prob;
  cis_space *space = NULL;
  cis_hmat *h = NULL;
  cis_backend *be = NULL;
  cis_operator *op = NULL;
  cis_block_sink *pool = NULL;
  cis_plan_decisions dec;
  cis_eig_result res;
  cis_ckpt ck;
  cis_runctl rc;
  double *s2 = NULL;
  cis_analysis an;
  cis_analysis_buf abuf;
  cis_refstates rst;
  memset(&rst, 0, sizeof rst);
  memset(&dec, 0, sizeof dec);
  memset(&an, 0, sizeof an);
  memset(&abuf, 0, sizeof abuf);
  memset(&ck, 0, sizeof ck);
  memset(&rc, 0, sizeof rc);
  memset(&prob, 0, sizeof prob);
  memset(&res, 0, sizeof res);
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
    CIS_TRY(resolve_problem(&opt, &prob, &target));
    CIS_TRY(cis_h5input_write(opt.write_input, &prob));
    goto cleanup;
  }
  /* Paths come from the command line alone: every file is checked before any work. */
  if (!opt.output[0])
    CIS_TRY(input_stem_path(opt.input, ".out.h5", opt.output, sizeof opt.output));
  if (!opt.checkpoint[0]) CIS_TRY(default_checkpoint(&opt));
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
  if (opt.walltime > 0) cis_walltime_set(rep.t_start + opt.walltime);
  if (opt.threads > 0) omp_set_num_threads(opt.threads);
  CIS_TRY(resolve_problem(&opt, &prob, &target));
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

  double t0 = cis_wtime();
  cis_hmat_opts hopt;
  double spin_shift = 0.0, spin_s2 = 0.0;
  CIS_TRY(spin_penalty(&opt, &prob, &spin_shift, &spin_s2));
  if (opt.dry_run) { /* the plan, printed: no matrix built, no file written */
    cis_plan plan;
    CIS_TRY(cis_plan_make(&opt, &prob, spin_shift, spin_s2, &plan));
    cis_report_plan(&rep, &plan);
    goto cleanup;
  }
  if (prob.kind == CIS_PROBLEM_INTEGRALS) {
    cis_space_opts sopt = {.ref_size = opt.ref_size, .nthreads = opt.threads};
    CIS_TRY(cis_space_build(&prob.ints, &prob.space, &sopt, &space));
    rep.t_space = cis_wtime() - t0;
    /* the plan's decisions (app/plan.c says why), executed: the build's options and pool */
    cis_plan_decide(&opt, cis_space_ndet(space), 1, &dec);
    CIS_TRY(cis_plan_check_vectors(&opt, dec.n, dec.ci, dec.gpu));
    cis_plan_hmat_opts(&opt, &dec, &hopt);
    hopt.progress = cis_report_progress(&rep);
    if (dec.pool_bytes > 0) {
      if (cis_hyb_cuda_op_pool_create(opt.device_index, dec.pool_bytes, &pool) == CIS_OK)
        hopt.sink = pool;
      else
        cis_error_clear();
    }
    t0 = cis_wtime();
    CIS_TRY(cis_hmat_build_ci_penalty(&prob.ints, space, &hopt, spin_shift, spin_s2, &h));
  } else {
    cis_plan_decide(&opt, prob.matrix.n, 0, &dec);
    CIS_TRY(cis_plan_check_vectors(&opt, dec.n, dec.ci, dec.gpu));
    cis_plan_hmat_opts(&opt, &dec, &hopt);
    hopt.progress = cis_report_progress(&rep);
    CIS_TRY(cis_hmat_build_csr(&prob.matrix, &hopt, &h));
  }
  rep.t_hmat = cis_wtime() - t0;
  rep.h = h;
  rep.dec = &dec;
  CIS_TRY(cis_plan_check_nroots(&opt, h->n));
  if (opt.export_matrix[0]) CIS_TRY(export_matrix(&opt, h));

  t0 = cis_wtime();
  cis_backend_cuda_prewarm_join();
  CIS_TRY(make_backend(&opt, h, &be));
  rep.t_device = cis_wtime() - t0;
  rep.be = be;
  t0 = cis_wtime();
  CIS_TRY(make_operator(&opt, h, be, dec.device_vectors, &op));
  rep.t_upload = cis_wtime() - t0;
  rep.op = op;
  cis_report_matrix(&rep);

  fp.ndet = h->n;
  fp.nref = h->nref;
  if (opt.restart_set) CIS_TRY(load_restart(&opt, &fp, &ck));

  /* the Reference block's states within symmetry blocks: the guess, and the check */
  cis_refsym rsym = {h->ref_label, h->ref_partner, h->ref_bound};
  CIS_TRY(cis_refstates_make(h->npre, h->hpp, &rsym, &rst));

  cis_eig_opts eo;
  cis_eig_opts_default(&eo, opt.nroots);
  eo.states = &rst;
  eo.tol_energy = opt.tol_energy;
  eo.tol_residual = opt.tol_residual;
  eo.max_iter = opt.max_iter;
  if (opt.max_subspace) eo.max_subspace = opt.max_subspace;
  eo.level_shift = opt.level_shift;
  CIS_TRY(cis_runctl_init(&rc, &rep, &opt, op, &fp, opt.restart_set ? &ck : NULL));
  eo.on_iter = cis_runctl_iter;
  eo.on_save = cis_runctl_save;
  eo.on_iter_ctx = &rc;
  eo.poll = cis_runctl_poll;
  eo.save_final = 1;
  /* A restart resumes the solver from the checkpoint's vectors, converged or not: its first
   * iteration is the checkpoint's, judged again by this run's criteria (no product; the run
   * goes on when they do not hold), and whatever follows a solve follows it here too. */
  if (opt.restart_set) {
    eo.guess_X = ck.X;
    eo.guess_HX = ck.HX;
    eo.guess_evals = cis_ckpt_previous_evals(&ck);
    eo.iter_start = ck.iteration - 1;
  }
  if (cis_runctl_stop_before_solver(&opt, "building the Hamiltonian", argc, argv)) {
    *exit_code = CIS_EXIT_INTERRUPTED;
    goto cleanup;
  }
  t0 = cis_wtime();
  err = solve_checked(&opt, be, op, h, &rst, &eo, &res, &an);
  if (err == CIS_ERR_INTERRUPTED && rc.stopping) {
    cis_runctl_report_stop(&rc, res.iterations, argc, argv);
    cis_error_clear();
    *exit_code = CIS_EXIT_INTERRUPTED;
    err = CIS_OK;
    goto cleanup;
  }
  CIS_TRY(err);
  rep.t_solve = cis_wtime() - t0;
  res.matvecs += rc.matvecs_before;

  t0 = cis_wtime();
  if (space) {
    CIS_TRY(cis_malloc(&s2, (size_t)res.nroots, sizeof *s2, "<S^2> values"));
    CIS_TRY(cis_space_s2(space, res.nroots, res.evecs, s2));
  }
  CIS_TRY(cis_analysis_run(&opt, h, &res, s2, &an, &abuf));
  rep.t_analysis = cis_wtime() - t0;
  rep.an = &an;
  cis_report_results(&rep, &res, s2);
  cis_output out = {.opt = &opt, .h = h, .res = &res, .s2 = s2, .version = CISOLVE_VERSION,
                    .device_desc = be->desc};
  if (cis_files_output_discarded(&opt)) {
    if (!opt.quiet) printf("results          not written (--output /dev/null)\n");
  } else {
    CIS_TRY(cis_output_write_analysis(opt.output, &out, &an));
    if (!opt.quiet) printf("results          %s\n", opt.output);
  }
  *exit_code = res.all_converged ? CIS_EXIT_OK : CIS_EXIT_NOT_CONVERGED;

cleanup:
  cis_backend_cuda_prewarm_join();
  cis_runctl_free(&rc);
  cis_ckpt_free(&ck);
  cis_free(&s2);
  cis_analysis_buf_free(&abuf);
  cis_refstates_free(&rst);
  cis_eig_result_free(&res);
  cis_hyb_cuda_op_pool_destroy(&pool);
  cis_operator_destroy(&op);
  cis_backend_destroy(&be);
  cis_hmat_destroy(&h);
  cis_space_destroy(&space);
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
  if (e == CIS_OK)
    e = cis_irrep_all_asked(argc, argv) ? cis_irrep_all(argc, argv, run, &exit_code)
                                        : run(argc, argv, &exit_code);
  else exit_code = cis_exit_code(e);
  if (e != CIS_OK) {
    fflush(stdout);
    cis_error_print(verbose);
    if (e == CIS_ERR_USAGE) fprintf(stderr, "(see cisolve --help)\n");
  }
  return exit_code;
}
