/* cisolve: the Reference block H_PP: its eigendecomposition and shifted inverse (the
 * preconditioner), and its eigenpairs within symmetry blocks (the guess, the check). */
#include "solver/refblock.h"

#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <string.h>

#include "base/util.h"

cis_err cis_refblock_init(int64_t nref, const double *hpp, cis_refblock *rb) {
  cis_err err = CIS_OK;
  memset(rb, 0, sizeof *rb);
  rb->nref = nref;
  if (nref == 0) return CIS_OK;
  CIS_CHECK(nref <= 46340, CIS_ERR_USAGE,
            "Reference region of %lld determinants is too large for a dense H_PP "
            "(at most 46340)", (long long)nref);
  CIS_CLEANUP_FUNCTION;
  CIS_TRY(cis_malloc(&rb->lam, (size_t)nref, sizeof *rb->lam, "H_PP eigenvalues"));
  CIS_TRY(cis_malloc(&rb->U, (size_t)(nref * nref), sizeof *rb->U, "H_PP eigenvectors"));
  for (int64_t i = 0; i < nref * nref; i++)
    if (!isfinite(hpp[i]))
      CIS_FAIL(CIS_ERR_NUMERIC, "H_PP element (%lld, %lld) is not finite",
               (long long)(i % nref), (long long)(i / nref));
  memcpy(rb->U, hpp, (size_t)(nref * nref) * sizeof *rb->U);
  lapack_int info = LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'V', 'U', (lapack_int)nref, rb->U,
                                   (lapack_int)nref, rb->lam);
  if (info != 0)
    CIS_FAIL(CIS_ERR_NUMERIC, "LAPACKE_dsyevd failed (info %d) on the %lld x %lld H_PP block",
             (int)info, (long long)nref, (long long)nref);
cleanup:
  if (err != CIS_OK) cis_refblock_free(rb);
  return err;
}

void cis_refblock_free(cis_refblock *rb) {
  cis_free(&rb->lam);
  cis_free(&rb->U);
  rb->nref = 0;
}

void cis_refblock_solve(const cis_refblock *rb, double shift, double floor, const double *r,
                        double *t, double *work) {
  int n = (int)rb->nref;
  if (n == 0) return;
  cblas_dgemv(CblasColMajor, CblasTrans, n, n, 1.0, rb->U, n, r, 1, 0.0, work, 1);
  for (int i = 0; i < n; i++) {
    double den = rb->lam[i] - shift;
    if (fabs(den) < floor) den = den < 0.0 ? -floor : floor;
    work[i] /= den;
  }
  cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, 1.0, rb->U, n, work, 1, 0.0, t, 1);
}

/* ---- eigenpairs by symmetry block ---------------------------------------------------------- */

#define CIS_SQRT1_2 0.70710678118654752440

typedef struct {
  uint64_t label;
  int64_t idx;
} labelled;
static int cmp_labelled(const void *a, const void *b) {
  const labelled *x = a, *y = b;
  if (x->label != y->label) return x->label < y->label ? -1 : 1;
  return (x->idx > y->idx) - (x->idx < y->idx);
}

typedef struct {
  double lam;
  int64_t col;
} lamcol;
static int cmp_lamcol(const void *a, const void *b) {
  const lamcol *x = a, *y = b;
  if (x->lam != y->lam) return x->lam < y->lam ? -1 : 1;
  return (x->col > y->col) - (x->col < y->col);
}

/* The basis of one parity of a group of determinants g[0..len): each vector has one or two
 * entries (i, and its partner with sign par). Returns the count; q: len x 2 indices, w: len x 2
 * weights (an index -1 is absent). */
static int64_t parity_basis(const labelled *g, int64_t len, const int64_t *partner, int par,
                            int64_t *q, double *w) {
  int64_t m = 0;
  for (int64_t a = 0; a < len; a++) {
    int64_t i = g[a].idx, j = partner ? partner[i] : i;
    if (!partner || par == 0) {
      q[2 * m] = i, q[2 * m + 1] = -1, w[2 * m] = 1.0, w[2 * m + 1] = 0.0, m++;
    } else if (j == i) { /* exchange-symmetric: even only */
      if (par > 0) q[2 * m] = i, q[2 * m + 1] = -1, w[2 * m] = 1.0, w[2 * m + 1] = 0.0, m++;
    } else if (j > i) {
      q[2 * m] = i, q[2 * m + 1] = j, w[2 * m] = CIS_SQRT1_2, w[2 * m + 1] = par * CIS_SQRT1_2, m++;
    }
  }
  return m;
}

/* Diagonalise H_PP in the basis (q, w) of m vectors; scatter the eigenvectors into columns
 * col0.. of st->U and record them. B: m x m scratch. */
static cis_err block_eigs(const double *hpp, int64_t nref, const int64_t *q, const double *w,
                          int64_t m, int blk, cis_refstates *st, int64_t col0, lamcol *lc,
                          double *B) {
  for (int64_t b = 0; b < m; b++)
    for (int64_t a = 0; a <= b; a++) {
      double v = 0.0;
      for (int x = 0; x < 2; x++)
        for (int y = 0; y < 2; y++)
          if (q[2 * a + x] >= 0 && q[2 * b + y] >= 0)
            v += w[2 * a + x] * w[2 * b + y] * hpp[q[2 * a + x] + q[2 * b + y] * nref];
      B[a + b * m] = v;
    }
  double *lam = st->lam + col0;
  lapack_int info = LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'V', 'U', (lapack_int)m, B, (lapack_int)m,
                                   lam);
  CIS_CHECK(info == 0, CIS_ERR_NUMERIC,
            "LAPACKE_dsyevd failed (info %d) on a %lld x %lld symmetry block of H_PP", (int)info,
            (long long)m, (long long)m);
  for (int64_t c = 0; c < m; c++) {
    double *u = st->U + (col0 + c) * nref;
    memset(u, 0, (size_t)nref * sizeof *u);
    for (int64_t a = 0; a < m; a++)
      for (int x = 0; x < 2; x++)
        if (q[2 * a + x] >= 0) u[q[2 * a + x]] += w[2 * a + x] * B[a + c * m];
    st->block[col0 + c] = blk;
    lc[col0 + c].lam = lam[c];
    lc[col0 + c].col = col0 + c;
  }
  return CIS_OK;
}

/* Whether every member of the group has its exchange partner in the block. */
static int group_paired(const labelled *g, int64_t len, const int64_t *partner) {
  if (!partner) return 0;
  for (int64_t a = 0; a < len; a++)
    if (partner[g[a].idx] < 0) return 0;
  return 1;
}

/* Sort the pairs by eigenvalue: U's columns and the blocks follow. */
static cis_err sort_pairs(cis_refstates *st, lamcol *lc) {
  int64_t nref = st->nref, m = st->m;
  double *U2 = NULL;
  int *b2 = NULL;
  CIS_CALL(cis_malloc(&U2, (size_t)(nref * m), sizeof *U2, "H_PP block eigenvectors"));
  if (cis_malloc(&b2, (size_t)m, sizeof *b2, "H_PP block labels") != CIS_OK) {
    cis_free(&U2);
    return cis_error_code();
  }
  qsort(lc, (size_t)m, sizeof *lc, cmp_lamcol);
  for (int64_t c = 0; c < m; c++) {
    memcpy(U2 + c * nref, st->U + lc[c].col * nref, (size_t)nref * sizeof *U2);
    st->lam[c] = lc[c].lam;
    b2[c] = st->block[lc[c].col];
  }
  cis_free(&st->U);
  cis_free(&st->block);
  st->U = U2;
  st->block = b2;
  return CIS_OK;
}

cis_err cis_refstates_make(int64_t nref, const double *hpp, const cis_refsym *sym,
                           cis_refstates *st) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  labelled *g = NULL;
  lamcol *lc = NULL;
  int64_t *q = NULL;
  double *w = NULL, *B = NULL;
  memset(st, 0, sizeof *st);
  st->nref = st->m = (int)nref;
  if (nref == 0) return CIS_OK;
  const int64_t *partner = sym ? sym->partner : NULL;
  CIS_TRY(cis_malloc(&g, (size_t)nref, sizeof *g, "H_PP symmetry order"));
  CIS_TRY(cis_malloc(&lc, (size_t)nref, sizeof *lc, "H_PP eigenvalues"));
  CIS_TRY(cis_malloc(&q, (size_t)(2 * nref), sizeof *q, "H_PP symmetry basis"));
  CIS_TRY(cis_malloc(&w, (size_t)(2 * nref), sizeof *w, "H_PP symmetry basis"));
  CIS_TRY(cis_malloc(&st->lam, (size_t)nref, sizeof *st->lam, "H_PP block eigenvalues"));
  CIS_TRY(cis_malloc(&st->U, (size_t)(nref * nref), sizeof *st->U, "H_PP block eigenvectors"));
  CIS_TRY(cis_malloc(&st->block, (size_t)nref, sizeof *st->block, "H_PP block of each pair"));
  CIS_TRY(cis_malloc(&st->blabel, (size_t)(2 * nref), sizeof *st->blabel, "block labels"));
  CIS_TRY(cis_malloc(&st->bparity, (size_t)(2 * nref), sizeof *st->bparity, "block parities"));
  CIS_TRY(cis_malloc(&st->bbound, (size_t)(2 * nref), sizeof *st->bbound, "block bounds"));
  for (int64_t i = 0; i < nref; i++) {
    g[i].label = sym && sym->label ? sym->label[i] : 0;
    g[i].idx = i;
  }
  qsort(g, (size_t)nref, sizeof *g, cmp_labelled);
  int64_t col = 0;
  for (int64_t a = 0, b; a < nref; a = b) {
    for (b = a + 1; b < nref && g[b].label == g[a].label;) b++;
    int paired = group_paired(g + a, b - a, partner);
    for (int par = paired ? 1 : 0; par >= (paired ? -1 : 0); par -= 2) {
      int64_t m = parity_basis(g + a, b - a, paired ? partner : NULL, par, q, w);
      if (m == 0) continue;
      CIS_TRY(cis_realloc(&B, (size_t)(m * m), sizeof *B, "H_PP symmetry block"));
      int blk = st->nblocks++;
      st->blabel[blk] = g[a].label;
      st->bparity[blk] = (signed char)par;
      st->bbound[blk] = sym && sym->bound ? sym->bound[g[a].idx] : -HUGE_VAL;
      CIS_TRY(block_eigs(hpp, nref, q, w, m, blk, st, col, lc, B));
      col += m;
    }
  }
  if (col != nref)
    CIS_FAIL(CIS_ERR_INTERNAL, "H_PP symmetry blocks hold %lld of %lld vectors", (long long)col,
             (long long)nref);
  CIS_TRY(sort_pairs(st, lc));
cleanup:
  cis_free(&g);
  cis_free(&lc);
  cis_free(&q);
  cis_free(&w);
  cis_free(&B);
  if (err != CIS_OK) cis_refstates_free(st);
  return err;
}

void cis_refstates_free(cis_refstates *st) {
  cis_free(&st->lam);
  cis_free(&st->U);
  cis_free(&st->block);
  cis_free(&st->blabel);
  cis_free(&st->bparity);
  cis_free(&st->bbound);
  st->m = st->nblocks = 0;
}

cis_refblock cis_refstates_view(const cis_refstates *st) {
  cis_refblock rb = {0, NULL, NULL};
  if (st->nref > 0 && st->m == st->nref && st->U && st->lam) {
    rb.nref = st->nref;
    rb.lam = st->lam;
    rb.U = st->U;
  }
  return rb;
}
