/* cisolve: the run's plan. What the Hamiltonian will hold and where (the host's cache, a GPU:
 * resident, streamed, regenerated), the host and GPU memory that takes, and what one product
 * will cost, decided before anything is built by the rules the run itself applies: the driver
 * takes its decisions through the functions below, the builder and the upload through those
 * the plan calls (cis_hmat_plan_ci / _csr, hamiltonian/hmat.h; cis_place_plan_make,
 * spmv/hyb_place.h). --dry-run prints it (io/report.c, cis_report_plan).
 *
 * A plan is plain data: nothing to free. */
#ifndef CIS_PLAN_H
#define CIS_PLAN_H

#include <stdint.h>

#include "core/options.h"
#include "hamiltonian/hmat.h"
#include "kernels/backend.h"
#include "spmv/hyb_place.h"

/* Whether the run will most likely use a GPU backend: --device gpu, or auto with a device
 * present. */
int cis_plan_gpu_expected(const cis_options *o);
/* The n-length vectors the solver keeps: on the host, as the default budget counts them
 * (Davidson's basis and products, Ritz vectors, residuals, a checkpoint's copies); on a device
 * backend, the room it keeps for them when it places the matrix. */
int64_t cis_plan_host_vectors(const cis_options *o);
int64_t cis_plan_device_vectors(const cis_options *o);
/* The default --mem for n determinants: the library's rule with the host vectors above. */
int64_t cis_plan_host_budget(const cis_options *o, int64_t n);
/* What a GPU offers the matrix: its memory less the 5% the backend leaves and the solver's
 * vectors, or --gpu-mem when that is less. */
int64_t cis_plan_gpu_matrix_bytes(const cis_options *o, int64_t n);
/* The build's options for n determinants (`gpu`: cis_plan_gpu_expected): the budget, the room
 * a GPU offers, the census. The pool (cis_hmat_opts.sink) is the driver's to add. */
void cis_plan_hmat_opts(const cis_options *o, int64_t n, int gpu, cis_hmat_opts *h);
/* --nroots must not exceed the space. */
cis_err cis_plan_check_nroots(const cis_options *o, int64_t n);

typedef enum {
  CIS_PLAN_CPU = 0, /* the CPU backend */
  CIS_PLAN_GPU,     /* a GPU backend, on the device in `gpu` */
  CIS_PLAN_NO_GPU   /* --device gpu, and no usable GPU: the run would exit 4 */
} cis_plan_device;

typedef struct {
  const char *input;
  char space[96];             /* e.g. "FCI", "CISD (level 2)"; "" for an explicit matrix */
  int threads;
  cis_hmat_plan hm;           /* the matrix and its host cache */
  int mem_asked;              /* --mem given */
  /* host memory: the input as read, the space and the row generator's tables, the solver's
   * vectors (the matrix's parts are in hm), the explicit matrix's permuted copy */
  int64_t input_bytes, space_bytes, vector_bytes, copy_bytes, host_bytes;
  int64_t host_vectors;
  /* the device */
  cis_plan_device device;
  char note[320];             /* why the CPU, or why no GPU */
  cis_gpu_props gpu;          /* CIS_PLAN_GPU: the device, from its properties */
  int64_t gpu_offer;          /* the bytes it offers the matrix */
  int64_t gpu_vectors;        /* n-length vectors kept on it */
  cis_place_plan place;       /* where the matrix goes on it */
  int64_t gpu_bytes;          /* the matrix, the streaming buffers and the vectors on it */
  /* one product (of one vector): the bytes of the matrix read where it lives, the bytes sent
   * from the host, the matrix elements the host regenerates, and that at the sampled rate */
  int64_t product_read, product_sent, product_regen;
  double product_regen_seconds; /* 0: nothing regenerated, or no rate */
} cis_plan;

/* The plan of this run: the space built (not the matrix), the rows sampled, the device's
 * properties read (no context started). spin_shift, spin_s2: the --spin penalty. */
cis_err cis_plan_make(const cis_options *o, const cis_problem *p, double spin_shift,
                      double spin_s2, cis_plan *out);

#endif
