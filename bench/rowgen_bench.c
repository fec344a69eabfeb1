/* Row generator throughput on the CPU: matrix elements generated per second per core on a
 * fixed sample of rows of an FCI space, for a list of thread counts, with the parallel
 * efficiency; optionally the whole Hamiltonian build and a few products.
 *
 * usage: rowgen_bench [FCIDUMP] [--rows N] [--threads 1,2,4] [--build] [--budget BYTES]
 *                     [--matvecs K]
 * Defaults: bench/data/h2o_631g_c1.fcidump, 200000 rows spread evenly over the space, thread
 * counts 1, 2, 4, ... up to the cores present (and the core count itself). Prints a markdown
 * section (machine, commit, date, command) on stdout.
 */
#define _POSIX_C_SOURCE 200809L
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/util.h"
#include "hamiltonian/hmat.h"
#include "hamiltonian/rowgen.h"
#include "io/input.h"

#ifndef CIS_SOURCE_DIR
#define CIS_SOURCE_DIR "."
#endif
#define MAX_COUNTS 16

typedef struct {
  const char *input;
  int64_t rows, budget;
  int counts[MAX_COUNTS], ncounts, build, matvecs;
} bench_opts;

static cis_err parse_counts(const char *s, bench_opts *o) {
  o->ncounts = 0;
  for (const char *p = s; *p && o->ncounts < MAX_COUNTS;) {
    char *end;
    long v = strtol(p, &end, 10);
    CIS_CHECK(end != p && v > 0 && v <= 4096, CIS_ERR_USAGE,
              "--threads: expected a comma-separated list of positive counts, got '%s'", s);
    o->counts[o->ncounts++] = (int)v;
    p = *end == ',' ? end + 1 : end;
    CIS_CHECK(*end == ',' || *end == '\0', CIS_ERR_USAGE, "--threads: bad list '%s'", s);
  }
  return CIS_OK;
}

static cis_err parse_args(int argc, char **argv, bench_opts *o) {
  o->input = CIS_SOURCE_DIR "/bench/data/h2o_631g_c1.fcidump";
  o->rows = 200000;
  o->budget = -1;
  int nc = omp_get_num_procs();
  for (int t = 1; t < nc && o->ncounts < MAX_COUNTS - 1; t *= 2) o->counts[o->ncounts++] = t;
  o->counts[o->ncounts++] = nc;
  for (int i = 1; i < argc; i++) {
    long v;
    if (!strcmp(argv[i], "--rows") && i + 1 < argc) {
      CIS_CALL(cis_parse_int(argv[++i], "--rows", &v));
      CIS_CHECK(v > 0, CIS_ERR_USAGE, "--rows: expected a positive count, got %ld", v);
      o->rows = v;
    } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
      CIS_CALL(parse_counts(argv[++i], o));
    } else if (!strcmp(argv[i], "--budget") && i + 1 < argc) {
      CIS_CALL(cis_parse_bytes(argv[++i], "--budget", &o->budget));
    } else if (!strcmp(argv[i], "--matvecs") && i + 1 < argc) {
      CIS_CALL(cis_parse_int(argv[++i], "--matvecs", &v));
      o->matvecs = (int)v;
    } else if (!strcmp(argv[i], "--build")) {
      o->build = 1;
    } else if (argv[i][0] != '-') {
      o->input = argv[i];
    } else {
      CIS_ERROR(CIS_ERR_USAGE, "unknown option '%s' (see the head of bench/rowgen_bench.c)",
                argv[i]);
    }
  }
  return CIS_OK;
}

/* Elements of the sampled rows (row s * ndet / rows) on nt threads; *secs gets the wall time. */
static cis_err sample_rate(const cis_rowgen *g, int64_t rows, int nt, int64_t *elements,
                           double *secs) {
  int64_t n = cis_space_ndet(g->space), total = 0;
  int fail = 0;
  double t0 = cis_wtime();
#pragma omp parallel num_threads(nt) reduction(+ : total)
  {
    cis_rowbuf b;
    int ok = cis_rowbuf_init(g, &b) == CIS_OK;
    if (!ok) {
#pragma omp atomic write
      fail = 1;
    }
#pragma omp for schedule(dynamic, 64)
    for (int64_t s = 0; s < rows; s++)
      if (ok) total += cis_rowgen_row(g, (int64_t)((double)s * (double)n / (double)rows), 0, &b);
    cis_rowbuf_free(&b);
  }
  *secs = cis_wtime() - t0;
  CIS_CHECK(!fail, CIS_ERR_NOMEM, "out of host memory for row scratch");
  *elements = total;
  return CIS_OK;
}

static void print_header(const bench_opts *o, int argc, char **argv, const cis_space *s) {
  char cpu[256] = "unknown", commit[64] = "unknown", date[64];
  FILE *f = fopen("/proc/cpuinfo", "r");
  for (char line[512]; f && fgets(line, sizeof line, f);)
    if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
      snprintf(cpu, sizeof cpu, "%s", strchr(line, ':') + 2);
      cpu[strcspn(cpu, "\n")] = '\0';
      break;
    }
  if (f) fclose(f);
  const char *env = getenv("CIS_COMMIT");
  FILE *p = env ? NULL : popen("git -C " CIS_SOURCE_DIR " rev-parse --short HEAD 2>/dev/null", "r");
  if (env) snprintf(commit, sizeof commit, "%s", env);
  if (p && fgets(commit, sizeof commit, p)) commit[strcspn(commit, "\n")] = '\0';
  if (p) pclose(p);
  time_t now = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
  printf("### Row generator (CPU): %s, FCI, %ld determinants\n\n", o->input,
         (long)cis_space_ndet(s));
  printf("Machine: %s, %d cores. Commit %s. %s.\n\nCommand: `", cpu, omp_get_num_procs(), commit,
         date);
  for (int i = 0; i < argc; i++) printf("%s%s", i ? " " : "", argv[i]);
  printf("`\n\n");
}

static cis_err run_sample(const cis_rowgen *g, const bench_opts *o) {
  double rate1 = 0.0;
  int64_t elements = 0;
  double secs;
  CIS_CALL(sample_rate(g, CIS_MIN(o->rows, (int64_t)2000), 1, &elements, &secs)); /* warm-up */
  printf("%ld rows sampled evenly over the space, unsorted rows (the product's path); best of "
         "three runs.\n\n", (long)o->rows);
  printf("| threads | elements | seconds | elements/s | elements/s per core | efficiency |\n");
  printf("|---:|---:|---:|---:|---:|---:|\n");
  for (int c = 0; c < o->ncounts; c++) {
    int nt = o->counts[c];
    secs = 1e300;
    for (int rep = 0; rep < 3; rep++) { /* best of three: shared machines vary */
      double t;
      CIS_CALL(sample_rate(g, o->rows, nt, &elements, &t));
      secs = CIS_MIN(secs, t);
    }
    double rate = (double)elements / secs;
    if (c == 0) rate1 = rate / nt;
    printf("| %d | %ld | %.2f | %.3g | %.3g | %.0f%% |\n", nt, (long)elements, secs, rate,
           rate / nt, 100.0 * rate / nt / rate1);
    fflush(stdout);
  }
  return CIS_OK;
}

static cis_err run_build(const cis_problem *p, const cis_space *s, const bench_opts *o) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  cis_hmat *h = NULL;
  double *x = NULL, *y = NULL;
  cis_hmat_opts ho = {.host_cache = o->budget};
  CIS_TRY(cis_hmat_build_ci(&p->ints, s, &ho, &h));
  printf("\nBuild (%d threads): %.2f s, %.3g elements generated, %ld of %ld blocks cached.\n",
         omp_get_max_threads(), h->stats.t_build, (double)h->stats.elements_generated,
         (long)h->hyb.ncached, (long)h->hyb.nblocks);
  if (o->matvecs > 0) {
    CIS_TRY(cis_malloc(&x, (size_t)h->n, sizeof(double), "bench vector"));
    CIS_TRY(cis_malloc(&y, (size_t)h->n, sizeof(double), "bench vector"));
    for (int64_t i = 0; i < h->n; i++) x[i] = 1.0 / (1.0 + (double)(i % 97));
    double t0 = cis_wtime();
    for (int k = 0; k < o->matvecs; k++) CIS_TRY(cis_hyb_apply_cpu(&h->hyb, 1, x, y));
    printf("Products: %.3f s each (%d), y[0] = %.12f.\n", (cis_wtime() - t0) / o->matvecs,
           o->matvecs, y[0]);
  }
cleanup:
  cis_free(&x);
  cis_free(&y);
  cis_hmat_destroy(&h);
  return err;
}

static cis_err bench(int argc, char **argv) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  bench_opts o = {0};
  cis_problem p;
  cis_space *s = NULL;
  cis_rowgen g;
  int have_g = 0;
  memset(&p, 0, sizeof p);
  CIS_TRY(parse_args(argc, argv, &o));
  CIS_TRY(cis_input_read(o.input, &p));
  if (p.kind != CIS_PROBLEM_INTEGRALS) CIS_FAIL(CIS_ERR_INPUT, "%s: expected integrals", o.input);
  p.space.kind = CIS_SPACE_FCI;
  cis_space_opts so = {0};
  CIS_TRY(cis_space_build(&p.ints, &p.space, &so, &s));
  print_header(&o, argc, argv, s);
  double t0 = cis_wtime();
  CIS_TRY(cis_rowgen_init(&p.ints, s, &g));
  have_g = 1;
  printf("Link tables: %.2f s, %d pair classes.\n\n", cis_wtime() - t0, g.ncls);
  CIS_TRY(run_sample(&g, &o));
  if (o.build) CIS_TRY(run_build(&p, s, &o));
cleanup:
  if (have_g) cis_rowgen_free(&g);
  cis_space_destroy(&s);
  cis_problem_free(&p);
  return err;
}

int main(int argc, char **argv) {
  cis_err err = bench(argc, argv);
  if (err) cis_error_print(1);
  return err ? cis_exit_code(err) : 0;
}
