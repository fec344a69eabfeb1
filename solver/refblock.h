/* cisolve: the Reference block H_PP of the Davidson preconditioner and initial guess.
 *
 * H_PP = U diag(lam) U^T is diagonalised once on the host (LAPACKE dsyevd). Its lowest
 * eigenvectors are the initial guess; (H_PP - theta + shift)^-1 r_P is applied through the
 * same decomposition. Ownership: cis_refblock_init allocates lam and U; cis_refblock_free.
 */
#ifndef CIS_REFBLOCK_H
#define CIS_REFBLOCK_H

#include <stdint.h>

#include "base/error.h"

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

/* The symmetry of H on the Reference block, as the caller knows it: H_PP couples determinants
 * i and j only when label[i] == label[j] and, where partner[i] >= 0, commutes with exchanging
 * i and partner[i] (the alpha-beta exchange of an Ms = 0 space, whose even and odd vectors have
 * even and odd total spin). label NULL: one block; partner NULL: no exchange; bound NULL: no
 * bound known. */
typedef struct {
  const uint64_t *label;
  const int64_t *partner;
  const double *bound; /* optional: a lower bound of the spectrum of each one's block */
} cis_refsym;

/* Eigenpairs of H_PP each inside one symmetry block (a label and, with partners, a parity),
 * all of them, ascending: the guess takes the lowest, the check of the lowest states the next
 * one of each block. Ownership: cis_refstates_make allocates; cis_refstates_free. */
typedef struct {
  int64_t nref;
  int m;             /* eigenpairs (nref) */
  double *lam;       /* m, ascending */
  double *U;         /* nref x m, column-major */
  int *block;        /* m: the block of each pair */
  int nblocks;
  uint64_t *blabel;  /* nblocks: the label of each block */
  signed char *bparity; /* nblocks: +1 even, -1 odd, 0 without partners */
  double *bbound;    /* nblocks: a lower bound of each block's spectrum, -HUGE_VAL: none */
} cis_refstates;

cis_err cis_refstates_make(int64_t nref, const double *hpp, const cis_refsym *sym,
                           cis_refstates *st);
void cis_refstates_free(cis_refstates *st);

/* H_PP's eigendecomposition as st holds it (every pair, ascending), borrowed for the
 * preconditioner so that H_PP is diagonalised once: valid while st lives, never freed through
 * the view. nref 0 (no view) when st does not hold every pair. */
cis_refblock cis_refstates_view(const cis_refstates *st);

#endif
