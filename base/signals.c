#define _POSIX_C_SOURCE 200809L
#include "base/signals.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"

static volatile sig_atomic_t g_signal = 0, g_sigint_seen = 0;
static double g_deadline = 0;
/* The temporary file being written; g_tmp_set says whether g_tmp holds a name. */
static char g_tmp[4200];
static volatile sig_atomic_t g_tmp_set = 0;

/* A signal that ends the program now: remove the temporary file being written, then die of the
 * signal as its default action would (the exit status still says which signal it was). */
static void on_fatal(int sig) {
  if (g_tmp_set) unlink(g_tmp);
  signal(sig, SIG_DFL);
  raise(sig);
}

static void on_signal(int sig) {
  /* A second Ctrl-C means "now". */
  if (sig == SIGINT && g_sigint_seen) {
    on_fatal(sig);
    return;
  }
  if (sig == SIGINT) g_sigint_seen = 1;
  g_signal = sig;
}

void cis_signals_install(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGUSR1, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  /* Signals whose default action ends the program at once: still at once, but without leaving
   * a temporary file behind. One the parent set to be ignored stays ignored. */
  static const int fatal[] = {SIGHUP, SIGQUIT, SIGPIPE, SIGXCPU, SIGALRM};
  sa.sa_handler = on_fatal;
  sa.sa_flags = 0;
  for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) {
    struct sigaction old;
    if (sigaction(fatal[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL)
      sigaction(fatal[i], &sa, NULL);
  }
  /* A file size limit (ulimit -f) makes the write fail with EFBIG, which the writer reports and
   * cleans up after, rather than killing the program in the middle of a file. */
  signal(SIGXFSZ, SIG_IGN);
}

void cis_signals_tmp(const char *path) {
  g_tmp_set = 0;
  if (!path || strlen(path) >= sizeof g_tmp) return;
  memcpy(g_tmp, path, strlen(path) + 1);
  g_tmp_set = 1;
}

int cis_signal_pending(void) { return (int)g_signal; }

const char *cis_signal_name(int sig) {
  switch (sig) {
    case SIGTERM: return "SIGTERM";
    case SIGUSR1: return "SIGUSR1";
    case SIGINT: return "SIGINT";
    default: return "a signal";
  }
}

void cis_walltime_set(double deadline) { g_deadline = deadline; }

int cis_stop_requested(double need, char *why, unsigned long len) {
  int sig = (int)g_signal;
  if (sig) {
    snprintf(why, len, "received %s", cis_signal_name(sig));
    return 1;
  }
  if (g_deadline > 0) {
    double left = g_deadline - cis_wtime();
    /* Keep a margin for the output and for the estimate being off: 30 s or 2% of what is
     * left, whichever is larger. */
    double margin = left * 0.02 > 30.0 ? left * 0.02 : 30.0;
    if (left < need + margin) {
      snprintf(why, len, "walltime: %.0f s left, the next iteration and checkpoint need ~%.0f s",
               left, need);
      return 1;
    }
  }
  return 0;
}

int cis_parse_walltime(const char *s, double *seconds) {
  long d = 0, f[3] = {0, 0, 0};
  int nf = 0;
  const char *p = s;
  char *end;
  const char *dash = strchr(s, '-');
  if (dash) {
    d = strtol(s, &end, 10);
    if (end != dash || d < 0) return -1;
    p = dash + 1;
  }
  while (*p && nf < 3) {
    f[nf++] = strtol(p, &end, 10);
    if (end == p || f[nf - 1] < 0) return -1;
    p = end;
    if (*p == ':') p++;
    else if (*p) return -1;
  }
  if (*p || nf == 0) return -1;
  double v = 0;
  for (int i = 0; i < nf; i++) v = v * 60 + (double)f[i];
  if (nf == 1 && !dash) v = (double)f[0];
  if (dash && nf < 3) { /* D-HH or D-HH:MM */
    v = (double)f[0] * 3600 + (nf > 1 ? (double)f[1] * 60 : 0);
  }
  *seconds = v + (double)d * 86400;
  return *seconds > 0 ? 0 : -1;
}
