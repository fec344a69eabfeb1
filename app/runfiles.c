/* cisolve: the files of a run, checked before any work (app/runfiles.h). */
#define _DEFAULT_SOURCE
#include "app/runfiles.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/files.h"
#include "io/input.h"

int cis_files_output_discarded(const cis_options *o) { return strcmp(o->output, "/dev/null") == 0; }

const char *cis_files_restart_path(const cis_options *o) {
  if (!o->restart_set) return NULL;
  return o->restart[0] ? o->restart : o->checkpoint;
}

/* A file to be written: new or regular, in a folder that exists and is writable. */
static cis_err check_writable(const char *path, const char *what) {
  struct stat st;
  size_t n = strlen(path);
  CIS_CHECK(n > 0 && path[n - 1] != '/', CIS_ERR_USAGE, "the %s %s names a folder, not a file",
            what, path);
  CIS_CHECK(stat(path, &st) != 0 || S_ISREG(st.st_mode), CIS_ERR_USAGE,
            "%s exists and is not a regular file: cisolve writes its files under a temporary "
            "name and renames them, which would replace it (give another path for the %s)", path,
            what);
  char d[4200];
  CIS_CHECK(n < sizeof d, CIS_ERR_USAGE, "the %s path is too long: %s", what, path);
  memcpy(d, path, n + 1);
  const char *dir = dirname(d);
  if (stat(dir, &st) != 0)
    CIS_ERROR(CIS_ERR_USAGE, "cannot write the %s %s: its folder %s %s", what, path, dir,
              errno == ENOENT ? "does not exist" : strerror(errno));
  CIS_CHECK(S_ISDIR(st.st_mode), CIS_ERR_USAGE, "cannot write the %s %s: %s is not a folder",
            what, path, dir);
  if (access(dir, W_OK | X_OK) != 0)
    CIS_ERROR(CIS_ERR_USAGE, "cannot write the %s %s: its folder %s is not writable (%s)", what,
              path, dir, strerror(errno));
  return CIS_OK;
}

typedef enum { F_INPUT, F_RESTART, F_OUTPUT, F_CHECKPOINT, F_EXPORT, F_MOLDEN, F_CONVERTED } file_kind;

typedef struct {
  file_kind kind;
  const char *what; /* for messages: "output", "checkpoint", ... */
  const char *path;
} run_file;

/* Files read come first in the list; those written after them. */
static int written(const run_file *f) { return f->kind >= F_OUTPUT; }

/* Two files of the run that must differ, and do not. */
static cis_err refuse_same(const run_file *w, const run_file *o) {
  const char *why = o->kind == F_INPUT     ? "writing it would destroy the input"
                    : o->kind == F_RESTART ? "writing it would replace the checkpoint this run "
                                             "resumes from"
                                           : "one would replace the other";
  CIS_ERROR(CIS_ERR_USAGE, "the %s %s and the %s %s are the same file: %s (give the %s another "
            "path)", w->what, w->path, o->what, o->path, why, w->what);
}

cis_err cis_files_check(const cis_options *o) {
  const char *restart = cis_files_restart_path(o);
  run_file f[6];
  int nf = 0;
  f[nf++] = (run_file){F_INPUT, "input", o->input};
  if (o->write_input[0]) { /* a conversion writes that file alone */
    f[nf++] = (run_file){F_CONVERTED, "converted input (--write-input)", o->write_input};
  } else {
    if (restart) f[nf++] = (run_file){F_RESTART, "checkpoint to restart from", restart};
    if (!cis_files_output_discarded(o)) f[nf++] = (run_file){F_OUTPUT, "output", o->output};
    f[nf++] = (run_file){F_CHECKPOINT, "checkpoint", o->checkpoint};
    if (o->export_matrix[0])
      f[nf++] = (run_file){F_EXPORT, "exported matrix", o->export_matrix};
    if (o->molden_set) f[nf++] = (run_file){F_MOLDEN, "Molden file", o->molden};
  }
  for (int i = 0; i < nf; i++)
    if (written(&f[i])) CIS_CALL(check_writable(f[i].path, f[i].what));
  /* Each file written against every file before it; a resumed run rewrites the checkpoint it
   * resumed from, as intended. */
  for (int i = 0; i < nf; i++)
    for (int j = 0; j < i && written(&f[i]); j++)
      if (!(f[i].kind == F_CHECKPOINT && f[j].kind == F_RESTART) && cis_files_same(f[i].path, f[j].path))
        CIS_CALL(refuse_same(&f[i], &f[j]));
  if (o->export_matrix[0]) CIS_CALL(cis_matrix_check_name(o->export_matrix));
  if (restart && !o->write_input[0] && access(restart, R_OK) != 0)
    CIS_ERROR(CIS_ERR_USAGE, "cannot open checkpoint %s to restart from: %s", restart,
              strerror(errno));
  return CIS_OK;
}

cis_err cis_files_check_molden(const cis_options *o, const cis_problem *p) {
  if (!o->molden_set || o->write_input[0]) return CIS_OK;
  CIS_CHECK(p->kind == CIS_PROBLEM_INTEGRALS && p->orbitals.nao > 0, CIS_ERR_USAGE,
            "--molden: %s carries no orbitals (an input.h5 with /orbitals, as "
            "scripts/to_input_h5.py's from_scf writes it from a PySCF calculation; "
            "docs/input-format.md)", o->input);
  return CIS_OK;
}
