/* Temporary files a writer left beside PATH: the names "PATH.<anything>.tmp" (io/io_private.h)
 * and the old fixed name "PATH.tmp". */
#ifndef CIS_TEST_LEFTOVERS_H
#define CIS_TEST_LEFTOVERS_H

#include <dirent.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>

/* How many temporary files of PATH exist in its folder. */
static inline int cis_test_leftovers(const char *path) {
  char d[4096], b[4096];
  snprintf(d, sizeof d, "%s", path);
  snprintf(b, sizeof b, "%s", path);
  const char *base = basename(b);
  size_t n = strlen(base);
  DIR *dir = opendir(dirname(d));
  if (!dir) return 0;
  int count = 0;
  for (struct dirent *e; (e = readdir(dir)) != NULL;) {
    size_t m = strlen(e->d_name);
    if (m >= n + 4 && strncmp(e->d_name, base, n) == 0 && e->d_name[n] == '.' &&
        strcmp(e->d_name + m - 4, ".tmp") == 0)
      count++;
  }
  closedir(dir);
  return count;
}

#endif
