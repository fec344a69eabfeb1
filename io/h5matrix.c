/* cisolve: the /matrix group of an input.h5 (docs/input-format.md, storage "full"), written
 * from a row source a window of chunks at a time: --export-matrix FILE.h5. */
#include <hdf5.h>

#include "base/util.h"
#include "io/io_private.h"

/* A 1-D dataset of `len` elements of file type `ftype`, written later a range at a time. */
static cis_err create_1d(hid_t loc, const char *path, const char *name, hid_t ftype,
                         int64_t len, hid_t *ds) {
  hsize_t d = (hsize_t)len;
  hid_t sp = H5Screate_simple(1, &d, NULL);
  *ds = sp < 0 ? -1 : H5Dcreate2(loc, name, ftype, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  cis_h5_close(&sp);
  CIS_CHECK(*ds >= 0, CIS_ERR_IO, "%s: cannot create dataset %s", path, name);
  return CIS_OK;
}

static cis_err write_range(hid_t ds, const char *path, const char *name, hid_t mtype,
                           int64_t start, int64_t count, const void *buf) {
  cis_err err = CIS_OK;
  if (count == 0) return CIS_OK;
  CIS_CLEANUP_FUNCTION;
  hsize_t s = (hsize_t)start, c = (hsize_t)count;
  hid_t fs = H5Dget_space(ds), ms = H5Screate_simple(1, &c, NULL);
  if (fs < 0 || ms < 0 || H5Sselect_hyperslab(fs, H5S_SELECT_SET, &s, NULL, &c, NULL) < 0 ||
      H5Dwrite(ds, mtype, ms, fs, H5P_DEFAULT, buf) < 0)
    CIS_FAIL(CIS_ERR_IO, "%s: cannot write %s[%lld..%lld]", path, name, (long long)start,
             (long long)(start + count - 1));
cleanup:
  cis_h5_close(&ms);
  cis_h5_close(&fs);
  return err;
}

/* The datasets are created at their full sizes and filled a window of chunks at a time. */
cis_err cis_h5_write_matrix(hid_t f, const char *path, const cis_io_matrix *mx) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  const cis_row_source *src = mx->src;
  hid_t g = -1, dp = -1, di = -1, dd = -1;
  cis_csr *ch = NULL;
  int64_t *ptr = NULL, row = 0, at = 0;
  CIS_TRY(cis_h5_attr_string(f, path, "format", "cisolve-input"));
  CIS_TRY(cis_h5_attr_int(f, path, "version", 1));
  CIS_TRY(cis_h5_group(f, path, "matrix", &g));
  CIS_TRY(cis_h5_attr_int(g, path, "n", src->n));
  CIS_TRY(cis_h5_attr_string(g, path, "storage", "full"));
  CIS_TRY(create_1d(g, path, "indptr", H5T_STD_I64LE, src->n + 1, &dp));
  CIS_TRY(create_1d(g, path, "indices", H5T_STD_I32LE, src->nnz, &di));
  CIS_TRY(create_1d(g, path, "data", H5T_IEEE_F64LE, src->nnz, &dd));
  CIS_TRY(cis_calloc(&ch, (size_t)mx->window, sizeof *ch, "matrix chunks"));
  CIS_TRY(cis_malloc(&ptr, (size_t)src->chunk_rows + 1, sizeof *ptr, "matrix row pointers"));
  for (int64_t c0 = 0; c0 < src->nchunks; c0 += mx->window) {
    int count = (int)CIS_MIN((int64_t)mx->window, src->nchunks - c0);
    CIS_TRY(src->rows(src, c0, count, 1, ch));
    for (int i = 0; i < count; i++) {
      const cis_csr *c = &ch[i];
      if (row + c->n > src->n || at + c->nnz > src->nnz) break;
      for (int64_t l = 0; l < c->n; l++) ptr[l] = at + c->rowptr[l];
      CIS_TRY(write_range(dp, path, "/matrix/indptr", H5T_NATIVE_INT64, row, c->n, ptr));
      CIS_TRY(write_range(di, path, "/matrix/indices", H5T_NATIVE_INT32, at, c->nnz, c->col));
      CIS_TRY(write_range(dd, path, "/matrix/data", H5T_NATIVE_DOUBLE, at, c->nnz, c->val));
      row += c->n;
      at += c->nnz;
    }
  }
  if (row != src->n || at != src->nnz)
    CIS_FAIL(CIS_ERR_INTERNAL, "%s: the matrix's chunks held %lld rows and %lld entries, not "
             "the %lld and %lld announced", path, (long long)row, (long long)at,
             (long long)src->n, (long long)src->nnz);
  CIS_TRY(write_range(dp, path, "/matrix/indptr", H5T_NATIVE_INT64, src->n, 1, &at));
cleanup:
  for (int i = 0; ch && i < mx->window; i++) cis_csr_free(&ch[i]);
  cis_free(&ch);
  cis_free(&ptr);
  cis_h5_close(&dd);
  cis_h5_close(&di);
  cis_h5_close(&dp);
  cis_h5_close(&g);
  return err;
}

static cis_err matrix_body(hid_t f, const char *tmp, const void *m) {
  return cis_h5_write_matrix(f, tmp, (const cis_io_matrix *)m);
}

cis_err cis_h5matrix_write(const char *path, const cis_io_matrix *m) {
  CIS_CALL(cis_h5_write_atomic(path, matrix_body, m));
  return CIS_OK;
}
