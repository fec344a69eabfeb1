/* cisolve: an operator whose rows are split over the ranks of a run (kernels/operator.h,
 * kernels/comm.h), on vectors split by the same rows: each product gathers the vectors' rows
 * from their owners into whole vectors (on the host by MPI, between GPUs by NCCL, or, where
 * NCCL is not there, through the host: a device backend copies its rows down and the whole
 * block back up), and each rank's operator multiplies its own rows of them. */
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "kernels/comm.h"
#include "kernels/operator.h"

typedef struct {
  cis_operator *local; /* owned: multiplies this rank's rows of whole vectors, on `whole` */
  cis_backend *whole;  /* the local operator's backend (borrowed): whole vectors */
  cis_backend *part;   /* owned: this rank's rows of them, the operator's (the solver's) backend */
  int64_t *bounds;     /* ranks + 1 */
  int64_t nnz_local, nnz_total;
  cis_nccl *nccl;      /* device backends: between the GPUs, when built with NCCL */
  char nccl_why[160];  /* why not, when not */
  double *host;        /* device backends without NCCL: n x k staging */
  int64_t host_cap;
  double *X, *Y;       /* on `whole`: n x cap, the gathered vectors and their products */
  int64_t cap;
  double t_gather;
  double t_connect;    /* NCCL: the first gather, made at creation (connections are set up) */
} dist_impl;

/* Every rank's rows of the k whole vectors B (n x k on `whole`, this rank's rows in place) from
 * their owners, so that every rank holds all of B. */
static cis_err gather(dist_impl *d, double *B, int k) {
  cis_backend *be = d->whole;
  int64_t n = be->n, r0 = d->bounds[cis_comm_rank()], r1 = d->bounds[cis_comm_rank() + 1];
  if (!be->is_device) return cis_comm_gather_rows(B, n, k, d->bounds);
  if (d->nccl) {
    CIS_CALL(cis_nccl_gather_rows(d->nccl, B, n, k, d->bounds));
    return be->ops->sync(be); /* the gather's time, not the next operation's */
  }
  if (d->host_cap < n * k) {
    cis_free(&d->host);
    CIS_CALL(cis_malloc(&d->host, (size_t)(n * k), sizeof(double), "gathered vectors"));
    d->host_cap = n * k;
  }
  for (int j = 0; j < k; j++)
    CIS_CALL(be->ops->to_host(be, d->host + (int64_t)j * n + r0, B + (int64_t)j * n + r0,
                              r1 - r0));
  CIS_CALL(cis_comm_gather_rows(d->host, n, k, d->bounds));
  return be->ops->from_host(be, B, d->host, n * k);
}

/* Y = H X on this rank's rows: X's rows gathered from every rank into whole vectors, which the
 * local operator multiplies, CIS_DIST_CHUNK at a time; its rows of the products are Y. */
static cis_err dist_apply(cis_operator *op, int k, const double *X, double *Y) {
  dist_impl *d = op->impl;
  cis_backend *w = d->whole;
  int64_t n = w->n, nl = op->n, r0 = d->part->row0;
  int64_t want = CIS_MIN((int64_t)k, (int64_t)CIS_DIST_CHUNK);
  if (d->cap < want) {
    w->ops->free(w, &d->X);
    w->ops->free(w, &d->Y);
    d->cap = 0;
    CIS_CALL(w->ops->alloc(w, n * want, &d->X));
    CIS_CALL(w->ops->alloc(w, n * want, &d->Y));
    d->cap = want;
  }
  for (int j0 = 0; j0 < k; j0 += CIS_DIST_CHUNK) {
    int c = CIS_MIN(k - j0, CIS_DIST_CHUNK);
    double t0 = cis_wtime();
    for (int j = 0; j < c && nl > 0; j++)
      CIS_CALL(w->ops->copy(w, d->X + (int64_t)j * n + r0, X + (int64_t)(j0 + j) * nl, nl));
    CIS_CALL(gather(d, d->X, c));
    d->t_gather += cis_wtime() - t0;
    CIS_CALL(cis_operator_apply(d->local, c, d->X, d->Y));
    for (int j = 0; j < c && nl > 0; j++)
      CIS_CALL(w->ops->copy(w, Y + (int64_t)(j0 + j) * nl, d->Y + (int64_t)j * n + r0, nl));
  }
  return CIS_OK;
}

static void dist_report(const cis_operator *op, FILE *out) {
  const dist_impl *d = op->impl;
  int P = cis_comm_size();
  fprintf(out, "ranks            %d, rows of H and of the solver's vectors split by nonzeros; "
          "rank 0: rows [%lld, %lld), %lld of %lld nonzeros (%.1f%%); a product gathers its "
          "vectors whole, %d at a time\n", P, (long long)d->bounds[0], (long long)d->bounds[1],
          (long long)d->nnz_local, (long long)d->nnz_total,
          d->nnz_total > 0 ? 100.0 * (double)d->nnz_local / (double)d->nnz_total : 0.0,
          CIS_DIST_CHUNK);
  cis_operator_report(d->local, out);
  char how[200];
  if (!op->be->is_device)
    snprintf(how, sizeof how, "MPI");
  else if (d->nccl)
    snprintf(how, sizeof how, "NCCL between the GPUs; %.3f s to connect, before the products",
             d->t_connect);
  else
    snprintf(how, sizeof how, "through the host: %s", d->nccl_why);
  char per[32];
  fprintf(out, "gather           %.3f s of the products' %.3f s: each vector's rows from their "
          "owners, %s a vector to each rank (%s)\n", d->t_gather, op->t_matvec,
          cis_format_bytes(8.0 * (double)(op->be->n_global - op->n), per, sizeof per), how);
}

static void dist_destroy(cis_operator *op) {
  dist_impl *d = op->impl;
  if (!d) return;
  if (d->whole) {
    d->whole->ops->free(d->whole, &d->X);
    d->whole->ops->free(d->whole, &d->Y);
  }
  cis_operator_destroy(&d->local);
  cis_backend_destroy(&d->part);
  cis_nccl_destroy(&d->nccl);
  cis_free(&d->bounds);
  cis_free(&d->host);
  cis_free(&op->impl);
}

static const cis_operator_ops dist_ops = {dist_apply, dist_report, dist_destroy};

cis_err cis_dist_op_create(cis_operator **local, const int64_t *bounds, int64_t nnz_local,
                           cis_nccl **started, cis_operator **out) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  dist_impl *d = NULL;
  int P = cis_comm_size();
  *out = NULL;
  cis_operator *l = *local;
  if (!(bounds[0] == 0 && bounds[P] == l->n))
    CIS_FAIL(CIS_ERR_INTERNAL, "rows split as [%lld, %lld) for %lld rows", (long long)bounds[0],
             (long long)bounds[P], (long long)l->n);
  CIS_TRY(cis_calloc(&d, 1, sizeof *d, "distributed operator"));
  CIS_TRY(cis_malloc(&d->bounds, (size_t)P + 1, sizeof *d->bounds, "rows split"));
  memcpy(d->bounds, bounds, ((size_t)P + 1) * sizeof *bounds);
  d->nnz_local = d->nnz_total = nnz_local;
  CIS_TRY(cis_comm_sum_i64(&d->nnz_total, 1));
  /* every rank on a GPU, or every rank on the CPU: the gathers differ */
  if (cis_comm_or(l->be->is_device ? 1 : 2) == 3)
    CIS_FAIL(CIS_ERR_RESOURCE, "some ranks run on a GPU and others on the CPU (--device auto "
             "found no usable GPU on some): give every rank a GPU, or run --device cpu");
  if (started) { /* ours: used between GPUs, else ended */
    d->nccl = *started;
    *started = NULL;
    if (!l->be->is_device) cis_nccl_destroy(&d->nccl);
  }
  if (l->be->is_device) { /* NCCL where every rank has it, else through the host */
    cis_err e = cis_nccl_create(l->be, &d->nccl);
    if (e != CIS_OK) {
      snprintf(d->nccl_why, sizeof d->nccl_why, "%s", cis_error_message());
      cis_error_clear();
    }
    if (cis_comm_or(e != CIS_OK)) cis_nccl_destroy(&d->nccl);
    if (d->nccl) { /* NCCL connects on its first call: that call is made here, not in a product */
      double t0 = cis_wtime(), *tmp = NULL;
      CIS_TRY(l->be->ops->alloc(l->be, l->n, &tmp));
      e = cis_nccl_gather_rows(d->nccl, tmp, l->n, 1, d->bounds);
      if (e == CIS_OK) e = l->be->ops->sync(l->be);
      l->be->ops->free(l->be, &tmp);
      CIS_TRY(e);
      d->t_connect = cis_wtime() - t0;
    }
  }
  int me = cis_comm_rank();
  CIS_TRY(cis_backend_part(l->be, bounds[me], bounds[me + 1] - bounds[me], &d->part));
  cis_operator_info info = {d->part->n, l->diag, l->nref, l->ref_block};
  CIS_TRY(cis_operator_new(&dist_ops, d->part, &info, out));
  if (l->diag_dev) (*out)->diag_dev = l->diag_dev + bounds[me];
  d->whole = l->be;
  d->local = l;
  *local = NULL;
  (*out)->impl = d;
  d = NULL;
cleanup:
  if (d) {
    cis_backend_destroy(&d->part);
    cis_nccl_destroy(&d->nccl);
    cis_free(&d->bounds);
    cis_free(&d);
  }
  return err;
}
