/* cisolve: reading problems. The format is detected from the file's content, not its name:
 * the HDF5 signature -> input.h5 v1 (docs/input-format.md); "%%MatrixMarket" -> an explicit
 * symmetric matrix; otherwise an FCIDUMP (a "&FCI" namelist header).
 *
 * On success *p is filled and owned by the caller (cis_problem_free). On failure *p is left
 * empty and the error names the file and the line or dataset, and what was expected.
 */
#ifndef CIS_INPUT_H
#define CIS_INPUT_H

#include "base/problem.h"

cis_err cis_input_read(const char *path, cis_problem *p);

cis_err cis_fcidump_read(const char *path, cis_problem *p);
cis_err cis_h5input_read(const char *path, cis_problem *p);
cis_err cis_mtx_read(const char *path, cis_problem *p);

/* Write the problem as input.h5 version 1 (docs/input-format.md): integrals with the space
 * when the input named one or --space chose one, or the matrix; and the input's options.
 * Atomic (temporary name, then rename); refuses to replace the input itself. */
cis_err cis_h5input_write(const char *path, const cis_problem *p);

/* Write a symmetric matrix: Matrix Market (".mtx", lower triangle, symmetric) or HDF5 CSR
 * (".h5", the /matrix group of docs/input-format.md) chosen by the extension. Atomic
 * (temporary name, then rename). Streamed from `src` a few chunks of rows at a time (one per
 * OpenMP thread while they fit in half of what the process may still take): CIS_ERR_NOMEM,
 * naming the memory one chunk needs, before anything is written when not even one fits. A
 * Matrix Market file reads the rows twice (its size line counts the lower triangle first). */
cis_err cis_matrix_write(const char *path, const cis_row_source *src);
/* CIS_ERR_USAGE unless the name says a format cis_matrix_write writes (before any work). */
cis_err cis_matrix_check_name(const char *path);

#endif
