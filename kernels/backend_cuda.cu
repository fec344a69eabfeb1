/* cisolve: the CUDA backend. Vectors live in device memory; dense block operations go to
 * cuBLAS, the preconditioner to a small kernel. One cuBLAS handle and one stream, created
 * once; every op is ordered on that stream (an operator's products too:
 * cis_backend_cuda_stream), and ops that hand results to the host synchronise it. */
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

extern "C" {
#include "base/util.h"
}
#include "kernels/backend_cuda.h"
#include "base/cuda_check.cuh"

typedef struct {
  int device;
  cudaStream_t stream;
  cublasHandle_t blas;
  double *small;  /* device copy of subspace-sized matrices */
  int64_t small_cap;
} cuda_impl;

static cuda_impl *impl_of(cis_backend *be) { return (cuda_impl *)be->impl; }

static cis_err cuda_alloc(cis_backend *be, int64_t count, double **p) {
  cuda_impl *c = impl_of(be);
  char buf[32];
  *p = NULL;
  CIS_CHECK(count >= 0, CIS_ERR_INTERNAL, "CUDA backend: allocating %lld doubles",
            (long long)count);
  size_t bytes = (size_t)(count ? count : 1) * sizeof(double);
  cudaError_t e = cudaMalloc((void **)p, bytes);
  if (e != cudaSuccess) {
    *p = NULL;
    CIS_ERROR(cis_cuda_code(e), "cudaMalloc of a vector block (%s) on GPU %d: %s (%s)",
              cis_format_bytes((double)bytes, buf, sizeof buf), c->device,
              cudaGetErrorName(e), cudaGetErrorString(e));
  }
  CIS_CUDA(cudaMemsetAsync(*p, 0, bytes, c->stream));
  return CIS_OK;
}

static void cuda_free(cis_backend *be, double **p) {
  if (!*p) return;
  cudaStreamSynchronize(impl_of(be)->stream);
  cudaFree(*p);
  *p = NULL;
}

static cis_err copy_sync(cis_backend *be, void *dst, const void *src, int64_t count,
                         cudaMemcpyKind kind) {
  cudaStream_t s = impl_of(be)->stream;
  if (count <= 0 || dst == src) return CIS_OK;
  CIS_CUDA(cudaMemcpyAsync(dst, src, (size_t)count * sizeof(double), kind, s));
  if (kind != cudaMemcpyDeviceToDevice) CIS_CUDA(cudaStreamSynchronize(s));
  return CIS_OK;
}

static cis_err cuda_to_host(cis_backend *be, double *host, const double *src, int64_t count) {
  return copy_sync(be, host, src, count, cudaMemcpyDeviceToHost);
}
static cis_err cuda_from_host(cis_backend *be, double *dst, const double *host, int64_t count) {
  return copy_sync(be, dst, host, count, cudaMemcpyHostToDevice);
}
static cis_err cuda_copy(cis_backend *be, double *dst, const double *src, int64_t count) {
  return copy_sync(be, dst, src, count, cudaMemcpyDeviceToDevice);
}

static cis_err small_reserve(cuda_impl *c, int64_t count) {
  if (count <= c->small_cap) return CIS_OK;
  CIS_CUDA(cudaStreamSynchronize(c->stream));
  if (c->small) CIS_CUDA(cudaFree(c->small));
  c->small = NULL;
  c->small_cap = 0;
  CIS_CUDA(cudaMalloc((void **)&c->small, (size_t)count * sizeof(double)));
  c->small_cap = count;
  return CIS_OK;
}

static cis_err cuda_gemm_tn(cis_backend *be, int m, int k, const double *A, const double *B,
                            double *G) {
  cuda_impl *c = impl_of(be);
  if (m <= 0 || k <= 0) return CIS_OK;
  double t0 = cis_wtime(), one = 1.0, zero = 0.0;
  if (be->n == 0) { /* a part of the rows that holds none (cis_backend_part) */
    memset(G, 0, (size_t)m * (size_t)k * sizeof *G);
    return CIS_OK;
  }
  CIS_CALL(small_reserve(c, (int64_t)m * k));
  CIS_CUBLAS(cublasDgemm_64(c->blas, CUBLAS_OP_T, CUBLAS_OP_N, m, k, be->n, &one, A, be->n, B,
                            be->n, &zero, c->small, m));
  CIS_CALL(copy_sync(be, G, c->small, (int64_t)m * k, cudaMemcpyDeviceToHost));
  be->t_ortho += cis_wtime() - t0;
  return CIS_OK;
}

static cis_err cuda_scal(cis_backend *be, int64_t count, double alpha, double *x) {
  cuda_impl *c = impl_of(be);
  if (count <= 0) return CIS_OK;
  /* beta = 0 must clear NaN/Inf, which dscal does not promise. */
  if (alpha == 0.0)
    CIS_CUDA(cudaMemsetAsync(x, 0, (size_t)count * sizeof(double), c->stream));
  else
    CIS_CUBLAS(cublasDscal_64(c->blas, count, &alpha, x, 1));
  return CIS_OK;
}

static cis_err cuda_gemm_nn(cis_backend *be, int m, int k, const double *A, const double *S,
                            double beta, double *C) {
  cuda_impl *c = impl_of(be);
  if (k <= 0 || be->n == 0) return CIS_OK;
  if (m <= 0) return cuda_scal(be, be->n * k, beta, C);
  double t0 = cis_wtime(), one = 1.0;
  CIS_CALL(small_reserve(c, (int64_t)m * k));
  CIS_CALL(copy_sync(be, c->small, S, (int64_t)m * k, cudaMemcpyHostToDevice));
  CIS_CUBLAS(cublasDgemm_64(c->blas, CUBLAS_OP_N, CUBLAS_OP_N, be->n, k, m, &one, A, be->n,
                            c->small, m, &beta, C, be->n));
  be->t_ortho += cis_wtime() - t0;
  return CIS_OK;
}

static cis_err cuda_axpy(cis_backend *be, int64_t count, double alpha, const double *x,
                         double *y) {
  if (count > 0) CIS_CUBLAS(cublasDaxpy_64(impl_of(be)->blas, count, &alpha, x, 1, y, 1));
  return CIS_OK;
}

static cis_err cuda_dot(cis_backend *be, int64_t count, const double *x, const double *y,
                        double *out) {
  *out = 0.0;
  if (count > 0) CIS_CUBLAS(cublasDdot_64(impl_of(be)->blas, count, x, 1, y, 1, out));
  return CIS_OK;
}

__global__ void cis_precond_kernel(int64_t n, const double *__restrict__ d, double shift,
                                   double floor_, const double *__restrict__ r,
                                   double *__restrict__ t) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double den = d[i] - shift;
  if (fabs(den) < floor_) den = den < 0.0 ? -floor_ : floor_;
  t[i] = r[i] / den;
}

static cis_err cuda_precond(cis_backend *be, const double *d, double shift, double floor_,
                            const double *r, double *t) {
  if (be->n == 0) return CIS_OK;
  unsigned g = (unsigned)((be->n + 255) / 256);
  cis_precond_kernel<<<g, 256, 0, impl_of(be)->stream>>>(be->n, d, shift, floor_, r, t);
  CIS_CUDA(cudaGetLastError());
  return CIS_OK;
}

static cis_err cuda_sync(cis_backend *be) {
  CIS_CUDA(cudaStreamSynchronize(impl_of(be)->stream));
  return CIS_OK;
}

static void impl_release(cuda_impl *c) {
  if (!c) return;
  if (c->stream) cudaStreamSynchronize(c->stream);
  if (c->small) cudaFree(c->small);
  c->small = NULL;
  if (c->blas) cublasDestroy(c->blas);
  c->blas = NULL;
  if (c->stream) cudaStreamDestroy(c->stream);
  c->stream = NULL;
}

static void cuda_destroy(cis_backend *be) {
  impl_release(impl_of(be));
  cis_free(&be->impl);
  cis_free(&be);
}

static const cis_backend_ops cuda_ops = {
    cuda_alloc, cuda_free, cuda_to_host, cuda_from_host, cuda_copy,    cuda_gemm_tn,
    cuda_gemm_nn, cuda_axpy, cuda_scal,  cuda_dot,       cuda_precond, cuda_sync,
    cuda_destroy,
};

extern "C" int cis_backend_is_cuda(const cis_backend *be) {
  if (be && be->owner) be = be->owner; /* a part shares its owner's device */
  return be && be->ops == &cuda_ops;
}

extern "C" cudaStream_t cis_backend_cuda_stream(const cis_backend *be) {
  return ((const cuda_impl *)be->impl)->stream;
}

extern "C" int cis_backend_cuda_device_count(void) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

extern "C" int64_t cis_backend_cuda_device_memory(int device) {
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, device < 0 ? 0 : device) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return (int64_t)prop.totalGlobalMem;
}

/* cudaGetDeviceCount failed: say why, and, where CUDA could not even reserve its address space
 * under a limit on it (ulimit -v or -d), which limit and what to do. */
static cis_err device_count_failed(cudaError_t e) {
  (void)cudaGetLastError();
  struct rlimit as, data;
  int limited = (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) ||
                (getrlimit(RLIMIT_DATA, &data) == 0 && data.rlim_cur != RLIM_INFINITY);
  if (e == cudaErrorMemoryAllocation && limited)
    CIS_ERROR(CIS_ERR_RESOURCE, "no usable CUDA device: cudaGetDeviceCount: %s (%s); CUDA "
              "reserves more address space than the process's limit allows (ulimit -v or -d): "
              "raise it, or run with --device cpu", cudaGetErrorName(e), cudaGetErrorString(e));
  CIS_ERROR(CIS_ERR_RESOURCE, "no usable CUDA device: cudaGetDeviceCount: %s (%s)",
            cudaGetErrorName(e), cudaGetErrorString(e));
}

extern "C" cis_err cis_backend_cuda_props(int device, cis_gpu_props *out) {
  int count = 0, dev = device < 0 ? 0 : device;
  cudaDeviceProp prop;
  memset(out, 0, sizeof *out);
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) return device_count_failed(e);
  if (dev >= count)
    CIS_ERROR(CIS_ERR_RESOURCE, "GPU %d asked for, but %d CUDA device%s found", dev, count,
              count == 1 ? "" : "s");
  CIS_CUDA(cudaGetDeviceProperties(&prop, dev));
  snprintf(out->name, sizeof out->name, "%s", prop.name);
  out->memory = (int64_t)prop.totalGlobalMem;
  out->l2 = prop.l2CacheSize;
  out->major = prop.major;
  out->minor = prop.minor;
  return CIS_OK;
}

/* The context start-up on a helper thread (cis_backend_cuda_prewarm): the primary context is
 * shared by every thread of the process, so the main thread's cudaFree(0) in pick_device then
 * finds it started. Then, once a process, the thread runs cuBLAS's routines of the solver on
 * small tall blocks (the shapes of its projections and updates, 1 and 8 vectors) on a stream of
 * its own, so that a first process loads their kernels while it builds and solves rather than
 * in its first iterations; nothing waits for that part but the exit. Signals stay with the main
 * thread. */
static pthread_t g_prewarm;
static int g_prewarm_running = 0, g_blas_warm = 0, g_context_up = 0;
static pthread_mutex_t g_prewarm_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_prewarm_cv = PTHREAD_COND_INITIALIZER;

static void prewarm_blas(void) {
  const int64_t n = (int64_t)1 << 18;
  const double one = 1.0, zero = 0.0;
  cublasHandle_t h = NULL;
  cudaStream_t st = NULL;
  double *a = NULL, *g = NULL, r = 0.0;
  if (cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) != cudaSuccess) return;
  if (cublasCreate(&h) == CUBLAS_STATUS_SUCCESS && cublasSetStream(h, st) == CUBLAS_STATUS_SUCCESS &&
      cudaMallocAsync((void **)&a, (size_t)n * 16 * sizeof *a, st) == cudaSuccess &&
      cudaMallocAsync((void **)&g, 64 * sizeof *g, st) == cudaSuccess &&
      cudaMemsetAsync(a, 0, (size_t)n * 16 * sizeof *a, st) == cudaSuccess &&
      cudaMemsetAsync(g, 0, 64 * sizeof *g, st) == cudaSuccess) {
    for (int k = 1; k <= 8; k += 7) {
      cublasDgemm_64(h, CUBLAS_OP_T, CUBLAS_OP_N, 8, k, n, &one, a, n, a + 8 * n, n, &zero, g, 8);
      cublasDgemm_64(h, CUBLAS_OP_N, CUBLAS_OP_N, n, k, 8, &one, a, n, g, 8, &zero, a + 8 * n, n);
    }
    cublasDdot_64(h, n, a, 1, a + n, 1, &r);
    cublasDaxpy_64(h, n, &one, a, 1, a + n, 1);
    cublasDscal_64(h, n, &one, a, 1);
  }
  if (a) cudaFreeAsync(a, st);
  if (g) cudaFreeAsync(g, st);
  cudaStreamSynchronize(st);
  if (h) cublasDestroy(h);
  cudaStreamDestroy(st);
}

static void *prewarm_main(void *arg) {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, NULL);
  int ok = cudaSetDevice((int)(intptr_t)arg) == cudaSuccess && cudaFree(0) == cudaSuccess;
  pthread_mutex_lock(&g_prewarm_mu);
  g_context_up = 1;
  pthread_cond_broadcast(&g_prewarm_cv);
  pthread_mutex_unlock(&g_prewarm_mu);
  if (ok && !g_blas_warm) {
    g_blas_warm = 1;
    prewarm_blas();
  }
  (void)cudaGetLastError();
  return NULL;
}

extern "C" void cis_backend_cuda_prewarm(int device) {
  if (g_prewarm_running) return;
  g_context_up = 0;
  g_prewarm_running = pthread_create(&g_prewarm, NULL, prewarm_main,
                                     (void *)(intptr_t)(device < 0 ? 0 : device)) == 0;
}

extern "C" void cis_backend_cuda_prewarm_wait(void) {
  if (!g_prewarm_running) return;
  pthread_mutex_lock(&g_prewarm_mu);
  while (!g_context_up) pthread_cond_wait(&g_prewarm_cv, &g_prewarm_mu);
  pthread_mutex_unlock(&g_prewarm_mu);
}

extern "C" void cis_backend_cuda_prewarm_join(void) {
  if (g_prewarm_running) pthread_join(g_prewarm, NULL);
  g_prewarm_running = 0;
}

/* A device is usable when a context starts on it and our kernels have an image for it. */
static cis_err pick_device(int device, cudaDeviceProp *prop, int *out) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) return device_count_failed(e);
  if (count == 0)
    CIS_ERROR(CIS_ERR_RESOURCE, "no usable CUDA device: cudaGetDeviceCount found none");
  int dev = device < 0 ? 0 : device;
  if (dev >= count)
    CIS_ERROR(CIS_ERR_RESOURCE, "GPU %d asked for, but only %d CUDA device%s (0..%d)", dev,
              count, count == 1 ? "" : "s", count - 1);
  CIS_CUDA(cudaSetDevice(dev));
  e = cudaFree(0);
  if (e != cudaSuccess)
    CIS_ERROR(CIS_ERR_RESOURCE, "GPU %d is not usable: starting a context: %s (%s)", dev,
              cudaGetErrorName(e), cudaGetErrorString(e));
  CIS_CUDA(cudaGetDeviceProperties(prop, dev));
  cudaFuncAttributes fa;
  e = cudaFuncGetAttributes(&fa, cis_precond_kernel);
  if (e != cudaSuccess)
    CIS_ERROR(CIS_ERR_RESOURCE,
              "GPU %d (%s, compute capability %d.%d) is not usable: this cisolve has no kernel "
              "for it: %s (rebuild with CMAKE_CUDA_ARCHITECTURES=%d%d)",
              dev, prop->name, prop->major, prop->minor, cudaGetErrorName(e), prop->major,
              prop->minor);
  *out = dev;
  return CIS_OK;
}

static cis_err impl_start(cuda_impl *c, int device, cudaDeviceProp *prop) {
  CIS_CALL(pick_device(device, prop, &c->device));
  CIS_CUDA(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
  CIS_CUBLAS(cublasCreate(&c->blas));
  CIS_CUBLAS(cublasSetStream(c->blas, c->stream));
  CIS_CUBLAS(cublasSetPointerMode(c->blas, CUBLAS_POINTER_MODE_HOST));
  return CIS_OK;
}

extern "C" cis_err cis_backend_create_cuda(int64_t n, int device, cis_backend **out) {
  cis_err err = CIS_OK;
  cis_backend *be = NULL;
  cuda_impl *c = NULL;
  cudaDeviceProp prop;
  *out = NULL;
  CIS_CHECK(n >= 0 && n <= INT32_MAX, CIS_ERR_INTERNAL,
            "CUDA backend: vector length %lld outside 0..2^31-1", (long long)n);
  CIS_CLEANUP_FUNCTION;
  CIS_TRY(cis_calloc(&c, 1, sizeof *c, "CUDA backend state"));
  CIS_TRY(impl_start(c, device, &prop));
  CIS_TRY(cis_calloc(&be, 1, sizeof *be, "CUDA backend"));
  be->ops = &cuda_ops;
  be->n = n;
  be->n_global = n;
  be->is_device = 1;
  be->impl = c;
  snprintf(be->desc, sizeof be->desc, "GPU %d: %s, %.1f GiB, CC %d.%d", c->device, prop.name,
           (double)prop.totalGlobalMem / (1024.0 * 1024.0 * 1024.0), prop.major, prop.minor);
  *out = be;
  c = NULL;
cleanup:
  if (c) {
    impl_release(c);
    cis_free(&c);
  }
  return err;
}
