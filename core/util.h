/* cisolve: small utilities every module uses: checked allocation, wall-clock timers,
 * byte sizes with K/M/G suffixes, and how much host memory is free.
 */
#ifndef CIS_UTIL_H
#define CIS_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

/* Allocate n elements of `size` bytes (zeroed for calloc); on failure raise CIS_ERR_NOMEM
 * naming `what`. *p is NULL on failure. Free with cis_free(&p) (leaves p == NULL). */
cis_err cis_malloc(void *pp, size_t n, size_t size, const char *what);
cis_err cis_calloc(void *pp, size_t n, size_t size, const char *what);
cis_err cis_realloc(void *pp, size_t n, size_t size, const char *what);
void cis_free(void *pp);

/* Seconds since an arbitrary origin (monotonic). */
double cis_wtime(void);

/* Parse "512M", "2G", "1.5g", "100000" (bytes). Returns CIS_ERR_USAGE naming `what`. */
cis_err cis_parse_bytes(const char *s, const char *what, int64_t *out);
/* Format bytes as "1.23 GiB" into buf. */
const char *cis_format_bytes(double bytes, char *buf, size_t len);

/* Available host memory in bytes (MemAvailable, bounded by a cgroup limit if any); 0 if unknown. */
int64_t cis_host_mem_available(void);
/* Peak resident set size of this process in bytes (0 if unknown). */
int64_t cis_peak_rss(void);

/* Strict numeric parsing of a whole string; CIS_ERR_USAGE naming `what` on failure. */
cis_err cis_parse_int(const char *s, const char *what, long *out);
cis_err cis_parse_double(const char *s, const char *what, double *out);

#define CIS_MIN(a, b) ((a) < (b) ? (a) : (b))
#define CIS_MAX(a, b) ((a) > (b) ? (a) : (b))

#endif
