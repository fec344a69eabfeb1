/* --irrep all (app/irrep_all.h). */
#include "app/irrep_all.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "app/runfiles.h"
#include "app/target.h"
#include "base/util.h"
#include "hamiltonian/irrep.h"
#include "io/input.h"

#define MAX_STATES 64

static struct {
  int current;
  int n[8];                     /* states recorded per irrep (index: irrep - 1) */
  double e[8][MAX_STATES], s2[8][MAX_STATES];
  int has_s2;
} g_all;

int cis_irrep_all_current(void) { return g_all.current; }

int cis_irrep_all_asked(int argc, char **argv) {
  int all = 0;
  for (int i = 1; i < argc; i++) {
    const char *v = NULL;
    if (!strcmp(argv[i], "--irrep") && i + 1 < argc)
      v = argv[++i];
    else if (!strncmp(argv[i], "--irrep=", 8))
      v = argv[i] + 8;
    if (v) all = !strcasecmp(v, "all");
  }
  return all;
}

/* "a.out.h5" -> "a.irrepN.out.h5" (before ".out.h5", ".ckpt.h5" or the last extension). */
static cis_err with_irrep(char *path, size_t cap, int g) {
  const char *ext[] = {".out.h5", ".ckpt.h5"};
  size_t n = strlen(path), at = n;
  for (int k = 0; k < 2; k++) {
    size_t m = strlen(ext[k]);
    if (n > m && !strcmp(path + n - m, ext[k])) at = n - m;
  }
  if (at == n) {
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    if (dot && dot != path && (!slash || dot > slash + 1)) at = (size_t)(dot - path);
  }
  char mark[16], tail[4096];
  int k = snprintf(mark, sizeof mark, ".irrep%d", g);
  if (at >= (size_t)k && !strncmp(path + at - k, mark, (size_t)k)) return CIS_OK; /* named */
  snprintf(tail, sizeof tail, "%s", path + at);
  int w = snprintf(path + at, cap - at, ".irrep%d%s", g, tail);
  CIS_CHECK(w > 0 && (size_t)w < cap - at, CIS_ERR_USAGE, "--irrep all: path too long");
  return CIS_OK;
}

cis_err cis_irrep_all_paths(cis_options *o) {
  if (!g_all.current) return CIS_OK;
  if (!cis_files_output_discarded(o))
    CIS_CALL(with_irrep(o->output, sizeof o->output, g_all.current));
  CIS_CALL(with_irrep(o->checkpoint, sizeof o->checkpoint, g_all.current));
  if (o->molden_set) CIS_CALL(with_irrep(o->molden, sizeof o->molden, g_all.current));
  return CIS_OK;
}

void cis_irrep_all_record(int nroots, const double *e, const double *s2) {
  int g = g_all.current - 1;
  if (g < 0) return;
  g_all.n[g] = CIS_MIN(nroots, MAX_STATES);
  for (int j = 0; j < g_all.n[g]; j++) {
    g_all.e[g][j] = e[j];
    g_all.s2[g][j] = s2 ? s2[j] : 0.0;
  }
  g_all.has_s2 = s2 != NULL;
}

/* The irreps with FCI determinants for the input's electrons (after --ms2), and the point
 * group that names them (-1: not known). */
static cis_err irreps_of(int argc, char **argv, int *list, int *n, int *group) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  cis_options o;
  cis_problem p;
  int exit_now = 0;
  memset(&p, 0, sizeof p);
  cis_options_default(&o);
  CIS_TRY(cis_options_parse(argc, argv, &o, &exit_now));
  if (o.restart_set)
    CIS_FAIL(CIS_ERR_USAGE, "--irrep all cannot --restart: restart one irrep (--irrep N with "
             "its checkpoint, named .irrepN)");
  CIS_TRY(cis_input_read(o.input, &p));
  if (p.kind != CIS_PROBLEM_INTEGRALS)
    CIS_FAIL(CIS_ERR_USAGE, "%s holds an explicit matrix: --irrep applies only to integral "
             "inputs", o.input);
  CIS_TRY(cis_target_check_orbsym(&o, &p.ints, "--irrep all"));
  int nel = p.ints.nalpha + p.ints.nbeta, na = p.ints.nalpha, nb = p.ints.nbeta;
  if (o.ms2_set) { /* an impossible --ms2 is refused by the runs */
    na = (nel + o.ms2) / 2;
    nb = (nel - o.ms2) / 2;
  }
  double dims[8];
  *n = 0;
  if (na >= 0 && nb >= 0) {
    CIS_TRY(cis_irrep_fci_dims(p.ints.norb, p.ints.orbsym, na, nb, dims));
    for (int g = 0; g < 8; g++)
      if (dims[g] > 0) list[(*n)++] = g + 1;
  }
  if (*n == 0) list[(*n)++] = 1;
  *group = o.point_group[0] ? cis_point_group_find(o.point_group)
                            : cis_point_group_infer(p.ints.orbsym, p.ints.norb);
cleanup:
  cis_problem_free(&p);
  return err;
}

static void print_table(const int *list, int n, int group) {
  printf("\nevery irrep      the lowest states of each irrep (--irrep all)\n");
  printf("%-12s %4s %20s %12s\n", "irrep", "root", "total energy (Eh)", g_all.has_s2 ? "<S^2>" : "");
  for (int k = 0; k < n; k++) {
    int g = list[k];
    char name[48], label[64];
    cis_irrep_name(group, NULL, 0, g, name, sizeof name);
    if (strncmp(name, "irrep", 5) == 0)
      snprintf(label, sizeof label, "%s", name);
    else
      snprintf(label, sizeof label, "%s (%d)", name, g);
    for (int j = 0; j < g_all.n[g - 1]; j++) {
      printf("%-12s %4d %20.12f", label, j, g_all.e[g - 1][j]);
      if (g_all.has_s2) printf(" %12.6f", g_all.s2[g - 1][j]);
      printf("\n");
    }
  }
}

cis_err cis_irrep_all(int argc, char **argv, cis_run_fn run, int *exit_code) {
  int list[8], n = 0, group = -1;
  cis_err e0 = irreps_of(argc, argv, list, &n, &group);
  if (e0 != CIS_OK) {
    *exit_code = cis_exit_code(e0);
    return e0;
  }
  *exit_code = 0;
  for (int k = 0; k < n; k++) {
    int code = 0;
    g_all.current = list[k];
    cis_err e = run(argc, argv, &code);
    g_all.current = 0;
    if (code > *exit_code) *exit_code = code;
    if (e != CIS_OK) return e;
    if (code != 0 && code != 2) return CIS_OK; /* stopped (exit 3): the rest is not run */
    fflush(stdout);
  }
  int quiet = 0;
  for (int i = 1; i < argc; i++) quiet |= !strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q");
  if (!quiet) print_table(list, n, group);
  return CIS_OK;
}
