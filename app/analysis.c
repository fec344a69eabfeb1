/* cisolve: what the driver derives from the converged roots: the spin-penalty correction and
 * spin flags, degenerate groups, density matrices, and the search for missed roots. */
#include "app/analysis.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/util.h"
#include "hamiltonian/rdm.h"

/* The default check: every symmetry block's next state near the roots is searched; a missed
 * state is included. */
cis_err cis_analysis_check_blocks(const cis_options *o, cis_backend *be, cis_operator *op,
                                  const cis_refstates *st, const cis_eig_opts *eo,
                                  cis_eig_result *res, cis_analysis *an) {
  if (!res->all_converged) {
    if (!o->quiet) printf("lowest states    not checked: not every root converged\n");
    return CIS_OK;
  }
  CIS_CALL(cis_check_blocks(be, op, st, eo, CIS_DEGEN_TOL, res, &an->blocks));
  an->check_blocks = 1;
  return CIS_OK;
}

/* --check-roots: search outside the converged roots; a missed state is included. */
cis_err cis_analysis_check_roots(const cis_options *o, cis_backend *be, cis_operator *op,
                                 const cis_hmat *h, const cis_eig_opts *eo, cis_eig_result *res,
                                 cis_analysis *an) {
  cis_rootcheck rc;
  if (!res->all_converged) {
    if (!o->quiet) printf("root check       skipped: not every root converged\n");
    return CIS_OK;
  }
  CIS_CALL(cis_check_roots(be, op, eo, CIS_DEGEN_TOL, res, &rc));
  an->check_roots = 1;
  an->missed = rc.missed;
  an->check_conclusive = rc.conclusive;
  an->check_iterations = rc.iterations;
  an->check_lowest = rc.lowest + h->ecore;
  an->check_threshold = rc.threshold;
  return CIS_OK;
}

void cis_analysis_buf_free(cis_analysis_buf *b) {
  cis_free(&b->spin_ok);
  cis_free(&b->degen);
  cis_free(&b->rdm1);
  cis_free(&b->noons);
}

/* The penalty moved each eigenvalue by shift * (<S^2> - S(S+1)), or by its square when
 * S > |Ms| (hamiltonian/rowgen.h; exact for a root of pure spin): report E without it, and
 * flag roots whose spin misses the target. */
static cis_err spin_results(const cis_options *o, const cis_hmat *h, cis_eig_result *res,
                            const double *s2, cis_analysis *an, cis_analysis_buf *b) {
  double target = 0.25 * o->spin2 * (o->spin2 + 2);
  double sz = 0.5 * abs(cis_space_nalpha(h->space) - cis_space_nbeta(h->space));
  int squared = target > sz * (sz + 1.0) + 1e-9;
  CIS_CALL(cis_malloc(&b->spin_ok, (size_t)res->nroots, sizeof(int), "spin flags"));
  for (int j = 0; j < res->nroots; j++) {
    double a = s2[j] - target;
    res->evals[j] -= o->spin_shift * (squared ? a * a : a);
    b->spin_ok[j] = fabs(s2[j] - target) <= CIS_SPIN_TOL;
  }
  an->spin_set = 1;
  an->spin_s2 = target;
  an->spin_ok = b->spin_ok;
  return CIS_OK;
}

/* Roots closer than CIS_DEGEN_TOL to their predecessor share its group (the group's first
 * root); the spin-corrected energies are sorted only within the solver's order. */
static cis_err degenerate_groups(const cis_eig_result *res, cis_analysis *an, cis_analysis_buf *b) {
  CIS_CALL(cis_malloc(&b->degen, (size_t)res->nroots, sizeof(int), "degenerate groups"));
  for (int j = 0; j < res->nroots; j++)
    b->degen[j] = j > 0 && fabs(res->evals[j] - res->evals[j - 1]) < CIS_DEGEN_TOL ? b->degen[j - 1]
                                                                                    : j;
  an->degen_group = b->degen;
  return CIS_OK;
}

static cis_err rdm_results(const cis_hmat *h, const cis_eig_result *res, cis_analysis *an,
                           cis_analysis_buf *b) {
  int norb = cis_space_norb(h->space), K = res->nroots;
  CIS_CALL(cis_malloc(&b->rdm1, (size_t)K * (size_t)norb * (size_t)norb, sizeof(double),
                      "density matrices"));
  CIS_CALL(cis_malloc(&b->noons, (size_t)K * (size_t)norb, sizeof(double), "natural occupations"));
  int64_t nn = (int64_t)norb * norb, n = cis_space_ndet(h->space);
  for (int j = 0; j < K; j++) {
    double *g = b->rdm1 + j * nn, *bb = NULL;
    CIS_CALL(cis_malloc(&bb, (size_t)nn, sizeof *bb, "density matrix"));
    cis_rdm_out o = {.dm1a = g, .dm1b = bb};
    cis_err e = cis_rdm12s(h->space, NULL, res->evecs + j * n, res->evecs + j * n, &o);
    for (int64_t t = 0; t < nn; t++) g[t] += bb[t];
    cis_free(&bb);
    CIS_CALL(e);
  }
  CIS_CALL(cis_natural_orbitals(norb, K, b->rdm1, b->noons, NULL));
  an->norb = norb;
  an->rdm1 = b->rdm1;
  an->noons = b->noons;
  return CIS_OK;
}

cis_err cis_analysis_run(const cis_options *o, const cis_hmat *h, cis_eig_result *res,
                         const double *s2, cis_analysis *an, cis_analysis_buf *b) {
  if (o->spin_set && s2) CIS_CALL(spin_results(o, h, res, s2, an, b));
  CIS_CALL(degenerate_groups(res, an, b));
  if (o->rdm1) {
    CIS_CHECK(h->space, CIS_ERR_USAGE, "--rdm1 needs an integral input (%s holds a matrix)",
              o->input);
    CIS_CALL(rdm_results(h, res, an, b));
  }
  return CIS_OK;
}
