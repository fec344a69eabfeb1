/* cisolve: where a hybrid matrix goes on a GPU, as functions of its shape.
 *
 * The rules by which the upload (spmv/hyb_cuda*.cu) places a built matrix: the Reference region
 * as one sliced ELL block or in column tiles, 16- or 32-bit columns, coded values or plain, the
 * device bytes of each part, the room kept for streaming, which Expansion blocks stay resident,
 * whether the build's pool can take the blocks. They take numbers, not a matrix, so that a plan
 * (cis_place_plan_make; --dry-run) applies the same rules to a matrix it has only estimated, on
 * a host without CUDA too. Plain C: the upload's flags live here for that reason.
 */
#ifndef CIS_HYB_PLACE_H
#define CIS_HYB_PLACE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The upload's flags (cis_hyb_cuda_create2, spmv/hyb_cuda.h). cisolve passes 0 and lets the
 * rules below choose; each flag forces a layout those rules choose for other matrices, so that
 * tests (and benchmarks) reach every layout on small inputs. */
enum {
  CIS_HYB_CUDA_NO_CACHE = 4, /* stream every Expansion block */
  CIS_HYB_CUDA_PLAIN = 8,    /* no coded values: every resident entry keeps its 8-byte value */
  CIS_HYB_CUDA_CODED = 16,   /* coded values wherever the dictionary pays, even for a matrix
                                that fits in L2 */
  CIS_HYB_CUDA_TILED = 64,   /* the Reference region in column tiles whatever its width (by
                                default only when it is wider than CIS_TILE_AUTO_COLS columns) */
  CIS_HYB_CUDA_SELL = 256,   /* the whole matrix as SELL-32, a lane per row, wherever it can be
                                (every block resident; by default only for matrices of
                                CIS_SELL_AUTO_ROWS rows or more) */
  CIS_HYB_CUDA_NO_SELL = 512 /* never as SELL-32: the hybrid layout, which the default keeps for
                                matrices of CIS_SELL_AUTO_ROWS rows or more whose padding to
                                SELL-32 would be too large, on matrices that large whose padding
                                is small */
};

/* Vectors one pass of the multi-vector kernel takes at most (its workspace holds that many). */
#define CIS_HYB_CUDA_MAX_K 8
/* Streamed batches in flight. */
#define CIS_NSLOTS 2

/* Column tiles of the Reference region (spmv/hyb_kernels_tiled.cuh): groups of CIS_TILE_ROWS rows,
 * tiles of CIS_TILE_COLS columns, CIS_TILE_LANES lanes per row and tile (benchmarks may set the
 * first two). */
#ifndef CIS_TILE_ROWS
#define CIS_TILE_ROWS 512
#endif
#ifndef CIS_TILE_COLS
#define CIS_TILE_COLS 2048
#endif
#define CIS_TILE_LANES 8
/* The defaults' thresholds: column tiles for a Reference region wider than CIS_TILE_AUTO_COLS
 * in a matrix of CIS_TILE_AUTO_ROWS rows or more; SELL-32 for a matrix of CIS_SELL_AUTO_ROWS
 * rows or more (docs/gpu.md gives the measurements behind them). */
#define CIS_TILE_AUTO_COLS 32768
#define CIS_TILE_AUTO_ROWS 262144
#define CIS_SELL_AUTO_ROWS 262144

/* A slice's width on the device: the host's rounded up to even, so that every row starts on a
 * 16-byte boundary (values are read in pairs). */
static inline int64_t cis_place_slice_width(int64_t w) { return w + (w & 1); }
/* Tiles of a Reference region of `boundary` columns; groups of a matrix of n rows. */
int64_t cis_place_tile_count(int64_t boundary);
int64_t cis_place_group_count(int64_t n);
/* Whether the Reference region goes in column tiles, but for the last condition: a matrix of n
 * rows whose Reference region of `boundary` columns holds ell_nnz entries (wide, tall and dense
 * enough, or the flags ask for it). */
int cis_place_tiled_wanted(int64_t n, int64_t boundary, int64_t ell_nnz, int flags);
/* ... and that a group's entries can be counted in 32 bits, its longest row having `longest`
 * Reference entries. */
int cis_place_tiled_fits(int64_t longest);
/* Bits of the ELL's columns (16 in tiles, or when boundary <= 65536), and of the resident
 * Expansion columns (16 when those of the ELL are and n <= 65536). */
int cis_place_index_bits(int tiled, int64_t boundary);
int cis_place_csr_bits(int index_bits, int64_t n);
/* Device bytes of the sliced ELL (`slots` entries with padding, in nslices slices of n rows
 * altogether) with `bits`-bit columns; of the Reference region in column tiles. */
int64_t cis_place_sliced_bytes(int64_t slots, int64_t nslices, int64_t n, int bits);
int64_t cis_place_tiled_bytes(int64_t n, int64_t boundary, int64_t ell_nnz);
/* The least budget: the ELL block of `ell_bytes`, the CSR row pointers and the multi-vector
 * workspace. */
int64_t cis_place_min_bytes(int64_t n, int64_t ell_bytes, int csr_bits);
/* Bytes kept back from the budget for the streaming buffers: two batches of `nscratch` blocks
 * of a quarter more than the mean block. */
int64_t cis_place_stream_reserve(int64_t nnz_exp, int64_t nblocks, int64_t block_rows,
                                 int nscratch);
/* Whether coded values pay, the blocks that may be resident taking `bytes` plain, on a device
 * with an L2 cache of `l2` bytes: unless the flags want plain values, not for blocks that L2
 * would hold twice over. */
int cis_place_codes_pay(int flags, int64_t bytes, int64_t l2);
/* Device bytes of `nnz` resident Expansion entries, `coded` of them coded; of the coded part
 * besides its entries (row pointers, padding, the dictionary's table). */
int64_t cis_place_entries_bytes(int64_t nnz, int64_t coded, int csr_bits);
int64_t cis_place_coded_overhead(int64_t n, int csr_bits, int dict_size);
/* Whether the whole matrix may go as SELL-32 (the flags, the size), given every block resident
 * and its padding (sell_count) and room checked by the upload. */
int cis_place_sell_wanted(int64_t n, int flags);
/* Whether the build's pool takes the blocks: its arrays, for `est` sampled Expansion entries of
 * which a share `cover` coded, and the layout built beside them, fit in `device_bytes`; its
 * arrays' entries in *pcap (plain) and *ccap (coded). */
int cis_place_pool_fits(int64_t est, double cover, int64_t device_bytes, int64_t *pcap,
                        int64_t *ccap);

/* A plan of the upload of a matrix known by its shape (counted or estimated): what
 * cis_hyb_cuda_create2 would do with it, with every block taken as the mean block. */
typedef struct {
  int64_t n, boundary;      /* rows; Reference region */
  int64_t ell_nnz;          /* Reference entries */
  int64_t ell_slots;        /* the sliced ELL's entries, padding included */
  int64_t ell_nslices;      /* its slices */
  int64_t nnz_exp, nblocks, block_rows; /* Expansion entries and blocks */
  int64_t host_cached;      /* the first blocks, cached on the host */
  int dict_size;            /* the build's value dictionary (0: none) ... */
  double dict_cover;        /* ... and the share of the sampled entries it codes */
  int64_t budget;           /* bytes the GPU offers the matrix */
  int64_t l2;               /* the device's L2 cache */
  int nthreads;             /* host threads that generate streamed blocks */
  int64_t pool_est;         /* > 0: the build offers its pool, sized for this many entries */
  int64_t pool_bytes;       /* ... and the bytes the GPU offered it */
  int64_t devgen_bytes;     /* > 0: the matrix has a device regenerator (spmv/hyb.h) whose
                               tables take this much: it generates the streamed blocks, and
                               their room replaces the streaming buffers' */
  int gpu_build;            /* the matrix was built on the GPU (spmv/hyb.h device_built): its
                               regenerator's tables are made whatever streams, its Reference
                               region is one sliced ELL block, its blocks are generated into
                               place at upload */
} cis_place_input;

typedef struct {
  int64_t min_bytes;        /* the least budget that works (else the upload fails: exit 4) */
  int tiled, index_bits, csr_bits, coded;
  int64_t ell_bytes;        /* the device's Reference region */
  int64_t stream_reserve;   /* kept for the streaming buffers */
  int64_t resident_blocks, streamed_blocks;
  int64_t resident_nnz, resident_bytes; /* the resident Expansion CSR */
  int64_t streamed_nnz, streamed_rows;  /* sent (or generated on the device) in every product ... */
  int devgen;               /* the device generates the streamed blocks (input devgen_bytes) */
  int64_t streamed_cached;  /* ... the blocks of it read from the host cache (the rest are
                               regenerated by the host in every product) */
  int64_t regenerated_at_upload; /* resident blocks the host does not cache: regenerated once
                               at upload, unless the pool took them */
  int pool;                 /* the build's pool takes the blocks and the upload uses them */
  int gpu_build;            /* the input's: resident blocks are generated into place */
  int sell_candidate;       /* SELL-32 unless its padding or room say no (counted at upload) */
} cis_place_plan;

void cis_place_plan_make(const cis_place_input *in, cis_place_plan *out);

#ifdef __cplusplus
}
#endif

#endif
