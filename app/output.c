/* cisolve: output.h5 (docs/output-format.md). Written under a temporary name beside PATH
 * (io/io_private.h), flushed, closed and renamed over PATH, so a reader (or a batch script
 * polling for the file) never sees a half-written one; on any error the temporary file is
 * removed.
 */
#define _POSIX_C_SOURCE 200809L
#include "app/output.h"

#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "hamiltonian/space.h"
#include "io/io_private.h"

/* Rows of determinant strings are gathered and written this many bytes at a time, so a
 * space of 10^9 determinants needs no second copy of its strings. */
#define ROWS_BYTES (8 << 20)

static cis_err write_rows(hid_t ds, const char *path, const char *name, hid_t mtype,
                          int64_t row0, int64_t nrows, int64_t ncols, const void *buf) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  hsize_t start[2] = {(hsize_t)row0, 0}, count[2] = {(hsize_t)nrows, (hsize_t)ncols};
  hid_t fs = H5Dget_space(ds), ms = H5Screate_simple(2, count, NULL);
  if (fs < 0 || ms < 0 ||
      H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
      H5Dwrite(ds, mtype, ms, fs, H5P_DEFAULT, buf) < 0)
    CIS_FAIL(CIS_ERR_IO, "%s: cannot write rows %lld..%lld of %s", path, (long long)row0,
             (long long)(row0 + nrows - 1), name);
cleanup:
  cis_h5_close(&ms);
  cis_h5_close(&fs);
  return err;
}

static cis_err create_2d(hid_t loc, const char *path, const char *name, hid_t ftype,
                         int64_t rows, int64_t cols, hid_t *ds) {
  hsize_t d[2] = {(hsize_t)rows, (hsize_t)cols};
  hid_t sp = H5Screate_simple(2, d, NULL);
  *ds = sp < 0 ? -1 : H5Dcreate2(loc, name, ftype, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  cis_h5_close(&sp);
  CIS_CHECK(*ds >= 0, CIS_ERR_IO, "%s: cannot create dataset %s", path, name);
  return CIS_OK;
}

/* Vectors of an explicit matrix go back to the input's row order: our row i is input row
 * perm[i]. */
static cis_err write_vectors(hid_t g, const char *path, const cis_output *o) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  const cis_hmat *h = o->h;
  const cis_eig_result *r = o->res;
  double *v = NULL;
  hid_t ds = -1;
  int64_t d[2] = {r->nroots, h->n};
  if (!h->perm) return cis_h5_write(g, path, "vectors", H5T_NATIVE_DOUBLE, 2, d, r->evecs);
  CIS_TRY(cis_malloc(&v, (size_t)h->n, sizeof *v, "output vector"));
  CIS_TRY(create_2d(g, path, "vectors", H5T_IEEE_F64LE, r->nroots, h->n, &ds));
  for (int j = 0; j < r->nroots; j++) {
    const double *c = r->evecs + (int64_t)j * h->n;
    for (int64_t i = 0; i < h->n; i++) v[h->perm[i]] = c[i];
    CIS_TRY(write_rows(ds, path, "/results/vectors", H5T_NATIVE_DOUBLE, j, 1, h->n, v));
  }
cleanup:
  cis_h5_close(&ds);
  cis_free(&v);
  return err;
}

static cis_err results_arrays(hid_t g, const char *path, const cis_output *o) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  const cis_eig_result *r = o->res;
  int64_t k = r->nroots;
  double *e = NULL;
  int8_t *conv = NULL;
  CIS_TRY(cis_malloc(&e, (size_t)k, sizeof *e, "energies"));
  CIS_TRY(cis_malloc(&conv, (size_t)k, sizeof *conv, "convergence flags"));
  for (int64_t j = 0; j < k; j++) {
    e[j] = r->evals[j] + o->h->ecore;
    conv[j] = (int8_t)(r->converged[j] != 0);
  }
  CIS_TRY(cis_h5_write(g, path, "energies", H5T_NATIVE_DOUBLE, 1, &k, e));
  CIS_TRY(cis_h5_write(g, path, "residual_norms", H5T_NATIVE_DOUBLE, 1, &k, r->rnorm));
  CIS_TRY(cis_h5_write(g, path, "converged", H5T_NATIVE_INT8, 1, &k, conv));
  if (o->s2) CIS_TRY(cis_h5_write(g, path, "s2", H5T_NATIVE_DOUBLE, 1, &k, o->s2));
  CIS_TRY(write_vectors(g, path, o));
cleanup:
  cis_free(&e);
  cis_free(&conv);
  return err;
}

static cis_err write_int8(hid_t g, const char *path, const char *name, int64_t k,
                          const int *v) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  int8_t *b = NULL;
  CIS_TRY(cis_malloc(&b, (size_t)k, sizeof *b, name));
  for (int64_t j = 0; j < k; j++) b[j] = (int8_t)(v[j] != 0);
  CIS_TRY(cis_h5_write(g, path, name, H5T_NATIVE_INT8, 1, &k, b));
cleanup:
  cis_free(&b);
  return err;
}

/* A float64 dataset of rank dims[0] .. dims[rank-1] (rank <= 5). */
static cis_err write_nd(hid_t g, const char *path, const char *name, int rank,
                        const int64_t *dims, const double *data) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  hsize_t d[5];
  for (int i = 0; i < rank; i++) d[i] = (hsize_t)dims[i];
  hid_t sp = H5Screate_simple(rank, d, NULL), ds = -1;
  if (sp < 0) CIS_FAIL(CIS_ERR_IO, "%s: cannot create a dataspace for %s", path, name);
  ds = H5Dcreate2(g, name, H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (ds < 0 || H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
    CIS_FAIL(CIS_ERR_IO, "%s: cannot write dataset %s", path, name);
cleanup:
  cis_h5_close(&ds);
  cis_h5_close(&sp);
  return err;
}

/* Density matrices (--rdm1, --rdm2, --trans-rdm): per root, then per transition pair. */
static cis_err results_rdms(hid_t g, const char *path, int64_t k, const cis_analysis *a) {
  static const char *d2[3] = {"dm2aa", "dm2ab", "dm2bb"};
  static const char *t2[4] = {"trans_dm2aa", "trans_dm2ab", "trans_dm2ba", "trans_dm2bb"};
  int64_t no = a->norb, d3[3] = {k, no, no}, d5[5] = {k, no, no, no, no}, d2n[2] = {k, no};
  CIS_CALL(write_nd(g, path, "rdm1", 3, d3, a->rdm1));
  CIS_CALL(cis_h5_write(g, path, "natural_occupations", H5T_NATIVE_DOUBLE, 2, d2n, a->noons));
  if (a->nos) CIS_CALL(write_nd(g, path, "natural_orbitals", 3, d3, a->nos));
  if (a->dm1a) CIS_CALL(write_nd(g, path, "dm1a", 3, d3, a->dm1a));
  if (a->dm1b) CIS_CALL(write_nd(g, path, "dm1b", 3, d3, a->dm1b));
  for (int i = 0; i < 3; i++)
    if (a->dm2[i]) CIS_CALL(write_nd(g, path, d2[i], 5, d5, a->dm2[i]));
  if (!a->ntrans) return CIS_OK;
  int64_t t = a->ntrans, tp[2] = {t, 2}, t3[3] = {t, no, no}, t5[5] = {t, no, no, no, no};
  CIS_CALL(cis_h5_write(g, path, "trans_pairs", H5T_NATIVE_INT32, 2, tp, a->trans_pairs));
  CIS_CALL(write_nd(g, path, "trans_dm1a", 3, t3, a->tdm1[0]));
  CIS_CALL(write_nd(g, path, "trans_dm1b", 3, t3, a->tdm1[1]));
  for (int i = 0; i < 4; i++)
    if (a->tdm2[i]) CIS_CALL(write_nd(g, path, t2[i], 5, t5, a->tdm2[i]));
  return CIS_OK;
}

/* Spin flags, degenerate groups, density matrices and the root check, when computed. */
static cis_err results_analysis(hid_t g, const char *path, const cis_output *o,
                                const cis_analysis *a) {
  int64_t k = o->res->nroots;
  if (!a) return CIS_OK;
  if (a->spin_ok) {
    CIS_CALL(write_int8(g, path, "spin_ok", k, a->spin_ok));
    CIS_CALL(cis_h5_attr_double(g, path, "spin_target_s2", a->spin_s2));
  }
  if (a->degen_group) {
    int32_t *d = NULL;
    CIS_CALL(cis_malloc(&d, (size_t)k, sizeof *d, "degenerate groups"));
    for (int64_t j = 0; j < k; j++) d[j] = a->degen_group[j];
    cis_err e = cis_h5_write(g, path, "degenerate_group", H5T_NATIVE_INT32, 1, &k, d);
    cis_free(&d);
    CIS_CALL(e);
  }
  if (a->rdm1) CIS_CALL(results_rdms(g, path, k, a));
  if (a->check_blocks) {
    const cis_blockcheck *b = &a->blocks;
    CIS_CALL(cis_h5_attr_int(g, path, "check_blocks", b->nblocks));
    CIS_CALL(cis_h5_attr_int(g, path, "check_blocks_searched", b->searched));
    CIS_CALL(cis_h5_attr_int(g, path, "check_blocks_beyond", b->beyond));
    CIS_CALL(cis_h5_attr_int(g, path, "check_blocks_bounded", b->bounded));
    CIS_CALL(cis_h5_attr_int(g, path, "check_blocks_missed", b->missed));
    CIS_CALL(cis_h5_attr_int(g, path, "check_blocks_unsettled", b->unsettled));
    CIS_CALL(cis_h5_attr_double(g, path, "check_blocks_window", b->window));
    CIS_CALL(cis_h5_attr_int(g, path, "check_blocks_matvecs", b->matvecs));
  }
  if (a->check_roots) {
    CIS_CALL(cis_h5_attr_int(g, path, "check_roots_missed", a->missed));
    CIS_CALL(cis_h5_attr_int(g, path, "check_roots_conclusive", a->check_conclusive));
    CIS_CALL(cis_h5_attr_double(g, path, "check_roots_lowest", a->check_lowest));
    CIS_CALL(cis_h5_attr_double(g, path, "check_roots_threshold", a->check_threshold));
  }
  return CIS_OK;
}

static cis_err write_results(hid_t f, const char *path, const cis_output *o,
                             const cis_analysis *an) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  const cis_eig_result *r = o->res;
  hid_t g = -1;
  CIS_TRY(cis_h5_group(f, path, "results", &g));
  CIS_TRY(results_arrays(g, path, o));
  CIS_TRY(results_analysis(g, path, o, an));
  CIS_TRY(cis_h5_attr_int(g, path, "nroots", r->nroots));
  CIS_TRY(cis_h5_attr_int(g, path, "iterations", r->iterations));
  CIS_TRY(cis_h5_attr_int(g, path, "matvecs", r->matvecs));
  CIS_TRY(cis_h5_attr_int(g, path, "all_converged", r->all_converged != 0));
  CIS_TRY(cis_h5_attr_double(g, path, "t_total", r->t_total));
  CIS_TRY(cis_h5_attr_double(g, path, "t_matvec", r->t_matvec));
  CIS_TRY(cis_h5_attr_double(g, path, "t_ortho", r->t_ortho));
  CIS_TRY(cis_h5_attr_string(g, path, "energy_unit", "hartree"));
cleanup:
  cis_h5_close(&g);
  return err;
}

static cis_err write_strings(hid_t g, const char *path, const char *name, const cis_space *s,
                             int alpha) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  int64_t n = cis_space_ndet(s), nw = cis_space_nwords(s);
  int64_t chunk = CIS_MAX(1, CIS_MIN(n, ROWS_BYTES / (8 * nw)));
  uint64_t *buf = NULL;
  hid_t ds = -1;
  CIS_TRY(cis_malloc(&buf, (size_t)(chunk * nw), sizeof *buf, "determinant strings"));
  CIS_TRY(create_2d(g, path, name, H5T_STD_U64LE, n, nw, &ds));
  for (int64_t i0 = 0; i0 < n; i0 += chunk) {
    int64_t m = CIS_MIN(chunk, n - i0);
    for (int64_t i = 0; i < m; i++)
      memcpy(buf + i * nw, alpha ? cis_space_alpha(s, i0 + i) : cis_space_beta(s, i0 + i),
             (size_t)nw * sizeof *buf);
    CIS_TRY(write_rows(ds, path, name, H5T_NATIVE_UINT64, i0, m, nw, buf));
  }
cleanup:
  cis_h5_close(&ds);
  cis_free(&buf);
  return err;
}

static cis_err write_determinants(hid_t f, const char *path, const cis_space *s) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  hid_t g = -1;
  CIS_TRY(cis_h5_group(f, path, "determinants", &g));
  CIS_TRY(write_strings(g, path, "alpha", s, 1));
  CIS_TRY(write_strings(g, path, "beta", s, 0));
  CIS_TRY(cis_h5_attr_string(g, path, "layout", "orbital p is bit p%64 of word p/64"));
cleanup:
  cis_h5_close(&g);
  return err;
}

static cis_err write_problem(hid_t f, const char *path, const cis_output *o) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  const cis_hmat *h = o->h;
  hid_t g = -1;
  CIS_TRY(cis_h5_group(f, path, "problem", &g));
  CIS_TRY(cis_h5_attr_string(g, path, "kind", h->space ? "integrals" : "matrix"));
  CIS_TRY(cis_h5_attr_string(g, path, "source", o->opt ? o->opt->input : ""));
  CIS_TRY(cis_h5_attr_int(g, path, "ndet", h->n));
  CIS_TRY(cis_h5_attr_int(g, path, "nref", h->nref));
  CIS_TRY(cis_h5_attr_double(g, path, "ecore", h->ecore));
  if (h->space) {
    CIS_TRY(cis_h5_attr_int(g, path, "norb", cis_space_norb(h->space)));
    CIS_TRY(cis_h5_attr_int(g, path, "nalpha", cis_space_nalpha(h->space)));
    CIS_TRY(cis_h5_attr_int(g, path, "nbeta", cis_space_nbeta(h->space)));
    CIS_TRY(cis_h5_attr_string(g, path, "space", cis_space_describe(h->space)));
    CIS_TRY(cis_h5_attr_int(g, path, "irrep", cis_space_irrep(h->space)));
  } else {
    CIS_TRY(cis_h5_attr_string(g, path, "space", "explicit matrix"));
  }
cleanup:
  cis_h5_close(&g);
  return err;
}

static const char *device_name(cis_device_kind d) {
  return d == CIS_DEVICE_CPU ? "cpu" : d == CIS_DEVICE_GPU ? "gpu" : "auto";
}

static const char *space_name(cis_space_kind k) {
  return k == CIS_SPACE_TRUNCATED ? "truncated"
         : k == CIS_SPACE_LIST    ? "list"
         : k == CIS_SPACE_MRCI    ? "mrci"
                                  : "fci";
}

static cis_err options_numbers(hid_t g, const char *path, const cis_options *o) {
  CIS_CALL(cis_h5_attr_int(g, path, "nroots", o->nroots));
  CIS_CALL(cis_h5_attr_double(g, path, "tol_energy", o->tol_energy));
  CIS_CALL(cis_h5_attr_double(g, path, "tol_residual", o->tol_residual));
  CIS_CALL(cis_h5_attr_int(g, path, "max_iter", o->max_iter));
  CIS_CALL(cis_h5_attr_int(g, path, "max_subspace", o->max_subspace));
  CIS_CALL(cis_h5_attr_double(g, path, "level_shift", o->level_shift));
  CIS_CALL(cis_h5_attr_int(g, path, "space_set", o->space_set));
  CIS_CALL(cis_h5_attr_int(g, path, "space_level", o->space_level));
  CIS_CALL(cis_h5_attr_int(g, path, "ms2_set", o->ms2_set));
  CIS_CALL(cis_h5_attr_int(g, path, "ms2", o->ms2));
  CIS_CALL(cis_h5_attr_int(g, path, "ref_size", o->ref_size));
  CIS_CALL(cis_h5_attr_string(g, path, "irrep", o->irrep));
  CIS_CALL(cis_h5_attr_string(g, path, "point_group", o->point_group));
  CIS_CALL(cis_h5_attr_string(g, path, "ref_det", o->ref_det));
  CIS_CALL(cis_h5_attr_int(g, path, "device_index", o->device_index));
  CIS_CALL(cis_h5_attr_int(g, path, "mem", o->mem));
  CIS_CALL(cis_h5_attr_int(g, path, "gpu_mem", o->gpu_mem));
  CIS_CALL(cis_h5_attr_int(g, path, "threads", o->threads));
  CIS_CALL(cis_h5_attr_int(g, path, "verbose", o->verbose));
  CIS_CALL(cis_h5_attr_int(g, path, "quiet", o->quiet));
  CIS_CALL(cis_h5_attr_int(g, path, "spin_set", o->spin_set));
  CIS_CALL(cis_h5_attr_double(g, path, "spin", 0.5 * o->spin2));
  CIS_CALL(cis_h5_attr_double(g, path, "spin_shift", o->spin_shift));
  CIS_CALL(cis_h5_attr_int(g, path, "rdm1", o->rdm1));
  CIS_CALL(cis_h5_attr_int(g, path, "rdm2", o->rdm2));
  CIS_CALL(cis_h5_attr_int(g, path, "trans_rdm", o->trans_rdm));
  return CIS_OK;
}

static cis_err options_strings(hid_t g, const char *path, const cis_options *o) {
  CIS_CALL(cis_h5_attr_string(g, path, "input", o->input));
  CIS_CALL(cis_h5_attr_string(g, path, "output", o->output));
  CIS_CALL(cis_h5_attr_string(g, path, "export_matrix", o->export_matrix));
  CIS_CALL(cis_h5_attr_string(g, path, "checkpoint", o->checkpoint));
  CIS_CALL(cis_h5_attr_string(g, path, "molden", o->molden));
  CIS_CALL(cis_h5_attr_string(g, path, "solver",
                              o->solver == CIS_SOLVER_LANCZOS ? "lanczos" : "davidson"));
  CIS_CALL(cis_h5_attr_string(g, path, "space_kind", space_name(o->space_kind)));
  CIS_CALL(cis_h5_attr_string(g, path, "device", device_name(o->device)));
  static const char *checks[] = {"none", "blocks", "full"};
  CIS_CALL(cis_h5_attr_string(g, path, "check_roots", checks[o->check_roots]));
  return CIS_OK;
}

static cis_err write_options(hid_t f, const char *path, const cis_options *o) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  hid_t g = -1;
  CIS_TRY(cis_h5_group(f, path, "options", &g));
  CIS_TRY(options_strings(g, path, o));
  CIS_TRY(options_numbers(g, path, o));
cleanup:
  cis_h5_close(&g);
  return err;
}

static cis_err write_all(hid_t f, const char *path, const cis_output *o,
                         const cis_analysis *an) {
  CIS_CALL(cis_h5_attr_string(f, path, "format", "cisolve-output"));
  CIS_CALL(cis_h5_attr_int(f, path, "version", 1));
  CIS_CALL(cis_h5_attr_string(f, path, "cisolve_version", o->version ? o->version : ""));
  CIS_CALL(cis_h5_attr_string(f, path, "device", o->device_desc ? o->device_desc : ""));
  CIS_CALL(write_results(f, path, o, an));
  CIS_CALL(write_problem(f, path, o));
  if (o->h->space) CIS_CALL(write_determinants(f, path, o->h->space));
  if (o->opt) CIS_CALL(write_options(f, path, o->opt));
  return CIS_OK;
}

cis_err cis_output_write(const char *path, const cis_output *out) {
  return cis_output_write_analysis(path, out, NULL);
}

typedef struct {
  const cis_output *out;
  const cis_analysis *an;
} output_ctx;

static cis_err output_body(hid_t f, const char *tmp, const void *ctx) {
  const output_ctx *c = ctx;
  return write_all(f, tmp, c->out, c->an);
}

cis_err cis_output_write_analysis(const char *path, const cis_output *out,
                                  const cis_analysis *an) {
  CIS_CHECK(out && out->h && out->res && out->res->nroots > 0, CIS_ERR_INTERNAL,
            "cis_output_write: missing matrix or results");
  output_ctx c = {out, an};
  CIS_CALL(cis_h5_write_atomic(path, output_body, &c));
  return CIS_OK;
}

