/* How much host memory this process may still take: the least of what the machine has
 * available, what its memory cgroups allow (v1 or v2, as SLURM and containers set them) and what
 * its address-space limits allow (ulimit -v / -d, or strict overcommit). The files are read
 * under a root folder so that tests can give a made-up /proc and /sys/fs/cgroup. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

#define PATH_CAP 4400
#define NO_LIMIT ((int64_t)1 << 60) /* v1 reports "no limit" as about 2^63 */

static FILE *open_under(const char *root, const char *path) {
  char full[PATH_CAP];
  int w = snprintf(full, sizeof full, "%s%s", root, path);
  return w > 0 && (size_t)w < sizeof full ? fopen(full, "r") : NULL;
}

/* The number after `key` (a line's first word) in a "key value [kB]" file, in bytes when
 * `kib` (the value is in KiB); -1 if absent. */
static int64_t keyed_value(const char *root, const char *path, const char *key, int kib) {
  FILE *f = open_under(root, path);
  if (!f) return -1;
  char line[512];
  int64_t v = -1;
  size_t klen = strlen(key);
  while (fgets(line, sizeof line, f))
    if (strncmp(line, key, klen) == 0 && (line[klen] == ' ' || line[klen] == '\t')) {
      long long x = strtoll(line + klen, NULL, 10);
      v = kib ? (int64_t)x * 1024 : (int64_t)x;
      break;
    }
  fclose(f);
  return v;
}

/* A file holding one number ("max" or a value past NO_LIMIT: none, -1). */
static int64_t single_value(const char *root, const char *dir, const char *name) {
  char path[PATH_CAP];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = open_under(root, path);
  if (!f) return -1;
  char line[64] = {0};
  int64_t v = -1;
  if (fgets(line, sizeof line, f) && strncmp(line, "max", 3) != 0) {
    long long x = strtoll(line, NULL, 10);
    v = x > 0 && x < NO_LIMIT ? (int64_t)x : -1;
  }
  fclose(f);
  return v;
}

/* ---- cgroups ------------------------------------------------------------------------------- */

typedef struct {
  int v2;
  char dir[PATH_CAP]; /* this process's cgroup folder (absolute, below the root) */
  size_t top;         /* length of the mount point's part of dir: the walk stops there */
} cgroup_dir;

/* Where the memory controller's hierarchy is mounted (cgroup2, or cgroup v1 with the memory
 * controller) and which cgroup path that mount shows as its "/" (a container's namespace), from
 * /proc/self/mountinfo: "id parent dev ROOT MOUNTPOINT opts ... - FSTYPE src SUPEROPTS". */
static int find_mount(const char *root, int v2, char *mroot, char *mpoint, size_t cap) {
  FILE *f = open_under(root, "/proc/self/mountinfo");
  if (!f) return 0;
  char line[2048];
  int found = 0;
  while (!found && fgets(line, sizeof line, f)) {
    char r[1024], p[1024], fstype[64], super[512] = "";
    const char *dash = strstr(line, " - ");
    if (!dash || sscanf(line, "%*s %*s %*s %1023s %1023s", r, p) != 2 ||
        sscanf(dash + 3, "%63s %*s %511s", fstype, super) < 1)
      continue;
    if (v2 ? strcmp(fstype, "cgroup2") == 0
           : strcmp(fstype, "cgroup") == 0 && strstr(super, "memory") != NULL) {
      snprintf(mroot, cap, "%s", r);
      snprintf(mpoint, cap, "%s", p);
      found = 1;
    }
  }
  fclose(f);
  return found;
}

/* This process's memory cgroup folder, from /proc/self/cgroup ("0::/path" for v2,
 * "N:...memory...:/path" for v1) and the mount; v1 first when both exist (a hybrid host puts
 * the memory controller there). */
static int find_cgroup(const char *root, cgroup_dir *cg) {
  FILE *f = open_under(root, "/proc/self/cgroup");
  if (!f) return 0;
  char line[2048], path[2][1024] = {"", ""};
  int have[2] = {0, 0};
  while (fgets(line, sizeof line, f)) {
    char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c2) continue;
    line[strcspn(line, "\n")] = '\0';
    *c1 = *c2 = '\0';
    const char *ctrl = c1 + 1, *p = c2 + 1;
    int v2 = strcmp(line, "0") == 0 && ctrl[0] == '\0';
    int mem = !v2 && (strcmp(ctrl, "memory") == 0 || strstr(ctrl, "memory,") == ctrl ||
                      strstr(ctrl, ",memory"));
    if (v2 || mem) {
      snprintf(path[v2], sizeof path[v2], "%s", p);
      have[v2] = 1;
    }
  }
  fclose(f);
  for (int v2 = 0; v2 < 2; v2++) {
    char mroot[1024], mpoint[1024];
    if (!have[v2] || !find_mount(root, v2, mroot, mpoint, sizeof mroot)) continue;
    /* The part of the path below the mount's root; a path outside it (a container that shows
     * the host's path) is taken as the mount's own cgroup. */
    const char *rel = path[v2];
    size_t rl = strlen(mroot);
    if (strcmp(mroot, "/") != 0)
      rel = strncmp(rel, mroot, rl) == 0 && (rel[rl] == '/' || !rel[rl]) ? rel + rl : "";
    cg->v2 = v2;
    cg->top = strlen(mpoint);
    snprintf(cg->dir, sizeof cg->dir, "%s%s", mpoint, strcmp(rel, "/") == 0 ? "" : rel);
    return 1;
  }
  return 0;
}

/* The tightest (limit - usage) from the process's cgroup up to the mount point; usage less the
 * inactive file cache, which the kernel reclaims before it refuses memory. -1 without a limit. */
static int64_t cgroup_left(const char *root) {
  cgroup_dir cg;
  if (!find_cgroup(root, &cg)) return -1;
  const char *lim_name = cg.v2 ? "memory.max" : "memory.limit_in_bytes";
  const char *use_name = cg.v2 ? "memory.current" : "memory.usage_in_bytes";
  const char *cache_key = cg.v2 ? "inactive_file" : "total_inactive_file";
  int64_t best = -1;
  for (;;) {
    int64_t lim = single_value(root, cg.dir, lim_name);
    if (lim > 0) {
      int64_t use = single_value(root, cg.dir, use_name);
      char stat[PATH_CAP + 16];
      snprintf(stat, sizeof stat, "%s/memory.stat", cg.dir);
      int64_t cache = keyed_value(root, stat, cache_key, 0);
      if (use < 0) use = 0;
      if (cache > 0 && cache <= use) use -= cache;
      int64_t left = CIS_MAX(lim - use, (int64_t)0);
      best = best < 0 ? left : CIS_MIN(best, left);
    }
    /* up to the parent; folders that do not exist (a path from another namespace) have no
     * files, and the walk ends at the mount point */
    char *slash = strrchr(cg.dir, '/');
    if (strlen(cg.dir) <= cg.top || !slash || (size_t)(slash - cg.dir) < cg.top) break;
    *slash = '\0';
  }
  return best;
}

/* ---- address-space limits ------------------------------------------------------------------ */

/* A soft limit from /proc/self/limits ("Max address space  3072000000  unlimited  bytes");
 * -1 when unlimited or unknown. */
static int64_t rlimit_of(const char *root, const char *name) {
  FILE *f = open_under(root, "/proc/self/limits");
  if (!f) return -1;
  char line[512];
  int64_t v = -1;
  size_t nlen = strlen(name);
  while (fgets(line, sizeof line, f))
    if (strncmp(line, name, nlen) == 0) {
      const char *s = line + nlen;
      while (*s == ' ') s++;
      if (strncmp(s, "unlimited", 9) != 0) {
        long long x = strtoll(s, NULL, 10);
        if (x > 0 && x < NO_LIMIT) v = (int64_t)x;
      }
      break;
    }
  fclose(f);
  return v;
}

void cis_host_mem_probe(const char *root, cis_host_mem *m) {
  memset(m, 0, sizeof *m);
  m->meminfo = m->least = -1;
  m->bound = "unknown";
  int64_t avail = keyed_value(root, "/proc/meminfo", "MemAvailable:", 1);
  if (avail >= 0) {
    m->least = m->meminfo = avail;
    m->bound = "available memory";
  }
  /* vm.overcommit_memory = 2: allocations fail past CommitLimit, touched or not */
  FILE *oc = open_under(root, "/proc/sys/vm/overcommit_memory");
  int strict = 0;
  if (oc) {
    strict = fgetc(oc) == '2';
    fclose(oc);
  }
  if (strict) {
    int64_t lim = keyed_value(root, "/proc/meminfo", "CommitLimit:", 1);
    int64_t used = keyed_value(root, "/proc/meminfo", "Committed_AS:", 1);
    if (lim > 0 && used >= 0) {
      int64_t left = CIS_MAX(lim - used, (int64_t)0);
      m->address_limit = 1;
      if (m->least < 0 || left < m->least) {
        m->least = left;
        m->bound = "the commit limit (vm.overcommit_memory = 2)";
      }
    }
  }
  m->cgroup = cgroup_left(root);
  if (m->cgroup >= 0 && (m->least < 0 || m->cgroup < m->least)) {
    m->least = m->cgroup;
    m->bound = "the cgroup memory limit";
  }
  /* RLIMIT_AS counts every mapping, RLIMIT_DATA the private writable ones (VmData) */
  static const struct {
    const char *limit, *mapped, *what;
  } rl[] = {{"Max address space", "VmSize:", "the address-space limit (ulimit -v)"},
            {"Max data size", "VmData:", "the data-size limit (ulimit -d)"}};
  m->rlimit = -1;
  for (int i = 0; i < 2; i++) {
    int64_t lim = rlimit_of(root, rl[i].limit);
    if (lim < 0) continue;
    int64_t mapped = keyed_value(root, "/proc/self/status", rl[i].mapped, 1);
    int64_t left = CIS_MAX(lim - CIS_MAX(mapped, (int64_t)0), (int64_t)0);
    m->address_limit = 1;
    m->rlimit = m->rlimit < 0 ? left : CIS_MIN(m->rlimit, left);
    if (m->least < 0 || left < m->least) {
      m->least = left;
      m->bound = rl[i].what;
    }
  }
  if (m->least < 0) m->least = 0;
}

int64_t cis_host_mem_available(void) {
  cis_host_mem m;
  cis_host_mem_probe("", &m);
  return m.least;
}

int cis_host_mem_room(double *avail, const char **bound) {
  cis_host_mem m;
  cis_host_mem_probe("", &m);
  if (m.meminfo < 0 && m.cgroup < 0 && m.rlimit < 0) return 0;
  *avail = (double)m.least;
  *bound = m.bound;
  return 1;
}
