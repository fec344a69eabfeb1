/* cisolve: the human report on stdout. Everything a user reads about a run is printed here;
 * the numbers themselves come from the modules that computed them. */
#ifndef CIS_REPORT_H
#define CIS_REPORT_H

#include "core/options.h"
#include "hamiltonian/hmat.h"
#include "io/output.h"
#include "kernels/backend.h"
#include "solver/eigs.h"

typedef struct {
  const cis_options *opt;
  const cis_problem *prob;
  const cis_hmat *h;
  const cis_backend *be;
  double t_start;         /* cis_wtime() at program start */
  double t_space, t_hmat; /* seconds to build the space and the matrix */
  double t_upload;        /* seconds to attach (upload) the matrix to the backend */
  int last_iter_printed;
  const cis_analysis *an; /* may be NULL */
} cis_report;

void cis_report_problem(const cis_report *r);
void cis_report_matrix(const cis_report *r);
/* The solver's per-iteration callback (ctx = cis_report*); never asks to stop. */
int cis_report_iter(void *ctx, int iter, int k, const double *evals, const double *rnorm,
                    const int *conv, int nbasis);
void cis_report_results(const cis_report *r, const cis_eig_result *res, const double *s2);

#endif
