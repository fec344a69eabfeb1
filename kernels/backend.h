/* cisolve: the backend's vector operations. solver/ sees only this header and the operator's
 * (kernels/operator.h): where the n-length vectors live (host memory or device memory) and how
 * they are combined is the backend's business; what multiplies them by the matrix is the
 * operator's. Subspace-sized data (projected matrices, Ritz coefficients) always live on the
 * host, as plain arrays.
 *
 * Conventions: a "vector block" is n x k doubles, column-major, leading dimension n, allocated
 * with ops->alloc. Pointers into a block (block + j*n) are valid arguments. Host-side small
 * matrices are column-major too. Every op returns cis_err; errors name the library status.
 *
 * Implementations: kernels/backend_cpu.c (OpenBLAS + OpenMP, always built) and
 * kernels/backend_cuda.cu (cuBLAS, built with CISOLVE_ENABLE_CUDA; without it
 * cis_backend_create_cuda returns CIS_ERR_NOT_COMPILED). Both give the same energies to 1e-10.
 */
#ifndef CIS_BACKEND_H
#define CIS_BACKEND_H

#include <stdint.h>
#include <stdio.h>

#include "base/error.h"

typedef struct cis_backend cis_backend;

typedef struct {
  cis_err (*alloc)(cis_backend *be, int64_t count, double **p); /* zero-filled */
  void (*free)(cis_backend *be, double **p);                     /* leaves *p == NULL */
  cis_err (*to_host)(cis_backend *be, double *host, const double *src, int64_t count);
  cis_err (*from_host)(cis_backend *be, double *dst, const double *host, int64_t count);
  cis_err (*copy)(cis_backend *be, double *dst, const double *src, int64_t count);

  /* G (host, m x k, ld m) = A^T B; A is n x m and B is n x k on the backend (ld n). */
  cis_err (*gemm_tn)(cis_backend *be, int m, int k, const double *A, const double *B,
                     double *G);
  /* C = beta C + A S; A is n x m on the backend, S is m x k on the host (ld m),
   * C is n x k on the backend. C must not overlap A. */
  cis_err (*gemm_nn)(cis_backend *be, int m, int k, const double *A, const double *S,
                     double beta, double *C);
  cis_err (*axpy)(cis_backend *be, int64_t count, double alpha, const double *x, double *y);
  cis_err (*scal)(cis_backend *be, int64_t count, double alpha, double *x);
  cis_err (*dot)(cis_backend *be, int64_t count, const double *x, const double *y,
                 double *out);
  /* t_i = r_i / (d_i - shift), with |d_i - shift| clamped from below by `floor` (sign kept). */
  cis_err (*precond)(cis_backend *be, const double *d, double shift, double floor,
                     const double *r, double *t);
  cis_err (*sync)(cis_backend *be);
  void (*destroy)(cis_backend *be);
} cis_backend_ops;

struct cis_backend {
  const cis_backend_ops *ops;
  int64_t n;        /* vector length: the rows this backend holds */
  /* The whole vectors' length and the first of this backend's rows in them: n_global == n and
   * row0 == 0, except on a part (cis_backend_part), which holds rows [row0, row0 + n). */
  int64_t n_global, row0;
  cis_backend *owner; /* a part's: the backend whose device, streams and library handles it
                         shares; NULL otherwise */
  int is_device;    /* vectors live in device memory */
  char desc[256];   /* e.g. "CPU (OpenBLAS, 2 threads)" or "GPU 0: NVIDIA H100 ..." */
  void *impl;
  /* Cumulative time of the block operations gemm_tn and gemm_nn (seconds), filled by the
   * implementation; the products' time is the operator's (kernels/operator.h). */
  double t_ortho;
};

cis_err cis_backend_create_cpu(int64_t n, int nthreads, cis_backend **out);
/* Rows [row0, row0 + n) of `owner`'s vectors, the part of them that this rank of a run holds
 * (kernels/comm.h; docs/parallel.md): the same device, stream and handles as owner's, so its
 * blocks and owner's mix in one order, with vectors of n rows. Its gemm_tn and dot are summed
 * over the ranks (each rank's part of the rows: the product of the whole vectors on every rank);
 * every other operation is owner's on the part's rows. Every rank calls these two in the same
 * order. Destroying the part leaves owner; owner must outlive it. */
cis_err cis_backend_part(cis_backend *owner, int64_t row0, int64_t n, cis_backend **out);
/* Whether be holds part of the rows of vectors split over ranks. */
int cis_backend_is_part(const cis_backend *be);
/* The whole k vectors (n_global x k, host, allocated here, on every rank) from each rank's rows
 * `mine` (be->n x k, host): a copy without parts. Collective. */
cis_err cis_backend_whole(const cis_backend *be, const double *mine, int k, double **whole);
/* be's rows of k whole host vectors (n_global x k) into mine (be->n x k). */
void cis_backend_take_part(const cis_backend *be, const double *whole, int k, double *mine);
/* v[0..count) (host) summed over the ranks when be is a part; nothing otherwise. For the
 * solver's host sums over rows (a block of the Reference region). */
cis_err cis_backend_sum(const cis_backend *be, double *v, int64_t count);
/* First thing in a process that will call BLAS or LAPACK: under an address-space limit
 * (cis_host_mem.address_limit: ulimit -v or -d, strict overcommit), OpenBLAS takes the work
 * buffers of all its threads now, and the OpenMP threads start, so that what the budget sees
 * left (cis_host_mem_available) is left indeed, and no later call can hang in OpenBLAS's
 * allocator, which retries forever (kernels/blas_limits.c). When OpenBLAS's threads' buffers
 * would take more than a quarter of the limit and the user did not set OPENBLAS_NUM_THREADS,
 * the program starts again (execv of /proc/self/exe with argv) with OPENBLAS_NUM_THREADS set
 * to what fits. When the limit is too tight even so it prints why and exits with code 4 at
 * once (exit handlers would wait for OpenBLAS's stuck threads). Without such a limit it does
 * nothing. */
cis_err cis_blas_prepare(char **argv);
/* OpenBLAS's threads at most n (never raised): its pool, the node's cores by default, would
 * oversubscribe the cores that the ranks of a node share out (docs/parallel.md). For the program,
 * whose process this is; the library leaves its caller's BLAS alone. */
void cis_blas_cap_threads(int n);
/* device < 0: first usable device. */
cis_err cis_backend_create_cuda(int64_t n, int device, cis_backend **out);
/* Whether be is a backend of cis_backend_create_cuda (0 without CUDA), whose device memory
 * CUDA code outside the backend may use on its stream (kernels/backend_cuda.h). */
int cis_backend_is_cuda(const cis_backend *be);
/* Number of usable CUDA devices (0 when CUDA is not compiled in or none works). */
int cis_backend_cuda_device_count(void);
/* The memory of CUDA device `device` (< 0: device 0) in bytes, from its properties (no context
 * is started for it); 0 when there is no such device. */
int64_t cis_backend_cuda_device_memory(int device);
/* CUDA device `device` (< 0: device 0) as its properties describe it, read without starting a
 * context (a plan, --dry-run): CIS_ERR_RESOURCE naming why when there is no such device,
 * CIS_ERR_NOT_COMPILED without CUDA. */
typedef struct {
  char name[256];
  int64_t memory; /* bytes */
  int64_t l2;     /* L2 cache, bytes */
  int major, minor;
} cis_gpu_props;
cis_err cis_backend_cuda_props(int device, cis_gpu_props *out);
/* Start the CUDA context of `device` (< 0: device 0) on a helper thread, so that it overlaps
 * the host's work until cis_backend_create_cuda (starting a context is a visible part of a short
 * run), and load the solver's cuBLAS kernels there once a process. cis_backend_cuda_prewarm_wait
 * waits for the context and must come before cis_backend_create_cuda;
 * cis_backend_cuda_prewarm_join waits for the thread and must come before exit. Failures are
 * left to cis_backend_create_cuda to find and report. No-ops without CUDA. */
void cis_backend_cuda_prewarm(int device);
void cis_backend_cuda_prewarm_wait(void);
void cis_backend_cuda_prewarm_join(void);
void cis_backend_destroy(cis_backend **be);

#endif
