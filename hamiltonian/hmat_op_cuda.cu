/* cisolve: the matrix-free operator on a CUDA device (hamiltonian/hmat_op.h): every product
 * generates the rows on the GPU with the device row generator (hamiltonian/rowgen_cuda.h). */
#include <stdio.h>

extern "C" {
#include "base/util.h"
#include "hamiltonian/hmat_op.h"
#include "hamiltonian/rowgen_cuda.h"
}
#include "base/cuda_check.cuh"
#include "kernels/backend_cuda.h"

typedef struct {
  cis_rowgen_cuda *gen;
  int64_t r0, r1;     /* the rows multiplied */
  double nnz;         /* their entries, sampled */
  cudaStream_t stream;
  cudaEvent_t ev[2];
  int64_t passes;
  double t_gen;       /* s, device: the generating kernels */
  double create_s;    /* s, host: the tables sent to the GPU */
} gen_op;

static cis_err gen_apply(cis_operator *op, int k, const double *X, double *Y) {
  gen_op *c = (gen_op *)op->impl;
  int64_t n = op->n;
  for (int j = 0; j < k; j += 8) {
    int kc = CIS_MIN(8, k - j);
    double *Yj = Y + (int64_t)j * n;
    CIS_CUDA(cudaMemsetAsync(Yj, 0, sizeof(double) * (size_t)(n * kc), c->stream));
    CIS_CUDA(cudaEventRecord(c->ev[0], c->stream));
    CIS_CALL(cis_rowgen_cuda_apply(c->gen, c->r0, c->r1 - c->r0, 0, kc, X + (int64_t)j * n, n,
                                   Yj, n, (void *)c->stream));
    CIS_CUDA(cudaEventRecord(c->ev[1], c->stream));
    CIS_CUDA(cudaEventSynchronize(c->ev[1]));
    float ms = 0.f;
    CIS_CUDA(cudaEventElapsedTime(&ms, c->ev[0], c->ev[1]));
    c->t_gen += 1e-3 * ms;
    c->passes++;
  }
  return CIS_OK;
}

static void gen_report(const cis_operator *op, FILE *out) {
  const gen_op *c = (const gen_op *)op->impl;
  char b1[32];
  fprintf(out, "gpu matrix-free  no row stored: every product generates rows [%lld, %lld) on the "
               "GPU (about %.3g entries, sampled); row generator tables %s, sent in %.3f s\n",
          (long long)c->r0, (long long)c->r1, c->nnz,
          cis_format_bytes((double)cis_rowgen_cuda_size(c->gen), b1, sizeof b1), c->create_s);
  if (c->passes)
    fprintf(out, "gpu products     %lld passes, generated on the GPU %.3f s (%.2f ms each, about "
                 "%.3g entries a second)\n",
            (long long)c->passes, c->t_gen, 1e3 * c->t_gen / (double)c->passes,
            c->t_gen > 0 ? c->nnz * (double)c->passes / c->t_gen : 0.0);
}

static void gen_destroy(cis_operator *op) {
  gen_op *c = (gen_op *)op->impl;
  if (!c) return;
  if (c->stream) cudaStreamSynchronize(c->stream);
  for (int i = 0; i < 2; i++)
    if (c->ev[i]) cudaEventDestroy(c->ev[i]);
  cis_rowgen_cuda_destroy(&c->gen);
  cis_free(&op->impl);
}

static const cis_operator_ops gen_ops = {gen_apply, gen_report, gen_destroy};

extern "C" cis_err cis_hmat_rowgen_cuda_op_create(const cis_hmat *h, const cis_rowgen *g,
                                                  cis_backend *be, cis_operator **out) {
  cis_err err = CIS_OK;
  gen_op *c = NULL;
  *out = NULL;
  const char *why = cis_rowgen_cuda_why(g);
  CIS_CHECK(!why, CIS_ERR_USAGE, "--matrix-free on the GPU: %s; run with --device cpu, or "
            "without --matrix-free", why);
  CIS_CLEANUP_FUNCTION;
  double t0 = cis_wtime();
  CIS_TRY(cis_calloc(&c, 1, sizeof *c, "matrix-free GPU operator"));
  c->stream = cis_backend_cuda_stream(be);
  c->r0 = h->matrix_free ? h->mf_begin : 0;
  c->r1 = h->matrix_free ? h->mf_end : h->n;
  c->nnz = h->mf_nnz;
  for (int i = 0; i < 2; i++) CIS_CUDA_TRY(cudaEventCreate(&c->ev[i]));
  CIS_TRY(cis_rowgen_cuda_create(g, &c->gen));
  c->create_s = cis_wtime() - t0;
  {
    cis_operator_info info = {h->n, h->hdiag, h->npre, h->hpp};
    CIS_TRY(cis_operator_new(&gen_ops, be, &info, out));
  }
  (*out)->diag_dev = cis_rowgen_cuda_diag(c->gen); /* the same values as h->hdiag */
  (*out)->impl = c;
  c = NULL;
cleanup:
  if (c) {
    for (int i = 0; i < 2; i++)
      if (c->ev[i]) cudaEventDestroy(c->ev[i]);
    cis_rowgen_cuda_destroy(&c->gen);
    cis_free(&c);
  }
  return err;
}
