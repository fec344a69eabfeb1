/* cisolve: which reader a file needs (by content), and what every reader shares. */
#define _POSIX_C_SOURCE 200809L
#include "io/input.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <libgen.h>
#include <omp.h>
#include <string.h>

#include "base/util.h"
#include "io/io_private.h"

cis_err cis_io_lines_open(cis_io_lines *r, const char *path, const char *what) {
  *r = (cis_io_lines){.path = path};
  r->f = fopen(path, "r");
  if (!r->f)
    CIS_ERROR(CIS_ERR_IO, "cannot open %s%s%s: %s", what, *what ? " " : "", path,
              strerror(errno));
  return CIS_OK;
}

/* Read more of the file behind the unread bytes, growing the buffer for a long line. */
static cis_err fill(cis_io_lines *r) {
  size_t avail = r->end - r->beg;
  if (r->beg > 0) {
    memmove(r->buf, r->buf + r->beg, avail);
    r->beg = 0;
    r->end = avail;
  }
  if (r->end + 1 >= r->cap) {
    CIS_CHECK(r->cap < CIS_IO_LINE_MAX, CIS_ERR_INPUT, "%s: line %ld is longer than %zu MiB "
              "(not a text file of the expected kind?)", r->path, r->lineno + 1,
              CIS_IO_LINE_MAX >> 20);
    size_t cap = r->cap ? 2 * r->cap : (size_t)1 << 20;
    CIS_CALL(cis_realloc(&r->buf, cap, 1, "input line buffer"));
    r->cap = cap;
  }
  /* one byte stays free: a last line without a newline gets its NUL there */
  size_t got = fread(r->buf + r->end, 1, r->cap - r->end - 1, r->f);
  if (got == 0) {
    if (ferror(r->f))
      CIS_ERROR(CIS_ERR_IO, "%s: read error after line %ld: %s", r->path, r->lineno,
                strerror(errno));
    r->eof = 1;
  }
  r->end += got;
  return CIS_OK;
}

cis_err cis_io_next_line(cis_io_lines *r, int *more) {
  *more = 0;
  size_t scanned = 0; /* bytes of the pending line already searched for NUL and newline */
  for (;;) {
    char *s = r->buf + r->beg;
    size_t avail = r->end - r->beg;
    char *nl = avail > scanned ? memchr(s + scanned, '\n', avail - scanned) : NULL;
    size_t n = nl ? (size_t)(nl - s) : avail;
    char *nul = n > scanned ? memchr(s + scanned, '\0', n - scanned) : NULL;
    if (nul)
      CIS_ERROR(CIS_ERR_INPUT, "%s: line %ld: NUL byte at column %zu; a text input holds "
                "none (a binary file, or a zero-filled tail left by a crash or a full disk?)",
                r->path, r->lineno + 1, (size_t)(nul - s) + 1);
    if (nl || (r->eof && avail > 0)) {
      s[n] = '\0';
      r->line = s;
      r->len = n;
      r->beg += nl ? n + 1 : n;
      r->lineno++;
      *more = 1;
      return CIS_OK;
    }
    if (r->eof) return CIS_OK;
    scanned = n;
    CIS_CALL(fill(r));
  }
}

void cis_io_lines_close(cis_io_lines *r) {
  if (r->f) fclose(r->f);
  r->f = NULL;
  free(r->buf);
  r->buf = r->line = NULL;
}

static const unsigned char h5_signature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};

static int has_suffix(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  if (n < k) return 0;
  for (size_t i = 0; i < k; i++) {
    char a = s[n - k + i], b = suffix[i];
    if (a >= 'A' && a <= 'Z') a = (char)(a - 'A' + 'a');
    if (a != b) return 0;
  }
  return 1;
}

/* HDF5 allows a user block of 512, 1024, ... bytes before the signature. */
static int is_hdf5(FILE *f) {
  unsigned char buf[8];
  for (long off = 0; off <= 8192; off = off ? off * 2 : 512) {
    if (fseek(f, off, SEEK_SET) != 0) return 0;
    if (fread(buf, 1, 8, f) != 8) return 0;
    if (memcmp(buf, h5_signature, 8) == 0) return 1;
  }
  return 0;
}

cis_err cis_input_read(const char *path, cis_problem *p) {
  memset(p, 0, sizeof *p);
  FILE *f = fopen(path, "rb");
  if (!f) CIS_ERROR(CIS_ERR_IO, "cannot open input %s: %s", path, strerror(errno));
  char head[16] = {0};
  size_t got = fread(head, 1, sizeof head - 1, f);
  int err_read = ferror(f);
  int h5 = got > 0 && !err_read && is_hdf5(f);
  fclose(f);
  if (err_read) CIS_ERROR(CIS_ERR_IO, "cannot read input %s: %s", path, strerror(errno));
  if (got == 0) CIS_ERROR(CIS_ERR_INPUT, "%s: empty file", path);
  if (h5) {
    CIS_CALL(cis_h5input_read(path, p));
  } else if (strncmp(head, "%%MatrixMarket", 14) == 0) {
    CIS_CALL(cis_mtx_read(path, p));
  } else if (has_suffix(path, ".h5") || has_suffix(path, ".hdf5")) {
    CIS_ERROR(CIS_ERR_INPUT,
              "%s: not an HDF5 file (no HDF5 signature at offset 0); expected an input.h5 "
              "(docs/input-format.md), an FCIDUMP or a Matrix Market file",
              path);
  } else {
    CIS_CALL(cis_fcidump_read(path, p));
  }
  return CIS_OK;
}

cis_err cis_io_electrons(const char *path, const char *where, int norb, long nelec, long ms2,
                         int *nalpha, int *nbeta) {
  CIS_CHECK(norb > 0, CIS_ERR_INPUT, "%s: %s: NORB=%d, expected a positive number of orbitals",
            path, where, norb);
  CIS_CHECK(nelec >= 0, CIS_ERR_INPUT, "%s: %s: NELEC=%ld, expected >= 0", path, where, nelec);
  CIS_CHECK(nelec <= 2L * norb, CIS_ERR_INPUT,
            "%s: %s: NELEC=%ld exceeds 2*NORB=%d (each orbital holds at most 2 electrons)",
            path, where, nelec, 2 * norb);
  CIS_CHECK((nelec + ms2) % 2 == 0, CIS_ERR_INPUT,
            "%s: %s: NELEC=%ld and MS2=%ld have different parity (MS2 = nalpha - nbeta)", path,
            where, nelec, ms2);
  long na = (nelec + ms2) / 2, nb = (nelec - ms2) / 2;
  CIS_CHECK(na >= 0 && nb >= 0, CIS_ERR_INPUT,
            "%s: %s: NELEC=%ld, MS2=%ld give nalpha=%ld, nbeta=%ld; expected |MS2| <= NELEC",
            path, where, nelec, ms2, na, nb);
  CIS_CHECK(na <= norb && nb <= norb, CIS_ERR_INPUT,
            "%s: %s: NELEC=%ld, MS2=%ld give nalpha=%ld, nbeta=%ld; expected at most NORB=%d "
            "of each spin",
            path, where, nelec, ms2, na, nb, norb);
  *nalpha = (int)na;
  *nbeta = (int)nb;
  return CIS_OK;
}

cis_err cis_matrix_check_name(const char *path) {
  CIS_CHECK(has_suffix(path, ".mtx") || has_suffix(path, ".h5") || has_suffix(path, ".hdf5"),
            CIS_ERR_USAGE, "cannot tell the matrix format of %s: expected a name ending in "
            ".mtx (Matrix Market) or .h5 (HDF5 /matrix group)", path);
  return CIS_OK;
}

/* Chunks a writer holds at once: one per OpenMP thread while they take at most half of what
 * the process may still take, each its rows (12 bytes an entry and `per_entry` more, for the
 * writer's text) and the source's scratch. */
static cis_err plan_window(const cis_row_source *src, int64_t per_entry, const char *path,
                           int *window) {
  int64_t one = src->chunk_nnz * (12 + per_entry) + 8 * (src->chunk_rows + 1) + src->scratch;
  cis_host_mem m;
  cis_host_mem_probe("", &m);
  int64_t room = m.least > 0 ? m.least / 2 : INT64_MAX;
  char b1[32], b2[32];
  CIS_CHECK(one <= room, CIS_ERR_NOMEM,
            "cannot write %s: a chunk of %lld rows of the matrix takes %s of host memory, and "
            "%s leaves %s (half of it for the writer)", path, (long long)src->chunk_rows,
            cis_format_bytes((double)one, b1, sizeof b1), m.bound,
            cis_format_bytes((double)m.least, b2, sizeof b2));
  int64_t fit = room / CIS_MAX(one, (int64_t)1);
  *window = (int)CIS_MAX((int64_t)1, CIS_MIN(fit, (int64_t)omp_get_max_threads()));
  return CIS_OK;
}

cis_err cis_matrix_write(const char *path, const cis_row_source *src) {
  cis_io_matrix m = {.src = src, .window = 1};
  CIS_CALL(cis_matrix_check_name(path));
  if (has_suffix(path, ".mtx")) {
    CIS_CALL(plan_window(src, 24, path, &m.window));
    CIS_CALL(cis_mtx_write(path, &m));
  } else {
    CIS_CALL(plan_window(src, 0, path, &m.window));
    CIS_CALL(cis_h5matrix_write(path, &m));
  }
  return CIS_OK;
}
