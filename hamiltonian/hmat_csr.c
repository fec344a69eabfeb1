/* cisolve: an explicit matrix as a Hamiltonian (cis_hmat_build_csr, hamiltonian/hmat.h): our
 * order (the lowest row of each connected component first, then ascending diagonal), the
 * hybrid storage, the Reference block and each component's Gershgorin bound. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "hamiltonian/hmat_private.h"

typedef struct {
  double d;
  int64_t i;
} diag_item;
static int cmp_diag(const void *a, const void *b) {
  const diag_item *x = a, *y = b;
  if (x->d != y->d) return x->d < y->d ? -1 : 1;
  return (x->i > y->i) - (x->i < y->i);
}

static int64_t comp_find(int64_t *up, int64_t x) {
  while (up[x] != x) {
    up[x] = up[up[x]];
    x = up[x];
  }
  return x;
}

/* The connected component of every row of m (its smallest row), by its nonzero entries. */
static void components(const cis_csr *m, int64_t *up) {
  for (int64_t i = 0; i < m->n; i++) up[i] = i;
  for (int64_t i = 0; i < m->n; i++)
    for (int64_t q = m->rowptr[i]; q < m->rowptr[i + 1]; q++) {
      int64_t a = comp_find(up, i), b = m->col[q];
      if (m->val[q] == 0.0 || b < 0 || b >= m->n) continue;
      b = comp_find(up, b);
      if (a != b) up[CIS_MAX(a, b)] = CIS_MIN(a, b);
    }
  for (int64_t i = 0; i < m->n; i++) up[i] = comp_find(up, i);
}

/* Sorted by diagonal (d), the lowest row of the first CIS_HMAT_REF_COMPONENTS components moved
 * to the front, in place; comp: each row's component. */
static cis_err components_first(diag_item *d, int64_t n, const int64_t *comp) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  unsigned char *seen = NULL, *front = NULL;
  diag_item *t = NULL;
  int64_t nf = 0;
  CIS_TRY(cis_calloc(&seen, (size_t)n, 1, "components seen"));
  CIS_TRY(cis_calloc(&front, (size_t)n, 1, "component leaders"));
  CIS_TRY(cis_malloc(&t, (size_t)n, sizeof *t, "diagonal order"));
  for (int64_t k = 0; k < n && nf < CIS_HMAT_REF_COMPONENTS; k++)
    if (!seen[comp[d[k].i]]) {
      seen[comp[d[k].i]] = 1;
      front[k] = 1;
      t[nf++] = d[k];
    }
  for (int64_t k = 0; k < n; k++)
    if (!front[k]) t[nf++] = d[k];
  memcpy(d, t, (size_t)n * sizeof *d);
cleanup:
  cis_free(&seen);
  cis_free(&front);
  cis_free(&t);
  return err;
}

cis_err cis_hmat_csr_order(const cis_csr *m, int64_t *perm, int64_t *inv, double *diag,
                           int64_t *comp) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  int64_t n = m->n;
  diag_item *d = NULL;
  CIS_TRY(cis_malloc(&d, (size_t)n, sizeof *d, "diagonal order"));
  for (int64_t i = 0; i < n; i++) {
    d[i].d = 0.0;
    d[i].i = i;
    for (int64_t q = m->rowptr[i]; q < m->rowptr[i + 1]; q++)
      if (m->col[q] == i) d[i].d = m->val[q];
  }
  qsort(d, (size_t)n, sizeof *d, cmp_diag);
  components(m, inv); /* inv holds each row's component until it is the inverse */
  CIS_TRY(components_first(d, n, inv));
  if (comp)
    for (int64_t i = 0; i < n; i++) comp[i] = inv[d[i].i];
  for (int64_t i = 0; i < n; i++) {
    perm[i] = d[i].i;
    inv[d[i].i] = i;
    diag[i] = d[i].d;
  }
cleanup:
  cis_free(&d);
  return err;
}

/* The permuted matrix into p (perm, inv from cis_hmat_csr_order). */
static cis_err permute_csr(const cis_csr *m, const int64_t *perm, const int64_t *inv,
                           cis_csr *p) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  int64_t n = m->n;
  p->n = n;
  p->nnz = m->nnz;
  CIS_TRY(cis_malloc(&p->rowptr, (size_t)n + 1, sizeof(int64_t), "permuted row pointers"));
  CIS_TRY(cis_malloc(&p->col, (size_t)m->nnz, sizeof(int32_t), "permuted columns"));
  CIS_TRY(cis_malloc(&p->val, (size_t)m->nnz, sizeof(double), "permuted values"));
  p->rowptr[0] = 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t o = perm[i], q0 = m->rowptr[o], len = m->rowptr[o + 1] - q0, at = p->rowptr[i];
    for (int64_t t = 0; t < len; t++) {
      if (m->col[q0 + t] < 0 || m->col[q0 + t] >= n)
        CIS_FAIL(CIS_ERR_INPUT, "explicit matrix row %ld has column %ld outside 0..%ld",
                 (long)o, (long)m->col[q0 + t], (long)(n - 1));
      p->col[at + t] = (int32_t)inv[m->col[q0 + t]];
      p->val[at + t] = m->val[q0 + t];
    }
    p->rowptr[i + 1] = at + len;
  }
cleanup:
  return err;
}

/* Expansion entries (columns >= nref in our order) of rows [r0, r1) of our order. */
static int64_t csr_exp_nnz(const cis_csr *m, const int64_t *perm, const int64_t *inv, int64_t nref,
                           int64_t r0, int64_t r1) {
  int64_t nnz = 0;
  for (int64_t i = r0; i < r1; i++)
    for (int64_t q = m->rowptr[perm[i]]; q < m->rowptr[perm[i] + 1]; q++)
      nnz += m->col[q] >= 0 && m->col[q] < m->n && inv[m->col[q]] >= nref;
  return nnz;
}

/* Bytes the fully cached Expansion blocks of an explicit matrix take, in blocks of br rows. */
static int64_t csr_need(const cis_csr *m, const int64_t *perm, const int64_t *inv, int64_t nref,
                        int64_t br) {
  int64_t need = 0;
  for (int64_t r0 = 0; r0 < m->n; r0 += br) {
    int64_t r1 = CIS_MIN(m->n, r0 + br);
    need += cis_hmat_block_bytes(r1 - r0, csr_exp_nnz(m, perm, inv, nref, r0, r1));
  }
  return need;
}

void cis_hmat_csr_decide(const cis_csr *m, const int64_t *perm, const int64_t *inv,
                         const cis_hmat_opts *opts, cis_hmat_csr_decision *d) {
  int64_t n = m->n, want = opts && opts->ref_size > 0 ? opts->ref_size : CIS_REF_AUTO_MAX;
  d->nref = CIS_MIN(want, n);
  d->nnz_exp = csr_exp_nnz(m, perm, inv, d->nref, 0, n);
  int nt = cis_hmat_nthreads(opts ? opts->nthreads : 0);
  d->block_rows =
      opts && opts->block_rows > 0 ? opts->block_rows : cis_hmat_auto_block_rows(n, d->nnz_exp, nt);
  d->ell_est = 12 * (m->nnz - d->nnz_exp); /* 12 bytes a Reference entry, before padding */
  d->budget = cis_hmat_resolve_budget(opts, n, d->ell_est);
  d->need = csr_need(m, perm, inv, d->nref, d->block_rows);
}

/* NOMEM naming the least budget when the cached Expansion blocks do not fit. */
static cis_err check_csr_budget(const cis_hmat_csr_decision *d) {
  char b1[32], b2[32];
  CIS_CHECK(d->need <= d->budget, CIS_ERR_NOMEM,
            "memory budget %s is too small for the explicit matrix: its Expansion part needs "
            "%s; give a budget of at least %ld bytes",
            cis_format_bytes((double)d->budget, b1, sizeof b1),
            cis_format_bytes((double)d->need, b2, sizeof b2), (long)d->need);
  return CIS_OK;
}

/* The preconditioner's dense block (column-major) from the ELL rows and columns < npre. */
static cis_err make_hpp(cis_hmat *h) {
  const cis_ell *e = &h->hyb.ell;
  int64_t m = h->npre = CIS_MIN(h->nref, (int64_t)CIS_HMAT_PRECOND_MAX);
  CIS_CALL(cis_calloc(&h->hpp, (size_t)(m * m), sizeof(double), "Reference block"));
  for (int64_t i = 0; i < m; i++) {
    int64_t q0 = cis_ell_row_start(e, i);
    for (int32_t t = 0; t < e->row_len[i]; t++)
      if (e->col[q0 + t] < m) h->hpp[i + e->col[q0 + t] * m] = e->val[q0 + t];
  }
  return CIS_OK;
}

/* Components as labels of the preconditioner's block, and their Gershgorin bounds (p: our
 * order; comp: each row's component). */
static cis_err ref_symmetry_csr(cis_hmat *h, const cis_csr *p, const int64_t *comp) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  int64_t n = p->n, m = h->npre;
  double *low = NULL;
  CIS_TRY(cis_malloc(&low, (size_t)n, sizeof *low, "component bounds"));
  for (int64_t i = 0; i < n; i++) low[i] = HUGE_VAL;
  for (int64_t i = 0; i < n; i++) {
    double g = h->hdiag[i];
    for (int64_t q = p->rowptr[i]; q < p->rowptr[i + 1]; q++)
      if (p->col[q] != i) g -= fabs(p->val[q]);
    low[comp[i]] = CIS_MIN(low[comp[i]], g);
  }
  CIS_TRY(cis_malloc(&h->ref_label, (size_t)m, sizeof *h->ref_label, "Reference labels"));
  CIS_TRY(cis_malloc(&h->ref_bound, (size_t)m, sizeof *h->ref_bound, "Reference bounds"));
  for (int64_t i = 0; i < m; i++) {
    h->ref_label[i] = (uint64_t)comp[i];
    h->ref_bound[i] = low[comp[i]];
  }
cleanup:
  cis_free(&low);
  return err;
}

static cis_err build_csr(cis_hmat *h, const cis_csr *m, const cis_hmat_opts *opts) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  cis_csr p = {0};
  int64_t n = m->n, *inv = NULL, *comp = NULL;
  cis_hmat_csr_decision dec;
  CIS_TRY(cis_malloc(&h->perm, (size_t)n, sizeof(int64_t), "permutation"));
  hmat_impl *im = (hmat_impl *)h; /* pub is its first member */
  CIS_TRY(cis_malloc(&im->hdiag_own, (size_t)n, sizeof(double), "diagonal"));
  h->hdiag = im->hdiag_own;
  CIS_TRY(cis_malloc(&inv, (size_t)n, sizeof *inv, "inverse permutation"));
  CIS_TRY(cis_malloc(&comp, (size_t)n, sizeof *comp, "components"));
  CIS_TRY(cis_hmat_csr_order(m, h->perm, inv, im->hdiag_own, comp));
  CIS_TRY(permute_csr(m, h->perm, inv, &p));
  CIS_TRY(cis_csr_sort_rows(&p)); /* permuted rows are no longer sorted by column */
  cis_hmat_csr_decide(m, h->perm, inv, opts, &dec);
  h->nref = dec.nref;
  h->stats.budget = dec.budget;
  CIS_TRY(check_csr_budget(&dec));
  CIS_TRY(cis_hyb_from_csr(n, p.rowptr, p.col, p.val, h->nref, dec.block_rows, CIS_ELL_SLICE,
                           &h->hyb));
  h->hyb.progress = opts ? opts->progress : NULL;
  h->stats.ell_bytes = cis_ell_bytes(&h->hyb.ell);
  h->stats.cached_bytes = cis_hyb_cached_bytes(&h->hyb);
  h->stats.elements_generated = p.nnz;
  CIS_TRY(make_hpp(h));
  CIS_TRY(ref_symmetry_csr(h, &p, comp));
cleanup:
  cis_free(&inv);
  cis_free(&comp);
  cis_csr_free(&p);
  return err;
}

cis_err cis_hmat_build_csr(const cis_csr *m, const cis_hmat_opts *opts, cis_hmat **out) {
  cis_err err = CIS_OK;
  hmat_impl *im = NULL;
  double t0 = cis_wtime();
  *out = NULL;
  CIS_CHECK(m->n > 0 && m->n <= 0x7fffffff && m->rowptr && (m->nnz == 0 || (m->col && m->val)),
            CIS_ERR_INPUT, "the explicit matrix is empty or has more than 2^31-1 rows (n = %ld)",
            (long)m->n);
  CIS_CLEANUP_FUNCTION;
  CIS_TRY(cis_calloc(&im, 1, sizeof *im, "Hamiltonian"));
  cis_hmat *h = &im->pub;
  h->n = m->n;
  CIS_TRY(build_csr(h, m, opts));
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
