/* cisolve: a space's alpha-major lookup on a CUDA device (hamiltonian/space_impl.h
 * cis_space_lookup, for kernels that hold device copies of its arrays). */
#ifndef CIS_SPACE_LOOKUP_CUH
#define CIS_SPACE_LOOKUP_CUH

#include <stdint.h>

/* The determinant (alpha string ia, beta string ib), or -1 when the space lacks it: aptr,
 * amaj_ib, amaj_det are the space's arrays, nb its beta strings (a full alpha row is indexed
 * directly, another is searched). */
__device__ __forceinline__ int64_t cis_dev_space_lookup(const int64_t *aptr,
                                                        const int32_t *amaj_ib,
                                                        const int32_t *amaj_det, int64_t nb,
                                                        int64_t ia, int32_t ib) {
  int64_t lo = aptr[ia], hi = aptr[ia + 1];
  if (hi - lo == nb) return amaj_det[lo + ib];
  hi--;
  while (lo <= hi) {
    int64_t mid = lo + ((hi - lo) >> 1);
    int32_t x = amaj_ib[mid];
    if (x == ib) return amaj_det[mid];
    if (x < ib)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return -1;
}

#endif
