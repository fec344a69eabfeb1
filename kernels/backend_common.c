/* cisolve: what every backend shares. */
#include <stddef.h>

#include "kernels/backend.h"

void cis_backend_destroy(cis_backend **be) {
  if (!be || !*be) return;
  (*be)->ops->destroy(*be);
  *be = NULL;
}
