/* cisolve: rows of device vectors gathered between the GPUs of a run's ranks through NCCL
 * (kernels/comm.h): per vector, each rank's rows padded to the longest rank's count in a staging
 * buffer, one ncclAllGather (in place), and the other ranks' rows copied into the vector, all on
 * the backend's stream. (One ncclBroadcast per owner, in a group, took 32 ms a product where the
 * all-gather takes well under one on 4 H200s: docs/design-notes.md.) */
#include <nccl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

extern "C" {
#include "base/util.h"
#include "kernels/comm.h"
}
#include "kernels/backend_cuda.h"

#define CIS_NCCL(expr)                                                                          \
  do {                                                                                          \
    ncclResult_t r_ = (expr);                                                                   \
    CIS_CHECK(r_ == ncclSuccess, CIS_ERR_RESOURCE, "%s failed: %s", #expr, ncclGetErrorString(r_)); \
  } while (0)

struct cis_nccl {
  ncclComm_t comm;
  cudaStream_t stream;
  double *buf; /* ranks x the longest rank's rows */
  int64_t cap;
  /* the set-up (ncclCommInitRank on `device`), on a helper thread from cis_nccl_start */
  ncclUniqueId id;
  int device;
  pthread_t init;
  int running;            /* the helper thread is to be joined */
  ncclResult_t init_result;
};

/* Whether two ranks share a GPU (the same host and PCI address): NCCL refuses that, and its
 * initialisation may then wait forever, so it is not tried. Collective. */
static cis_err gpu_shared(int *shared) {
  char key[128] = {0}, bus[32] = {0};
  int dev = 0, P = cis_comm_size();
  CIS_CHECK(cudaGetDevice(&dev) == cudaSuccess && cudaDeviceGetPCIBusId(bus, sizeof bus, dev) ==
                cudaSuccess, CIS_ERR_RESOURCE, "cannot read the GPU's PCI address");
  gethostname(key, 90);
  snprintf(key + 96, 32, "%s", bus);
  char *all = NULL;
  CIS_CALL(cis_malloc(&all, (size_t)P, sizeof key, "GPU addresses"));
  cis_err e = cis_comm_allgather(key, (int)sizeof key, all);
  *shared = 0;
  for (int a = 0; e == CIS_OK && a < P; a++)
    for (int b = 0; b < a; b++)
      if (memcmp(all + a * sizeof key, all + b * sizeof key, sizeof key) == 0) *shared = 1;
  cis_free(&all);
  return e;
}

/* The helper thread: the communicator's set-up, which waits for every rank's (signals stay
 * with the main thread). */
static void *init_main(void *arg) {
  cis_nccl *c = (cis_nccl *)arg;
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, NULL);
  c->init_result = cudaSetDevice(c->device) == cudaSuccess
                       ? ncclCommInitRank(&c->comm, cis_comm_size(), c->id, cis_comm_rank())
                       : ncclUnhandledCudaError;
  return NULL;
}

static void init_join(cis_nccl *c) {
  if (c->running) pthread_join(c->init, NULL);
  c->running = 0;
}

extern "C" cis_err cis_nccl_start(int device, cis_nccl **out) {
  *out = NULL;
  int dev = device < 0 ? 0 : device, shared = 0;
  /* every rank on its GPU, or none goes on: the steps below are collective */
  int bad = cudaSetDevice(dev) != cudaSuccess;
  (void)cudaGetLastError();
  CIS_CHECK(!cis_comm_or(bad), CIS_ERR_RESOURCE, "a rank could not select its GPU for NCCL");
  CIS_CALL(gpu_shared(&shared));
  CIS_CHECK(!shared, CIS_ERR_RESOURCE, "two ranks share a GPU, which NCCL does not allow");
  /* rank 0's id, or its failure, reaches every rank: none is left waiting */
  struct {
    ncclUniqueId id;
    int ok;
  } u = {};
  if (cis_comm_rank() == 0) u.ok = ncclGetUniqueId(&u.id) == ncclSuccess;
  CIS_CALL(cis_comm_bcast(&u, (int64_t)sizeof u, 0));
  CIS_CHECK(u.ok, CIS_ERR_RESOURCE, "ncclGetUniqueId failed on rank 0");
  cis_nccl *c = NULL;
  CIS_CALL(cis_calloc(&c, 1, sizeof *c, "NCCL communicator"));
  c->id = u.id;
  c->device = dev;
  c->running = pthread_create(&c->init, NULL, init_main, c) == 0;
  if (!c->running) init_main(c); /* no thread: set up here */
  *out = c;
  return CIS_OK;
}

extern "C" cis_err cis_nccl_create(cis_backend *be, cis_nccl **out) {
  if (!*out) {
    int dev = 0;
    CIS_CHECK(cudaGetDevice(&dev) == cudaSuccess, CIS_ERR_RESOURCE, "no current GPU for NCCL");
    CIS_CALL(cis_nccl_start(dev, out));
  }
  cis_nccl *c = *out;
  init_join(c);
  if (c->init_result != ncclSuccess) {
    ncclResult_t r = c->init_result;
    c->comm = NULL;
    cis_nccl_destroy(out);
    CIS_ERROR(CIS_ERR_RESOURCE, "ncclCommInitRank failed: %s", ncclGetErrorString(r));
  }
  c->stream = cis_backend_cuda_stream(be);
  return CIS_OK;
}

extern "C" cis_err cis_nccl_gather_rows(cis_nccl *c, double *Y, int64_t n, int k,
                                        const int64_t *bounds) {
  int P = cis_comm_size(), me = cis_comm_rank();
  int64_t m = 1;
  for (int r = 0; r < P; r++) m = CIS_MAX(m, bounds[r + 1] - bounds[r]);
  if (c->cap < P * m) {
    if (c->buf) cudaFree(c->buf);
    c->buf = NULL;
    c->cap = 0;
    CIS_CHECK(cudaMalloc((void **)&c->buf, (size_t)(P * m) * sizeof(double)) == cudaSuccess,
              CIS_ERR_NOMEM, "no GPU memory for the gather's staging (%lld doubles)",
              (long long)(P * m));
    c->cap = P * m;
  }
  for (int j = 0; j < k; j++) {
    double *y = Y + (int64_t)j * n;
    int64_t mine = bounds[me + 1] - bounds[me];
    if (mine > 0)
      CIS_CHECK(cudaMemcpyAsync(c->buf + me * m, y + bounds[me], (size_t)mine * sizeof(double),
                                cudaMemcpyDeviceToDevice, c->stream) == cudaSuccess,
                CIS_ERR_RESOURCE, "cudaMemcpyAsync of the gather's rows failed");
    CIS_NCCL(ncclAllGather(c->buf + me * m, c->buf, (size_t)m, ncclDouble, c->comm, c->stream));
    for (int r = 0; r < P; r++) {
      int64_t cnt = bounds[r + 1] - bounds[r];
      if (r != me && cnt > 0)
        CIS_CHECK(cudaMemcpyAsync(y + bounds[r], c->buf + r * m, (size_t)cnt * sizeof(double),
                                  cudaMemcpyDeviceToDevice, c->stream) == cudaSuccess,
                  CIS_ERR_RESOURCE, "cudaMemcpyAsync of the gathered rows failed");
    }
  }
  return CIS_OK;
}

extern "C" void cis_nccl_destroy(cis_nccl **c) {
  if (!c || !*c) return;
  init_join(*c);
  if ((*c)->comm) ncclCommDestroy((*c)->comm);
  if ((*c)->buf) cudaFree((*c)->buf);
  cis_free(c);
}
