/* cisolve: where files go. The temporary files every writer publishes its file through
 * (io/io_private.h), and whether two paths name the same file (io/files.h). */
#define _DEFAULT_SOURCE
#include "io/files.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <hdf5.h>

#include "base/signals.h"
#include "io/input.h"
#include "io/io_private.h"

/* ---- temporary files -------------------------------------------------------------------- */

void cis_io_init(void) {
  /* A file whose close failed (a full disk, a size limit) stays half-open inside HDF5, whose
   * clean-up at exit then crashes on it: let the system close such files instead. */
  H5dont_atexit();
}

/* 48 bits no other run can guess; without the kernel's generator, the process, the clock and a
 * counter (O_EXCL still refuses any name that exists). */
static uint64_t tmp_random(void) {
  static unsigned counter;
  uint64_t r = 0;
  if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    r = ((uint64_t)getpid() << 32) ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)ts.tv_nsec;
  }
  r ^= (uint64_t)++counter * 0x9e3779b97f4a7c15ULL;
  return r & 0xffffffffffffULL;
}

int cis_io_create_stdio(const char *name, void *f) {
  int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) return -1;
  *(FILE **)f = fdopen(fd, "w");
  if (*(FILE **)f) return 0;
  int e = errno;
  close(fd);
  errno = e;
  return -1;
}

cis_err cis_io_tmp_create(const char *path, cis_io_create_fn create, void *ctx, cis_io_tmp *t) {
  t->name[0] = '\0';
  /* The temporary file is renamed over PATH: never do that to a device, a pipe or a folder. */
  struct stat st;
  CIS_CHECK(stat(path, &st) != 0 || S_ISREG(st.st_mode), CIS_ERR_USAGE,
            "%s exists and is not a regular file: cisolve writes its files under a temporary "
            "name and renames them, which would replace it (give another path)", path);
  for (int attempt = 0; attempt < 16; attempt++) {
    int k = snprintf(t->name, sizeof t->name, "%s.%012llx.tmp", path,
                     (unsigned long long)tmp_random());
    CIS_CHECK(k > 0 && (size_t)k < sizeof t->name, CIS_ERR_IO, "output path too long: %s", path);
    /* Known to the signal handlers before it exists: a signal in the middle of the creation
     * (HDF5 writes the file's first blocks in it) removes it too. */
    cis_signals_tmp(t->name);
    errno = 0;
    if (create(t->name, ctx) == 0) return CIS_OK;
    int e = errno;
    cis_signals_tmp(NULL);
    if (e == EEXIST) continue; /* taken (by another run, or planted): never opened, try another */
    /* a writer that failed after creating the file leaves it to us */
    unlink(t->name);
    char name[sizeof t->name];
    memcpy(name, t->name, sizeof name);
    t->name[0] = '\0';
    CIS_ERROR(CIS_ERR_IO, "cannot create %s: %s", name,
              e ? strerror(e) : "folder missing or not writable?");
  }
  t->name[0] = '\0';
  CIS_ERROR(CIS_ERR_IO, "cannot create a temporary file beside %s: 16 fresh names were all taken",
            path);
}

/* fsync a closed file by name, so that the rename never publishes unwritten data. */
static cis_err fsync_name(const char *name) {
  int fd = open(name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) CIS_ERROR(CIS_ERR_IO, "cannot reopen %s: %s", name, strerror(errno));
  int rc = fsync(fd), e = errno;
  close(fd);
  if (rc != 0) CIS_ERROR(CIS_ERR_IO, "cannot sync %s to disk: %s", name, strerror(e));
  return CIS_OK;
}

cis_err cis_io_tmp_commit(cis_io_tmp *t, const char *path) {
  CIS_CALL(fsync_name(t->name));
  if (rename(t->name, path) != 0)
    CIS_ERROR(CIS_ERR_IO, "cannot rename %s to %s: %s", t->name, path, strerror(errno));
  t->name[0] = '\0';
  cis_signals_tmp(NULL);
  /* Sync the folder too, so that the rename itself survives a crash. Some file systems
   * refuse fsync on a folder; the rename is still atomic there. */
  char dir[4200];
  snprintf(dir, sizeof dir, "%s", path);
  int fd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    int rc = fsync(fd), e = errno;
    close(fd);
    if (rc != 0 && e != EINVAL && e != EBADF)
      CIS_ERROR(CIS_ERR_IO, "cannot sync the folder of %s: %s", path, strerror(e));
  }
  return CIS_OK;
}

cis_err cis_io_tmp_commit_stdio(FILE **f, cis_io_tmp *t, const char *path) {
  int bad = ferror(*f) || fflush(*f) != 0;
  int e = errno;
  int rc = fclose(*f);
  *f = NULL;
  CIS_CHECK(!bad, CIS_ERR_IO, "cannot write %s: %s", t->name, strerror(e));
  CIS_CHECK(rc == 0, CIS_ERR_IO, "cannot close %s: %s", t->name, strerror(errno));
  return cis_io_tmp_commit(t, path);
}

void cis_io_tmp_discard(cis_io_tmp *t) {
  if (t->name[0]) unlink(t->name);
  t->name[0] = '\0';
  cis_signals_tmp(NULL);
}

/* ---- which file a path names ------------------------------------------------------------ */

typedef struct {
  int exists;        /* stat succeeded: dev and ino say which file */
  dev_t dev;
  ino_t ino;
  char where[8400];  /* else the resolved folder and the name (the path when unresolved) */
} file_id;

static void file_id_of(const char *path, file_id *id) {
  struct stat st;
  memset(id, 0, sizeof *id);
  if (stat(path, &st) == 0) {
    id->exists = 1;
    id->dev = st.st_dev;
    id->ino = st.st_ino;
    return;
  }
  char d[4200], b[4200];
  snprintf(d, sizeof d, "%s", path);
  snprintf(b, sizeof b, "%s", path);
  char *real = realpath(dirname(d), NULL);
  if (real)
    snprintf(id->where, sizeof id->where, "%s/%s", real, basename(b));
  else
    snprintf(id->where, sizeof id->where, "%s", path);
  free(real);
}

static int same_id(const file_id *a, const file_id *b) {
  if (a->exists != b->exists) return 0;
  if (a->exists) return a->dev == b->dev && a->ino == b->ino;
  return strcmp(a->where, b->where) == 0;
}

int cis_files_same(const char *a, const char *b) {
  file_id x, y;
  file_id_of(a, &x);
  file_id_of(b, &y);
  return same_id(&x, &y);
}
