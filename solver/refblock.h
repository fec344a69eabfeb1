/* cisolve: the Reference block H_PP of the Davidson preconditioner and initial guess.
 *
 * H_PP = U diag(lam) U^T is diagonalised once on the host (LAPACKE dsyevd). Its lowest
 * eigenvectors are the initial guess; (H_PP - theta + shift)^-1 r_P is applied through the
 * same decomposition. Ownership: cis_refblock_init allocates lam and U; cis_refblock_free.
 */
#ifndef CIS_REFBLOCK_H
#define CIS_REFBLOCK_H

#include <stdint.h>

#include "core/error.h"

typedef struct {
  int64_t nref;
  double *lam; /* nref ascending eigenvalues */
  double *U;   /* nref x nref eigenvectors, column-major */
} cis_refblock;

/* hpp: nref x nref column-major (only the upper triangle is read). nref may be 0. */
cis_err cis_refblock_init(int64_t nref, const double *hpp, cis_refblock *rb);
void cis_refblock_free(cis_refblock *rb);

/* t = U diag(1 / (lam - shift)) U^T r, each |lam - shift| clamped from below by floor.
 * work: nref doubles. r and t may not alias. */
void cis_refblock_solve(const cis_refblock *rb, double shift, double floor, const double *r,
                        double *t, double *work);

#endif
