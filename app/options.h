/* cisolve: run options. Defaults, then options from the input file, then the command line
 * (app/options.c). docs/usage.md documents every field through `cisolve --help`.
 */
#ifndef CIS_OPTIONS_H
#define CIS_OPTIONS_H

#include <stdint.h>
#include <stdio.h>

#include "base/error.h"
#include "base/problem.h"

typedef enum { CIS_DEVICE_AUTO = 0, CIS_DEVICE_CPU, CIS_DEVICE_GPU } cis_device_kind;
typedef enum { CIS_SOLVER_DAVIDSON = 0, CIS_SOLVER_LANCZOS } cis_solver_kind;
typedef enum { CIS_MATRIX_FREE_AUTO = 0, CIS_MATRIX_FREE_ON, CIS_MATRIX_FREE_OFF } cis_matrix_free;
/* After convergence: no check, the search of every symmetry block (default), or that and the
 * search from random vectors (docs/solvers.md). */
typedef enum { CIS_CHECK_NONE = 0, CIS_CHECK_BLOCKS, CIS_CHECK_FULL } cis_check_mode;

typedef struct {
  char input[4096];
  char output[4096];        /* default: input name with .out.h5 */
  char export_matrix[4096]; /* "" = none */
  char write_input[4096];   /* --write-input: write the input as input.h5 and stop; "" = no */
  char checkpoint[4096];     /* default: OUTPUT stem with .ckpt.h5 */
  char restart[4096];        /* --restart[=FILE]: "" = no restart */
  int restart_set;
  int checkpoint_every;      /* iterations; 0 = off */
  double checkpoint_interval;/* seconds; default 1800; 0 = off */
  double walltime;           /* seconds; 0 = none */

  int nroots;
  double tol_energy, tol_residual;
  int max_iter, max_subspace;
  double level_shift;
  cis_solver_kind solver;
  int spin_set;             /* --spin S given */
  int spin2;                /* 2S */
  double spin_shift;        /* --spin-shift, Eh (default 0.5) */
  cis_check_mode check_roots; /* --check-roots[=MODE]: how to make sure no lower state was missed */
  int rdm1;                 /* --rdm1: one-particle density matrices and natural orbitals */
  int molden_set;           /* --molden[=FILE]: the natural orbitals as a Molden file (sets rdm1) */
  char molden[4096];        /* its path; default: OUTPUT stem with .molden */
  int rdm2;                 /* --rdm2: and two-particle ones (sets rdm1) */
  int trans_rdm;            /* --trans-rdm: transition ones between roots (sets rdm1) */

  int space_set;            /* --space given (else the file's, else fci) */
  cis_space_kind space_kind;
  int space_level;
  int ms2_set, ms2;         /* --ms2 overrides the file's MS2 */
  char irrep[32];           /* --irrep as given ("" = default: app/target.h) */
  char point_group[16];     /* --point-group ("" = inferred) */
  char ref_det[4096];       /* --ref-det "A/B" ("" = the rule of hamiltonian/refdet.h) */
  int64_t ref_size;         /* 0 = automatic */
  int frozen;               /* --frozen N: the N lowest orbitals doubly occupied; -1 = not given */
  char active[1024];        /* --active LIST as given (hamiltonian/orbitals.h); "" = not given */
  int cas_nelec, cas_norb;  /* --cas NE,NO: the model space of --space mrci<N>; 0 = not given */

  cis_device_kind device;
  int device_index;         /* -1 = any */
  int64_t mem;              /* host budget for cached Expansion blocks; -1 = default */
  int64_t gpu_mem;          /* -1 = default */
  cis_matrix_free matrix_free; /* --matrix-free[=MODE]: store no row of H, every product
                                  generating them; auto (default): app/plan.c decides */
  int regen_host;           /* --regen host: a GPU run's streamed Expansion rows come from the
                               host (its cache, or generated there), not generated on the GPU */
  int build_host;           /* --build host: a GPU run's stored rows are generated on the host's
                               threads and uploaded, not counted and generated on the GPU */
  int threads;              /* 0 = OpenMP default */
  int dry_run;              /* --dry-run: print the plan (app/plan.h), build and write nothing */
  int verbose;
  int quiet;
} cis_options;

void cis_options_default(cis_options *o);
/* Parse argv. Returns CIS_OK; sets *exit_now (and prints) for --help / --version. */
cis_err cis_options_parse(int argc, char **argv, cis_options *o, int *exit_now);
/* Apply options found in the input file, skipping those given on the command line. */
cis_err cis_options_apply_file(cis_options *o, const cis_kvlist *kv, int argc, char **argv);
/* One option by its long name without "--" and its value as a string, with the meaning it has
 * in an input file's /options (a flag takes a truth value; NULL: true); --help, --version,
 * --dry-run and the file paths are refused. CIS_ERR_USAGE naming the option. */
cis_err cis_options_set(cis_options *o, const char *name, const char *value);
void cis_options_print_help(void);
/* Print argv (as cis_options_parse accepted it) as a command for a POSIX shell, each word
 * quoted where needed; with `restart`, any --restart[=FILE] replaced by one --restart after the
 * program name, which resumes from the checkpoint this run wrote (at --checkpoint). No newline. */
void cis_options_print_command(FILE *f, int argc, char **argv, int restart);

#endif
