/* cisolve: the device matrix's state (struct cis_hyb_cuda, one sub-struct per layout or part)
 * and the functions its source files share; private to spmv/hyb_cuda*.cu.
 *
 * Which file owns what:
 *   hyb_cuda.cu         create / destroy / info / setters: the public API, the budget, the order
 *                       in which an upload runs its parts
 *   hyb_cuda_upload.cu  the Reference region (sliced ELL or column tiles), the census and the
 *                       choice of resident blocks, the resident Expansion CSR, plain and coded
 *   hyb_cuda_sell.cu    the whole matrix as SELL-32, built from the hybrid upload
 *   hyb_cuda_pool.cu    the build's pool of Expansion blocks (cis_hyb_cuda_pool_create)
 *   hyb_cuda_stream.cu  Expansion blocks that are not resident: batches sent in every product
 *   hyb_cuda_launch.cu  which kernel a product launches, the timing of the candidates at upload,
 *                       and the products themselves
 * Kernels: spmv/hyb_kernels.cuh (shared) and one header per layout beside it.
 */
#ifndef CIS_HYB_CUDA_PRIVATE_CUH
#define CIS_HYB_CUDA_PRIVATE_CUH

#include <stddef.h>
#include <stdint.h>

extern "C" {
#include "base/util.h"
#include "spmv/census.h"
#include "spmv/valdict.h"
}
#include "base/cuda_check.cuh"
#include "spmv/hyb_cuda.h"
#include "spmv/hyb_kernels.cuh"
#include "spmv/hyb_kernels_sell.cuh"

/* Streamed blocks are generated on OpenMP threads: without OpenMP the pragmas would silently run
 * them one at a time. */
#ifndef _OPENMP
#error "spmv/hyb_cuda*.cu must be compiled with OpenMP (-Xcompiler=-fopenmp)"
#endif

/* The Reference region as one sliced ELL block: slice widths rounded up to even, each row's
 * entries in lane order (tune.lane_order). */
typedef struct {
  int64_t *slice_ptr;
  int32_t *slice_width, *row_len;
  void *col; /* 16- or 32-bit (bits) */
  double *val;
  int bits;
} hyb_cuda_ell;

/* The Reference region in column tiles instead (on != 0; spmv/hyb.h, cis_ell_tile_offsets):
 * ngroups groups of CIS_TILE_ROWS rows, ntiles tiles of CIS_TILE_COLS columns. */
typedef struct {
  int on;
  int64_t ntiles, ngroups;
  int64_t *base;
  uint32_t *off;
  uint16_t *col;
  double *val;
} hyb_cuda_tiles;

/* The resident Expansion CSR over all rows (rows of streamed blocks empty): the entries whose
 * value is not in the dictionary. */
typedef struct {
  int64_t *rowptr;
  void *col; /* 16- or 32-bit (bits) */
  double *val;
  int bits;
} hyb_cuda_csr;

/* Its coded part (table != NULL): entries whose value is in the dictionary `dict` (NULL: none),
 * that of the census, with a 16-bit code for a value. */
typedef struct {
  const cis_vdict *dict;
  int64_t *rowptr;
  void *col; /* as hyb_cuda_csr's */
  uint16_t *code;
  double *table;
} hyb_cuda_coded;

/* The whole matrix as SELL-32 instead (on != 0; spmv/hyb_kernels_sell.cuh, cis_sell_view),
 * built on the device from the hybrid upload, whose arrays are then freed: plain entries, and
 * with a dictionary a second SELL-32 of coded ones (cptr, clen, ...). */
typedef struct {
  int on;
  int64_t *ptr, *cptr;
  int32_t *len, *width, *col, *clen, *cwidth, *ccol;
  double *val;
  uint16_t *ccode;
} hyb_cuda_sell;

/* A streamed batch's buffers: pinned host staging, its device copy, and the two events that
 * say when the staging may be refilled (copied) and the device copy overwritten (consumed). */
typedef struct {
  char *pinned;
  size_t pinned_cap;
  char *dev;
  size_t dev_cap;
  cudaEvent_t copied, consumed;
} stream_slot;

/* Consecutive streamed blocks (ids[first .. first+count)) covering rows [row0, row0+nrows)
 * without a gap: one pinned buffer, one copy, one kernel. */
typedef struct {
  int64_t first, count, row0, nrows;
} stream_batch;

/* Expansion blocks that are not resident, their batches, and one host scratch block per
 * generating thread. */
typedef struct {
  int64_t nblocks, *ids;
  int64_t nbatch;
  stream_batch *batches;
  int nscratch;
  cis_csr_block *scratch;
  const cis_csr_block **src;
  int64_t *pack_off; /* nscratch + 1 entry offsets of a batch's blocks */
  stream_slot slots[CIS_NSLOTS];
} hyb_cuda_stream;

/* How the kernels are launched: chosen at upload, some timed there (hyb_cuda_launch.cu). */
typedef struct {
  int subwarp;      /* lanes per row */
  int lane_order;   /* lanes the resident entries are ordered for (0: row order) */
  int coded_block;  /* threads per block of the kernel with a coded part */
  int plain_launch; /* build of the plain single-vector kernel (OCC), or SELL-32's launch */
  int probe_warps;  /* nonzero: the next launch stores its warps per multiprocessor here */
  int group;        /* vectors per pass of the multi-vector kernel */
  int pdl;          /* the kernels were compiled for sm_90 or later: products of several vectors
                       start as programmatic dependents of the interleave (launch_kernel) */
} hyb_cuda_tuning;

/* Events of timed products: 0, 1 around the resident kernel, then 4 per batch (copy, kernel). */
typedef struct {
  int on;
  cudaEvent_t *ev;
  int64_t nev;
  cis_hyb_cuda_times times;
} hyb_cuda_timer;

struct cis_hyb_cuda {
  const cis_hyb *h;
  cudaStream_t stream, copy_stream;
  int64_t n;
  hyb_cuda_ell ell;
  hyb_cuda_tiles tiles;
  hyb_cuda_csr csr;
  hyb_cuda_coded coded;
  hyb_cuda_sell sell;
  hyb_cuda_stream st;
  hyb_cuda_tuning tune;
  hyb_cuda_timer timer;
  /* the census of the blocks that may be resident (hyb_cuda_upload.cu, may_reside): the one
   * the host took while it built the matrix (h->census), or the upload's own */
  const cis_census *cen;
  cis_census own;
  double *xt; /* n x CIS_HYB_CUDA_MAX_K interleaved vectors */
  cis_regen_dev *gen; /* generates the streamed blocks on the device (hyb_cuda_stream.cu), or NULL */
  cis_hyb_cuda_info info;
};

/* ---- hyb_cuda.cu ---- */
cis_err hyb_dev_alloc(void *pp, size_t bytes, const char *what);
void hyb_dev_free(void *pp);
/* The current device's L2 cache, in bytes. */
cis_err hyb_device_l2(int64_t *bytes);

/* ---- hyb_cuda_upload.cu ---- */
/* The Reference region in column tiles (the flags, its shape); ELL and Expansion column bits;
 * device bytes of the sliced ELL with `bits`-bit columns and of the tiles. */
int hyb_tiled_layout(const cis_hyb *h, int flags);
int hyb_index_bits(const cis_hyb *h, int tiled);
int hyb_csr_bits(const cis_hyb *h, int tiled);
int64_t hyb_sliced_bytes(const cis_ell *e, int bits);
int64_t hyb_tiled_bytes(const cis_hyb *h);
/* Whether values are to be coded where the blocks that may be resident take `bytes` plain. */
cis_err hyb_codes_pay(int flags, int64_t bytes, int *coded);
cis_err hyb_census_setup(cis_hyb_cuda *d, int flags);
cis_err hyb_choose_resident(cis_hyb_cuda *d, int64_t avail, int flags, char *resident);
cis_err hyb_ell_create(cis_hyb_cuda *d, const cis_ell *e, int bits);
cis_err hyb_tiles_create(cis_hyb_cuda *d, const cis_ell *e);
typedef struct cis_hyb_cuda_pool cis_hyb_cuda_pool;
cis_err hyb_csr_upload(cis_hyb_cuda *d, const char *resident, cis_hyb_cuda_pool *pool);
cis_err hyb_table_upload(cis_hyb_cuda *d);
/* Frees the sliced ELL and the resident CSR, plain and coded (the value table stays). */
void hyb_hybrid_free(cis_hyb_cuda *d);

/* ---- hyb_cuda_sell.cu ---- */
/* Entries SELL-32 stores, padding included: plain ones and coded ones. */
typedef struct {
  int64_t slots, cslots;
} sell_plan;
int hyb_sell_layout(const cis_hyb_cuda *d, int flags, const char *resident, sell_plan *p);
cis_err hyb_sell_create(cis_hyb_cuda *d, const sell_plan *p);
cis_sell_view hyb_sell_view(const cis_hyb_cuda *d);

/* ---- hyb_cuda_pool.cu ---- */
cis_hyb_cuda_pool *hyb_pool_of(const cis_hyb *h);
int64_t hyb_pool_device_bytes(const cis_hyb_cuda_pool *p);
int hyb_pool_usable(cis_hyb_cuda *d, const cis_hyb_cuda_pool *p, const char *resident);
void hyb_pool_release(cis_hyb_cuda_pool *p);
cis_err hyb_pool_adopt(cis_hyb_cuda *d, cis_hyb_cuda_pool *p);
cis_err hyb_pool_place(cis_hyb_cuda *d, cis_hyb_cuda_pool *p);

/* ---- hyb_cuda_stream.cu ---- */
int64_t hyb_stream_reserve(const cis_hyb *h, int nscratch);
/* After a first choice of resident blocks that leaves some streamed: the matrix's device
 * regenerator made (unless it has none, or the room says no: info.devgen_note), its tables and
 * the streaming room it frees counted in *avail, and the resident blocks chosen again. */
cis_err hyb_devgen_setup(cis_hyb_cuda *d, int flags, int64_t *avail, char *resident);
cis_err hyb_slots_create(cis_hyb_cuda *d);
cis_err hyb_stream_setup(cis_hyb_cuda *d);
cis_err hyb_apply_streamed(cis_hyb_cuda *d, int k, const double *xt, double *Y, int64_t ldy);

/* ---- hyb_cuda_launch.cu ---- */
/* Y (ld ldy) = (resident part) xt, or with `add` Y += add xt (a streamed batch). */
cis_err hyb_launch(cis_hyb_cuda *d, int k, const cis_csr_view<int32_t> *add, const double *xt,
                   double *Y, int64_t ldy);
cis_err hyb_launch_init(cis_hyb_cuda *d);
cis_err hyb_tune_launch(cis_hyb_cuda *d);
cis_err hyb_apply_all(cis_hyb_cuda *d, int k, const double *X, double *Y, int multi);

/* Views of the device arrays as the kernels take them. */
template <typename CE>
static inline cis_csr_view<CE> resident_view(const cis_hyb_cuda *d, const void *col) {
  cis_csr_view<CE> m = {0, d->n, d->csr.rowptr, (const CE *)col, d->csr.val};
  return m;
}

template <typename CI>
static inline cis_ell_view<CI> ell_view(const cis_hyb_cuda *d, const void *col) {
  cis_ell_view<CI> e = {d->n, d->h->ell.slice, d->ell.slice_ptr, d->ell.slice_width,
                        d->ell.row_len, (const CI *)col, d->ell.val};
  return e;
}

template <typename CE>
static inline cis_coded_view<CE> coded_view(const cis_hyb_cuda *d) {
  cis_coded_view<CE> v = {d->coded.rowptr, (const CE *)d->coded.col, d->coded.code,
                          d->coded.table};
  return v;
}

#endif
