/* cisolve: output.h5 (layout in docs/output-format.md). Written to PATH.tmp, flushed,
 * then renamed to PATH: a reader never sees a half-written file.
 */
#ifndef CIS_OUTPUT_H
#define CIS_OUTPUT_H

#include "core/options.h"
#include "hamiltonian/hmat.h"
#include "solver/eigs.h"

typedef struct {
  const cis_options *opt;
  const cis_hmat *h;        /* n, ecore, nref, perm; h->space is NULL for explicit matrices */
  const cis_eig_result *res;
  const double *s2;         /* nroots <S^2> values, or NULL (explicit matrices) */
  const char *version;      /* CISOLVE_VERSION */
  const char *device_desc;  /* backend description */
} cis_output;

/* /results/energies (total, Eh), /results/vectors (nroots x n, row j = root j, our det order),
 * /results/s2, /results/residual_norms, /results/converged, /determinants/{alpha,beta}
 * (n x nwords uint64), /options (attributes), /problem (norb, nalpha, nbeta, ndet, nref,
 * ecore, space). */
cis_err cis_output_write(const char *path, const cis_output *out);

#endif
