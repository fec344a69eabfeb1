/* The Hamiltonian in hybrid ELL + CSR storage: built from a determinant space through the
 * row generator, or from an explicit matrix. Budget and block rules: docs/format.md. */
#include "hamiltonian/hmat.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "hamiltonian/hmat_private.h"
#ifdef CISOLVE_HAVE_CUDA
#include "hamiltonian/rowgen_cuda.h"
#endif
#include "hamiltonian/rowgen.h"
#include "spmv/census.h"

#define CIS_BLOCK_TARGET_NNZ ((int64_t)1 << 20)

int cis_hmat_nthreads(int n) { return n > 0 ? n : omp_get_max_threads(); }

/* Uniform blocks of about CIS_BLOCK_TARGET_NNZ entries, at least 8 per thread when rows allow
 * (uncached blocks are regenerated in parallel, one block per thread). */
int64_t cis_hmat_auto_block_rows(int64_t n, int64_t nnz_exp, int nt) {
  double per_row = nnz_exp > 0 ? (double)nnz_exp / (double)n : 1.0;
  int64_t rows = (int64_t)((double)CIS_BLOCK_TARGET_NNZ / per_row);
  rows = CIS_MIN(rows, (n + 8 * nt - 1) / (8 * nt));
  rows = (rows + 31) / 32 * 32;
  return CIS_MAX((int64_t)32, CIS_MIN(rows, n));
}

int64_t cis_hmat_default_budget(int64_t n, int64_t nvectors) {
  int64_t b = cis_host_mem_available() / 4 * 3 - nvectors * n * (int64_t)sizeof(double);
  return CIS_MAX((int64_t)0, b);
}

/* The budget asked for, or the default less the resident ELL block. */
int64_t cis_hmat_resolve_budget(const cis_hmat_opts *opts, int64_t n, int64_t ell_bytes) {
  if (opts && opts->host_cache >= 0) return opts->host_cache;
  int64_t nvec = opts ? opts->solver_vectors : 0;
  return CIS_MAX((int64_t)0, cis_hmat_default_budget(n, nvec) - ell_bytes);
}

int64_t cis_hmat_block_bytes(int64_t nrows, int64_t nnz) {
  return (nrows + 1) * (int64_t)sizeof(int64_t) + nnz * (int64_t)(sizeof(int32_t) + sizeof(double));
}

cis_err cis_hmat_alloc_blocks(cis_hyb *hy, int64_t n, int64_t block_rows) {
  hy->block_rows = block_rows;
  hy->nblocks = (n + block_rows - 1) / block_rows;
  CIS_CALL(cis_calloc(&hy->blocks, (size_t)hy->nblocks, sizeof(cis_csr_block), "Expansion blocks"));
  for (int64_t b = 0; b < hy->nblocks; b++) {
    hy->blocks[b].row0 = b * block_rows;
    hy->blocks[b].nrows = CIS_MIN(block_rows, n - b * block_rows);
  }
  return CIS_OK;
}

void cis_hmat_destroy(cis_hmat **hp) {
  if (!hp || !*hp) return;
  hmat_impl *im = (hmat_impl *)*hp;
  cis_hyb_free(&im->pub.hyb);
  cis_free(&im->hdiag_own);
  cis_free(&im->pub.hpp);
  cis_free(&im->pub.perm);
  cis_free(&im->pub.ref_label);
  cis_free(&im->pub.ref_partner);
  cis_free(&im->pub.ref_bound);
  if (im->rg) cis_rowgen_free(im->rg);
  cis_free(&im->rg);
  cis_free(&im);
  *hp = NULL;
}

/* ---- CI matrices --------------------------------------------------------------------------- */

/* The space's symmetry of the Reference region, on the preconditioner's block. */
static cis_err ref_symmetry_ci(cis_hmat *h, const cis_space *space) {
  int64_t m = h->npre;
  const uint64_t *lab = cis_space_ref_labels(space);
  const int64_t *par = cis_space_ref_partners(space);
  CIS_CALL(cis_malloc(&h->ref_label, (size_t)m, sizeof *h->ref_label, "Reference labels"));
  memcpy(h->ref_label, lab, (size_t)m * sizeof *lab);
  if (!par) return CIS_OK;
  CIS_CALL(cis_malloc(&h->ref_partner, (size_t)m, sizeof *h->ref_partner, "Reference partners"));
  for (int64_t i = 0; i < m; i++) h->ref_partner[i] = par[i] < m ? par[i] : -1;
  return CIS_OK;
}

/* One generation pass builds everything: each Expansion block is generated once into a
 * thread's growable CSR scratch and its rows' Reference entries into a per-block buffer; the
 * block is copied out if it fits the budget, and the sliced ELL is sized from the row lengths
 * and packed at the end. Rows are stored in generation order (a product needs no more). */

typedef struct {
  int32_t *col;
  double *val;
  int64_t n, cap;
} ref_buf;

#define HELD_FOREIGN 3

typedef struct {
  const cis_rowgen *g;
  cis_hyb *hy;
  ref_buf *ref;        /* nblocks: Reference entries of each block's rows, in row order */
  unsigned char *held; /* nblocks: counted against the budget: 1 being copied out, 2 copied;
                          HELD_FOREIGN: another rank's rows, stored empty, never given up */
  int64_t b0, b1;      /* the blocks of this process's rows (opts->row_begin, row_end) */
  int64_t *nnz;        /* nblocks: Expansion entries */
  int64_t budget, used, first_refused;
  cis_census *census;  /* NULL, or counts each block as it is generated */
  cis_block_sink *sink; /* NULL, or takes each block and counts it (spmv/hyb.h) */
  cis_progress *progress; /* NULL, or told the rows done (base/progress.h) */
} build_state;

/* The build samples CIS_BUILD_SAMPLE rows to choose its block size and default budget before
 * the pass; a plan samples more (hmat_private.h). */
cis_err cis_hmat_sample_rows(const cis_rowgen *g, int64_t m, int nt, double *ref_per_row,
                             double *exp_per_row, int32_t *ref_len, int32_t *exp_len,
                             double *busy) {
  int64_t n = g->space->ndet, nref = g->space->nref, nr = 0, ne = 0;
  double secs = 0.0;
  int fail = 0;
  m = CIS_MIN(n, m);
#pragma omp parallel num_threads(nt) reduction(+ : nr, ne, secs) reduction(| : fail)
  {
    cis_rowbuf b;
    double t0 = cis_wtime();
    if (cis_rowbuf_init(g, &b) != CIS_OK) {
      fail = 1;
    } else {
#pragma omp for schedule(static)
      for (int64_t s = 0; s < m; s++) {
        int64_t len = cis_rowgen_row(g, s * n / m, 0, &b), r = 0;
        for (int64_t t = 0; t < len; t++) r += b.col[t] < nref;
        nr += r;
        ne += len;
        if (ref_len) ref_len[s] = (int32_t)r;
        if (exp_len) exp_len[s] = (int32_t)(len - r);
      }
      cis_rowbuf_free(&b);
    }
    secs += cis_wtime() - t0;
  }
  CIS_CHECK(!fail, CIS_ERR_NOMEM, "out of host memory for the row scratch of the sampled rows");
  *ref_per_row = (double)nr / (double)m;
  *exp_per_row = (double)(ne - nr) / (double)m;
  if (busy) *busy = secs;
  return CIS_OK;
}

static cis_err ref_push(ref_buf *rb, int32_t col, double val) {
  if (rb->n == rb->cap) {
    int64_t cap = CIS_MAX(2 * rb->cap, (int64_t)256);
    CIS_CALL(cis_realloc(&rb->col, (size_t)cap, sizeof(int32_t), "Reference entries"));
    CIS_CALL(cis_realloc(&rb->val, (size_t)cap, sizeof(double), "Reference entries"));
    rb->cap = cap;
  }
  rb->col[rb->n] = col;
  rb->val[rb->n++] = val;
  return CIS_OK;
}

/* Rows of block b: the Expansion part into out, the Reference part into st->ref[b] (and the
 * ELL row lengths). */
static cis_err gen_block(build_state *st, int64_t b, cis_rowbuf *buf, cis_csr_block *out,
                         int64_t *generated) {
  const cis_csr_block *blk = &st->hy->blocks[b];
  cis_ell *e = &st->hy->ell;
  ref_buf *rb = &st->ref[b];
  int64_t nref = e->boundary, nnz = 0, room = st->g->max_row;
  CIS_CALL(cis_csr_block_reserve(out, blk->nrows, CIS_MAX(out->cap, room)));
  out->rowptr[0] = 0;
  for (int64_t l = 0; l < blk->nrows; l++) {
    int64_t r = blk->row0 + l, ref0 = rb->n;
    if (nnz + room > out->cap)
      CIS_CALL(cis_csr_block_reserve(out, blk->nrows, CIS_MAX(2 * out->cap, nnz + room)));
    int32_t *col = out->col + nnz, cmin = INT32_MAX;
    double *val = out->val + nnz;
    int64_t len = cis_rowgen_row_to(st->g, r, buf, col, val), w = 0;
    *generated += len;
    for (int64_t t = 0; t < len; t++) cmin = col[t] < cmin ? col[t] : cmin;
    if (cmin < nref) { /* move the Reference entries out (most rows have none) */
      for (int64_t t = 0; t < len; t++) {
        if (col[t] < nref) {
          CIS_CALL(ref_push(rb, col[t], val[t]));
        } else {
          col[w] = col[t];
          val[w++] = val[t];
        }
      }
      len = w;
    }
    nnz += len;
    e->row_len[r] = (int32_t)(rb->n - ref0);
    out->rowptr[l + 1] = nnz;
  }
  out->nnz = nnz;
  return CIS_OK;
}

static int64_t bytes_of(const build_state *st, int64_t b) {
  return cis_hmat_block_bytes(st->hy->blocks[b].nrows, st->nnz[b]);
}

/* Whether block b may be kept, blocks being kept in row order while they fit: a block that
 * finishes early and holds budget that an earlier block needs is given up (freed after the
 * pass), so the kept blocks are those a sequential pass would keep. Called in a critical
 * section. */
static int budget_claim(build_state *st, int64_t b) {
  int64_t bytes = bytes_of(st, b);
  if (b > st->first_refused) return 0;
  for (int64_t x = st->hy->nblocks - 1; x > b && st->used + bytes > st->budget; x--)
    if (st->held[x] && st->held[x] != HELD_FOREIGN) { /* one still being copied is freed by its
                                                          thread */
      if (st->held[x] == 2) cis_csr_block_free(&st->hy->blocks[x]);
      st->held[x] = 0;
      st->used -= bytes_of(st, x);
    }
  if (st->used + bytes > st->budget) {
    st->first_refused = b;
    return 0;
  }
  st->held[b] = 1;
  st->used += bytes;
  return 1;
}

static cis_err keep_block(build_state *st, int64_t b, const cis_csr_block *src) {
  cis_csr_block *blk = &st->hy->blocks[b];
  int keep;
#pragma omp critical(cis_hmat_budget)
  keep = budget_claim(st, b);
  if (!keep) return CIS_OK;
  /* Exactly sized: the budget counts these bytes. */
  CIS_CALL(cis_csr_block_reserve(blk, blk->nrows, CIS_MAX(src->nnz, (int64_t)1)));
  memcpy(blk->rowptr, src->rowptr, sizeof(int64_t) * (size_t)(blk->nrows + 1));
  memcpy(blk->col, src->col, sizeof(int32_t) * (size_t)src->nnz);
  memcpy(blk->val, src->val, sizeof(double) * (size_t)src->nnz);
  blk->nnz = src->nnz;
#pragma omp critical(cis_hmat_budget)
  {
    keep = st->held[b] != 0; /* not given up to an earlier block meanwhile */
    if (keep)
      st->held[b] = 2;
    else
      cis_csr_block_free(blk);
  }
  return CIS_OK;
}

/* Block b of another rank's rows: stored empty (cached, no entries), so that no product and
 * no upload generates it; the census and the sink see it as such. */
static cis_err foreign_block(build_state *st, int64_t b) {
  cis_csr_block *blk = &st->hy->blocks[b];
  CIS_CALL(cis_csr_block_reserve(blk, blk->nrows, 1));
  memset(blk->rowptr, 0, sizeof(int64_t) * (size_t)(blk->nrows + 1));
  blk->nnz = 0;
  st->held[b] = HELD_FOREIGN;
  st->nnz[b] = 0;
  if (st->sink)
    st->sink->block(st->sink, b, blk);
  else if (st->census)
    cis_census_block(st->census, b, blk);
  return CIS_OK;
}

static cis_err gen_all(build_state *st, int nt, int64_t *exp_nnz, int64_t *generated) {
  int fail = 0;
  int64_t total = 0, nexp = 0, rows_done = 0, n = st->hy->n;
  cis_progress_update(st->progress, "Hamiltonian build", 0, n);
#pragma omp parallel num_threads(nt) reduction(+ : total, nexp)
  {
    cis_rowbuf buf;
    cis_csr_block out;
    memset(&out, 0, sizeof out);
    int ok = cis_rowbuf_init(st->g, &buf) == CIS_OK;
#pragma omp for schedule(dynamic, 1)
    for (int64_t b = 0; b < st->hy->nblocks; b++) {
      int seen;
#pragma omp atomic read
      seen = fail;
      if (!ok || seen) continue;
      if (b < st->b0 || b >= st->b1) {
        ok = foreign_block(st, b) == CIS_OK;
        continue;
      }
      ok = gen_block(st, b, &buf, &out, &total) == CIS_OK;
      if (ok && st->census) {
        out.row0 = st->hy->blocks[b].row0;
        out.nrows = st->hy->blocks[b].nrows;
        if (st->sink)
          st->sink->block(st->sink, b, &out); /* which counts it */
        else
          cis_census_block(st->census, b, &out);
      }
      st->nnz[b] = out.nnz;
      nexp += out.nnz;
      ok = ok && keep_block(st, b, &out) == CIS_OK;
      if (st->progress) { /* counted by every thread, told by one */
        int64_t done;
#pragma omp atomic capture
        done = rows_done += st->hy->blocks[b].nrows;
        if (omp_get_thread_num() == 0)
          cis_progress_update(st->progress, "Hamiltonian build", done, n);
      }
    }
    if (!ok) {
#pragma omp atomic write
      fail = 1;
    }
    cis_rowbuf_free(&buf);
    cis_csr_block_free(&out);
  }
  cis_progress_finish(st->progress);
  CIS_CHECK(!fail, CIS_ERR_NOMEM,
            "out of host memory generating the Hamiltonian (row scratch, Reference entries or "
            "a cached block)");
  *exp_nnz = nexp;
  *generated += total;
  return CIS_OK;
}

/* Keep the longest run of held blocks from the first of this process's; free the rest (another
 * rank's blocks, empty, stay). */
static void settle_blocks(cis_hmat *h, const build_state *st) {
  cis_hyb *hy = &h->hyb;
  int64_t used = 0, stream = 0, run = 1;
  hy->ncached = 0;
  for (int64_t b = 0; b < hy->nblocks; b++) {
    cis_csr_block *blk = &hy->blocks[b];
    if (st->held[b] == HELD_FOREIGN) {
      hy->ncached++;
      continue;
    }
    run = run && st->held[b];
    if (run) {
      used += bytes_of(st, b);
      hy->ncached++;
    } else {
      cis_csr_block_free(blk);
    }
  }
  for (int64_t b = 0; b < hy->nblocks; b++)
    if (!cis_csr_block_cached(&hy->blocks[b])) stream += bytes_of(st, b);
  h->stats.cached_bytes = used;
  h->stats.streamed_bytes_per_matvec = stream;
}

cis_err cis_hmat_ell_slices(cis_ell *e, int64_t n, int64_t nref) {
  e->nrows = n;
  e->boundary = nref;
  e->slice = CIS_ELL_SLICE;
  e->nslices = (n + e->slice - 1) / e->slice;
  CIS_CALL(cis_malloc(&e->slice_ptr, (size_t)e->nslices + 1, sizeof(int64_t), "ELL slices"));
  CIS_CALL(cis_malloc(&e->slice_width, (size_t)e->nslices, sizeof(int32_t), "ELL widths"));
  e->slice_ptr[0] = 0;
  e->nnz = 0;
  for (int64_t s = 0; s < e->nslices; s++) {
    int32_t w = 0;
    for (int64_t r = s * e->slice; r < CIS_MIN(n, (s + 1) * e->slice); r++) {
      w = CIS_MAX(w, e->row_len[r]);
      e->nnz += e->row_len[r];
    }
    e->slice_width[s] = w;
    e->slice_ptr[s + 1] = e->slice_ptr[s] + (int64_t)w * e->slice;
  }
  return CIS_OK;
}

static cis_err ell_shape(cis_ell *e, int64_t n, int64_t nref) {
  CIS_CALL(cis_hmat_ell_slices(e, n, nref));
  CIS_CALL(cis_calloc(&e->col, (size_t)e->slice_ptr[e->nslices], sizeof(int32_t), "ELL columns"));
  CIS_CALL(cis_calloc(&e->val, (size_t)e->slice_ptr[e->nslices], sizeof(double), "ELL values"));
  return CIS_OK;
}

/* The per-block Reference entries into the sliced ELL; the buffers are freed. */
static void ell_pack(cis_hyb *hy, ref_buf *ref) {
  cis_ell *e = &hy->ell;
#pragma omp parallel for schedule(dynamic, 16)
  for (int64_t b = 0; b < hy->nblocks; b++) {
    const cis_csr_block *blk = &hy->blocks[b];
    int64_t at = 0;
    for (int64_t r = blk->row0; r < blk->row0 + blk->nrows; r++) {
      if (e->row_len[r] == 0) continue; /* a block with no Reference entries has no buffer */
      int64_t q0 = cis_ell_row_start(e, r);
      memcpy(e->col + q0, ref[b].col + at, sizeof(int32_t) * (size_t)e->row_len[r]);
      memcpy(e->val + q0, ref[b].val + at, sizeof(double) * (size_t)e->row_len[r]);
      at += e->row_len[r];
    }
    cis_free(&ref[b].col);
    cis_free(&ref[b].val);
  }
}

/* The ELL block's bytes as estimated before the pass, from the sampled Reference entries per
 * row (slices are as wide as their longest row: twice the mean, 12 bytes an entry, and 12
 * bytes a row of slice data): what the default budget leaves for it. */
static int64_t ell_estimate(int64_t n, double ref_per_row) {
  return (int64_t)(2.0 * ref_per_row * (double)n * 12.0) + 12 * n;
}

cis_err cis_hmat_ci_decide(const cis_rowgen *g, const cis_hmat_opts *opts,
                           cis_hmat_ci_decision *d) {
  int64_t n = g->space->ndet;
  /* the budgets count the rows this process stores */
  int64_t nloc = d->nloc = opts && opts->rows_split ? opts->row_end - opts->row_begin : n;
  int nt = cis_hmat_nthreads(opts ? opts->nthreads : 0);
  CIS_CALL(cis_hmat_sample_rows(g, CIS_BUILD_SAMPLE, nt, &d->ref_row, &d->exp_row, NULL, NULL,
                                NULL));
  d->block_rows = opts && opts->block_rows > 0
                      ? opts->block_rows
                      : cis_hmat_auto_block_rows(n, (int64_t)(d->exp_row * (double)n), nt);
  d->nblocks = (n + d->block_rows - 1) / d->block_rows;
  /* The ELL is sized only after the pass: the default budget uses the sampled estimate. */
  d->ell_est = ell_estimate(nloc, d->ref_row);
  d->budget = cis_hmat_resolve_budget(opts, n, d->ell_est);
  int64_t exp_bytes = cis_hmat_block_bytes(nloc, (int64_t)(d->exp_row * (double)nloc));
  d->cache_none = opts && opts->cache_none_within > 0 && exp_bytes <= opts->cache_none_within;
  if (d->cache_none) d->budget = 0;
  return CIS_OK;
}

/* opts->no_rows: nothing stored, the rows this process multiplies and their sampled entries. */
static cis_err setup_matrix_free(cis_hmat *h, const cis_rowgen *g, const cis_hmat_opts *opts) {
  cis_hmat_ci_decision dec = {0};
  CIS_CALL(cis_hmat_ci_decide(g, opts, &dec));
  h->matrix_free = 1;
  h->mf_begin = opts->rows_split ? opts->row_begin : 0;
  h->mf_end = opts->rows_split ? opts->row_end : h->n;
  h->mf_nnz = (dec.ref_row + dec.exp_row) * (double)dec.nloc;
  h->hyb.n = 0; /* no product may go through the empty hybrid matrix */
  return CIS_OK;
}

cis_err cis_hmat_ci_begin(cis_hmat *h, const cis_rowgen *g, const cis_hmat_opts *opts,
                          cis_hmat_ci_decision *dec, int64_t *r0, int64_t *r1) {
  int64_t n = h->n;
  CIS_CALL(cis_hmat_ci_decide(g, opts, dec));
  *r0 = opts && opts->rows_split ? opts->row_begin : 0;
  *r1 = opts && opts->rows_split ? opts->row_end : n;
  CIS_CHECK((*r0 % dec->block_rows == 0 || *r0 == n) && (*r1 % dec->block_rows == 0 || *r1 == n) &&
                *r0 <= *r1 && *r1 <= n,
            CIS_ERR_INTERNAL, "rows [%lld, %lld) of %lld are not whole blocks of %lld",
            (long long)*r0, (long long)*r1, (long long)n, (long long)dec->block_rows);
  CIS_CALL(cis_hmat_alloc_blocks(&h->hyb, n, dec->block_rows));
  CIS_CALL(cis_calloc(&h->hyb.ell.row_len, (size_t)n, sizeof(int32_t), "ELL row lengths"));
  h->hyb.ell.boundary = h->nref;
  return CIS_OK;
}

cis_err cis_hmat_census_start(cis_hmat *h, const cis_rowgen *g, const cis_hmat_ci_decision *dec,
                              cis_census **out) {
  cis_census *c = NULL;
  CIS_CALL(cis_calloc(&c, 1, sizeof *c, "census"));
  /* the rows this process stores: what a sink must find room for */
  h->hyb.nnz_exp = (int64_t)(dec->exp_row * (double)dec->nloc);
  h->hyb.regen = cis_rowgen_regen;
  h->hyb.regen_ctx = (void *)g;
  cis_err err = cis_census_init(c, &h->hyb, 1);
  h->hyb.regen = NULL;
  h->hyb.regen_ctx = NULL;
  if (err != CIS_OK) {
    cis_free(&c);
    return err;
  }
  *out = c;
  return CIS_OK;
}

static cis_err build_ci(cis_hmat *h, const cis_rowgen *g, const cis_hmat_opts *opts) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  build_state st = {.g = g, .hy = &h->hyb, .progress = opts ? opts->progress : NULL};
  int nt = cis_hmat_nthreads(opts ? opts->nthreads : 0);
  int64_t n = h->n, nexp = 0;
  cis_ell *e = &h->hyb.ell;
  cis_hmat_ci_decision dec = {0};
  int64_t r0, r1;
  CIS_TRY(cis_hmat_ci_begin(h, g, opts, &dec, &r0, &r1));
  h->stats.budget = dec.budget;
  st.budget = h->stats.budget;
  st.first_refused = h->hyb.nblocks;
  st.b0 = r0 / dec.block_rows;
  st.b1 = r1 > r0 ? (r1 + dec.block_rows - 1) / dec.block_rows : st.b0; /* none: no rows */
  CIS_TRY(cis_calloc(&st.ref, (size_t)h->hyb.nblocks, sizeof(ref_buf), "Reference entries"));
  CIS_TRY(cis_calloc(&st.held, (size_t)h->hyb.nblocks, 1, "block flags"));
  CIS_TRY(cis_calloc(&st.nnz, (size_t)h->hyb.nblocks, sizeof(int64_t), "block sizes"));
  if (opts && opts->census) {
    CIS_TRY(cis_hmat_census_start(h, g, &dec, &st.census));
    if (opts->sink && opts->sink->begin(opts->sink, &h->hyb, h->hyb.nnz_exp, st.census, nt))
      st.sink = opts->sink;
  }
  CIS_TRY(gen_all(&st, nt, &nexp, &h->stats.elements_generated));
  h->hyb.nnz_exp = nexp;
  h->hyb.census = st.census;
  h->hyb.sink = st.sink;
  h->hyb.progress = st.progress;
  st.census = NULL;
  settle_blocks(h, &st);
  CIS_TRY(ell_shape(e, n, h->nref));
  ell_pack(&h->hyb, st.ref);
  h->stats.ell_bytes = cis_ell_bytes(e);
cleanup:
  if (st.ref)
    for (int64_t b = 0; b < h->hyb.nblocks; b++) {
      cis_free(&st.ref[b].col);
      cis_free(&st.ref[b].val);
    }
  cis_free(&st.ref);
  cis_free(&st.held);
  cis_free(&st.nnz);
  if (st.census) cis_census_free(st.census);
  cis_free(&st.census);
  return err;
}

/* The preconditioner's block generated row by row on the threads (so a rank whose ELL rows do
 * not hold it has it whole too). */
static cis_err hpp_from_rows(cis_hmat *h, const cis_rowgen *g) {
  int64_t m = h->npre = CIS_MIN(h->nref, (int64_t)CIS_HMAT_PRECOND_MAX);
  int fail = 0;
  CIS_CALL(cis_calloc(&h->hpp, (size_t)(m * m), sizeof(double), "Reference block"));
#pragma omp parallel if (m > 64)
  {
    cis_rowbuf b;
    int ok = cis_rowbuf_init(g, &b) == CIS_OK;
    if (!ok) {
#pragma omp atomic write
      fail = 1;
    }
#pragma omp for schedule(dynamic, 16)
    for (int64_t i = 0; i < m; i++) {
      if (!ok) continue;
      int64_t len = cis_rowgen_row(g, i, 0, &b);
      for (int64_t t = 0; t < len; t++)
        if (b.col[t] < m) h->hpp[i + b.col[t] * m] = b.out[t];
    }
    if (ok) cis_rowbuf_free(&b);
  }
  CIS_CHECK(!fail, CIS_ERR_NOMEM, "out of host memory for the row buffers of the Reference "
            "block (%lld rows)", (long long)m);
  return CIS_OK;
}

cis_err cis_hmat_build_ci(const cis_integrals *ints, const cis_space *space,
                          const cis_hmat_opts *opts, cis_hmat **out) {
  return cis_hmat_build_ci_penalty(ints, space, opts, 0.0, 0.0, out);
}

cis_err cis_hmat_build_ci_penalty(const cis_integrals *ints, const cis_space *space,
                                  const cis_hmat_opts *opts, double spin_shift, double spin_s2,
                                  cis_hmat **out) {
  cis_err err = CIS_OK;
  hmat_impl *im = NULL;
  double t0 = cis_wtime();
  *out = NULL;
  CIS_CHECK(ints->norb == cis_space_norb(space) && ints->nalpha == cis_space_nalpha(space) &&
                ints->nbeta == cis_space_nbeta(space),
            CIS_ERR_INTERNAL, "the space was built for other integrals");
  CIS_CLEANUP_FUNCTION;
  CIS_TRY(cis_calloc(&im, 1, sizeof *im, "Hamiltonian"));
  cis_hmat *h = &im->pub;
  h->n = h->hyb.n = cis_space_ndet(space);
  h->nref = cis_space_nref(space);
  h->ecore = ints->ecore;
  h->space = space;
  CIS_TRY(cis_calloc(&im->rg, 1, sizeof *im->rg, "row generator"));
  CIS_TRY(cis_rowgen_init(ints, space, im->rg));
  cis_rowgen_set_spin(im->rg, spin_shift, spin_s2);
  int gpu_built = 0;
#ifdef CISOLVE_HAVE_CUDA
  if (opts && opts->gpu_build && !opts->no_rows)
    CIS_TRY(cis_hmat_try_gpu_build(h, im->rg, opts, &gpu_built));
#endif
  if (opts && opts->no_rows) {
    CIS_TRY(setup_matrix_free(h, im->rg, opts));
  } else {
    if (!gpu_built) CIS_TRY(build_ci(h, im->rg, opts));
    if (h->hyb.ncached < h->hyb.nblocks) {
      h->hyb.regen = cis_rowgen_regen;
      h->hyb.regen_ctx = im->rg;
      h->hyb.regen_apply = cis_rowgen_apply;
    }
#ifdef CISOLVE_HAVE_CUDA
    if (!opts || !opts->host_regen) {
      h->hyb.regen_dev = cis_rowgen_regen_dev;
      h->hyb.regen_dev_ctx = im->rg;
    }
#endif
  }
  CIS_TRY(hpp_from_rows(h, im->rg));
  CIS_TRY(ref_symmetry_ci(h, space));
  if (spin_shift != 0.0) { /* the penalty's part added to a copy */
    CIS_TRY(cis_malloc(&im->hdiag_own, (size_t)h->n, sizeof(double), "diagonal"));
    /* a row of S^2 each where the penalty is squared: on the threads, as the rows are made */
    int nt = cis_hmat_nthreads(opts ? opts->nthreads : 0);
#pragma omp parallel for schedule(dynamic, 4096) num_threads(nt)
    for (int64_t i = 0; i < h->n; i++)
      im->hdiag_own[i] = cis_space_hdiag(space)[i] + cis_rowgen_penalty_diag(im->rg, i);
    h->hdiag = im->hdiag_own;
  } else {
    h->hdiag = cis_space_hdiag(space); /* the space outlives the matrix built on it */
  }
  h->stats.t_build = cis_wtime() - t0;
  *out = h;
  im = NULL;
cleanup:
  if (im) {
    cis_hmat *tmp = &im->pub;
    cis_hmat_destroy(&tmp);
  }
  return err;
}

/* ---- the whole matrix ---------------------------------------------------------------------- */

cis_err cis_hmat_to_csr(const cis_hmat *h, cis_csr *out) {
  CIS_CALL(cis_hyb_to_csr(&h->hyb, NULL, out));
  /* Reference columns all precede Expansion columns, and a row's columns are distinct: sorting
   * each row whole gives what sorting each part did */
  cis_err err = cis_csr_sort_rows(out);
  if (err != CIS_OK) cis_csr_free(out);
  return err;
}

/* Chunk b's rows: each row's ELL entries, then its Expansion entries, sorted by column when
 * asked. */
static cis_err chunk_rows(const cis_hyb *y, int64_t b, int sorted, cis_csr_block *scratch,
                          cis_csr_entry **tmp, int64_t *cap, cis_csr *out) {
  const cis_ell *e = &y->ell;
  const cis_csr_block *blk = NULL;
  int64_t row0 = y->blocks[b].row0, nrows = y->blocks[b].nrows, nnz = 0;
  CIS_CALL(cis_hyb_block_rows(y, b, scratch, &blk));
  for (int64_t l = 0; l < nrows; l++) nnz += e->row_len[row0 + l];
  nnz += blk->rowptr[nrows];
  CIS_CALL(cis_realloc(&out->rowptr, (size_t)nrows + 1, sizeof *out->rowptr, "matrix rows"));
  CIS_CALL(cis_realloc(&out->col, (size_t)nnz, sizeof *out->col, "matrix rows"));
  CIS_CALL(cis_realloc(&out->val, (size_t)nnz, sizeof *out->val, "matrix rows"));
  int64_t q = 0;
  out->rowptr[0] = 0;
  for (int64_t l = 0; l < nrows; l++) {
    int64_t r = row0 + l, e0 = cis_ell_row_start(e, r), p0 = blk->rowptr[l];
    int64_t ne = e->row_len[r], nx = blk->rowptr[l + 1] - p0;
    if (ne > 0) {
      memcpy(out->col + q, e->col + e0, (size_t)ne * sizeof *out->col);
      memcpy(out->val + q, e->val + e0, (size_t)ne * sizeof *out->val);
    }
    if (nx > 0) {
      memcpy(out->col + q + ne, blk->col + p0, (size_t)nx * sizeof *out->col);
      memcpy(out->val + q + ne, blk->val + p0, (size_t)nx * sizeof *out->val);
    }
    /* Reference columns all precede Expansion columns and a row's columns are distinct: the
     * row sorted whole is what cis_hmat_to_csr gives */
    if (sorted) CIS_CALL(cis_csr_sort_row(out->col + q, out->val + q, ne + nx, tmp, cap));
    q += ne + nx;
    out->rowptr[l + 1] = q;
  }
  out->n = nrows;
  out->nnz = q;
  return CIS_OK;
}

static cis_err hmat_chunks(const cis_row_source *s, int64_t c0, int count, int sorted,
                           cis_csr *out) {
  const cis_hyb *y = s->ctx;
  cis_worker_error we = {CIS_OK, ""};
#pragma omp parallel
  {
    cis_csr_block scratch;
    cis_csr_entry *tmp = NULL;
    int64_t cap = 0;
    memset(&scratch, 0, sizeof scratch);
#pragma omp for schedule(dynamic, 1)
    for (int i = 0; i < count; i++) {
      if (cis_worker_error_seen(&we)) continue;
      cis_err e = chunk_rows(y, c0 + i, sorted, &scratch, &tmp, &cap, &out[i]);
      if (e != CIS_OK) cis_worker_error_keep(&we, e);
    }
    cis_csr_block_free(&scratch);
    cis_free(&tmp);
  }
  CIS_WORKER_RERAISE(we);
  return CIS_OK;
}

void cis_hmat_row_source(const cis_hmat *h, cis_row_source *src) {
  const cis_hyb *y = &h->hyb;
  memset(src, 0, sizeof *src);
  src->n = h->n;
  src->nnz = y->ell.nnz + y->nnz_exp;
  src->chunk_rows = y->block_rows;
  src->nchunks = y->nblocks;
  /* The largest block's entries where known (cached, or counted by a census); twice the
   * average otherwise. A block that is not cached is regenerated into a scratch block. */
  int64_t most = 0, known = 1;
  for (int64_t b = 0; b < y->nblocks; b++) {
    const cis_csr_block *blk = &y->blocks[b];
    int64_t ell = 0;
    for (int64_t r = blk->row0; r < blk->row0 + blk->nrows; r++) ell += y->ell.row_len[r];
    if (cis_csr_block_cached(blk))
      most = CIS_MAX(most, ell + blk->nnz);
    else if (y->census && y->census->counted[b])
      most = CIS_MAX(most, ell + y->census->bnnz[b]);
    else
      known = 0;
  }
  if (!known && y->nblocks > 0) most = CIS_MAX(most, 2 * src->nnz / y->nblocks);
  src->chunk_nnz = most;
  src->scratch = y->ncached < y->nblocks ? 12 * most : 0;
  src->ctx = y;
  src->rows = hmat_chunks;
}