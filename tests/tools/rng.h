/* A seeded xorshift stream for the tests' random data: one per program, g_rng its state (a test
 * may set its own seed, or save and restore the state to draw the same numbers again). */
#ifndef CIS_TEST_RNG_H
#define CIS_TEST_RNG_H

#include <stdint.h>

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint64_t next_u64(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return g_rng;
}
static double urand(void) { return (double)(next_u64() >> 11) * (1.0 / 9007199254740992.0); }

#endif
