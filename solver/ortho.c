/* cisolve: block classical Gram-Schmidt, twice ("twice is enough": Giraud, Langou, Rozloznik
 * 2005), with detection of vectors lost in the span. */
#include "solver/ortho.h"

#include <math.h>

/* B -= A (A^T B), twice; A is n x m, B is n x k, both on the backend. */
static cis_err project_out(cis_backend *be, const double *A, int m, double *B, int k,
                           double *G) {
  if (m == 0 || k == 0) return CIS_OK;
  for (int pass = 0; pass < 2; pass++) {
    CIS_CALL(be->ops->gemm_tn(be, m, k, A, B, G));
    for (int64_t i = 0; i < (int64_t)m * k; i++) G[i] = -G[i];
    CIS_CALL(be->ops->gemm_nn(be, m, k, A, G, 1.0, B));
  }
  return CIS_OK;
}

static cis_err norm2(cis_backend *be, const double *x, double *out) {
  double s;
  CIS_CALL(be->ops->dot(be, be->n, x, x, &s));
  CIS_CHECK(isfinite(s), CIS_ERR_NUMERIC,
            "non-finite vector in the Davidson basis (the matrix or the preconditioner "
            "produced NaN/Inf)");
  *out = sqrt(s);
  return CIS_OK;
}

cis_err cis_ortho_append(cis_backend *be, double *V, int m, int nw, double drop_tol,
                         double *work, int *nkept) {
  const int64_t n = be->n;
  double *W = V + (int64_t)m * n;
  double *before = work, *G = work + nw;
  *nkept = 0;
  for (int j = 0; j < nw; j++) CIS_CALL(norm2(be, W + j * n, &before[j]));
  CIS_CALL(project_out(be, V, m, W, nw, G));
  int kept = 0;
  for (int j = 0; j < nw; j++) {
    double *w = W + j * n, nrm = 0.0;
    CIS_CALL(project_out(be, W, kept, w, 1, G));
    CIS_CALL(norm2(be, w, &nrm));
    if (before[j] == 0.0 || nrm < drop_tol * before[j]) continue;
    CIS_CALL(be->ops->scal(be, n, 1.0 / nrm, w));
    if (kept != j) CIS_CALL(be->ops->copy(be, W + kept * n, w, n));
    kept++;
  }
  *nkept = kept;
  return CIS_OK;
}
