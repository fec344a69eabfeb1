#include "base/problem.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/util.h"

void cis_csr_free(cis_csr *m) {
  if (!m) return;
  cis_free(&m->rowptr);
  cis_free(&m->col);
  cis_free(&m->val);
  m->n = m->nnz = 0;
}

static int by_col(const void *a, const void *b) {
  int32_t x = ((const cis_csr_entry *)a)->col, y = ((const cis_csr_entry *)b)->col;
  return (x > y) - (x < y);
}

cis_err cis_csr_sort_row(int32_t *col, double *val, int64_t len, cis_csr_entry **tmp,
                         int64_t *cap) {
  int sorted = 1;
  for (int64_t t = 1; t < len && sorted; t++) sorted = col[t - 1] <= col[t];
  if (sorted) return CIS_OK;
  if (len > *cap) {
    CIS_CALL(cis_realloc(tmp, (size_t)len, sizeof **tmp, "row sort"));
    *cap = len;
  }
  cis_csr_entry *e = *tmp;
  for (int64_t t = 0; t < len; t++) e[t] = (cis_csr_entry){col[t], val[t]};
  qsort(e, (size_t)len, sizeof *e, by_col);
  for (int64_t t = 0; t < len; t++) col[t] = e[t].col, val[t] = e[t].val;
  return CIS_OK;
}

cis_err cis_csr_sort_rows(cis_csr *m) {
  cis_csr_entry *tmp = NULL;
  int64_t cap = 0;
  cis_err err = CIS_OK;
  for (int64_t i = 0; i < m->n && err == CIS_OK; i++)
    err = cis_csr_sort_row(m->col + m->rowptr[i], m->val + m->rowptr[i],
                           m->rowptr[i + 1] - m->rowptr[i], &tmp, &cap);
  cis_free(&tmp);
  return err;
}

void cis_space_spec_free(cis_space_spec *s) {
  cis_free(&s->ref_alpha);
  cis_free(&s->ref_beta);
  cis_free(&s->det_alpha);
  cis_free(&s->det_beta);
  memset(s, 0, sizeof *s);
}

void cis_problem_free(cis_problem *p) {
  if (!p) return;
  cis_free(&p->ints.h1e);
  cis_free(&p->ints.eri);
  cis_free(&p->ints.orbsym);
  cis_space_spec_free(&p->space);
  cis_free(&p->window.kept);
  cis_csr_free(&p->matrix);
  cis_free(&p->orbitals.molden_header);
  cis_free(&p->orbitals.active);
  cis_free(&p->orbitals.core);
  memset(p, 0, sizeof *p);
}

int cis_space_by_name(const char *name, cis_space_kind *kind, int *level) {
  static const char *named[] = {"cis", "cisd", "cisdt", "cisdtq"};
  *level = 0;
  if (strcasecmp(name, "fci") == 0) {
    *kind = CIS_SPACE_FCI;
    return 1;
  }
  if (strcasecmp(name, "list") == 0) {
    *kind = CIS_SPACE_LIST;
    return 1;
  }
  *kind = CIS_SPACE_TRUNCATED;
  for (int i = 0; i < 4; i++)
    if (strcasecmp(name, named[i]) == 0) return *level = i + 1, 1;
  if (strncasecmp(name, "mrci", 4) == 0) {
    *kind = CIS_SPACE_MRCI;
    name += 2; /* "ci<N>" follows */
  }
  if (strncasecmp(name, "ci", 2) != 0 || !name[2]) return 0;
  long n = 0;
  for (const char *c = name + 2; *c; c++) {
    if (!isdigit((unsigned char)*c) || n > CIS_SPACE_MAX_LEVEL) return 0;
    n = 10 * n + (*c - '0');
  }
  if (n < 1 || n > CIS_SPACE_MAX_LEVEL) return 0;
  *level = (int)n;
  return 1;
}

cis_err cis_problem_check_spin(const cis_integrals *I, int spin2) {
  int nelec = I->nalpha + I->nbeta, ms2 = abs(I->nalpha - I->nbeta);
  int most = nelec < 2 * I->norb - nelec ? nelec : 2 * I->norb - nelec;
  CIS_CHECK(spin2 >= ms2, CIS_ERR_USAGE,
            "--spin %g is impossible with Ms = %g: the space has MS2 = %d, so S >= %g "
            "(use --ms2 to choose another Ms)", 0.5 * spin2, 0.5 * ms2, ms2, 0.5 * ms2);
  CIS_CHECK(spin2 % 2 == nelec % 2, CIS_ERR_USAGE,
            "--spin %g is impossible with %d electrons: S must be %s", 0.5 * spin2, nelec,
            nelec % 2 ? "half-integer (0.5, 1.5, ...)" : "an integer (0, 1, 2, ...)");
  CIS_CHECK(spin2 <= most, CIS_ERR_USAGE,
            "--spin %g is impossible with %d electrons in %d orbitals: at most %d of them are "
            "unpaired (min(nelec, 2*norb - nelec)), so S <= %g", 0.5 * spin2, nelec, I->norb,
            most, 0.5 * most);
  return CIS_OK;
}

cis_err cis_csr_copy_rows(const cis_csr *m, int64_t row0, int64_t nrows, cis_csr *out) {
  int64_t q0 = m->rowptr[row0], nnz = m->rowptr[row0 + nrows] - q0;
  CIS_CALL(cis_realloc(&out->rowptr, (size_t)nrows + 1, sizeof *out->rowptr, "matrix rows"));
  CIS_CALL(cis_realloc(&out->col, (size_t)nnz, sizeof *out->col, "matrix rows"));
  CIS_CALL(cis_realloc(&out->val, (size_t)nnz, sizeof *out->val, "matrix rows"));
  for (int64_t i = 0; i <= nrows; i++) out->rowptr[i] = m->rowptr[row0 + i] - q0;
  if (nnz > 0) {
    memcpy(out->col, m->col + q0, (size_t)nnz * sizeof *out->col);
    memcpy(out->val, m->val + q0, (size_t)nnz * sizeof *out->val);
  }
  out->n = nrows;
  out->nnz = nnz;
  return CIS_OK;
}

static cis_err csr_chunks(const cis_row_source *s, int64_t c0, int count, int sorted,
                          cis_csr *out) {
  (void)sorted; /* the matrix's own order, as cis_csr promises */
  for (int i = 0; i < count; i++) {
    int64_t r0 = (c0 + i) * s->chunk_rows;
    CIS_CALL(cis_csr_copy_rows(s->ctx, r0, CIS_MIN(s->chunk_rows, s->n - r0), &out[i]));
  }
  return CIS_OK;
}

void cis_csr_row_source(const cis_csr *m, cis_row_source *src) {
  int64_t per_row = m->n > 0 ? CIS_MAX((int64_t)1, m->nnz / m->n) : 1;
  memset(src, 0, sizeof *src);
  src->n = m->n;
  src->nnz = m->nnz;
  src->chunk_rows = CIS_MAX((int64_t)1, CIS_MIN(m->n, ((int64_t)1 << 20) / per_row));
  src->nchunks = (m->n + src->chunk_rows - 1) / src->chunk_rows;
  src->chunk_nnz = 0;
  for (int64_t c = 0; c < src->nchunks; c++) {
    int64_t r0 = c * src->chunk_rows, r1 = CIS_MIN(m->n, r0 + src->chunk_rows);
    src->chunk_nnz = CIS_MAX(src->chunk_nnz, m->rowptr[r1] - m->rowptr[r0]);
  }
  src->ctx = m;
  src->rows = csr_chunks;
}
