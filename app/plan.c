/* cisolve: the run's plan (app/plan.h). */
#include "app/plan.h"

#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#ifdef CISOLVE_HAVE_CUDA
#include "hamiltonian/rowgen_cuda.h"
#endif
#include "hamiltonian/space.h"
#include "spmv/hyb_place.h"
#include "kernels/operator.h"
#include "solver/eigs.h"

int cis_plan_gpu_expected(const cis_options *o) {
  if (o->device == CIS_DEVICE_CPU) return 0;
  return o->device == CIS_DEVICE_GPU || cis_backend_cuda_device_count() > 0;
}

int64_t cis_plan_host_vectors(const cis_options *o) {
  return cis_eig_vectors(o->nroots, o->max_subspace, CIS_EIG_BACKEND) +
         cis_eig_vectors(o->nroots, o->max_subspace, CIS_EIG_HOST);
}

int64_t cis_plan_device_vectors(const cis_options *o) {
  return cis_eig_vectors(o->nroots, o->max_subspace, CIS_EIG_BACKEND);
}

int64_t cis_plan_rank_vectors(const cis_options *o, int64_t vectors, int64_t nloc, int64_t n) {
  int64_t gathered = 2 * CIS_MIN((int64_t)CIS_DIST_CHUNK, 2 * (int64_t)o->nroots + 2);
  return (n > 0 ? (vectors * nloc + n - 1) / n : 0) + gathered;
}

int64_t cis_plan_held_vectors(const cis_options *o, int gpu) {
  return gpu ? cis_eig_vectors(o->nroots, o->max_subspace, CIS_EIG_HOST)
             : cis_plan_host_vectors(o);
}

int64_t cis_plan_host_budget(const cis_options *o, int64_t n) {
  return cis_hmat_default_budget(n, cis_plan_host_vectors(o));
}

int64_t cis_plan_host_cache(const cis_options *o, int64_t n) {
  return o->mem >= 0 ? o->mem : cis_plan_host_budget(o, n);
}

int64_t cis_plan_gpu_matrix_bytes(const cis_options *o, int64_t n) {
  int64_t total = cis_backend_cuda_device_memory(o->device_index);
  int64_t usable = (int64_t)(0.95 * (double)total) - cis_plan_device_vectors(o) * n * 8;
  if (o->gpu_mem > 0) usable = CIS_MIN(usable, o->gpu_mem);
  return CIS_MAX(usable, (int64_t)0);
}

/* A GPU that will hold the whole matrix keeps it without a host copy (its blocks are
 * regenerated once, at upload, or sent to it as they are built): by default the host then
 * caches nothing. One that will not holds the first blocks, and the host caches what it can
 * for the streamed ones: streaming from a host cache costs less than regenerating them
 * (docs/BENCHMARKS.md, the streamed products). --mem asks for a host cache. */
int64_t cis_plan_cache_none_within(const cis_options *o, int64_t n, int ci, int gpu) {
  if (!ci || !gpu || o->mem >= 0) return 0;
  return cis_plan_gpu_matrix_bytes(o, n);
}

/* Where the GPU may keep the whole matrix without a host copy, the blocks go to it as they are
 * generated, so that the upload generates none of them again; the pool itself declines where
 * they would not fit (spmv/hyb_cuda.h). */
int64_t cis_plan_pool_bytes(const cis_options *o, int64_t n, int ci, int gpu) {
  return cis_plan_cache_none_within(o, n, ci, gpu);
}

/* The census a GPU upload codes the Expansion values by is taken while the rows are generated,
 * instead of in a pass of its own; an explicit matrix's upload takes its own. */
int cis_plan_census(int ci, int gpu) { return ci && gpu; }

/* What the device row generator takes (hamiltonian/rowgen_cuda.h cis_rowgen_cuda_why), as the
 * options and the space tell it before the generator exists. */
static int device_rows_ok(const cis_options *o, const cis_space *space) {
#ifdef CISOLVE_HAVE_CUDA
  int ms2 = abs(cis_space_nalpha(space) - cis_space_nbeta(space));
  return !(o->spin_set && o->spin2 > ms2) && cis_space_norb(space) <= CIS_ROWGEN_CUDA_MAX_NORB &&
         cis_space_ndet(space) <= INT32_MAX;
#else
  (void)o, (void)space;
  return 0;
#endif
}

/* Whether stored rows would be built on the GPU (cis_plan_gpu_build, whatever --matrix-free). */
static int gpu_build_possible(const cis_options *o, const cis_space *space,
                              const cis_plan_decisions *d) {
  return space && d->gpu && !o->build_host && !o->regen_host && o->mem < 0 &&
         !o->export_matrix[0] && o->ref_size <= CIS_TILE_AUTO_COLS && device_rows_ok(o, space);
}

/* --matrix-free auto. Storing the rows costs their build and their upload once; generating
 * them costs more in every product than a stored product does. Per entry of the matrix
 * (docs/BENCHMARKS.md, "Rows generated on the GPU": F2 CAS(12,12) and H2O/6-31G* FCI, H100 and
 * H200): built on the host, the build takes about STORE_THREAD_S / threads and the upload
 * UPLOAD_S; built on the GPU (cis_plan_gpu_build), both together GPU_BUILD_S (the whole runs'
 * difference besides their products: H2O/6-31G* FCI (10e,16o) on an H200 stores from 2 roots
 * on, 7.8 s against 8.4 s, and generates 1 root, 4.8 s against 5.0 s; H2O/6-31G FCI is within
 * 10% either way from 1 to 8 roots); a stored product 1 / STORED_RATE, a generating one
 * 1 / GEN_RATE (the slower inputs' rates). The products expected: a Davidson iteration takes
 * one per root, about EXPECT_ITERS iterations (fewer with --max-iter), and the check for lower
 * states about CHECK_PRODUCTS more. Lanczos runs take many more products: they store. */
#define STORE_THREAD_S 3.8e-8
#define UPLOAD_S 3.4e-10
#define GPU_BUILD_S 5.6e-10
#define STORED_RATE 3.7e11
#define GEN_RATE 6.0e10
#define EXPECT_ITERS 20
#define CHECK_PRODUCTS 12

void cis_plan_matrix_free(const cis_options *o, const cis_space *space, cis_plan_decisions *d) {
  d->matrix_free = space && o->matrix_free == CIS_MATRIX_FREE_ON;
  d->mf_auto = 0;
  if (!space || o->matrix_free != CIS_MATRIX_FREE_AUTO || !d->gpu || o->export_matrix[0] ||
      o->solver != CIS_SOLVER_DAVIDSON)
    return;
#ifdef CISOLVE_HAVE_CUDA
  if (!device_rows_ok(o, space)) return; /* what the device generator refuses */
  int threads = o->threads > 0 ? o->threads : omp_get_max_threads();
  double per_product = 1.0 / GEN_RATE - 1.0 / STORED_RATE;
  double store = gpu_build_possible(o, space, d) ? GPU_BUILD_S : STORE_THREAD_S / threads + UPLOAD_S;
  d->mf_breakeven = (int64_t)(store / per_product);
  int iters = o->max_iter > 0 ? CIS_MIN(o->max_iter, EXPECT_ITERS) : EXPECT_ITERS;
  d->mf_expected = (int64_t)o->nroots * iters +
                   (o->check_roots != CIS_CHECK_NONE ? CHECK_PRODUCTS : 0);
  d->mf_auto = 1;
  d->matrix_free = d->mf_expected < d->mf_breakeven;
#endif
}

void cis_plan_gpu_build(const cis_options *o, const cis_space *space, cis_plan_decisions *d) {
  d->gpu_build = !d->matrix_free && gpu_build_possible(o, space, d);
}

void cis_plan_decide(const cis_options *o, int64_t n, const cis_space *space,
                     cis_plan_decisions *d) {
  int ci = space != NULL;
  memset(d, 0, sizeof *d);
  d->n = n;
  d->ci = ci;
  d->gpu = cis_plan_gpu_expected(o);
  d->host_cache = cis_plan_host_cache(o, n);
  d->host_cache_asked = o->mem >= 0;
  d->cache_none_within = cis_plan_cache_none_within(o, n, ci, d->gpu);
  d->pool_bytes = cis_plan_pool_bytes(o, n, ci, d->gpu);
  d->census = cis_plan_census(ci, d->gpu);
  d->host_vectors = cis_plan_host_vectors(o);
  d->device_vectors = cis_plan_device_vectors(o);
  cis_plan_matrix_free(o, space, d);
  cis_plan_gpu_build(o, space, d);
  if (d->matrix_free || d->gpu_build) { /* no row stored on the host: no cache, no pool, and
                                           the GPU build counts the rows itself */
    d->host_cache = d->cache_none_within = d->pool_bytes = 0;
    d->census = 0;
  }
}

void cis_plan_hmat_opts(const cis_options *o, const cis_plan_decisions *d, cis_hmat_opts *h) {
  memset(h, 0, sizeof *h);
  h->host_cache = d->host_cache;
  h->solver_vectors = d->host_vectors;
  h->ref_size = o->ref_size;
  h->nthreads = o->threads;
  h->cache_none_within = d->cache_none_within;
  h->host_regen = o->regen_host;
  h->gpu_build = d->gpu_build;
  h->gpu_device = o->device_index < 0 ? 0 : o->device_index;
  h->no_rows = d->matrix_free;
  h->census = d->census;
}

cis_err cis_plan_check_nroots(const cis_options *o, int64_t n) {
  CIS_CHECK(o->nroots <= n, CIS_ERR_USAGE, "--nroots %d: the space has only %lld determinants",
            o->nroots, (long long)n);
  return CIS_OK;
}

cis_err cis_plan_check_vectors(const cis_options *o, int64_t n, int ci, int gpu) {
  double avail;
  const char *bound;
  if (!cis_host_mem_room(&avail, &bound)) return CIS_OK; /* nothing known */
  int64_t nvec = cis_plan_held_vectors(o, gpu);
  double need = (double)nvec * (double)n * 8.0;
  int m_basis = CIS_MAX(cis_eig_max_subspace(o->max_subspace, o->nroots), 2 * o->nroots);
  char b1[32], b2[32];
  CIS_CHECK(need <= avail, CIS_ERR_NOMEM,
            "the solver's %lld vectors of %lld %s need %s of host memory "
            "(--max-subspace %d%s, %d root%s%s); %s available (%s): lower --max-subspace or "
            "--nroots",
            (long long)nvec, (long long)n, ci ? "determinants" : "rows",
            cis_format_bytes(need, b1, sizeof b1), m_basis, o->max_subspace ? "" : " by default",
            o->nroots, o->nroots == 1 ? "" : "s", gpu ? ", the host's copies of a GPU run" : "",
            cis_format_bytes(avail, b2, sizeof b2), bound);
  return CIS_OK;
}

/* The device a run with these options would use, and why. */
static void plan_device(const cis_options *o, cis_plan *pl) {
  if (!cis_plan_gpu_expected(o)) {
    pl->device = CIS_PLAN_CPU;
    if (o->device == CIS_DEVICE_AUTO)
      snprintf(pl->note, sizeof pl->note, "no usable GPU%s: a run uses the CPU",
#ifdef CISOLVE_HAVE_CUDA
               ""
#else
               " (built without CUDA)"
#endif
      );
    return;
  }
  if (cis_backend_cuda_props(o->device_index, &pl->gpu) == CIS_OK) {
    pl->device = CIS_PLAN_GPU;
    return;
  }
  pl->device = o->device == CIS_DEVICE_GPU ? CIS_PLAN_NO_GPU : CIS_PLAN_CPU;
  snprintf(pl->note, sizeof pl->note, "%s", cis_error_message());
  cis_error_clear();
}

/* Where the matrix goes on the GPU, and what that takes there. */
static void plan_gpu(const cis_options *o, cis_plan *pl) {
  const cis_hmat_plan *hm = &pl->hm;
  cis_place_input in = {
      .n = hm->n, .boundary = hm->nref, .ell_nnz = hm->nnz_ref, .ell_slots = hm->ell_dev_slots,
      .ell_nslices = hm->ell_nslices, .nnz_exp = hm->nnz_exp, .nblocks = hm->nblocks,
      .block_rows = hm->block_rows, .host_cached = hm->ncached, .dict_size = hm->dict_size,
      .dict_cover = hm->dict_cover, .l2 = pl->gpu.l2, .nthreads = omp_get_max_threads(),
      .devgen_bytes = hm->devgen_bytes, .gpu_build = pl->dec.gpu_build};
  in.budget = pl->gpu_offer = cis_plan_gpu_matrix_bytes(o, hm->n);
  if (pl->dec.pool_bytes > 0) { /* the build sends its blocks to a pool */
    in.pool_est = hm->build_nnz_exp;
    in.pool_bytes = pl->dec.pool_bytes;
  }
  cis_place_plan_make(&in, &pl->place);
  pl->gpu_vectors = cis_plan_device_vectors(o);
  /* the streaming buffers are kept back from the budget, and take memory once a block streams */
  pl->gpu_bytes = pl->place.min_bytes + pl->place.resident_bytes +
                  (pl->place.gpu_build ? 0 /* in min_bytes */
                   : !pl->place.streamed_blocks ? 0
                   : pl->place.devgen           ? hm->devgen_bytes
                                                : pl->place.stream_reserve) +
                  pl->gpu_vectors * hm->n * 8;
}

/* One product's cost: the matrix read where it lives, what the host sends and regenerates. */
static void plan_product(cis_plan *pl) {
  const cis_hmat_plan *hm = &pl->hm;
  double per_row = hm->n ? (double)(hm->nnz_ref + hm->nnz_exp) / (double)hm->n : 0.0;
  if (pl->device == CIS_PLAN_GPU) {
    const cis_place_plan *g = &pl->place;
    int64_t rows_regen =
        CIS_MAX((int64_t)0, g->streamed_rows - g->streamed_cached * hm->block_rows);
    pl->product_read = g->ell_bytes + g->resident_bytes;
    if (g->devgen) { /* generated on the GPU: nothing sent, nothing generated by the host */
      pl->product_gpu_gen = g->streamed_nnz;
      return;
    }
    pl->product_sent = g->streamed_rows * 8 + g->streamed_nnz * 12;
    pl->product_regen = (int64_t)((double)rows_regen * per_row);
  } else {
    pl->product_read = hm->ell_bytes + hm->cached_bytes;
    pl->product_regen = hm->regen_elements;
  }
  if (pl->product_regen > 0 && hm->gen_rate > 0.0)
    pl->product_regen_seconds = (double)pl->product_regen / (hm->gen_rate * pl->threads);
}

cis_err cis_plan_make(const cis_options *o, const cis_problem *p, double spin_shift,
                      double spin_s2, cis_plan *out) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  cis_space *space = NULL;
  cis_hmat_opts hopt;
  memset(out, 0, sizeof *out);
  out->input = o->input;
  out->threads = omp_get_max_threads();
  out->mem_asked = o->mem >= 0;
  plan_device(o, out);
  if (p->kind == CIS_PROBLEM_INTEGRALS) {
    cis_space_opts sopt = {.ref_size = o->ref_size, .nthreads = o->threads};
    CIS_TRY(cis_space_build(&p->ints, &p->space, &sopt, &space));
    int64_t n = cis_space_ndet(space);
    CIS_TRY(cis_plan_check_nroots(o, n));
    snprintf(out->space, sizeof out->space, "%s", cis_space_describe(space));
    out->has_irrep_dims = cis_space_irrep_dims(space, out->irrep_dim);
    out->irrep = cis_space_irrep(space);
    cis_plan_decide(o, n, space, &out->dec);
    CIS_TRY(cis_plan_check_vectors(o, n, 1, out->device != CIS_PLAN_CPU));
    cis_plan_hmat_opts(o, &out->dec, &hopt);
    CIS_TRY(cis_hmat_plan_ci(&p->ints, space, &hopt, spin_shift, spin_s2, &out->hm));
    int norb = p->ints.norb;
    out->input_bytes = (cis_eri_size(norb) + (int64_t)norb * norb) * 8;
    out->space_bytes = cis_space_bytes(space) + out->hm.table_bytes;
  } else {
    cis_plan_decide(o, p->matrix.n, NULL, &out->dec);
    CIS_TRY(cis_plan_check_vectors(o, p->matrix.n, 0, out->device != CIS_PLAN_CPU));
    cis_plan_hmat_opts(o, &out->dec, &hopt);
    CIS_TRY(cis_hmat_plan_csr(&p->matrix, &hopt, &out->hm));
    CIS_TRY(cis_plan_check_nroots(o, out->hm.n));
    out->input_bytes = p->matrix.nnz * 12 + (p->matrix.n + 1) * 8;
    out->copy_bytes = out->input_bytes; /* the permuted copy the build splits */
    out->space_bytes = p->matrix.n * 16; /* the permutation and the diagonal */
  }
  int64_t n = out->hm.n;
  out->host_vectors = cis_plan_held_vectors(o, out->device == CIS_PLAN_GPU);
  out->vector_bytes = out->host_vectors * n * 8;
  if (out->device == CIS_PLAN_GPU) plan_gpu(o, out);
  out->host_bytes = out->input_bytes + out->space_bytes + out->copy_bytes + out->hm.ell_bytes +
                    out->hm.cached_bytes + out->vector_bytes;
  plan_product(out);
cleanup:
  cis_space_destroy(&space);
  return err;
}
