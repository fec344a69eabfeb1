/* cisolve benchmarks: the synthetic CI-like matrix of the 2018 hybrid ELL+CSR paper.
 *
 * Row i holds `ref_nnz` entries among the first `ref_cols` columns (the Reference region) and
 * about `exp_nnz` (uniformly 0.9..1.1 times) among the others (the Expansion space), columns
 * spread evenly at random (one per equal bucket, so they are sorted and distinct), values
 * uniform in [-1, 1). Each row has its own seeded generator, so rows are built in parallel and
 * the matrix depends only on the parameters and the seed. Not symmetric: the products do not
 * need it.
 */
#ifndef CIS_BENCH_SYNTH_H
#define CIS_BENCH_SYNTH_H

#include <stdint.h>

#include "base/error.h"
#include "spmv/hyb.h"

typedef struct {
  int64_t n, ref_cols;
  int ref_nnz, exp_nnz;
  uint64_t seed;
} synth_params;

typedef struct {
  int64_t n, nnz;
  int64_t *rowptr; /* n + 1 */
  int32_t *col;
  double *val;
} synth_csr;

/* The whole matrix as CSR (OpenMP over rows). */
cis_err synth_build_csr(const synth_params *p, synth_csr *out);
void synth_csr_free(synth_csr *m);

/* The same matrix as a fully cached hybrid matrix split at ref_cols (OpenMP), with slices of
 * 32 rows and Expansion blocks of about 4 M nonzeros. */
cis_err synth_build_hyb(const synth_csr *m, int64_t boundary, cis_hyb *out);

/* Uniform [-1, 1) values from a seed (OpenMP). */
void synth_fill(double *x, int64_t count, uint64_t seed);

#endif
