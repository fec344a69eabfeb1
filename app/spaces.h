/* cisolve: the orbitals and the MRCI model space a run's options choose, applied to the problem
 * as read (app/main.c, after --ms2 and --space). */
#ifndef CIS_APP_SPACES_H
#define CIS_APP_SPACES_H

#include "app/options.h"
#include "base/problem.h"

/* --frozen and --active (hamiltonian/orbitals.h): the problem's integrals, electrons, ORBSYM
 * and named determinants become those of the kept orbitals. Nothing without either option. */
cis_err cis_resolve_orbitals(const cis_options *o, cis_problem *p);

/* An mrci<N> space's model space: --cas NE,NO; else the input's reference determinants; else
 * its determinant list. CIS_ERR_USAGE for --cas without an mrci space, a CAS that does not fit,
 * --ref-size with an mrci space (its Reference region is the model space), or no model space. */
cis_err cis_resolve_mrci(const cis_options *o, cis_problem *p);

#endif
