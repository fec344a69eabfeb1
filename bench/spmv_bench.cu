/* spmv_bench: our hybrid ELL+CSR kernels against the 2018 paper's kernel, cuSPARSE CSR SpMV
 * (ALG1, ALG2) and a device-to-device copy, on the paper's synthetic CI matrix, in one run.
 *
 * usage: spmv_bench [--rows N] [--ref-cols B] [--ref-nnz R] [--exp-nnz E] [--reps N]
 *                   [--seed S] [--commit HASH] [--md FILE]
 * Defaults: the paper's matrix (32,768 rows, Reference region 3,276 columns with 655 nonzeros
 * per row, ~1% density elsewhere = 295 per row).
 *
 * Each timing is the median of --reps runs, each between two events on one stream, each after
 * the L2 cache is flushed (a memset twice its size) and with x and y rotated among 4 buffers.
 * GB/s counts each format's own bytes: its arrays read once, x read once, y written once.
 * The markdown table goes to stdout and, with --md, to FILE with the device, commit and date.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <vector>

extern "C" {
#include "bench/synth.h"
#include "core/util.h"
}
#include "kernels/cuda_check.cuh"
#include "spmv/hyb_cuda.h"

#define NROT 4

static void die_on(cis_err e) {
  if (e == CIS_OK) return;
  cis_error_print(1);
  exit(cis_exit_code(e));
}

static cis_err check_cuda(cudaError_t e, const char *what) {
  if (e != cudaSuccess)
    CIS_ERROR(cis_cuda_code(e), "%s: %s (%s)", what, cudaGetErrorName(e), cudaGetErrorString(e));
  return CIS_OK;
}
#define CK(call) die_on(check_cuda((call), #call))
#define CKS(call)                                                                     \
  do {                                                                                \
    cusparseStatus_t s_ = (call);                                                     \
    if (s_ != CUSPARSE_STATUS_SUCCESS) {                                              \
      fprintf(stderr, "spmv_bench: %s: %s\n", #call, cusparseGetErrorName(s_));      \
      exit(4);                                                                        \
    }                                                                                 \
  } while (0)

typedef struct {
  synth_params p;
  int reps;
  const char *commit, *md;
} bench_args;

static void usage_exit(const char *why) {
  fprintf(stderr,
          "spmv_bench: %s\nusage: spmv_bench [--rows N] [--ref-cols B] [--ref-nnz R] "
          "[--exp-nnz E] [--reps N] [--seed S] [--commit HASH] [--md FILE]\n",
          why);
  exit(1);
}

static void parse(int argc, char **argv, bench_args *a) {
  a->p.n = 32768;
  a->p.ref_cols = 3276;
  a->p.ref_nnz = 655;
  a->p.exp_nnz = 295;
  a->p.seed = 2018;
  a->reps = 50;
  a->commit = "unknown";
  a->md = NULL;
  for (int i = 1; i < argc; i++) {
    if (i + 1 >= argc) usage_exit("an option lacks its value");
    const char *o = argv[i], *v = argv[++i];
    long x = 0;
    if (strcmp(o, "--commit") == 0) {
      a->commit = v;
      continue;
    }
    if (strcmp(o, "--md") == 0) {
      a->md = v;
      continue;
    }
    die_on(cis_parse_int(v, o, &x));
    if (strcmp(o, "--rows") == 0) a->p.n = x;
    else if (strcmp(o, "--ref-cols") == 0) a->p.ref_cols = x;
    else if (strcmp(o, "--ref-nnz") == 0) a->p.ref_nnz = (int)x;
    else if (strcmp(o, "--exp-nnz") == 0) a->p.exp_nnz = (int)x;
    else if (strcmp(o, "--reps") == 0) a->reps = (int)x;
    else if (strcmp(o, "--seed") == 0) a->p.seed = (uint64_t)x;
    else usage_exit("unknown option");
  }
  if (a->reps < 3) usage_exit("--reps must be at least 3");
}

/* ---- timing ------------------------------------------------------------------------------ */

typedef struct {
  cudaStream_t s;
  cudaEvent_t a, b;
  void *flush;
  size_t flush_bytes;
} timer;

template <class F>
static double median_ms(timer *t, int reps, F f) {
  std::vector<float> ms;
  for (int r = 0; r < 3; r++) f(r);
  for (int r = 0; r < reps; r++) {
    CK(cudaMemsetAsync(t->flush, r & 0xff, t->flush_bytes, t->s));
    CK(cudaEventRecord(t->a, t->s));
    f(r);
    CK(cudaEventRecord(t->b, t->s));
    CK(cudaEventSynchronize(t->b));
    float x = 0.f;
    CK(cudaEventElapsedTime(&x, t->a, t->b));
    ms.push_back(x);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

/* ---- results ------------------------------------------------------------------------------ */

typedef struct {
  char name[64], format[48];
  double bytes, ms;
  int k;
  double err;
} row;

static double rel_err(const double *a, const double *b, int64_t n) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < n; i++) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* The products run on a non-blocking stream, which cudaMemcpy does not wait for. */
static double device_rel_err(const double *dy, const double *ref_host, int64_t n) {
  std::vector<double> y((size_t)n);
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(y.data(), dy, (size_t)n * 8, cudaMemcpyDeviceToHost));
  return rel_err(y.data(), ref_host, n);
}

static void print_table(FILE *f, const std::vector<row> &rows, double copy_gbs, double best_sp) {
  fprintf(f,
          "| kernel | format | bytes moved (MB) | median ms | ms per vector | GB/s | %% of copy "
          "| vs best cuSPARSE | rel. err vs ALG1 |\n"
          "|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const row &r : rows) {
    double gbs = r.bytes / (r.ms * 1e-3) / 1e9, per = r.ms / r.k;
    fprintf(f, "| %s | %s | %.1f | %.4f | %.4f | %.0f | %.1f%% | ", r.name, r.format,
            r.bytes / 1e6, r.ms, per, gbs, 100.0 * gbs / copy_gbs);
    if (r.err >= 0)
      fprintf(f, "%.2fx | %.1e |\n", best_sp / per, r.err);
    else
      fprintf(f, "- | - |\n");
  }
}

/* ---- the benchmark ------------------------------------------------------------------------ */

typedef struct {
  int64_t n, nnz, nnz_ref, max_row;
  double csr_bytes, ell_bytes, paper_bytes, ours_bytes; /* memory of each format */
} formats;

static double copy_bandwidth(timer *t, int reps) {
  const size_t bytes = (size_t)1 << 30;
  void *src = NULL, *dst = NULL;
  CK(cudaMalloc(&src, bytes));
  CK(cudaMalloc(&dst, bytes));
  CK(cudaMemset(src, 1, bytes));
  double ms = median_ms(t, reps, [&](int) { CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, t->s)); });
  CK(cudaFree(src));
  CK(cudaFree(dst));
  return 2.0 * (double)bytes / (ms * 1e-3) / 1e9; /* read + write */
}

typedef struct {
  cusparseHandle_t h;
  cusparseSpMatDescr_t A[2];
  cusparseDnVecDescr_t x[NROT], y[NROT];
  void *buf[2];
  int32_t *rowptr, *col;
  double *val;
} sparse_state;

static const cusparseSpMVAlg_t k_algs[2] = {CUSPARSE_SPMV_CSR_ALG1, CUSPARSE_SPMV_CSR_ALG2};

static void sparse_setup(sparse_state *sp, const synth_csr *m, cudaStream_t s, double **dx,
                         double **dy) {
  std::vector<int32_t> rp((size_t)m->n + 1);
  for (int64_t i = 0; i <= m->n; i++) rp[(size_t)i] = (int32_t)m->rowptr[i];
  CK(cudaMalloc((void **)&sp->rowptr, rp.size() * 4));
  CK(cudaMalloc((void **)&sp->col, (size_t)m->nnz * 4));
  CK(cudaMalloc((void **)&sp->val, (size_t)m->nnz * 8));
  CK(cudaMemcpy(sp->rowptr, rp.data(), rp.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(sp->col, m->col, (size_t)m->nnz * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(sp->val, m->val, (size_t)m->nnz * 8, cudaMemcpyHostToDevice));
  CKS(cusparseCreate(&sp->h));
  CKS(cusparseSetStream(sp->h, s));
  for (int r = 0; r < NROT; r++) {
    CKS(cusparseCreateDnVec(&sp->x[r], m->n, dx[r], CUDA_R_64F));
    CKS(cusparseCreateDnVec(&sp->y[r], m->n, dy[r], CUDA_R_64F));
  }
  double one = 1.0, zero = 0.0;
  for (int a = 0; a < 2; a++) {
    size_t bytes = 0;
    CKS(cusparseCreateCsr(&sp->A[a], m->n, m->n, m->nnz, sp->rowptr, sp->col, sp->val,
                          CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                          CUDA_R_64F));
    CKS(cusparseSpMV_bufferSize(sp->h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, sp->A[a], sp->x[0],
                                &zero, sp->y[0], CUDA_R_64F, k_algs[a], &bytes));
    CK(cudaMalloc(&sp->buf[a], bytes ? bytes : 16));
    CKS(cusparseSpMV_preprocess(sp->h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, sp->A[a],
                                sp->x[0], &zero, sp->y[0], CUDA_R_64F, k_algs[a], sp->buf[a]));
  }
}

static void sparse_spmv(sparse_state *sp, int a, int r) {
  double one = 1.0, zero = 0.0;
  CKS(cusparseSpMV(sp->h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, sp->A[a], sp->x[r], &zero,
                   sp->y[r], CUDA_R_64F, k_algs[a], sp->buf[a]));
}

static void sparse_free(sparse_state *sp) {
  for (int a = 0; a < 2; a++) {
    cusparseDestroySpMat(sp->A[a]);
    cudaFree(sp->buf[a]);
  }
  for (int r = 0; r < NROT; r++) {
    cusparseDestroyDnVec(sp->x[r]);
    cusparseDestroyDnVec(sp->y[r]);
  }
  cusparseDestroy(sp->h);
  cudaFree(sp->rowptr);
  cudaFree(sp->col);
  cudaFree(sp->val);
}

static void format_sizes(const synth_csr *m, const cis_hyb *h, const cis_hyb_cuda_info *info,
                         formats *f) {
  f->n = m->n;
  f->nnz = m->nnz;
  f->nnz_ref = h->ell.nnz;
  f->max_row = 0;
  for (int64_t i = 0; i < m->n; i++)
    f->max_row = std::max(f->max_row, m->rowptr[i + 1] - m->rowptr[i]);
  f->csr_bytes = (double)m->nnz * 12 + (double)(m->n + 1) * 4;
  f->ell_bytes = (double)m->n * (double)f->max_row * 12;
  f->ours_bytes = (double)(info->ell_bytes + info->csr_bytes);
  /* the paper's format: the same ELL entries with 32-bit columns, the same CSR */
  double meta = (double)(h->ell.nslices + 1) * 8 + (double)h->ell.nslices * 4 + (double)m->n * 4;
  double ell_entries = ((double)info->ell_bytes - meta) / (8.0 + info->index_bits / 8);
  f->paper_bytes = ell_entries * 12 + meta + (double)info->csr_bytes;
}

static void write_md(const bench_args *a, int argc, char **argv, const cudaDeviceProp *prop,
                     const formats *f, const std::vector<row> &rows, double copy_gbs,
                     double best_sp) {
  FILE *out = fopen(a->md, "w");
  if (!out) {
    fprintf(stderr, "spmv_bench: cannot write %s\n", a->md);
    exit(1);
  }
  char date[64];
  time_t now = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
  fprintf(out, "### %lld rows, Reference %lld columns x %d per row, ~%d elsewhere\n\n",
          (long long)a->p.n, (long long)a->p.ref_cols, a->p.ref_nnz, a->p.exp_nnz);
  fprintf(out, "Device: %s (%d SMs, %.0f MB L2). Commit %s. %s.\n\nCommand: `", prop->name,
          prop->multiProcessorCount, prop->l2CacheSize / 1e6, a->commit, date);
  for (int i = 0; i < argc; i++) fprintf(out, "%s%s", i ? " " : "", argv[i]);
  fprintf(out, "`\n\nMatrix: %lld nonzeros (%lld in the Reference region), longest row %lld. "
               "Memory: CSR %.1f MB, plain ELL %.1f MB, hybrid as in the paper (32-bit) "
               "%.1f MB, ours %.1f MB. Copy bandwidth (1 GiB device-to-device, read + write): "
               "%.0f GB/s.\n\n",
          (long long)f->nnz, (long long)f->nnz_ref, (long long)f->max_row, f->csr_bytes / 1e6,
          f->ell_bytes / 1e6, f->paper_bytes / 1e6, f->ours_bytes / 1e6, copy_gbs);
  print_table(out, rows, copy_gbs, best_sp);
  fprintf(out, "\n");
  fclose(out);
}

int main(int argc, char **argv) {
  bench_args a;
  parse(argc, argv, &a);
  cudaDeviceProp prop;
  CK(cudaSetDevice(0));
  CK(cudaGetDeviceProperties(&prop, 0));
  timer t;
  CK(cudaStreamCreateWithFlags(&t.s, cudaStreamNonBlocking));
  CK(cudaEventCreate(&t.a));
  CK(cudaEventCreate(&t.b));
  t.flush_bytes = 2 * (size_t)prop.l2CacheSize;
  CK(cudaMalloc(&t.flush, t.flush_bytes));
  printf("device: %s, %d SMs, L2 %.0f MB\n", prop.name, prop.multiProcessorCount,
         prop.l2CacheSize / 1e6);
  double copy_gbs = copy_bandwidth(&t, std::max(10, a.reps / 5));
  printf("copy bandwidth: %.0f GB/s (1 GiB device-to-device, read + write)\n", copy_gbs);

  double t0 = cis_wtime();
  synth_csr m;
  cis_hyb h;
  die_on(synth_build_csr(&a.p, &m));
  die_on(synth_build_hyb(&m, a.p.ref_cols, &h));
  printf("matrix: %lld rows, %lld nonzeros, built in %.1f s\n", (long long)m.n,
         (long long)m.nnz, cis_wtime() - t0);

  const int64_t n = m.n;
  double *dx[NROT], *dy[NROT], *dX, *dY;
  std::vector<double> hx((size_t)n * 8);
  synth_fill(hx.data(), n * 8, a.p.seed + 1);
  for (int r = 0; r < NROT; r++) {
    CK(cudaMalloc((void **)&dx[r], (size_t)n * 8));
    CK(cudaMalloc((void **)&dy[r], (size_t)n * 8));
    CK(cudaMemcpy(dx[r], hx.data(), (size_t)n * 8, cudaMemcpyHostToDevice));
  }
  CK(cudaMalloc((void **)&dX, (size_t)n * 8 * 8));
  CK(cudaMalloc((void **)&dY, (size_t)n * 8 * 8));
  CK(cudaMemcpy(dX, hx.data(), (size_t)n * 8 * 8, cudaMemcpyHostToDevice));

  t0 = cis_wtime();
  cis_hyb_cuda *d = NULL;
  cis_hyb_cuda_info info;
  die_on(cis_hyb_cuda_create(&h, 0, CIS_HYB_CUDA_PAPER, t.s, &d));
  cis_hyb_cuda_get_info(d, &info);
  sparse_state sp;
  sparse_setup(&sp, &m, t.s, dx, dy);
  printf("uploaded in %.1f s: ours %d-bit ELL columns, %d-lane sub-warps\n", cis_wtime() - t0,
         info.index_bits, info.subwarp);

  formats f;
  format_sizes(&m, &h, &info, &f);
  double xy = 2.0 * (double)n * 8;
  double ours_b = f.ours_bytes + xy, paper_b = f.paper_bytes + xy, csr_b = f.csr_bytes + xy;

  /* reference: ALG1 on x_0 (and on each column of X for the multi-vector check) */
  std::vector<double> yref((size_t)n * 8);
  for (int j = 0; j < 8; j++) {
    CK(cudaMemcpyAsync(dx[1], dX + (int64_t)j * n, (size_t)n * 8, cudaMemcpyDeviceToDevice, t.s));
    sparse_spmv(&sp, 0, 1);
    CK(cudaMemcpyAsync(yref.data() + (size_t)j * n, dy[1], (size_t)n * 8,
                       cudaMemcpyDeviceToHost, t.s));
  }
  CK(cudaStreamSynchronize(t.s));
  CK(cudaMemcpy(dx[1], hx.data(), (size_t)n * 8, cudaMemcpyHostToDevice));

  std::vector<row> rows;
  auto add = [&](const char *name, const char *fmt, double bytes, int k, double ms, double err) {
    row r;
    snprintf(r.name, sizeof r.name, "%s", name);
    snprintf(r.format, sizeof r.format, "%s", fmt);
    r.bytes = bytes, r.k = k, r.ms = ms, r.err = err;
    rows.push_back(r);
  };
  /* the NROT x buffers hold the same vector at different addresses */
  double ms;
  ms = median_ms(&t, a.reps, [&](int r) { sparse_spmv(&sp, 0, r % NROT); });
  sparse_spmv(&sp, 0, 0);
  add("cuSPARSE CSR ALG1", "CSR, 32-bit", csr_b, 1, ms, device_rel_err(dy[0], yref.data(), n));
  double alg1 = ms;
  ms = median_ms(&t, a.reps, [&](int r) { sparse_spmv(&sp, 1, r % NROT); });
  sparse_spmv(&sp, 1, 0);
  add("cuSPARSE CSR ALG2", "CSR, 32-bit", csr_b, 1, ms, device_rel_err(dy[0], yref.data(), n));
  double best_sp = std::min(alg1, ms);
  ms = median_ms(&t, a.reps, [&](int r) {
    die_on(cis_hyb_cuda_apply_paper(d, dx[r % NROT], dy[r % NROT]));
  });
  die_on(cis_hyb_cuda_apply_paper(d, dx[0], dy[0]));
  add("paper, Algorithm 7", "hybrid, 32-bit ELL", paper_b, 1, ms,
      device_rel_err(dy[0], yref.data(), n));
  char fmt[48];
  snprintf(fmt, sizeof fmt, "hybrid, %d-bit ELL", info.index_bits);
  auto time_ours = [&](const char *name) {
    double t1 = median_ms(&t, a.reps, [&](int r) {
      die_on(cis_hyb_cuda_apply(d, 1, dx[r % NROT], dy[r % NROT]));
    });
    die_on(cis_hyb_cuda_apply(d, 1, dx[0], dy[0]));
    add(name, fmt, ours_b, 1, t1, device_rel_err(dy[0], yref.data(), n));
  };
  time_ours("ours");
  /* the other sub-warp widths, for the record of the choice made at upload */
  for (int w = 8; w <= 32; w *= 2) {
    if (w == info.subwarp) continue;
    char name[64];
    snprintf(name, sizeof name, "ours, %d lanes per row", w);
    die_on(cis_hyb_cuda_set_subwarp(d, w));
    time_ours(name);
  }
  die_on(cis_hyb_cuda_set_subwarp(d, info.subwarp));
  for (int k = 4; k <= 8; k += 4) {
    char name[64];
    ms = median_ms(&t, a.reps, [&](int) { die_on(cis_hyb_cuda_apply(d, k, dX, dY)); });
    die_on(cis_hyb_cuda_apply(d, k, dX, dY));
    double err = device_rel_err(dY, yref.data(), n * k);
    snprintf(name, sizeof name, "ours, multi-vector k=%d", k);
    add(name, fmt, f.ours_bytes + k * xy, k, ms, err);
  }
  die_on(cis_hyb_cuda_set_group(d, 4));
  ms = median_ms(&t, a.reps, [&](int) { die_on(cis_hyb_cuda_apply(d, 8, dX, dY)); });
  die_on(cis_hyb_cuda_apply(d, 8, dX, dY));
  add("ours, k=8 as 2 passes of k=4", fmt, 2 * f.ours_bytes + 8 * xy, 8, ms,
      device_rel_err(dY, yref.data(), n * 8));
  die_on(cis_hyb_cuda_set_group(d, CIS_HYB_CUDA_MAX_K));
  time_ours("ours, timed again (spread)");
  CK(cudaStreamSynchronize(t.s));

  printf("\nmemory: CSR %.1f MB, plain ELL %.1f MB, hybrid (paper, 32-bit) %.1f MB, ours %.1f MB\n",
         f.csr_bytes / 1e6, f.ell_bytes / 1e6, f.paper_bytes / 1e6, f.ours_bytes / 1e6);
  printf("floor for our bytes at copy bandwidth: %.4f ms\n\n", ours_b / (copy_gbs * 1e9) * 1e3);
  print_table(stdout, rows, copy_gbs, best_sp);
  if (a.md) write_md(&a, argc, argv, &prop, &f, rows, copy_gbs, best_sp);

  sparse_free(&sp);
  cis_hyb_cuda_destroy(&d);
  for (int r = 0; r < NROT; r++) {
    cudaFree(dx[r]);
    cudaFree(dy[r]);
  }
  cudaFree(dX);
  cudaFree(dY);
  cudaFree(t.flush);
  cis_hyb_free(&h);
  synth_csr_free(&m);
  return 0;
}
