/* Random integrals for the space tests: h1e with the orbital index on its diagonal (so that
 * orbital energies ascend) and small random couplings, small random 8-fold packed (pq|rs),
 * from srand(seed). The arrays are the caller's to free (cis_problem_free's fields). */
#ifndef CIS_TEST_RANDOM_INTS_H
#define CIS_TEST_RANDOM_INTS_H

#include <stdlib.h>
#include <string.h>

#include "base/problem.h"

static inline void random_ints(cis_integrals *in, int norb, int na, int nb, unsigned seed) {
  srand(seed);
  memset(in, 0, sizeof *in);
  in->norb = norb;
  in->nalpha = na;
  in->nbeta = nb;
  in->h1e = (double *)calloc((size_t)norb * norb, sizeof(double));
  in->eri = (double *)calloc((size_t)cis_eri_size(norb), sizeof(double));
  for (int p = 0; p < norb; p++)
    for (int q = 0; q <= p; q++)
      in->h1e[p * norb + q] = in->h1e[q * norb + p] = (p == q ? p : 0.1 * rand() / RAND_MAX);
  for (int64_t i = 0; i < cis_eri_size(norb); i++) in->eri[i] = 0.05 * rand() / RAND_MAX;
}

#endif
