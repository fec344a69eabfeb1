/* The CUDA kernels and backend against the CPU references.
 *
 * Every device product (our single- and multi-vector kernels, the CUDA operator's
 * (spmv/hyb_op.h) with resident, budget-streamed and regenerated Expansion blocks, and
 * resident blocks that the host does not cache, regenerated at upload) is compared with
 * cis_hyb_apply_cpu on seeded random matrices larger than a warp: empty rows, rows much longer
 * than 32 x the ELL width, boundary 0 (no Reference region), boundary n (no Expansion space),
 * boundary > 65536 (32-bit ELL columns), n above and at 65536 (32- and 16-bit Expansion
 * columns), the Reference region as one ELL block and in column tiles (by default where it is
 * wide and dense enough, forced elsewhere), SELL-32 (forced), SELL-32 filled from a build's
 * pool of blocks sent as they were generated, sub-warps of 4..32 lanes, k = 1, 3, 8 and 11,
 * and values coded through a dictionary where they repeat (plain where they do not). The
 * backend's dense ops are compared with plain loops. Outputs are poisoned with NaN first, so an
 * unwritten element fails. Passes when every relative error is <= 1e-12.
 * Exit 77 (skipped) when no CUDA device is usable.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "base/util.h"
#include "kernels/backend.h"
#include "kernels/operator.h"
#include "spmv/census.h"
#include "spmv/hyb.h"
#include "spmv/hyb_op.h"
}
#include <cuda_runtime.h>

#include "spmv/hyb_cuda.h"
#include "tests/tools/random_csr.h"

#define TOL 1e-12

static int g_fail = 0;

/* ---- random matrices: tests/tools/random_csr.h -------------------------------------------- */

typedef struct {
  const csr *m;
  int64_t boundary;
} regen_ctx;

static cis_err regen(void *vctx, int64_t row0, int64_t nrows, cis_csr_block *out) {
  const regen_ctx *c = (const regen_ctx *)vctx;
  int64_t nnz = 0;
  for (int64_t i = row0; i < row0 + nrows; i++)
    for (int64_t p = c->m->rowptr[i]; p < c->m->rowptr[i + 1]; p++) nnz += c->m->col[p] >= c->boundary;
  CIS_CALL(cis_csr_block_reserve(out, nrows, nnz));
  int64_t q = 0;
  out->rowptr[0] = 0;
  for (int64_t l = 0; l < nrows; l++) {
    for (int64_t p = c->m->rowptr[row0 + l]; p < c->m->rowptr[row0 + l + 1]; p++) {
      if (c->m->col[p] < c->boundary) continue;
      out->col[q] = c->m->col[p];
      out->val[q++] = c->m->val[p];
    }
    out->rowptr[l + 1] = q;
  }
  out->nnz = q;
  return CIS_OK;
}

/* Drop every other Expansion block from the host cache; they are regenerated on demand. */
static void uncache_half(cis_hyb *h, regen_ctx *ctx) {
  for (int64_t b = 1; b < h->nblocks; b += 2) {
    cis_csr_block_free(&h->blocks[b]);
    h->ncached--;
  }
  h->regen = regen;
  h->regen_ctx = ctx;
}

/* ---- checks ----------------------------------------------------------------------------------- */

static void check_rel(const char *what, int64_t count, const double *got, const double *ref) {
  double num = 0.0, den = 0.0;
  int nan = 0;
  for (int64_t i = 0; i < count; i++) {
    if (!isfinite(got[i])) nan = 1;
    double d = got[i] - ref[i];
    num += d * d;
    den += ref[i] * ref[i];
  }
  double rel = den > 0 ? sqrt(num / den) : sqrt(num);
  int ok = !nan && rel <= TOL;
  printf("%-4s %-64s rel %.2e%s\n", ok ? "ok" : "FAIL", what, rel, nan ? " (non-finite)" : "");
  if (!ok) g_fail++;
}

static void fail_err(const char *what) {
  printf("FAIL %s: %s\n", what, cis_error_message());
  g_fail++;
}

static void *dmalloc(size_t bytes) {
  void *p = NULL;
  if (cudaMalloc(&p, bytes ? bytes : 8) != cudaSuccess) {
    fprintf(stderr, "test_gpu: cudaMalloc of %zu bytes failed\n", bytes);
    exit(1);
  }
  return p;
}

static void cuda_ok(cudaError_t e, const char *what) {
  if (e != cudaSuccess) {
    fprintf(stderr, "test_gpu: %s: %s\n", what, cudaGetErrorName(e));
    exit(1);
  }
}

static void poison(double *dY, int64_t count) {
  cuda_ok(cudaMemset(dY, 0xff, (size_t)count * 8), "poisoning the output"); /* NaN */
  /* The backend works on its own non-blocking stream. */
  cuda_ok(cudaDeviceSynchronize(), "poisoning the output");
}

typedef cis_err (*apply_fn)(cis_hyb_cuda *, int, const double *, double *);

/* One device product against the CPU reference Yref (n x k). */
static void check_product(const char *label, const char *kernel, apply_fn f, cis_hyb_cuda *d,
                          int64_t n, int k, const double *dX, double *dY, const double *Yref,
                          double *Y) {
  char what[160];
  snprintf(what, sizeof what, "%s: %s k=%d", label, kernel, k);
  poison(dY, n * k);
  if (f(d, k, dX, dY) != CIS_OK) return fail_err(what);
  cuda_ok(cudaDeviceSynchronize(), what);
  cuda_ok(cudaMemcpy(Y, dY, (size_t)(n * k) * 8, cudaMemcpyDeviceToHost), what);
  check_rel(what, n * k, Y, Yref);
}

typedef struct {
  const char *label;
  int64_t n, boundary, block_rows;
  int avg, dense, slice;
  int distinct; /* values from this many magnitudes (0: all random) */
  int refavg;   /* more entries per row in the Reference region */
  int uniform;  /* rows of nearly equal length (make_csr) */
} test_case;

/* The upload's default layout of the Reference region (spmv/hyb_cuda_upload.cu, hyb_tiled_layout): column
 * tiles of 2048 when it is wider than 32768 columns, the matrix has 262144 rows or more, and
 * its rows have at least 8 entries per tile on average. */
static int tiled_by_default(const test_case *tc, const cis_hyb *h) {
  int64_t ntiles = (tc->boundary + 2047) / 2048;
  return tc->boundary > 32768 && tc->n >= 262144 && h->ell.nnz >= 8 * tc->n * ntiles;
}

static const int ks[] = {1, 3, 8, 11};
#define NK 4
#define KMAX 11

/* Ours and the multi-vector kernel for every k, then every sub-warp width whatever the upload
 * picked (k = 1 and 3); `tag` follows the kernel's name. */
static void check_ours(const test_case *tc, cis_hyb_cuda *d, const char *tag, const double *dX,
                       double *dY, double *const *Yref, double *Y) {
  char kernel[96];
  for (int i = 0; i < NK; i++) {
    snprintf(kernel, sizeof kernel, "ours%s", tag);
    check_product(tc->label, kernel, cis_hyb_cuda_apply, d, tc->n, ks[i], dX, dY, Yref[i], Y);
    snprintf(kernel, sizeof kernel, "multi-vector%s", tag);
    check_product(tc->label, kernel, cis_hyb_cuda_apply_multi, d, tc->n, ks[i], dX, dY, Yref[i],
                  Y);
  }
  for (int w = 4; w <= 32; w *= 2) {
    snprintf(kernel, sizeof kernel, "ours%s, %d lanes per row", tag, w);
    if (cis_hyb_cuda_set_subwarp(d, w) != CIS_OK) return fail_err(kernel);
    check_product(tc->label, kernel, cis_hyb_cuda_apply, d, tc->n, 1, dX, dY, Yref[0], Y);
    check_product(tc->label, kernel, cis_hyb_cuda_apply, d, tc->n, 3, dX, dY, Yref[1], Y);
  }
}

/* The single-vector launches that the upload timed (plain values: the kernel's three builds;
 * coded: blocks of 1024 or 256 threads): it kept the fastest, and all give the reference
 * product, bit for bit the same. */
static void check_candidates(const test_case *tc, cis_hyb_cuda *d, const char *tag,
                             const double *dX, double *dY, const double *Yref, double *Y) {
  cis_hyb_cuda_info in;
  cis_hyb_cuda_get_info(d, &in);
  /* SELL-32: a barrier every 32 entries or none (cis_hyb_cuda_set_plain_launch), coded or not */
  int coded = in.dict_size > 0 && !in.sell;
  int nc = in.tile_cols ? 1 : coded || in.sell ? 2 : CIS_HYB_CUDA_PLAIN_LAUNCHES;
  int ok = tc->n == 0 || in.tune_candidates == nc;
  for (int c = 0; tc->n && c < nc; c++)
    ok = ok && in.tune_ms[c] > 0 && in.tune_warps[c] > 0 && in.tune_ms[in.tune_kept] <= in.tune_ms[c];
  ok = ok && (coded ? in.coded_block == (in.tune_kept ? 256 : 1024) : in.plain_launch == in.tune_kept);
  printf("%-4s %s: launches timed at upload%s: %.4f, %.4f, %.4f ms (%d, %d, %d warps), "
         "candidate %d kept\n", ok ? "ok" : "FAIL", tc->label, tag, in.tune_ms[0],
         in.tune_ms[1], in.tune_ms[2], in.tune_warps[0], in.tune_warps[1], in.tune_warps[2],
         in.tune_kept);
  if (!ok) g_fail++;
  double *first = (double *)malloc((size_t)(tc->n ? tc->n : 1) * sizeof(double));
  if (!first) {
    fprintf(stderr, "test_gpu: out of host memory\n");
    exit(1);
  }
  char kernel[96];
  for (int c = 0; c < nc; c++) {
    cis_err set = coded ? cis_hyb_cuda_set_coded_block(d, c ? 256 : 1024)
                        : cis_hyb_cuda_set_plain_launch(d, c);
    if (set != CIS_OK) {
      fail_err(tc->label);
      break;
    }
    if (coded)
      snprintf(kernel, sizeof kernel, "ours%s, blocks of %d threads", tag, c ? 256 : 1024);
    else
      snprintf(kernel, sizeof kernel, "ours%s, plain launch %d", tag, c);
    check_product(tc->label, kernel, cis_hyb_cuda_apply, d, tc->n, 1, dX, dY, Yref, Y);
    if (c == 0) {
      memcpy(first, Y, (size_t)tc->n * sizeof(double));
    } else {
      ok = memcmp(first, Y, (size_t)tc->n * sizeof(double)) == 0;
      printf("%-4s %s: launch %d%s gives launch 0's product bit for bit\n", ok ? "ok" : "FAIL",
             tc->label, c, tag);
      if (!ok) g_fail++;
    }
  }
  free(first);
  if (coded) {
    if (cis_hyb_cuda_set_coded_block(d, in.coded_block) != CIS_OK) fail_err(tc->label);
  } else if (cis_hyb_cuda_set_plain_launch(d, in.plain_launch) != CIS_OK) {
    fail_err(tc->label);
  }
}

/* Every block resident, the hybrid layout with plain values: ours and the multi-vector kernel. */
static void check_resident(const test_case *tc, cis_hyb *h, const double *dX, double *dY,
                           double *const *Yref, double *Y) {
  cis_hyb_cuda *d = NULL;
  if (cis_hyb_cuda_create(h, 0, CIS_HYB_CUDA_PLAIN | CIS_HYB_CUDA_NO_SELL, 0, &d) != CIS_OK)
    return fail_err(tc->label);
  cis_hyb_cuda_info info;
  cis_hyb_cuda_get_info(d, &info);
  /* The Reference region in column tiles of 2048 where tiled_by_default says so (16-bit columns
   * within a tile); otherwise 16-bit columns wherever they fit: the ELL's when boundary <= 65536, the
   * Expansion's when n <= 65536 too */
  int tiles = tiled_by_default(tc, h) ? 2048 : 0;
  int ell_bits = tiles || tc->boundary <= 65536 ? 16 : 32;
  int csr_bits = ell_bits == 16 && tc->n <= 65536 ? 16 : 32;
  /* 8 vectors in one pass when the matrix fits the L2 cache, or, every block resident, when
   * their 8 columns of X fit it and they take four lanes an entry (plain values, untiled
   * hybrid layout) or fit half of it and the Reference region is in tiles (plain values); else
   * two passes of 4 */
  int dev = 0, l2 = 0;
  cuda_ok(cudaGetDevice(&dev), "cudaGetDevice");
  cuda_ok(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev), "L2 size");
  const int64_t x8 = tc->n * 64;
  int coop = !info.sell && !info.tile_cols && !info.dict_size;
  int group = info.ell_bytes + info.csr_bytes <= l2 ||
                      (!info.streamed_blocks &&
                       ((coop && x8 <= l2) ||
                        (info.tile_cols && !info.dict_size && x8 <= l2 / 2)))
                  ? 8
                  : 4;
  int ok = info.index_bits == ell_bits && info.csr_bits == csr_bits && info.tile_cols == tiles &&
           info.group == group;
  printf("%-4s %s: n %lld, boundary %lld, %d-bit ELL and %d-bit Expansion columns, tiles of %d "
         "columns, %d vectors a pass (expected %d, %d, %d and %d), %d-lane sub-warps\n",
         ok ? "ok" : "FAIL", tc->label, (long long)tc->n, (long long)tc->boundary,
         info.index_bits, info.csr_bits, info.tile_cols, info.group, ell_bits, csr_bits, tiles,
         group, info.subwarp);
  if (!ok) g_fail++;
  check_candidates(tc, d, "", dX, dY, Yref[0], Y);
  check_ours(tc, d, "", dX, dY, Yref, Y);
  cis_hyb_cuda_destroy(&d);
}

/* The Reference region in column tiles where the default upload keeps one sliced ELL block,
 * with plain values, and tiles with coded values. */
static void check_tiling(const test_case *tc, cis_hyb *h, const double *dX, double *dY,
                         double *const *Yref, double *Y) {
  if (tc->boundary == 0) return;
  int tiled_default = tiled_by_default(tc, h);
  for (int coded = tiled_default; coded <= (tc->distinct > 0); coded++) {
    cis_hyb_cuda *d = NULL;
    cis_hyb_cuda_info info;
    int f = coded ? CIS_HYB_CUDA_TILED | CIS_HYB_CUDA_CODED : CIS_HYB_CUDA_TILED;
    if (cis_hyb_cuda_create(h, 0, f, 0, &d) != CIS_OK) return fail_err(tc->label);
    cis_hyb_cuda_get_info(d, &info);
    int want = 2048;
    int ok = info.tile_cols == want && (!coded || info.dict_size > 0 || h->nnz_exp == 0);
    printf("%-4s %s: upload %s: Reference region in tiles of %d columns (expected %d)%s\n",
           ok ? "ok" : "FAIL", tc->label, coded ? "tiled, coded" : "tiled", info.tile_cols, want,
           coded ? ", coded values" : "");
    if (!ok) g_fail++;
    const char *tag = coded ? ", tiled coded upload" : ", tiled upload";
    check_candidates(tc, d, tag, dX, dY, Yref[0], Y);
    check_ours(tc, d, tag, dX, dY, Yref, Y);
    cis_hyb_cuda_destroy(&d);
  }
}

/* SELL-32, a lane per row (spmv/hyb_cuda_sell.cu, hyb_sell_layout): by default for a matrix of 262144
 * rows or more with plain values whose padding to slices of 32 rows adds at most a quarter to
 * its entries, and forced on every matrix; the slices counted here from the rows. */
static void check_sell(const test_case *tc, cis_hyb *h, const double *dX, double *dY,
                       double *const *Yref, double *Y) {
  int64_t slots = 0, nnz = h->ell.nnz + h->nnz_exp;
  for (int64_t r0 = 0; r0 < tc->n; r0 += 32) {
    int64_t w = 0;
    for (int64_t r = r0; r < r0 + 32 && r < tc->n; r++) {
      const cis_csr_block *b = &h->blocks[r / h->block_rows];
      int64_t l = r - b->row0;
      w = CIS_MAX(w, (int64_t)h->ell.row_len[r] + b->rowptr[l + 1] - b->rowptr[l]);
    }
    slots += 32 * w;
  }
  cis_hyb_cuda *d = NULL;
  cis_hyb_cuda_info info;
  if (cis_hyb_cuda_create(h, 0, 0, 0, &d) != CIS_OK) return fail_err(tc->label);
  cis_hyb_cuda_get_info(d, &info);
  int want = tc->n >= 262144 && info.dict_size == 0 && 4 * slots <= 5 * nnz ? 32 : 0;
  int ok = info.sell == want;
  printf("%-4s %s: default upload: SELL-%d (expected %d; %lld slots for %lld entries)\n",
         ok ? "ok" : "FAIL", tc->label, info.sell, want, (long long)slots, (long long)nnz);
  if (!ok) g_fail++;
  cis_hyb_cuda_destroy(&d);
  if (cis_hyb_cuda_create(h, 0, CIS_HYB_CUDA_SELL, 0, &d) != CIS_OK) return fail_err(tc->label);
  cis_hyb_cuda_get_info(d, &info);
  ok = tc->n == 0 || (info.sell == 32 && info.sell_slots == slots && info.dict_size == 0 &&
                      info.streamed_blocks == 0);
  printf("%-4s %s: upload forced to SELL-32: SELL-%d, %lld slots (expected %lld)\n",
         ok ? "ok" : "FAIL", tc->label, info.sell, (long long)info.sell_slots, (long long)slots);
  if (!ok) g_fail++;
  check_candidates(tc, d, ", SELL-32 upload", dX, dY, Yref[0], Y);
  check_ours(tc, d, ", SELL-32 upload", dX, dY, Yref, Y);
  cis_hyb_cuda_destroy(&d);
  /* coded values where they repeat: a second SELL-32 of the coded entries */
  if (tc->distinct == 0 || h->nnz_exp == 0) return;
  if (cis_hyb_cuda_create(h, 0, CIS_HYB_CUDA_SELL | CIS_HYB_CUDA_CODED, 0, &d) != CIS_OK)
    return fail_err(tc->label);
  cis_hyb_cuda_get_info(d, &info);
  ok = info.sell == 32 && info.dict_size > 0 && info.coded_nnz > 0 &&
       info.sell_slots >= nnz;
  printf("%-4s %s: upload forced to SELL-32 with coded values: SELL-%d, %d magnitudes, %lld "
         "entries coded, %lld slots\n", ok ? "ok" : "FAIL", tc->label, info.sell, info.dict_size,
         (long long)info.coded_nnz, (long long)info.sell_slots);
  if (!ok) g_fail++;
  check_candidates(tc, d, ", coded SELL-32 upload", dX, dY, Yref[0], Y);
  check_ours(tc, d, ", coded SELL-32 upload", dX, dY, Yref, Y);
  cis_hyb_cuda_destroy(&d);
}

/* Coded values (forced: the default keeps matrices this small plain): coded where they repeat
 * (tc->distinct), plain where they do not. */
static void check_coded(const test_case *tc, cis_hyb *h, const double *dX, double *dY,
                        double *const *Yref, double *Y) {
  cis_hyb_cuda *d = NULL;
  cis_hyb_cuda_info info;
  /* the default upload keeps a matrix that fits in twice the L2 cache plain */
  if (cis_hyb_cuda_create(h, 0, 0, 0, &d) != CIS_OK) return fail_err(tc->label);
  cis_hyb_cuda_get_info(d, &info);
  printf("%-4s %s: default upload of %lld cached entries: %d magnitudes in a dictionary, "
         "expected none (smaller than twice the L2 cache)\n", info.dict_size ? "FAIL" : "ok",
         tc->label, (long long)h->nnz_exp, info.dict_size);
  if (info.dict_size) g_fail++;
  cis_hyb_cuda_destroy(&d);
  if (cis_hyb_cuda_create(h, 0, CIS_HYB_CUDA_CODED, 0, &d) != CIS_OK) return fail_err(tc->label);
  cis_hyb_cuda_get_info(d, &info);
  int want = tc->distinct > 0 && h->nnz_exp > 0;
  int ok = want ? info.dict_size > 0 && info.coded_nnz > 0 : info.dict_size == 0;
  printf("%-4s %s: value dictionary of %d magnitudes (%.0f%% of a sample), %lld of %lld "
         "Expansion entries coded; expected %s\n", ok ? "ok" : "FAIL", tc->label, info.dict_size,
         100.0 * info.dict_cover, (long long)info.coded_nnz, (long long)h->nnz_exp,
         want ? "coded values" : "none");
  if (!ok) g_fail++;
  check_candidates(tc, d, ", coded upload", dX, dY, Yref[0], Y);
  check_ours(tc, d, ", coded upload", dX, dY, Yref, Y);
  /* k = 3 in blocks of 256 threads and of 1024, whichever the upload kept */
  for (int b = 256; b <= 1024; b *= 4) {
    char kernel[64];
    snprintf(kernel, sizeof kernel, "ours, coded upload, %d threads per block", b);
    if (cis_hyb_cuda_set_coded_block(d, b) != CIS_OK) return fail_err(tc->label);
    check_product(tc->label, kernel, cis_hyb_cuda_apply, d, tc->n, ks[1], dX, dY, Yref[1], Y);
  }
  cis_hyb_cuda_destroy(&d);
  /* a budget of 2 bytes per Expansion entry, for a third or so of the blocks (coded entries
   * take 4 or 6 bytes): coded resident blocks, plain streamed ones */
  if (!want) return;
  int64_t budget = cis_hyb_cuda_min_bytes(h, 0) + cis_hyb_cuda_stream_bytes(h) +
                   h->nnz_exp * 2 + 4096;
  if (cis_hyb_cuda_create(h, budget, CIS_HYB_CUDA_CODED, 0, &d) != CIS_OK)
    return fail_err(tc->label);
  cis_hyb_cuda_get_info(d, &info);
  ok = info.coded_nnz > 0 && info.streamed_blocks > 0;
  printf("%-4s %s: budget %lld: %lld blocks resident (%lld entries coded), %lld streamed\n",
         ok ? "ok" : "FAIL", tc->label, (long long)budget, (long long)info.resident_blocks,
         (long long)info.coded_nnz, (long long)info.streamed_blocks);
  if (!ok) g_fail++;
  for (int i = 0; i < NK; i++)
    check_product(tc->label, "ours, coded resident and streamed blocks", cis_hyb_cuda_apply, d,
                  tc->n, ks[i], dX, dY, Yref[i], Y);
  cis_hyb_cuda_destroy(&d);
}

/* The product of an upload with `flags` for k vectors, copied to the host (NULL after an error). */
static double *upload_product(const test_case *tc, cis_hyb *h, int flags, int k,
                              const double *dX, double *dY) {
  cis_hyb_cuda *d = NULL;
  double *Y = (double *)malloc((size_t)(tc->n * k + 1) * 8);
  poison(dY, tc->n * k);
  if (cis_hyb_cuda_create(h, 0, flags, 0, &d) != CIS_OK ||
      cis_hyb_cuda_apply(d, k, dX, dY) != CIS_OK) {
    fail_err(tc->label);
    cis_hyb_cuda_destroy(&d);
    free(Y);
    return NULL;
  }
  cuda_ok(cudaDeviceSynchronize(), tc->label);
  cuda_ok(cudaMemcpy(Y, dY, (size_t)(tc->n * k) * 8, cudaMemcpyDeviceToHost), tc->label);
  cis_hyb_cuda_destroy(&d);
  return Y;
}

/* Half the Expansion blocks not cached on the host (uncache_half): every block still resident
 * on the device, the uncached ones regenerated at upload, plain and coded; the products match
 * the CPU reference, and bit for bit those of the fully cached upload (Ycached[coded], k = 3). */
static void check_regenerated(const test_case *tc, cis_hyb *h, const double *dX, double *dY,
                              double *const *Yref, double *Y, double *const *Ycached) {
  for (int coded = 0; coded <= (tc->distinct > 0); coded++) {
    cis_hyb_cuda *d = NULL;
    cis_hyb_cuda_info info;
    int flags = coded ? CIS_HYB_CUDA_CODED : 0;
    const char *tag = coded ? ", coded upload of regenerated blocks" : ", upload of regenerated blocks";
    if (cis_hyb_cuda_create(h, 0, flags, 0, &d) != CIS_OK) return fail_err(tc->label);
    cis_hyb_cuda_get_info(d, &info);
    int64_t uncached = h->nblocks - h->ncached;
    int ok = info.resident_blocks == h->nblocks && info.streamed_blocks == 0 &&
             info.regenerated_blocks == uncached && (!coded || info.dict_size > 0 || h->nnz_exp == 0);
    printf("%-4s %s: %lld of %lld blocks resident, %lld regenerated at upload, %lld streamed "
           "(expected %lld, %lld, 0)%s\n", ok ? "ok" : "FAIL", tc->label,
           (long long)info.resident_blocks, (long long)h->nblocks,
           (long long)info.regenerated_blocks, (long long)info.streamed_blocks,
           (long long)h->nblocks, (long long)uncached, coded ? ", coded values" : "");
    if (!ok) g_fail++;
    check_ours(tc, d, tag, dX, dY, Yref, Y);
    cis_hyb_cuda_destroy(&d);
    double *Yr = upload_product(tc, h, flags, ks[1], dX, dY);
    if (Yr && Ycached[coded]) {
      int same = memcmp(Yr, Ycached[coded], (size_t)(tc->n * ks[1]) * 8) == 0;
      printf("%-4s %s: product k=%d%s bit for bit that of the cached upload\n",
             same ? "ok" : "FAIL", tc->label, ks[1], tag);
      if (!same) g_fail++;
    }
    free(Yr);
  }
}

/* One upload (flags) of h with a build's pool (cis_hyb_cuda_pool_create with pool_flags),
 * filled as a build fills it: a census, then every block sent, last first (a parallel build
 * sends them in any order), the pool counting them in the census (every block, kept or not),
 * the pool sized from `est` entries. `used` 1: the upload must take every block from the pool,
 * regenerating none, as SELL-32 where `sell`, else in the hybrid layout, and its products must
 * match the CPU; 0: it must not use the pool, and say why; -1: the pool must decline the build.
 * Either way its product for k = ks[1] must equal that of the same upload without a pool bit
 * for bit. */
static void check_pool_upload(const test_case *tc, cis_hyb *h, int pool_flags, int flags,
                              int64_t est, int used, int sell, const char *what,
                              const double *dX, double *dY, double *const *Yref, double *Y) {
  cis_census c;
  cis_block_sink *pool = NULL;
  cis_hyb_cuda *d = NULL;
  cis_hyb_cuda_info info;
  char tag[160];
  snprintf(tag, sizeof tag, ", upload from the build's pool (%s)", what);
  double *Yplain = upload_product(tc, h, flags, ks[1], dX, dY);
  if (cis_census_init(&c, h, (flags & CIS_HYB_CUDA_CODED) != 0) != CIS_OK) {
    free(Yplain);
    return fail_err(tc->label);
  }
  if (cis_hyb_cuda_pool_create(-1, (int64_t)1 << 40, pool_flags, &pool) != CIS_OK) {
    free(Yplain);
    cis_census_free(&c);
    return fail_err(tc->label);
  }
  int took = pool->begin(pool, h, est, &c, 1);
  for (int64_t b = h->nblocks - 1; b >= 0; b--) {
    if (took)
      pool->block(pool, b, &h->blocks[b]); /* which counts it */
    else
      cis_census_block(&c, b, &h->blocks[b]);
  }
  int counted = cis_census_complete(&c);
  h->census = &c;
  h->sink = took ? pool : NULL;
  if (cis_hyb_cuda_create(h, 0, flags, 0, &d) != CIS_OK) {
    fail_err(tc->label);
  } else {
    cis_hyb_cuda_get_info(d, &info);
    int ok = counted && (used == 1 ? took && info.built_blocks == h->nblocks &&
                                         info.regenerated_blocks == 0 && !info.pool_note[0] &&
                                         info.sell == (sell ? 32 : 0)
                         : used == 0 ? took && info.built_blocks == 0 && info.pool_note[0]
                                     : !took && info.built_blocks == 0);
    printf("%-4s %s: %s: pool %s, %lld of %lld blocks from it, SELL-%d%s%s\n", ok ? "ok" : "FAIL",
           tc->label, what, took ? "filled" : "declined", (long long)info.built_blocks,
           (long long)h->nblocks, info.sell, info.pool_note[0] ? "; not used: " : "",
           info.pool_note);
    if (!ok) g_fail++;
    /* first, with the sub-warp the upload chose (check_ours then tries the others) */
    poison(dY, tc->n * ks[1]);
    if (cis_hyb_cuda_apply(d, ks[1], dX, dY) != CIS_OK) {
      fail_err(tc->label);
    } else {
      cuda_ok(cudaMemcpy(Y, dY, (size_t)(tc->n * ks[1]) * 8, cudaMemcpyDeviceToHost), tc->label);
      int same = Yplain && memcmp(Y, Yplain, (size_t)(tc->n * ks[1]) * 8) == 0;
      printf("%-4s %s: product k=%d%s bit for bit that of the upload without it\n",
             same ? "ok" : "FAIL", tc->label, ks[1], tag);
      if (!same) g_fail++;
    }
    if (used == 1) check_ours(tc, d, tag, dX, dY, Yref, Y);
  }
  cis_hyb_cuda_destroy(&d);
  h->census = NULL;
  h->sink = NULL;
  cis_hyb_cuda_pool_destroy(&pool);
  cis_census_free(&c);
  free(Yplain);
}

/* The build's pool (spmv/hyb_cuda.h), plain and coded: used for SELL-32 (forced) and for the
 * hybrid layout, and by default (SELL-32 on the cases the default upload keeps so); not used
 * when its blocks outgrow the room its sample gave them (an estimate of one entry) or when no
 * block stays resident; declined for an upload that streams every block. */
static void check_pooled(const test_case *tc, cis_hyb *h, const double *dX, double *dY,
                         double *const *Yref, double *Y) {
  int64_t e = h->nnz_exp;
  for (int coded = 0; coded <= (tc->distinct > 0 && e > 0); coded++) {
    int c = coded ? CIS_HYB_CUDA_CODED : 0, sell = CIS_HYB_CUDA_SELL | c;
    int hybrid = CIS_HYB_CUDA_NO_SELL | c;
    const char *v = coded ? "coded" : "plain";
    char what[96];
    snprintf(what, sizeof what, "SELL-32 forced, %s", v);
    check_pool_upload(tc, h, sell, sell, e, 1, 1, what, dX, dY, Yref, Y);
    snprintf(what, sizeof what, "hybrid layout, %s", v);
    check_pool_upload(tc, h, c, hybrid, e, 1, 0, what, dX, dY, Yref, Y);
    if (e > 8200) {
      snprintf(what, sizeof what, "SELL-32 forced, %s, the pool too small", v);
      check_pool_upload(tc, h, sell, sell, 1, 0, 1, what, dX, dY, Yref, Y);
    }
  }
  check_pool_upload(tc, h, 0, CIS_HYB_CUDA_NO_CACHE, e, 0, 0, "every block streamed", dX, dY,
                    Yref, Y);
  check_pool_upload(tc, h, CIS_HYB_CUDA_NO_CACHE, CIS_HYB_CUDA_NO_CACHE, e, -1, 0,
                    "asked for by an upload that streams every block", dX, dY, Yref, Y);
  cis_hyb_cuda *d = NULL;
  cis_hyb_cuda_info info;
  if (cis_hyb_cuda_create(h, 0, 0, 0, &d) != CIS_OK) return fail_err(tc->label);
  cis_hyb_cuda_get_info(d, &info);
  cis_hyb_cuda_destroy(&d);
  check_pool_upload(tc, h, 0, 0, e, 1, info.sell == 32, "by default", dX, dY, Yref, Y);
}

/* Every Expansion block streamed: half from the host cache, half regenerated. */
static void check_streamed(const test_case *tc, cis_hyb *h, const double *dX, double *dY,
                           double *const *Yref, double *Y) {
  cis_hyb_cuda *d = NULL;
  if (cis_hyb_cuda_create(h, 0, CIS_HYB_CUDA_NO_CACHE, 0, &d) != CIS_OK)
    return fail_err(tc->label);
  for (int i = 0; i < NK; i++)
    check_product(tc->label, "ours, all blocks streamed", cis_hyb_cuda_apply, d, tc->n, ks[i],
                  dX, dY, Yref[i], Y);
  cis_hyb_cuda_destroy(&d);
}

/* The hybrid matrix h as an operator on the CUDA backend be (spmv/hyb_op.h), with `budget` for
 * the matrix and the default room for the solver's vectors; diag: n values (only described). */
static cis_err make_op(cis_hyb *h, cis_backend *be, int64_t budget, const double *diag,
                       cis_operator **op) {
  cis_operator_info info = {h->n, diag, 0, NULL};
  return cis_hyb_cuda_op_create(h, &info, be, budget, 0, op);
}

/* The operator's products on the backend's vectors, unlimited and with a budget that streams
 * part of the Expansion space. */
static void check_backend_matvec(const test_case *tc, cis_hyb *h, const double *X,
                                 double *const *Yref) {
  int64_t n = tc->n, minb = cis_hyb_cuda_min_bytes(h, 0);
  int64_t budgets[2] = {0, minb + cis_hyb_cuda_stream_bytes(h) + (h->nnz_exp * 12) / 3 + 4096};
  double *Y = (double *)malloc((size_t)n * KMAX * 8);
  double *diag = (double *)calloc((size_t)n + 1, sizeof *diag);
  for (int bi = 0; bi < 2; bi++) {
    cis_backend *be = NULL;
    cis_operator *op = NULL;
    double *dX = NULL, *dY = NULL;
    char what[160];
    snprintf(what, sizeof what, "%s: operator on the backend, budget %lld", tc->label,
             (long long)budgets[bi]);
    if (cis_backend_create_cuda(n, -1, &be) != CIS_OK ||
        make_op(h, be, budgets[bi], diag, &op) != CIS_OK ||
        be->ops->alloc(be, n * KMAX, &dX) != CIS_OK ||
        be->ops->alloc(be, n * KMAX, &dY) != CIS_OK ||
        be->ops->from_host(be, dX, X, n * KMAX) != CIS_OK) {
      fail_err(what);
    } else {
      for (int i = 0; i < NK; i++) {
        poison(dY, n * ks[i]);
        if (cis_operator_apply(op, ks[i], dX, dY) != CIS_OK ||
            be->ops->to_host(be, Y, dY, n * ks[i]) != CIS_OK) {
          fail_err(what);
          continue;
        }
        char w2[200];
        snprintf(w2, sizeof w2, "%s k=%d", what, ks[i]);
        check_rel(w2, n * ks[i], Y, Yref[i]);
      }
    }
    if (be) {
      be->ops->free(be, &dX);
      be->ops->free(be, &dY);
    }
    cis_operator_destroy(&op);
    cis_backend_destroy(&be);
  }
  free(Y);
  free(diag);
}

/* A budget one byte short of the resident ELL block must be refused, naming the minimum. */
static void check_budget_refused(const test_case *tc, cis_hyb *h) {
  int64_t minb = cis_hyb_cuda_min_bytes(h, 0);
  cis_backend *be = NULL;
  cis_operator *op = NULL;
  double *diag = (double *)calloc((size_t)tc->n + 1, sizeof *diag);
  char want[64];
  snprintf(want, sizeof want, "at least %lld bytes", (long long)minb);
  cis_err e = cis_backend_create_cuda(tc->n, -1, &be);
  if (e == CIS_OK) e = make_op(h, be, minb - 1, diag, &op);
  int ok = e == CIS_ERR_NOMEM && strstr(cis_error_message(), want) != NULL;
  printf("%-4s %s: budget %lld refused with '%s'\n", ok ? "ok" : "FAIL", tc->label,
         (long long)(minb - 1), cis_error_message());
  if (!ok) g_fail++;
  cis_error_clear();
  cis_operator_destroy(&op);
  cis_backend_destroy(&be);
  free(diag);
}

static void run_case(const test_case *tc) {
  csr m;
  cis_hyb h;
  regen_ctx ctx = {NULL, 0};
  int64_t n = tc->n;
  make_csr(n, tc->avg, tc->dense, tc->distinct, tc->boundary, tc->refavg, tc->uniform, &m);
  if (cis_hyb_from_csr(n, m.rowptr, m.col, m.val, tc->boundary, tc->block_rows, tc->slice, &h) !=
      CIS_OK) {
    fail_err(tc->label);
    csr_free(&m);
    return;
  }
  double *X = (double *)malloc((size_t)n * KMAX * 8), *Y = (double *)malloc((size_t)n * KMAX * 8);
  double *Yref[NK];
  double *dX = (double *)dmalloc((size_t)n * KMAX * 8), *dY = (double *)dmalloc((size_t)n * KMAX * 8);
  for (int64_t i = 0; i < n * KMAX; i++) X[i] = 2.0 * urand() - 1.0;
  cuda_ok(cudaMemcpy(dX, X, (size_t)n * KMAX * 8, cudaMemcpyHostToDevice), "uploading X");
  for (int i = 0; i < NK; i++) {
    Yref[i] = (double *)malloc((size_t)n * ks[i] * 8);
    if (cis_hyb_apply_cpu(&h, ks[i], X, Yref[i]) != CIS_OK) fail_err(tc->label);
  }
  check_resident(tc, &h, dX, dY, Yref, Y);
  check_coded(tc, &h, dX, dY, Yref, Y);
  check_tiling(tc, &h, dX, dY, Yref, Y);
  check_sell(tc, &h, dX, dY, Yref, Y);
  check_pooled(tc, &h, dX, dY, Yref, Y);
  double *Ycached[2] = {upload_product(tc, &h, 0, ks[1], dX, dY),
                        tc->distinct > 0 ? upload_product(tc, &h, CIS_HYB_CUDA_CODED, ks[1], dX, dY)
                                         : NULL};
  ctx.m = &m;
  ctx.boundary = tc->boundary;
  uncache_half(&h, &ctx);
  check_regenerated(tc, &h, dX, dY, Yref, Y, Ycached);
  free(Ycached[0]);
  free(Ycached[1]);
  check_streamed(tc, &h, dX, dY, Yref, Y);
  check_backend_matvec(tc, &h, X, Yref);
  check_budget_refused(tc, &h);
  for (int i = 0; i < NK; i++) free(Yref[i]);
  free(X);
  free(Y);
  cudaFree(dX);
  cudaFree(dY);
  cis_hyb_free(&h);
  csr_free(&m);
}

/* ---- dense backend ops ----------------------------------------------------------------------- */

static void check_ops(int64_t n) {
  const int m = 7, k = 3;
  cis_backend *be = NULL;
  double *A = (double *)malloc((size_t)n * m * 8), *B = (double *)malloc((size_t)n * k * 8);
  double *C = (double *)malloc((size_t)n * k * 8), *R = (double *)malloc((size_t)n * k * 8);
  double *S = (double *)malloc((size_t)m * k * 8), G[7 * 3], Gref[7 * 3];
  double *dA = NULL, *dB = NULL, *dC = NULL;
  for (int64_t i = 0; i < n * m; i++) A[i] = 2.0 * urand() - 1.0;
  for (int64_t i = 0; i < n * k; i++) B[i] = 2.0 * urand() - 1.0;
  for (int i = 0; i < m * k; i++) S[i] = 2.0 * urand() - 1.0;
  if (cis_backend_create_cuda(n, -1, &be) != CIS_OK) return fail_err("backend ops");
  printf("--   backend: %s\n", be->desc);
  const cis_backend_ops *o = be->ops;
  if (o->alloc(be, n * m, &dA) || o->alloc(be, n * k, &dB) || o->alloc(be, n * k, &dC) ||
      o->from_host(be, dA, A, n * m) || o->from_host(be, dB, B, n * k))
    return fail_err("backend ops: upload");

  /* G = A^T B */
  for (int i = 0; i < m; i++)
    for (int j = 0; j < k; j++) {
      double s = 0.0;
      for (int64_t r = 0; r < n; r++) s += A[r + i * n] * B[r + j * n];
      Gref[i + j * m] = s;
    }
  if (o->gemm_tn(be, m, k, dA, dB, G)) return fail_err("gemm_tn");
  check_rel("backend gemm_tn (7 x 3)", m * k, G, Gref);

  /* C = beta C + A S, beta = 0.5, then beta = 0 over NaN */
  for (int pass = 0; pass < 2; pass++) {
    double beta = pass == 0 ? 0.5 : 0.0;
    if (pass == 0) {
      if (o->from_host(be, dC, B, n * k)) return fail_err("gemm_nn");
    } else {
      poison(dC, n * k);
    }
    for (int j = 0; j < k; j++)
      for (int64_t r = 0; r < n; r++) {
        double s = pass == 0 ? beta * B[r + j * n] : 0.0;
        for (int i = 0; i < m; i++) s += A[r + i * n] * S[i + j * m];
        R[r + j * n] = s;
      }
    if (o->gemm_nn(be, m, k, dA, S, beta, dC) || o->to_host(be, C, dC, n * k))
      return fail_err("gemm_nn");
    check_rel(pass == 0 ? "backend gemm_nn beta 0.5" : "backend gemm_nn beta 0 over NaN", n * k,
              C, R);
  }

  /* dot, axpy, scal, copy */
  double dot = 0.0, dref = 0.0;
  for (int64_t r = 0; r < n; r++) dref += A[r] * B[r];
  if (o->dot(be, n, dA, dB, &dot)) return fail_err("dot");
  check_rel("backend dot", 1, &dot, &dref);
  for (int64_t r = 0; r < n; r++) R[r] = B[r] - 0.75 * A[r];
  if (o->copy(be, dC, dB, n) || o->axpy(be, n, -0.75, dA, dC) || o->to_host(be, C, dC, n))
    return fail_err("axpy");
  check_rel("backend copy + axpy", n, C, R);
  for (int64_t r = 0; r < n; r++) R[r] *= 3.0;
  if (o->scal(be, n, 3.0, dC) || o->to_host(be, C, dC, n)) return fail_err("scal");
  check_rel("backend scal", n, C, R);

  /* precond: t = r / (d - shift), |d - shift| clamped at floor; some d right at the shift */
  const double shift = 0.1, floor_ = 1e-3;
  for (int64_t r = 0; r < n; r++) {
    if (r % 5 == 0) A[r] = shift + (r % 10 == 0 ? 1e-5 : -1e-5);
    double den = A[r] - shift;
    if (fabs(den) < floor_) den = den < 0.0 ? -floor_ : floor_;
    R[r] = B[r] / den;
  }
  if (o->from_host(be, dA, A, n) || o->precond(be, dA, shift, floor_, dB, dC) ||
      o->to_host(be, C, dC, n))
    return fail_err("precond");
  check_rel("backend precond (with clamped denominators)", n, C, R);

  o->free(be, &dA);
  o->free(be, &dB);
  o->free(be, &dC);
  cis_backend_destroy(&be);
  free(A), free(B), free(C), free(R), free(S);
}

int main(void) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    printf("SKIPPED: no usable CUDA device (%s)\n",
           e != cudaSuccess ? cudaGetErrorName(e) : "cudaGetDeviceCount found none");
    return 77;
  }
  cis_backend *probe = NULL;
  if (cis_backend_create_cuda(1, -1, &probe) != CIS_OK) {
    printf("SKIPPED: no usable CUDA device (%s)\n", cis_error_message());
    return 77;
  }
  cis_backend_destroy(&probe);

  static const test_case cases[] = {
      /* label, n, boundary, block rows, mean row length, dense row length, slice, distinct
       * magnitudes */
      {"mixed", 1500, 200, 211, 40, 1400, 32, 0},
      {"boundary 0", 1200, 0, 300, 60, 1100, 32, 0},
      {"boundary n", 900, 900, 100, 50, 880, 16, 0},
      {"short rows", 3000, 700, 500, 6, 200, 7, 0},
      {"mid rows", 2500, 400, 0, 12, 900, 32, 0},
      {"boundary 66000", 70000, 66000, 9000, 40, 3000, 32, 0},
      {"coded values", 3000, 300, 400, 60, 2500, 32, 500},
      {"coded, short rows", 4000, 0, 333, 5, 300, 32, 40},
      {"coded, boundary n", 900, 900, 100, 50, 880, 16, 30},
      {"32-bit Expansion columns", 70000, 3000, 9000, 20, 2000, 32, 0},
      {"coded, 32-bit Expansion columns", 68000, 1000, 7000, 20, 2000, 32, 200},
      {"coded, 16-bit columns up to 65535", 65536, 500, 8000, 20, 2000, 32, 100},
      {"tiled by default", 262144, 34000, 30000, 12, 600, 32, 0, 200},
      {"wide Reference region, too sparse for tiles", 270000, 40000, 30000, 12, 600, 32, 0},
      {"SELL-32 by default", 300000, 2048, 40000, 40, 0, 32, 0, 20, 1},
  };
  /* CISOLVE_GPU_TEST_SMALL=1 leaves out the cases of more than 10,000 rows (for
   * compute-sanitizer runs). */
  const char *small = getenv("CISOLVE_GPU_TEST_SMALL");
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    if (!(small && *small == '1' && cases[i].n > 10000)) run_case(&cases[i]);
  check_ops(5000);
  if (g_fail) {
    printf("%d check(s) FAILED\n", g_fail);
    return 1;
  }
  printf("all GPU checks passed\n");
  return 0;
}
