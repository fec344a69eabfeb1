/* cisolve: helpers shared by the readers and writers of io/ (not a public interface).
 *
 * - text inputs read line by line, with line numbers for messages;
 * - electron counts from NELEC/MS2, validated the same way for every input format;
 * - an explicit matrix from coordinate triplets: rows sorted, duplicates refused, both
 *   triangles stored, symmetry checked;
 * - atomic output: every writer writes PATH.tmp, flushes and renames it over PATH;
 * - small HDF5 writers used by the /matrix group and output.h5.
 */
#ifndef CIS_IO_PRIVATE_H
#define CIS_IO_PRIVATE_H

#include <stdint.h>
#include <stdio.h>

#include <hdf5.h>

#include "core/problem.h"

/* A text input read line by line: `line` is the current line (getline's buffer, with its
 * newline), `lineno` its number, for messages naming path and line. */
typedef struct {
  const char *path;
  FILE *f;
  char *line;
  size_t cap;
  long lineno;
} cis_io_lines;
/* Open `path` for reading; CIS_ERR_IO "cannot open WHAT PATH: reason" (`what` may be ""). */
cis_err cis_io_lines_open(cis_io_lines *r, const char *path, const char *what);
/* 1 with the next line in r->line, 0 at the end of the file. */
int cis_io_next_line(cis_io_lines *r);
/* Close the file and free the line buffer (safe on a reader that failed to open). */
void cis_io_lines_close(cis_io_lines *r);

/* nalpha = (nelec+ms2)/2, nbeta = (nelec-ms2)/2, checked against norb. `where` names the
 * place of the numbers in the file, e.g. "FCIDUMP header" or "/integrals". */
cis_err cis_io_electrons(const char *path, const char *where, int norb, long nelec, long ms2,
                         int *nalpha, int *nbeta);

/* Coordinate triplets (0-based) of an n x n matrix. With `mirror`, each off-diagonal (i,j)
 * also stands for (j,i) (a stored triangle); without, the triplets hold both triangles and
 * the result must be symmetric to 1e-12 relative to the largest |entry|. Duplicates and
 * non-finite values are errors naming `path` and `what`. Fills *m (caller frees). */
typedef struct {
  int64_t n, count;
  int64_t *row;
  int64_t *col;
  double *val;
} cis_io_coo;
cis_err cis_io_csr_from_coo(const cis_io_coo *t, int mirror, const char *path,
                            const char *what, cis_csr *m);
/* The first (i,j) with |a_ij - a_ji| above tolerance, as an error naming path/what. */
cis_err cis_io_csr_check_symmetric(const cis_csr *m, const char *path, const char *what);

/* PATH + ".tmp" into buf (CIS_ERR_IO if it does not fit). */
cis_err cis_io_tmp_name(const char *path, char *buf, size_t len);
/* fsync a closed file by name, so a rename never publishes unwritten data. */
cis_err cis_io_fsync_path(const char *path);
/* Rename tmp over path (CIS_ERR_IO with the OS reason); the caller removes tmp on failure. */
cis_err cis_io_commit(const char *tmp, const char *path);

/* Write an HDF5 file atomically: `body` fills a new file created as PATH.tmp (it gets the file
 * and the temporary name for its messages); the file is flushed, closed and fsync'ed, renamed
 * over PATH and its directory synced. On any failure the temporary file is removed and PATH is
 * left as it was. */
typedef cis_err (*cis_h5_body_fn)(hid_t f, const char *tmp, const void *ctx);
cis_err cis_h5_write_atomic(const char *path, cis_h5_body_fn body, const void *ctx);

/* HDF5 writing: each returns CIS_ERR_IO naming `path` and the object on a failed status. */
void cis_h5_quiet(void);
/* Close any HDF5 id (file, group, dataset, attribute, type, space) if valid; sets *id = -1. */
void cis_h5_close(hid_t *id);
cis_err cis_h5_attr_int(hid_t loc, const char *path, const char *name, int64_t v);
cis_err cis_h5_attr_double(hid_t loc, const char *path, const char *name, double v);
cis_err cis_h5_attr_string(hid_t loc, const char *path, const char *name, const char *v);
/* A dataset of `type` (a native type) with rank 1 or 2 (dims[1] ignored for rank 1). */
cis_err cis_h5_write(hid_t loc, const char *path, const char *name, hid_t type, int rank,
                     const int64_t *dims, const void *data);
cis_err cis_h5_group(hid_t loc, const char *path, const char *name, hid_t *out);
/* A matrix to write: its rows, and how many chunks of them a writer may hold at once
 * (cis_matrix_write plans it). */
typedef struct {
  const cis_row_source *src;
  int window;
} cis_io_matrix;
/* Write the /matrix group (storage "full") and the input.h5 root attributes into file f. */
cis_err cis_h5_write_matrix(hid_t f, const char *path, const cis_io_matrix *m);
cis_err cis_mtx_write(const char *path, const cis_io_matrix *m);
cis_err cis_h5matrix_write(const char *path, const cis_io_matrix *m);

#endif
