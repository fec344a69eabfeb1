/* cisolve: where a hybrid matrix goes on a GPU, as functions of its shape (spmv/hyb_place.h).
 * The measurements behind each threshold are in docs/gpu.md and docs/BENCHMARKS.md. */
#include "spmv/hyb_place.h"

#include <string.h>

#include "base/util.h"

/* Flags under which SELL-32 is never chosen, and those that ask for a layout of their own, which
 * the default SELL-32 would override. */
#define CIS_SELL_NEVER (CIS_HYB_CUDA_NO_CACHE | CIS_HYB_CUDA_NO_SELL)
#define CIS_SELL_NOT_AUTO (CIS_HYB_CUDA_CODED | CIS_HYB_CUDA_TILED)

int64_t cis_place_tile_count(int64_t boundary) {
  return (boundary + CIS_TILE_COLS - 1) / CIS_TILE_COLS;
}
int64_t cis_place_group_count(int64_t n) { return (n + CIS_TILE_ROWS - 1) / CIS_TILE_ROWS; }

int cis_place_tiled_wanted(int64_t n, int64_t boundary, int64_t ell_nnz, int flags) {
  if (boundary == 0) return 0;
  if (flags & CIS_HYB_CUDA_TILED) return 1;
  return boundary > CIS_TILE_AUTO_COLS && n >= CIS_TILE_AUTO_ROWS &&
         ell_nnz >= (int64_t)CIS_TILE_LANES * n * cis_place_tile_count(boundary);
}

int cis_place_tiled_fits(int64_t longest) {
  return longest * CIS_TILE_ROWS <= (int64_t)UINT32_MAX;
}

int cis_place_index_bits(int tiled, int64_t boundary) {
  if (tiled) return 16;
  return boundary > 65536 ? 32 : 16;
}

/* 16-bit resident Expansion columns when every column fits: 10 bytes a plain entry instead of
 * 12, 4 a coded one instead of 6 (docs/gpu.md says why they are not offset from the
 * boundary). */
int cis_place_csr_bits(int index_bits, int64_t n) {
  return index_bits == 16 && n <= 65536 ? 16 : 32;
}

int64_t cis_place_sliced_bytes(int64_t slots, int64_t nslices, int64_t n, int bits) {
  int64_t m = slots + 2;
  return m * (int64_t)(8 + bits / 8) + (nslices + 1) * 8 + nslices * 4 + n * 4;
}

/* 10 bytes an entry, the offsets, the group starts. */
int64_t cis_place_tiled_bytes(int64_t n, int64_t boundary, int64_t ell_nnz) {
  int64_t groups = cis_place_group_count(n), tiles = cis_place_tile_count(boundary);
  return ell_nnz * 10 + groups * (tiles * CIS_TILE_ROWS + 1) * 4 + (groups + 1) * 8;
}

int64_t cis_place_min_bytes(int64_t n, int64_t ell_bytes, int csr_bits) {
  return ell_bytes + (n + 1) * 8 + 2 * (8 + csr_bits / 8) /* CSR row pointers and padding */
         + n * (int64_t)CIS_HYB_CUDA_MAX_K * 8;           /* multi-vector workspace */
}

int64_t cis_place_stream_reserve(int64_t nnz_exp, int64_t nblocks, int64_t block_rows,
                                 int nscratch) {
  if (nblocks == 0) return 0;
  int64_t per =
      (int64_t)(1.25 * (double)nnz_exp / (double)nblocks) * 12 + (block_rows + 1) * 8 + 64;
  return CIS_NSLOTS * CIS_MIN((int64_t)nscratch, nblocks) * per;
}

int cis_place_codes_pay(int flags, int64_t bytes, int64_t l2) {
  if (flags & (CIS_HYB_CUDA_PLAIN | CIS_HYB_CUDA_NO_CACHE)) return 0;
  return (flags & CIS_HYB_CUDA_CODED) || bytes > 2 * l2;
}

int64_t cis_place_entries_bytes(int64_t nnz, int64_t coded, int csr_bits) {
  int64_t cb = csr_bits / 8;
  return (2 + cb) * coded + (8 + cb) * (nnz - coded);
}

int64_t cis_place_coded_overhead(int64_t n, int csr_bits, int dict_size) {
  return (n + 1) * 8 + 4 * (2 + csr_bits / 8) + (int64_t)dict_size * 8;
}

int cis_place_sell_wanted(int64_t n, int flags) {
  if ((flags & CIS_SELL_NEVER) || n == 0) return 0;
  if (flags & CIS_HYB_CUDA_SELL) return 1;
  return !(flags & CIS_SELL_NOT_AUTO) && n >= CIS_SELL_AUTO_ROWS;
}

/* Room for the sampled entries and more (the coded share moves with the sample too); the
 * layout is built beside them: as large again, SELL-32 with up to a quarter of padding. */
int cis_place_pool_fits(int64_t est, double cover, int64_t device_bytes, int64_t *pcap,
                        int64_t *ccap) {
  *ccap = (int64_t)(1.1 * cover * (double)est) + 4096;
  *pcap = (int64_t)((1.1 * (1.0 - cover) + 0.05) * (double)est) + 4096;
  return 5 * (*pcap * 12 + *ccap * 6) / 2 <= device_bytes;
}

void cis_place_plan_make(const cis_place_input *in, cis_place_plan *o) {
  int64_t n = in->n, nb = in->nblocks;
  memset(o, 0, sizeof *o);
  /* the longest row has at most `boundary` Reference entries */
  o->gpu_build = in->gpu_build;
  o->tiled = !in->gpu_build && cis_place_tiled_wanted(n, in->boundary, in->ell_nnz, 0) &&
             cis_place_tiled_fits(in->boundary);
  o->index_bits = cis_place_index_bits(o->tiled, in->boundary);
  o->csr_bits = cis_place_csr_bits(o->index_bits, n);
  o->ell_bytes = o->tiled ? cis_place_tiled_bytes(n, in->boundary, in->ell_nnz)
                          : cis_place_sliced_bytes(in->ell_slots, in->ell_nslices, n,
                                                   o->index_bits);
  o->min_bytes = cis_place_min_bytes(n, o->ell_bytes, o->csr_bits) +
                 (in->gpu_build ? in->devgen_bytes : 0); /* its generator places its rows */
  o->stream_reserve = cis_place_stream_reserve(in->nnz_exp, nb, in->block_rows, in->nthreads);
  int64_t avail = CIS_MAX((int64_t)0, in->budget - o->min_bytes - o->stream_reserve);
  /* every block may be resident: the host caches it or regenerates it */
  int64_t overhead = cis_place_coded_overhead(n, o->csr_bits, in->dict_size);
  o->coded = in->dict_size > 0 && cis_place_codes_pay(0, 12 * in->nnz_exp, in->l2) &&
             avail >= overhead;
  if (o->coded) avail -= overhead;
  double per = nb ? (double)in->nnz_exp / (double)nb : 0.0, share = o->coded ? in->dict_cover : 0.0;
  int64_t bytes = cis_place_entries_bytes((int64_t)per, (int64_t)(share * per), o->csr_bits);
  o->resident_blocks = bytes > 0 ? CIS_MIN(nb, avail / bytes) : nb;
  /* blocks left to stream, a device regenerator that fits beside the rest: the upload gives
   * its tables the streaming buffers' room and chooses again (spmv/hyb_cuda_stream.cu) */
  int64_t room = avail + (o->coded ? overhead : 0) + o->stream_reserve -
                 (in->gpu_build ? 0 : in->devgen_bytes); /* (counted in min_bytes) */
  if (in->gpu_build || (o->resident_blocks < nb && in->devgen_bytes > 0 && room >= 0)) {
    if (o->coded) room = CIS_MAX((int64_t)0, room - overhead);
    o->resident_blocks = bytes > 0 ? CIS_MIN(nb, room / bytes) : nb;
    o->devgen = o->resident_blocks < nb;
  }
  o->streamed_blocks = nb - o->resident_blocks;
  o->resident_nnz = nb ? in->nnz_exp * o->resident_blocks / nb : 0;
  o->resident_bytes =
      cis_place_entries_bytes(o->resident_nnz, (int64_t)(share * (double)o->resident_nnz),
                              o->csr_bits) +
      (n + 1) * 8 + (o->coded ? overhead : 0);
  o->streamed_nnz = in->nnz_exp - o->resident_nnz;
  o->streamed_rows = CIS_MAX((int64_t)0, n - o->resident_blocks * in->block_rows);
  o->streamed_cached = CIS_MAX((int64_t)0, in->host_cached - o->resident_blocks);
  o->regenerated_at_upload = CIS_MAX((int64_t)0, o->resident_blocks - in->host_cached);
  if (in->pool_est > 0 && o->streamed_blocks == 0) {
    int64_t pcap, ccap;
    int coded = in->dict_size > 0 && cis_place_codes_pay(0, 12 * in->pool_est, in->l2);
    o->pool = cis_place_pool_fits(in->pool_est, coded ? in->dict_cover : 0.0, in->pool_bytes,
                                  &pcap, &ccap);
  }
  o->sell_candidate = o->streamed_blocks == 0 && cis_place_sell_wanted(n, 0);
}
