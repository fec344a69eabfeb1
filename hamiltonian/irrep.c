/* Point-group irreps of determinants (hamiltonian/irrep.h). */
#include "hamiltonian/irrep.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/util.h"

/* Irrep names in Molpro's numbering (entry k is irrep k+1), as Molpro and PySCF print them
 * (pyscf.tools.fcidump.ORBSYM_MAP gives the same numbering). */
typedef struct {
  const char *name;
  int n;
  const char *irrep[CIS_IRREP_MAX];
} group;

static const group groups[] = {
    {"D2h", 8, {"Ag", "B3u", "B2u", "B1g", "B1u", "B2g", "B3g", "Au"}},
    {"C2v", 4, {"A1", "B1", "B2", "A2"}},
    {"C2h", 4, {"Ag", "Au", "Bu", "Bg"}},
    {"D2", 4, {"A", "B3", "B2", "B1"}},
    {"Cs", 2, {"A'", "A''"}},
    {"Ci", 2, {"Ag", "Au"}},
    {"C2", 2, {"A", "B"}},
    {"C1", 1, {"A"}},
};
#define NGROUPS ((int)(sizeof groups / sizeof groups[0]))

int cis_point_group_find(const char *name) {
  for (int g = 0; g < NGROUPS; g++)
    if (strcasecmp(name, groups[g].name) == 0) return g;
  return -1;
}
int cis_point_group_nirrep(int gi) { return groups[gi].n; }
const char *cis_point_group_name(int gi) { return groups[gi].name; }

static int orbsym_max(const int *orbsym, int norb) {
  int m = 1;
  for (int p = 0; p < norb; p++) m = CIS_MAX(m, orbsym[p]);
  return m;
}

int cis_point_group_infer(const int *orbsym, int norb) {
  int m = orbsym_max(orbsym, norb);
  if (m > 4) return cis_point_group_find("D2h");
  if (m == 1) return cis_point_group_find("C1");
  return -1;
}

cis_err cis_irrep_check_orbsym(const cis_integrals *ints, const char *input, const char *what) {
  CIS_CHECK(ints->orbsym, CIS_ERR_USAGE, "%s: %s has no orbital symmetries (FCIDUMP ORBSYM, "
            "input.h5 /integrals/orbsym): the irreps of its determinants are unknown", what,
            input);
  for (int p = 0; p < ints->norb; p++)
    CIS_CHECK(ints->orbsym[p] >= 1 && ints->orbsym[p] <= CIS_IRREP_MAX, CIS_ERR_USAGE,
              "%s: %s: ORBSYM entry %d is %d, expected an irrep 1..8 in Molpro's numbering (PySCF "
              "writes its own 0-based numbers unless fcidump.from_scf(..., molpro_orbsym=True))",
              what, input, p + 1, ints->orbsym[p]);
  return CIS_OK;
}

/* "A''" and "A\"" are one name. */
static int same_name(const char *a, const char *b) {
  char x[16], y[16];
  const char *in[2] = {a, b};
  char *out[2] = {x, y};
  for (int k = 0; k < 2; k++) {
    size_t n = 0;
    for (const char *c = in[k]; *c && n + 2 < sizeof x; c++) {
      if (*c == '"') {
        out[k][n++] = '\'';
        out[k][n++] = '\'';
      } else {
        out[k][n++] = (char)tolower((unsigned char)*c);
      }
    }
    out[k][n] = '\0';
  }
  return strcmp(x, y) == 0;
}

static int number_in(int g, const char *name) {
  for (int k = 0; k < groups[g].n; k++)
    if (same_name(name, groups[g].irrep[k])) return k + 1;
  return 0;
}

cis_err cis_irrep_parse(const char *text, int group, const int *orbsym, int norb, int *irrep,
                        int *named) {
  *named = group;
  int m = orbsym_max(orbsym, norb);
  char *end;
  long v = strtol(text, &end, 10);
  if (end != text && *end == '\0') {
    int top = group >= 0 ? groups[group].n : CIS_IRREP_MAX;
    CIS_CHECK(v >= 1 && v <= top, CIS_ERR_USAGE, "--irrep %s: expected an irrep 1..%d%s%s", text,
              top, group >= 0 ? " of " : "", group >= 0 ? groups[group].name : "");
    *irrep = (int)v;
    return CIS_OK;
  }
  if (group >= 0) {
    CIS_CHECK(m <= groups[group].n, CIS_ERR_USAGE, "--point-group %s has %d irreps, but ORBSYM "
              "holds irrep %d", groups[group].name, groups[group].n, m);
    *irrep = number_in(group, text);
    CIS_CHECK(*irrep, CIS_ERR_USAGE, "--irrep %s: %s has no irrep of that name", text,
              groups[group].name);
    return CIS_OK;
  }
  /* every group that can hold ORBSYM's values and has the name */
  char list[512] = "";
  size_t len = 0;
  int found = 0, first = 0, agree = 1, only = -1;
  for (int g = 0; g < NGROUPS; g++) {
    int k = groups[g].n >= m ? number_in(g, text) : 0;
    if (!k) continue;
    if (found && k != first) agree = 0;
    if (!found) first = k;
    only = found ? -1 : g;
    found++;
    len += (size_t)snprintf(list + len, len < sizeof list ? sizeof list - len : 0, "%s%d in %s",
                            found > 1 ? ", " : "", k, groups[g].name);
  }
  CIS_CHECK(found, CIS_ERR_USAGE, "--irrep %s: no point group whose irreps cover ORBSYM's "
            "(1..%d) has an irrep of that name (D2h, C2v, C2h, D2, Cs, Ci, C2, C1; Molpro's "
            "names, e.g. Ag, B1u, A1, B2, A', A'')", text, m);
  CIS_CHECK(agree, CIS_ERR_USAGE, "--irrep %s is ambiguous: the FCIDUMP does not name its point "
            "group, and ORBSYM (irreps 1..%d) fits several: %s; give the number or "
            "--point-group", text, m, list);
  *irrep = first;
  *named = only;
  return CIS_OK;
}

void cis_irrep_name(int group, const int *orbsym, int norb, int irrep, char *buf, size_t len) {
  if (group < 0 && orbsym) group = cis_point_group_infer(orbsym, norb);
  if (group >= 0 && irrep >= 1 && irrep <= groups[group].n)
    snprintf(buf, len, "%s", groups[group].irrep[irrep - 1]);
  else
    snprintf(buf, len, "irrep %d", irrep);
}

cis_err cis_irrep_string_counts(int norb, const int *orbsym, int nel,
                                double counts[CIS_IRREP_MAX]) {
  for (int g = 0; g < CIS_IRREP_MAX; g++) counts[g] = 0.0;
  if (nel < 0 || nel > norb) return CIS_OK;
  /* c[n][g]: strings of the orbitals so far with n electrons and irrep g */
  double(*c)[CIS_IRREP_MAX] = NULL;
  CIS_CALL(cis_calloc(&c, (size_t)nel + 1, sizeof *c, "string counts by irrep"));
  c[0][0] = 1.0;
  for (int p = 0; p < norb; p++) {
    int s = orbsym[p] - 1;
    for (int n = CIS_MIN(p + 1, nel); n >= 1; n--)
      for (int g = 0; g < CIS_IRREP_MAX; g++) c[n][g] += c[n - 1][g ^ s];
  }
  for (int g = 0; g < CIS_IRREP_MAX; g++) counts[g] = c[nel][g];
  cis_free(&c);
  return CIS_OK;
}

cis_err cis_irrep_fci_dims(int norb, const int *orbsym, int nalpha, int nbeta,
                           double dims[CIS_IRREP_MAX]) {
  double a[CIS_IRREP_MAX], b[CIS_IRREP_MAX];
  CIS_CALL(cis_irrep_string_counts(norb, orbsym, nalpha, a));
  CIS_CALL(cis_irrep_string_counts(norb, orbsym, nbeta, b));
  for (int g = 0; g < CIS_IRREP_MAX; g++) {
    dims[g] = 0.0;
    for (int x = 0; x < CIS_IRREP_MAX; x++) dims[g] += a[x] * b[x ^ g];
  }
  return CIS_OK;
}
