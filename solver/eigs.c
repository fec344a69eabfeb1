/* cisolve: solver defaults and results. Defaults are documented in docs/solvers.md. */
#include "solver/eigs.h"

#include <string.h>

#include "base/util.h"

void cis_eig_opts_default(cis_eig_opts *o, int nroots) {
  memset(o, 0, sizeof *o);
  o->nroots = nroots;
  o->tol_energy = 1e-10;
  o->tol_residual = 1e-5;
  o->max_iter = 100;
  o->max_subspace = cis_eig_max_subspace(0, nroots);
  o->level_shift = 0.0;
  o->block = 0;
}

int cis_eig_max_subspace(int asked, int nroots) {
  return asked > 0 ? asked : CIS_MAX(8 * nroots, 24);
}

int64_t cis_eig_vectors(int nroots, int max_subspace, cis_eig_where where) {
  int64_t K = nroots, m = CIS_MAX((int64_t)cis_eig_max_subspace(max_subspace, nroots), 2 * K);
  if (where == CIS_EIG_HOST) return 7 * K + 1;
  int64_t check_m = cis_eig_max_subspace(0, 2);
  int64_t davidson = 2 * m + 4 * K + 1;
  int64_t lanczos = 2 * CIS_MAX(m, 2 * K + 8) + 2 * K;
  int64_t check = 2 * check_m + 4 * 2 + 1 + K;
  return CIS_MAX(davidson, CIS_MAX(lanczos, check));
}

void cis_eig_result_free(cis_eig_result *r) {
  if (!r) return;
  cis_free(&r->evals);
  cis_free(&r->evecs);
  cis_free(&r->rnorm);
  cis_free(&r->converged);
}

cis_err cis_eig_result_fill(cis_eig_result *res, int K, int64_t n, const double *evals,
                            const double *rnorm, const int *conv) {
  res->nroots = K;
  CIS_CALL(cis_malloc(&res->evals, (size_t)K, sizeof(double), "eigenvalues"));
  CIS_CALL(cis_malloc(&res->rnorm, (size_t)K, sizeof(double), "residual norms"));
  CIS_CALL(cis_malloc(&res->converged, (size_t)K, sizeof(int), "convergence flags"));
  CIS_CALL(cis_malloc(&res->evecs, (size_t)n * (size_t)K, sizeof(double), "eigenvectors"));
  res->all_converged = 1;
  for (int i = 0; i < K; i++) {
    res->evals[i] = evals[i];
    res->rnorm[i] = rnorm[i];
    res->converged[i] = conv ? conv[i] : 1;
    res->all_converged &= res->converged[i] != 0;
  }
  return CIS_OK;
}

int64_t cis_eig_lead_rows(const cis_backend *be, int64_t rows) {
  int64_t end = CIS_MIN(rows, be->row0 + be->n);
  return end > be->row0 ? end - be->row0 : 0;
}

cis_err cis_eig_check_operator(const cis_backend *be, const cis_operator *op) {
  CIS_CHECK(be && op && op->be == be && op->n == be->n, CIS_ERR_INTERNAL,
            "the solver's operator (%lld rows) does not multiply vectors of its backend (%lld)",
            op ? (long long)op->n : -1LL, be ? (long long)be->n : -1LL);
  CIS_CHECK(op->nref >= 0 && op->nref <= be->n_global && (op->nref == 0 || op->ref_block) &&
                (be->n_global == 0 || op->diag),
            CIS_ERR_USAGE, "Reference region of %lld determinants for a space of %lld (H_PP %s)",
            (long long)op->nref, (long long)be->n_global, op->ref_block ? "given" : "missing");
  return CIS_OK;
}
