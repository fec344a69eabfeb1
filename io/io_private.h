/* cisolve: helpers shared by the readers and writers of io/ (not a public interface).
 *
 * - text inputs read line by line, with line numbers for messages;
 * - electron counts from NELEC/MS2, validated the same way for every input format;
 * - an explicit matrix from coordinate triplets: rows sorted, duplicates refused, both
 *   triangles stored, symmetry checked;
 * - atomic output: every writer writes a temporary file, flushes and renames it over PATH;
 * - small HDF5 writers used by the /matrix group and output.h5.
 */
#ifndef CIS_IO_PRIVATE_H
#define CIS_IO_PRIVATE_H

#include <stdint.h>
#include <stdio.h>

#include <hdf5.h>

#include "base/problem.h"

/* A text input read line by line: `line` is the current line without its newline, ended by a
 * NUL, `len` its length and `lineno` its number, for messages naming path and line. A text
 * input holds no NUL byte: one (a binary file, or the zero-filled tail a crash or a full disk
 * leaves) is an error naming its line, found as soon as the block holding it is read, so a
 * file of gigabytes of zeros fails at once. A line longer than CIS_IO_LINE_MAX is an error too:
 * no line is ever held whole beyond that. */
#define CIS_IO_LINE_MAX ((size_t)64 << 20)
typedef struct {
  const char *path;
  FILE *f;
  char *line;
  size_t len;
  long lineno;
  char *buf; /* the block buffer: bytes [beg, end) are read and not yet handed out */
  size_t cap, beg, end;
  int eof;
} cis_io_lines;
/* Open `path` for reading; CIS_ERR_IO "cannot open WHAT PATH: reason" (`what` may be ""). */
cis_err cis_io_lines_open(cis_io_lines *r, const char *path, const char *what);
/* *more = 1 with the next line in r->line, 0 at the end of the file; CIS_ERR_INPUT for a NUL
 * byte or an overlong line, CIS_ERR_IO for a read error. */
cis_err cis_io_next_line(cis_io_lines *r, int *more);
/* Close the file and free the buffer (safe on a reader that failed to open). */
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

/* A file is written under a temporary name beside its PATH, "PATH.<12 random hex digits>.tmp"
 * (io/files.c), then renamed over PATH: a reader never sees a half-written file, and concurrent
 * runs writing the same PATH never share a temporary file (the last rename wins). The name is
 * created exclusively (O_CREAT|O_EXCL, H5F_ACC_EXCL): never an existing file, never through a
 * symbolic link planted there. While it exists, the signal handlers know it (base/signals.h)
 * and remove it if a signal ends the program. */
typedef struct {
  char name[4200]; /* "" when there is none */
} cis_io_tmp;
/* Creates the file at `name`, exclusively (failing if anything is there); 0, or -1 with errno
 * (EEXIST: the name is taken, and another is tried). */
typedef int (*cis_io_create_fn)(const char *name, void *ctx);
/* A cis_io_create_fn for text files: ctx is a FILE ** opened for writing on the new file. */
int cis_io_create_stdio(const char *name, void *ctx);
/* PATH must be new or a regular file (CIS_ERR_USAGE otherwise: never replace a device). */
cis_err cis_io_tmp_create(const char *path, cis_io_create_fn create, void *ctx, cis_io_tmp *t);
/* The file written and closed: fsync it, rename it over PATH, sync the folder. */
cis_err cis_io_tmp_commit(cis_io_tmp *t, const char *path);
/* A text file written through *f (cis_io_create_stdio): flushed, closed (*f = NULL, also on an
 * error) and committed to path; CIS_ERR_IO naming the temporary file where a write or the close
 * failed. */
cis_err cis_io_tmp_commit_stdio(FILE **f, cis_io_tmp *t, const char *path);
/* After a failure: remove the temporary file (nothing when there is none). */
void cis_io_tmp_discard(cis_io_tmp *t);

/* Write an HDF5 file atomically: `body` fills a new file created under a temporary name (it gets
 * the file and that name for its messages); the file is flushed, closed and fsync'ed, renamed
 * over PATH and its folder synced. On any failure the temporary file is removed and PATH is
 * left as it was. */
typedef cis_err (*cis_h5_body_fn)(hid_t f, const char *tmp, const void *ctx);
cis_err cis_h5_write_atomic(const char *path, cis_h5_body_fn body, const void *ctx);

/* The variable-length string attribute `attr` of an open input.h5 `file` (the one at `path`)
 * into out (len bytes with the NUL), the stored reference and heap object checked against the
 * file before a byte is read (io/h5string.c); `what` names it in messages. */
cis_err cis_h5_read_vlen_string(const char *path, hid_t file, hid_t attr, const char *what,
                                char *out, size_t len);

/* Run read(path, ...) in a forked child first: CIS_ERR_INPUT if libhdf5 crashes on the file
 * there (io/h5probe.c), else CIS_OK whatever the child's outcome (the caller's own read gives
 * it again, with its message). */
cis_err cis_h5_probe(const char *path, cis_err (*read)(const char *, cis_problem *));

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
