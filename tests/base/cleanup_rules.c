/* Compiled, never run, by the core_cleanup_* tests (base/error.h): a function that owns a
 * resource and has a `cleanup:` label declares CIS_CLEANUP_FUNCTION, after which the checks
 * that return at once do not compile, and CIS_TRY does not compile without it.
 *   -DCASE=0: the right use (a check before the marker returns, CIS_TRY after it): compiles;
 *   -DCASE=1: CIS_CALL after the marker (it would leak p): an error;
 *   -DCASE=2: CIS_TRY with no marker: an error. */
#include <stdlib.h>

#include "base/error.h"

static cis_err step(int x) {
  CIS_CHECK(x > 0, CIS_ERR_INPUT, "x = %d", x);
  return CIS_OK;
}

cis_err owner(int x);
cis_err owner(int x) {
  cis_err err = CIS_OK;
  CIS_CHECK(x < 100, CIS_ERR_INPUT, "x = %d", x); /* nothing owned yet */
#if CASE != 2
  CIS_CLEANUP_FUNCTION;
#endif
  char *p = malloc(16);
#if CASE == 1
  CIS_CALL(step(x));
#else
  CIS_TRY(step(x));
#endif
cleanup:
  free(p);
  return err;
}
