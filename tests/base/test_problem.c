/* base/problem.h: the packed integral count, exact while it fits in 64 bits and INT64_MAX past
 * that (norb > 92681), with no overflow on the way (the readers accept NORB up to 100000 and
 * then fail to allocate, exit 4). Exact values from Python's integers:
 *   np = n * (n + 1) // 2; np * (np + 1) // 2 */
#include <stdint.h>

#include "base/problem.h"
#include "tests/tools/expect.h"

int main(void) {
  EXPECT(cis_eri_size(1) == 1 && cis_eri_size(2) == 6 && cis_eri_size(7) == 406,
         "small sizes: %lld %lld %lld", (long long)cis_eri_size(1), (long long)cis_eri_size(2),
         (long long)cis_eri_size(7));
  /* the last norb whose count fits in 64 bits; 92682 gives 9223610870794785156 > 2^63 - 1 */
  EXPECT(cis_eri_size(92681) == 9223212803777019531LL, "norb 92681: %lld",
         (long long)cis_eri_size(92681));
  EXPECT(cis_eri_size(92682) == INT64_MAX, "norb 92682: %lld, expected INT64_MAX",
         (long long)cis_eri_size(92682));
  EXPECT(cis_eri_size(100000) == INT64_MAX, "norb 100000: %lld", (long long)cis_eri_size(100000));
  EXPECT(cis_eri_size(INT32_MAX) == INT64_MAX, "norb 2^31-1: %lld",
         (long long)cis_eri_size(INT32_MAX));
  return cis_test_summary();
}
