/* cisolve: the run's plan. What the Hamiltonian will hold and where (the host's cache, a GPU:
 * resident, streamed, regenerated), the host and GPU memory that takes, and what one product
 * will cost, decided before anything is built by the rules the run itself applies: the driver
 * takes its decisions (cis_plan_decide: the host cache, whether a GPU takes every block, the
 * build's pool, the census, the solver's vectors) from the rules below, one function each, and
 * executes them; the builder and the upload apply those the plan calls (cis_hmat_plan_ci /
 * _csr, hamiltonian/hmat.h; cis_place_plan_make, spmv/hyb_place.h). Every run's report prints
 * the decisions, and --dry-run the whole plan, by the same functions (app/report.c).
 *
 * A plan is plain data: nothing to free. */
#ifndef CIS_PLAN_H
#define CIS_PLAN_H

#include <stdint.h>

#include "app/options.h"
#include "hamiltonian/hmat.h"
#include "kernels/backend.h"
#include "spmv/hyb_place.h"

/* ---- the rules, one function each -------------------------------------------------------
 * `ci`: the matrix is built from integrals (else it is an explicit matrix, whose blocks are
 * all cached on the host and whose upload takes its own census). */

/* Whether the run will most likely use a GPU backend: --device gpu, or auto with a device
 * present. */
int cis_plan_gpu_expected(const cis_options *o);
/* The n-length vectors of the solver (solver/eigs.h cis_eig_vectors, with --nroots and
 * --max-subspace): on the host, as the default budget counts them on the CPU (those the solver
 * holds and the host copies); on a device backend, the room it keeps for them when it places
 * the matrix. */
int64_t cis_plan_host_vectors(const cis_options *o);
int64_t cis_plan_device_vectors(const cis_options *o);
/* A rank of several (docs/parallel.md) holds its nloc rows of the solver's `vectors` backend
 * vectors, and while it multiplies, whole vectors gathered for the product and their products
 * (2 x CIS_DIST_CHUNK at most, 2 x (2K + 2) with K roots): in whole vectors of n, rounded up. */
int64_t cis_plan_rank_vectors(const cis_options *o, int64_t vectors, int64_t nloc, int64_t n);
/* The solver's vectors the host holds: on the CPU backend, all of the above; on a GPU, where
 * they live on the device, the host's copies only. */
int64_t cis_plan_held_vectors(const cis_options *o, int gpu);
/* Once n is known and before the matrix is built: the vectors the host will hold (above, 8n
 * bytes each) must fit in the memory this process may still take (cis_host_mem_probe: free
 * memory, cgroup limits, ulimit -v / -d; taken with the space or the explicit matrix already
 * stored, so that they are counted out of it), else CIS_ERR_NOMEM naming them, their bytes,
 * what is available and what to lower -- rather than an allocation that fails, or a process
 * killed for memory, after the whole matrix was built. Nothing is refused where no bound is
 * known. `gpu`: a GPU run (--dry-run: the plan's device, or --device gpu without one, as the
 * run counts it; the run: cis_plan_decisions.gpu). A GPU that cannot hold its vectors is
 * refused by the upload (spmv/hyb_cuda.h: the room kept for them). */
cis_err cis_plan_check_vectors(const cis_options *o, int64_t n, int ci, int gpu);
/* The default --mem for n determinants: the library's rule with the host vectors above. */
int64_t cis_plan_host_budget(const cis_options *o, int64_t n);
/* The bytes the host caches Expansion blocks in: --mem, or the default above. */
int64_t cis_plan_host_cache(const cis_options *o, int64_t n);
/* What a GPU offers the matrix: its memory less the 5% the backend leaves and the solver's
 * vectors, or --gpu-mem when that is less. */
int64_t cis_plan_gpu_matrix_bytes(const cis_options *o, int64_t n);
/* The bytes within which a GPU takes every Expansion block, so that the host caches none
 * (cis_hmat_opts.cache_none_within); 0: the host caches what its budget allows. */
int64_t cis_plan_cache_none_within(const cis_options *o, int64_t n, int ci, int gpu);
/* The bytes of the pool on the GPU that the build sends its blocks to as it generates them;
 * 0: no pool. */
int64_t cis_plan_pool_bytes(const cis_options *o, int64_t n, int ci, int gpu);
/* Whether the build takes the census of the Expansion rows that a GPU upload codes them by. */
int cis_plan_census(int ci, int gpu);
/* --nroots must not exceed the space. */
cis_err cis_plan_check_nroots(const cis_options *o, int64_t n);

/* ---- the decisions of a run --------------------------------------------------------------
 * Taken once the determinants are counted, before the matrix is built, by the rules above;
 * the driver executes them (the pool, the build's options, the backend's room for vectors)
 * and the report prints them. */
typedef struct {
  int64_t n;
  int ci, gpu;               /* as in the rules above */
  int64_t host_cache;        /* bytes for cached Expansion blocks */
  int host_cache_asked;      /* --mem given */
  int64_t cache_none_within; /* > 0: the GPU takes every block that fits in it: none cached */
  int64_t pool_bytes;        /* > 0: the build sends its blocks to a pool of this size */
  int census;
  int64_t host_vectors, device_vectors;
  int matrix_free;           /* no row stored: every product generates them (cis_plan_matrix_free) */
  int mf_auto;               /* decided by --matrix-free auto: the two numbers below */
  int64_t mf_expected;       /* products the run is expected to take */
  int64_t mf_breakeven;      /* products beyond which storing the rows pays */
  int gpu_build;             /* the stored rows counted and generated on the GPU, none on the
                                host (cis_plan_gpu_build) */
} cis_plan_decisions;

/* space: the determinant space of an integral problem (ci), NULL for an explicit matrix. */
void cis_plan_decide(const cis_options *o, int64_t n, const cis_space *space,
                     cis_plan_decisions *d);
/* Whether the rows are generated in every product instead of stored (d->matrix_free; see
 * plan.c): --matrix-free on or off as asked; auto: on where a GPU will run, its row generator
 * takes the space (hamiltonian/rowgen_cuda.h) and the products expected (d->mf_expected) are
 * fewer than those after which storing pays (d->mf_breakeven). */
void cis_plan_matrix_free(const cis_options *o, const cis_space *space, cis_plan_decisions *d);
/* Whether a stored CI matrix's rows are counted and generated on the GPU, which then stores
 * them, and not on the host (d->gpu_build): in a GPU run, unless --build host, --regen host,
 * --mem (a host cache asked for), --export-matrix (the host writes the rows), a Reference
 * region wider than the GPU keeps in one sliced ELL block (--ref-size above
 * CIS_TILE_AUTO_COLS: the column tiles are packed on the host), or rows the device generator
 * does not make (hamiltonian/rowgen_cuda.h). The build falls back to the host where the GPU
 * cannot. */
void cis_plan_gpu_build(const cis_options *o, const cis_space *space, cis_plan_decisions *d);
/* The build's options that carry the decisions (the pool, a sink, and progress are the
 * caller's to add). */
void cis_plan_hmat_opts(const cis_options *o, const cis_plan_decisions *d, cis_hmat_opts *h);

typedef enum {
  CIS_PLAN_CPU = 0, /* the CPU backend */
  CIS_PLAN_GPU,     /* a GPU backend, on the device in `gpu` */
  CIS_PLAN_NO_GPU   /* --device gpu, and no usable GPU: the run would exit 4 */
} cis_plan_device;

typedef struct {
  const char *input;
  cis_plan_decisions dec;     /* the decisions a run takes */
  char space[96];             /* e.g. "FCI", "CISD (level 2)"; "" for an explicit matrix */
  int has_irrep_dims, irrep;  /* the space's determinants per irrep, and its target irrep */
  double irrep_dim[8];        /* (hamiltonian/space.h cis_space_irrep_dims) */
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
  int64_t product_gpu_gen;    /* Expansion entries the GPU generates in every product */
  double product_regen_seconds; /* 0: nothing regenerated, or no rate */
} cis_plan;

/* The plan of this run: the space built (not the matrix), the rows sampled, the device's
 * properties read (no context started). spin_shift, spin_s2: the --spin penalty. */
cis_err cis_plan_make(const cis_options *o, const cis_problem *p, double spin_shift,
                      double spin_s2, cis_plan *out);

#endif
