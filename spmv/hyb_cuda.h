/* cisolve: the hybrid ELL + CSR matrix on a CUDA device, and its products (docs/gpu.md).
 *
 * Upload (cis_hyb_cuda_create) copies the resident parts of a host cis_hyb to the device:
 *  - the sliced ELL block of Reference columns, always; its column indices are 16-bit when
 *    boundary <= 65536, else 32-bit; slice widths are rounded up to even so that a row starts
 *    on a 16-byte boundary (values are read as double2);
 *  - the Expansion blocks, concatenated into one CSR (64-bit row pointers over all n rows; rows
 *    of blocks that are not resident have empty ranges), in order while the budget allows: the
 *    host's cached blocks, and those it does not cache regenerated through h->regen (once to
 *    store them, after a census that counted their entries, spmv/census.h: the build's, or the
 *    upload's own, which regenerates them once more), so that what stays on the device need
 *    not fit in host memory; or taken from the build's pool (cis_hyb_cuda_pool_create below),
 *    which the build sent them to as it generated them;
 *    its column indices are 16-bit when n <= 65536 (and the ELL's are not 32-bit), else
 *    32-bit.
 *    When the values repeat (a value dictionary, spmv/valdict.h, would code at least half of a
 *    sample) and the Expansion blocks are larger than twice the device's L2 cache (smaller ones
 *    are read from L2, where the decoding costs more than the bytes it saves), the entries
 *    whose value is in the dictionary form a second, coded CSR: a column and a 16-bit code,
 *    6 bytes instead of 12 (4 instead of 10 with 16-bit columns); the others stay in the
 *    plain CSR. Resident blocks are split on
 *    OpenMP threads into pinned staging and copied from there, a group while the next is split.
 * A matrix of 262144 rows or more whose blocks are all resident is kept whole as SELL-32 instead
 * (docs/gpu.md).
 * Blocks that are not resident (over the budget, or with CIS_HYB_CUDA_NO_CACHE) are streamed in
 * every product, in batches of consecutive blocks: regenerated through h->regen on OpenMP
 * threads (one block per thread; or read from the host cache), packed into a pinned buffer,
 * copied asynchronously and applied by a second kernel, two batches in flight, so that the host
 * generates batch i+1 while batch i is copied and multiplied.
 *
 * Products: Y = H X for k column-major vectors (ld n) in device memory, on `stream`.
 *
 * Ownership: the cis_hyb_cuda owns its device and pinned memory; the host cis_hyb is borrowed
 * and must outlive it when any block is streamed. Errors name the CUDA status (CIS_ERR_RESOURCE,
 * CIS_ERR_NOMEM) or the budget that would suffice (CIS_ERR_NOMEM).
 */
#ifndef CIS_HYB_CUDA_H
#define CIS_HYB_CUDA_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "base/error.h"
#include "spmv/hyb.h"
#include "spmv/hyb_place.h" /* the upload's flags (CIS_HYB_CUDA_*) and placement rules */

typedef struct cis_hyb_cuda cis_hyb_cuda;

/* Builds of the plain single-vector kernel timed at upload (cis_hyb_cuda_info.tune_ms). */
#define CIS_HYB_CUDA_PLAIN_LAUNCHES 3

typedef struct {
  int64_t ell_bytes;       /* device ELL: values, columns, row lengths, slice data */
  int64_t csr_bytes;       /* resident Expansion CSR: values or codes, columns, row pointers,
                              the value dictionary */
  int64_t coded_nnz;       /* resident Expansion entries stored with a 16-bit value code */
  int dict_size;           /* magnitudes in the value dictionary (0: none) */
  double dict_cover;       /* share of the sampled entries it codes (spmv/valdict.h) */
  double dict_seconds;     /* host time to choose it and take the census of the blocks that
                              may be resident (their entries, coded ones, regenerating the
                              blocks the host does not cache) */
  /* Host wall time of the upload (cis_hyb_cuda_create2) and of its parts: the ELL block; the
   * resident Expansion CSR, of which splitting the rows into staging (on OpenMP threads; with
   * the regeneration of the rows the host does not cache) and
   * waiting for the copies of earlier groups; dict_seconds and tune_seconds are parts too. */
  double upload_seconds, ell_seconds, csr_seconds, csr_split_seconds, csr_wait_seconds;
  int64_t work_bytes;      /* multi-vector workspace */
  int64_t resident_blocks, streamed_blocks;
  int64_t regenerated_blocks; /* resident blocks the host does not cache: regenerated at upload */
  int gpu_placed;          /* the matrix was built on the GPU: its rows generated into place */
  int64_t built_blocks;    /* resident blocks taken from the build's pool (cis_hyb_cuda_pool_create):
                              sent to the device as the build generated them, none regenerated */
  int64_t pool_bytes;      /* the pool's device arrays, freed once SELL-32 is filled from them */
  double pool_seconds;     /* the building threads' time splitting blocks into the pool's
                              staging and sending them, summed over the threads */
  char pool_note[200];     /* where the matrix has a pool that the upload did not use: why */
  int index_bits;          /* ELL columns: 16 or 32 bits (16 in column tiles) */
  int tile_cols;           /* the Reference region in column tiles of this many columns, each
                              group of rows multiplying it a tile at a time (0: one sliced ELL
                              block) */
  int csr_bits;            /* resident Expansion columns: 16 or 32 bits */
  int sell;                /* 32: the whole matrix resident as SELL-32, a lane per row, 32-bit
                              columns (docs/gpu.md; ell_bytes is then 0 and csr_bytes counts the
                              whole matrix); 0: the hybrid layout */
  int64_t sell_slots;      /* SELL-32: entries stored, padding included */
  int subwarp;             /* lanes per row in our kernels */
  int group;               /* vectors per pass of the multi-vector kernel: 8, or 4 when the
                              matrix is larger than the L2 cache, unless every block is
                              resident and the 8 columns of X fit the L2 cache with plain values
                              in the untiled hybrid layout, or half of it with plain values in
                              column tiles (cis_hyb_cuda_set_group) */
  int lane_order;          /* lanes the resident entries were ordered for (0: row order) */
  int coded_block;         /* threads per block of the kernel with coded values */
  int plain_launch;        /* build of the plain single-vector kernel, 0..2 (docs/gpu.md); SELL-32:
                              0 a barrier every 32 entries, 1 none */
  int tune_candidates;     /* launches timed at upload: 3 builds of the plain kernel (0: the
                              compiler's registers, 1: 64 warps per multiprocessor, 2: one
                              block's worth of registers), or coded blocks of 1024 and 256, or
                              SELL-32 with a barrier every 32 entries and with none */
  int tune_kept;           /* the one kept: the fastest */
  double tune_ms[CIS_HYB_CUDA_PLAIN_LAUNCHES]; /* the resident product's time with each */
  int tune_warps[CIS_HYB_CUDA_PLAIN_LAUNCHES]; /* resident warps per multiprocessor of each */
  double tune_seconds;     /* host time of that choice */
  int64_t budget;          /* the budget applied (bytes), the default resolved */
  int64_t min_bytes;       /* cis_hyb_cuda_min_bytes: the smallest budget that works */
  int64_t stream_buf_bytes;/* device bytes of the streaming buffers (grow to the largest batch) */
  int64_t streamed_nnz;    /* Expansion entries streamed per product (known after one product) */
  int64_t streamed_bytes;  /* bytes sent per product, row pointers included (likewise) */
  int64_t batches;         /* streamed batches per product */
  /* The blocks that are not resident, generated and multiplied on the device in every product
   * by the matrix's device regenerator (spmv/hyb.h cis_regen_dev) instead of sent from the
   * host: with devgen every one of them is, nothing is copied and the streaming buffers stay
   * empty. */
  int devgen;              /* 1: the device generates the blocks that are not resident */
  int64_t devgen_bytes;    /* its tables on the device */
  int64_t devgen_rows;     /* rows of those blocks */
  int64_t devgen_nnz;      /* their entries, as the census counted them */
  char devgen_note[200];   /* blocks sent from the host though the matrix has a device
                              regenerator: why */
} cis_hyb_cuda_info;

/* Where the time of the products went, summed since the upload. Kernel and transfer times are
 * measured with events (on the device); generation is host wall time spent regenerating and
 * packing streamed blocks, the part not hidden behind the device being the visible cost. */
typedef struct {
  int64_t passes;          /* passes over the matrix (one per group of <= 8 vectors) */
  double t_gen;            /* s, host: regenerating and packing streamed blocks */
  double t_copy;           /* s, device: host-to-device copies of streamed batches */
  double t_kernel;         /* s, device: our product kernels (resident and streamed parts) */
  double t_wall;           /* s, host: the whole products, to the end of the last kernel */
  double t_devgen;         /* s, device: generating and multiplying the streamed blocks there */
  int64_t bytes_copied;    /* total bytes sent host-to-device by the products */
} cis_hyb_cuda_times;

/* The pool of Expansion blocks that a build sends to the device as it generates them: a
 * cis_block_sink (spmv/hyb.h) to give the build (cis_hmat_opts.sink), so that the upload of a
 * matrix the host does not cache generates no block again. Each block is counted for the
 * census and split on its generating thread in one pass (cis_census_split) into plain and
 * coded entries (coded with the census's dictionary where the upload will code values), each
 * row's in its own order, in pinned staging, and copied into device arrays sized from the
 * build's sample, blocks in the order they come. cis_hyb_cuda_create2 of the matrix (hyb.sink
 * is the pool) then, where every block stays resident, fills SELL-32 straight from those arrays,
 * or places their entries in the resident CSR on the device (in lane order), and frees them.
 * `flags` are the upload's: the pool declines the build (begin) for an upload that keeps no
 * Expansion block on the device (CIS_HYB_CUDA_NO_CACHE), or where it
 * and the layout beside it (as large again, a quarter more) would not fit in `device_bytes`
 * (the bytes the GPU offers the matrix). A block that does not fit the arrays or fails is
 * dropped, with the blocks after it; then, or where not every block stays resident, the upload
 * frees the arrays and regenerates the blocks as without a pool (cis_hyb_cuda_info.pool_note
 * says why). device < 0: device 0. Ownership: the pool owns its device arrays until an upload
 * takes them, and its staging; cis_hyb_cuda_pool_destroy frees what is left and sets *s = NULL.
 * It must outlive the build and the upload (hyb.sink borrows it). */
typedef struct cis_hyb_cuda_pool cis_hyb_cuda_pool;
cis_err cis_hyb_cuda_pool_create(int device, int64_t device_bytes, int flags,
                                 cis_block_sink **out);
void cis_hyb_cuda_pool_destroy(cis_block_sink **s);

/* Device bytes the resident ELL block and the workspace need: the smallest usable budget. */
int64_t cis_hyb_cuda_min_bytes(const cis_hyb *h, int flags);
/* Device bytes a budget keeps back for the streaming buffers before caching Expansion blocks
 * (two batches of one block per OpenMP thread), at the current thread count. */
int64_t cis_hyb_cuda_stream_bytes(const cis_hyb *h);

/* budget <= 0: 95% of the device's free memory less `reserve` bytes (room the caller keeps for
 * its vectors); budget > 0: at most that, and never more than the free memory less `reserve`.
 * The budget covers the resident ELL block, the workspace, the cached Expansion CSR and the
 * streaming buffers. */
cis_err cis_hyb_cuda_create2(const cis_hyb *h, int64_t budget, int64_t reserve, int flags,
                             cudaStream_t stream, cis_hyb_cuda **out);
/* cis_hyb_cuda_create2 with reserve 0. */
cis_err cis_hyb_cuda_create(const cis_hyb *h, int64_t budget, int flags, cudaStream_t stream,
                            cis_hyb_cuda **out);
void cis_hyb_cuda_destroy(cis_hyb_cuda **d);
void cis_hyb_cuda_get_info(const cis_hyb_cuda *d, cis_hyb_cuda_info *info);
/* Override the lanes per row (4, 8, 16 or 32) picked at upload (benchmarks). */
cis_err cis_hyb_cuda_set_subwarp(cis_hyb_cuda *d, int lanes);
/* Override the threads per block (a multiple of 32, at most 1024) of the kernel with coded
 * values (benchmarks, tests). */
cis_err cis_hyb_cuda_set_coded_block(cis_hyb_cuda *d, int threads);
/* Build of the plain single-vector kernel (0..CIS_HYB_CUDA_PLAIN_LAUNCHES - 1, see
 * tune_candidates), or for SELL-32 its launch (0: a barrier every 32 entries, 1: none; for
 * every k), in place of the one timed fastest at upload (benchmarks, tests). */
cis_err cis_hyb_cuda_set_plain_launch(cis_hyb_cuda *d, int which);
/* Vectors per pass of the multi-vector kernel, 1..CIS_HYB_CUDA_MAX_K (the upload's choice:
 * cis_hyb_cuda_info.group). */
cis_err cis_hyb_cuda_set_group(cis_hyb_cuda *d, int k);
/* Time every product with events (cis_hyb_cuda_get_times). Each product then waits for its
 * last kernel before returning; off by default (benchmarks time from outside). */
void cis_hyb_cuda_set_timing(cis_hyb_cuda *d, int on);
void cis_hyb_cuda_get_times(const cis_hyb_cuda *d, cis_hyb_cuda_times *t);

/* Y = H X with our kernels: k = 1 uses the single-vector kernel, k > 1 the multi-vector kernel
 * on groups of up to CIS_HYB_CUDA_MAX_K vectors (cis_hyb_cuda_set_group), each group one pass
 * over the matrix. */
/* (CIS_HYB_CUDA_MAX_K: spmv/hyb_place.h) */
cis_err cis_hyb_cuda_apply(cis_hyb_cuda *d, int k, const double *X, double *Y);
/* The multi-vector kernel forced, also for k = 1 (tests and benchmarks). */
cis_err cis_hyb_cuda_apply_multi(cis_hyb_cuda *d, int k, const double *X, double *Y);

#ifdef __cplusplus
}
#endif

#endif
