/* cisolve: the row-generating operator of a CI Hamiltonian (hamiltonian/hmat_op.h). */
#include "hamiltonian/hmat_op.h"

#include <omp.h>
#include <string.h>

#include "base/util.h"
#include "hamiltonian/hmat_private.h"

#ifndef CISOLVE_HAVE_CUDA
cis_err cis_hmat_rowgen_cuda_op_create(const cis_hmat *h, const cis_rowgen *g, cis_backend *be,
                                       cis_operator **out) {
  (void)h, (void)g, (void)be, (void)out;
  CIS_ERROR(CIS_ERR_NOT_COMPILED, "this cisolve was built without CUDA (CISOLVE_ENABLE_CUDA=OFF)");
}
#endif

typedef struct {
  const cis_rowgen *g; /* borrowed from the hmat */
  int64_t r0, r1;      /* the rows multiplied (a rank's, or all) */
  int nbuf;
  cis_rowbuf *buf;     /* one row's scratch per thread */
} rowgen_op;

/* Scratch for `nt` threads (grown when the team has grown since the last product). */
static cis_err rowgen_buffers(rowgen_op *r, int nt) {
  if (nt <= r->nbuf) return CIS_OK;
  CIS_CALL(cis_realloc(&r->buf, (size_t)nt, sizeof *r->buf, "row scratch"));
  for (; r->nbuf < nt; r->nbuf++) CIS_CALL(cis_rowbuf_init(r->g, &r->buf[r->nbuf]));
  return CIS_OK;
}

static cis_err rowgen_apply(cis_operator *op, int k, const double *X, double *Y) {
  rowgen_op *r = op->impl;
  int64_t n = op->n;
  int nt = omp_get_max_threads();
  CIS_CALL(rowgen_buffers(r, nt));
  /* rows of other ranks (kernels/dist_op.c fills them in): zero */
  for (int j = 0; j < k; j++) {
    memset(Y + (int64_t)j * n, 0, sizeof(double) * (size_t)r->r0);
    memset(Y + (int64_t)j * n + r->r1, 0, sizeof(double) * (size_t)(n - r->r1));
  }
#pragma omp parallel num_threads(nt)
  {
    cis_rowbuf *b = &r->buf[omp_get_thread_num()];
#pragma omp for schedule(dynamic, 64)
    for (int64_t i = r->r0; i < r->r1; i++) {
      int64_t len = cis_rowgen_row(r->g, i, 0, b);
      for (int j = 0; j < k; j++) {
        const double *x = X + (int64_t)j * n;
        double s = 0.0;
        for (int64_t e = 0; e < len; e++) s += b->out[e] * x[b->col[e]];
        Y[i + (int64_t)j * n] = s;
      }
    }
  }
  return CIS_OK;
}

static void rowgen_destroy(cis_operator *op) {
  rowgen_op *r = op->impl;
  if (!r) return;
  for (int t = 0; t < r->nbuf; t++) cis_rowbuf_free(&r->buf[t]);
  cis_free(&r->buf);
  cis_free(&op->impl);
}

static const cis_operator_ops rowgen_ops = {
    .apply = rowgen_apply,
    .report = NULL,
    .destroy = rowgen_destroy,
};

cis_err cis_hmat_rowgen_op_create(const cis_hmat *h, cis_backend *be, cis_operator **out) {
  cis_err err = CIS_OK;
  rowgen_op *r = NULL;
  const hmat_impl *im = (const hmat_impl *)h;
  *out = NULL;
  CIS_CHECK(im->rg, CIS_ERR_USAGE,
            "a matrix-free operator needs a CI Hamiltonian: the rows of an explicit matrix are "
            "stored, not generated");
  if (be->is_device) return cis_hmat_rowgen_cuda_op_create(h, im->rg, be, out);
  CIS_CLEANUP_FUNCTION;
  CIS_TRY(cis_calloc(&r, 1, sizeof *r, "row-generating operator"));
  r->g = im->rg;
  r->r0 = h->matrix_free ? h->mf_begin : 0;
  r->r1 = h->matrix_free ? h->mf_end : h->n;
  CIS_TRY(rowgen_buffers(r, omp_get_max_threads()));
  cis_operator_info info = {h->n, h->hdiag, h->npre, h->hpp};
  CIS_TRY(cis_operator_new(&rowgen_ops, be, &info, out));
  (*out)->impl = r;
  r = NULL;
cleanup:
  if (r) {
    for (int t = 0; t < r->nbuf; t++) cis_rowbuf_free(&r->buf[t]);
    cis_free(&r->buf);
    cis_free(&r);
  }
  return err;
}
