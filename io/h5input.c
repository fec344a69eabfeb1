/* cisolve: input.h5 version 1 (docs/input-format.md): reading it, and writing its /matrix
 * group; also the small HDF5 writers that output.h5 uses.
 *
 * HDF5 prints its own error stack by default; we silence it and turn every failed status
 * into one message naming the file, the dataset and what was expected.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/util.h"
#include "io/input.h"
#include "io/io_private.h"
#include "io/molden.h"

typedef enum { K_INT, K_REAL, K_BITS } kind;

typedef struct {
  const char *path;
  hid_t f;
} h5in;

typedef struct {
  int rank;
  hsize_t dims[H5S_MAX_RANK];
  H5T_class_t cls;
  size_t size;
  H5T_sign_t sign;
  int64_t npoints;
} h5info;

void cis_h5_quiet(void) { H5Eset_auto2(H5E_DEFAULT, NULL, NULL); }

void cis_h5_close(hid_t *id) {
  if (*id < 0) return;
  switch (H5Iget_type(*id)) {
    case H5I_FILE: H5Fclose(*id); break;
    case H5I_GROUP: H5Gclose(*id); break;
    case H5I_DATASET: H5Dclose(*id); break;
    case H5I_ATTR: H5Aclose(*id); break;
    case H5I_DATATYPE: H5Tclose(*id); break;
    case H5I_DATASPACE: H5Sclose(*id); break;
    default: break;
  }
  *id = -1;
}

static const char *shape_str(const h5info *s, char *buf, size_t len) {
  if (s->rank == 0) return snprintf(buf, len, "scalar"), buf;
  size_t k = 0;
  for (int d = 0; d < s->rank && k < len; d++)
    k += (size_t)snprintf(buf + k, len - k, d ? "x%llu" : "%llu", (unsigned long long)s->dims[d]);
  return buf;
}

static const char *class_name(H5T_class_t c) {
  switch (c) {
    case H5T_INTEGER: return "integer";
    case H5T_FLOAT: return "float";
    case H5T_STRING: return "string";
    case H5T_COMPOUND: return "compound";
    case H5T_ENUM: return "enum";
    case H5T_ARRAY: return "array";
    default: return "non-numeric";
  }
}

static cis_err exists(const h5in *in, const char *name, int *yes) {
  *yes = 0;
  htri_t e = H5Lexists(in->f, name, H5P_DEFAULT);
  CIS_CHECK(e >= 0, CIS_ERR_INPUT, "%s: cannot look up %s (corrupt file?)", in->path, name);
  *yes = e > 0;
  return CIS_OK;
}

/* Type and shape of a dataset (ds >= 0) or attribute (attr >= 0). */
static cis_err get_info(const h5in *in, const char *name, hid_t ds, hid_t attr, h5info *s) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  hid_t t = ds >= 0 ? H5Dget_type(ds) : H5Aget_type(attr);
  hid_t sp = ds >= 0 ? H5Dget_space(ds) : H5Aget_space(attr);
  if (t < 0 || sp < 0) CIS_FAIL(CIS_ERR_INPUT, "%s: cannot read the type of %s", in->path, name);
  s->cls = H5Tget_class(t);
  s->size = H5Tget_size(t);
  s->sign = s->cls == H5T_INTEGER ? H5Tget_sign(t) : H5T_SGN_ERROR;
  s->rank = H5Sget_simple_extent_ndims(sp);
  if (s->rank < 0) CIS_FAIL(CIS_ERR_INPUT, "%s: cannot read the shape of %s", in->path, name);
  H5Sget_simple_extent_dims(sp, s->dims, NULL);
  s->npoints = H5Sget_simple_extent_npoints(sp);
cleanup:
  cis_h5_close(&t);
  cis_h5_close(&sp);
  return err;
}

/* The class and the size: an integer of 1..8 bytes, a float of 4 or 8 (a corrupt type can
 * claim gigabytes per element, which a conversion would allocate). */
static cis_err check_class(const h5in *in, const char *name, const h5info *s, kind k) {
  int intok = s->cls == H5T_INTEGER && s->size >= 1 && s->size <= 8;
  int ok = k == K_REAL ? (intok || (s->cls == H5T_FLOAT && (s->size == 4 || s->size == 8)))
                       : (intok && (k == K_INT || s->size == 8));
  CIS_CHECK(ok, CIS_ERR_INPUT, "%s: %s has type %s (%zu bytes), expected %s", in->path, name,
            class_name(s->cls), s->size,
            k == K_REAL ? "float64 (a float of 4 or 8 bytes, or an integer)"
            : k == K_INT ? "an integer of 1 to 8 bytes" : "uint64 bit strings");
  return CIS_OK;
}

static hid_t mem_type(const h5info *s, kind k) {
  if (k == K_REAL) return H5T_NATIVE_DOUBLE;
  if (k == K_INT) return H5T_NATIVE_INT64;
  /* bit strings keep their bits whatever the sign the writer gave them */
  return s->sign == H5T_SGN_NONE ? H5T_NATIVE_UINT64 : H5T_NATIVE_INT64;
}

/* A dataset without filters stores all its elements: fewer bytes than its shape needs is a
 * corrupt shape (which would otherwise ask for terabytes), not a problem too large. */
static cis_err check_stored(const h5in *in, const char *name, hid_t ds, const h5info *s) {
  hid_t dcpl = H5Dget_create_plist(ds);
  int nfilters = dcpl < 0 ? -1 : H5Pget_nfilters(dcpl);
  cis_h5_close(&dcpl);
  CIS_CHECK(nfilters >= 0, CIS_ERR_INPUT, "%s: cannot read the storage of %s", in->path, name);
  if (nfilters > 0) return CIS_OK; /* compressed: its stored size says nothing */
  hsize_t stored = H5Dget_storage_size(ds);
  double need = (double)s->npoints * (double)s->size;
  CIS_CHECK((double)stored >= need, CIS_ERR_INPUT, "%s: %s has %lld elements of %zu bytes but "
            "the file stores %llu bytes of it (corrupt or unwritten dataset)", in->path, name,
            (long long)s->npoints, s->size, (unsigned long long)stored);
  return CIS_OK;
}

/* Read dataset `name` entirely. Its rank must be `rank` and, where dims[d] >= 0, its extent d
 * must equal dims[d]; `why` explains the expected shape ("norb=7"). Actual dims to got. */
static cis_err read_array(const h5in *in, const char *name, kind k, int rank,
                          const int64_t *dims, const char *why, void **buf, h5info *got) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  hid_t ds = -1;
  int yes;
  h5info s;
  char b1[64], b2[64];
  *buf = NULL;
  CIS_TRY(exists(in, name, &yes));
  if (!yes) CIS_FAIL(CIS_ERR_INPUT, "%s: dataset %s is missing", in->path, name);
  ds = H5Dopen2(in->f, name, H5P_DEFAULT);
  if (ds < 0) CIS_FAIL(CIS_ERR_INPUT, "%s: %s is not a readable dataset", in->path, name);
  CIS_TRY(get_info(in, name, ds, -1, &s));
  CIS_TRY(check_class(in, name, &s, k));
  int ok = s.rank == rank;
  for (int d = 0; ok && d < rank; d++) ok = dims[d] < 0 || (int64_t)s.dims[d] == dims[d];
  if (!ok) {
    h5info want = {.rank = rank};
    for (int d = 0; d < rank; d++) want.dims[d] = dims[d] < 0 ? 0 : (hsize_t)dims[d];
    CIS_FAIL(CIS_ERR_INPUT, "%s: %s has shape %s, expected %s%s (%s)", in->path, name,
             shape_str(&s, b1, sizeof b1), rank == 2 && dims[0] < 0 ? "N x " : "",
             rank == 2 && dims[0] < 0 ? shape_str(&(h5info){.rank = 1, .dims = {want.dims[1]}},
                                                  b2, sizeof b2)
                                      : shape_str(&want, b2, sizeof b2), why);
  }
  CIS_TRY(check_stored(in, name, ds, &s));
  CIS_TRY(cis_malloc(buf, (size_t)s.npoints, 8, name));
  if (s.npoints > 0 && H5Dread(ds, mem_type(&s, k), H5S_ALL, H5S_ALL, H5P_DEFAULT, *buf) < 0)
    CIS_FAIL(CIS_ERR_INPUT, "%s: cannot read %s as %s (values out of range or file corrupt)",
             in->path, name, k == K_REAL ? "float64" : "64-bit integers");
  if (k == K_REAL)
    for (int64_t i = 0; i < s.npoints; i++)
      if (!isfinite(((double *)*buf)[i]))
        CIS_FAIL(CIS_ERR_INPUT, "%s: %s element %lld is %g, expected a finite number", in->path,
                 name, (long long)i, ((double *)*buf)[i]);
  if (got) *got = s;
cleanup:
  cis_h5_close(&ds);
  if (err != CIS_OK) cis_free(buf);
  return err;
}

/* A scalar number: dataset GROUP/NAME, or else attribute NAME of GROUP. */
static cis_err read_scalar(const h5in *in, const char *group, const char *name, kind k,
                           int required, void *out, int *found) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  hid_t g = -1, a = -1;
  void *buf = NULL;
  char full[256];
  int yes;
  h5info s;
  snprintf(full, sizeof full, "%s/%s", strcmp(group, "/") ? group : "", name);
  *found = 0;
  CIS_TRY(exists(in, full, &yes));
  if (yes) {
    CIS_TRY(read_array(in, full, k, 0, NULL, "", &buf, &s));
    memcpy(out, buf, 8);
    *found = 1;
    goto cleanup;
  }
  g = H5Oopen(in->f, group, H5P_DEFAULT);
  htri_t ae = g < 0 ? -1 : H5Aexists(g, name);
  if (ae < 0) CIS_FAIL(CIS_ERR_INPUT, "%s: cannot open %s", in->path, group);
  if (!ae) {
    if (required)
      CIS_FAIL(CIS_ERR_INPUT, "%s: %s is missing (expected a scalar %s dataset)", in->path,
               full, k == K_REAL ? "float" : "integer");
    goto cleanup;
  }
  a = H5Aopen(g, name, H5P_DEFAULT);
  if (a < 0) CIS_FAIL(CIS_ERR_INPUT, "%s: cannot open attribute %s", in->path, full);
  CIS_TRY(get_info(in, full, -1, a, &s));
  CIS_TRY(check_class(in, full, &s, k));
  if (s.npoints != 1) CIS_FAIL(CIS_ERR_INPUT, "%s: %s has %lld values, expected a scalar",
                               in->path, full, (long long)s.npoints);
  if (H5Aread(a, mem_type(&s, k), out) < 0)
    CIS_FAIL(CIS_ERR_INPUT, "%s: cannot read attribute %s", in->path, full);
  *found = 1;
cleanup:
  cis_h5_close(&a);
  cis_h5_close(&g);
  cis_free(&buf);
  return err;
}

/* A string attribute NAME of object OBJ; *found = 0 if absent. Its class, its size and its
 * shape (one string) are checked before it is read; a variable-length one is read through
 * cis_h5_read_vlen_string, which checks the file's heap first. */
static cis_err read_string_attr(const h5in *in, const char *obj, const char *name, char *out,
                                size_t len, int *found) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  hid_t o = -1, a = -1, t = -1;
  char what[160];
  h5info s;
  *found = 0;
  snprintf(what, sizeof what, "attribute %s of %s", name, obj);
  o = H5Oopen(in->f, obj, H5P_DEFAULT);
  htri_t ae = o < 0 ? -1 : H5Aexists(o, name);
  if (ae < 0) CIS_FAIL(CIS_ERR_INPUT, "%s: cannot open %s", in->path, obj);
  if (!ae) goto cleanup;
  a = H5Aopen(o, name, H5P_DEFAULT);
  t = a < 0 ? -1 : H5Aget_type(a);
  if (t < 0) CIS_FAIL(CIS_ERR_INPUT, "%s: cannot read %s", in->path, what);
  CIS_TRY(get_info(in, what, -1, a, &s));
  if (s.cls != H5T_STRING)
    CIS_FAIL(CIS_ERR_INPUT, "%s: %s has type %s, expected a string", in->path, what,
             class_name(s.cls));
  if (s.npoints != 1)
    CIS_FAIL(CIS_ERR_INPUT, "%s: %s holds %lld strings, expected one", in->path, what,
             (long long)s.npoints);
  htri_t vlen = H5Tis_variable_str(t);
  if (vlen < 0) CIS_FAIL(CIS_ERR_INPUT, "%s: cannot read the type of %s", in->path, what);
  if (vlen) {
    CIS_TRY(cis_h5_read_vlen_string(in->path, in->f, a, what, out, len));
  } else {
    size_t sz = H5Tget_size(t);
    if (sz == 0 || sz >= len)
      CIS_FAIL(CIS_ERR_INPUT, "%s: %s is %zu characters long, expected 1..%zu", in->path, what,
               sz, len - 1);
    if (H5Aread(a, t, out) < 0)
      CIS_FAIL(CIS_ERR_INPUT, "%s: cannot read string %s", in->path, what);
    out[sz] = '\0';
  }
  *found = 1;
cleanup:
  cis_h5_close(&t);
  cis_h5_close(&a);
  cis_h5_close(&o);
  return err;
}

/* ---- /integrals --------------------------------------------------------------------------- */

/* Symmetric to round-off (then averaged: the Hamiltonian code reads one triangle). */
static cis_err check_h1e_symmetric(const h5in *in, double *h, int n) {
  double amax = 0;
  for (int64_t i = 0; i < (int64_t)n * n; i++) amax = CIS_MAX(amax, fabs(h[i]));
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++)
      CIS_CHECK(fabs(h[i * n + j] - h[j * n + i]) <= 1e-10 * CIS_MAX(1.0, amax), CIS_ERR_INPUT,
                "%s: /integrals/h1e is not symmetric: h1e[%d][%d] = %.17g, h1e[%d][%d] = %.17g",
                in->path, i, j, h[i * n + j], j, i, h[j * n + i]);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++) h[i * n + j] = h[j * n + i] = 0.5 * (h[i * n + j] + h[j * n + i]);
  return CIS_OK;
}

static cis_err read_orbsym(const h5in *in, cis_integrals *I, const char *why) {
  int yes, found;
  int64_t *sym = NULL, isym = 0;
  CIS_CALL(exists(in, "/integrals/orbsym", &yes));
  if (yes) {
    int64_t d = I->norb;
    CIS_CALL(read_array(in, "/integrals/orbsym", K_INT, 1, &d, why, (void **)&sym, NULL));
    cis_err err = cis_malloc(&I->orbsym, (size_t)I->norb, sizeof(int), "orbsym");
    for (int i = 0; err == CIS_OK && i < I->norb; i++) I->orbsym[i] = (int)sym[i];
    cis_free(&sym);
    CIS_CALL(err);
  }
  CIS_CALL(read_scalar(in, "/integrals", "isym", K_INT, 0, &isym, &found));
  I->isym = (int)isym;
  return CIS_OK;
}

static cis_err read_integrals(const h5in *in, cis_problem *p) {
  cis_integrals *I = &p->ints;
  int64_t norb = 0, nelec = 0, ms2 = 0;
  int found;
  h5info s;
  CIS_CALL(read_scalar(in, "/integrals", "norb", K_INT, 1, &norb, &found));
  CIS_CALL(read_scalar(in, "/integrals", "nelec", K_INT, 1, &nelec, &found));
  CIS_CALL(read_scalar(in, "/integrals", "ms2", K_INT, 0, &ms2, &found));
  CIS_CALL(read_scalar(in, "/integrals", "ecore", K_REAL, 0, &I->ecore, &found));
  CIS_CHECK(norb >= 1 && norb <= 100000, CIS_ERR_INPUT, "%s: /integrals/norb = %lld, expected "
            "1..100000", in->path, (long long)norb);
  CIS_CALL(cis_io_electrons(in->path, "/integrals", (int)norb, (long)nelec, (long)ms2,
                            &I->nalpha, &I->nbeta));
  I->norb = (int)norb;
  char why[96];
  snprintf(why, sizeof why, "norb=%d", I->norb);
  int64_t d2[2] = {norb, norb}, d1 = cis_eri_size(I->norb);
  CIS_CALL(read_array(in, "/integrals/h1e", K_REAL, 2, d2, why, (void **)&I->h1e, NULL));
  CIS_CALL(check_h1e_symmetric(in, I->h1e, I->norb));
  snprintf(why, sizeof why, "norb=%d; 8-fold packed, e.g. pyscf.ao2mo.restore(8, eri, %d)",
           I->norb, I->norb);
  CIS_CALL(read_array(in, "/integrals/eri", K_REAL, 1, &d1, why, (void **)&I->eri, &s));
  snprintf(why, sizeof why, "norb=%d", I->norb);
  CIS_CALL(read_orbsym(in, I, why));
  return CIS_OK;
}

/* ---- /space ------------------------------------------------------------------------------- */

/* Bit strings NAME (N x nwords, or nwords for one string): bits beyond norb must be 0. */
static cis_err read_strings(const h5in *in, const char *name, int norb, uint64_t **out,
                            int64_t *count) {
  int64_t nw = cis_nwords(norb), d2[2] = {-1, nw};
  char why[96];
  h5info s;
  int yes;
  CIS_CALL(exists(in, name, &yes));
  CIS_CHECK(yes, CIS_ERR_INPUT, "%s: dataset %s is missing", in->path, name);
  snprintf(why, sizeof why, "%lld uint64 words per string for norb=%d", (long long)nw, norb);
  hid_t ds = H5Dopen2(in->f, name, H5P_DEFAULT);
  CIS_CHECK(ds >= 0, CIS_ERR_INPUT, "%s: %s is not a readable dataset", in->path, name);
  cis_err err = get_info(in, name, ds, -1, &s);
  cis_h5_close(&ds);
  CIS_CALL(err);
  int rank = s.rank == 1 ? 1 : 2;
  CIS_CALL(read_array(in, name, K_BITS, rank, rank == 1 ? &nw : d2, why, (void **)out, &s));
  *count = rank == 1 ? 1 : (int64_t)s.dims[0];
  for (int64_t i = 0; i < *count; i++) {
    uint64_t last = (*out)[i * nw + nw - 1];
    int used = norb - 64 * ((int)nw - 1);
    if (used < 64 && (last >> used) != 0) {
      cis_free(out);
      CIS_ERROR(CIS_ERR_INPUT, "%s: %s string %lld occupies an orbital >= norb=%d (bit p%%64 "
                "of word p/64 is orbital p)", in->path, name, (long long)i, norb);
    }
  }
  return CIS_OK;
}

static cis_err read_string_pair(const h5in *in, const char *a, const char *b, int norb,
                                uint64_t **sa, uint64_t **sb, int64_t *n) {
  int64_t na = 0, nb = 0;
  CIS_CALL(read_strings(in, a, norb, sa, &na));
  CIS_CALL(read_strings(in, b, norb, sb, &nb));
  CIS_CHECK(na == nb, CIS_ERR_INPUT, "%s: %s has %lld strings but %s has %lld, expected the "
            "same number", in->path, a, (long long)na, b, (long long)nb);
  *n = na;
  return CIS_OK;
}

static cis_err space_kind(const h5in *in, cis_space_spec *sp, int *need_level) {
  char kind[64] = "fci";
  int found;
  CIS_CALL(read_string_attr(in, "/space", "kind", kind, sizeof kind, &found));
  *need_level = strcasecmp(kind, "truncated") == 0;
  if (*need_level) {
    sp->kind = CIS_SPACE_TRUNCATED;
  } else if (!cis_space_by_name(kind, &sp->kind, &sp->level)) {
    CIS_ERROR(CIS_ERR_INPUT, "%s: /space attribute kind = '%s', expected fci, truncated, list, "
              "cis, cisd, cisdt, cisdtq, ci<N> or mrci<N> with 1 <= N <= %d", in->path, kind,
              CIS_SPACE_MAX_LEVEL);
  }
  return CIS_OK;
}

static cis_err read_space(const h5in *in, cis_problem *p) {
  cis_space_spec *sp = &p->space;
  int yes, need_level, found;
  int64_t level = 0;
  CIS_CALL(exists(in, "/space", &yes));
  if (!yes) return CIS_OK;
  p->space_from_file = 1;
  CIS_CALL(space_kind(in, sp, &need_level));
  if (need_level) {
    CIS_CALL(read_scalar(in, "/space", "level", K_INT, 1, &level, &found));
    CIS_CHECK(level >= 1 && level <= CIS_SPACE_MAX_LEVEL, CIS_ERR_INPUT, "%s: /space/level = "
              "%lld, expected an excitation level 1..%d (2 = CISD)", in->path, (long long)level,
              CIS_SPACE_MAX_LEVEL);
    sp->level = (int)level;
  }
  if (sp->kind == CIS_SPACE_MRCI) { /* a CAS model space, or the references below */
    int64_t ne = 0, no = 0;
    int fe, fo;
    CIS_CALL(read_scalar(in, "/space", "cas_nelec", K_INT, 0, &ne, &fe));
    CIS_CALL(read_scalar(in, "/space", "cas_norb", K_INT, 0, &no, &fo));
    CIS_CHECK(fe == fo && (!fe || (ne >= 1 && no >= 1 && no <= p->ints.norb)), CIS_ERR_INPUT,
              "%s: /space cas_nelec and cas_norb: expected both, NE >= 1 electrons in 1 <= NO <= "
              "norb = %d orbitals", in->path, p->ints.norb);
    sp->cas_nelec = (int)ne;
    sp->cas_norb = (int)no;
  }
  CIS_CALL(exists(in, "/space/reference_alpha", &yes));
  if (yes)
    CIS_CALL(read_string_pair(in, "/space/reference_alpha", "/space/reference_beta",
                              p->ints.norb, &sp->ref_alpha, &sp->ref_beta, &sp->nref_dets));
  if (sp->kind == CIS_SPACE_LIST)
    CIS_CALL(read_string_pair(in, "/space/det_alpha", "/space/det_beta", p->ints.norb,
                              &sp->det_alpha, &sp->det_beta, &sp->ndets));
  return CIS_OK;
}

/* ---- /orbitals (optional) ---------------------------------------------------------------- */

/* The Molden header (bytes of text) and the AO coefficients of the orbitals of /integrals and
 * of the frozen core, for a Molden file of natural orbitals. */
static cis_err read_orbitals(const h5in *in, cis_problem *p) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  cis_orbitals *o = &p->orbitals;
  int64_t *text = NULL, any = -1, d2[2] = {-1, p->ints.norb};
  int yes;
  h5info s;
  char why[96];
  CIS_TRY(exists(in, "/orbitals", &yes));
  if (!yes) goto cleanup;
  CIS_TRY(read_array(in, "/orbitals/molden_header", K_INT, 1, &any, "bytes of text",
                     (void **)&text, &s));
  CIS_TRY(cis_malloc(&o->molden_header, (size_t)s.npoints + 1, 1, "Molden header"));
  for (int64_t i = 0; i < s.npoints; i++) {
    if (text[i] < 1 || text[i] > 126)
      CIS_FAIL(CIS_ERR_INPUT, "%s: /orbitals/molden_header byte %lld is %lld, expected ASCII "
               "text without NUL", in->path, (long long)i, (long long)text[i]);
    o->molden_header[i] = (char)text[i];
  }
  o->molden_header[s.npoints] = '\0';
  CIS_TRY(cis_molden_check_header(in->path, "/orbitals/molden_header", o->molden_header));
  snprintf(why, sizeof why, "nao x norb, norb=%d", p->ints.norb);
  CIS_TRY(read_array(in, "/orbitals/active", K_REAL, 2, d2, why, (void **)&o->active, &s));
  int64_t nao = (int64_t)s.dims[0];
  CIS_TRY(exists(in, "/orbitals/core", &yes));
  if (yes) {
    d2[0] = nao;
    d2[1] = -1;
    snprintf(why, sizeof why, "nao x ncore, nao=%lld as in /orbitals/active", (long long)nao);
    CIS_TRY(read_array(in, "/orbitals/core", K_REAL, 2, d2, why, (void **)&o->core, &s));
    o->ncore = (int)CIS_MIN(s.dims[1], INT32_MAX);
  }
  if (nao < p->ints.norb + o->ncore || nao > 10000000)
    CIS_FAIL(CIS_ERR_INPUT, "%s: /orbitals/active has %lld atomic orbitals, expected at least "
             "the %d orbitals of /integrals and /orbitals/core (and at most 10^7)", in->path,
             (long long)nao, p->ints.norb + o->ncore);
  o->nao = (int)nao;
cleanup:
  cis_free(&text);
  if (err != CIS_OK) {
    cis_free(&o->molden_header);
    cis_free(&o->active);
    cis_free(&o->core);
    memset(o, 0, sizeof *o);
  }
  return err;
}

/* ---- /options ----------------------------------------------------------------------------- */

typedef struct {
  const h5in *in;
  cis_kvlist *kv;
  cis_err err;
} opt_ctx;

/* An enum (h5py stores numpy bools as FALSE/TRUE enums): its member name, lower case. */
static cis_err enum_value(const h5in *in, hid_t a, const char *full, char *val, size_t len) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  hid_t t = H5Aget_type(a), nt = t < 0 ? -1 : H5Tget_native_type(t, H5T_DIR_DEFAULT);
  unsigned char raw[16];
  if (nt < 0 || H5Tget_size(nt) > sizeof raw || H5Aread(a, nt, raw) < 0 ||
      H5Tenum_nameof(nt, raw, val, len) < 0)
    CIS_FAIL(CIS_ERR_INPUT, "%s: cannot read the enum %s", in->path, full);
  for (char *c = val; *c; c++)
    if (*c >= 'A' && *c <= 'Z') *c = (char)(*c - 'A' + 'a');
cleanup:
  cis_h5_close(&nt);
  cis_h5_close(&t);
  return err;
}

static cis_err option_value(const h5in *in, hid_t a, const char *key, char *val, size_t len) {
  h5info s;
  char full[128];
  int found;
  snprintf(full, sizeof full, "/options attribute %s", key);
  CIS_CALL(get_info(in, full, -1, a, &s));
  if (s.cls == H5T_STRING) {
    CIS_CALL(read_string_attr(in, "/options", key, val, len, &found));
    return CIS_OK;
  }
  if (s.cls == H5T_ENUM && s.npoints == 1) {
    CIS_CALL(enum_value(in, a, full, val, len));
    return CIS_OK;
  }
  CIS_CHECK(s.npoints == 1 && (s.cls == H5T_INTEGER || s.cls == H5T_FLOAT), CIS_ERR_INPUT,
            "%s: %s has type %s with %lld values, expected one integer, float, bool or string",
            in->path, full, class_name(s.cls), (long long)s.npoints);
  CIS_CALL(check_class(in, full, &s, K_REAL));
  if (s.cls == H5T_INTEGER) {
    long long v;
    CIS_CHECK(H5Aread(a, H5T_NATIVE_LLONG, &v) >= 0, CIS_ERR_INPUT, "%s: cannot read %s",
              in->path, full);
    snprintf(val, len, "%lld", v);
  } else {
    double v;
    CIS_CHECK(H5Aread(a, H5T_NATIVE_DOUBLE, &v) >= 0, CIS_ERR_INPUT, "%s: cannot read %s",
              in->path, full);
    /* the shortest form that reads back as the same double: 1e-08, not 1.0000000000000001e-08 */
    snprintf(val, len, "%.15g", v);
    if (strtod(val, NULL) != v) snprintf(val, len, "%.17g", v);
  }
  return CIS_OK;
}

static herr_t option_cb(hid_t loc, const char *name, const H5A_info_t *info, void *data) {
  (void)info;
  opt_ctx *c = data;
  cis_kvlist *kv = c->kv;
  if (kv->n >= CIS_MAX_FILE_OPTIONS || strlen(name) >= sizeof kv->kv[0].key) {
    c->err = cis_error_raise(CIS_ERR_INPUT, __FILE__, __LINE__, __func__,
                             "%s: /options has more than %d attributes or a name longer than %zu "
                             "characters ('%s')", c->in->path, CIS_MAX_FILE_OPTIONS,
                             sizeof kv->kv[0].key - 1, name);
    return -1;
  }
  hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
  if (a < 0) {
    c->err = cis_error_raise(CIS_ERR_INPUT, __FILE__, __LINE__, __func__,
                             "%s: cannot open /options attribute %s", c->in->path, name);
    return -1;
  }
  c->err = option_value(c->in, a, name, kv->kv[kv->n].value, sizeof kv->kv[0].value);
  cis_h5_close(&a);
  if (c->err != CIS_OK) return -1;
  snprintf(kv->kv[kv->n].key, sizeof kv->kv[0].key, "%s", name);
  kv->n++;
  return 0;
}

static cis_err read_options(const h5in *in, cis_problem *p) {
  int yes;
  CIS_CALL(exists(in, "/options", &yes));
  if (!yes) return CIS_OK;
  hid_t g = H5Oopen(in->f, "/options", H5P_DEFAULT);
  CIS_CHECK(g >= 0, CIS_ERR_INPUT, "%s: cannot open /options", in->path);
  opt_ctx c = {in, &p->file_options, CIS_OK};
  hsize_t idx = 0;
  herr_t st = H5Aiterate2(g, H5_INDEX_NAME, H5_ITER_INC, &idx, option_cb, &c);
  cis_h5_close(&g);
  CIS_CALL(c.err);
  CIS_CHECK(st >= 0, CIS_ERR_INPUT, "%s: cannot list the attributes of /options", in->path);
  return CIS_OK;
}

/* ---- /matrix ------------------------------------------------------------------------------ */

static cis_err matrix_triplets(const h5in *in, int64_t n, cis_io_coo *t, int *lower) {
  int64_t *ptr = NULL, np1 = n + 1, nnz;
  h5info s;
  char why[64];
  snprintf(why, sizeof why, "n+1 with n=%lld", (long long)n);
  CIS_CALL(read_array(in, "/matrix/indptr", K_INT, 1, &np1, why, (void **)&ptr, NULL));
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  nnz = ptr[n];
  if (ptr[0] != 0 || nnz < 0)
    CIS_FAIL(CIS_ERR_INPUT, "%s: /matrix/indptr starts at %lld and ends at %lld, expected 0 and "
             "the number of entries", in->path, (long long)ptr[0], (long long)nnz);
  for (int64_t i = 0; i < n; i++)
    if (ptr[i + 1] < ptr[i])
      CIS_FAIL(CIS_ERR_INPUT, "%s: /matrix/indptr decreases at row %lld, expected "
               "non-decreasing offsets", in->path, (long long)i);
  snprintf(why, sizeof why, "indptr[n] = %lld entries", (long long)nnz);
  CIS_TRY(read_array(in, "/matrix/indices", K_INT, 1, &nnz, why, (void **)&t->col, &s));
  CIS_TRY(read_array(in, "/matrix/data", K_REAL, 1, &nnz, why, (void **)&t->val, &s));
  CIS_TRY(cis_malloc(&t->row, (size_t)nnz, sizeof(int64_t), "matrix rows"));
  t->n = n;
  t->count = nnz;
  for (int64_t i = 0; i < n; i++)
    for (int64_t k = ptr[i]; k < ptr[i + 1]; k++) {
      t->row[k] = i;
      if (*lower && t->col[k] > i)
        CIS_FAIL(CIS_ERR_INPUT, "%s: /matrix has storage=\"lower\" but entry (%lld, %lld) "
                 "(0-based) is above the diagonal", in->path, (long long)i,
                 (long long)t->col[k]);
    }
cleanup:
  cis_free(&ptr);
  return err;
}

static cis_err read_matrix(const h5in *in, cis_problem *p) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  cis_io_coo t = {0};
  int64_t n = 0;
  int found, lower = 0;
  char storage[32] = "full";
  CIS_TRY(read_scalar(in, "/matrix", "n", K_INT, 1, &n, &found));
  if (n < 1 || n > INT32_MAX)
    CIS_FAIL(CIS_ERR_INPUT, "%s: /matrix attribute n = %lld, expected 1..%d", in->path,
             (long long)n, INT32_MAX);
  CIS_TRY(read_string_attr(in, "/matrix", "storage", storage, sizeof storage, &found));
  if (strcasecmp(storage, "lower") == 0)
    lower = 1;
  else if (strcasecmp(storage, "full") != 0)
    CIS_FAIL(CIS_ERR_INPUT, "%s: /matrix attribute storage = '%s', expected \"full\" or "
             "\"lower\"", in->path, storage);
  CIS_TRY(matrix_triplets(in, n, &t, &lower));
  CIS_TRY(cis_io_csr_from_coo(&t, lower, in->path, "/matrix", &p->matrix));
  p->kind = CIS_PROBLEM_MATRIX;
cleanup:
  cis_free(&t.row);
  cis_free(&t.col);
  cis_free(&t.val);
  return err;
}

/* ---- the file ----------------------------------------------------------------------------- */

static cis_err check_format(const h5in *in) {
  char fmt[64];
  int found;
  int64_t version = 0;
  CIS_CALL(read_string_attr(in, "/", "format", fmt, sizeof fmt, &found));
  CIS_CHECK(found && strcmp(fmt, "cisolve-input") == 0, CIS_ERR_INPUT,
            "%s: root attribute format is %s%s%s, expected \"cisolve-input\" (an input.h5 "
            "written as in docs/input-format.md, e.g. by scripts/to_input_h5.py)", in->path,
            found ? "\"" : "missing", found ? fmt : "", found ? "\"" : "");
  CIS_CALL(read_scalar(in, "/", "version", K_INT, 1, &version, &found));
  CIS_CHECK(version == 1, CIS_ERR_INPUT, "%s: root attribute version = %lld, this cisolve "
            "reads version 1", in->path, (long long)version);
  return CIS_OK;
}

static cis_err read_contents(const h5in *in, cis_problem *p) {
  int ints, mat;
  CIS_CALL(check_format(in));
  CIS_CALL(exists(in, "/integrals", &ints));
  CIS_CALL(exists(in, "/matrix", &mat));
  CIS_CHECK(ints != mat, CIS_ERR_INPUT, "%s: %s, expected exactly one of the groups /integrals "
            "and /matrix", in->path, ints ? "both /integrals and /matrix are present"
                                          : "neither /integrals nor /matrix is present");
  if (ints) {
    p->kind = CIS_PROBLEM_INTEGRALS;
    CIS_CALL(read_integrals(in, p));
    CIS_CALL(read_space(in, p));
    CIS_CALL(read_orbitals(in, p));
  } else {
    CIS_CALL(read_matrix(in, p));
  }
  CIS_CALL(read_options(in, p));
  return CIS_OK;
}

static cis_err read_file(const char *path, cis_problem *p) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  h5in in = {path, -1};
  memset(p, 0, sizeof *p);
  cis_h5_quiet();
  htri_t is = H5Fis_hdf5(path);
  if (is <= 0) CIS_FAIL(CIS_ERR_INPUT, "%s: not an HDF5 file (or unreadable)", path);
  in.f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (in.f < 0) CIS_FAIL(CIS_ERR_INPUT, "%s: cannot open as HDF5 (corrupt or truncated?)", path);
  CIS_TRY(read_contents(&in, p));
  snprintf(p->source, sizeof p->source, "%s", path);
cleanup:
  cis_h5_close(&in.f);
  if (err != CIS_OK) cis_problem_free(p);
  return err;
}

cis_err cis_h5input_read(const char *path, cis_problem *p) {
  memset(p, 0, sizeof *p);
  CIS_CALL(cis_h5_probe(path, read_file));
  CIS_CALL(read_file(path, p));
  return CIS_OK;
}

/* ---- writing ------------------------------------------------------------------------------ */

static cis_err write_attr(hid_t loc, const char *path, const char *name, hid_t ftype,
                          hid_t mtype, const void *v) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  hid_t sp = H5Screate(H5S_SCALAR), a = -1;
  if (sp < 0) CIS_FAIL(CIS_ERR_IO, "%s: cannot create a dataspace for attribute %s", path, name);
  if (H5Aexists(loc, name) > 0 && H5Adelete(loc, name) < 0)
    CIS_FAIL(CIS_ERR_IO, "%s: cannot replace attribute %s", path, name);
  a = H5Acreate2(loc, name, ftype, sp, H5P_DEFAULT, H5P_DEFAULT);
  if (a < 0 || H5Awrite(a, mtype, v) < 0)
    CIS_FAIL(CIS_ERR_IO, "%s: cannot write attribute %s", path, name);
cleanup:
  cis_h5_close(&a);
  cis_h5_close(&sp);
  return err;
}

cis_err cis_h5_attr_int(hid_t loc, const char *path, const char *name, int64_t v) {
  CIS_CALL(write_attr(loc, path, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &v));
  return CIS_OK;
}

cis_err cis_h5_attr_double(hid_t loc, const char *path, const char *name, double v) {
  CIS_CALL(write_attr(loc, path, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &v));
  return CIS_OK;
}

/* Variable-length UTF-8, which h5py reads back as str. */
cis_err cis_h5_attr_string(hid_t loc, const char *path, const char *name, const char *v) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  hid_t t = H5Tcopy(H5T_C_S1);
  if (t < 0 || H5Tset_size(t, H5T_VARIABLE) < 0 || H5Tset_cset(t, H5T_CSET_UTF8) < 0)
    CIS_FAIL(CIS_ERR_IO, "%s: cannot create a string type for attribute %s", path, name);
  CIS_TRY(write_attr(loc, path, name, t, t, &v));
cleanup:
  cis_h5_close(&t);
  return err;
}

static hid_t file_type(hid_t mtype) {
  if (H5Tequal(mtype, H5T_NATIVE_DOUBLE) > 0) return H5T_IEEE_F64LE;
  if (H5Tequal(mtype, H5T_NATIVE_INT64) > 0) return H5T_STD_I64LE;
  if (H5Tequal(mtype, H5T_NATIVE_INT32) > 0) return H5T_STD_I32LE;
  if (H5Tequal(mtype, H5T_NATIVE_UINT64) > 0) return H5T_STD_U64LE;
  if (H5Tequal(mtype, H5T_NATIVE_INT8) > 0) return H5T_STD_I8LE;
  return mtype;
}

cis_err cis_h5_write(hid_t loc, const char *path, const char *name, hid_t type, int rank,
                     const int64_t *dims, const void *data) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  hsize_t d[2] = {(hsize_t)dims[0], rank > 1 ? (hsize_t)dims[1] : 1};
  hid_t sp = H5Screate_simple(rank, d, NULL), ds = -1;
  if (sp < 0) CIS_FAIL(CIS_ERR_IO, "%s: cannot create a dataspace for %s", path, name);
  ds = H5Dcreate2(loc, name, file_type(type), sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (ds < 0) CIS_FAIL(CIS_ERR_IO, "%s: cannot create dataset %s", path, name);
  if (d[0] * d[1] > 0 && H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
    CIS_FAIL(CIS_ERR_IO, "%s: cannot write dataset %s", path, name);
cleanup:
  cis_h5_close(&ds);
  cis_h5_close(&sp);
  return err;
}

cis_err cis_h5_group(hid_t loc, const char *path, const char *name, hid_t *out) {
  *out = H5Gcreate2(loc, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  CIS_CHECK(*out >= 0, CIS_ERR_IO, "%s: cannot create group %s", path, name);
  return CIS_OK;
}

/* Exclusive creation: HDF5's H5F_ACC_EXCL opens with O_CREAT|O_EXCL, so an existing name (a
 * symbolic link planted there included) fails with EEXIST and is never opened for writing. */
static int h5_create(const char *name, void *f) {
  *(hid_t *)f = H5Fcreate(name, H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
  return *(hid_t *)f < 0 ? -1 : 0;
}

cis_err cis_h5_write_atomic(const char *path, cis_h5_body_fn body, const void *ctx) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  cis_io_tmp tmp = {{0}};
  hid_t f = -1;
  cis_h5_quiet();
  CIS_TRY(cis_io_tmp_create(path, h5_create, &f, &tmp));
  CIS_TRY(body(f, tmp.name, ctx));
  if (H5Fflush(f, H5F_SCOPE_GLOBAL) < 0) CIS_FAIL(CIS_ERR_IO, "cannot flush %s", tmp.name);
  herr_t st = H5Fclose(f);
  f = -1;
  if (st < 0) CIS_FAIL(CIS_ERR_IO, "cannot close %s", tmp.name);
  CIS_TRY(cis_io_tmp_commit(&tmp, path));
cleanup:
  cis_h5_close(&f);
  if (err != CIS_OK) cis_io_tmp_discard(&tmp);
  return err;
}
