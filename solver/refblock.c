/* cisolve: the Reference block's eigendecomposition and its shifted inverse. */
#include "solver/refblock.h"

#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <string.h>

#include "core/util.h"

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
