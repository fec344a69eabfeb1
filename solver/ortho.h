/* cisolve: orthogonalisation of new search directions against a Davidson basis.
 *
 * V is an n x (m + nw) block on the backend whose first m columns are orthonormal and whose
 * next nw columns hold candidate vectors. cis_ortho_append makes the candidates orthonormal to
 * the basis and to each other (two passes of block classical Gram-Schmidt against the basis,
 * then two passes per candidate against the candidates already kept), drops a candidate whose
 * norm falls below drop_tol times its norm before projection (it lay in the span), and packs
 * the survivors into columns m .. m + *nkept - 1. A zero or non-finite candidate is dropped /
 * reported as CIS_ERR_NUMERIC respectively.
 *
 * work: host scratch of at least (m + nw + 1) * nw doubles.
 */
#ifndef CIS_ORTHO_H
#define CIS_ORTHO_H

#include "kernels/backend.h"

/* A candidate that keeps less than this fraction of its norm after projection lay in the
 * span: normalising it would amplify rounding noise into a non-orthogonal direction. */
#define CIS_ORTHO_DROP_TOL 1e-8

cis_err cis_ortho_append(cis_backend *be, double *V, int m, int nw, double drop_tol,
                         double *work, int *nkept);

#endif
