/* cisolve benchmarks: the synthetic CI-like matrix (bench/synth.h). */
#include "bench/synth.h"

#include <string.h>

#include "base/util.h"

#define SYNTH_SLICE 32
#define SYNTH_BLOCK_NNZ ((int64_t)1 << 22)

static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static double u01(uint64_t *s) { return (double)(splitmix(s) >> 11) * (1.0 / 9007199254740992.0); }

static uint64_t row_seed(const synth_params *p, int64_t i) {
  uint64_t s = p->seed ^ ((uint64_t)i * 0xD1B54A32D192ED03ull);
  (void)splitmix(&s);
  return s;
}

/* The row's Expansion count is its generator's first draw. */
static int exp_count(const synth_params *p, uint64_t *s) {
  int64_t e = (int64_t)((double)p->exp_nnz * (0.9 + 0.2 * u01(s)) + 0.5);
  return (int)CIS_MIN(e, p->n - p->ref_cols);
}

/* `cnt` entries over columns [lo, lo + width): one per equal bucket. */
static void spread(uint64_t *s, int64_t lo, int64_t width, int cnt, int32_t *col, double *val) {
  for (int t = 0; t < cnt; t++) {
    int64_t a = lo + (int64_t)t * width / cnt, b = lo + (int64_t)(t + 1) * width / cnt;
    col[t] = (int32_t)(a + (int64_t)(u01(s) * (double)(b - a)));
    val[t] = 2.0 * u01(s) - 1.0;
  }
}

cis_err synth_build_csr(const synth_params *p, synth_csr *m) {
  memset(m, 0, sizeof *m);
  CIS_CHECK(p->n > 0 && p->n <= INT32_MAX && p->ref_cols >= 0 && p->ref_cols <= p->n &&
                p->ref_nnz >= 0 && p->ref_nnz <= p->ref_cols && p->exp_nnz >= 0,
            CIS_ERR_USAGE, "synthetic matrix: inconsistent sizes (n %lld, reference %lld x %d)",
            (long long)p->n, (long long)p->ref_cols, p->ref_nnz);
  m->n = p->n;
  CIS_CALL(cis_malloc(&m->rowptr, (size_t)p->n + 1, sizeof *m->rowptr, "CSR row pointers"));
  m->rowptr[0] = 0;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < p->n; i++) {
    uint64_t s = row_seed(p, i);
    m->rowptr[i + 1] = p->ref_nnz + exp_count(p, &s);
  }
  for (int64_t i = 0; i < p->n; i++) m->rowptr[i + 1] += m->rowptr[i];
  m->nnz = m->rowptr[p->n];
  CIS_CALL(cis_malloc(&m->col, (size_t)m->nnz + 2, sizeof *m->col, "CSR columns"));
  CIS_CALL(cis_malloc(&m->val, (size_t)m->nnz + 2, sizeof *m->val, "CSR values"));
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < p->n; i++) {
    uint64_t s = row_seed(p, i);
    int e = exp_count(p, &s);
    int64_t q = m->rowptr[i];
    spread(&s, 0, p->ref_cols, p->ref_nnz, m->col + q, m->val + q);
    spread(&s, p->ref_cols, p->n - p->ref_cols, e, m->col + q + p->ref_nnz,
           m->val + q + p->ref_nnz);
  }
  return CIS_OK;
}

void synth_csr_free(synth_csr *m) {
  cis_free(&m->rowptr);
  cis_free(&m->col);
  cis_free(&m->val);
}

static cis_err hyb_ell(const synth_csr *m, int64_t boundary, cis_ell *e) {
  int64_t n = m->n;
  e->nrows = n;
  e->boundary = boundary;
  e->slice = SYNTH_SLICE;
  e->nslices = (n + SYNTH_SLICE - 1) / SYNTH_SLICE;
  CIS_CALL(cis_malloc(&e->row_len, (size_t)n, sizeof *e->row_len, "ELL row lengths"));
  CIS_CALL(cis_calloc(&e->slice_width, (size_t)e->nslices, sizeof *e->slice_width, "widths"));
  CIS_CALL(cis_malloc(&e->slice_ptr, (size_t)e->nslices + 1, sizeof *e->slice_ptr, "offsets"));
  int64_t nnz = 0;
#pragma omp parallel for schedule(static) reduction(+ : nnz)
  for (int64_t i = 0; i < n; i++) {
    int32_t len = 0;
    for (int64_t q = m->rowptr[i]; q < m->rowptr[i + 1] && m->col[q] < boundary; q++) len++;
    e->row_len[i] = len;
    nnz += len;
  }
  e->nnz = nnz;
  e->slice_ptr[0] = 0;
  for (int64_t s = 0; s < e->nslices; s++) {
    int64_t r0 = s * SYNTH_SLICE, r1 = CIS_MIN(n, r0 + SYNTH_SLICE);
    for (int64_t i = r0; i < r1; i++) e->slice_width[s] = CIS_MAX(e->slice_width[s], e->row_len[i]);
    e->slice_ptr[s + 1] = e->slice_ptr[s] + (r1 - r0) * e->slice_width[s];
  }
  int64_t entries = e->slice_ptr[e->nslices];
  CIS_CALL(cis_calloc(&e->col, (size_t)entries, sizeof *e->col, "ELL columns"));
  CIS_CALL(cis_calloc(&e->val, (size_t)entries, sizeof *e->val, "ELL values"));
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; i++) {
    int64_t q = cis_ell_row_start(e, i);
    memcpy(e->col + q, m->col + m->rowptr[i], (size_t)e->row_len[i] * sizeof *e->col);
    memcpy(e->val + q, m->val + m->rowptr[i], (size_t)e->row_len[i] * sizeof *e->val);
  }
  return CIS_OK;
}

static cis_err hyb_block(const synth_csr *m, const cis_ell *e, cis_csr_block *b) {
  int64_t nnz = 0;
  for (int64_t i = b->row0; i < b->row0 + b->nrows; i++)
    nnz += m->rowptr[i + 1] - m->rowptr[i] - e->row_len[i];
  CIS_CALL(cis_csr_block_reserve(b, b->nrows, nnz));
  b->rowptr[0] = 0;
  int64_t q = 0;
  for (int64_t l = 0; l < b->nrows; l++) {
    int64_t i = b->row0 + l, p0 = m->rowptr[i] + e->row_len[i], len = m->rowptr[i + 1] - p0;
    memcpy(b->col + q, m->col + p0, (size_t)len * sizeof *b->col);
    memcpy(b->val + q, m->val + p0, (size_t)len * sizeof *b->val);
    q += len;
    b->rowptr[l + 1] = q;
  }
  b->nnz = q;
  return CIS_OK;
}

cis_err synth_build_hyb(const synth_csr *m, int64_t boundary, cis_hyb *h) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  memset(h, 0, sizeof *h);
  h->n = m->n;
  CIS_TRY(hyb_ell(m, boundary, &h->ell));
  h->nnz_exp = m->nnz - h->ell.nnz;
  double per_row = h->nnz_exp > 0 ? (double)h->nnz_exp / (double)m->n : 1.0;
  h->block_rows = CIS_MAX((int64_t)1, CIS_MIN(m->n, (int64_t)((double)SYNTH_BLOCK_NNZ / per_row)));
  h->nblocks = (m->n + h->block_rows - 1) / h->block_rows;
  CIS_TRY(cis_calloc(&h->blocks, (size_t)h->nblocks, sizeof *h->blocks, "Expansion blocks"));
  int failed = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(| : failed)
  for (int64_t b = 0; b < h->nblocks; b++) {
    cis_csr_block *blk = &h->blocks[b];
    blk->row0 = b * h->block_rows;
    blk->nrows = CIS_MIN(h->block_rows, m->n - blk->row0);
    failed |= hyb_block(m, &h->ell, blk) != CIS_OK;
  }
  if (failed) CIS_FAIL(CIS_ERR_NOMEM, "out of host memory building the Expansion blocks");
  h->ncached = h->nblocks;
cleanup:
  if (err != CIS_OK) cis_hyb_free(h);
  return err;
}

void synth_fill(double *x, int64_t count, uint64_t seed) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < count; i++) {
    uint64_t s = seed ^ ((uint64_t)i * 0x9E3779B97F4A7C15ull);
    x[i] = 2.0 * u01(&s) - 1.0;
  }
}
