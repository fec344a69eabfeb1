/* The test programs' one assertion: EXPECT counts every check and prints each failure with its
 * place and message; cis_test_summary() prints the count and gives the exit status. */
#ifndef CIS_TEST_EXPECT_H
#define CIS_TEST_EXPECT_H

#include <stdio.h>

static int cis_test_checks, cis_test_failures;

#define EXPECT(cond, ...)                                  \
  do {                                                     \
    cis_test_checks++;                                     \
    if (!(cond)) {                                         \
      cis_test_failures++;                                 \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                        \
      fputc('\n', stderr);                                 \
    }                                                      \
  } while (0)

static inline int cis_test_summary(void) {
  printf("%d checks, %d failed\n", cis_test_checks, cis_test_failures);
  return cis_test_failures ? 1 : 0;
}

#endif
