/* cisolve: explicit symmetric matrices: Matrix Market reading and writing, and the
 * triplets -> CSR step shared with the HDF5 /matrix reader.
 *
 * Every explicit matrix ends up with both triangles stored, rows sorted by column and no
 * duplicate entries, which is what cis_hmat_build_csr expects.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/util.h"
#include "io/input.h"
#include "io/io_private.h"

/* Sort each row by column and refuse duplicates. */
static cis_err sort_rows(cis_csr *m, const char *path, const char *what) {
  CIS_CALL(cis_csr_sort_rows(m));
  for (int64_t i = 0; i < m->n; i++)
    for (int64_t k = m->rowptr[i] + 1; k < m->rowptr[i + 1]; k++)
      CIS_CHECK(m->col[k] != m->col[k - 1], CIS_ERR_INPUT,
                "%s: %s has two entries at row %lld, column %lld (0-based; a stored triangle "
                "counts for both)", path, what, (long long)i, (long long)m->col[k]);
  return CIS_OK;
}

static cis_err fill_csr(const cis_io_coo *t, int mirror, cis_csr *m) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  int64_t *pos = NULL;
  CIS_TRY(cis_calloc(&m->rowptr, (size_t)t->n + 1, sizeof(int64_t), "matrix row pointers"));
  for (int64_t k = 0; k < t->count; k++) {
    m->rowptr[t->row[k] + 1]++;
    if (mirror && t->row[k] != t->col[k]) m->rowptr[t->col[k] + 1]++;
  }
  for (int64_t i = 0; i < t->n; i++) m->rowptr[i + 1] += m->rowptr[i];
  m->n = t->n;
  m->nnz = m->rowptr[t->n];
  CIS_TRY(cis_malloc(&m->col, (size_t)m->nnz, sizeof(int32_t), "matrix columns"));
  CIS_TRY(cis_malloc(&m->val, (size_t)m->nnz, sizeof(double), "matrix values"));
  CIS_TRY(cis_malloc(&pos, (size_t)t->n, sizeof(int64_t), "matrix fill positions"));
  memcpy(pos, m->rowptr, (size_t)t->n * sizeof(int64_t));
  for (int64_t k = 0; k < t->count; k++) {
    int64_t i = t->row[k], j = t->col[k];
    m->col[pos[i]] = (int32_t)j;
    m->val[pos[i]++] = t->val[k];
    if (mirror && i != j) {
      m->col[pos[j]] = (int32_t)i;
      m->val[pos[j]++] = t->val[k];
    }
  }
cleanup:
  cis_free(&pos);
  return err;
}

cis_err cis_io_csr_from_coo(const cis_io_coo *t, int mirror, const char *path,
                            const char *what, cis_csr *m) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  memset(m, 0, sizeof *m);
  if (t->n < 1 || t->n > INT32_MAX)
    CIS_FAIL(CIS_ERR_INPUT, "%s: %s has dimension %lld, expected 1..%d", path, what,
             (long long)t->n, INT32_MAX);
  for (int64_t k = 0; k < t->count; k++) {
    if (t->row[k] < 0 || t->row[k] >= t->n || t->col[k] < 0 || t->col[k] >= t->n)
      CIS_FAIL(CIS_ERR_INPUT, "%s: %s entry %lld at (%lld, %lld) (0-based) is outside the "
               "%lld x %lld matrix", path, what, (long long)k, (long long)t->row[k],
               (long long)t->col[k], (long long)t->n, (long long)t->n);
    if (!isfinite(t->val[k]))
      CIS_FAIL(CIS_ERR_INPUT, "%s: %s entry %lld at (%lld, %lld) (0-based) is %g, expected a "
               "finite number", path, what, (long long)k, (long long)t->row[k],
               (long long)t->col[k], t->val[k]);
  }
  CIS_TRY(fill_csr(t, mirror, m));
  CIS_TRY(sort_rows(m, path, what));
  if (!mirror) CIS_TRY(cis_io_csr_check_symmetric(m, path, what));
cleanup:
  if (err != CIS_OK) cis_csr_free(m);
  return err;
}

/* a_ij, or 0 with *present = 0 when the matrix stores no (i, j). */
static double csr_at(const cis_csr *m, int64_t i, int32_t j, int *present) {
  int64_t lo = m->rowptr[i], hi = m->rowptr[i + 1];
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (m->col[mid] < j)
      lo = mid + 1;
    else
      hi = mid;
  }
  *present = lo < m->rowptr[i + 1] && m->col[lo] == j;
  return *present ? m->val[lo] : 0.0;
}

cis_err cis_io_csr_check_symmetric(const cis_csr *m, const char *path, const char *what) {
  double amax = 0;
  for (int64_t k = 0; k < m->nnz; k++) amax = CIS_MAX(amax, fabs(m->val[k]));
  /* relative to the largest entry: round-off of an exporter scales with the matrix norm */
  double tol = 1e-12 * amax;
  /* both triangles are walked: an entry with no partner may sit in either */
  for (int64_t i = 0; i < m->n; i++)
    for (int64_t k = m->rowptr[i]; k < m->rowptr[i + 1]; k++) {
      int32_t j = m->col[k];
      if (j == i) continue;
      int present;
      double t = csr_at(m, j, (int32_t)i, &present);
      if (fabs(m->val[k] - t) > tol)
        CIS_ERROR(CIS_ERR_INPUT, "%s: %s is not symmetric: entry (%lld, %d) = %.17g but (%d, "
                  "%lld) = %.17g%s (0-based; tolerance 1e-12 * max|a| = %.3g)", path, what,
                  (long long)i, j, m->val[k], j, (long long)i, t,
                  present ? "" : " (not stored)", tol);
    }
  return CIS_OK;
}

/* ---- Matrix Market reading ---------------------------------------------------------------- */

static cis_err mtx_banner(cis_io_lines *r, int *symmetric) {
  char w[5][32] = {{0}};
  int more;
  CIS_CALL(cis_io_next_line(r, &more));
  if (!more) CIS_ERROR(CIS_ERR_INPUT, "%s: empty file", r->path);
  int k = sscanf(r->line, "%31s %31s %31s %31s %31s", w[0], w[1], w[2], w[3], w[4]);
  if (k != 5 || strcasecmp(w[0], "%%MatrixMarket") != 0 || strcasecmp(w[1], "matrix") != 0 ||
      strcasecmp(w[2], "coordinate") != 0)
    CIS_ERROR(CIS_ERR_INPUT, "%s: line 1: expected '%%%%MatrixMarket matrix coordinate real "
              "symmetric' (or general, or integer)", r->path);
  if (strcasecmp(w[3], "real") != 0 && strcasecmp(w[3], "double") != 0 &&
      strcasecmp(w[3], "integer") != 0)
    CIS_ERROR(CIS_ERR_INPUT, "%s: line 1: field '%s' is not supported, expected real or "
              "integer", r->path, w[3]);
  if (strcasecmp(w[4], "symmetric") == 0)
    *symmetric = 1;
  else if (strcasecmp(w[4], "general") == 0)
    *symmetric = 0;
  else
    CIS_ERROR(CIS_ERR_INPUT, "%s: line 1: symmetry '%s' is not supported, expected symmetric "
              "or general (of a symmetric matrix)", r->path, w[4]);
  return CIS_OK;
}

static cis_err mtx_size(cis_io_lines *r, int64_t *n, int64_t *nnz) {
  int more;
  for (;;) {
    CIS_CALL(cis_io_next_line(r, &more));
    if (!more) break;
    if (r->line[0] == '%') continue;
    char *s = r->line, *e;
    while (isspace((unsigned char)*s)) s++;
    if (!*s) continue;
    long long v[3];
    for (int k = 0; k < 3; k++) {
      errno = 0;
      v[k] = strtoll(s, &e, 10);
      if (e == s || errno || (*e && !isspace((unsigned char)*e)))
        CIS_ERROR(CIS_ERR_INPUT, "%s: line %ld: expected the size line 'rows columns entries'",
                  r->path, r->lineno);
      s = e;
    }
    while (isspace((unsigned char)*s)) s++;
    CIS_CHECK(!*s, CIS_ERR_INPUT, "%s: line %ld: trailing text after 'rows columns entries'",
              r->path, r->lineno);
    CIS_CHECK(v[0] == v[1], CIS_ERR_INPUT, "%s: line %ld: the matrix is %lld x %lld, expected "
              "a square matrix", r->path, r->lineno, v[0], v[1]);
    CIS_CHECK(v[0] >= 1 && v[0] <= INT32_MAX && v[2] >= 0, CIS_ERR_INPUT, "%s: line %ld: size "
              "%lld with %lld entries, expected 1..%d rows and entries >= 0", r->path,
              r->lineno, v[0], v[2], INT32_MAX);
    *n = v[0];
    *nnz = v[2];
    return CIS_OK;
  }
  CIS_ERROR(CIS_ERR_INPUT, "%s: no size line 'rows columns entries' after the banner", r->path);
}

static cis_err mtx_entry(const cis_io_lines *r, int64_t n, int64_t *i, int64_t *j, double *v) {
  char *s = r->line, *e;
  long long ij[2];
  for (int k = 0; k < 2; k++) {
    errno = 0;
    ij[k] = strtoll(s, &e, 10);
    if (e == s || errno || (*e && !isspace((unsigned char)*e)))
      CIS_ERROR(CIS_ERR_INPUT, "%s: line %ld: expected 'row column value'", r->path, r->lineno);
    s = e;
  }
  *v = strtod(s, &e);
  if (e == s) CIS_ERROR(CIS_ERR_INPUT, "%s: line %ld: expected 'row column value', the value is "
                        "missing or not a number", r->path, r->lineno);
  while (isspace((unsigned char)*e)) e++;
  CIS_CHECK(!*e, CIS_ERR_INPUT, "%s: line %ld: trailing text after 'row column value'", r->path,
            r->lineno);
  CIS_CHECK(ij[0] >= 1 && ij[0] <= n && ij[1] >= 1 && ij[1] <= n, CIS_ERR_INPUT,
            "%s: line %ld: index (%lld, %lld) outside 1..%lld", r->path, r->lineno, ij[0], ij[1],
            (long long)n);
  CIS_CHECK(isfinite(*v), CIS_ERR_INPUT, "%s: line %ld: value %g is not a finite number",
            r->path, r->lineno, *v);
  *i = ij[0] - 1;
  *j = ij[1] - 1;
  return CIS_OK;
}

static cis_err mtx_entries(cis_io_lines *r, cis_io_coo *t, int64_t nnz) {
  int more;
  for (;;) {
    CIS_CALL(cis_io_next_line(r, &more));
    if (!more) break;
    char *s = r->line;
    while (isspace((unsigned char)*s)) s++;
    if (!*s || *s == '%') continue;
    CIS_CHECK(t->count < nnz, CIS_ERR_INPUT, "%s: line %ld: more entries than the %lld the "
              "size line announced", r->path, r->lineno, (long long)nnz);
    int64_t k = t->count;
    CIS_CALL(mtx_entry(r, t->n, &t->row[k], &t->col[k], &t->val[k]));
    t->count++;
  }
  CIS_CHECK(t->count == nnz, CIS_ERR_INPUT, "%s: the file ends after %lld of the %lld entries "
            "the size line announced (truncated?)", r->path, (long long)t->count,
            (long long)nnz);
  return CIS_OK;
}

cis_err cis_mtx_read(const char *path, cis_problem *p) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  cis_io_lines r = {0};
  cis_io_coo t = {0};
  int symmetric = 0;
  memset(p, 0, sizeof *p);
  CIS_TRY(cis_io_lines_open(&r, path, ""));
  CIS_TRY(mtx_banner(&r, &symmetric));
  CIS_TRY(mtx_size(&r, &t.n, &t.count));
  int64_t nnz = t.count;
  t.count = 0;
  CIS_TRY(cis_malloc(&t.row, (size_t)nnz, sizeof(int64_t), "Matrix Market rows"));
  CIS_TRY(cis_malloc(&t.col, (size_t)nnz, sizeof(int64_t), "Matrix Market columns"));
  CIS_TRY(cis_malloc(&t.val, (size_t)nnz, sizeof(double), "Matrix Market values"));
  CIS_TRY(mtx_entries(&r, &t, nnz));
  CIS_TRY(cis_io_csr_from_coo(&t, symmetric, path, "the matrix", &p->matrix));
  p->kind = CIS_PROBLEM_MATRIX;
  snprintf(p->source, sizeof p->source, "%s", path);
cleanup:
  cis_io_lines_close(&r);
  cis_free(&t.row);
  cis_free(&t.col);
  cis_free(&t.val);
  if (err != CIS_OK) cis_problem_free(p);
  return err;
}

/* ---- Matrix Market writing ---------------------------------------------------------------- */

/* The lower-triangle entries of chunk m (rows from row0 on) as lines of text in t (grown as
 * needed). */
typedef struct {
  char *s;
  size_t len, cap;
} text_buf;

static cis_err mtx_lines(const cis_csr *m, int64_t row0, text_buf *t) {
  t->len = 0;
  for (int64_t i = 0; i < m->n; i++)
    for (int64_t k = m->rowptr[i]; k < m->rowptr[i + 1]; k++) {
      if (m->col[k] > row0 + i) continue;
      if (t->cap - t->len < 64) { /* the longest line is 58 characters */
        size_t cap = CIS_MAX(2 * t->cap, (size_t)1 << 16);
        CIS_CALL(cis_realloc(&t->s, cap, 1, "Matrix Market text"));
        t->cap = cap;
      }
      t->len += (size_t)snprintf(t->s + t->len, t->cap - t->len, "%lld %d %.17g\n",
                                 (long long)(row0 + i) + 1, m->col[k] + 1, m->val[k]);
    }
  return CIS_OK;
}

/* Chunks [c0, c0 + count) of the rows into ch (sorted or not), and their lower-triangle
 * entries added to *nlow. */
static cis_err mtx_chunks(const cis_row_source *src, int64_t c0, int count, int sorted,
                          cis_csr *ch, int64_t *nlow) {
  CIS_CALL(src->rows(src, c0, count, sorted, ch));
  for (int i = 0; i < count; i++) {
    int64_t row0 = (c0 + i) * src->chunk_rows;
    for (int64_t r = 0; r < ch[i].n; r++)
      for (int64_t k = ch[i].rowptr[r]; k < ch[i].rowptr[r + 1]; k++)
        *nlow += ch[i].col[k] <= row0 + r;
  }
  return CIS_OK;
}

/* Two passes over the rows, `window` chunks at a time: the size line counts the entries of the
 * lower triangle; then each window's lines are formatted on OpenMP threads and written in row
 * order. */
static cis_err mtx_body(FILE *f, const char *tmp, const cis_io_matrix *mx) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  const cis_row_source *src = mx->src;
  int w = mx->window;
  cis_csr *ch = NULL;
  text_buf *tx = NULL;
  int64_t nlow = 0, seen = 0;
  CIS_TRY(cis_calloc(&ch, (size_t)w, sizeof *ch, "matrix chunks"));
  CIS_TRY(cis_calloc(&tx, (size_t)w, sizeof *tx, "Matrix Market text"));
  for (int64_t c0 = 0; c0 < src->nchunks; c0 += w)
    CIS_TRY(mtx_chunks(src, c0, (int)CIS_MIN((int64_t)w, src->nchunks - c0), 0, ch, &nlow));
  fprintf(f, "%%%%MatrixMarket matrix coordinate real symmetric\n"
             "%% written by cisolve: lower triangle, 1-based\n"
             "%lld %lld %lld\n", (long long)src->n, (long long)src->n, (long long)nlow);
  for (int64_t c0 = 0; c0 < src->nchunks; c0 += w) {
    int count = (int)CIS_MIN((int64_t)w, src->nchunks - c0);
    cis_worker_error we = {CIS_OK, ""};
    CIS_TRY(mtx_chunks(src, c0, count, 1, ch, &seen));
#pragma omp parallel for schedule(dynamic, 1)
    for (int i = 0; i < count; i++) {
      if (cis_worker_error_seen(&we)) continue;
      cis_err e = mtx_lines(&ch[i], (c0 + i) * src->chunk_rows, &tx[i]);
      if (e != CIS_OK) cis_worker_error_keep(&we, e);
    }
    if (we.code != CIS_OK) CIS_FAIL(we.code, "%s", we.msg);
    for (int i = 0; i < count; i++)
      if (tx[i].len > 0 && fwrite(tx[i].s, 1, tx[i].len, f) != tx[i].len)
        CIS_FAIL(CIS_ERR_IO, "cannot write %s: %s", tmp, strerror(errno));
  }
  if (seen != nlow)
    CIS_FAIL(CIS_ERR_INTERNAL, "%s: the rows gave %lld lower-triangle entries, then %lld", tmp,
             (long long)nlow, (long long)seen);
  if (ferror(f) || fflush(f) != 0)
    CIS_FAIL(CIS_ERR_IO, "cannot write %s: %s", tmp, strerror(errno));
cleanup:
  for (int i = 0; ch && i < w; i++) cis_csr_free(&ch[i]);
  for (int i = 0; tx && i < w; i++) cis_free(&tx[i].s);
  cis_free(&ch);
  cis_free(&tx);
  return err;
}

cis_err cis_mtx_write(const char *path, const cis_io_matrix *m) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  cis_io_tmp tmp = {{0}};
  FILE *f = NULL;
  CIS_TRY(cis_io_tmp_create(path, cis_io_create_stdio, &f, &tmp));
  CIS_TRY(mtx_body(f, tmp.name, m));
  CIS_TRY(cis_io_tmp_commit_stdio(&f, &tmp, path));
cleanup:
  if (f) fclose(f);
  if (err != CIS_OK) cis_io_tmp_discard(&tmp);
  return err;
}
