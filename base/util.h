/* cisolve: small utilities every module uses: checked allocation, wall-clock timers,
 * byte sizes with K/M/G suffixes, and how much host memory is free.
 */
#ifndef CIS_UTIL_H
#define CIS_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

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

/* What bounds the host memory this process may still take (base/hostmem.c), in bytes, each -1
 * where absent or unknown:
 *  meminfo  MemAvailable of /proc/meminfo (with vm.overcommit_memory = 2, at most
 *           CommitLimit - Committed_AS);
 *  cgroup   the tightest memory limit of this process's cgroup and its ancestors (v2
 *           memory.max, v1 memory.limit_in_bytes) less their usage (without the inactive
 *           file cache, which the kernel reclaims);
 *  rlimit   RLIMIT_AS less the address space mapped (VmSize), RLIMIT_DATA less the data
 *           mapped (VmData).
 * least is the smallest of them (0 if none is known) and bound names it ("the cgroup memory
 * limit", ...). address_limit: an allocation can fail before memory runs out (an RLIMIT_AS or
 * RLIMIT_DATA, or strict overcommit), which reserving address space alone, untouched, counts
 * against. cis_host_mem_probe reads /proc and /sys/fs/cgroup under `root` ("" for this system;
 * tests give a folder that holds proc/self/{cgroup,mountinfo,limits,status}, proc/meminfo and
 * the cgroup files). */
typedef struct {
  int64_t meminfo, cgroup, rlimit, least;
  const char *bound;
  int address_limit;
} cis_host_mem;
void cis_host_mem_probe(const char *root, cis_host_mem *m);
/* The memory this process may still take: cis_host_mem_probe("").least. */
int64_t cis_host_mem_available(void);
/* The same, for a check that refuses what does not fit: 0 when no bound is known (nothing is
 * to be refused), else 1 with *avail in bytes and *bound naming what sets it. */
int cis_host_mem_room(double *avail, const char **bound);
/* Peak resident set size of this process in bytes (0 if unknown). */
int64_t cis_peak_rss(void);

/* Strict numeric parsing of a whole string; CIS_ERR_USAGE naming `what` on failure. */
cis_err cis_parse_int(const char *s, const char *what, long *out);
cis_err cis_parse_double(const char *s, const char *what, double *out);

#define CIS_MIN(a, b) ((a) < (b) ? (a) : (b))
#define CIS_MAX(a, b) ((a) > (b) ? (a) : (b))

#endif
