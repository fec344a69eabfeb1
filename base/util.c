#define _POSIX_C_SOURCE 200809L
#include "base/util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

cis_err cis_malloc(void *pp, size_t n, size_t size, const char *what) {
  void **p = (void **)pp;
  *p = NULL;
  if (n == 0) n = 1;
  if (size != 0 && n > SIZE_MAX / size)
    CIS_ERROR(CIS_ERR_NOMEM, "size overflow allocating %s", what);
  *p = malloc(n * size);
  if (!*p) {
    char buf[32];
    CIS_ERROR(CIS_ERR_NOMEM, "out of host memory allocating %s (%s)", what,
              cis_format_bytes((double)n * (double)size, buf, sizeof buf));
  }
  return CIS_OK;
}

cis_err cis_calloc(void *pp, size_t n, size_t size, const char *what) {
  void **p = (void **)pp;
  *p = NULL;
  if (n == 0) n = 1;
  *p = calloc(n, size ? size : 1);
  if (!*p) {
    char buf[32];
    CIS_ERROR(CIS_ERR_NOMEM, "out of host memory allocating %s (%s)", what,
              cis_format_bytes((double)n * (double)size, buf, sizeof buf));
  }
  return CIS_OK;
}

cis_err cis_realloc(void *pp, size_t n, size_t size, const char *what) {
  void **p = (void **)pp;
  if (n == 0) n = 1;
  if (size != 0 && n > SIZE_MAX / size)
    CIS_ERROR(CIS_ERR_NOMEM, "size overflow allocating %s", what);
  void *q = realloc(*p, n * size);
  if (!q) {
    char buf[32];
    CIS_ERROR(CIS_ERR_NOMEM, "out of host memory growing %s to %s", what,
              cis_format_bytes((double)n * (double)size, buf, sizeof buf));
  }
  *p = q;
  return CIS_OK;
}

void cis_free(void *pp) {
  void **p = (void **)pp;
  if (p && *p) {
    free(*p);
    *p = NULL;
  }
}

double cis_wtime(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

cis_err cis_parse_bytes(const char *s, const char *what, int64_t *out) {
  char *end = NULL;
  if (!s || !*s) CIS_ERROR(CIS_ERR_USAGE, "%s: empty size", what);
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || errno || !isfinite(v) || v < 0)
    CIS_ERROR(CIS_ERR_USAGE, "%s: '%s' is not a size (expected e.g. 512M, 2G, 1.5T)", what, s);
  double mult = 1;
  if (*end) {
    switch (toupper((unsigned char)*end)) {
      case 'K': mult = 1024.0; break;
      case 'M': mult = 1024.0 * 1024; break;
      case 'G': mult = 1024.0 * 1024 * 1024; break;
      case 'T': mult = 1024.0 * 1024 * 1024 * 1024; break;
      case 'B': mult = 1; break;
      default:
        CIS_ERROR(CIS_ERR_USAGE, "%s: '%s' has an unknown suffix (use K, M, G or T)", what, s);
    }
    end++;
    if (toupper((unsigned char)*end) == 'I') end++;
    if (toupper((unsigned char)*end) == 'B') end++;
    if (*end) CIS_ERROR(CIS_ERR_USAGE, "%s: '%s' is not a size (expected e.g. 512M, 2G)", what, s);
  }
  double bytes = v * mult;
  if (bytes > 9.0e18) CIS_ERROR(CIS_ERR_USAGE, "%s: '%s' is too large", what, s);
  *out = (int64_t)bytes;
  return CIS_OK;
}

const char *cis_format_bytes(double bytes, char *buf, size_t len) {
  static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 4) {
    bytes /= 1024.0;
    u++;
  }
  if (u == 0)
    snprintf(buf, len, "%.0f B", bytes);
  else
    snprintf(buf, len, "%.2f %s", bytes, unit[u]);
  return buf;
}

int64_t cis_peak_rss(void) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  return (int64_t)ru.ru_maxrss * 1024;
}

cis_err cis_parse_int(const char *s, const char *what, long *out) {
  char *end = NULL;
  if (!s || !*s) CIS_ERROR(CIS_ERR_USAGE, "%s: expected an integer, got nothing", what);
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || *end) CIS_ERROR(CIS_ERR_USAGE, "%s: expected an integer, got '%s'", what, s);
  *out = v;
  return CIS_OK;
}

cis_err cis_parse_double(const char *s, const char *what, double *out) {
  char *end = NULL;
  if (!s || !*s) CIS_ERROR(CIS_ERR_USAGE, "%s: expected a number, got nothing", what);
  errno = 0;
  double v = strtod(s, &end);
  if (errno || *end || !isfinite(v))
    CIS_ERROR(CIS_ERR_USAGE, "%s: expected a finite number, got '%s'", what, s);
  *out = v;
  return CIS_OK;
}
