/* cisolve: Molden files of orbitals (io/molden.c).
 *
 * The basis set is not ours to know: the header (the file up to its [MO] section: [Molden
 * Format], [Atoms], [GTO] and the spherical/Cartesian marks) and the coefficients in its AO
 * order come from the input (input.h5 /orbitals, written by scripts/to_input_h5.py with
 * pyscf.tools.molden's own functions); this module checks the header's outline and appends the
 * [MO] section.
 */
#ifndef CIS_MOLDEN_H
#define CIS_MOLDEN_H

#include "base/error.h"

/* The header `text` (NUL-terminated) of dataset `name` in `path`: it starts with
 * [Molden Format], holds [Atoms] and [GTO] sections and no [MO] section (any case);
 * CIS_ERR_INPUT naming path and name otherwise. */
cis_err cis_molden_check_header(const char *path, const char *name, const char *text);

/* Write `header`, then an [MO] section of nmo orbitals: orbital i has the nao coefficients
 * coef[mu * nmo + i] (row-major, AO rows in the header's order), Sym= A, Ene= i (the order,
 * as pyscf.tools.molden writes orbitals without energies), Spin= Alpha and Occup= occ[i].
 * Atomic: written under a temporary name beside PATH and renamed (io/io_private.h). */
cis_err cis_molden_write(const char *path, const char *header, int nao, int nmo,
                         const double *coef, const double *occ);

#endif
