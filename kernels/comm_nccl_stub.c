/* cisolve: without NCCL (a build without CUDA, MPI or NCCL), GPU ranks gather through the host
 * (kernels/comm.h). */
#include "kernels/comm.h"

cis_err cis_nccl_start(int device, cis_nccl **out) {
  (void)device;
  *out = NULL;
  CIS_ERROR(CIS_ERR_NOT_COMPILED, "built without NCCL");
}
cis_err cis_nccl_create(cis_backend *be, cis_nccl **out) {
  (void)be;
  *out = NULL;
  CIS_ERROR(CIS_ERR_NOT_COMPILED, "built without NCCL");
}
cis_err cis_nccl_gather_rows(cis_nccl *c, double *Y, int64_t n, int k, const int64_t *bounds) {
  (void)c;
  (void)Y;
  (void)n;
  (void)k;
  (void)bounds;
  CIS_ERROR(CIS_ERR_NOT_COMPILED, "built without NCCL");
}
void cis_nccl_destroy(cis_nccl **c) { (void)c; }
