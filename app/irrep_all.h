/* cisolve: --irrep all, the lowest states of every irrep in one command: the run is repeated
 * for each irrep the space has determinants of (by ORBSYM), in ascending order, each with its
 * own report, output and checkpoint (OUTPUT and CHECKPOINT with ".irrepN" before their
 * extension: docs/output-format.md), then a table of every irrep's states. The integrals are
 * read again for each irrep.
 */
#ifndef CIS_IRREP_ALL_H
#define CIS_IRREP_ALL_H

#include "app/options.h"

typedef cis_err (*cis_run_fn)(int argc, char **argv, int *exit_code);

/* Whether the command line says --irrep all (its last --irrep). */
int cis_irrep_all_asked(int argc, char **argv);
/* Run `run` once per irrep; *exit_code: the worst of the runs' (2 when any did not converge).
 * CIS_ERR_USAGE: no usable ORBSYM, ORBSYM broken by the integrals, --restart. */
cis_err cis_irrep_all(int argc, char **argv, cis_run_fn run, int *exit_code);
/* The irrep being run (1..8), 0 outside --irrep all. */
int cis_irrep_all_current(void);
/* Within --irrep all: the run's output and checkpoint paths with ".irrepN" (not /dev/null);
 * a path that has it already is left as it is (called again once the command line is applied
 * on top of the input's options). */
cis_err cis_irrep_all_paths(cis_options *o);
/* Within --irrep all: the run's states, for the table (total energies, <S^2> or NULL). */
void cis_irrep_all_record(int nroots, const double *energies, const double *s2);

#endif
