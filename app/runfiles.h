/* cisolve: the files of a run, checked before any work (docs/usage.md, "Files").
 *
 * A run writes --output (unless it is /dev/null), --checkpoint, --export-matrix and --molden, and reads
 * the input and, with --restart, a checkpoint; a conversion (--write-input) reads the input and
 * writes that file alone. Paths come from the command line only (never
 * from an input file's /options). Before the input is read, cis_files_check makes sure that
 *
 * - every file to be written is new or a regular file, in a folder that exists and is
 *   writable, and an exported matrix's name says its format (.mtx, .h5);
 * - no file to be written is the input, another file to be written, or (for the output and the
 *   exported matrix) the checkpoint --restart reads: two paths name the same file when they
 *   reach the same device and inode (through a symbolic or a hard link too) or, for a file not
 *   there yet, the same name in the same resolved folder;
 * - the checkpoint --restart reads exists and can be read (whether it belongs to this problem
 *   is checked once the problem is read, before the Hamiltonian is built: cis_ckpt_check).
 *
 * Every failure is CIS_ERR_USAGE (exit 1) naming the option, the path(s) and why.
 */
#ifndef CIS_RUNFILES_H
#define CIS_RUNFILES_H

#include "app/options.h"

/* --output /dev/null: the user wants the report only. */
int cis_files_output_discarded(const cis_options *o);
/* The checkpoint --restart reads (--restart=FILE, else --checkpoint), or NULL without one. */
const char *cis_files_restart_path(const cis_options *o);
/* The checks above, on options whose default paths are already filled in. */
cis_err cis_files_check(const cis_options *o);
/* Once the input is read: --molden needs an input that carries orbitals (input.h5 /orbitals);
 * CIS_ERR_USAGE naming the input and where they come from otherwise. */
cis_err cis_files_check_molden(const cis_options *o, const cis_problem *p);

#endif
