/* base/error: a message raised from the current message (CIS_ERROR(..., cis_error_message()))
 * keeps both, whole; the trace and the code follow the newest error. */
#include <string.h>

#include "base/error.h"
#include "tests/tools/expect.h"

static cis_err fail_inner(void) {
  CIS_ERROR(CIS_ERR_USAGE, "--nroots: expected an integer, got 'zero'");
}

static cis_err fail_outer(void) {
  cis_err e = fail_inner();
  if (e != CIS_OK)
    CIS_ERROR(CIS_ERR_INPUT, "in.h5: /options/%s: %s", "nroots", cis_error_message());
  return CIS_OK;
}

/* A message as long as the buffer, formatted from itself: truncated, never garbled. */
static cis_err fail_long(void) {
  char big[2000];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  cis_error_raise(CIS_ERR_IO, __FILE__, __LINE__, __func__, "%s", big);
  CIS_ERROR(CIS_ERR_IO, "outer: %s", cis_error_message());
}

int main(void) {
  EXPECT(fail_outer() == CIS_ERR_INPUT, "the outer code");
  EXPECT(strcmp(cis_error_message(),
                "in.h5: /options/nroots: --nroots: expected an integer, got 'zero'") == 0,
         "message '%s'", cis_error_message());
  EXPECT(cis_error_code() == CIS_ERR_INPUT && strstr(cis_error_where(), "fail_outer"),
         "code %d, trace '%s'", (int)cis_error_code(), cis_error_where());

  EXPECT(fail_long() == CIS_ERR_IO, "the long message's code");
  const char *m = cis_error_message();
  size_t len = strlen(m), xs = strspn(m + 7, "x");
  EXPECT(strncmp(m, "outer: ", 7) == 0 && len == 1023 && xs == len - 7,
         "long message: %zu characters, %zu x after the prefix: '%.40s...'", len, xs, m);

  cis_error_clear();
  EXPECT(cis_error_code() == CIS_OK && cis_error_message()[0] == '\0', "cleared");
  return cis_test_summary();
}
