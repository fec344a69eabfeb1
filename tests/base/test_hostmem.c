/* base/hostmem.c: the memory a process may still take, from made-up /proc and /sys/fs/cgroup
 * trees (cgroup v2 as SLURM's cgroup plugin lays it out, v1 on a hybrid host, a container's
 * own namespace, an address-space limit, strict overcommit) and from this process under a
 * real RLIMIT_AS. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "base/util.h"
#include "hamiltonian/hmat.h"
#include "tests/tools/expect.h"

#define GiB ((int64_t)1 << 30)
#define MiB ((int64_t)1 << 20)

static char base[4096];

/* Write `text` to base/case/path, making the folders on the way. */
static void put(const char *c, const char *path, const char *text) {
  char full[8192];
  snprintf(full, sizeof full, "%s/%s/%s", base, c, path);
  for (char *s = full + strlen(base) + 1; (s = strchr(s, '/')); s++) {
    *s = '\0';
    if (mkdir(full, 0755) != 0 && errno != EEXIST) fprintf(stderr, "mkdir %s failed\n", full);
    *s = '/';
  }
  FILE *f = fopen(full, "w");
  if (!f) {
    fprintf(stderr, "cannot write %s\n", full);
    exit(2);
  }
  fputs(text, f);
  fclose(f);
}

static void probe(const char *c, cis_host_mem *m) {
  char root[4200];
  snprintf(root, sizeof root, "%s/%s", base, c);
  cis_host_mem_probe(root, m);
}

static const char *meminfo =
    "MemTotal:       263000000 kB\nMemFree:        1000 kB\nMemAvailable:   104857600 kB\n"
    "CommitLimit:     20971520 kB\nCommitted_AS:    16777216 kB\n";
static const char *nolimits =
    "Limit                     Soft Limit           Hard Limit           Units     \n"
    "Max data size             unlimited            unlimited            bytes     \n"
    "Max address space         unlimited            unlimited            bytes     \n";

/* cgroup v2 as SLURM makes it: the job's limit two levels above the task's folder. */
static void slurm_v2(void) {
  const char *c = "v2";
  put(c, "proc/meminfo", meminfo);
  put(c, "proc/self/limits", nolimits);
  put(c, "proc/self/cgroup", "0::/system.slice/slurmstepd.scope/job_42/step_0/user/task_0\n");
  put(c, "proc/self/mountinfo",
      "22 1 0:21 / /proc rw,nosuid - proc proc rw\n"
      "30 24 0:26 / /sys/fs/cgroup rw,nosuid,nodev - cgroup2 cgroup2 rw,nsdelegate\n");
  const char *job = "sys/fs/cgroup/system.slice/slurmstepd.scope/job_42";
  char p[512];
  snprintf(p, sizeof p, "%s/memory.max", job);
  put(c, p, "4294967296\n");
  snprintf(p, sizeof p, "%s/memory.current", job);
  put(c, p, "1073741824\n");
  snprintf(p, sizeof p, "%s/memory.stat", job);
  put(c, p, "anon 805306368\nfile 268435456\ninactive_file 268435456\nactive_file 0\n");
  snprintf(p, sizeof p, "%s/step_0/user/task_0/memory.max", job);
  put(c, p, "max\n");
  snprintf(p, sizeof p, "%s/step_0/user/task_0/memory.current", job);
  put(c, p, "805306368\n");
  cis_host_mem m;
  probe(c, &m);
  EXPECT(m.meminfo == 100 * GiB, "v2: MemAvailable %lld", (long long)m.meminfo);
  EXPECT(m.cgroup == 4 * GiB - (1 * GiB - 256 * MiB), "v2: cgroup %lld, expected 3.25 GiB",
         (long long)m.cgroup);
  EXPECT(m.least == m.cgroup && strstr(m.bound, "cgroup") && !m.address_limit,
         "v2: least %lld bound '%s' address_limit %d", (long long)m.least, m.bound,
         m.address_limit);
  /* a limit on the task's own folder too: the tighter one counts */
  snprintf(p, sizeof p, "%s/step_0/user/task_0/memory.max", job);
  put(c, p, "1073741824\n");
  probe(c, &m);
  EXPECT(m.cgroup == 256 * MiB, "v2 nested: cgroup %lld, expected 256 MiB (1 GiB less 768 MiB)",
         (long long)m.cgroup);
}

/* cgroup v1 on a hybrid host: the memory controller in v1, an empty v2 beside it. */
static void hybrid_v1(void) {
  const char *c = "v1";
  put(c, "proc/meminfo", meminfo);
  put(c, "proc/self/limits", nolimits);
  put(c, "proc/self/cgroup", "9:name=systemd:/\n5:cpuacct,cpu:/\n4:memory:/slurm/uid_1000/job_7\n"
                             "0::/\n");
  put(c, "proc/self/mountinfo",
      "25 24 0:22 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n"
      "26 24 0:23 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
      "27 24 0:24 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory\n");
  put(c, "sys/fs/cgroup/memory/slurm/uid_1000/job_7/memory.limit_in_bytes", "2147483648\n");
  put(c, "sys/fs/cgroup/memory/slurm/uid_1000/job_7/memory.usage_in_bytes", "603979776\n");
  put(c, "sys/fs/cgroup/memory/slurm/uid_1000/job_7/memory.stat",
      "cache 100663296\ninactive_file 1\ntotal_inactive_file 67108864\n");
  put(c, "sys/fs/cgroup/memory/slurm/uid_1000/memory.limit_in_bytes", "9223372036854771712\n");
  put(c, "sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
  cis_host_mem m;
  probe(c, &m);
  EXPECT(m.cgroup == 2 * GiB - 512 * MiB, "v1: cgroup %lld, expected 1.5 GiB",
         (long long)m.cgroup);
  EXPECT(m.least == m.cgroup, "v1: least %lld", (long long)m.least);
}

/* A container with its own cgroup namespace: it sees itself as "/", its limit at the mount. */
static void container(void) {
  const char *c = "ns";
  put(c, "proc/meminfo", meminfo);
  put(c, "proc/self/limits", nolimits);
  put(c, "proc/self/cgroup", "0::/\n");
  put(c, "proc/self/mountinfo", "640 630 0:30 / /sys/fs/cgroup ro - cgroup2 cgroup rw\n");
  put(c, "sys/fs/cgroup/memory.max", "536870912\n");
  put(c, "sys/fs/cgroup/memory.current", "134217728\n");
  cis_host_mem m;
  probe(c, &m);
  EXPECT(m.cgroup == 384 * MiB, "container: cgroup %lld, expected 384 MiB", (long long)m.cgroup);
  /* one that shows the host's path of another mount root: the mount's own limit */
  put(c, "proc/self/cgroup", "0::/kubepods/pod1/abc\n");
  put(c, "proc/self/mountinfo", "640 630 0:30 /kubepods/pod1/abc /sys/fs/cgroup ro - cgroup2 "
                                "cgroup rw\n");
  probe(c, &m);
  EXPECT(m.cgroup == 384 * MiB, "container (host path): cgroup %lld", (long long)m.cgroup);
}

/* ulimit -v and -d, and strict overcommit; no cgroup files at all. */
static void address_limits(void) {
  const char *c = "as";
  put(c, "proc/meminfo", meminfo);
  put(c, "proc/self/limits",
      "Limit                     Soft Limit           Hard Limit           Units     \n"
      "Max data size             4294967296           unlimited            bytes     \n"
      "Max address space         3072000000           3072000000           bytes     \n");
  put(c, "proc/self/status", "Name:\tcisolve\nVmPeak:\t 1100000 kB\nVmSize:\t 1000000 kB\n"
                             "VmData:\t  500000 kB\n");
  cis_host_mem m;
  probe(c, &m);
  EXPECT(m.cgroup == -1, "no cgroup files: %lld", (long long)m.cgroup);
  EXPECT(m.rlimit == 3072000000 - 1024000000LL && m.least == m.rlimit && m.address_limit &&
             strstr(m.bound, "ulimit -v"),
         "RLIMIT_AS: rlimit %lld least %lld bound '%s'", (long long)m.rlimit, (long long)m.least,
         m.bound);
  put(c, "proc/sys/vm/overcommit_memory", "2\n");
  put(c, "proc/self/limits", nolimits);
  probe(c, &m);
  EXPECT(m.least == 4 * GiB && m.address_limit && strstr(m.bound, "overcommit"),
         "strict overcommit: least %lld bound '%s'", (long long)m.least, m.bound);
}

/* This process under a real RLIMIT_AS: the probe of "" sees it, and the default budget of the
 * Hamiltonian stays within it. */
static void real_rlimit(void) {
  struct rlimit old, lim;
  getrlimit(RLIMIT_AS, &old);
  lim = old;
  /* 1 GiB above what is mapped now (an AddressSanitizer build maps terabytes of shadow) */
  long long vm_kib = 0;
  char line[256];
  FILE *st = fopen("/proc/self/status", "r");
  while (st && fgets(line, sizeof line, st))
    if (sscanf(line, "VmSize: %lld", &vm_kib) == 1) break;
  if (st) fclose(st);
  EXPECT(vm_kib > 0, "VmSize of /proc/self/status");
  lim.rlim_cur = (rlim_t)vm_kib * 1024 + ((rlim_t)1 << 30);
  if (old.rlim_max != RLIM_INFINITY && old.rlim_max < lim.rlim_cur) lim.rlim_cur = old.rlim_max;
  EXPECT(setrlimit(RLIMIT_AS, &lim) == 0, "setrlimit: %s", strerror(errno));
  cis_host_mem m;
  cis_host_mem_probe("", &m);
  EXPECT(m.address_limit && m.rlimit > 0 && m.rlimit < (int64_t)lim.rlim_cur,
         "this process: rlimit %lld under %lld", (long long)m.rlimit, (long long)lim.rlim_cur);
  int64_t n = 1000000;
  int64_t b = cis_hmat_default_budget(n, 10);
  EXPECT(b <= m.least / 4 * 3 - 10 * n * 8 + 64 * MiB && b >= 0,
         "default budget %lld within 3/4 of %lld less the vectors", (long long)b,
         (long long)m.least);
  setrlimit(RLIMIT_AS, &old);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: test_hostmem SCRATCH_DIR\n");
    return 2;
  }
  snprintf(base, sizeof base, "%s/hostmem", argv[1]);
  mkdir(base, 0755);
  slurm_v2();
  hybrid_v1();
  container();
  address_limits();
  real_rlimit();
  return cis_test_summary();
}
