/* cisolve: the CUDA backend's entry points when CUDA is built out, so the core always links. */
#include <stddef.h>
#include <string.h>

#include "kernels/backend.h"

cis_err cis_backend_create_cuda(int64_t n, int device, cis_backend **out) {
  (void)n, (void)device;
  *out = NULL;
  CIS_ERROR(CIS_ERR_NOT_COMPILED,
            "this cisolve was built without CUDA (CISOLVE_ENABLE_CUDA=OFF)");
}

int cis_backend_is_cuda(const cis_backend *be) {
  (void)be;
  return 0;
}
int cis_backend_cuda_device_count(void) { return 0; }

int64_t cis_backend_cuda_device_memory(int device) {
  (void)device;
  return 0;
}

cis_err cis_backend_cuda_props(int device, cis_gpu_props *out) {
  (void)device;
  memset(out, 0, sizeof *out);
  CIS_ERROR(CIS_ERR_NOT_COMPILED,
            "this cisolve was built without CUDA (CISOLVE_ENABLE_CUDA=OFF)");
}

void cis_backend_cuda_prewarm(int device) { (void)device; }

void cis_backend_cuda_prewarm_wait(void) {}
void cis_backend_cuda_prewarm_join(void) {}
