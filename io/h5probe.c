/* cisolve: an input.h5 is read once in a child process before it is read for real.
 *
 * libhdf5 1.10 decodes object headers, attribute messages and B-trees without bounds checks:
 * some corrupt files make it crash before any of our checks can run (seen in H5Aexists, on a
 * single-byte change in the root group's header, 1 of 21,000 mutants of tests/io/data/h2o.h5).
 * No check made from outside the library can rule that out, so the reader first runs in a
 * forked child: if the child dies of a crash signal, the file is refused with exit code 1;
 * if it finishes, whatever its outcome, the same read runs here and gives the same outcome,
 * its message included. The child writes nothing (no core file either) and exits with _exit.
 *
 * The cost is a second read of the file (the child's memory is freed before the real read
 * starts, so the peak is unchanged).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io/io_private.h"

static int crash_signal(int sig) {
  return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGABRT;
}

cis_err cis_h5_probe(const char *path, cis_err (*read)(const char *, cis_problem *)) {
  fflush(NULL); /* nothing buffered is written twice */
  pid_t pid = fork();
  if (pid < 0) return CIS_OK; /* no child: read without the probe */
  if (pid == 0) {
    /* a crash here is an answer, not a bug to inspect: no core file */
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    cis_problem p;
    _exit(read(path, &p) == CIS_OK ? 0 : 1);
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) return CIS_OK;
  if (WIFSIGNALED(st) && crash_signal(WTERMSIG(st)))
    CIS_ERROR(CIS_ERR_INPUT, "%s: the HDF5 library crashed reading it (signal %d, %s): the file "
              "is corrupt", path, WTERMSIG(st), strsignal(WTERMSIG(st)));
  if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
    CIS_ERROR(CIS_ERR_NOMEM, "%s: the process reading it was killed (SIGKILL; out of memory?)",
              path);
  return CIS_OK;
}
