/* cisolve: the ranks of one run over MPI (kernels/comm.h); one process without it. */
#define _GNU_SOURCE /* sched_getaffinity */
#include "kernels/comm.h"

#include <sched.h>
#include <unistd.h>

#include <limits.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef CISOLVE_HAVE_MPI
#include <mpi.h>
#endif

static int g_rank = 0, g_size = 1, g_local = 0, g_local_size = 1, g_started = 0;
static char g_prefix[32] = "";

int cis_comm_rank(void) { return g_rank; }
int cis_comm_size(void) { return g_size; }
int cis_comm_local_rank(void) { return g_local; }
int cis_comm_local_size(void) { return g_local_size; }

/* The cores of the places OpenMP binds this process's threads to, when it binds them
 * (OMP_PROC_BIND): the initial thread itself is then bound to one place, so that its CPU
 * affinity no longer tells the cores the process may use; 0 when OpenMP does not bind. */
static long bound_cores(void) {
  if (omp_get_proc_bind() == omp_proc_bind_false) return 0;
  int np = omp_get_partition_num_places();
  if (np <= 0) return 0;
  int ids[np];
  omp_get_partition_place_nums(ids);
  long c = 0;
  for (int i = 0; i < np; i++) c += omp_get_place_num_procs(ids[i]);
  return c;
}

/* The cores this process may use (its CPU affinity, or OpenMP's places when it binds threads),
 * the node's online cores and this rank's share of them (online / ranks on the node); 0 when
 * they cannot be read. */
static int cores(long *mine, long *online, long *share) {
  cpu_set_t set;
  *online = sysconf(_SC_NPROCESSORS_ONLN);
  if (*online < 1 || sched_getaffinity(0, sizeof set, &set) != 0) return 0;
  *mine = CPU_COUNT(&set);
  long bound = bound_cores();
  if (bound > *mine) *mine = bound;
  *share = *online / (g_local_size > 0 ? g_local_size : 1);
  return 1;
}

int cis_comm_default_threads(void) {
  long mine, online, share;
  if (g_size <= 1 || !cores(&mine, &online, &share)) return 0;
  return (int)(share < 1 ? 1 : share < mine ? share : mine);
}

int cis_comm_cores_note(char *note, int cap) {
  long mine, online, share;
  if (!g_started || !cores(&mine, &online, &share) || online < 2 || mine >= share) return 0;
  snprintf(note, (size_t)cap,
           "this rank may use %ld of the node's %ld cores (its CPU affinity, as the launcher set "
           "it; %d ranks on the node): the matrix is built on its cores alone. Start the ranks "
           "with `mpirun --bind-to none` or `--map-by slot:PE=%ld`, or srun --cpus-per-task=%ld",
           mine, online, g_local_size, share, share);
  return 1;
}
const char *cis_comm_prefix(void) { return g_prefix; }

#ifdef CISOLVE_HAVE_MPI
/* Whether a launcher started this process: the variables Open MPI's mpirun, PMI (MPICH's
 * Hydra, srun --mpi=pmi2) and PMIx (srun --mpi=pmix, Open MPI 5) set for every rank. */
static int launched(void) {
  const char *force = getenv("CISOLVE_MPI");
  if (force && force[0]) return strcmp(force, "0") != 0;
  static const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK"};
  for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
    if (getenv(vars[i])) return 1;
  return 0;
}

static const char *mpi_msg(int rc) {
  static char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) snprintf(msg, sizeof msg, "code %d", rc);
  return msg;
}

#define MPI_CALL(expr)                                                                         \
  do {                                                                                         \
    int rc_ = (expr);                                                                          \
    CIS_CHECK(rc_ == MPI_SUCCESS, CIS_ERR_RESOURCE, "%s failed: %s", #expr, mpi_msg(rc_));     \
  } while (0)

cis_err cis_comm_init(int *argc, char ***argv) {
  if (g_started || !launched()) return CIS_OK;
  int provided = 0;
  MPI_CALL(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided));
  g_started = 1;
  MPI_CALL(MPI_Comm_rank(MPI_COMM_WORLD, &g_rank));
  MPI_CALL(MPI_Comm_size(MPI_COMM_WORLD, &g_size));
  MPI_Comm node;
  MPI_CALL(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_rank, MPI_INFO_NULL, &node));
  MPI_CALL(MPI_Comm_rank(node, &g_local));
  MPI_CALL(MPI_Comm_size(node, &g_local_size));
  MPI_Comm_free(&node);
  if (g_size > 1) {
    snprintf(g_prefix, sizeof g_prefix, "rank %d: ", g_rank);
    CIS_CHECK(g_rank == 0 || freopen("/dev/null", "w", stdout), CIS_ERR_IO,
              "rank %d: cannot send its standard output to /dev/null", g_rank);
  }
  return CIS_OK;
}

void cis_comm_finalize(void) {
  if (!g_started) return;
  fflush(stdout);
  MPI_Finalize();
  g_started = 0;
}

void cis_comm_abort(int code) {
  if (g_size <= 1) return;
  fflush(stdout);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
}

cis_err cis_comm_bcast(void *buf, int64_t bytes, int root) {
  if (g_size <= 1) return CIS_OK;
  char *p = buf;
  for (int64_t at = 0; at < bytes; at += INT_MAX) {
    int part = (int)(bytes - at < INT_MAX ? bytes - at : INT_MAX);
    MPI_CALL(MPI_Bcast(p + at, part, MPI_BYTE, root, MPI_COMM_WORLD));
  }
  return CIS_OK;
}

int cis_comm_or(int flags) {
  if (g_size <= 1) return flags;
  int out = flags;
  /* a failure here is the job's end: MPI's default handler aborts every rank */
  MPI_Allreduce(&flags, &out, 1, MPI_INT, MPI_BOR, MPI_COMM_WORLD);
  return out;
}

cis_err cis_comm_allgather(const void *mine, int bytes, void *all) {
  if (g_size <= 1) {
    memcpy(all, mine, (size_t)bytes);
    return CIS_OK;
  }
  MPI_CALL(MPI_Allgather(mine, bytes, MPI_BYTE, all, bytes, MPI_BYTE, MPI_COMM_WORLD));
  return CIS_OK;
}

cis_err cis_comm_sum_i64(int64_t *v, int count) {
  if (g_size <= 1) return CIS_OK;
  MPI_CALL(MPI_Allreduce(MPI_IN_PLACE, v, count, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD));
  return CIS_OK;
}

cis_err cis_comm_sum_f64(double *v, int64_t count) {
  if (g_size <= 1) return CIS_OK;
  for (int64_t at = 0; at < count; at += INT_MAX) {
    int c = count - at < INT_MAX ? (int)(count - at) : INT_MAX;
    MPI_CALL(MPI_Allreduce(MPI_IN_PLACE, v + at, c, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
  }
  return CIS_OK;
}

cis_err cis_comm_gather_rows(double *Y, int64_t n, int k, const int64_t *bounds) {
  if (g_size <= 1) return CIS_OK;
  int cnt[g_size], off[g_size];
  for (int r = 0; r < g_size; r++) {
    CIS_CHECK(bounds[r + 1] - bounds[r] <= INT_MAX && bounds[r] <= INT_MAX, CIS_ERR_RESOURCE,
              "rank %d owns rows [%lld, %lld): more than MPI's counts (2^31) address", r,
              (long long)bounds[r], (long long)bounds[r + 1]);
    cnt[r] = (int)(bounds[r + 1] - bounds[r]);
    off[r] = (int)bounds[r];
  }
  for (int j = 0; j < k; j++)
    MPI_CALL(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, Y + (int64_t)j * n, cnt, off,
                            MPI_DOUBLE, MPI_COMM_WORLD));
  return CIS_OK;
}

#else /* built without MPI: one process */

cis_err cis_comm_init(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  (void)g_started;
  return CIS_OK;
}
void cis_comm_finalize(void) {}
void cis_comm_abort(int code) { (void)code; }
cis_err cis_comm_bcast(void *buf, int64_t bytes, int root) {
  (void)buf;
  (void)bytes;
  (void)root;
  return CIS_OK;
}
int cis_comm_or(int flags) { return flags; }
cis_err cis_comm_allgather(const void *mine, int bytes, void *all) {
  memcpy(all, mine, (size_t)bytes);
  return CIS_OK;
}
cis_err cis_comm_sum_i64(int64_t *v, int count) {
  (void)v;
  (void)count;
  return CIS_OK;
}
cis_err cis_comm_sum_f64(double *v, int64_t count) {
  (void)v;
  (void)count;
  return CIS_OK;
}
cis_err cis_comm_gather_rows(double *Y, int64_t n, int k, const int64_t *bounds) {
  (void)Y;
  (void)n;
  (void)k;
  (void)bounds;
  return CIS_OK;
}
#endif
