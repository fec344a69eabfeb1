/* Where files go (io/files.c): which paths name the same file, exclusive temporary files that
 * never follow a planted link, and no temporary file left after a failed write.
 * usage: test_files SCRATCH_DIR
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/tools/expect.h"
#include "tests/tools/leftovers.h"
#include "base/util.h"
#include "io/files.h"
#include "io/input.h"
#include "io/io_private.h"

static char dir[4096];

static const char *at(const char *name) {
  static char buf[8][4200];
  static int k;
  k = (k + 1) % 8;
  snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
  return buf[k];
}

static void put(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  EXPECT(f != NULL, "cannot create %s", path);
  if (!f) return;
  fputs(text, f);
  fclose(f);
}

static int holds(const char *path, const char *text) {
  char buf[256] = {0};
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  return n == strlen(text) && memcmp(buf, text, n) == 0;
}

/* The same file through the same path, a symbolic link, a hard link, another spelling of a
 * folder; not the same for other files, or a file that is there and one that is not. */
static void check_same(void) {
  put(at("in.fcidump"), "input\n");
  put(at("other"), "other\n");
  unlink(at("sym"));
  unlink(at("hard"));
  EXPECT(symlink("in.fcidump", at("sym")) == 0, "symlink: %s", strerror(errno));
  EXPECT(link(at("in.fcidump"), at("hard")) == 0, "link: %s", strerror(errno));
  mkdir(at("sub"), 0755);
  EXPECT(cis_files_same(at("in.fcidump"), at("in.fcidump")), "a path and itself");
  EXPECT(cis_files_same(at("in.fcidump"), at("sym")), "through a symbolic link");
  EXPECT(cis_files_same(at("hard"), at("in.fcidump")), "through a hard link");
  EXPECT(cis_files_same(at("sub/../in.fcidump"), at("sym")), "another spelling");
  EXPECT(!cis_files_same(at("in.fcidump"), at("other")), "two files");
  EXPECT(cis_files_same(at("new.h5"), at("sub/../new.h5")), "a new file, spelt twice");
  EXPECT(!cis_files_same(at("new.h5"), at("sub/new.h5")), "two new files");
  EXPECT(!cis_files_same(at("new.h5"), at("other")), "a new file and one that is there");
}

/* The create function of a writer, for the test: O_EXCL, as the real ones; with `fail_first`
 * attempts answered EEXIST before, or every one answered `fail_errno`. */
typedef struct {
  int fail_first, fail_errno, calls;
  char names[4][4200];
} create_ctx;

static int test_create(const char *name, void *p) {
  create_ctx *c = p;
  if (c->calls < 4) snprintf(c->names[c->calls], sizeof c->names[0], "%s", name);
  if (c->calls++ < c->fail_first) {
    errno = EEXIST;
    return -1;
  }
  if (c->fail_errno) {
    errno = c->fail_errno;
    return -1;
  }
  int fd = open(name, O_WRONLY | O_CREAT | O_EXCL, 0666);
  if (fd < 0) return -1;
  if (write(fd, "new\n", 4) != 4) return -1;
  return close(fd);
}

/* Names are PATH.<12 hex digits>.tmp, never twice the same; a taken name is never opened (a
 * fresh one is tried); commit renames over PATH, discard removes. */
static void check_tmp(void) {
  const char *path = at("out.h5");
  put(path, "old\n");
  cis_io_tmp a = {{0}}, b = {{0}};
  create_ctx ca = {0}, cb = {.fail_first = 2};
  EXPECT(cis_io_tmp_create(path, test_create, &ca, &a) == CIS_OK, "create: %s",
         cis_error_message());
  EXPECT(cis_io_tmp_create(path, test_create, &cb, &b) == CIS_OK, "create after two taken: %s",
         cis_error_message());
  size_t n = strlen(path);
  EXPECT(strlen(a.name) == n + 17 && strncmp(a.name, path, n) == 0 && a.name[n] == '.' &&
             strspn(a.name + n + 1, "0123456789abcdef") == 12 &&
             strcmp(a.name + n + 13, ".tmp") == 0,
         "temporary name %s", a.name);
  EXPECT(strcmp(a.name, b.name) != 0, "two temporary files named %s", a.name);
  EXPECT(cb.calls == 3 && strcmp(cb.names[0], cb.names[1]) != 0 &&
             strcmp(cb.names[2], b.name) == 0,
         "a taken name: %d attempts", cb.calls);
  EXPECT(holds(path, "old\n"), "PATH changed before the commit");
  EXPECT(cis_test_leftovers(path) == 2, "%d temporary files", cis_test_leftovers(path));
  EXPECT(cis_io_tmp_commit(&a, path) == CIS_OK, "commit: %s", cis_error_message());
  EXPECT(holds(path, "new\n") && a.name[0] == '\0', "the commit did not publish the file");
  cis_io_tmp_discard(&b);
  EXPECT(cis_test_leftovers(path) == 0, "discard left %d files", cis_test_leftovers(path));
  /* A writer that cannot create its file: an error naming it and the reason, nothing left. */
  create_ctx cf = {.fail_errno = ENOSPC};
  cis_io_tmp c = {{0}};
  EXPECT(cis_io_tmp_create(path, test_create, &cf, &c) == CIS_ERR_IO &&
             strstr(cis_error_message(), "out.h5.") &&
             strstr(cis_error_message(), strerror(ENOSPC)) && c.name[0] == '\0',
         "creation failure: %s", cis_error_message());
  cis_error_clear();
}

/* A symbolic link planted at the old fixed name PATH.tmp is left alone by every writer: the
 * victim it points to keeps its content, and the link stays. */
static void check_planted(void) {
  int64_t rowptr[3] = {0, 2, 4};
  int32_t col[4] = {0, 1, 0, 1};
  double val[4] = {1.0, 0.5, 0.5, 2.0};
  cis_csr m = {2, 4, rowptr, col, val};
  const char *ext[2] = {".mtx", ".h5"};
  for (int i = 0; i < 2; i++) {
    char path[4200], tmp[4300];
    snprintf(path, sizeof path, "%s", at(i ? "planted.h5" : "planted.mtx"));
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    put(at("victim"), "victim\n");
    unlink(tmp);
    EXPECT(symlink("victim", tmp) == 0, "symlink: %s", strerror(errno));
    cis_row_source src;
    cis_csr_row_source(&m, &src);
    EXPECT(cis_matrix_write(path, &src) == CIS_OK, "%s: %s", ext[i], cis_error_message());
    EXPECT(holds(at("victim"), "victim\n"), "%s: the writer followed the link at %s", ext[i], tmp);
    char target[64] = {0};
    EXPECT(readlink(tmp, target, sizeof target - 1) == 6 && strcmp(target, "victim") == 0,
           "%s: the link at %s was replaced", ext[i], tmp);
    cis_problem p;
    EXPECT(cis_input_read(path, &p) == CIS_OK && p.matrix.n == 2, "%s: not written: %s", ext[i],
           cis_error_message());
    cis_problem_free(&p);
    unlink(tmp);
  }
}

/* A write that fails half way (beyond the file size limit; SIGXFSZ ignored as cisolve does)
 * reports it and leaves neither a temporary file nor a changed PATH. */
static void check_failed_write(void) {
  int64_t n = 20000;
  int64_t *rowptr = NULL;
  int32_t *col = NULL;
  double *val = NULL;
  if (cis_malloc(&rowptr, (size_t)n + 1, sizeof *rowptr, "") != CIS_OK ||
      cis_malloc(&col, (size_t)n, sizeof *col, "") != CIS_OK ||
      cis_malloc(&val, (size_t)n, sizeof *val, "") != CIS_OK) {
    EXPECT(0, "out of memory");
    goto done;
  }
  for (int64_t i = 0; i <= n; i++) rowptr[i] = i;
  for (int64_t i = 0; i < n; i++) col[i] = (int32_t)i, val[i] = 1.0 / (double)(i + 1);
  cis_csr m = {n, n, rowptr, col, val};
  struct rlimit old, small = {64 * 1024, 0};
  getrlimit(RLIMIT_FSIZE, &old);
  small.rlim_max = old.rlim_max;
  signal(SIGXFSZ, SIG_IGN);
  const char *names[2] = {"big.mtx", "big.h5"};
  for (int i = 0; i < 2; i++) {
    const char *path = at(names[i]);
    put(path, "old\n");
    cis_row_source src;
    cis_csr_row_source(&m, &src);
    setrlimit(RLIMIT_FSIZE, &small);
    cis_err e = cis_matrix_write(path, &src);
    setrlimit(RLIMIT_FSIZE, &old);
    EXPECT(e == CIS_ERR_IO, "%s: a write beyond the size limit returned %s", path, cis_err_name(e));
    EXPECT(cis_test_leftovers(path) == 0, "%s: %d temporary files left", path,
           cis_test_leftovers(path));
    EXPECT(holds(path, "old\n"), "%s changed by a failed write", path);
    cis_error_clear();
  }
done:
  cis_free(&rowptr);
  cis_free(&col);
  cis_free(&val);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s SCRATCH_DIR\n", argv[0]);
    return 2;
  }
  snprintf(dir, sizeof dir, "%s/files", argv[1]);
  mkdir(dir, 0755);
  cis_io_init();
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  check_same();
  check_tmp();
  check_planted();
  check_failed_write();
  return cis_test_summary();
}
