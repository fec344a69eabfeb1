/* cisolve: Molden files of orbitals (io/molden.h). */
#define _POSIX_C_SOURCE 200809L
#include "io/molden.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "io/io_private.h"

/* Whether `text` holds the section title `title` ("[GTO]") at the start of a line, any case. */
static int has_section(const char *text, const char *title) {
  size_t n = strlen(title);
  const char *l = text;
  while (l) {
    l += strspn(l, " \t");
    if (strncasecmp(l, title, n) == 0) return 1;
    l = strchr(l, '\n');
    if (l) l++;
  }
  return 0;
}

cis_err cis_molden_check_header(const char *path, const char *name, const char *text) {
  const char *want = "expected the Molden file up to its [MO] section, as "
                     "pyscf.tools.molden.header writes it";
  CIS_CHECK(strncasecmp(text, "[Molden Format]", 15) == 0, CIS_ERR_INPUT,
            "%s: %s does not start with [Molden Format]; %s", path, name, want);
  CIS_CHECK(has_section(text, "[Atoms]"), CIS_ERR_INPUT, "%s: %s has no [Atoms] section; %s",
            path, name, want);
  CIS_CHECK(has_section(text, "[GTO]"), CIS_ERR_INPUT, "%s: %s has no [GTO] section; %s", path,
            name, want);
  CIS_CHECK(!has_section(text, "[MO]"), CIS_ERR_INPUT, "%s: %s holds an [MO] section; %s", path,
            name, want);
  return CIS_OK;
}

static void molden_body(FILE *f, const char *header, int nao, int nmo, const double *coef,
                        const double *occ) {
  size_t n = strlen(header);
  fputs(header, f);
  if (n > 0 && header[n - 1] != '\n') fputc('\n', f);
  fputs("[MO]\n", f);
  for (int i = 0; i < nmo; i++) {
    fprintf(f, " Sym= A\n Ene= %15.10g\n Spin= Alpha\n Occup= %.12f\n", (double)i, occ[i]);
    for (int mu = 0; mu < nao; mu++)
      fprintf(f, " %3d    %22.15e\n", mu + 1, coef[(size_t)mu * (size_t)nmo + (size_t)i]);
  }
}

cis_err cis_molden_write(const char *path, const char *header, int nao, int nmo,
                         const double *coef, const double *occ) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  cis_io_tmp tmp = {{0}};
  FILE *f = NULL;
  CIS_TRY(cis_io_tmp_create(path, cis_io_create_stdio, &f, &tmp));
  molden_body(f, header, nao, nmo, coef, occ);
  CIS_TRY(cis_io_tmp_commit_stdio(&f, &tmp, path));
cleanup:
  if (f) fclose(f);
  if (err != CIS_OK) cis_io_tmp_discard(&tmp);
  return err;
}
