/* The plan of a Hamiltonian build (hmat.h, cis_hmat_plan): the build's own decisions, taken by
 * the functions the build takes them by (hmat_private.h), and the nonzeros, without storing a
 * row. */
#include <math.h>
#include <string.h>

#include "base/util.h"
#include "hamiltonian/hmat_private.h"
#ifdef CISOLVE_HAVE_CUDA
#include "hamiltonian/rowgen_cuda.h"
#endif
#include "spmv/census.h"
#include "spmv/hyb_place.h"

/* The Expansion entries of each block, estimated from the sampled rows that fall in it (the
 * sample's mean where none does), and which blocks the build would keep: in row order while
 * they fit the budget. */
static void plan_blocks(cis_hmat_plan *p, const int32_t *exp_len, int64_t m, double exp_row) {
  int64_t n = p->n, s = 0, used = 0, rows_kept = 0;
  int keeping = 1;
  for (int64_t b = 0; b < p->nblocks; b++) {
    int64_t r0 = b * p->block_rows, r1 = CIS_MIN(n, r0 + p->block_rows), cnt = 0, sum = 0;
    for (; s < m && s * n / m < r1; s++) {
      sum += exp_len[s];
      cnt++;
    }
    double per_row = cnt ? (double)sum / (double)cnt : exp_row;
    int64_t bytes = cis_hmat_block_bytes(r1 - r0, (int64_t)(per_row * (double)(r1 - r0)));
    p->exp_bytes += bytes;
    keeping = keeping && used + bytes <= p->budget;
    if (keeping) {
      used += bytes;
      rows_kept += r1 - r0;
      p->ncached++;
    }
  }
  p->cached_bytes = used;
  p->regen_rows = n - rows_kept;
}

/* The string link tables of one spin's nstr strings. */
static int64_t links_bytes(const cis_links *l, int64_t nstr) {
  return (nstr + 1) * 16 + l->s_ptr[nstr] * (int64_t)sizeof(cis_link1) +
         l->d_ptr[nstr] * (int64_t)sizeof(cis_link2);
}

/* The value dictionary a build with a census chooses before its pass (cis_census_init on the
 * blocks it is about to generate, regenerated for the sample), to plan the coded entries by. */
static cis_err plan_dictionary(cis_hmat_plan *p, const cis_rowgen *g) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  cis_hyb hy;
  cis_census c;
  memset(&hy, 0, sizeof hy);
  memset(&c, 0, sizeof c);
  hy.n = p->n;
  hy.ell.boundary = p->nref;
  hy.nnz_exp = p->build_nnz_exp;
  hy.regen = cis_rowgen_regen;
  hy.regen_ctx = (void *)g;
  CIS_TRY(cis_hmat_alloc_blocks(&hy, p->n, p->block_rows));
  CIS_TRY(cis_census_init(&c, &hy, 1));
  p->dict_size = c.dict.size;
  p->dict_cover = c.dict.cover;
cleanup:
  cis_census_free(&c);
  cis_hyb_free(&hy);
  return err;
}

/* The sliced ELL's entries, with the host's slice widths and the device layout's, from
 * CIS_PLAN_SLICES slices spread evenly over the rows (every slice where there are no more): each
 * is as wide as its row with the most Reference entries. */
static cis_err plan_ell(cis_hmat_plan *p, const cis_rowgen *g, int nt) {
  int64_t n = p->n, ns = p->ell_nslices, m = CIS_MIN(ns, (int64_t)CIS_PLAN_SLICES);
  int64_t host = 0, dev = 0;
  int fail = 0;
#pragma omp parallel num_threads(nt) reduction(+ : host, dev) reduction(| : fail)
  {
    cis_rowbuf b;
    if (cis_rowbuf_init(g, &b) != CIS_OK) {
      fail = 1;
    } else {
#pragma omp for schedule(dynamic, 4)
      for (int64_t k = 0; k < m; k++) {
        int64_t r0 = k * ns / m * CIS_ELL_SLICE, r1 = CIS_MIN(n, r0 + CIS_ELL_SLICE), w = 0;
        for (int64_t r = r0; r < r1; r++) {
          int64_t len = cis_rowgen_row(g, r, 0, &b), c = 0;
          for (int64_t t = 0; t < len; t++) c += b.col[t] < p->nref;
          w = CIS_MAX(w, c);
        }
        host += w * (r1 - r0);
        dev += cis_place_slice_width(w) * (r1 - r0);
      }
      cis_rowbuf_free(&b);
    }
  }
  CIS_CHECK(!fail, CIS_ERR_NOMEM, "out of host memory for the row scratch of the sampled slices");
  p->ell_slots = llround((double)host * (double)ns / (double)m);
  p->ell_dev_slots = llround((double)dev * (double)ns / (double)m);
  p->ell_bytes = cis_ell_bytes_of(p->ell_slots, ns, n);
  return CIS_OK;
}

/* The relative standard error of the sampled total, as for m rows drawn at random from n. */
static double sample_rel_err(const int32_t *ref_len, const int32_t *exp_len, int64_t m,
                             int64_t n) {
  double sum = 0.0, sq = 0.0;
  for (int64_t s = 0; s < m; s++) {
    double x = (double)ref_len[s] + (double)exp_len[s];
    sum += x;
    sq += x * x;
  }
  if (m < 2 || sum <= 0.0 || m >= n) return 0.0;
  double mean = sum / (double)m, var = (sq - sum * mean) / (double)(m - 1);
  return sqrt(CIS_MAX(var, 0.0) * (1.0 - (double)m / (double)n) / (double)m) / mean;
}

cis_err cis_hmat_plan_ci(const cis_integrals *ints, const cis_space *space,
                         const cis_hmat_opts *opts, double spin_shift, double spin_s2,
                         cis_hmat_plan *out) {
  cis_err err = CIS_OK;
  cis_rowgen *g = NULL;
  int32_t *ref_len = NULL, *exp_len = NULL;
  cis_hmat_ci_decision dec = {0};
  memset(out, 0, sizeof *out);
  CIS_CHECK(ints->norb == cis_space_norb(space) && ints->nalpha == cis_space_nalpha(space) &&
                ints->nbeta == cis_space_nbeta(space),
            CIS_ERR_INTERNAL, "the space was built for other integrals");
  CIS_CLEANUP_FUNCTION;
  int64_t n = out->n = cis_space_ndet(space);
  out->nref = cis_space_nref(space);
  out->npre = CIS_MIN(out->nref, (int64_t)CIS_HMAT_PRECOND_MAX);
  CIS_TRY(cis_calloc(&g, 1, sizeof *g, "row generator"));
  CIS_TRY(cis_rowgen_init(ints, space, g));
  cis_rowgen_set_spin(g, spin_shift, spin_s2);
  CIS_TRY(cis_hmat_ci_decide(g, opts, &dec));
  out->block_rows = dec.block_rows;
  out->nblocks = dec.nblocks;
  out->budget = dec.budget;
  out->cache_none = dec.cache_none;
  out->build_nnz_exp = (int64_t)(dec.exp_row * (double)n);
  int64_t m = out->nsample = CIS_MIN(n, (int64_t)CIS_PLAN_SAMPLE);
  double ref_row, exp_row, busy = 0.0;
  CIS_TRY(cis_malloc(&ref_len, (size_t)m, sizeof *ref_len, "sampled rows"));
  CIS_TRY(cis_malloc(&exp_len, (size_t)m, sizeof *exp_len, "sampled rows"));
  CIS_TRY(cis_hmat_sample_rows(g, m, cis_hmat_nthreads(opts ? opts->nthreads : 0), &ref_row,
                               &exp_row, ref_len, exp_len, &busy));
  out->exact = m == n;
  out->nnz_ref = llround(ref_row * (double)n);
  out->nnz_exp = llround(exp_row * (double)n);
  out->rel_err = sample_rel_err(ref_len, exp_len, m, n);
  out->gen_rate = busy > 0.0 ? (ref_row + exp_row) * (double)m / busy : 0.0;
  plan_blocks(out, exp_len, m, exp_row);
  out->regen_elements = llround((double)out->regen_rows * (ref_row + exp_row));
  out->ell_nslices = (n + CIS_ELL_SLICE - 1) / CIS_ELL_SLICE;
  CIS_TRY(plan_ell(out, g, cis_hmat_nthreads(opts ? opts->nthreads : 0)));
  out->table_bytes = links_bytes(&g->la, space->astr.n) + links_bytes(&g->lb, space->bstr.n);
#ifdef CISOLVE_HAVE_CUDA
  if (!(opts && opts->host_regen) && !cis_rowgen_cuda_why(g))
    out->devgen_bytes = cis_rowgen_cuda_bytes(g);
#endif
  if (opts && (opts->census || opts->gpu_build)) CIS_TRY(plan_dictionary(out, g));
cleanup:
  cis_free(&ref_len);
  cis_free(&exp_len);
  if (g) cis_rowgen_free(g);
  cis_free(&g);
  return err;
}

/* The sliced ELL of an explicit matrix, counted: slices of CIS_ELL_SLICE rows (our order),
 * each as wide as its row with the most Reference entries. */
static void csr_ell(cis_hmat_plan *p, const cis_csr *m, const int64_t *perm, const int64_t *inv) {
  for (int64_t r0 = 0; r0 < m->n; r0 += CIS_ELL_SLICE) {
    int64_t width = 0, r1 = CIS_MIN(m->n, r0 + CIS_ELL_SLICE);
    for (int64_t i = r0; i < r1; i++) {
      int64_t len = 0;
      for (int64_t q = m->rowptr[perm[i]]; q < m->rowptr[perm[i] + 1]; q++)
        len += m->col[q] >= 0 && m->col[q] < m->n && inv[m->col[q]] < p->nref;
      width = CIS_MAX(width, len);
    }
    p->ell_slots += width * (r1 - r0);
    p->ell_dev_slots += cis_place_slice_width(width) * (r1 - r0);
  }
  p->ell_nslices = (m->n + CIS_ELL_SLICE - 1) / CIS_ELL_SLICE;
  p->ell_bytes = cis_ell_bytes_of(p->ell_slots, p->ell_nslices, m->n);
}

cis_err cis_hmat_plan_csr(const cis_csr *m, const cis_hmat_opts *opts, cis_hmat_plan *out) {
  cis_err err = CIS_OK;
  int64_t *perm = NULL, *inv = NULL;
  double *diag = NULL;
  cis_hmat_csr_decision dec;
  memset(out, 0, sizeof *out);
  CIS_CHECK(m->n > 0 && m->n <= 0x7fffffff, CIS_ERR_INPUT,
            "the explicit matrix is empty or has more than 2^31-1 rows (n = %ld)", (long)m->n);
  CIS_CLEANUP_FUNCTION;
  int64_t n = out->n = m->n;
  CIS_TRY(cis_malloc(&perm, (size_t)n, sizeof *perm, "permutation"));
  CIS_TRY(cis_malloc(&inv, (size_t)n, sizeof *inv, "inverse permutation"));
  CIS_TRY(cis_malloc(&diag, (size_t)n, sizeof *diag, "diagonal"));
  CIS_TRY(cis_hmat_csr_order(m, perm, inv, diag, NULL));
  cis_hmat_csr_decide(m, perm, inv, opts, &dec);
  out->nref = dec.nref;
  out->npre = CIS_MIN(out->nref, (int64_t)CIS_HMAT_PRECOND_MAX);
  out->nnz_exp = dec.nnz_exp;
  out->nnz_ref = m->nnz - dec.nnz_exp;
  out->exact = 1;
  out->block_rows = dec.block_rows;
  out->nblocks = (n + dec.block_rows - 1) / dec.block_rows;
  out->budget = dec.budget;
  out->need = dec.need;
  csr_ell(out, m, perm, inv);
  out->exp_bytes = dec.need;
  if (dec.need <= dec.budget) {
    out->ncached = out->nblocks;
    out->cached_bytes = dec.need;
  }
cleanup:
  cis_free(&perm);
  cis_free(&inv);
  cis_free(&diag);
  return err;
}
