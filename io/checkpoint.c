#define _POSIX_C_SOURCE 200809L
#include "io/checkpoint.h"

#include <errno.h>
#include <hdf5.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "io/io_private.h"

#define CKPT_FORMAT "cisolve-checkpoint"
#define CKPT_VERSION 1

/* 64-bit FNV-1a over whole words, then the tail bytes: fast enough to hash the integrals of
 * any problem we can solve in well under a second. */
uint64_t cis_hash_bytes(uint64_t h, const void *data, size_t len) {
  const unsigned char *p = (const unsigned char *)data;
  const uint64_t prime = 0x100000001b3ULL;
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    h ^= w;
    h *= prime;
    h ^= h >> 29;
  }
  for (; i < len; i++) {
    h ^= p[i];
    h *= prime;
  }
  return h;
}

static uint64_t hash_strings(uint64_t h, const uint64_t *a, const uint64_t *b, int64_t count,
                             int nw) {
  if (a) h = cis_hash_bytes(h, a, (size_t)count * (size_t)nw * sizeof *a);
  if (b) h = cis_hash_bytes(h, b, (size_t)count * (size_t)nw * sizeof *b);
  return h;
}

void cis_fingerprint_make(const cis_problem *p, int64_t ndet, int64_t nref, int nroots,
                          int spin2, double spin_shift, cis_fingerprint *fp) {
  memset(fp, 0, sizeof *fp);
  uint64_t h = CIS_HASH_SEED;
  if (p->kind == CIS_PROBLEM_MATRIX) {
    const cis_csr *m = &p->matrix;
    h = cis_hash_bytes(h, &m->n, sizeof m->n);
    h = cis_hash_bytes(h, m->rowptr, (size_t)(m->n + 1) * sizeof *m->rowptr);
    h = cis_hash_bytes(h, m->col, (size_t)m->nnz * sizeof *m->col);
    h = cis_hash_bytes(h, m->val, (size_t)m->nnz * sizeof *m->val);
  } else {
    const cis_integrals *in = &p->ints;
    int norb = in->norb;
    h = cis_hash_bytes(h, &norb, sizeof norb);
    h = cis_hash_bytes(h, &in->ecore, sizeof in->ecore);
    h = cis_hash_bytes(h, in->h1e, (size_t)norb * (size_t)norb * sizeof(double));
    h = cis_hash_bytes(h, in->eri, (size_t)cis_eri_size(norb) * sizeof(double));
    fp->nalpha = in->nalpha;
    fp->nbeta = in->nbeta;
    const cis_space_spec *s = &p->space;
    uint64_t hs = CIS_HASH_SEED;
    int kind = (int)s->kind, level = s->kind == CIS_SPACE_TRUNCATED ? s->level : 0;
    hs = cis_hash_bytes(hs, &kind, sizeof kind);
    hs = cis_hash_bytes(hs, &level, sizeof level);
    if (s->kind == CIS_SPACE_MRCI) { /* the level and the model space */
      int mrci[3] = {s->level, s->cas_nelec, s->cas_norb};
      hs = cis_hash_bytes(hs, mrci, sizeof mrci);
    }
    /* the input's orbitals that --frozen / --active kept */
    const cis_orbital_window *w = &p->window;
    if (w->applied) {
      int win[3] = {w->norb_input, w->nfrozen, norb};
      h = cis_hash_bytes(h, win, sizeof win);
      h = cis_hash_bytes(h, w->kept, (size_t)norb * sizeof *w->kept);
    }
    int nw = cis_nwords(norb);
    hs = hash_strings(hs, s->ref_alpha, s->ref_beta, s->nref_dets, nw);
    if (s->kind == CIS_SPACE_LIST) hs = hash_strings(hs, s->det_alpha, s->det_beta, s->ndets, nw);
    if (s->irrep) hs = cis_hash_bytes(hs, &s->irrep, sizeof s->irrep); /* none: as before */
    fp->space = hs;
  }
  fp->integrals = h;
  fp->ndet = ndet;
  fp->nref = nref;
  fp->nroots = nroots;
  fp->spin2 = spin2 < 0 ? -1 : spin2;
  fp->spin_shift = spin2 < 0 ? 0.0 : spin_shift;
}

cis_err cis_fingerprint_check(const char *path, const cis_fingerprint *f,
                              const cis_fingerprint *r) {
  if (f->integrals != r->integrals)
    CIS_ERROR(CIS_ERR_INPUT,
              "checkpoint %s belongs to another problem: the integrals (or matrix) differ from "
              "this input's", path);
  if (f->nalpha != r->nalpha || f->nbeta != r->nbeta)
    CIS_ERROR(CIS_ERR_INPUT,
              "checkpoint %s was made with %d alpha and %d beta electrons (MS2 = %d); this run "
              "has %d and %d (MS2 = %d)", path, f->nalpha, f->nbeta, f->nalpha - f->nbeta,
              r->nalpha, r->nbeta, r->nalpha - r->nbeta);
  if (f->space != r->space || (r->ndet >= 0 && f->ndet != r->ndet)) {
    char has[64] = "";
    if (r->ndet >= 0) snprintf(has, sizeof has, "; this run has %lld", (long long)r->ndet);
    CIS_ERROR(CIS_ERR_INPUT,
              "checkpoint %s was made for another determinant space (%lld determinants%s): "
              "check --space, --irrep and the reference", path, (long long)f->ndet, has);
  }
  if (r->nref >= 0 && f->nref != r->nref)
    CIS_ERROR(CIS_ERR_INPUT,
              "checkpoint %s was made with a Reference region of %lld determinants; this run "
              "has %lld (check --ref-size)", path, (long long)f->nref, (long long)r->nref);
  if (f->spin2 != r->spin2 || f->spin_shift != r->spin_shift) {
    char a[64], b[64];
    snprintf(a, sizeof a, f->spin2 < 0 ? "no --spin" : "--spin %g --spin-shift %g", 0.5 * f->spin2,
             f->spin_shift);
    snprintf(b, sizeof b, r->spin2 < 0 ? "no --spin" : "--spin %g --spin-shift %g", 0.5 * r->spin2,
             r->spin_shift);
    CIS_ERROR(CIS_ERR_INPUT, "checkpoint %s was made with %s; this run has %s", path, a, b);
  }
  if (f->nroots != r->nroots)
    CIS_ERROR(CIS_ERR_INPUT, "checkpoint %s was made with --nroots %d; this run asks for %d",
              path, f->nroots, r->nroots);
  return CIS_OK;
}

/* ---- HDF5 helpers --------------------------------------------------------------------- */

static cis_err put_attr(hid_t loc, const char *name, hid_t type, const void *v, const char *path) {
  hid_t s = H5Screate(H5S_SCALAR);
  hid_t a = s >= 0 ? H5Acreate2(loc, name, type, s, H5P_DEFAULT, H5P_DEFAULT) : -1;
  herr_t st = a >= 0 ? H5Awrite(a, type, v) : -1;
  if (a >= 0) H5Aclose(a);
  if (s >= 0) H5Sclose(s);
  CIS_CHECK(st >= 0, CIS_ERR_IO, "%s: cannot write attribute %s", path, name);
  return CIS_OK;
}

static cis_err get_attr(hid_t loc, const char *name, hid_t type, void *v, const char *path) {
  CIS_CHECK(H5Aexists(loc, name) > 0, CIS_ERR_INPUT,
            "checkpoint %s: attribute %s is missing (not a cisolve checkpoint, or truncated)",
            path, name);
  hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
  herr_t st = a >= 0 ? H5Aread(a, type, v) : -1;
  if (a >= 0) H5Aclose(a);
  CIS_CHECK(st >= 0, CIS_ERR_INPUT, "checkpoint %s: cannot read attribute %s", path, name);
  return CIS_OK;
}

/* A 1-D or 2-D double dataset with a checksum attribute. */
static cis_err put_array(hid_t f, const char *name, const double *v, hsize_t d0, hsize_t d1,
                         const char *path) {
  hsize_t dims[2] = {d0, d1};
  int rank = d1 ? 2 : 1;
  size_t count = (size_t)d0 * (size_t)(d1 ? d1 : 1);
  hid_t s = H5Screate_simple(rank, dims, NULL);
  hid_t d = s >= 0 ? H5Dcreate2(f, name, H5T_IEEE_F64LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)
                   : -1;
  herr_t st = d >= 0 && count ? H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v)
                              : (d >= 0 ? 0 : -1);
  uint64_t sum = cis_hash_bytes(CIS_HASH_SEED, v, count * sizeof *v);
  cis_err e = CIS_OK;
  if (st >= 0) e = put_attr(d, "checksum", H5T_NATIVE_UINT64, &sum, path);
  if (d >= 0) H5Dclose(d);
  if (s >= 0) H5Sclose(s);
  CIS_CHECK(st >= 0, CIS_ERR_IO, "%s: cannot write dataset %s", path, name);
  return e;
}

static cis_err get_array(hid_t f, const char *name, size_t count, double **out, const char *path) {
  *out = NULL;
  CIS_CHECK(H5Lexists(f, name, H5P_DEFAULT) > 0, CIS_ERR_INPUT,
            "checkpoint %s: dataset %s is missing", path, name);
  hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
  CIS_CHECK(d >= 0, CIS_ERR_INPUT, "checkpoint %s: cannot open dataset %s", path, name);
  hid_t s = H5Dget_space(d);
  hssize_t npts = s >= 0 ? H5Sget_simple_extent_npoints(s) : -1;
  if (s >= 0) H5Sclose(s);
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  double *v = NULL;
  uint64_t sum = 0;
  if (npts < 0 || (size_t)npts != count)
    CIS_FAIL(CIS_ERR_INPUT, "checkpoint %s: dataset %s has %lld values, expected %zu", path, name,
             (long long)npts, count);
  CIS_TRY(cis_malloc(&v, count, sizeof *v, name));
  if (count && H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0)
    CIS_FAIL(CIS_ERR_INPUT, "checkpoint %s: dataset %s cannot be read (file truncated or corrupt)",
             path, name);
  CIS_TRY(get_attr(d, "checksum", H5T_NATIVE_UINT64, &sum, path));
  if (sum != cis_hash_bytes(CIS_HASH_SEED, v, count * sizeof *v))
    CIS_FAIL(CIS_ERR_INPUT, "checkpoint %s: dataset %s fails its checksum (file corrupt)", path,
             name);
  *out = v;
  v = NULL;
cleanup:
  cis_free(&v);
  H5Dclose(d);
  return err;
}


/* ---- write / read ---------------------------------------------------------------------- */

/* A checksum over every scalar of the header, so that a flipped bit there is caught too. */
static uint64_t header_sum(const cis_ckpt *c) {
  const cis_fingerprint *fp = &c->fp;
  uint64_t h = CIS_HASH_SEED;
  h = cis_hash_bytes(h, &fp->integrals, sizeof fp->integrals);
  h = cis_hash_bytes(h, &fp->space, sizeof fp->space);
  int ints[8] = {fp->nalpha, fp->nbeta, fp->nroots, c->iteration, c->converged, c->k, c->nhist,
                 fp->spin2};
  int64_t longs[4] = {fp->ndet, fp->nref, c->matvecs, c->n};
  h = cis_hash_bytes(h, ints, sizeof ints);
  h = cis_hash_bytes(h, longs, sizeof longs);
  h = cis_hash_bytes(h, &fp->spin_shift, sizeof fp->spin_shift);
  return cis_hash_bytes(h, &c->t_elapsed, sizeof c->t_elapsed);
}

static cis_err write_body(hid_t f, const cis_ckpt *c, const char *path) {
  const char *fmt = CKPT_FORMAT;
  hid_t st = H5Tcopy(H5T_C_S1);
  H5Tset_size(st, strlen(fmt) + 1);
  cis_err e = put_attr(f, "format", st, fmt, path);
  H5Tclose(st);
  CIS_CALL(e);
  int version = CKPT_VERSION;
  const cis_fingerprint *fp = &c->fp;
  CIS_CALL(put_attr(f, "version", H5T_NATIVE_INT, &version, path));
  CIS_CALL(put_attr(f, "fp_integrals", H5T_NATIVE_UINT64, &fp->integrals, path));
  CIS_CALL(put_attr(f, "fp_space", H5T_NATIVE_UINT64, &fp->space, path));
  CIS_CALL(put_attr(f, "nalpha", H5T_NATIVE_INT, &fp->nalpha, path));
  CIS_CALL(put_attr(f, "nbeta", H5T_NATIVE_INT, &fp->nbeta, path));
  CIS_CALL(put_attr(f, "ndet", H5T_NATIVE_INT64, &fp->ndet, path));
  CIS_CALL(put_attr(f, "nref", H5T_NATIVE_INT64, &fp->nref, path));
  CIS_CALL(put_attr(f, "nroots", H5T_NATIVE_INT, &fp->nroots, path));
  CIS_CALL(put_attr(f, "spin2", H5T_NATIVE_INT, &fp->spin2, path));
  CIS_CALL(put_attr(f, "spin_shift", H5T_NATIVE_DOUBLE, &fp->spin_shift, path));
  CIS_CALL(put_attr(f, "iteration", H5T_NATIVE_INT, &c->iteration, path));
  CIS_CALL(put_attr(f, "matvecs", H5T_NATIVE_INT64, &c->matvecs, path));
  CIS_CALL(put_attr(f, "converged", H5T_NATIVE_INT, &c->converged, path));
  CIS_CALL(put_attr(f, "n", H5T_NATIVE_INT64, &c->n, path));
  CIS_CALL(put_attr(f, "k", H5T_NATIVE_INT, &c->k, path));
  CIS_CALL(put_attr(f, "nhist", H5T_NATIVE_INT, &c->nhist, path));
  CIS_CALL(put_attr(f, "t_elapsed", H5T_NATIVE_DOUBLE, &c->t_elapsed, path));
  CIS_CALL(put_array(f, "X", c->X, (hsize_t)c->k, (hsize_t)c->n, path));
  CIS_CALL(put_array(f, "HX", c->HX, (hsize_t)c->k, (hsize_t)c->n, path));
  CIS_CALL(put_array(f, "evals", c->evals, (hsize_t)c->k, 0, path));
  CIS_CALL(put_array(f, "rnorm", c->rnorm, (hsize_t)c->k, 0, path));
  CIS_CALL(put_array(f, "history_energies", c->hist_evals, (hsize_t)c->nhist, (hsize_t)c->k, path));
  CIS_CALL(put_array(f, "history_residuals", c->hist_rnorm, (hsize_t)c->nhist, (hsize_t)c->k, path));
  uint64_t hsum = header_sum(c);
  CIS_CALL(put_attr(f, "header_checksum", H5T_NATIVE_UINT64, &hsum, path));
  /* The last thing written: a reader that finds it knows every dataset before it is there. */
  int complete = 1;
  CIS_CALL(put_attr(f, "complete", H5T_NATIVE_INT, &complete, path));
  return CIS_OK;
}

static cis_err ckpt_body(hid_t f, const char *tmp, const void *c) {
  return write_body(f, (const cis_ckpt *)c, tmp);
}

cis_err cis_ckpt_write(const char *path, const cis_ckpt *c) {
  CIS_CALL(cis_h5_write_atomic(path, ckpt_body, c));
  return CIS_OK;
}

/* The attributes: format, version, fingerprint, counts; checked against the header checksum. */
static cis_err read_header(hid_t f, cis_ckpt *c, const char *path) {
  char fmt[64] = {0};
  CIS_CHECK(H5Aexists(f, "format") > 0, CIS_ERR_INPUT,
            "%s is not a cisolve checkpoint (no 'format' attribute)", path);
  hid_t st = H5Tcopy(H5T_C_S1);
  H5Tset_size(st, sizeof fmt - 1);
  cis_err e = get_attr(f, "format", st, fmt, path);
  H5Tclose(st);
  CIS_CALL(e);
  CIS_CHECK(strcmp(fmt, CKPT_FORMAT) == 0, CIS_ERR_INPUT,
            "%s is not a cisolve checkpoint (format '%s')", path, fmt);
  int version = 0, complete = 0;
  CIS_CALL(get_attr(f, "version", H5T_NATIVE_INT, &version, path));
  CIS_CHECK(version == CKPT_VERSION, CIS_ERR_INPUT,
            "checkpoint %s has version %d; this cisolve reads version %d", path, version,
            CKPT_VERSION);
  CIS_CHECK(H5Aexists(f, "complete") > 0, CIS_ERR_INPUT,
            "checkpoint %s is incomplete (its writer was interrupted)", path);
  CIS_CALL(get_attr(f, "complete", H5T_NATIVE_INT, &complete, path));
  cis_fingerprint *fp = &c->fp;
  CIS_CALL(get_attr(f, "fp_integrals", H5T_NATIVE_UINT64, &fp->integrals, path));
  CIS_CALL(get_attr(f, "fp_space", H5T_NATIVE_UINT64, &fp->space, path));
  CIS_CALL(get_attr(f, "nalpha", H5T_NATIVE_INT, &fp->nalpha, path));
  CIS_CALL(get_attr(f, "nbeta", H5T_NATIVE_INT, &fp->nbeta, path));
  CIS_CALL(get_attr(f, "ndet", H5T_NATIVE_INT64, &fp->ndet, path));
  CIS_CALL(get_attr(f, "nref", H5T_NATIVE_INT64, &fp->nref, path));
  CIS_CALL(get_attr(f, "nroots", H5T_NATIVE_INT, &fp->nroots, path));
  CIS_CALL(get_attr(f, "spin2", H5T_NATIVE_INT, &fp->spin2, path));
  CIS_CALL(get_attr(f, "spin_shift", H5T_NATIVE_DOUBLE, &fp->spin_shift, path));
  CIS_CALL(get_attr(f, "iteration", H5T_NATIVE_INT, &c->iteration, path));
  CIS_CALL(get_attr(f, "matvecs", H5T_NATIVE_INT64, &c->matvecs, path));
  CIS_CALL(get_attr(f, "converged", H5T_NATIVE_INT, &c->converged, path));
  CIS_CALL(get_attr(f, "n", H5T_NATIVE_INT64, &c->n, path));
  CIS_CALL(get_attr(f, "k", H5T_NATIVE_INT, &c->k, path));
  CIS_CALL(get_attr(f, "nhist", H5T_NATIVE_INT, &c->nhist, path));
  CIS_CALL(get_attr(f, "t_elapsed", H5T_NATIVE_DOUBLE, &c->t_elapsed, path));
  uint64_t hsum = 0;
  CIS_CALL(get_attr(f, "header_checksum", H5T_NATIVE_UINT64, &hsum, path));
  CIS_CHECK(hsum == header_sum(c), CIS_ERR_INPUT,
            "checkpoint %s: its header fails its checksum (file corrupt)", path);
  CIS_CHECK(c->n > 0 && c->k > 0 && c->k <= 100000 && c->nhist >= 0 && c->nhist < 100000000,
            CIS_ERR_INPUT, "checkpoint %s: sizes are corrupt (n=%lld, k=%d)", path,
            (long long)c->n, c->k);
  return CIS_OK;
}

static cis_err read_body(hid_t f, cis_ckpt *c, const char *path, int header_only) {
  CIS_CALL(read_header(f, c, path));
  if (header_only) return CIS_OK;
  size_t nk = (size_t)c->n * (size_t)c->k, hk = (size_t)c->nhist * (size_t)c->k;
  CIS_CALL(get_array(f, "X", nk, &c->X, path));
  CIS_CALL(get_array(f, "HX", nk, &c->HX, path));
  CIS_CALL(get_array(f, "evals", (size_t)c->k, &c->evals, path));
  CIS_CALL(get_array(f, "rnorm", (size_t)c->k, &c->rnorm, path));
  CIS_CALL(get_array(f, "history_energies", hk, &c->hist_evals, path));
  CIS_CALL(get_array(f, "history_residuals", hk, &c->hist_rnorm, path));
  return CIS_OK;
}

static cis_err ckpt_read(const char *path, cis_ckpt *c, int header_only) {
  memset(c, 0, sizeof *c);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  FILE *probe = fopen(path, "rb");
  CIS_CHECK(probe, CIS_ERR_INPUT, "cannot open checkpoint %s: %s", path, strerror(errno));
  fclose(probe);
#if H5_VERSION_GE(1, 12, 0)
  htri_t is_h5 = H5Fis_accessible(path, H5P_DEFAULT);
#else
  htri_t is_h5 = H5Fis_hdf5(path);
#endif
  CIS_CHECK(is_h5 > 0, CIS_ERR_INPUT,
            "checkpoint %s is not a readable HDF5 file (truncated or corrupt)", path);
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  CIS_CHECK(f >= 0, CIS_ERR_INPUT, "checkpoint %s cannot be opened (truncated or corrupt)", path);
  cis_err e = read_body(f, c, path, header_only);
  H5Fclose(f);
  if (e != CIS_OK) {
    cis_ckpt_free(c);
    cis_error_trace(__FILE__, __LINE__, __func__);
  }
  return e;
}

cis_err cis_ckpt_read(const char *path, cis_ckpt *c) { return ckpt_read(path, c, 0); }

cis_err cis_ckpt_check(const char *path, const cis_fingerprint *fp) {
  cis_ckpt c;
  CIS_CALL(ckpt_read(path, &c, 1));
  CIS_CALL(cis_fingerprint_check(path, &c.fp, fp));
  return CIS_OK;
}

const double *cis_ckpt_previous_evals(const cis_ckpt *c) {
  if (c->nhist < 2 || !c->hist_evals || !c->evals) return c->evals;
  const double *last = c->hist_evals + (size_t)(c->nhist - 1) * (size_t)c->k;
  if (memcmp(last, c->evals, (size_t)c->k * sizeof *last) != 0) return c->evals;
  return last - c->k;
}

void cis_ckpt_free(cis_ckpt *c) {
  if (!c) return;
  cis_free(&c->X);
  cis_free(&c->HX);
  cis_free(&c->evals);
  cis_free(&c->rnorm);
  cis_free(&c->hist_evals);
  cis_free(&c->hist_rnorm);
}
