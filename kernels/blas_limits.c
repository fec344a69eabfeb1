/* OpenBLAS's threads: their count capped for the program (cis_blas_cap_threads), their work
 * buffers under an address-space limit (cis_blas_prepare; both in kernels/backend.h).
 *
 * OpenBLAS (0.3, pthreads build) gives every thread that runs its kernels a work buffer of
 * 128 MiB of address space: each of its own threads takes one when the library is loaded, the
 * calling thread on its first call. An allocation that fails is retried forever: under
 * `ulimit -v` (RLIMIT_AS), `ulimit -d` (RLIMIT_DATA) or strict overcommit too tight for the
 * buffers, the process spins at its first BLAS or LAPACK call, or at exit, where OpenBLAS
 * joins a thread that is still retrying. Untouched, the buffers cost no memory, so neither a
 * cgroup limit nor the machine's free memory makes them fail. */
#define _POSIX_C_SOURCE 200809L
#include <cblas.h>
#include <errno.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"
#include "kernels/backend.h"

/* A buffer and its alignment, as OpenBLAS maps it on x86-64. */
#define BLAS_BUFFER ((int64_t)129 << 20)
/* Per OpenMP thread, what libgomp must get to start it: its stack (8 MiB by default) and some
 * room; glibc's malloc arena for it (64 MiB reserved) falls back to a shared one when it does
 * not fit. */
#define OMP_THREAD_SPACE ((int64_t)16 << 20)
/* The warm-up takes milliseconds; a thread still retrying after this never gets its buffer. */
#define WATCHDOG_SECONDS 30

static pthread_mutex_t wd_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wd_cond = PTHREAD_COND_INITIALIZER;
static int wd_done;
static char wd_what[160];

/* Exit 4 with a message (exit handlers would join OpenBLAS's spinning threads and hang). */
static void quit_stuck(void) {
  fflush(stdout);
  fprintf(stderr, "cisolve: error: OpenBLAS could not take its threads' work buffers (128 MiB "
                  "of address space each) within %d s under %s: it retries forever. Raise the "
                  "limit or run with fewer threads (OPENBLAS_NUM_THREADS=1, --threads)\n",
          WATCHDOG_SECONDS, wd_what);
  _exit(CIS_EXIT_RESOURCE);
}

static void *watchdog(void *arg) {
  (void)arg;
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += WATCHDOG_SECONDS;
  pthread_mutex_lock(&wd_mutex);
  int rc = 0;
  while (!wd_done && rc != ETIMEDOUT) rc = pthread_cond_timedwait(&wd_cond, &wd_mutex, &until);
  int done = wd_done;
  pthread_mutex_unlock(&wd_mutex);
  if (!done) quit_stuck();
  return NULL;
}

/* A product split over every OpenBLAS thread, so that each has its buffer when it returns
 * (one still retrying never does its part); and every OpenMP thread started, with its arena. */
static void warm_up(void) {
  enum { M = 4096, N = 64, K = 64 };
  static double a[M * K], b[K * N], c[M * N];
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0, a, M, b, K, 0.0, c, M);
#pragma omp parallel
  {
    void *p = malloc(4096);
    free(p);
  }
}

/* OpenBLAS's buffers already mapped: the anonymous mappings of one buffer's size (nothing
 * else of that size is mapped this early). */
static int buffers_mapped(void) {
  FILE *f = fopen("/proc/self/maps", "r");
  if (!f) return 0;
  char line[512];
  int n = 0;
  while (fgets(line, sizeof line, f)) {
    unsigned long long lo, hi, off;
    char perms[8];
    int inode = -1, used = 0;
    if (sscanf(line, "%llx-%llx %7s %llx %*s %d%n", &lo, &hi, perms, &off, &inode, &used) < 5)
      continue;
    int64_t size = (int64_t)(hi - lo);
    n += inode == 0 && perms[0] == 'r' && perms[1] == 'w' && size >= BLAS_BUFFER - (1 << 20) &&
         size <= BLAS_BUFFER + (1 << 20);
  }
  fclose(f);
  return n;
}

/* OpenBLAS starts its threads as it is loaded, each with its buffer, as many as the cores (or
 * OPENBLAS_NUM_THREADS, GOTO_NUM_THREADS, OMP_NUM_THREADS say): under a limit that their
 * buffers would take more than a quarter of, the program starts again with
 * OPENBLAS_NUM_THREADS set to what fits (a thread of OpenBLAS that did not get its buffer
 * cannot be stopped). Not when the user set the count. */
static void fit_blas_threads(const cis_host_mem *m, int nblas, int mapped, char **argv) {
  if (getenv("OPENBLAS_NUM_THREADS") || getenv("GOTO_NUM_THREADS") || !argv) return;
  int64_t limit = m->least + (int64_t)mapped * BLAS_BUFFER;
  int fit = (int)CIS_MAX((int64_t)1, limit / 4 / BLAS_BUFFER);
  if (nblas <= fit) return;
  char v[16];
  snprintf(v, sizeof v, "%d", fit);
  if (setenv("OPENBLAS_NUM_THREADS", v, 1) != 0) return;
  fflush(stdout);
  fflush(stderr);
  execv("/proc/self/exe", argv); /* returns only when it fails: go on as we are */
  unsetenv("OPENBLAS_NUM_THREADS");
}

void cis_blas_cap_threads(int n) {
  if (n > 0 && openblas_get_num_threads() > n) openblas_set_num_threads(n);
}

cis_err cis_blas_prepare(char **argv) {
  cis_host_mem m;
  cis_host_mem_probe("", &m);
  if (!m.address_limit) return CIS_OK;
  int nblas = openblas_get_num_threads(), nomp = omp_get_max_threads(), mapped = buffers_mapped();
  fit_blas_threads(&m, nblas, mapped, argv);
  /* The buffers still to take (the caller's, and those of OpenBLAS's threads still taking or
   * retrying theirs), the OpenMP threads' stacks and the watchdog's. */
  int pending = CIS_MAX(1, nblas - mapped);
  int64_t need = pending * BLAS_BUFFER + (int64_t)(nomp + 1) * OMP_THREAD_SPACE;
  char b1[32], b2[32], b3[32];
  if (m.least < need) {
    fflush(stdout);
    fprintf(stderr, "cisolve: error: %s leaves %s of address space: OpenBLAS needs 128 MiB for "
                    "each of its threads (%d, %d of them not yet served) and %d OpenMP threads "
                    "%s; raise the limit by %s, or run with fewer threads "
                    "(OPENBLAS_NUM_THREADS=1, OMP_NUM_THREADS)\n",
            m.bound, cis_format_bytes((double)m.least, b1, sizeof b1), nblas, pending, nomp,
            cis_format_bytes((double)nomp * OMP_THREAD_SPACE, b2, sizeof b2),
            cis_format_bytes((double)(need - m.least), b3, sizeof b3));
    _exit(CIS_EXIT_RESOURCE);
  }
  snprintf(wd_what, sizeof wd_what, "%s", m.bound);
  pthread_t wd;
  if (pthread_create(&wd, NULL, watchdog, NULL) != 0)
    CIS_ERROR(CIS_ERR_NOMEM, "cannot start a thread under %s (%s left)", m.bound,
              cis_format_bytes((double)m.least, b1, sizeof b1));
  warm_up();
  pthread_mutex_lock(&wd_mutex);
  wd_done = 1;
  pthread_cond_signal(&wd_cond);
  pthread_mutex_unlock(&wd_mutex);
  pthread_join(wd, NULL);
  return CIS_OK;
}
