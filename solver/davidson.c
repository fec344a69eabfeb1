/* cisolve: block multi-root Davidson (docs/solvers.md).
 *
 * Basis V and its image AV = H V (n x maxsub each) live on the backend, so no product is ever
 * repeated; the projected matrix Hs = V^T H V is grown column block by column block on the
 * host. A collapse keeps the current Ritz vectors and the previous ones (thick restart) as
 * combinations of V and AV, without a product.
 */
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "base/util.h"
#include "solver/eigs.h"
#include "solver/ortho.h"
#include "solver/refblock.h"

/* |D_i - theta + shift| is clamped from below so that t = r / (D - theta) stays finite. */
#define DAV_PRECOND_FLOOR 1e-8

typedef struct {
  cis_backend *be;
  cis_operator *op;
  int64_t n, nref;        /* rows held (be->n); the Reference block's order */
  int64_t N, row0;        /* the whole vectors' length; the first row held (a part's) */
  int K, maxsub, m;       /* roots, basis capacity, basis size */
  double *V, *AV;         /* backend, n x maxsub */
  double *X, *R;          /* backend, n x K: Ritz vectors, residuals */
  double *S;              /* backend, n x 2K: collapse scratch */
  double *d;              /* backend, the diagonal */
  double *Hs;             /* host, maxsub x maxsub (ld maxsub) */
  double *Y, *Yprev;      /* host, maxsub x K (ld maxsub): Ritz coefficients, now / before */
  int mprev;              /* rows of Yprev in use; 0 = none yet */
  double *theta, *eprev, *rnorm;
  int *conv, *pick;
  double *work;           /* host, see dav_alloc */
  double *rP, *tP, *wP;   /* host, nref each */
  double *hostn;          /* host, N: random fallback (allocated when first needed) */
  double *D, *Dw;         /* deflation: backend n x nd, host scratch nd x maxsub */
  const double *deflate;  /* host n x nd, borrowed */
  int nd;
  const double *diag;     /* host, N */
  cis_refblock rb_own;      /* H_PP's decomposition, unless the caller gave one */
  const cis_refblock *rb;
  double t_ortho;
  uint64_t rng;
} dav;

static cis_err dav_alloc(dav *s) {
  const cis_backend_ops *o = s->be->ops;
  int64_t n = s->n, ms = s->maxsub, K = s->K;
  CIS_CALL(o->alloc(s->be, n * ms, &s->V));
  CIS_CALL(o->alloc(s->be, n * ms, &s->AV));
  CIS_CALL(o->alloc(s->be, n * K, &s->X));
  CIS_CALL(o->alloc(s->be, n * K, &s->R));
  CIS_CALL(o->alloc(s->be, n * 2 * K, &s->S));
  CIS_CALL(o->alloc(s->be, n, &s->d));
  if (s->op->diag_dev)
    CIS_CALL(o->copy(s->be, s->d, s->op->diag_dev, n));
  else
    CIS_CALL(o->from_host(s->be, s->d, s->diag + s->row0, n));
  CIS_CALL(cis_calloc(&s->Hs, (size_t)(ms * ms), sizeof(double), "projected matrix"));
  CIS_CALL(cis_calloc(&s->Y, (size_t)(ms * K), sizeof(double), "Ritz coefficients"));
  CIS_CALL(cis_calloc(&s->Yprev, (size_t)(ms * K), sizeof(double), "previous Ritz coefficients"));
  CIS_CALL(cis_malloc(&s->theta, (size_t)K, sizeof(double), "Ritz values"));
  CIS_CALL(cis_malloc(&s->eprev, (size_t)K, sizeof(double), "previous Ritz values"));
  CIS_CALL(cis_malloc(&s->rnorm, (size_t)K, sizeof(double), "residual norms"));
  CIS_CALL(cis_calloc(&s->conv, (size_t)K, sizeof(int), "convergence flags"));
  CIS_CALL(cis_calloc(&s->pick, (size_t)K, sizeof(int), "roots to expand"));
  /* Largest users: collapse (C, Hs C, C^T Hs C: 3 ms^2) and the eigensolver (ms^2 + ms). */
  CIS_CALL(cis_malloc(&s->work, (size_t)(4 * ms * ms + 4 * ms), sizeof(double), "Davidson work"));
  CIS_CALL(cis_malloc(&s->rP, (size_t)s->nref, sizeof(double), "Reference residual"));
  CIS_CALL(cis_malloc(&s->tP, (size_t)s->nref, sizeof(double), "Reference correction"));
  CIS_CALL(cis_malloc(&s->wP, (size_t)s->nref, sizeof(double), "Reference work"));
  if (s->nd > 0) {
    CIS_CALL(o->alloc(s->be, n * s->nd, &s->D));
    CIS_CALL(o->from_host(s->be, s->D, s->deflate, n * s->nd));
    CIS_CALL(cis_malloc(&s->Dw, (size_t)s->nd * (size_t)ms, sizeof(double), "deflation work"));
  }
  for (int i = 0; i < s->K; i++) s->eprev[i] = HUGE_VAL;
  return CIS_OK;
}

static void dav_free(dav *s) {
  const cis_backend_ops *o = s->be->ops;
  o->free(s->be, &s->V);
  o->free(s->be, &s->AV);
  o->free(s->be, &s->X);
  o->free(s->be, &s->R);
  o->free(s->be, &s->S);
  o->free(s->be, &s->d);
  o->free(s->be, &s->D);
  double **host[] = {&s->Hs, &s->Y, &s->Yprev, &s->theta, &s->eprev, &s->rnorm,
                     &s->work, &s->rP, &s->tP, &s->wP, &s->hostn, &s->Dw};
  for (size_t i = 0; i < sizeof host / sizeof *host; i++) cis_free(host[i]);
  cis_free(&s->conv);
  cis_free(&s->pick);
  cis_refblock_free(&s->rb_own);
}

/* W -= D (D^T W), twice, for the nw candidates W: the search stays outside the deflated
 * vectors. */
static cis_err dav_deflate(dav *s, double *W, int nw) {
  if (s->nd == 0 || nw == 0) return CIS_OK;
  for (int pass = 0; pass < 2; pass++) {
    CIS_CALL(s->be->ops->gemm_tn(s->be, s->nd, nw, s->D, W, s->Dw));
    for (int64_t i = 0; i < (int64_t)s->nd * nw; i++) s->Dw[i] = -s->Dw[i];
    CIS_CALL(s->be->ops->gemm_nn(s->be, s->nd, nw, s->D, s->Dw, 1.0, W));
  }
  return CIS_OK;
}

/* Orthonormalise the nw candidates at V[:, m:], apply H to the survivors and add their rows
 * and columns to Hs. */
static cis_err dav_expand(dav *s, int nw, int *nkept) {
  cis_backend *be = s->be;
  int64_t n = s->n;
  int m = s->m, ld = s->maxsub, k;
  double t0 = cis_wtime();
  CIS_CALL(dav_deflate(s, s->V + m * n, nw));
  CIS_CALL(cis_ortho_append(be, s->V, m, nw, CIS_ORTHO_DROP_TOL, s->work, &k));
  s->t_ortho += cis_wtime() - t0;
  *nkept = k;
  if (k == 0) return CIS_OK;
  CIS_CALL(cis_operator_apply(s->op, k, s->V + m * n, s->AV + m * n));
  double *G = s->work; /* (m + k) x k */
  CIS_CALL(be->ops->gemm_tn(be, m + k, k, s->V, s->AV + m * n, G));
  for (int64_t i = 0; i < (int64_t)(m + k) * k; i++)
    CIS_CHECK(isfinite(G[i]), CIS_ERR_NUMERIC,
              "the matrix-vector product gave NaN/Inf (basis vector %d): the matrix holds "
              "non-finite elements", m + (int)(i / (m + k)) + 1);
  for (int j = 0; j < k; j++) {
    for (int i = 0; i < m; i++) {
      s->Hs[i + (m + j) * ld] = G[i + j * (m + k)];
      s->Hs[(m + j) + i * ld] = G[i + j * (m + k)];
    }
    for (int i = 0; i < k; i++) /* symmetric to rounding: average the two triangles */
      s->Hs[(m + i) + (m + j) * ld] = 0.5 * (G[(m + i) + j * (m + k)] + G[(m + j) + i * (m + k)]);
  }
  s->m = m + k;
  return CIS_OK;
}

/* Indices of the K - nref lowest diagonal elements at or beyond nref, ascending. */
static void lowest_diag(const double *d, int64_t n, int64_t nref, int cnt, int64_t *idx) {
  int have = 0;
  if (cnt <= 0) return;
  for (int64_t i = nref; i < n; i++) {
    if (have == cnt && d[i] >= d[idx[cnt - 1]]) continue;
    int p = have < cnt ? have++ : cnt - 1;
    while (p > 0 && d[idx[p - 1]] > d[i]) {
      idx[p] = idx[p - 1];
      p--;
    }
    idx[p] = i;
  }
}

static uint64_t xorshift(uint64_t *x) {
  *x ^= *x << 13;
  *x ^= *x >> 7;
  *x ^= *x << 17;
  return *x;
}

/* Seeded random values in [-0.5, 0.5) for column j of V: the whole vector's, whatever part of
 * its rows this backend holds. */
static cis_err dav_random(dav *s, int j) {
  if (!s->hostn) CIS_CALL(cis_malloc(&s->hostn, (size_t)s->N, sizeof(double), "random vector"));
  for (int64_t i = 0; i < s->N; i++)
    s->hostn[i] = (double)(xorshift(&s->rng) >> 11) * (1.0 / 9007199254740992.0) - 0.5;
  CIS_CALL(s->be->ops->from_host(s->be, s->V + (int64_t)j * s->n, s->hostn + s->row0, s->n));
  return CIS_OK;
}

/* A deflated run looks for what the deflated vectors missed: a guess built from H_PP or the
 * diagonal would repeat their bias, random vectors have a component along every state. */
static cis_err dav_guess_random(dav *s) {
  int nk;
  for (int j = 0; j < s->K; j++) CIS_CALL(dav_random(s, j));
  CIS_CALL(dav_expand(s, s->K, &nk));
  CIS_CHECK(nk == s->K, CIS_ERR_INTERNAL, "random guess: %d of %d vectors are independent", nk,
            s->K);
  return CIS_OK;
}

/* Lowest eigenvectors of H_PP (within symmetry blocks when known) padded with zeros; unit
 * vectors at the lowest remaining diagonal elements when the Reference region has fewer than K
 * states; or the caller's vectors. */
static cis_err dav_guess(dav *s, const cis_eig_opts *o) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  double *G = NULL;
  int64_t *idx = NULL, n = s->n, nref = s->nref, row0 = s->row0;
  int K = s->K, from_ref = (int)CIS_MIN((int64_t)K, nref), nk;
  const double *U = o->states && o->states->nref == nref ? o->states->U : s->rb->U;
  if (o->guess_X && o->guess_rows > 0 && o->guess_rows < s->N) {
    /* V is zero from dav_alloc: the rows given (those of them held here) are all there is to
     * copy */
    int64_t held = cis_eig_lead_rows(s->be, o->guess_rows);
    for (int j = 0; j < K && held > 0; j++)
      CIS_TRY(s->be->ops->from_host(s->be, s->V + j * n, o->guess_X + j * o->guess_rows + row0,
                                    held));
  } else if (o->guess_X) {
    CIS_TRY(s->be->ops->from_host(s->be, s->V, o->guess_X, n * K));
  } else {
    int64_t held = cis_eig_lead_rows(s->be, nref);
    CIS_TRY(cis_calloc(&G, (size_t)(n * K), sizeof *G, "initial guess"));
    CIS_TRY(cis_malloc(&idx, (size_t)K, sizeof *idx, "initial guess indices"));
    for (int j = 0; j < from_ref && held > 0; j++)
      memcpy(G + j * n, U + j * nref + row0, (size_t)held * sizeof *G);
    lowest_diag(s->diag, s->N, nref, K - from_ref, idx);
    for (int j = from_ref; j < K; j++)
      if (idx[j - from_ref] >= row0 && idx[j - from_ref] < row0 + n)
        G[idx[j - from_ref] - row0 + j * n] = 1.0;
    CIS_TRY(s->be->ops->from_host(s->be, s->V, G, n * K));
  }
  CIS_TRY(dav_expand(s, K, &nk));
  /* a caller's vector may lie in the deflated span: random ones take its place */
  for (int tries = 0; nk < K && o->guess_X && tries < 4; tries++) {
    int more;
    for (int j = 0; j < K - nk; j++) CIS_TRY(dav_random(s, s->m + j));
    CIS_TRY(dav_expand(s, K - nk, &more));
    nk += more;
  }
  if (nk != K)
    CIS_FAIL(CIS_ERR_INTERNAL, "initial guess: %d of %d vectors are independent", nk, K);
cleanup:
  cis_free(&G);
  cis_free(&idx);
  return err;
}

/* Restart: the basis is the checkpoint's Ritz vectors and AV their products, so the restart
 * costs no product. The vectors were orthonormal when saved; check it rather than trust it. */
static cis_err dav_guess_restart(dav *s, const cis_eig_opts *o) {
  cis_backend *be = s->be;
  int64_t n = s->n;
  int K = s->K, ld = s->maxsub;
  double *G = s->work;
  CIS_CALL(be->ops->from_host(be, s->V, o->guess_X, n * K));
  CIS_CALL(be->ops->from_host(be, s->AV, o->guess_HX, n * K));
  CIS_CALL(be->ops->gemm_tn(be, K, K, s->V, s->V, G));
  for (int j = 0; j < K; j++)
    for (int i = 0; i < K; i++)
      CIS_CHECK(fabs(G[i + j * K] - (i == j)) < 1e-8, CIS_ERR_INPUT,
                "restart vectors are not orthonormal (overlap %d,%d = %.3e)", i + 1, j + 1,
                G[i + j * K]);
  CIS_CALL(be->ops->gemm_tn(be, K, K, s->V, s->AV, G));
  for (int j = 0; j < K; j++)
    for (int i = 0; i < K; i++) {
      CIS_CHECK(isfinite(G[i + j * K]), CIS_ERR_NUMERIC, "restart products are not finite");
      s->Hs[i + j * ld] = 0.5 * (G[i + j * K] + G[j + i * K]);
    }
  s->m = K;
  if (o->guess_evals)
    for (int i = 0; i < K; i++) s->eprev[i] = o->guess_evals[i];
  return CIS_OK;
}

/* Hand the current Ritz vectors and their products (H X = R + X theta) to on_save. */
static cis_err dav_save(dav *s, const cis_eig_opts *o, int it) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  int64_t nk = s->n * s->K;
  double *X = NULL, *HX = NULL;
  CIS_TRY(cis_malloc(&X, (size_t)nk, sizeof *X, "checkpoint vectors"));
  CIS_TRY(cis_malloc(&HX, (size_t)nk, sizeof *HX, "checkpoint products"));
  CIS_TRY(s->be->ops->to_host(s->be, X, s->X, nk));
  CIS_TRY(s->be->ops->to_host(s->be, HX, s->R, nk));
  for (int j = 0; j < s->K; j++)
    for (int64_t i = 0; i < s->n; i++) HX[i + j * s->n] += s->theta[j] * X[i + j * s->n];
  CIS_TRY(o->on_save(o->on_iter_ctx, it, s->K, s->theta, s->rnorm, s->conv, X, HX));
cleanup:
  cis_free(&X);
  cis_free(&HX);
  return err;
}

/* Ritz pairs of Hs, Ritz vectors X = V Y and residuals R = AV Y - X theta. */
static cis_err dav_ritz(dav *s) {
  cis_backend *be = s->be;
  int m = s->m, ld = s->maxsub, K = s->K;
  int64_t n = s->n;
  double *A = s->work, *w = s->work + (int64_t)m * m;
  for (int j = 0; j < m; j++) memcpy(A + j * m, s->Hs + j * ld, (size_t)m * sizeof *A);
  lapack_int info = LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'V', 'U', m, A, m, w);
  CIS_CHECK(info == 0, CIS_ERR_NUMERIC,
            "LAPACKE_dsyevd failed (info %d) on the %d x %d projected matrix", (int)info, m, m);
  for (int i = 0; i < K; i++) {
    CIS_CHECK(isfinite(w[i]), CIS_ERR_NUMERIC,
              "Ritz value %d is not finite (the matrix holds NaN/Inf?)", i + 1);
    s->theta[i] = w[i];
    memcpy(s->Y + i * ld, A + i * m, (size_t)m * sizeof *A);
  }
  /* A now holds the K Ritz coefficient columns packed with ld m, as gemm_nn wants. */
  CIS_CALL(be->ops->gemm_nn(be, m, K, s->V, A, 0.0, s->X));
  CIS_CALL(be->ops->gemm_nn(be, m, K, s->AV, A, 0.0, s->R));
  for (int i = 0; i < K; i++) {
    double r2;
    CIS_CALL(be->ops->axpy(be, n, -s->theta[i], s->X + i * n, s->R + i * n));
    CIS_CALL(be->ops->dot(be, n, s->R + i * n, s->R + i * n, &r2));
    CIS_CHECK(isfinite(r2), CIS_ERR_NUMERIC, "residual of root %d is not finite", i + 1);
    s->rnorm[i] = sqrt(r2);
  }
  return CIS_OK;
}

static int dav_check(dav *s, const cis_eig_opts *o) {
  int nconv = 0;
  for (int i = 0; i < s->K; i++) {
    s->conv[i] = fabs(s->theta[i] - s->eprev[i]) < o->tol_energy && s->rnorm[i] < o->tol_residual;
    s->eprev[i] = s->theta[i];
    nconv += s->conv[i];
  }
  return nconv;
}

/* Modified Gram-Schmidt, twice, on the host columns of C (m x k, ld m); returns the number
 * kept (packed to the front). Columns already orthonormal stay exactly as they are. */
static int host_orthonormalise(double *C, int m, int k, int keep_first) {
  int kept = keep_first;
  for (int j = keep_first; j < k; j++) {
    double *c = C + (int64_t)j * m;
    double before = cblas_dnrm2(m, c, 1);
    for (int pass = 0; pass < 2; pass++)
      for (int i = 0; i < kept; i++)
        cblas_daxpy(m, -cblas_ddot(m, C + (int64_t)i * m, 1, c, 1), C + (int64_t)i * m, 1, c, 1);
    double after = cblas_dnrm2(m, c, 1);
    if (before == 0.0 || after < CIS_ORTHO_DROP_TOL * before) continue;
    cblas_dscal(m, 1.0 / after, c, 1);
    if (kept != j) memcpy(C + (int64_t)kept * m, c, (size_t)m * sizeof *c);
    kept++;
  }
  return kept;
}

/* V <- V C, AV <- AV C, Hs <- C^T Hs C with C = [Y, Yprev] orthonormalised; the first K new
 * basis vectors are the current Ritz vectors. */
static cis_err dav_collapse(dav *s, int room) {
  cis_backend *be = s->be;
  int m = s->m, ld = s->maxsub, K = s->K;
  int64_t n = s->n;
  int np = s->mprev > 0 ? CIS_MAX(0, CIS_MIN(K, room)) : 0;
  /* K + np <= maxsub, so the three arrays fit in 3 maxsub^2 of work. */
  double *C = s->work, *T = C + (int64_t)m * (K + np), *Hn = T + (int64_t)m * (K + np);
  memset(C, 0, (size_t)m * (size_t)(K + np) * sizeof *C);
  for (int j = 0; j < K; j++) memcpy(C + j * m, s->Y + j * ld, (size_t)m * sizeof *C);
  for (int j = 0; j < np; j++)
    memcpy(C + (K + j) * m, s->Yprev + j * ld, (size_t)s->mprev * sizeof *C);
  int mn = host_orthonormalise(C, m, K + np, K);
  CIS_CALL(be->ops->gemm_nn(be, m, mn, s->V, C, 0.0, s->S));
  CIS_CALL(be->ops->copy(be, s->V, s->S, n * mn));
  CIS_CALL(be->ops->gemm_nn(be, m, mn, s->AV, C, 0.0, s->S));
  CIS_CALL(be->ops->copy(be, s->AV, s->S, n * mn));
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, mn, m, 1.0, s->Hs, ld, C, m, 0.0,
              T, m);
  cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, mn, mn, m, 1.0, C, m, T, m, 0.0, Hn, mn);
  for (int j = 0; j < mn; j++)
    for (int i = 0; i < mn; i++) s->Hs[i + j * ld] = 0.5 * (Hn[i + j * mn] + Hn[j + i * mn]);
  s->m = mn;
  memset(s->Yprev, 0, (size_t)ld * (size_t)K * sizeof *s->Yprev);
  for (int j = 0; j < K; j++) s->Yprev[j + j * ld] = 1.0;
  s->mprev = mn;
  return CIS_OK;
}

/* t = (D - theta + shift)^-1 r, with H_PP in place of D on the Reference region (whose rows
 * held elsewhere, on a part, are summed in first). */
static cis_err dav_corrections(dav *s, const cis_eig_opts *o, int nnew) {
  cis_backend *be = s->be;
  int64_t n = s->n, held = cis_eig_lead_rows(be, s->nref);
  for (int a = 0; a < nnew; a++) {
    int i = s->pick[a];
    double shift = (o->precond_fixed ? o->precond_at : s->theta[i]) - o->level_shift;
    double *r = s->R + i * n, *t = s->V + (s->m + a) * n;
    CIS_CALL(be->ops->precond(be, s->d, shift, DAV_PRECOND_FLOOR, r, t));
    if (s->nref == 0) continue;
    if (held < s->nref) memset(s->rP, 0, (size_t)s->nref * sizeof *s->rP);
    if (held > 0) CIS_CALL(be->ops->to_host(be, s->rP + s->row0, r, held));
    CIS_CALL(cis_backend_sum(be, s->rP, s->nref));
    cis_refblock_solve(s->rb, shift, DAV_PRECOND_FLOOR, s->rP, s->tP, s->wP);
    if (held > 0) CIS_CALL(be->ops->from_host(be, t, s->tP + s->row0, held));
  }
  return CIS_OK;
}

/* When every correction lay in the span (an exact preconditioner returns the Ritz vector),
 * the residuals, then random vectors, keep the iteration moving. */
static cis_err dav_fallback(dav *s, int nnew, int *nkept) {
  cis_backend *be = s->be;
  int64_t n = s->n;
  for (int a = 0; a < nnew; a++)
    CIS_CALL(be->ops->copy(be, s->V + (s->m + a) * n, s->R + s->pick[a] * n, n));
  CIS_CALL(dav_expand(s, nnew, nkept));
  if (*nkept > 0) return CIS_OK;
  for (int a = 0; a < nnew; a++) CIS_CALL(dav_random(s, s->m + a));
  CIS_CALL(dav_expand(s, nnew, nkept));
  return CIS_OK;
}

static int dav_pick(dav *s, const cis_eig_opts *o) {
  int limit = o->block > 0 ? o->block : s->K, nnew = 0;
  for (int i = 0; i < s->K && nnew < limit; i++)
    if (!s->conv[i]) s->pick[nnew++] = i;
  return nnew;
}

/* One expansion step; returns in *exact whether the basis spans the whole space. */
static cis_err dav_step(dav *s, const cis_eig_opts *o, int *exact) {
  int nnew = dav_pick(s, o), nk;
  *exact = 0;
  if (s->m + nnew > s->maxsub) {
    CIS_CALL(dav_collapse(s, s->maxsub - s->K - nnew));
  } else {
    memcpy(s->Yprev, s->Y, (size_t)s->maxsub * (size_t)s->K * sizeof *s->Y);
    s->mprev = s->m;
  }
  nnew = CIS_MIN(nnew, s->maxsub - s->m);
  CIS_CALL(dav_corrections(s, o, nnew));
  CIS_CALL(dav_expand(s, nnew, &nk));
  if (nk == 0 && nnew > 0 && s->m < s->N) CIS_CALL(dav_fallback(s, nnew, &nk));
  if (nk > 0) return CIS_OK;
  CIS_CHECK(s->m + s->nd >= s->N, CIS_ERR_NUMERIC,
            "Davidson stalled: no new direction survives orthogonalisation against a basis of "
            "%d vectors (n = %lld)", s->m, (long long)s->N);
  *exact = 1;
  return CIS_OK;
}

static cis_err dav_setup(dav *s, cis_backend *be, cis_operator *op, const cis_eig_opts *o) {
  memset(s, 0, sizeof *s);
  CIS_CALL(cis_eig_check_operator(be, op));
  const double *diag = op->diag, *hpp = op->ref_block;
  int64_t nref = op->nref;
  s->be = be;
  s->op = op;
  s->n = be->n;
  s->N = be->n_global;
  s->row0 = be->row0;
  s->nref = nref;
  s->K = o->nroots;
  s->diag = diag;
  s->rng = 0x9E3779B97F4A7C15ull;
  s->deflate = o->deflate;
  s->nd = o->deflate ? o->ndeflate : 0;
  CIS_CHECK(o->nroots >= 1, CIS_ERR_USAGE, "asked for %d roots, expected at least 1", o->nroots);
  CIS_CHECK(s->N - s->nd >= o->nroots, CIS_ERR_USAGE,
            "asked for %d roots but the space has only %lld determinants (%d deflated)",
            o->nroots, (long long)s->N, s->nd);
  CIS_CHECK(o->max_iter >= 1 && o->tol_energy >= 0.0 && o->tol_residual >= 0.0, CIS_ERR_USAGE,
            "solver options: max_iter %d, tol_energy %g, tol_residual %g (expected >= 1, >= 0, "
            ">= 0)", o->max_iter, o->tol_energy, o->tol_residual);
  for (int64_t i = 0; i < s->N; i++)
    CIS_CHECK(isfinite(diag[i]), CIS_ERR_NUMERIC, "diagonal element %lld is not finite",
              (long long)i);
  /* Room for the K Ritz vectors plus K corrections at least. */
  s->maxsub = (int)CIS_MIN((int64_t)CIS_MAX(o->max_subspace, 2 * s->K), s->N - s->nd);
  if (o->refblock && o->refblock->nref == nref) {
    s->rb = o->refblock;
  } else {
    CIS_CALL(cis_refblock_init(nref, hpp, &s->rb_own));
    s->rb = &s->rb_own;
  }
  CIS_CALL(dav_alloc(s));
  return CIS_OK;
}

static cis_err dav_result(dav *s, const cis_eig_opts *o, cis_eig_result *res) {
  CIS_CALL(cis_eig_result_fill(res, s->K, s->n, s->theta, s->rnorm, s->conv));
  if (o->want_vectors && !*o->want_vectors) {
    cis_free(&res->evecs); /* never touched: its pages were never made */
    return CIS_OK;
  }
  CIS_CALL(s->be->ops->to_host(s->be, res->evecs, s->X, s->n * s->K));
  return CIS_OK;
}

static cis_err dav_iterate(dav *s, const cis_eig_opts *o, cis_eig_result *res, int *stopped) {
  *stopped = 0;
  if (o->guess_X && o->guess_HX)
    CIS_CALL(dav_guess_restart(s, o));
  else if (s->nd > 0 && !o->guess_X)
    CIS_CALL(dav_guess_random(s));
  else
    CIS_CALL(dav_guess(s, o));
  for (int it = o->iter_start + 1;; it++) {
    CIS_CALL(dav_ritz(s));
    res->iterations = it;
    int nconv = dav_check(s, o), exact;
    int act = o->on_iter ? o->on_iter(o->on_iter_ctx, it, s->K, s->theta, s->rnorm, s->conv, s->m)
                         : CIS_ITER_CONTINUE;
    int done = nconv == s->K || it >= o->max_iter;
    if (o->on_save && ((act & CIS_ITER_SAVE) || (done && o->save_final)))
      CIS_CALL(dav_save(s, o, it));
    if (act & CIS_ITER_STOP) {
      *stopped = 1;
      return CIS_OK;
    }
    if (done) return CIS_OK;
    CIS_CALL(dav_step(s, o, &exact));
    if (!exact) continue;
    /* Nothing can be added because the basis is the whole space: the Ritz pairs are exact. */
    for (int i = 0; i < s->K; i++) s->conv[i] = 1;
    return CIS_OK;
  }
}

cis_err cis_davidson_solve(cis_backend *be, cis_operator *op, const cis_eig_opts *opts,
                           cis_eig_result *res) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  double t0 = cis_wtime(), tm0 = op->t_matvec;
  int64_t nm0 = op->n_matvec;
  int stopped = 0;
  dav s;
  memset(res, 0, sizeof *res);
  CIS_TRY(dav_setup(&s, be, op, opts));
  CIS_TRY(dav_iterate(&s, opts, res, &stopped));
  CIS_TRY(dav_result(&s, opts, res));
  res->matvecs = op->n_matvec - nm0;
  res->t_matvec = op->t_matvec - tm0;
  res->t_ortho = s.t_ortho;
  res->t_total = cis_wtime() - t0;
  if (stopped)
    CIS_FAIL(CIS_ERR_INTERRUPTED, "Davidson stopped at iteration %d by request (Ritz vectors kept)",
             res->iterations);
cleanup:
  if (s.be) dav_free(&s);
  if (err != CIS_OK && err != CIS_ERR_INTERRUPTED) cis_eig_result_free(res);
  return err;
}
