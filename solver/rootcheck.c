/* cisolve: after convergence, make sure no lower state was missed (docs/solvers.md).
 *
 * Two searches share one ending. A vector orthogonal to the K roots X whose Rayleigh quotient
 * lies below the K-th root E_K by more than the threshold proves that H has a state below E_K
 * that the roots do not hold; the roots are then replaced by the K lowest Ritz pairs of
 * span(X, found) and converged again.
 *
 * cis_check_blocks (the default) searches where a missed state can hide: H is block diagonal by
 * symmetry, and Davidson never leaves the blocks its guess touched. Each block's next state of
 * the Reference block (the first it does not hold among the roots) starts a short deflated
 * search, unless the block's spectrum is bounded from below above E_K (explicit matrices:
 * Gershgorin), or, without a bound, the state lies beyond a window above E_K that the roots'
 * own fall from their H_PP values sets. cis_check_roots (--check-roots) searches from random vectors, whatever the
 * symmetry: slower, for what the blocks do not see.
 */
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "base/util.h"
#include "solver/eigs.h"
#include "solver/ortho.h"

/* The K lowest Ritz pairs of span(X, Z) for the K roots X of res and the nz host vectors Z
 * (orthogonal to X), as host vectors X' and H X' (n x K each, allocated here). */
static cis_err ritz_of_union(cis_backend *be, cis_operator *op, const cis_eig_result *res,
                             const double *Z, int nz, double **Xo, double **HXo) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  int K = res->nroots, m = K + nz, kept = 0;
  int64_t n = be->n;
  double *W = NULL, *HW = NULL, *Xb = NULL, *G = NULL, *w = NULL;
  CIS_TRY(be->ops->alloc(be, n * m, &W));
  CIS_TRY(be->ops->alloc(be, n * m, &HW));
  CIS_TRY(be->ops->alloc(be, n * K, &Xb));
  CIS_TRY(cis_malloc(&G, (size_t)(m + 1) * (size_t)m + (size_t)m, sizeof *G, "union work"));
  w = G + (int64_t)m * m;
  CIS_TRY(be->ops->from_host(be, W, res->evecs, n * K));
  CIS_TRY(be->ops->from_host(be, W + n * K, Z, n * nz));
  CIS_TRY(cis_ortho_append(be, W, K, nz, CIS_ORTHO_DROP_TOL, G, &kept));
  m = K + kept;
  CIS_TRY(cis_operator_apply(op, m, W, HW));
  CIS_TRY(be->ops->gemm_tn(be, m, m, W, HW, G));
  for (int j = 0; j < m; j++)
    for (int i = 0; i < j; i++) G[i + j * m] = G[j + i * m] = 0.5 * (G[i + j * m] + G[j + i * m]);
  lapack_int info = LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'V', 'U', m, G, m, w);
  if (info != 0)
    CIS_FAIL(CIS_ERR_NUMERIC, "LAPACKE_dsyevd failed (info %d) on %d x %d", (int)info, m, m);
  CIS_TRY(cis_malloc(Xo, (size_t)(n * K), sizeof(double), "included roots"));
  CIS_TRY(cis_malloc(HXo, (size_t)(n * K), sizeof(double), "included products"));
  CIS_TRY(be->ops->gemm_nn(be, m, K, W, G, 0.0, Xb));
  CIS_TRY(be->ops->to_host(be, *Xo, Xb, n * K));
  CIS_TRY(be->ops->gemm_nn(be, m, K, HW, G, 0.0, Xb));
  CIS_TRY(be->ops->to_host(be, *HXo, Xb, n * K));
cleanup:
  be->ops->free(be, &W);
  be->ops->free(be, &HW);
  be->ops->free(be, &Xb);
  cis_free(&G);
  return err;
}

/* Re-converge from X0 (and H X0) with the caller's options; res is replaced. */
static cis_err reconverge(cis_backend *be, cis_operator *op, const cis_eig_opts *opts,
                          const double *X0, const double *HX0, cis_eig_result *res) {
  cis_eig_result r2;
  cis_eig_opts o = *opts;
  o.guess_X = X0;
  o.guess_HX = HX0;
  o.guess_evals = NULL;
  o.guess_rows = 0;
  o.want_vectors = NULL;
  o.deflate = NULL;
  o.ndeflate = 0;
  o.iter_start = res->iterations;
  CIS_CALL(cis_davidson_solve(be, op, &o, &r2));
  r2.matvecs += res->matvecs;
  r2.t_matvec += res->t_matvec;
  r2.t_ortho += res->t_ortho;
  cis_eig_result_free(res);
  *res = r2;
  return CIS_OK;
}

/* The search stops as soon as its lowest Ritz value proves a missed state, or has converged
 * above E_K (the second vector only speeds the search up). */
typedef struct {
  double below; /* E_K - threshold */
  int proved, settled;
} check_ctx;

static int check_on_iter(void *ctx, int iter, int k, const double *evals, const double *rnorm,
                         const int *conv, int nbasis) {
  check_ctx *c = ctx;
  (void)iter, (void)k, (void)rnorm, (void)nbasis;
  if (evals[0] < c->below) c->proved = 1;
  else if (conv[0]) c->settled = 1;
  return c->proved || c->settled ? CIS_ITER_STOP : CIS_ITER_CONTINUE;
}

cis_err cis_check_roots(cis_backend *be, cis_operator *op, const cis_eig_opts *opts,
                        double threshold, cis_eig_result *res, cis_rootcheck *out) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  int K = res->nroots;
  int64_t n = be->n_global, nm0 = op->n_matvec;
  double *X0 = NULL, *HX0 = NULL;
  cis_eig_result cr;
  check_ctx cc = {res->evals[K - 1] - threshold, 0, 0};
  memset(&cr, 0, sizeof cr);
  memset(out, 0, sizeof *out);
  out->threshold = threshold;
  out->lowest = HUGE_VAL;
  int nc = (int)CIS_MIN((int64_t)2, n - K);
  if (nc <= 0) { /* the K roots span the whole space */
    out->conclusive = 1;
    return CIS_OK;
  }
  /* A loose search, which has to converge only when it proves nothing. Its preconditioner is
   * built at E_K, the energies in question: at the Ritz values, which start high in the
   * spectrum from random vectors, it converged to states there (-56.0 Eh on OH/6-31G, whose
   * lowest states are near -75.5 Eh), and on H2O/STO-3G it needed 56-65 iterations to show the
   * 4th root missed with --ref-size 50 (4 at E_K). */
  cis_eig_opts co;
  cis_eig_opts_default(&co, nc);
  co.tol_residual = 1e-4;
  co.tol_energy = 1e-8;
  co.max_iter = CIS_CHECK_ROOTS_MAX_ITER;
  co.level_shift = opts->level_shift;
  co.deflate = res->evecs;
  co.ndeflate = K;
  co.on_iter = check_on_iter;
  co.precond_fixed = 1;
  co.precond_at = res->evals[K - 1];
  co.on_iter_ctx = &cc;
  err = cis_davidson_solve(be, op, &co, &cr);
  if (err == CIS_ERR_INTERRUPTED && (cc.proved || cc.settled)) {
    cis_error_clear();
    err = CIS_OK;
  }
  CIS_TRY(err);
  out->lowest = cr.evals[0];
  out->iterations = cr.iterations;
  out->conclusive = cc.proved || cc.settled || cr.converged[0];
  for (int j = 0; j < nc; j++) out->missed += cr.evals[j] < cc.below;
  out->matvecs = op->n_matvec - nm0;
  if (!out->missed) goto cleanup;
  CIS_TRY(ritz_of_union(be, op, res, cr.evecs, out->missed, &X0, &HX0));
  out->matvecs = op->n_matvec - nm0;
  CIS_TRY(reconverge(be, op, opts, X0, HX0, res));
  res->matvecs += out->matvecs;
cleanup:
  cis_eig_result_free(&cr);
  cis_free(&X0);
  cis_free(&HX0);
  return err;
}

/* ---- the search of every symmetry block ------------------------------------------------------ */

/* A block's next H_PP state is searched when it lies within this multiple of the largest fall
 * of a root below its H_PP value, above E_K (and at least CHECK_WINDOW_MIN Eh): states of one
 * Hamiltonian gain comparable energy from outside the Reference region. */
#define CHECK_WINDOW_FACTOR 2.5
#define CHECK_WINDOW_MIN 1e-3
/* Iterations (one product each) of one block's search, at most. */
#define CHECK_SEARCH_ITER 40
/* Residual at which a search that proved nothing counts as converged. */
#define CHECK_SEARCH_TOL 1e-4
/* States of each block that start a search of their own (within the window), at most: the
 * block's next state of H_PP alone can miss the block's lowest. Where the Reference region
 * holds few of the block's determinants, its lowest H_PP state may lie closer to an excited
 * state of H, and a search from it converges there (C2 CAS(8,8) with --ref-size 20: the Ag
 * search ended on the second Ag singlet, above E_K, and the lowest, 2.8 mEh below E_K, went
 * unseen; the state after it, mostly the closed-shell determinant, finds it). */
#define CHECK_BLOCK_STATES 2
/* Rounds beyond K (each may find states and re-converge), at most. */
#define CHECK_ROUNDS_EXTRA 2

/* How many roots each block holds: the weight of each root's Reference part in the block's
 * states, summed over the roots; a block holds a root when it has at least 3/4 of it. count:
 * nblocks. The Reference rows that a part of the rows holds are summed over the ranks. */
static cis_err roots_per_block(const cis_backend *be, const cis_refstates *st,
                               const cis_eig_result *res, int *count) {
  int K = res->nroots, m = st->m;
  int64_t nref = st->nref, n = be->n, held = cis_eig_lead_rows(be, nref);
  double *C = NULL, *w = NULL;
  CIS_CALL(cis_calloc(&C, (size_t)(m + 1) * (size_t)K, sizeof *C, "root weights"));
  double *norm = C + (int64_t)m * K;
  if (cis_calloc(&w, (size_t)st->nblocks, sizeof *w, "block weights") != CIS_OK) {
    cis_free(&C);
    return cis_error_code();
  }
  if (held > 0) {
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, m, K, (int)held, 1.0, st->U + be->row0,
                (int)nref, res->evecs, (int)n, 0.0, C, m);
    for (int k = 0; k < K; k++)
      norm[k] = cblas_ddot((int)held, res->evecs + k * n, 1, res->evecs + k * n, 1);
  }
  if (cis_backend_sum(be, C, (int64_t)(m + 1) * K) != CIS_OK) {
    cis_free(&C);
    cis_free(&w);
    return cis_error_code();
  }
  for (int k = 0; k < K; k++) {
    if (norm[k] <= 0.0) continue;
    for (int c = 0; c < m; c++) w[st->block[c]] += C[c + k * m] * C[c + k * m] / norm[k];
  }
  /* A root split between blocks (a degenerate pair across symmetries, mixed) is held by
   * neither: each block's search then starts from the state the root only half holds. */
  for (int b = 0; b < st->nblocks; b++) count[b] = (int)floor(w[b] + 0.25);
  cis_free(&C);
  cis_free(&w);
  return CIS_OK;
}

typedef struct {
  double ek, threshold;
  int converge; /* the block has a lower bound below E_K: only convergence settles it */
  int proved, settled, stopped;
  const cis_eig_opts *caller;
} search_ctx;

/* A search stops when its lowest Ritz value proves a missed state, or (in a block without a
 * lower bound) when each of its k Ritz values stands above E_K by more than its residual norm:
 * an eigenvalue lies within the residual of a Ritz value, and the states it started from are
 * the block's lowest the Reference region sees. */
static int search_on_iter(void *ctx, int iter, int k, const double *evals, const double *rnorm,
                          const int *conv, int nbasis) {
  search_ctx *c = ctx;
  (void)iter, (void)conv, (void)nbasis;
  int above = !c->converge;
  for (int j = 0; j < k && above; j++) above = evals[j] - rnorm[j] > c->ek + c->threshold;
  if (c->caller->poll && c->caller->poll(c->caller->on_iter_ctx)) c->stopped = 1;
  else if (evals[0] < c->ek - c->threshold) c->proved = 1;
  else if (above) c->settled = 1;
  return c->proved || c->settled || c->stopped ? CIS_ITER_STOP : CIS_ITER_CONTINUE;
}

/* One deflated search of a block from its states cs[0..ns) of the Reference block, together
 * (one Davidson of ns vectors: every product multiplies them in one pass, and the Ritz values
 * of their joint span lie at or below each one's own); each proved state's vector is appended
 * to *Z (n x *nz, grown here). */
static cis_err search_block(cis_backend *be, cis_operator *op, const cis_refstates *st,
                            const int *cs, int ns, const cis_eig_opts *opts, double threshold,
                            const cis_eig_result *res, double **Z, int *nz,
                            cis_blockcheck *out) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  int64_t n = be->n, nm0 = op->n_matvec;
  int b = st->block[cs[0]];
  search_ctx sc = {res->evals[res->nroots - 1], threshold, st->bbound[b] > -HUGE_VAL,
                   0, 0, 0, opts};
  cis_eig_result cr;
  cis_eig_opts co;
  double *g = NULL;
  memset(&cr, 0, sizeof cr);
  /* the starts live on the Reference region: only its rows are handed over */
  CIS_TRY(cis_malloc(&g, (size_t)st->nref * (size_t)ns, sizeof *g, "search guess"));
  for (int j = 0; j < ns; j++)
    memcpy(g + (int64_t)j * st->nref, st->U + (int64_t)cs[j] * st->nref,
           (size_t)st->nref * sizeof *g);
  cis_eig_opts_default(&co, ns);
  co.tol_residual = CHECK_SEARCH_TOL;
  co.tol_energy = threshold;
  co.max_iter = CHECK_SEARCH_ITER;
  co.level_shift = opts->level_shift;
  co.refblock = opts->refblock;
  co.deflate = res->evecs;
  co.ndeflate = res->nroots;
  co.guess_X = g;
  co.guess_rows = st->nref;
  co.want_vectors = &sc.proved; /* a proved state's vector is all this search keeps */
  co.on_iter = search_on_iter;
  co.on_iter_ctx = &sc;
  err = cis_davidson_solve(be, op, &co, &cr);
  if (err == CIS_ERR_INTERRUPTED && (sc.proved || sc.settled || sc.stopped)) {
    cis_error_clear();
    err = CIS_OK;
  }
  CIS_TRY(err);
  if (sc.stopped) CIS_FAIL(CIS_ERR_INTERRUPTED, "the search for missed states was stopped");
  out->searched += ns;
  out->lowest = CIS_MIN(out->lowest, cr.evals[0]);
  for (int j = 0; j < ns; j++) {
    cis_search_outcome how = CIS_SEARCH_ABOVE;
    if (cr.evals[j] < sc.ek - threshold && cr.evecs) {
      CIS_TRY(cis_realloc(Z, (size_t)(*nz + 1) * (size_t)n, sizeof **Z, "states found"));
      memcpy(*Z + (int64_t)(*nz)++ * n, cr.evecs + (int64_t)j * n, (size_t)n * sizeof **Z);
      how = CIS_SEARCH_PROVED;
    } else if (!sc.proved && !sc.settled && !cr.converged[j]) {
      out->unsettled++;
      how = CIS_SEARCH_UNSETTLED;
    } else if (fabs(cr.evals[j] - sc.ek) <= threshold) {
      out->degenerate = 1; /* a partner of the K-th root outside the roots */
      how = CIS_SEARCH_DEGENERATE;
    }
    if (out->nlog < CIS_SEARCH_LOG)
      out->log[out->nlog++] = (cis_search_log){b, st->lam[cs[j]], cr.evals[j], cr.rnorm[j],
                                               (int)(op->n_matvec - nm0), how};
  }
cleanup:
  cis_eig_result_free(&cr);
  cis_free(&g);
  return err;
}

/* One round: search every block whose next states lie in the window (CHECK_BLOCK_STATES of
 * them, together); *nz states found. */
static cis_err check_round(cis_backend *be, cis_operator *op, const cis_refstates *st,
                           const cis_eig_opts *opts, double threshold,
                           const cis_eig_result *res, double **Z, int *nz,
                           cis_blockcheck *out) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  int K = res->nroots, *held = NULL, *seen = NULL, *starts = NULL, *nstart = NULL;
  double ek = res->evals[K - 1], fall = 0.0;
  /* a search's vectors stay orthogonal to the K roots: at most n - K of them */
  int most = (int)CIS_MIN((int64_t)CHECK_BLOCK_STATES, be->n_global - K);
  CIS_TRY(cis_calloc(&held, (size_t)st->nblocks, sizeof *held, "roots per block"));
  CIS_TRY(cis_calloc(&seen, (size_t)st->nblocks, sizeof *seen, "states per block"));
  CIS_TRY(cis_calloc(&nstart, (size_t)st->nblocks, sizeof *nstart, "searches per block"));
  CIS_TRY(cis_malloc(&starts, (size_t)st->nblocks * CHECK_BLOCK_STATES, sizeof *starts,
                     "search starts"));
  CIS_TRY(roots_per_block(be, st, res, held));
  for (int k = 0; k < K && k < st->m; k++) fall = CIS_MAX(fall, st->lam[k] - res->evals[k]);
  out->window = CIS_MAX(CHECK_WINDOW_FACTOR * fall, CHECK_WINDOW_MIN);
  out->beyond = out->exhausted = out->bounded = 0;
  *nz = 0;
  for (int c = 0; c < st->m; c++) {
    int b = st->block[c];
    /* the block's next states, those the roots do not hold: CHECK_BLOCK_STATES of them */
    int at = seen[b]++;
    if (at < held[b] || at >= held[b] + CHECK_BLOCK_STATES) continue;
    if (st->bbound[b] > ek + threshold) { /* no state of the block lies below E_K */
      out->bounded += at == held[b];
      continue;
    }
    if (st->lam[c] > ek + out->window && st->bbound[b] == -HUGE_VAL) {
      out->beyond += at == held[b];
      continue;
    }
    if (nstart[b] < most) starts[b * CHECK_BLOCK_STATES + nstart[b]++] = c;
  }
  for (int b = 0; b < st->nblocks; b++) {
    out->exhausted += seen[b] <= held[b];
    if (nstart[b] > 0)
      CIS_TRY(search_block(be, op, st, starts + b * CHECK_BLOCK_STATES, nstart[b], opts,
                           threshold, res, Z, nz, out));
  }
cleanup:
  cis_free(&held);
  cis_free(&seen);
  cis_free(&starts);
  cis_free(&nstart);
  return err;
}

cis_err cis_check_blocks(cis_backend *be, cis_operator *op, const cis_refstates *st,
                         const cis_eig_opts *opts, double threshold, cis_eig_result *res,
                         cis_blockcheck *out) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  int K = res->nroots;
  int64_t n = be->n_global, nm0 = op->n_matvec, resolve = 0;
  double *Z = NULL, *X0 = NULL, *HX0 = NULL;
  cis_refblock rb;
  cis_eig_opts o = *opts; /* every search and re-convergence shares one decomposition of H_PP */
  memset(&rb, 0, sizeof rb);
  memset(out, 0, sizeof *out);
  out->nblocks = st->nblocks;
  out->lowest = HUGE_VAL;
  if (st->m == 0 || n - K <= 0) return CIS_OK;
  if (!o.refblock) {
    CIS_TRY(cis_refblock_init(op->nref, op->ref_block, &rb));
    o.refblock = &rb;
  }
  for (int round = 0; round < K + CHECK_ROUNDS_EXTRA; round++) {
    int nz = 0;
    out->rounds++;
    CIS_TRY(check_round(be, op, st, &o, threshold, res, &Z, &nz, out));
    if (nz == 0) break;
    out->missed += nz;
    CIS_TRY(ritz_of_union(be, op, res, Z, nz, &X0, &HX0));
    int64_t before = op->n_matvec;
    CIS_TRY(reconverge(be, op, &o, X0, HX0, res));
    resolve += op->n_matvec - before; /* the solver's products, in res */
    cis_free(&X0);
    cis_free(&HX0);
    if (!res->all_converged) break;
  }
cleanup:
  out->matvecs = op->n_matvec - nm0 - resolve;
  cis_free(&Z);
  cis_free(&X0);
  cis_free(&HX0);
  cis_refblock_free(&rb);
  return err;
}
