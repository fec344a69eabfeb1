/* cisolve: writing a problem as input.h5 version 1 (docs/input-format.md), for
 * `cisolve --write-input FILE INPUT`: whatever INPUT's format, the file holds what the reader
 * took from it, after every check the reader makes, so that one parser serves the solver and
 * the converter (scripts/to_input_h5.py).
 *
 * Scalars of /integrals and the space's kind and level are attributes (the reader takes a
 * scalar as a dataset or an attribute); the space is written when the input named one or
 * --space chose one; options the input stored are kept, as the strings the reader made of
 * them; the orbitals (/orbitals) as they were read.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "io/input.h"
#include "io/files.h"
#include "io/io_private.h"

static cis_err write_integrals(hid_t f, const char *path, const cis_integrals *I) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  hid_t g = -1;
  int64_t n = I->norb, d2[2] = {n, n}, neri = cis_eri_size(I->norb);
  CIS_TRY(cis_h5_group(f, path, "integrals", &g));
  CIS_TRY(cis_h5_attr_int(g, path, "norb", n));
  CIS_TRY(cis_h5_attr_int(g, path, "nelec", I->nalpha + I->nbeta));
  CIS_TRY(cis_h5_attr_int(g, path, "ms2", I->nalpha - I->nbeta));
  CIS_TRY(cis_h5_attr_double(g, path, "ecore", I->ecore));
  CIS_TRY(cis_h5_write(g, path, "h1e", H5T_NATIVE_DOUBLE, 2, d2, I->h1e));
  CIS_TRY(cis_h5_write(g, path, "eri", H5T_NATIVE_DOUBLE, 1, &neri, I->eri));
  if (I->orbsym) CIS_TRY(cis_h5_write(g, path, "orbsym", H5T_NATIVE_INT32, 1, &n, I->orbsym));
  if (I->isym) CIS_TRY(cis_h5_attr_int(g, path, "isym", I->isym));
cleanup:
  cis_h5_close(&g);
  return err;
}

/* ndet strings of nw words, alpha and beta, as NAME_alpha / NAME_beta (ndet x nw). */
static cis_err write_strings(hid_t g, const char *path, const char *name, int64_t ndet,
                             int64_t nw, const uint64_t *a, const uint64_t *b) {
  char full[64];
  int64_t d[2] = {ndet, nw};
  snprintf(full, sizeof full, "%s_alpha", name);
  CIS_CALL(cis_h5_write(g, path, full, H5T_NATIVE_UINT64, 2, d, a));
  snprintf(full, sizeof full, "%s_beta", name);
  CIS_CALL(cis_h5_write(g, path, full, H5T_NATIVE_UINT64, 2, d, b));
  return CIS_OK;
}

static cis_err write_space(hid_t f, const char *path, const cis_problem *p) {
  const cis_space_spec *sp = &p->space;
  if (!p->space_from_file && sp->kind == CIS_SPACE_FCI) return CIS_OK;
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  hid_t g = -1;
  int64_t nw = cis_nwords(p->ints.norb);
  static const char *kinds[] = {"fci", "truncated", "list"};
  char mrci[32];
  snprintf(mrci, sizeof mrci, "mrci%d", sp->level);
  CIS_TRY(cis_h5_group(f, path, "space", &g));
  CIS_TRY(cis_h5_attr_string(g, path, "kind", sp->kind == CIS_SPACE_MRCI ? mrci : kinds[sp->kind]));
  if (sp->kind == CIS_SPACE_TRUNCATED) CIS_TRY(cis_h5_attr_int(g, path, "level", sp->level));
  if (sp->kind == CIS_SPACE_MRCI && sp->cas_norb > 0) {
    CIS_TRY(cis_h5_attr_int(g, path, "cas_nelec", sp->cas_nelec));
    CIS_TRY(cis_h5_attr_int(g, path, "cas_norb", sp->cas_norb));
  }
  if (sp->nref_dets > 0)
    CIS_TRY(write_strings(g, path, "reference", sp->nref_dets, nw, sp->ref_alpha, sp->ref_beta));
  if (sp->kind == CIS_SPACE_LIST)
    CIS_TRY(write_strings(g, path, "det", sp->ndets, nw, sp->det_alpha, sp->det_beta));
cleanup:
  cis_h5_close(&g);
  return err;
}

/* The input's options, less --frozen and --active once they were applied to the integrals
 * written (the file's orbitals are then the kept ones: applying them again would freeze more). */
static cis_err write_options(hid_t f, const char *path, const cis_kvlist *all, int applied) {
  cis_kvlist kept = {0}, *kv = &kept;
  for (int i = 0; i < all->n; i++)
    if (!applied || (strcmp(all->kv[i].key, "frozen") && strcmp(all->kv[i].key, "active")))
      kept.kv[kept.n++] = all->kv[i];
  if (kv->n == 0) return CIS_OK;
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  hid_t g = -1;
  CIS_TRY(cis_h5_group(f, path, "options", &g));
  for (int i = 0; i < kv->n; i++)
    CIS_TRY(cis_h5_attr_string(g, path, kv->kv[i].key, kv->kv[i].value));
cleanup:
  cis_h5_close(&g);
  return err;
}

/* /orbitals as the reader took it: the Molden header's bytes and the AO coefficients. */
static cis_err write_orbitals(hid_t f, const char *path, const cis_problem *p) {
  const cis_orbitals *o = &p->orbitals;
  if (o->nao == 0) return CIS_OK;
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  hid_t g = -1;
  int64_t len = (int64_t)strlen(o->molden_header), da[2] = {o->nao, p->ints.norb},
          dc[2] = {o->nao, o->ncore};
  CIS_TRY(cis_h5_group(f, path, "orbitals", &g));
  CIS_TRY(cis_h5_write(g, path, "molden_header", H5T_NATIVE_UINT8, 1, &len, o->molden_header));
  CIS_TRY(cis_h5_write(g, path, "active", H5T_NATIVE_DOUBLE, 2, da, o->active));
  if (o->ncore > 0) CIS_TRY(cis_h5_write(g, path, "core", H5T_NATIVE_DOUBLE, 2, dc, o->core));
cleanup:
  cis_h5_close(&g);
  return err;
}

static cis_err input_body(hid_t f, const char *tmp, const void *ctx) {
  const cis_problem *p = ctx;
  if (p->kind == CIS_PROBLEM_MATRIX) {
    cis_row_source src;
    cis_csr_row_source(&p->matrix, &src);
    cis_io_matrix m = {.src = &src, .window = 1};
    CIS_CALL(cis_h5_write_matrix(f, tmp, &m));
  } else {
    CIS_CALL(cis_h5_attr_string(f, tmp, "format", "cisolve-input"));
    CIS_CALL(cis_h5_attr_int(f, tmp, "version", 1));
    CIS_CALL(write_integrals(f, tmp, &p->ints));
    CIS_CALL(write_space(f, tmp, p));
    CIS_CALL(write_orbitals(f, tmp, p));
  }
  CIS_CALL(write_options(f, tmp, &p->file_options, p->window.applied));
  return CIS_OK;
}

cis_err cis_h5input_write(const char *path, const cis_problem *p) {
  CIS_CHECK(!cis_files_same(path, p->source), CIS_ERR_USAGE, "--write-input %s is the input "
            "itself: give another name (the input is never replaced)", path);
  CIS_CALL(cis_h5_write_atomic(path, input_body, p));
  return CIS_OK;
}
