/* The device row generator against the host's, in one run: matrix elements generated (and
 * multiplied) per second by the fused product kernel (hamiltonian/rowgen_cuda.h) over every row
 * of an FCI space, with 4, 8, 16 and 32 lanes a row and k = 1 and 8 vectors, and by the host's
 * threads (cis_rowgen_apply) over a sample of rows; the entries are counted exactly on the
 * device first.
 *
 * usage: rowgen_gpu_bench FCIDUMP [--host-rows N] [--repeats R]
 * Prints one CSV line per measurement (bench/results/rowgen_gpu.csv's columns without the
 * device, commit and date, which bench/rowgen_gpu.sh adds):
 *   input,determinants,entries,where,lanes,k,seconds,elements_per_s
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

extern "C" {
#include "base/util.h"
#include "hamiltonian/rowgen.h"
#include "hamiltonian/rowgen_cuda.h"
#include "hamiltonian/space.h"
#include "io/input.h"
}
#include <cuda_runtime.h>

static void die_on(cis_err e) {
  if (e != CIS_OK) {
    cis_error_print(1);
    exit(1);
  }
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: rowgen_gpu_bench FCIDUMP [--host-rows N] [--repeats R]\n");
    return 2;
  }
  const char *path = argv[1];
  long host_rows = 200000, repeats = 3;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--host-rows")) host_rows = atol(argv[i + 1]);
    if (!strcmp(argv[i], "--repeats")) repeats = atol(argv[i + 1]);
  }
  cis_problem p;
  die_on(cis_input_read(path, &p));
  cis_space_spec fci = {};
  fci.kind = CIS_SPACE_FCI;
  cis_space_opts so = {0, 0, 0};
  cis_space *s = NULL;
  die_on(cis_space_build(&p.ints, &fci, &so, &s));
  cis_rowgen g;
  die_on(cis_rowgen_init(&p.ints, s, &g));
  int64_t n = cis_space_ndet(s);
  cis_rowgen_cuda *d = NULL;
  die_on(cis_rowgen_cuda_create(&g, &d));
  int chosen = cis_rowgen_cuda_lanes(d);

  /* the entries, counted on the device */
  int32_t *dlen = NULL;
  cudaMalloc(&dlen, sizeof(int32_t) * n);
  die_on(cis_rowgen_cuda_count(d, 0, n, 0, dlen, NULL));
  std::vector<int32_t> len(n);
  cudaMemcpy(len.data(), dlen, sizeof(int32_t) * n, cudaMemcpyDeviceToHost);
  cudaFree(dlen);
  double nnz = 0.0;
  for (int64_t r = 0; r < n; r++) nnz += len[r];

  double *x = NULL, *y = NULL;
  cudaMalloc(&x, sizeof(double) * n * 8);
  cudaMalloc(&y, sizeof(double) * n * 8);
  cudaMemset(x, 0, sizeof(double) * n * 8);
  cudaMemset(y, 0, sizeof(double) * n * 8);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  for (int lanes : {4, 8, 16, 32}) {
    if (cis_rowgen_cuda_set_lanes(d, lanes) != CIS_OK) {
      cis_error_clear();
      continue;
    }
    for (int k : {1, 8}) {
      float best = 1e30f;
      for (long rep = 0; rep <= repeats; rep++) { /* the first is a warm-up */
        cudaEventRecord(e0);
        die_on(cis_rowgen_cuda_apply(d, 0, n, 0, k, x, 0, y, n, NULL));
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        float ms = 0.f;
        cudaEventElapsedTime(&ms, e0, e1);
        if (rep > 0 && ms < best) best = ms;
      }
      printf("%s,%lld,%.0f,gpu,%d%s,%d,%.4f,%.3e\n", path, (long long)n, nnz, lanes,
             lanes == chosen ? " (chosen)" : "", k, 1e-3 * best, nnz / (1e-3 * best));
      fflush(stdout);
    }
  }
  cudaError_t ce = cudaGetLastError();
  if (ce != cudaSuccess) {
    fprintf(stderr, "CUDA: %s\n", cudaGetErrorString(ce));
    return 1;
  }

  /* the host's threads on host_rows rows spread evenly, their entries counted the same way */
  int64_t m = host_rows < n ? host_rows : n;
  std::vector<double> hx(n, 0.0), hy(n, 0.0);
  double hnnz = 0.0;
  for (int64_t i = 0; i < m; i++) hnnz += len[i * n / m];
  double t0 = cis_wtime();
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t i = 0; i < m; i++) {
    int64_t r = i * n / m;
    cis_rowgen_apply(&g, r, 1, 1, hx.data(), hy.data(), n);
  }
  double th = cis_wtime() - t0;
  printf("%s,%lld,%.0f,host %d threads,,1,%.4f,%.3e\n", path, (long long)n, hnnz,
         omp_get_max_threads(), th, hnnz / th);
  cudaFree(x);
  cudaFree(y);
  cis_rowgen_cuda_destroy(&d);
  cis_rowgen_free(&g);
  cis_space_destroy(&s);
  cis_problem_free(&p);
  return 0;
}
