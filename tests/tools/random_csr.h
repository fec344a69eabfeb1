/* Seeded random matrices for the tests of the sparse layouts (tests/gpu/test_gpu.cu): the rows
 * of make_csr, from the stream of tests/tools/rng.h. */
#ifndef CIS_TEST_RANDOM_CSR_H
#define CIS_TEST_RANDOM_CSR_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/tools/rng.h"

typedef struct {
  int64_t n, *rowptr;
  int32_t *col;
  double *val;
} csr;

static int cmp_i32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* Row i: empty when i % 7 == 3, `dense` entries when i % 29 == 5, else up to 2 avg, columns
 * uniform over 0..n-1; plus up to 2 refavg in columns 0..boundary-1 (a Reference region dense
 * enough for column tiles); sorted, duplicates dropped. `uniform`: every row avg and refavg
 * entries within 10%, none empty or dense. Values uniform in (-1, 1); with `distinct` > 0, four
 * in five of them are one of the magnitudes 1 / (1 + i), i < distinct, with a random sign (as a
 * CI matrix's integrals repeat), so that the device codes them (spmv/valdict.h). */
static void make_csr(int64_t n, int avg, int dense, int distinct, int64_t boundary, int refavg,
                     int uniform, csr *m) {
  int64_t cap = 0;
  for (int64_t i = 0; i < n; i++) cap += (i % 29 == 5 ? dense : 2 * avg + 1) + 2 * refavg + 1;
  m->n = n;
  m->rowptr = (int64_t *)calloc((size_t)n + 1, sizeof(int64_t));
  m->col = (int32_t *)malloc((size_t)cap * sizeof(int32_t) + 8);
  m->val = (double *)malloc((size_t)cap * sizeof(double) + 8);
  if (!m->rowptr || !m->col || !m->val) {
    fprintf(stderr, "test_gpu: out of memory building a %lld-row matrix\n", (long long)n);
    exit(1);
  }
  int64_t q = 0;
  for (int64_t i = 0; i < n; i++) {
    int len = i % 7 == 3 ? 0 : i % 29 == 5 ? dense : (int)(next_u64() % (uint64_t)(2 * avg + 1));
    int nref = i % 7 == 3 || boundary == 0 ? 0 : (int)(next_u64() % (uint64_t)(2 * refavg + 1));
    if (uniform) {
      len = avg - avg / 10 + (int)(next_u64() % (uint64_t)(avg / 5 + 1));
      nref = boundary ? refavg - refavg / 10 + (int)(next_u64() % (uint64_t)(refavg / 5 + 1)) : 0;
    }
    if (len > n) len = (int)n;
    int32_t *c = m->col + q;
    for (int t = 0; t < len; t++) c[t] = (int32_t)(next_u64() % (uint64_t)n);
    for (int t = 0; t < nref; t++) c[len + t] = (int32_t)(next_u64() % (uint64_t)boundary);
    len += nref;
    qsort(c, (size_t)len, sizeof *c, cmp_i32);
    int u = 0;
    for (int t = 0; t < len; t++)
      if (u == 0 || c[t] != c[u - 1]) c[u++] = c[t];
    for (int t = 0; t < u; t++) {
      double v = 2.0 * urand() - 1.0;
      if (distinct && next_u64() % 5 != 0) {
        double mag = 1.0 / (1.0 + (double)(next_u64() % (uint64_t)distinct));
        v = next_u64() % 2 ? mag : -mag;
      }
      m->val[q + t] = v;
    }
    q += u;
    m->rowptr[i + 1] = q;
  }
}

static void csr_free(csr *m) {
  free(m->rowptr);
  free(m->col);
  free(m->val);
}

#endif
