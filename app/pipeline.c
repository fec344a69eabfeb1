/* cisolve: the steps from a problem to its converged roots (app/pipeline.h), one function each,
 * shared by the program and the C API. */
#include "app/pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/spaces.h"
#include "base/util.h"
#include "kernels/comm.h"
#include "hamiltonian/hmat_op.h"
#include "hamiltonian/rdm.h"
#include "spmv/hyb_op.h"

void cis_pipeline_init(cis_pipeline *pl) { memset(pl, 0, sizeof *pl); }

void cis_pipeline_free_solve(cis_pipeline *pl) {
  cis_free(&pl->s2);
  cis_analysis_buf_free(&pl->abuf);
  cis_refstates_free(&pl->rst);
  cis_eig_result_free(&pl->res);
  cis_hyb_cuda_op_pool_destroy(&pl->pool);
  cis_operator_destroy(&pl->op);
  cis_backend_destroy(&pl->be);
  cis_hmat_destroy(&pl->h);
  cis_free(&pl->bounds);
  cis_nccl_destroy(&pl->nccl);
  cis_space *space = pl->space;
  memset(pl, 0, sizeof *pl);
  pl->space = space;
}

void cis_pipeline_free(cis_pipeline *pl) {
  cis_pipeline_free_solve(pl);
  cis_space_destroy(&pl->space);
}

cis_err cis_pipeline_resolve_problem(const cis_options *o, cis_problem *p, cis_target *t) {
  if (p->kind == CIS_PROBLEM_MATRIX) {
    CIS_CALL(cis_target_resolve(o, p, t));
    CIS_CHECK(!o->space_set && !o->ms2_set && o->frozen < 0 && !o->active[0] && !o->cas_norb,
              CIS_ERR_USAGE,
              "%s holds an explicit matrix: --space, --ms2, --frozen, --active and --cas apply "
              "only to integral inputs", o->input);
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
  CIS_CALL(cis_resolve_orbitals(o, p));
  CIS_CALL(cis_target_resolve(o, p, t));
  CIS_CALL(cis_resolve_mrci(o, p));
  return CIS_OK;
}

cis_err cis_pipeline_spin_penalty(const cis_options *o, const cis_problem *p, double *shift,
                                  double *s2) {
  *shift = 0.0;
  *s2 = 0.0;
  if (!o->spin_set) return CIS_OK;
  CIS_CHECK(p->kind == CIS_PROBLEM_INTEGRALS, CIS_ERR_USAGE,
            "--spin applies only to integral inputs (%s holds an explicit matrix)", o->input);
  CIS_CALL(cis_problem_check_spin(&p->ints, o->spin2));
  *shift = o->spin_shift;
  *s2 = 0.25 * o->spin2 * (o->spin2 + 2);
  return CIS_OK;
}

cis_err cis_pipeline_space(cis_pipeline *pl, const cis_options *o, const cis_problem *p) {
  if (p->kind != CIS_PROBLEM_INTEGRALS || pl->space) return CIS_OK;
  double t0 = cis_wtime();
  cis_space_opts sopt = {.ref_size = o->ref_size, .nthreads = o->threads};
  CIS_CALL(cis_space_build(&p->ints, &p->space, &sopt, &pl->space));
  pl->t_space = cis_wtime() - t0;
  return CIS_OK;
}

/* Several ranks: the rows split (rank 0's split, which every rank takes), and for a CI matrix
 * the build told to generate this rank's alone. */
static cis_err split_ci(cis_pipeline *pl, const cis_options *o, const cis_problem *p,
                        cis_hmat_opts *hopt) {
  int P = cis_comm_size(), me = cis_comm_rank();
  CIS_CALL(cis_malloc(&pl->bounds, (size_t)P + 1, sizeof *pl->bounds, "rows split"));
  int64_t block_rows = 0;
  if (me == 0) CIS_CALL(cis_hmat_split_blocks(&p->ints, pl->space, hopt, &block_rows));
  CIS_CALL(cis_comm_bcast(&block_rows, (int64_t)sizeof block_rows, 0));
  /* every rank samples its share of the blocks, with its own threads */
  int64_t n = cis_space_ndet(pl->space), nb = (n + block_rows - 1) / block_rows;
  double *w = NULL;
  CIS_CALL(cis_calloc(&w, (size_t)nb, sizeof *w, "rows split"));
  cis_err e = cis_hmat_split_weigh(&p->ints, pl->space, hopt->nthreads, block_rows, me, P, w);
  if (e == CIS_OK) e = cis_comm_sum_f64(w, nb); /* a rank that fails ends the job (app/main.c) */
  if (e == CIS_OK && me == 0) cis_hmat_split_cut(w, n, block_rows, P, pl->bounds);
  cis_free(&w);
  CIS_CALL(e);
  CIS_CALL(cis_comm_bcast(pl->bounds, (int64_t)sizeof *pl->bounds * (P + 1), 0));
  hopt->block_rows = block_rows;
  hopt->row_begin = pl->bounds[me];
  hopt->row_end = pl->bounds[me + 1];
  hopt->rows_split = 1;
  /* the solver's vectors: this rank's rows of them, and the products' gathered vectors */
  int64_t nback = cis_plan_device_vectors(o);
  hopt->solver_vectors = hopt->solver_vectors - nback +
                         cis_plan_rank_vectors(o, nback, hopt->row_end - hopt->row_begin, n);
  if (o->mem < 0 && hopt->host_cache > 0) /* the default budget, with what they leave */
    hopt->host_cache = cis_hmat_default_budget(n, hopt->solver_vectors);
  return CIS_OK;
}

/* Several ranks, an explicit matrix (built whole, it is cheap): reduced to this rank's rows. */
static cis_err split_built(cis_pipeline *pl) {
  int P = cis_comm_size(), me = cis_comm_rank();
  CIS_CALL(cis_malloc(&pl->bounds, (size_t)P + 1, sizeof *pl->bounds, "rows split"));
  if (me == 0) cis_hmat_split_built(pl->h, P, pl->bounds);
  CIS_CALL(cis_comm_bcast(pl->bounds, (int64_t)sizeof *pl->bounds * (P + 1), 0));
  return cis_hmat_keep_rows(pl->h, pl->bounds[me], pl->bounds[me + 1], &pl->nnz_local);
}

/* GPU ranks: NCCL's set-up begun now, on a helper thread, so that it overlaps the build (every
 * rank with a GPU, or none); where it cannot begin, the operator sets NCCL up or gathers through
 * the host, and says why. */
static void start_nccl(cis_pipeline *pl, const cis_options *o) {
  int want = o->device != CIS_DEVICE_CPU && cis_backend_cuda_device_count() > 0;
  if (cis_comm_or(!want)) return;
  if (cis_nccl_start(o->device_index, &pl->nccl) != CIS_OK) cis_error_clear();
}

/* Several ranks store their rows or all generate them, as rank 0 decided: --matrix-free auto
 * weighs each rank's threads and GPU, which may differ between nodes. */
static cis_err agree_matrix_free(cis_pipeline *pl, const cis_options *o) {
  int mf = pl->dec.matrix_free;
  CIS_CALL(cis_comm_bcast(&mf, (int64_t)sizeof mf, 0));
  if (mf != pl->dec.matrix_free) {
    cis_options forced = *o;
    forced.matrix_free = mf ? CIS_MATRIX_FREE_ON : CIS_MATRIX_FREE_OFF;
    cis_plan_decide(&forced, cis_space_ndet(pl->space), pl->space, &pl->dec);
  }
  return CIS_OK;
}

cis_err cis_pipeline_hamiltonian(cis_pipeline *pl, const cis_options *o, const cis_problem *p,
                                 cis_progress *progress) {
  cis_hmat_opts hopt;
  CIS_CALL(cis_pipeline_spin_penalty(o, p, &pl->spin_shift, &pl->spin_s2));
  if (p->kind == CIS_PROBLEM_INTEGRALS) {
    CIS_CALL(cis_pipeline_space(pl, o, p));
    /* the plan's decisions (app/plan.c says why), executed: the build's options and pool */
    cis_plan_decide(o, cis_space_ndet(pl->space), pl->space, &pl->dec);
    if (cis_comm_size() > 1) CIS_CALL(agree_matrix_free(pl, o));
    if (cis_comm_size() > 1) start_nccl(pl, o);
    CIS_CALL(cis_plan_check_vectors(o, pl->dec.n, pl->dec.ci, pl->dec.gpu));
    cis_plan_hmat_opts(o, &pl->dec, &hopt);
    hopt.progress = progress;
    double t_split = cis_wtime(); /* the split is the build's first step */
    if (cis_comm_size() > 1) CIS_CALL(split_ci(pl, o, p, &hopt));
    t_split = cis_wtime() - t_split;
    if (pl->dec.pool_bytes > 0) {
      if (cis_hyb_cuda_op_pool_create(o->device_index, pl->dec.pool_bytes, &pl->pool) == CIS_OK)
        hopt.sink = pl->pool;
      else
        cis_error_clear();
    }
    double t0 = cis_wtime();
    CIS_CALL(cis_hmat_build_ci_penalty(&p->ints, pl->space, &hopt, pl->spin_shift, pl->spin_s2,
                                       &pl->h));
    pl->t_hmat = t_split + cis_wtime() - t0;
    pl->nnz_local = pl->h->matrix_free ? (int64_t)pl->h->mf_nnz
                                       : pl->h->hyb.ell.nnz + pl->h->hyb.nnz_exp;
  } else {
    CIS_CHECK(o->matrix_free != CIS_MATRIX_FREE_ON, CIS_ERR_USAGE,
              "--matrix-free generates the rows of a CI Hamiltonian: %s holds an explicit matrix, "
              "whose rows are stored", o->input);
    cis_plan_decide(o, p->matrix.n, NULL, &pl->dec);
    CIS_CALL(cis_plan_check_vectors(o, pl->dec.n, pl->dec.ci, pl->dec.gpu));
    cis_plan_hmat_opts(o, &pl->dec, &hopt);
    hopt.progress = progress;
    double t0 = cis_wtime();
    CIS_CALL(cis_hmat_build_csr(&p->matrix, &hopt, &pl->h));
    if (cis_comm_size() > 1) CIS_CALL(split_built(pl));
    pl->t_hmat = cis_wtime() - t0;
  }
  CIS_CALL(cis_plan_check_nroots(o, pl->h->n));
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
  /* auto: the GPU when one is usable, else the CPU, and say which and why (not for a matrix
   * built on the GPU, whose rows only a GPU stores). */
  if (cis_backend_cuda_device_count() > 0) {
    cis_err e = cis_backend_create_cuda(n, o->device_index, be);
    if (e == CIS_OK || h->hyb.device_built) return e;
    if (!o->quiet) {
      printf("note             GPU not usable (%s); using the CPU\n", cis_error_message());
      if (h->matrix_free && o->matrix_free == CIS_MATRIX_FREE_AUTO)
        printf("note             no row was stored (--matrix-free auto chose to generate them on "
               "the GPU): the CPU generates every row in every product (--device cpu stores "
               "them)\n");
      else if (h->hyb.ncached < h->hyb.nblocks && o->mem < 0)
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
  if (h->matrix_free) return cis_hmat_rowgen_op_create(h, be, op);
  CIS_CHECK(be->is_device || !h->hyb.device_built, CIS_ERR_INTERNAL,
            "the matrix was built on the GPU, but the run is on the CPU");
  if (be->is_device)
    return cis_hyb_cuda_op_create(&h->hyb, &info, be, o->gpu_mem, nvec, op);
  return cis_hyb_op_create(&h->hyb, &info, be, op);
}

cis_err cis_pipeline_backend(cis_pipeline *pl, const cis_options *o) {
  double t0 = cis_wtime();
  cis_backend_cuda_prewarm_wait();
  CIS_CALL(make_backend(o, pl->h, &pl->be));
  pl->t_device = cis_wtime() - t0;
  t0 = cis_wtime();
  int64_t nvec = pl->dec.device_vectors;
  if (pl->bounds) /* this rank's rows of the solver's vectors, and the gathered ones */
    nvec = cis_plan_rank_vectors(o, nvec, pl->bounds[cis_comm_rank() + 1] -
                                 pl->bounds[cis_comm_rank()], pl->h->n);
  CIS_CALL(make_operator(o, pl->h, pl->be, nvec, &pl->op));
  if (pl->bounds) { /* several ranks: each product gathers the rows from their owners */
    cis_operator *local = pl->op;
    pl->op = NULL;
    cis_err e = cis_dist_op_create(&local, pl->bounds, pl->nnz_local, &pl->nccl, &pl->op);
    cis_operator_destroy(&local);
    CIS_CALL(e);
  }
  pl->t_upload = cis_wtime() - t0;
  return CIS_OK;
}

cis_err cis_pipeline_states(cis_pipeline *pl, const cis_options *o) {
  const cis_hmat *h = pl->h;
  /* the Reference block's states within symmetry blocks: the guess, and the check */
  cis_refsym rsym = {h->ref_label, h->ref_partner, h->ref_bound};
  CIS_CALL(cis_refstates_make(h->npre, h->hpp, &rsym, &pl->rst));
  cis_eig_opts *eo = &pl->eo;
  cis_eig_opts_default(eo, o->nroots);
  eo->states = &pl->rst;
  pl->rst_view = cis_refstates_view(&pl->rst); /* H_PP diagonalised once */
  if (pl->rst_view.nref > 0) eo->refblock = &pl->rst_view;
  eo->tol_energy = o->tol_energy;
  eo->tol_residual = o->tol_residual;
  eo->max_iter = o->max_iter;
  if (o->max_subspace) eo->max_subspace = o->max_subspace;
  eo->level_shift = o->level_shift;
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

/* The roots' vectors whole on every rank, where each rank's solve held its rows. */
static cis_err whole_roots(cis_pipeline *pl) {
  const cis_backend *part = pl->op->be;
  if (!cis_backend_is_part(part)) return CIS_OK;
  double *whole = NULL;
  CIS_CALL(cis_backend_whole(part, pl->res.evecs, pl->res.nroots, &whole));
  cis_free(&pl->res.evecs);
  pl->res.evecs = whole;
  return CIS_OK;
}

/* Solve, then make sure no lower state was missed; on the operator's backend (with several
 * ranks, this rank's rows of the vectors), the roots whole at the end. */
cis_err cis_pipeline_solve(cis_pipeline *pl, const cis_options *o) {
  double t0 = cis_wtime();
  cis_backend *be = pl->op->be;
  CIS_CALL(solve(o, be, pl->op, &pl->eo, &pl->res));
  double t1 = cis_wtime();
  pl->t_solve = t1 - t0;
  if (o->check_roots != CIS_CHECK_NONE)
    CIS_CALL(cis_analysis_check_blocks(o, be, pl->op, &pl->rst, &pl->eo, &pl->res, &pl->an));
  if (o->check_roots == CIS_CHECK_FULL)
    CIS_CALL(cis_analysis_check_roots(o, be, pl->op, pl->h, &pl->eo, &pl->res, &pl->an));
  CIS_CALL(whole_roots(pl));
  pl->t_check = cis_wtime() - t1;
  return CIS_OK;
}

cis_err cis_pipeline_results(cis_pipeline *pl, const cis_options *o, int s2) {
  if (pl->space && (s2 || o->spin_set)) {
    CIS_CALL(cis_malloc(&pl->s2, (size_t)pl->res.nroots, sizeof *pl->s2, "<S^2> values"));
    CIS_CALL(cis_rdm_s2(pl->space, pl->be, pl->res.nroots, pl->res.evecs, pl->s2));
  }
  CIS_CALL(cis_analysis_run(o, pl->h, pl->be, &pl->res, pl->s2, &pl->an, &pl->abuf));
  return CIS_OK;
}
