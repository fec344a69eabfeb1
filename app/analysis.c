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
  cis_free(&b->nos);
  cis_free(&b->dm1a);
  cis_free(&b->dm1b);
  cis_free(&b->tpairs);
  for (int i = 0; i < 4; i++) {
    if (i < 3) cis_free(&b->dm2[i]);
    if (i < 2) cis_free(&b->tdm1[i]);
    cis_free(&b->tdm2[i]);
  }
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

/* cis_rdm12s with its products on be; where the GPU cannot take them (its memory is the
 * matrix's), on the host, saying so. */
static cis_err rdm_pair(const cis_options *o, const cis_space *sp, cis_backend *be,
                        const double *bra, const double *ket, cis_rdm_out *out) {
  if (be && be->is_device) {
    if (cis_rdm12s(sp, be, bra, ket, out) == CIS_OK) return CIS_OK;
    if (!o->quiet)
      printf("density matrices products on the host: the GPU could not take them (%s)\n",
             cis_error_message());
    cis_error_clear();
  }
  return cis_rdm12s(sp, NULL, bra, ket, out);
}

/* Every array the density matrices asked for take, checked against the host's memory. */
static cis_err rdm_alloc(const cis_options *o, int norb, int K, int ntrans, cis_analysis_buf *b) {
  size_t n2 = (size_t)norb * norb, n4 = n2 * n2, k = (size_t)K, t = (size_t)ntrans;
  double need = 8.0 * ((double)k * (5.0 * n2 + norb) + (double)t * 2.0 * n2 +
                       (o->rdm2 ? (double)k * 3.0 * n4 + (double)t * 4.0 * n4 : 0.0));
  double avail;
  const char *bound;
  char b1[32], b2[32];
  if (cis_host_mem_room(&avail, &bound))
    CIS_CHECK(need <= avail, CIS_ERR_NOMEM, "the density matrices of %d root%s%s need %s of "
              "host memory; %s available (%s)", K, K == 1 ? "" : "s",
              ntrans ? " and their transitions" : "", cis_format_bytes(need, b1, sizeof b1),
              cis_format_bytes(avail, b2, sizeof b2), bound);
  CIS_CALL(cis_calloc(&b->rdm1, k * n2, sizeof(double), "density matrices"));
  CIS_CALL(cis_calloc(&b->dm1a, k * n2, sizeof(double), "density matrices"));
  CIS_CALL(cis_calloc(&b->dm1b, k * n2, sizeof(double), "density matrices"));
  CIS_CALL(cis_calloc(&b->nos, k * n2, sizeof(double), "natural orbitals"));
  CIS_CALL(cis_calloc(&b->noons, k * (size_t)norb, sizeof(double), "natural occupations"));
  for (int i = 0; o->rdm2 && i < 3; i++)
    CIS_CALL(cis_calloc(&b->dm2[i], k * n4, sizeof(double), "two-particle density matrices"));
  if (!ntrans) return CIS_OK;
  CIS_CALL(cis_calloc(&b->tpairs, 2 * t, sizeof(int32_t), "transition pairs"));
  for (int i = 0; i < 2; i++)
    CIS_CALL(cis_calloc(&b->tdm1[i], t * n2, sizeof(double), "transition density matrices"));
  for (int i = 0; o->rdm2 && i < 4; i++)
    CIS_CALL(cis_calloc(&b->tdm2[i], t * n4, sizeof(double), "transition density matrices"));
  return CIS_OK;
}

/* Per root: dm1a, dm1b (and dm2 with --rdm2), the spin-summed rdm1 and its natural orbitals;
 * per pair of roots i < j (--trans-rdm, or --rdm2 with several roots): <i| .. |j>. */
static cis_err rdm_results(const cis_options *o, const cis_hmat *h, cis_backend *be,
                           const cis_eig_result *res, cis_analysis *an, cis_analysis_buf *b) {
  const cis_space *sp = h->space;
  int norb = cis_space_norb(sp), K = res->nroots;
  int ntrans = (o->trans_rdm || o->rdm2) && K > 1 ? K * (K - 1) / 2 : 0;
  int64_t n = cis_space_ndet(sp), n2 = (int64_t)norb * norb, n4 = n2 * n2;
  CIS_CALL(rdm_alloc(o, norb, K, ntrans, b));
  for (int j = 0; j < K; j++) {
    const double *c = res->evecs + j * n;
    cis_rdm_out out = {.dm1a = b->dm1a + j * n2, .dm1b = b->dm1b + j * n2};
    if (o->rdm2) {
      out.dm2aa = b->dm2[0] + j * n4;
      out.dm2ab = b->dm2[1] + j * n4;
      out.dm2bb = b->dm2[2] + j * n4;
    }
    CIS_CALL(rdm_pair(o, sp, be, c, c, &out));
    for (int64_t t = 0; t < n2; t++) b->rdm1[j * n2 + t] = out.dm1a[t] + out.dm1b[t];
  }
  CIS_CALL(cis_natural_orbitals(norb, K, b->rdm1, b->noons, b->nos));
  for (int i = 0, t = 0; ntrans && i < K; i++)
    for (int j = i + 1; j < K; j++, t++) {
      b->tpairs[2 * t] = i;
      b->tpairs[2 * t + 1] = j;
      cis_rdm_out out = {.dm1a = b->tdm1[0] + t * n2, .dm1b = b->tdm1[1] + t * n2};
      if (o->rdm2) {
        out.dm2aa = b->tdm2[0] + t * n4;
        out.dm2ab = b->tdm2[1] + t * n4;
        out.dm2ba = b->tdm2[2] + t * n4;
        out.dm2bb = b->tdm2[3] + t * n4;
      }
      CIS_CALL(rdm_pair(o, sp, be, res->evecs + i * n, res->evecs + j * n, &out));
    }
  an->norb = norb;
  an->rdm1 = b->rdm1;
  an->noons = b->noons;
  an->nos = b->nos;
  an->dm1a = b->dm1a;
  an->dm1b = b->dm1b;
  for (int i = 0; i < 3; i++) an->dm2[i] = b->dm2[i];
  an->ntrans = ntrans;
  an->trans_pairs = b->tpairs;
  for (int i = 0; i < 2; i++) an->tdm1[i] = b->tdm1[i];
  for (int i = 0; i < 4; i++) an->tdm2[i] = b->tdm2[i];
  return CIS_OK;
}

cis_err cis_analysis_run(const cis_options *o, const cis_hmat *h, cis_backend *be,
                         cis_eig_result *res, const double *s2, cis_analysis *an,
                         cis_analysis_buf *b) {
  if (o->spin_set && s2) CIS_CALL(spin_results(o, h, res, s2, an, b));
  CIS_CALL(degenerate_groups(res, an, b));
  if (o->rdm1) {
    CIS_CHECK(h->space, CIS_ERR_USAGE, "%s needs an integral input (%s holds a matrix)",
              o->rdm2 ? "--rdm2" : o->trans_rdm ? "--trans-rdm" : "--rdm1", o->input);
    CIS_CALL(rdm_results(o, h, be, res, an, b));
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
