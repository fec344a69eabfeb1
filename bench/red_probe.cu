/* cisolve: how fast the GPU adds scattered doubles into a short vector with atomics.
 *
 * A product with half of a symmetric matrix reads each stored entry once and uses it twice:
 * y_i += a_ij x_j as usual, and y_j += a_ij x_i scattered with an atomic add. This program
 * times that scatter alone, M red.add.f64 to random places among N, against a read of the same
 * entries (16-bit index, 8-byte value) with nothing else to do, each after an L2 flush. The
 * defaults are H2O/6-31G CISDT's: 25,761 rows, 2.38 M entries in its upper triangle
 * (docs/design-notes.md).
 *
 * usage: red_probe [M [N]]
 */
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#define CHECK(call)                                                                      \
  do {                                                                                   \
    cudaError_t e_ = (call);                                                             \
    if (e_ != cudaSuccess) {                                                             \
      fprintf(stderr, "red_probe: %s: %s\n", #call, cudaGetErrorString(e_));            \
      exit(1);                                                                           \
    }                                                                                    \
  } while (0)

__global__ void scatter_kernel(const unsigned short *col, const double *val, long long m,
                               double *y) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < m;
       i += (long long)gridDim.x * blockDim.x)
    atomicAdd(y + col[i], val[i]);
}

__global__ void read_kernel(const unsigned short *col, const double *val, long long m,
                            double *y) {
  double s = 0.0;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < m;
       i += (long long)gridDim.x * blockDim.x)
    s += val[i] * col[i];
  if (s == 1.25) y[0] = s; /* keeps the loads */
}

int main(int argc, char **argv) {
  long long m = argc > 1 ? atoll(argv[1]) : 2380000;
  int n = argc > 2 ? atoi(argv[2]) : 25761;
  if (m <= 0 || n <= 0 || n > 65536) {
    fprintf(stderr, "usage: red_probe [M [N]], M > 0 entries, 0 < N <= 65536 places\n");
    return 2;
  }
  std::vector<unsigned short> c((size_t)m);
  std::vector<double> v((size_t)m);
  srand(1);
  for (long long i = 0; i < m; i++) {
    c[(size_t)i] = (unsigned short)(rand() % n);
    v[(size_t)i] = 1.0 / (double)(1 + i % 7);
  }
  const size_t flush_bytes = (size_t)256 << 20;
  unsigned short *dc;
  double *dv, *dy;
  char *flush;
  CHECK(cudaMalloc(&dc, (size_t)m * 2));
  CHECK(cudaMalloc(&dv, (size_t)m * 8));
  CHECK(cudaMalloc(&dy, (size_t)n * 8));
  CHECK(cudaMalloc(&flush, flush_bytes));
  CHECK(cudaMemcpy(dc, c.data(), (size_t)m * 2, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dv, v.data(), (size_t)m * 8, cudaMemcpyHostToDevice));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  int dev = 0, sms = 0;
  cudaDeviceProp prop;
  CHECK(cudaGetDevice(&dev));
  CHECK(cudaGetDeviceProperties(&prop, dev));
  sms = prop.multiProcessorCount;
  printf("device: %s; %lld entries scattered among %d places\n", prop.name, m, n);
  double med[2];
  for (int kind = 0; kind < 2; kind++) {
    std::vector<float> t;
    for (int r = 0; r < 21; r++) {
      CHECK(cudaMemset(flush, r, flush_bytes));
      CHECK(cudaMemset(dy, 0, (size_t)n * 8));
      CHECK(cudaEventRecord(a));
      if (kind == 0)
        scatter_kernel<<<sms * 8, 256>>>(dc, dv, m, dy);
      else
        read_kernel<<<sms * 8, 256>>>(dc, dv, m, dy);
      CHECK(cudaGetLastError());
      CHECK(cudaEventRecord(b));
      CHECK(cudaEventSynchronize(b));
      float ms = 0.f;
      CHECK(cudaEventElapsedTime(&ms, a, b));
      t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    med[kind] = t[10];
  }
  printf("atomic adds: median %.4f ms, %.1f G per second\n", med[0], m / (med[0] * 1e6));
  printf("the same entries read alone: median %.4f ms (scatter / read: %.2fx)\n", med[1],
         med[0] / med[1]);
  return 0;
}
