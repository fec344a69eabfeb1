/* cisolve: what the driver derives from the converged roots: the spin-penalty correction and
 * spin flags, degenerate groups, density matrices, and the search for missed roots. */
#include "app/analysis.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/util.h"
#include "hamiltonian/rdm.h"
#include "io/molden.h"

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
  cis_free(&b->natorbs);
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
  CIS_CALL(cis_malloc(&b->natorbs, (size_t)K * (size_t)norb * (size_t)norb, sizeof(double),
                      "natural orbitals"));
  CIS_CALL(cis_rdm1(h->space, K, res->evecs, b->rdm1));
  CIS_CALL(cis_natural_orbitals(norb, K, b->rdm1, b->noons, b->natorbs));
  an->norb = norb;
  an->rdm1 = b->rdm1;
  an->noons = b->noons;
  an->natorbs = b->natorbs;
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

/* The columns of the Molden file: the core orbitals (occupation 2), then the natural orbitals
 * U (norb x norb, columns) of the active orbitals A (nao x norb) in the atomic orbitals, A U. */
static void molden_columns(const cis_orbitals *orb, int norb, const double *U, double *coef) {
  int nmo = orb->ncore + norb;
  for (int64_t mu = 0; mu < orb->nao; mu++) {
    double *c = coef + mu * nmo;
    const double *a = orb->active + mu * norb;
    for (int k = 0; k < orb->ncore; k++) c[k] = orb->core[mu * orb->ncore + k];
    for (int i = 0; i < norb; i++) {
      double s = 0.0;
      for (int p = 0; p < norb; p++) s += a[p] * U[(int64_t)p * norb + i];
      c[orb->ncore + i] = s;
    }
  }
}

cis_err cis_analysis_write_molden(const cis_options *o, const cis_orbitals *orb, int nroots,
                                  const cis_analysis *an) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  double *avg = NULL, *U = NULL, *occ = NULL, *coef = NULL;
  if (!an->rdm1 || orb->nao <= 0 || nroots <= 0)
    CIS_FAIL(CIS_ERR_INTERNAL, "--molden without density matrices or orbitals");
  int norb = an->norb, nmo = orb->ncore + norb;
  int64_t nn = (int64_t)norb * norb;
  CIS_TRY(cis_calloc(&avg, (size_t)nn, sizeof *avg, "averaged density matrix"));
  CIS_TRY(cis_malloc(&U, (size_t)nn, sizeof *U, "natural orbitals"));
  CIS_TRY(cis_malloc(&occ, (size_t)nmo, sizeof *occ, "natural occupations"));
  CIS_TRY(cis_malloc(&coef, (size_t)orb->nao * (size_t)nmo, sizeof *coef, "Molden orbitals"));
  for (int j = 0; j < nroots; j++)
    for (int64_t t = 0; t < nn; t++) avg[t] += an->rdm1[j * nn + t] / nroots;
  for (int k = 0; k < orb->ncore; k++) occ[k] = 2.0;
  CIS_TRY(cis_natural_orbitals(norb, 1, avg, occ + orb->ncore, U));
  molden_columns(orb, norb, U, coef);
  CIS_TRY(cis_molden_write(o->molden, orb->molden_header, orb->nao, nmo, coef, occ));
  if (!o->quiet)
    printf("molden           %s (natural orbitals of %s%s)\n", o->molden,
           nroots > 1 ? "the average of the roots" : "the root",
           orb->ncore > 0 ? ", after the core orbitals" : "");
cleanup:
  cis_free(&avg);
  cis_free(&U);
  cis_free(&occ);
  cis_free(&coef);
  return err;
}
