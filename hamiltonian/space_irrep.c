/* A space's determinants by point-group irrep (hamiltonian/space_impl.h): the target irrep's
 * filter applied where the determinants are enumerated, and the dimension of every irrep. */
#include <string.h>

#include "base/util.h"
#include "hamiltonian/irrep.h"
#include "hamiltonian/space_impl.h"

cis_err cis_space_irrep_setup(cis_space *s, const cis_integrals *ints,
                              const cis_space_spec *spec) {
  s->irrep = spec->irrep;
  int usable = ints->orbsym != NULL;
  for (int p = 0; usable && p < ints->norb; p++)
    usable = ints->orbsym[p] >= 1 && ints->orbsym[p] <= CIS_IRREP_MAX;
  if (s->irrep) {
    CIS_CHECK(s->irrep >= 1 && s->irrep <= CIS_IRREP_MAX, CIS_ERR_INPUT,
              "target irrep %d: expected 1..8", s->irrep);
    CIS_CALL(cis_irrep_check_orbsym(ints, "the integrals", "the target irrep"));
  }
  if (!usable) return CIS_OK;
  CIS_CALL(cis_malloc(&s->orbsym, (size_t)s->norb, sizeof *s->orbsym, "orbital irreps"));
  memcpy(s->orbsym, ints->orbsym, sizeof *s->orbsym * (size_t)s->norb);
  if (spec->kind == CIS_SPACE_FCI) {
    CIS_CALL(cis_irrep_fci_dims(s->norb, s->orbsym, s->nalpha, s->nbeta, s->irrep_dim));
    s->has_irrep_dims = 1;
  }
  return CIS_OK;
}

cis_err cis_space_irrep_strings(const cis_space *s, unsigned char **ga, unsigned char **gb) {
  CIS_CALL(cis_malloc(ga, (size_t)CIS_MAX(s->astr.n, 1), 1, "alpha string irreps"));
  CIS_CALL(cis_malloc(gb, (size_t)CIS_MAX(s->bstr.n, 1), 1, "beta string irreps"));
  for (int64_t i = 0; i < s->astr.n; i++)
    (*ga)[i] = (unsigned char)cis_irrep_string(s->orbsym, cis_strlist_at(&s->astr, i), s->nw);
  for (int64_t i = 0; i < s->bstr.n; i++)
    (*gb)[i] = (unsigned char)cis_irrep_string(s->orbsym, cis_strlist_at(&s->bstr, i), s->nw);
  return CIS_OK;
}

cis_err cis_space_irrep_filter(cis_space *s, int64_t *keys, int64_t *nkeys) {
  if (!s->orbsym) return CIS_OK;
  unsigned char *ga = NULL, *gb = NULL;
  cis_err err = cis_space_irrep_strings(s, &ga, &gb);
  if (err == CIS_OK) {
    int64_t m = 0;
    memset(s->irrep_dim, 0, sizeof s->irrep_dim);
    for (int64_t k = 0; k < *nkeys; k++) {
      int g = ga[keys[k] >> 32] ^ gb[keys[k] & 0xffffffff];
      s->irrep_dim[g] += 1.0;
      if (!s->irrep || g == s->irrep - 1) keys[m++] = keys[k];
    }
    *nkeys = m;
    s->has_irrep_dims = 1;
  }
  cis_free(&ga);
  cis_free(&gb);
  return err;
}

int cis_space_irrep_dims(const cis_space *s, double dims[CIS_IRREP_MAX]) {
  if (!s->has_irrep_dims) return 0;
  memcpy(dims, s->irrep_dim, sizeof s->irrep_dim);
  return 1;
}
int cis_space_irrep(const cis_space *s) { return s->irrep; }
