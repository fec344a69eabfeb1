/* cisolve: the operator verbs every implementation shares (kernels/operator.h). */
#include <stddef.h>

#include "base/util.h"
#include "kernels/operator.h"

cis_err cis_operator_new(const cis_operator_ops *ops, cis_backend *be,
                         const cis_operator_info *info, cis_operator **out) {
  *out = NULL;
  CIS_CHECK(ops && ops->apply && ops->destroy && be && info, CIS_ERR_INTERNAL,
            "operator: created without its ops, backend or description");
  CIS_CHECK(info->n == be->n, CIS_ERR_INTERNAL,
            "operator of %lld rows on a backend of vectors of length %lld", (long long)info->n,
            (long long)be->n);
  CIS_CHECK(info->nref >= 0 && info->nref <= be->n_global &&
                (info->nref == 0 || info->ref_block) && (be->n_global == 0 || info->diag),
            CIS_ERR_USAGE,
            "operator: Reference block of %lld for %lld rows (block %s, diagonal %s)",
            (long long)info->nref, (long long)be->n_global, info->ref_block ? "given" : "missing",
            info->diag ? "given" : "missing");
  cis_operator *op = NULL;
  CIS_CALL(cis_calloc(&op, 1, sizeof *op, "operator"));
  op->ops = ops;
  op->be = be;
  op->n = info->n;
  op->diag = info->diag;
  op->nref = info->nref;
  op->ref_block = info->ref_block;
  *out = op;
  return CIS_OK;
}

cis_err cis_operator_apply(cis_operator *op, int k, const double *X, double *Y) {
  CIS_CHECK(k >= 1, CIS_ERR_INTERNAL, "operator: a product of %d vectors", k);
  double t0 = cis_wtime();
  CIS_CALL(op->ops->apply(op, k, X, Y));
  op->t_matvec += cis_wtime() - t0;
  op->n_matvec += k;
  return CIS_OK;
}

void cis_operator_report(const cis_operator *op, FILE *out) {
  if (op && op->ops->report) op->ops->report(op, out);
}

void cis_operator_destroy(cis_operator **op) {
  if (!op || !*op) return;
  (*op)->ops->destroy(*op);
  cis_free(op);
}
