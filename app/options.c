/* cisolve: command-line and input-file options. One table of options; the same setter serves
 * the command line and the input file's /options, so both accept exactly the same names. */
#define _POSIX_C_SOURCE 200809L
#include "app/options.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/signals.h"
#include "base/util.h"
#include "app/version.h"
#include "hamiltonian/orbitals.h"

/* The most orbitals a determinant space handles (hamiltonian/strings.h). */
#define ORB_MAX 4096

void cis_options_default(cis_options *o) {
  memset(o, 0, sizeof *o);
  o->nroots = 1;
  o->tol_energy = 1e-10;
  o->tol_residual = 1e-5;
  o->max_iter = 100;
  o->max_subspace = 0; /* solver default */
  o->level_shift = 0.0;
  o->solver = CIS_SOLVER_DAVIDSON;
  o->space_kind = CIS_SPACE_FCI;
  o->device = CIS_DEVICE_AUTO;
  o->device_index = -1;
  o->mem = -1;
  o->gpu_mem = -1;
  o->checkpoint_interval = 1800;
  o->spin_shift = 0.5;
  o->check_roots = CIS_CHECK_BLOCKS;
  o->frozen = -1;
}

typedef enum { ARG_NONE, ARG_REQUIRED, ARG_OPTIONAL } arg_kind;
typedef struct {
  const char *name;
  arg_kind arg;
  const char *metavar;
  const char *help;
} opt_desc;

static const opt_desc k_opts[] = {
    {"nroots", ARG_REQUIRED, "K", "number of lowest eigenpairs (default 1)"},
    {"tol", ARG_REQUIRED, "E", "energy convergence per root, Eh (default 1e-10)"},
    {"tol-residual", ARG_REQUIRED, "R", "residual-norm convergence per root (default 1e-5)"},
    {"max-iter", ARG_REQUIRED, "N", "maximum solver iterations (default 100)"},
    {"max-subspace", ARG_REQUIRED, "M", "Davidson basis size before collapse (default max(8K,24))"},
    {"level-shift", ARG_REQUIRED, "S", "preconditioner level shift, Eh (default 0)"},
    {"solver", ARG_REQUIRED, "NAME", "davidson (default) or lanczos"},
    {"spin", ARG_REQUIRED, "S", "target total spin S (0, 0.5, 1, ...) within the chosen Ms (docs/solvers.md)"},
    {"spin-shift", ARG_REQUIRED, "E", "spin penalty shift for --spin, Eh (default 0.5)"},
    {"check-roots", ARG_OPTIONAL, "MODE",
     "how the run makes sure no lower state was missed: blocks (default: search every symmetry "
     "block near the roots), full (--check-roots: blocks, then a search from random vectors), "
     "none"},
    {"molden", ARG_OPTIONAL, "FILE",
     "natural orbitals (state-averaged over the roots) as a Molden file, for an input.h5 with "
     "/orbitals; implies --rdm1 (default FILE: OUTPUT stem + .molden)"},
    {"rdm1", ARG_NONE, NULL, "one-particle density matrices (spin-summed and per spin) and natural orbitals per root"},
    {"rdm2", ARG_NONE, NULL, "--rdm1 and the spin-resolved two-particle density matrices per root, and with several roots the transition ones between them"},
    {"trans-rdm", ARG_NONE, NULL, "--rdm1 and the transition one-particle density matrices between roots"},
    {"space", ARG_REQUIRED, "KIND", "fci, cisd, cisdt, cisdtq, ci<N>, list or mrci<N> (default: input's, else fci)"},
    {"cas", ARG_REQUIRED, "NE,NO", "model space of --space mrci<N>: CAS of NE electrons in NO orbitals above the doubly occupied ones (default: the input's reference determinants or list)"},
    {"frozen", ARG_REQUIRED, "N", "the N lowest orbitals doubly occupied and removed, their energy folded into the core energy (default: none, or those below --active)"},
    {"active", ARG_REQUIRED, "LIST", "orbitals kept, 1-based as in the FCIDUMP, e.g. 3-10 or 2,3,5-7; the others above --frozen are deleted (default: all)"},
    {"ms2", ARG_REQUIRED, "N", "2*Ms = nalpha - nbeta, overriding the input's MS2"},
    {"irrep", ARG_REQUIRED, "IRREP",
     "only determinants of this point-group irrep: a number (ORBSYM's, Molpro numbering), a name "
     "(Ag, B1u, A1, B2, A', ...), isym (the input's ISYM), all (each irrep in turn: the lowest states of every irrep) or none (default: the input's ISYM when it is not 1, else none)"},
    {"point-group", ARG_REQUIRED, "G",
     "point group that names --irrep's irreps: D2h, C2v, C2h, D2, Cs, Ci, C2 or C1 (default: "
     "inferred from ORBSYM when only one group fits)"},
    {"ref-det", ARG_REQUIRED, "A/B",
     "reference determinant of truncated CI, 0-based occupied orbitals, e.g. '0 1 2 5/0 1 2 5' "
     "(default: the input's, else OCC/CLOSED, else aufbau by orbital energy; reported)"},
    {"ref-size", ARG_REQUIRED, "N",
     "Reference region size (default automatic, reported); the preconditioner uses at most its "
     "first 2048"},
    {"device", ARG_REQUIRED, "DEV", "auto (default), cpu, gpu or gpu:N"},
    {"mem", ARG_REQUIRED, "SIZE", "host memory for cached Hamiltonian blocks, e.g. 4G (default: 3/4 of what RAM, cgroup and ulimit -v allow, less the solver vectors; none when a GPU holds the whole matrix)"},
    {"gpu-mem", ARG_REQUIRED, "SIZE", "GPU memory budget for the matrix (default: most of the free memory)"},
    {"matrix-free", ARG_OPTIONAL, "MODE", "on (a bare --matrix-free): store no row of H, every product generating every row again, on the GPU in a GPU run, on the CPU's threads otherwise (integral inputs only); off: store the rows; auto (default): on where a GPU generates the rows and the products expected are too few for storing them to pay (docs/gpu.md), off otherwise"},
    {"build", ARG_REQUIRED, "WHERE", "where a GPU run generates the rows of H it stores: gpu (default: counted, then generated into the GPU's layouts there; the host stores none) or host (generated on the host's threads and uploaded, as a CPU run stores them)"},
    {"regen", ARG_REQUIRED, "WHERE", "where a GPU run makes the Hamiltonian rows that do not fit on the GPU, in every product: gpu (default: generated there) or host (sent from the host's cache, or generated by the host)"},
    {"threads", ARG_REQUIRED, "N", "OpenMP threads (default: OMP_NUM_THREADS or all cores)"},
    {"output", ARG_REQUIRED, "FILE", "results file (default: INPUT stem + .out.h5 here; /dev/null: report only)"},
    {"export-matrix", ARG_REQUIRED, "FILE", "write the Hamiltonian (.mtx or .h5 CSR) and continue"},
    {"write-input", ARG_REQUIRED, "FILE", "write INPUT, checked, as input.h5 (with --space, --ms2, --frozen, --active, --cas) and stop"},
    {"checkpoint", ARG_REQUIRED, "FILE", "checkpoint file (default: OUTPUT stem with .ckpt.h5)"},
    {"checkpoint-every", ARG_REQUIRED, "N", "write a checkpoint every N iterations (default off)"},
    {"checkpoint-interval", ARG_REQUIRED, "SEC", "write a checkpoint every SEC seconds (default 1800; 0 = off)"},
    {"restart", ARG_OPTIONAL, "FILE", "resume from the checkpoint (--restart=FILE for another file)"},
    {"walltime", ARG_REQUIRED, "HH:MM:SS", "stop with a checkpoint (exit 3) safely before this much time"},
    {"dry-run", ARG_NONE, NULL, "print the plan (determinants, estimated nonzeros, host and GPU memory, placement, cost of a product) without building the matrix; writes nothing"},
    {"verbose", ARG_NONE, NULL, "more detail, and a trace with errors"},
    {"quiet", ARG_NONE, NULL, "print only the final energies"},
    {"help", ARG_NONE, NULL, "this help"},
    {"version", ARG_NONE, NULL, "print the version"},
};
#define NOPTS ((int)(sizeof k_opts / sizeof k_opts[0]))

/* Options that name a file to write or read: the command line's alone, never an input file's
 * (an untrusted input could otherwise overwrite any file the user can write). */
static int is_path_option(const char *name) {
  static const char *const paths[] = {"output", "export-matrix", "checkpoint", "restart",
                                      "molden"};
  for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
    if (strcmp(name, paths[i]) == 0) return 1;
  return 0;
}

void cis_options_print_help(void) {
  printf(
      "usage: cisolve [options] INPUT\n"
      "\n"
      "Lowest eigenpairs of a configuration-interaction Hamiltonian.\n"
      "INPUT is an FCIDUMP, a cisolve input.h5 (docs/input-format.md) or a Matrix Market\n"
      "file with an explicit symmetric matrix; the format is detected from the content.\n"
      "Options stored in input.h5 apply unless given here; file paths (--output,\n"
      "--checkpoint, --export-matrix, --restart, --molden) come from the command line only.\n"
      "Under mpirun or srun the rows are split over the ranks, one GPU each\n"
      "(docs/parallel.md).\n"
      "\noptions:\n");
  for (int i = 0; i < NOPTS; i++) {
    char lhs[64];
    if (k_opts[i].arg == ARG_REQUIRED)
      snprintf(lhs, sizeof lhs, "--%s %s", k_opts[i].name, k_opts[i].metavar);
    else if (k_opts[i].arg == ARG_OPTIONAL)
      snprintf(lhs, sizeof lhs, "--%s[=%s]", k_opts[i].name, k_opts[i].metavar);
    else
      snprintf(lhs, sizeof lhs, "--%s", k_opts[i].name);
    printf("  %-26s %s\n", lhs, k_opts[i].help);
  }
  printf(
      "\nLong builds and uploads print progress lines (rows done, rate, time left): updated in\n"
      "place on a terminal, every 10 s in a log; none with --quiet (docs/usage.md).\n"
      "\nexit codes: 0 converged; 1 bad usage or input; 2 not converged (results written and\n"
      "flagged); 3 stopped by a signal or walltime after a checkpoint; 4 resources (no usable\n"
      "GPU when one was demanded, memory budget too small, a determinant space larger than the\n"
      "host memory left). See docs/exit-codes.md.\n");
}

static cis_err parse_space(const char *v, cis_options *o) {
  if (!cis_space_by_name(v, &o->space_kind, &o->space_level))
    CIS_ERROR(CIS_ERR_USAGE, "--space: unknown space '%s' (expected fci, cis, cisd, cisdt, cisdtq, "
              "ci<N> or mrci<N> with 1 <= N <= %d, or list)", v, CIS_SPACE_MAX_LEVEL);
  o->space_set = 1;
  return CIS_OK;
}

static cis_err parse_device(const char *v, cis_options *o) {
  if (strcmp(v, "auto") == 0) {
    o->device = CIS_DEVICE_AUTO;
  } else if (strcmp(v, "cpu") == 0) {
    o->device = CIS_DEVICE_CPU;
  } else if (strncmp(v, "gpu", 3) == 0 && (v[3] == '\0' || v[3] == ':')) {
    o->device = CIS_DEVICE_GPU;
    o->device_index = -1;
    if (v[3] == ':') {
      long d;
      if (cis_parse_int(v + 4, "--device gpu:N", &d) != CIS_OK || d < 0 || d > 1024)
        CIS_ERROR(CIS_ERR_USAGE, "--device: '%s' is not gpu:N with N >= 0", v);
      o->device_index = (int)d;
    }
  } else {
    CIS_ERROR(CIS_ERR_USAGE, "--device: unknown device '%s' (expected auto, cpu, gpu or gpu:N)", v);
  }
  return CIS_OK;
}

static cis_err int_in(const char *v, const char *what, long lo, long hi, long *out) {
  CIS_CALL(cis_parse_int(v, what, out));
  if (*out < lo || *out > hi)
    CIS_ERROR(CIS_ERR_USAGE, "%s: %ld is out of range [%ld, %ld]", what, *out, lo, hi);
  return CIS_OK;
}

static cis_err positive(const char *v, const char *what, double *out) {
  CIS_CALL(cis_parse_double(v, what, out));
  if (*out <= 0) CIS_ERROR(CIS_ERR_USAGE, "%s: must be positive, got '%s'", what, v);
  return CIS_OK;
}

/* --cas NE,NO: two positive integers. */
static cis_err parse_cas(const char *v, cis_options *o) {
  long ne, no;
  const char *comma = strchr(v, ',');
  char a[32];
  size_t len = comma ? (size_t)(comma - v) : 0;
  if (!comma || len == 0 || len >= sizeof a)
    CIS_ERROR(CIS_ERR_USAGE, "--cas: '%s' is not NE,NO (electrons and orbitals, e.g. 4,4)", v);
  memcpy(a, v, len);
  a[len] = '\0';
  CIS_CALL(int_in(a, "--cas electrons", 1, ORB_MAX * 2, &ne));
  CIS_CALL(int_in(comma + 1, "--cas orbitals", 1, ORB_MAX, &no));
  o->cas_nelec = (int)ne;
  o->cas_norb = (int)no;
  return CIS_OK;
}

/* S as a decimal (0, 0.5, 1, 1.5, ...); kept as the integer 2S. */
static cis_err parse_spin(const char *v, cis_options *o) {
  double s;
  CIS_CALL(cis_parse_double(v, "--spin", &s));
  double two = 2.0 * s;
  if (s < 0 || s > 10000 || two != (double)(long)two)
    CIS_ERROR(CIS_ERR_USAGE, "--spin: '%s' is not a total spin S >= 0 (a multiple of 1/2)", v);
  o->spin2 = (int)two;
  o->spin_set = 1;
  return CIS_OK;
}

/* The truth values a flag's value may spell (input.h5's /options, the C API, an optional mode's
 * value). */
static int truth_on(const char *v) {
  return !strcmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "yes") ||
         !strcasecmp(v, "on");
}
static int truth_off(const char *v) {
  return !strcmp(v, "0") || !strcasecmp(v, "false") || !strcasecmp(v, "no") ||
         !strcasecmp(v, "off");
}

/* --check-roots[=MODE]; a bare flag (or a true value in a file) asks for the full check. */
static cis_err parse_check(const char *v, cis_options *o) {
  if (!v || !strcmp(v, "full") || truth_on(v))
    o->check_roots = CIS_CHECK_FULL;
  else if (!strcmp(v, "blocks"))
    o->check_roots = CIS_CHECK_BLOCKS;
  else if (!strcmp(v, "none"))
    o->check_roots = CIS_CHECK_NONE;
  else
    CIS_ERROR(CIS_ERR_USAGE, "--check-roots: unknown mode '%s' (expected blocks, full or none)", v);
  return CIS_OK;
}

static cis_err copy_path(char *dst, const char *v, const char *what) {
  if (strlen(v) >= 4096) CIS_ERROR(CIS_ERR_USAGE, "%s: path too long", what);
  if (!*v) CIS_ERROR(CIS_ERR_USAGE, "%s: empty path", what);
  strcpy(dst, v);
  return CIS_OK;
}

/* Apply one option by name; `v` is NULL for flags. */
/* --build and --regen: where a GPU run makes rows, gpu (*host = 0) or host (*host = 1). */
static cis_err gpu_or_host(const char *v, const char *opt, int *host) {
  if (strcmp(v, "gpu") == 0)
    *host = 0;
  else if (strcmp(v, "host") == 0)
    *host = 1;
  else
    CIS_ERROR(CIS_ERR_USAGE, "%s: unknown place '%s' (expected gpu or host)", opt, v);
  return CIS_OK;
}

static cis_err apply_option(cis_options *o, const char *name, const char *v) {
  long l;
  if (strcmp(name, "nroots") == 0) {
    CIS_CALL(int_in(v, "--nroots", 1, 100000, &l));
    o->nroots = (int)l;
  } else if (strcmp(name, "tol") == 0) {
    CIS_CALL(positive(v, "--tol", &o->tol_energy));
  } else if (strcmp(name, "tol-residual") == 0) {
    CIS_CALL(positive(v, "--tol-residual", &o->tol_residual));
  } else if (strcmp(name, "max-iter") == 0) {
    CIS_CALL(int_in(v, "--max-iter", 1, 100000000, &l));
    o->max_iter = (int)l;
  } else if (strcmp(name, "max-subspace") == 0) {
    CIS_CALL(int_in(v, "--max-subspace", 2, 100000, &l));
    o->max_subspace = (int)l;
  } else if (strcmp(name, "level-shift") == 0) {
    CIS_CALL(cis_parse_double(v, "--level-shift", &o->level_shift));
    if (o->level_shift < 0) CIS_ERROR(CIS_ERR_USAGE, "--level-shift: must be >= 0, got '%s'", v);
  } else if (strcmp(name, "solver") == 0) {
    if (strcmp(v, "davidson") == 0)
      o->solver = CIS_SOLVER_DAVIDSON;
    else if (strcmp(v, "lanczos") == 0)
      o->solver = CIS_SOLVER_LANCZOS;
    else
      CIS_ERROR(CIS_ERR_USAGE, "--solver: unknown solver '%s' (expected davidson or lanczos)", v);
  } else if (strcmp(name, "spin") == 0) {
    CIS_CALL(parse_spin(v, o));
  } else if (strcmp(name, "spin-shift") == 0) {
    CIS_CALL(positive(v, "--spin-shift", &o->spin_shift));
  } else if (strcmp(name, "check-roots") == 0) {
    CIS_CALL(parse_check(v, o));
  } else if (strcmp(name, "rdm1") == 0) {
    o->rdm1 = 1;
  } else if (strcmp(name, "molden") == 0) {
    o->molden_set = o->rdm1 = 1;
    if (v) CIS_CALL(copy_path(o->molden, v, "--molden"));
  } else if (strcmp(name, "rdm2") == 0) {
    o->rdm1 = o->rdm2 = 1;
  } else if (strcmp(name, "trans-rdm") == 0) {
    o->rdm1 = o->trans_rdm = 1;
  } else if (strcmp(name, "space") == 0) {
    CIS_CALL(parse_space(v, o));
  } else if (strcmp(name, "cas") == 0) {
    CIS_CALL(parse_cas(v, o));
  } else if (strcmp(name, "frozen") == 0) {
    CIS_CALL(int_in(v, "--frozen", 0, ORB_MAX, &l));
    o->frozen = (int)l;
  } else if (strcmp(name, "active") == 0) {
    int *list = NULL, n = 0;
    if (strlen(v) >= sizeof o->active) CIS_ERROR(CIS_ERR_USAGE, "--active: list too long");
    CIS_CALL(cis_orbitals_parse(v, "--active", &list, &n)); /* the syntax, now */
    cis_free(&list);
    strcpy(o->active, v);
  } else if (strcmp(name, "ms2") == 0) {
    CIS_CALL(int_in(v, "--ms2", -100000, 100000, &l));
    o->ms2 = (int)l;
    o->ms2_set = 1;
  } else if (strcmp(name, "irrep") == 0) {
    CIS_CHECK(strlen(v) < sizeof o->irrep && *v, CIS_ERR_USAGE, "--irrep: expected a number or "
              "a name, got '%s'", v);
    strcpy(o->irrep, v);
  } else if (strcmp(name, "point-group") == 0) {
    CIS_CHECK(strlen(v) < sizeof o->point_group, CIS_ERR_USAGE, "--point-group: unknown group "
              "'%s'", v);
    strcpy(o->point_group, v);
  } else if (strcmp(name, "ref-det") == 0) {
    CIS_CHECK(strlen(v) < sizeof o->ref_det, CIS_ERR_USAGE, "--ref-det: too long");
    strcpy(o->ref_det, v);
  } else if (strcmp(name, "ref-size") == 0) {
    CIS_CALL(int_in(v, "--ref-size", 1, 2000000000L, &l));
    o->ref_size = l;
  } else if (strcmp(name, "device") == 0) {
    CIS_CALL(parse_device(v, o));
  } else if (strcmp(name, "mem") == 0) {
    CIS_CALL(cis_parse_bytes(v, "--mem", &o->mem));
  } else if (strcmp(name, "gpu-mem") == 0) {
    CIS_CALL(cis_parse_bytes(v, "--gpu-mem", &o->gpu_mem));
  } else if (strcmp(name, "matrix-free") == 0) {
    if (!v || truth_on(v))
      o->matrix_free = CIS_MATRIX_FREE_ON;
    else if (truth_off(v))
      o->matrix_free = CIS_MATRIX_FREE_OFF;
    else if (!strcmp(v, "auto"))
      o->matrix_free = CIS_MATRIX_FREE_AUTO;
    else
      CIS_ERROR(CIS_ERR_USAGE, "--matrix-free: unknown mode '%s' (expected on, off or auto)", v);
  } else if (strcmp(name, "build") == 0) {
    CIS_CALL(gpu_or_host(v, "--build", &o->build_host));
  } else if (strcmp(name, "regen") == 0) {
    CIS_CALL(gpu_or_host(v, "--regen", &o->regen_host));
  } else if (strcmp(name, "threads") == 0) {
    CIS_CALL(int_in(v, "--threads", 1, 4096, &l));
    o->threads = (int)l;
  } else if (strcmp(name, "output") == 0) {
    CIS_CALL(copy_path(o->output, v, "--output"));
  } else if (strcmp(name, "export-matrix") == 0) {
    CIS_CALL(copy_path(o->export_matrix, v, "--export-matrix"));
  } else if (strcmp(name, "write-input") == 0) {
    CIS_CALL(copy_path(o->write_input, v, "--write-input"));
  } else if (strcmp(name, "checkpoint") == 0) {
    CIS_CALL(copy_path(o->checkpoint, v, "--checkpoint"));
  } else if (strcmp(name, "checkpoint-every") == 0) {
    CIS_CALL(int_in(v, "--checkpoint-every", 0, 100000000, &l));
    o->checkpoint_every = (int)l;
  } else if (strcmp(name, "checkpoint-interval") == 0) {
    CIS_CALL(cis_parse_double(v, "--checkpoint-interval", &o->checkpoint_interval));
    if (o->checkpoint_interval < 0)
      CIS_ERROR(CIS_ERR_USAGE, "--checkpoint-interval: must be >= 0 seconds, got '%s'", v);
  } else if (strcmp(name, "restart") == 0) {
    o->restart_set = 1;
    if (v) CIS_CALL(copy_path(o->restart, v, "--restart"));
  } else if (strcmp(name, "walltime") == 0) {
    if (cis_parse_walltime(v, &o->walltime) != 0)
      CIS_ERROR(CIS_ERR_USAGE, "--walltime: '%s' is not a time (expected HH:MM:SS, MM:SS or SS)", v);
  } else if (strcmp(name, "dry-run") == 0) {
    o->dry_run = 1;
  } else if (strcmp(name, "verbose") == 0) {
    o->verbose = 1;
  } else if (strcmp(name, "quiet") == 0) {
    o->quiet = 1;
  } else {
    CIS_ERROR(CIS_ERR_USAGE, "unknown option '--%s' (see cisolve --help)", name);
  }
  return CIS_OK;
}

static const opt_desc *find_opt(const char *name, size_t len) {
  for (int i = 0; i < NOPTS; i++)
    if (strlen(k_opts[i].name) == len && strncmp(k_opts[i].name, name, len) == 0) return &k_opts[i];
  return NULL;
}

/* Walk argv; for each option call apply_option unless `skip` says otherwise. Sets the input. */
static cis_err walk_argv(int argc, char **argv, cis_options *o, int *exit_now) {
  int ninput = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-h") == 0) a = "--help";
    if (strcmp(a, "-v") == 0) a = "--verbose";
    if (strcmp(a, "-q") == 0) a = "--quiet";
    if (strcmp(a, "-o") == 0) a = "--output";
    if (strncmp(a, "--", 2) != 0 || a[2] == '\0') {
      if (a[0] == '-' && a[1] != '\0')
        CIS_ERROR(CIS_ERR_USAGE, "unknown option '%s' (see cisolve --help)", a);
      if (ninput++) CIS_ERROR(CIS_ERR_USAGE, "more than one input given ('%s' and '%s')", o->input, a);
      CIS_CALL(copy_path(o->input, a, "INPUT"));
      continue;
    }
    const char *name = a + 2;
    const char *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    const opt_desc *d = find_opt(name, len);
    if (!d) CIS_ERROR(CIS_ERR_USAGE, "unknown option '%.*s' (see cisolve --help)", (int)len + 2, a);
    const char *val = NULL;
    if (d->arg == ARG_REQUIRED) {
      if (eq)
        val = eq + 1;
      else if (i + 1 < argc)
        val = argv[++i];
      else
        CIS_ERROR(CIS_ERR_USAGE, "option --%s needs a value (%s)", d->name, d->metavar);
    } else if (d->arg == ARG_OPTIONAL) {
      val = eq ? eq + 1 : NULL; /* never the next word: that may be the input */
    } else if (eq) {
      CIS_ERROR(CIS_ERR_USAGE, "option --%s takes no value", d->name);
    }
    if (strcmp(d->name, "help") == 0) {
      cis_options_print_help();
      *exit_now = 1;
      return CIS_OK;
    }
    if (strcmp(d->name, "version") == 0) {
      printf("cisolve %s\n", CISOLVE_VERSION);
      *exit_now = 1;
      return CIS_OK;
    }
    CIS_CALL(apply_option(o, d->name, val));
  }
  return CIS_OK;
}

cis_err cis_options_parse(int argc, char **argv, cis_options *o, int *exit_now) {
  *exit_now = 0;
  CIS_CALL(walk_argv(argc, argv, o, exit_now));
  if (*exit_now) return CIS_OK;
  if (!o->input[0]) CIS_ERROR(CIS_ERR_USAGE, "no input given (usage: cisolve [options] INPUT; see --help)");
  if (o->verbose && o->quiet) CIS_ERROR(CIS_ERR_USAGE, "--verbose and --quiet exclude each other");
  return CIS_OK;
}

/* One word for a POSIX shell: as it is when it holds nothing the shell would interpret, else in
 * single quotes (a quote inside as '\''). */
static void print_shell_word(FILE *f, const char *w) {
  int plain = *w != '\0';
  for (const char *c = w; *c && plain; c++)
    plain = isalnum((unsigned char)*c) || strchr("@%+=:,./_-", *c) != NULL;
  if (plain) {
    fputs(w, f);
    return;
  }
  fputc('\'', f);
  for (const char *c = w; *c; c++)
    if (*c == '\'')
      fputs("'\\''", f);
    else
      fputc(*c, f);
  fputc('\'', f);
}

void cis_options_print_command(FILE *f, int argc, char **argv, int restart) {
  print_shell_word(f, argv[0]);
  if (restart) fputs(" --restart", f);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *name = strcmp(a, "-o") == 0 ? "output" : strncmp(a, "--", 2) == 0 ? a + 2 : NULL;
    size_t len = name ? strcspn(name, "=") : 0;
    const opt_desc *d = name ? find_opt(name, len) : NULL;
    if (restart && d && strcmp(d->name, "restart") == 0) continue;
    fputc(' ', f);
    print_shell_word(f, a);
    /* a value in the next word is copied as it is, whatever it looks like */
    if (d && d->arg == ARG_REQUIRED && name[len] != '=' && i + 1 < argc) {
      fputc(' ', f);
      print_shell_word(f, argv[++i]);
    }
  }
}

/* An option as a key and a value string, as input.h5's /options and the C API give it: a flag
 * carries a truth value, and only a true one turns it on (NULL: true). */
static cis_err apply_value(cis_options *o, const opt_desc *d, const char *v) {
  if (d->arg == ARG_NONE && v) {
    if (!truth_on(v) && !truth_off(v))
      CIS_ERROR(CIS_ERR_USAGE, "expected true or false, got '%s'", v);
    if (truth_off(v)) return CIS_OK;
    v = NULL;
  }
  if (d->arg == ARG_REQUIRED && !v)
    CIS_ERROR(CIS_ERR_USAGE, "option --%s needs a value (%s)", d->name, d->metavar);
  CIS_CALL(apply_option(o, d->name, v));
  return CIS_OK;
}

cis_err cis_options_set(cis_options *o, const char *name, const char *value) {
  const opt_desc *d = find_opt(name, strlen(name));
  if (!d || strcmp(name, "help") == 0 || strcmp(name, "version") == 0 ||
      strcmp(name, "dry-run") == 0)
    CIS_ERROR(CIS_ERR_USAGE, "unknown option '%s' (the long options of cisolve --help)", name);
  if (is_path_option(name))
    CIS_ERROR(CIS_ERR_USAGE, "option '%s' names a file: file paths come from the command line "
              "only", name);
  cis_err e = apply_value(o, d, value);
  if (e != CIS_OK) CIS_ERROR(e, "option '%s': %s", name, cis_error_message());
  return CIS_OK;
}

cis_err cis_options_apply_file(cis_options *o, const cis_kvlist *kv, int argc, char **argv) {
  for (int i = 0; i < kv->n; i++) {
    const char *name = kv->kv[i].key;
    const opt_desc *d = find_opt(name, strlen(name));
    if (!d || strcmp(name, "help") == 0 || strcmp(name, "version") == 0 ||
        strcmp(name, "dry-run") == 0) /* what to do with the file: the command line's to say */
      CIS_ERROR(CIS_ERR_INPUT, "%s: /options has an unknown option '%s'", o->input, name);
    if (is_path_option(name))
      CIS_ERROR(CIS_ERR_INPUT,
                "%s: /options/%s: file paths come from the command line only, never from an input "
                "file (delete the attribute; give --%s on the command line)", o->input, name, name);
    cis_err e = apply_value(o, d, kv->kv[i].value);
    if (e != CIS_OK)
      CIS_ERROR(CIS_ERR_INPUT, "%s: /options/%s: %s", o->input, name, cis_error_message());
  }
  /* The command line wins: apply it again on top. */
  int exit_now = 0;
  CIS_CALL(walk_argv(argc, argv, o, &exit_now));
  return CIS_OK;
}
