/* cisolve: frozen core and active orbitals (--frozen, --active; docs/usage.md).
 *
 * The nfrozen lowest orbitals of the input are doubly occupied in every determinant and are
 * folded into the integrals as PySCF's CASCI folds its core (mcscf.casci h1e_for_cas):
 *   h'_pq  = h_pq + sum_c [2 (pq|cc) - (pc|cq)]
 *   ecore' = ecore + sum_c 2 h_cc + sum_cc' [2 (cc|c'c') - (cc'|c'c)]
 * over frozen c, c'. The active orbitals are kept, in the input's order; every other orbital
 * is deleted (empty in every determinant). Each spin loses nfrozen electrons; ORBSYM and the
 * determinants the input names (references, a list) follow the kept orbitals.
 */
#ifndef CIS_ORBITALS_H
#define CIS_ORBITALS_H

#include <stddef.h>

#include "base/problem.h"

/* An orbital list as --active takes it: 1-based orbital numbers (FCIDUMP's, Molpro's and
 * PySCF's sort_mo numbering) and ranges, comma-separated, e.g. "3-10", "2,3,5-7". *out (owned
 * by the caller, cis_free) receives the 0-based orbitals in ascending order, *n of them.
 * CIS_ERR_USAGE (naming the option) for a malformed list, an orbital below 1, a descending
 * range or an orbital given twice. */
cis_err cis_orbitals_parse(const char *text, const char *what, int **out, int *n);

/* Apply the window to an integral problem: nfrozen < 0 is the default (with an active list,
 * the orbitals below its lowest one; without, none); active NULL keeps every orbital above the
 * frozen ones. Fills p->window. CIS_ERR_USAGE for orbitals beyond the input's, an active
 * orbital among the frozen ones, more frozen electrons of one spin than the input has, more
 * electrons left than the kept orbitals hold; CIS_ERR_INPUT for a reference or list
 * determinant of the input that leaves a frozen orbital less than doubly occupied or occupies a
 * deleted one. */
cis_err cis_orbitals_apply(cis_problem *p, int nfrozen, const int *active, int nactive);

/* "1-2" / "3-10,12" style text of a sorted 0-based orbital list, printed 1-based (for the
 * report); "none" when empty. */
void cis_orbitals_format(const int *orb, int n, char *buf, size_t cap);

#endif
