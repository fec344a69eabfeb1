/* cisolve: analysis of the converged roots (app/analysis.c), filling the cis_analysis that
 * the report and output.h5 print. The arrays it points to live in a cis_analysis_buf owned by
 * the caller and released with cis_analysis_buf_free.
 */
#ifndef CIS_ANALYSIS_H
#define CIS_ANALYSIS_H

#include "app/options.h"
#include "hamiltonian/hmat.h"
#include "app/output.h"
#include "kernels/backend.h"
#include "kernels/operator.h"
#include "solver/eigs.h"

typedef struct {
  int *spin_ok, *degen;
  double *rdm1, *noons, *nos, *dm1a, *dm1b;
  double *dm2[3];          /* aa, ab, bb */
  int32_t *tpairs;
  double *tdm1[2], *tdm2[4];
} cis_analysis_buf;

void cis_analysis_buf_free(cis_analysis_buf *b);

/* --check-roots blocks (the default): the search of every symmetry block (cis_check_blocks)
 * over the Reference states st; a missed state is included in res. */
cis_err cis_analysis_check_blocks(const cis_options *o, cis_backend *be, cis_operator *op,
                                  const cis_refstates *st, const cis_eig_opts *eo,
                                  cis_eig_result *res, cis_analysis *an);
/* --check-roots full, after the blocks: search outside the converged roots from random vectors;
 * a missed state is included in res. */
cis_err cis_analysis_check_roots(const cis_options *o, cis_backend *be, cis_operator *op,
                                 const cis_hmat *h, const cis_eig_opts *eo, cis_eig_result *res,
                                 cis_analysis *an);

/* Spin correction and flags (--spin), degenerate groups, density matrices (--rdm1, --rdm2,
 * --trans-rdm: hamiltonian/rdm.h, their products on be when it is a GPU's). May change
 * res->evals (the penalty is removed). s2 may be NULL for explicit matrices. */
cis_err cis_analysis_run(const cis_options *o, const cis_hmat *h, cis_backend *be,
                         cis_eig_result *res, const double *s2, cis_analysis *an,
                         cis_analysis_buf *b);

/* --molden: the natural orbitals of the nroots roots' average density matrix (equal weights;
 * one root's own for one root) in the atomic orbitals of `orb` (the input's /orbitals), after
 * its doubly occupied core orbitals, written to o->molden (docs/usage.md, "Natural orbitals").
 * Needs an->rdm1 (cis_analysis_run with --rdm1, which --molden sets). */
cis_err cis_analysis_write_molden(const cis_options *o, const cis_orbitals *orb, int nroots,
                                  const cis_analysis *an);

#endif
