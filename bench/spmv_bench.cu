/* spmv_bench: our hybrid ELL+CSR kernels against the 2018 paper's kernel, cuSPARSE CSR SpMV
 * (ALG1, ALG2) and a device-to-device copy, on the paper's synthetic CI matrix or on the CI
 * Hamiltonian of an FCIDUMP, in one run.
 *
 * usage: spmv_bench [--rows N] [--ref-cols B] [--ref-nnz R] [--exp-nnz E] [--seed S]
 *                   [--fcidump FILE [--level L] [--ref-size N] [--stream 1] [--order rcm]]
 *                   [--chunks E] [--reps N] [--clean-flush 0|1] [--commit HASH] [--md FILE]
 * Defaults: the paper's matrix (32,768 rows, Reference region 3,276 columns with 655 nonzeros
 * per row, ~1% density elsewhere = 295 per row). With --fcidump: the Hamiltonian that cisolve
 * builds (cis_space_build + cis_hmat_build_ci, every Expansion block cached) of the FCI space
 * (--level 0, the default) or of all determinants within L excitations of the reference
 * (--level 3 = CISDT), Reference region automatic unless --ref-size. A CI matrix is also
 * applied as its upper triangle alone (the transpose by atomics), and with --stream 1 with no
 * Expansion block resident (streamed from the host cache, then regenerated), timed by parts.
 * --order rcm renumbers the Expansion determinants of the CI matrix by reverse Cuthill-McKee
 * (the Reference rows keep their places) before anything is timed, for every kernel alike: an
 * experiment on the order of the rows (docs/design-notes.md); cisolve keeps its own order.
 * --chunks E (matrices of up to 65,536 rows) also times another layout, an experiment: the whole
 * matrix as one CSR with 16-bit columns, read in fixed chunks of 32 x E entries, one warp each,
 * across row boundaries, with plain and with coded values (chunk_kernel, chunk_coded_kernel).
 * cuSPARSE gets the same matrix as one CSR built on the device from the hybrid matrix (64-bit
 * row offsets past 2^31 nonzeros). Our kernels run on two uploads of the matrix: "plain values"
 * (every entry with its 8-byte value, in the hybrid layout: CIS_HYB_CUDA_PLAIN and
 * CIS_HYB_CUDA_NO_SELL) and, when the values repeat (a CI matrix), "coded values"
 * (spmv/valdict.h; forced with CIS_HYB_CUDA_CODED, while cisolve codes only matrices larger
 * than twice the L2 cache). The plain upload is also timed with the Reference region in
 * column tiles (CIS_HYB_CUDA_TILED) where cisolve keeps one sliced ELL block. Then the whole
 * matrix is uploaded as SELL-32, a row per thread (CIS_HYB_CUDA_SELL, docs/gpu.md), with coded
 * values where they repeat and with plain ones: rows "ours, coded SELL-32" and "ours, SELL-32",
 * each also with the launch the upload did not keep (a barrier every 32 entries or none).
 * cisolve uses that layout for a matrix of 262144 rows or more (spmv/hyb_cuda_sell.cu,
 * hyb_sell_layout). Which of the rows is cisolve's product depends on the matrix. The paper's
 * kernel reads its own copy of the matrix (bench/paper_kernel.cu).
 *
 * Each timing is the median of --reps runs, each between two events on one stream, each after
 * the L2 cache is flushed and with x and y rotated among 4 buffers. The flush is a memset of
 * twice the L2's size, then a read of another buffer of that size, so that L2 holds clean lines
 * of other data, as in a solver's loop, where L2 holds what the previous product read. The
 * memset alone (--clean-flush 0; the tables in docs/BENCHMARKS.md say which they used) leaves
 * L2 full of dirty lines that the timed kernel writes back as it reads: up to 63 MB more DRAM
 * traffic, which weighs most on the kernel that moves the fewest bytes. With the clean flush,
 * cuSPARSE's ALG1 and each of our uploads' single-vector product are timed once more after the
 * memset alone (rows "L2 left dirty by the flush"; their "vs best cuSPARSE" column compares
 * them with the clean-flush cuSPARSE), so that each run shows both.
 * GB/s counts each format's own bytes: its arrays read once, x read once, y written once.
 * Rows "reading ... bytes alone" time a read of as many bytes as our upload moves, as one
 * array with nothing else to do: the bound of any product of that size, which for a short
 * product lies well below the copy rate of 1 GiB.
 * The markdown table goes to stdout and, with --md, to FILE with the device, commit and date.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <omp.h>

#include <algorithm>
#include <vector>

extern "C" {
#include "bench/synth.h"
#include "base/util.h"
#include "hamiltonian/hmat.h"
#include "hamiltonian/space.h"
#include "io/input.h"
#include "spmv/valdict.h"
}
#include "base/cuda_check.cuh"
#include "spmv/hyb_cuda.h"
#include "bench/paper_kernel.h"

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
  const char *fcidump; /* NULL: the synthetic matrix */
  int level;           /* 0: FCI; else truncated CI of that excitation level */
  int64_t ref_size;    /* 0: automatic */
  int order;           /* 1: Expansion rows renumbered by reverse Cuthill-McKee (--order rcm) */
  int stream;          /* CI matrices: also time streamed products (--stream 1) */
  int chunks;          /* experiment: CSR in fixed chunks of 32 x E entries (--chunks 2|4|8) */
  int clean_flush;     /* 1 (default): L2 left holding clean lines before each timing; 0: dirty */
} bench_args;

static void usage_exit(const char *why) {
  fprintf(stderr,
          "spmv_bench: %s\nusage: spmv_bench [--rows N] [--ref-cols B] [--ref-nnz R] "
          "[--exp-nnz E] [--seed S] [--fcidump FILE [--level L] [--ref-size N] [--stream 1] "
          "[--order rcm]] "
          "[--chunks 2|4|8] [--reps N] [--clean-flush 0|1] "
          "[--commit HASH] [--md FILE]\n",
          why);
  exit(1);
}

static void parse(int argc, char **argv, bench_args *a) {
  memset(a, 0, sizeof *a);
  a->p.n = 32768;
  a->p.ref_cols = 3276;
  a->p.ref_nnz = 655;
  a->p.exp_nnz = 295;
  a->p.seed = 2018;
  a->reps = 50;
  a->clean_flush = 1;
  a->commit = "unknown";
  a->md = NULL;
  a->fcidump = NULL;
  a->level = 0;
  a->ref_size = 0;
  a->stream = 0;
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
    if (strcmp(o, "--fcidump") == 0) {
      a->fcidump = v;
      continue;
    }
    if (strcmp(o, "--order") == 0) {
      if (strcmp(v, "rcm") != 0 && strcmp(v, "ours") != 0) usage_exit("--order: rcm or ours");
      a->order = strcmp(v, "rcm") == 0;
      continue;
    }
    die_on(cis_parse_int(v, o, &x));
    if (strcmp(o, "--rows") == 0) a->p.n = x;
    else if (strcmp(o, "--ref-cols") == 0) a->p.ref_cols = x;
    else if (strcmp(o, "--ref-nnz") == 0) a->p.ref_nnz = (int)x;
    else if (strcmp(o, "--exp-nnz") == 0) a->p.exp_nnz = (int)x;
    else if (strcmp(o, "--reps") == 0) a->reps = (int)x;
    else if (strcmp(o, "--seed") == 0) a->p.seed = (uint64_t)x;
    else if (strcmp(o, "--level") == 0) a->level = (int)x;
    else if (strcmp(o, "--ref-size") == 0) a->ref_size = x;
    else if (strcmp(o, "--stream") == 0) a->stream = (int)x;
    else if (strcmp(o, "--chunks") == 0) {
      if (x != 2 && x != 4 && x != 8) usage_exit("--chunks: 2, 4 or 8 entries per lane");
      a->chunks = (int)x;
    }
    else if (strcmp(o, "--clean-flush") == 0) a->clean_flush = (int)x;
    else usage_exit("unknown option");
  }
  if (a->reps < 3) usage_exit("--reps must be at least 3");
  if (a->order && (!a->fcidump || a->stream))
    usage_exit("--order rcm needs --fcidump, not --stream");
}

/* ---- timing ------------------------------------------------------------------------------ */

typedef struct {
  cudaStream_t s;
  cudaEvent_t a, b;
  void *flush, *clean; /* clean: NULL with --clean-flush 0 */
  size_t flush_bytes;
  int *sink;
} timer;

/* Reads n doubles (and stores only if their sum is NaN, which it never is): fills L2 with
 * clean lines. */
__global__ void read_kernel(const double *__restrict__ p, size_t n, int *sink) {
  double s = 0.0;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    s += p[i];
  if (s != s) *sink = 1;
}

/* Reads n 16-byte words with streaming loads, four in flight per thread (and stores only if
 * their sum is NaN): the time of moving a product's bytes with nothing else to do. */
__global__ void stream_kernel(const double2 *__restrict__ p, size_t n, int *sink) {
  double s = 0.0;
  const size_t step = (size_t)gridDim.x * blockDim.x;
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (; i + 3 * step < n; i += 4 * step) {
    double2 a = __ldcs(p + i), b = __ldcs(p + i + step), c = __ldcs(p + i + 2 * step),
            d = __ldcs(p + i + 3 * step);
    s += (a.x + a.y) + (b.x + b.y) + (c.x + c.y) + (d.x + d.y);
  }
  for (; i < n; i += step) {
    double2 a = __ldcs(p + i);
    s += a.x + a.y;
  }
  if (s != s) *sink = 1;
}

template <class F>
static double median_ms(timer *t, int reps, F f) {
  std::vector<float> ms;
  for (int r = 0; r < 3; r++) f(r);
  for (int r = 0; r < reps; r++) {
    CK(cudaMemsetAsync(t->flush, r & 0xff, t->flush_bytes, t->s));
    if (t->clean) {
      /* the memset left L2 full of dirty lines, which the timed kernel would write back */
      read_kernel<<<1024, 256, 0, t->s>>>((const double *)t->clean, t->flush_bytes / 8, t->sink);
      CK(cudaGetLastError());
    }
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
    else if (r.err != r.err) /* no product: a ratio, no error */
      fprintf(f, "%.2fx | - |\n", best_sp / per);
    else
      fprintf(f, "- | - |\n");
  }
}

/* ---- the benchmark ------------------------------------------------------------------------ */

typedef struct {
  int64_t n, nnz, nnz_ref, max_row;
  int rp64, col64; /* cuSPARSE's index widths */
  double csr_bytes, ell_bytes, paper_bytes, ours_bytes; /* memory of each format */
  double coded_bytes;    /* ours with coded values (0: the values do not repeat) */
  int64_t coded_nnz;
  int dict_size;
  char tuned[640]; /* the launches chosen at upload (cis_hyb_cuda_info.tune_ms) */
} formats;

/* Append to f->tuned the launch an upload chose and the times of the others. */
static void note_tuned(formats *f, const cis_hyb_cuda_info *in) {
  size_t len = strlen(f->tuned);
  int k = in->tune_kept;
  if (in->tile_cols)
    len += (size_t)snprintf(f->tuned + len, sizeof f->tuned - len,
                            "%s%s values, Reference region in tiles of %d columns, %d warps per "
                            "multiprocessor (%.4f ms", len ? "; " : "",
                            in->dict_size ? "coded" : "plain", in->tile_cols, in->tune_warps[k],
                            in->tune_ms[k]);
  else if (in->dict_size)
    len += (size_t)snprintf(f->tuned + len, sizeof f->tuned - len,
                            "%scoded values in blocks of %d threads (%.4f ms", len ? "; " : "",
                            in->coded_block, in->tune_ms[k]);
  else
    len += (size_t)snprintf(f->tuned + len, sizeof f->tuned - len,
                            "%splain values with %d warps per multiprocessor (%.4f ms",
                            len ? "; " : "", in->tune_warps[k], in->tune_ms[k]);
  for (int c = 0; c < in->tune_candidates && len < sizeof f->tuned; c++)
    if (c != k)
      len += (size_t)snprintf(f->tuned + len, sizeof f->tuned - len, ", %.4f ms with %d %s",
                              in->tune_ms[c], in->dict_size ? (c ? 256 : 1024) : in->tune_warps[c],
                              in->dict_size ? "threads per block" : "warps");
  if (len < sizeof f->tuned)
    snprintf(f->tuned + len, sizeof f->tuned - len, "), 8 vectors in %s",
             in->group < 8 ? "two passes of 4" : "one pass");
}

/* The matrix under test: a hybrid matrix (synthetic, or a CI Hamiltonian built by cisolve). */
typedef struct {
  cis_hyb syn;       /* the synthetic matrix */
  cis_hyb one;       /* the same with no Reference region (n <= 65536 only) */
  cis_problem prob;  /* the CI matrix's integrals, */
  cis_space *space;  /* its determinant space */
  cis_hmat *hm;      /* and its matrix */
  const cis_hyb *h;  /* the one in use */
  char title[512];
} bench_matrix;

static void matrix_synthetic(const bench_args *a, bench_matrix *bm) {
  synth_csr m;
  die_on(synth_build_csr(&a->p, &m));
  die_on(synth_build_hyb(&m, a->p.ref_cols, &bm->syn));
  if (a->p.n <= 65536) die_on(synth_build_hyb(&m, 0, &bm->one));
  synth_csr_free(&m);
  bm->h = &bm->syn;
  snprintf(bm->title, sizeof bm->title,
           "%lld rows, Reference %lld columns x %d per row, ~%d elsewhere", (long long)a->p.n,
           (long long)a->p.ref_cols, a->p.ref_nnz, a->p.exp_nnz);
}

/* Reverse Cuthill-McKee over the Expansion rows [nref, n) of a symmetric CSR (the Reference
 * rows keep their places): perm[new] = old. Each component from a row of least degree,
 * neighbours visited by increasing degree. */
static void order_rcm(const cis_csr *m, int64_t nref, std::vector<int64_t> &perm) {
  const int64_t n = m->n;
  std::vector<int64_t> deg((size_t)n, 0), order, nb;
  std::vector<char> seen((size_t)n, 0);
  for (int64_t i = nref; i < n; i++)
    for (int64_t p = m->rowptr[i]; p < m->rowptr[i + 1]; p++)
      deg[(size_t)i] += m->col[p] >= nref && m->col[p] != i;
  std::vector<int64_t> byd;
  for (int64_t i = nref; i < n; i++) byd.push_back(i);
  std::stable_sort(byd.begin(), byd.end(),
                   [&](int64_t u, int64_t v) { return deg[(size_t)u] < deg[(size_t)v]; });
  order.reserve((size_t)(n - nref));
  for (int64_t s : byd) {
    if (seen[(size_t)s]) continue;
    size_t head = order.size();
    order.push_back(s);
    seen[(size_t)s] = 1;
    for (; head < order.size(); head++) {
      int64_t u = order[head];
      nb.clear();
      for (int64_t p = m->rowptr[u]; p < m->rowptr[u + 1]; p++) {
        int64_t c = m->col[p];
        if (c >= nref && !seen[(size_t)c]) {
          seen[(size_t)c] = 1;
          nb.push_back(c);
        }
      }
      std::stable_sort(nb.begin(), nb.end(),
                       [&](int64_t u2, int64_t v) { return deg[(size_t)u2] < deg[(size_t)v]; });
      order.insert(order.end(), nb.begin(), nb.end());
    }
  }
  perm.resize((size_t)n);
  for (int64_t i = 0; i < nref; i++) perm[(size_t)i] = i;
  for (int64_t k = 0; k < n - nref; k++)
    perm[(size_t)(nref + k)] = order[(size_t)(n - nref - 1 - k)];
}

/* bm's CI matrix renumbered (experiment: --order rcm): a fully cached hybrid in bm->syn. */
static void matrix_renumber(bench_matrix *bm) {
  cis_csr m, r;
  die_on(cis_hmat_to_csr(bm->hm, &m));
  const int64_t n = m.n, nref = bm->hm->nref;
  std::vector<int64_t> perm, inv((size_t)n);
  order_rcm(&m, nref, perm);
  for (int64_t i = 0; i < n; i++) inv[(size_t)perm[(size_t)i]] = i;
  r.n = n;
  r.nnz = m.nnz;
  die_on(cis_malloc(&r.rowptr, (size_t)n + 1, sizeof(int64_t), "renumbered offsets"));
  die_on(cis_malloc(&r.col, (size_t)m.nnz, sizeof(int32_t), "renumbered columns"));
  die_on(cis_malloc(&r.val, (size_t)m.nnz, sizeof(double), "renumbered values"));
  r.rowptr[0] = 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t o = perm[(size_t)i], len = m.rowptr[o + 1] - m.rowptr[o];
    r.rowptr[i + 1] = r.rowptr[i] + len;
    for (int64_t k = 0; k < len; k++) {
      r.col[r.rowptr[i] + k] = (int32_t)inv[(size_t)m.col[m.rowptr[o] + k]];
      r.val[r.rowptr[i] + k] = m.val[m.rowptr[o] + k];
    }
  }
  die_on(cis_csr_sort_rows(&r));
  die_on(cis_hyb_from_csr(n, r.rowptr, r.col, r.val, nref, bm->hm->hyb.block_rows, 0, &bm->syn));
  cis_csr_free(&m);
  cis_csr_free(&r);
  bm->h = &bm->syn;
}

static void matrix_ci(const bench_args *a, bench_matrix *bm) {
  cis_problem &prob = bm->prob;
  die_on(cis_input_read(a->fcidump, &prob));
  if (prob.kind != CIS_PROBLEM_INTEGRALS) usage_exit("--fcidump: the file holds no integrals");
  prob.space.kind = a->level > 0 ? CIS_SPACE_TRUNCATED : CIS_SPACE_FCI;
  prob.space.level = a->level;
  cis_space_opts so = {a->ref_size, 0, 0};
  die_on(cis_space_build(&prob.ints, &prob.space, &so, &bm->space));
  cis_hmat_opts ho = {(int64_t)1 << 60, 0, 0, 0, 0}; /* cache every block */
  die_on(cis_hmat_build_ci(&prob.ints, bm->space, &ho, &bm->hm));
  bm->h = &bm->hm->hyb;
  if (a->order) matrix_renumber(bm);
  const char *base = strrchr(a->fcidump, '/');
  char space[32];
  if (a->level > 0)
    snprintf(space, sizeof space, "CI up to %d-fold excitations", a->level);
  else
    snprintf(space, sizeof space, "FCI");
  snprintf(bm->title, sizeof bm->title, "%s, %s: %lld determinants, Reference region %lld%s",
           base ? base + 1 : a->fcidump, space, (long long)bm->h->n,
           (long long)bm->h->ell.boundary,
           a->order ? ", Expansion rows in reverse Cuthill-McKee order" : "");
}

static void matrix_free(bench_matrix *bm) {
  cis_hyb_free(&bm->syn); /* the synthetic matrix, or the renumbered CI one (--order rcm) */
  if (bm->hm) {
    cis_hmat_destroy(&bm->hm);
    cis_space_destroy(&bm->space);
    cis_problem_free(&bm->prob);
  } else {
    cis_hyb_free(&bm->one);
  }
}

/* Row offsets of the whole matrix (ELL part then Expansion part of each row). */
static void csr_offsets(const cis_hyb *h, std::vector<int64_t> &rp, int64_t *max_row) {
  rp.assign((size_t)h->n + 1, 0);
  *max_row = 0;
  for (int64_t b = 0; b < h->nblocks; b++) {
    const cis_csr_block *blk = &h->blocks[b];
    if (!cis_csr_block_cached(blk)) usage_exit("the benchmark needs every block cached");
    for (int64_t l = 0; l < blk->nrows; l++) {
      int64_t r = blk->row0 + l, len = h->ell.row_len[r] + blk->rowptr[l + 1] - blk->rowptr[l];
      rp[(size_t)r + 1] = rp[(size_t)r] + len;
      *max_row = std::max(*max_row, len);
    }
  }
}

/* Row r's entries (ELL part, then Expansion part) into col/val; returns their count. */
static int64_t csr_row(const cis_hyb *h, int64_t r, int32_t *col, double *val) {
  const cis_ell *e = &h->ell;
  int64_t q = 0, base = cis_ell_row_start(e, r);
  for (int32_t t = 0; t < e->row_len[r]; t++, q++) {
    col[q] = e->col[base + t];
    val[q] = e->val[base + t];
  }
  const cis_csr_block *blk = &h->blocks[r / h->block_rows];
  for (int64_t p = blk->rowptr[r - blk->row0]; p < blk->rowptr[r - blk->row0 + 1]; p++, q++) {
    col[q] = blk->col[p];
    val[q] = blk->val[p];
  }
  return q;
}

/* Rows [r0, r1) as CSR entries into col/val (offsets relative to rp[r0]). */
static void csr_pack(const cis_hyb *h, const int64_t *rp, int64_t r0, int64_t r1, int32_t *col,
                     double *val) {
#pragma omp parallel for schedule(dynamic, 256)
  for (int64_t r = r0; r < r1; r++) csr_row(h, r, col + (rp[r] - rp[r0]), val + (rp[r] - rp[r0]));
}

__global__ void widen_kernel(const int32_t *in, int64_t *out, int64_t n) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    out[i] = in[i];
}

/* The whole matrix as one CSR on the device, for cuSPARSE: 32-bit offsets and columns up to
 * 2^31 nonzeros, else 64-bit offsets (columns 32-bit where cuSPARSE takes the mix). */
typedef struct {
  int64_t n, nnz, max_row;
  int rp64, col64;
  void *rowptr, *col;
  double *val;
} dev_csr;

static void csr_upload(const cis_hyb *h, dev_csr *c) {
  std::vector<int64_t> rp;
  csr_offsets(h, rp, &c->max_row);
  c->n = h->n;
  c->nnz = rp[(size_t)h->n];
  c->rp64 = c->nnz > INT32_MAX;
  c->col64 = 0;
  if (c->rp64) {
    CK(cudaMalloc(&c->rowptr, rp.size() * 8));
    CK(cudaMemcpy(c->rowptr, rp.data(), rp.size() * 8, cudaMemcpyHostToDevice));
  } else {
    std::vector<int32_t> rp32(rp.begin(), rp.end());
    CK(cudaMalloc(&c->rowptr, rp32.size() * 4));
    CK(cudaMemcpy(c->rowptr, rp32.data(), rp32.size() * 4, cudaMemcpyHostToDevice));
  }
  CK(cudaMalloc(&c->col, (size_t)c->nnz * 4 + 16));
  CK(cudaMalloc((void **)&c->val, (size_t)c->nnz * 8 + 16));
  const int64_t chunk = std::max((int64_t)1 << 25, c->max_row);
  char *stage = NULL;
  CK(cudaMallocHost((void **)&stage, (size_t)chunk * 12));
  int32_t *col = (int32_t *)stage;
  double *val = (double *)(stage + (size_t)chunk * 4);
  for (int64_t r0 = 0; r0 < h->n;) {
    int64_t r1 = r0 + 1;
    while (r1 < h->n && rp[(size_t)r1 + 1] - rp[(size_t)r0] <= chunk) r1++;
    int64_t m = rp[(size_t)r1] - rp[(size_t)r0];
    csr_pack(h, rp.data(), r0, r1, col, val);
    CK(cudaMemcpy((int32_t *)c->col + rp[(size_t)r0], col, (size_t)m * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(c->val + rp[(size_t)r0], val, (size_t)m * 8, cudaMemcpyHostToDevice));
    r0 = r1;
  }
  CK(cudaFreeHost(stage));
}

/* cuSPARSE refused 64-bit offsets with 32-bit columns: widen the columns on the device. */
static void csr_widen(dev_csr *c) {
  int64_t *c64 = NULL;
  CK(cudaMalloc((void **)&c64, (size_t)c->nnz * 8 + 16));
  widen_kernel<<<4096, 256>>>((const int32_t *)c->col, c64, c->nnz);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  CK(cudaFree(c->col));
  c->col = c64;
  c->col64 = 1;
}

/* ---- an experiment: the CSR read in fixed chunks of entries (--chunks E) ----
 * A warp takes 32 x E consecutive entries, whatever rows they belong to: it loads them, and
 * gathers x, with no row offsets to wait for first; the offsets of the chunk's rows come in
 * alongside (from the row of its first entry, found at setup) and the products are summed row
 * by row across the warp. A row within one chunk is stored, a row across chunks added
 * atomically into y, which is zeroed first (inside the timing). */

/* The products of one chunk (prod[j]: entry base + 32 j + lane) summed row by row from row r
 * (the row of entry base) and written: stored where the row lies inside the chunk, else added
 * atomically (y zeroed first). Waits for the zeroing of y before the first write. */
template <int E>
__device__ __forceinline__ void chunk_rows(const double (&prod)[E],
                                           const int32_t *__restrict__ rowptr, int r,
                                           int64_t base, int64_t nnz, int lane,
                                           double *__restrict__ y) {
  const int64_t end = base + 32 * E < nnz ? base + 32 * E : nnz;
  int64_t rs = __ldg(rowptr + r);
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  for (;;) {
    int64_t re = __ldg(rowptr + r + 1);
    double sum = 0.0;
#pragma unroll
    for (int j = 0; j < E; j++) {
      int64_t p = base + j * 32 + lane;
      if (p >= rs && p < re) sum += prod[j];
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
    if (lane == 0 && re > rs) {
      if (rs >= base && re <= end)
        y[r] = sum;
      else
        atomicAdd(y + r, sum);
    }
    if (re >= end) break;
    rs = re;
    r++;
  }
}

template <int E>
__global__ void chunk_kernel(const int32_t *__restrict__ rowptr, const uint16_t *__restrict__ col,
                             const double *__restrict__ val, int64_t nnz,
                             const int32_t *__restrict__ chunk_row, const double *__restrict__ x,
                             double *__restrict__ y) {
  const int64_t w = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  const int64_t base = w * 32 * E;
  if (base >= nnz) return;
  const int r = __ldg(chunk_row + w);
  double prod[E];
#pragma unroll
  for (int j = 0; j < E; j++) {
    int64_t p = base + j * 32 + lane;
    double v = 0.0;
    int c = 0;
    if (p < nnz) {
      v = __ldcs(val + p);
      c = __ldcs(col + p);
    }
    prod[j] = v * __ldg(x + c);
  }
  chunk_rows<E>(prod, rowptr, r, base, nnz, lane, y);
}

/* The same with coded values (spmv/valdict.h): code 0x7FFF (any sign) marks an entry whose
 * value is the next of the chunk's escaped values, esc[esc_off[chunk] + ...] in entry order. */
template <int E>
__global__ void chunk_coded_kernel(const int32_t *__restrict__ rowptr,
                                   const uint16_t *__restrict__ col,
                                   const uint16_t *__restrict__ code,
                                   const double *__restrict__ table, const double *__restrict__ esc,
                                   const int32_t *__restrict__ esc_off, int64_t nnz,
                                   const int32_t *__restrict__ chunk_row,
                                   const double *__restrict__ x, double *__restrict__ y) {
  const int64_t w = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  const int64_t base = w * 32 * E;
  if (base >= nnz) return;
  const int r = __ldg(chunk_row + w);
  const int eo = __ldg(esc_off + w);
  const unsigned below = (1u << lane) - 1;
  unsigned q[E];
  int c[E];
#pragma unroll
  for (int j = 0; j < E; j++) {
    int64_t p = base + j * 32 + lane;
    q[j] = 0;
    c[j] = 0;
    if (p < nnz) {
      q[j] = __ldcs(code + p);
      c[j] = __ldcs(col + p);
    }
  }
  double prod[E];
  int seen = 0;
#pragma unroll
  for (int j = 0; j < E; j++) {
    bool e = (q[j] & 0x7FFFu) == 0x7FFFu;
    unsigned bal = __ballot_sync(0xffffffffu, e);
    double v;
    if (e) {
      v = __ldg(esc + eo + seen + __popc(bal & below));
    } else {
      unsigned long long b = __double_as_longlong(__ldg(table + (q[j] & 0x7FFFu)));
      v = __longlong_as_double(b | ((unsigned long long)(q[j] >> 15) << 63));
    }
    seen += __popc(bal);
    prod[j] = v * __ldg(x + c[j]);
  }
  chunk_rows<E>(prod, rowptr, r, base, nnz, lane, y);
}

/* y = 0, letting the chunk kernel start at once (it waits before it writes). */
__global__ void zero_kernel(double *y, int64_t n) {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    y[i] = 0.0;
}

__global__ void narrow_kernel(const int32_t *in, uint16_t *out, int64_t n) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    out[i] = (uint16_t)in[i];
}

/* ---- the symmetric half (an experiment: half the matrix bytes, atomics for the transpose) ---- */

/* Upper triangle (columns >= row) of a symmetric hybrid matrix as CSR on the device. */
typedef struct {
  int64_t n, nnz;
  int64_t *rowptr;
  int32_t *col;
  double *val;
} upper_csr;

static void upper_upload(const cis_hyb *h, upper_csr *u) {
  std::vector<int64_t> full, rp((size_t)h->n + 1, 0);
  int64_t max_row = 0;
  csr_offsets(h, full, &max_row);
  std::vector<int32_t> col((size_t)max_row);
  std::vector<double> val((size_t)max_row);
  /* rows are short: pack each row whole, keep its upper part */
  std::vector<int32_t> ucol;
  std::vector<double> uval;
  ucol.reserve((size_t)(full[(size_t)h->n] / 2 + h->n));
  uval.reserve(ucol.capacity());
  for (int64_t r = 0; r < h->n; r++) {
    int64_t len = csr_row(h, r, col.data(), val.data());
    for (int64_t q = 0; q < len; q++)
      if (col[(size_t)q] >= r) {
        ucol.push_back(col[(size_t)q]);
        uval.push_back(val[(size_t)q]);
      }
    rp[(size_t)r + 1] = (int64_t)ucol.size();
  }
  u->n = h->n;
  u->nnz = (int64_t)ucol.size();
  CK(cudaMalloc((void **)&u->rowptr, rp.size() * 8));
  CK(cudaMalloc((void **)&u->col, ucol.size() * 4 + 16));
  CK(cudaMalloc((void **)&u->val, uval.size() * 8 + 16));
  CK(cudaMemcpy(u->rowptr, rp.data(), rp.size() * 8, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(u->col, ucol.data(), ucol.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(u->val, uval.data(), uval.size() * 8, cudaMemcpyHostToDevice));
}

/* y += U x + U^T x - diag(U) x, y zeroed before: W lanes per row, the row's own sum reduced
 * and added once, the transpose scattered with atomicAdd (y stays in L2). */
template <int W>
__global__ void upper_kernel(upper_csr u, const double *__restrict__ x, double *y) {
  int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x, row = t / W;
  int lane = (int)(t % W);
  int64_t p0 = 0, p1 = 0;
  double xi = 0.0, acc = 0.0;
  if (row < u.n) {
    p0 = u.rowptr[row];
    p1 = u.rowptr[row + 1];
    xi = x[row];
  }
  for (int64_t p = p0 + lane; p < p1; p += W) {
    int32_t j = __ldcs(u.col + p);
    double v = __ldcs(u.val + p);
    acc += v * __ldg(x + j);
    if (j != row) atomicAdd(y + j, v * xi);
  }
#pragma unroll
  for (int off = W / 2; off > 0; off /= 2) acc += __shfl_down_sync(0xffffffffu, acc, off, W);
  if (lane == 0 && row < u.n) atomicAdd(y + row, acc);
}

static void upper_apply(const upper_csr *u, cudaStream_t s, const double *x, double *y) {
  CK(cudaMemsetAsync(y, 0, (size_t)u->n * 8, s));
  const int W = 16, threads = 256;
  unsigned g = (unsigned)((u->n * W + threads - 1) / threads);
  upper_kernel<W><<<g, threads, 0, s>>>(*u, x, y);
  CK(cudaGetLastError());
}

static void upper_free(upper_csr *u) {
  cudaFree(u->rowptr);
  cudaFree(u->col);
  cudaFree(u->val);
}

/* ---- streamed products: where the time goes when the Expansion space is not resident ------- */

/* Products of `h` with every Expansion block streamed (from the host cache, or regenerated when
 * h caches none), timed by the library (cis_hyb_cuda_get_times). */
static void streamed_report(const char *what, const cis_hyb *h, cudaStream_t s, const double *x,
                            double *y, const double *yref, FILE *md) {
  cis_hyb_cuda *d = NULL;
  cis_hyb_cuda_info in;
  cis_hyb_cuda_times t0, t1;
  die_on(cis_hyb_cuda_create(h, 0, CIS_HYB_CUDA_NO_CACHE, s, &d));
  cis_hyb_cuda_set_timing(d, 1);
  die_on(cis_hyb_cuda_apply(d, 1, x, y)); /* warm-up: buffers grow to the largest batch */
  cis_hyb_cuda_get_times(d, &t0);
  const int reps = 3;
  for (int r = 0; r < reps; r++) die_on(cis_hyb_cuda_apply(d, 1, x, y));
  cis_hyb_cuda_get_times(d, &t1);
  cis_hyb_cuda_get_info(d, &in);
  double err = device_rel_err(y, yref, h->n);
  double wall = (t1.t_wall - t0.t_wall) / reps, gen = (t1.t_gen - t0.t_gen) / reps;
  double cp = (t1.t_copy - t0.t_copy) / reps, ker = (t1.t_kernel - t0.t_kernel) / reps;
  double gb = (double)(t1.bytes_copied - t0.bytes_copied) / reps / 1e9;
  char line[512];
  snprintf(line, sizeof line,
           "| %s | %lld in %lld batches | %.2f | %.1f | %.1f | %.1f (%.1f GB/s) | %.1f | %.1e |\n",
           what, (long long)in.streamed_blocks, (long long)in.batches, gb, 1e3 * wall,
           1e3 * gen, 1e3 * cp, cp > 0 ? gb / cp : 0.0, 1e3 * ker, err);
  printf("%s", line);
  if (md) fputs(line, md);
  cis_hyb_cuda_destroy(&d);
}

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
  dev_csr m;
} sparse_state;

static const cusparseSpMVAlg_t k_algs[2] = {CUSPARSE_SPMV_CSR_ALG1, CUSPARSE_SPMV_CSR_ALG2};

/* Descriptor and preprocessing of algorithm a; false when cuSPARSE refuses the index types. */
static bool sparse_prepare(sparse_state *sp, int a) {
  const dev_csr *m = &sp->m;
  double one = 1.0, zero = 0.0;
  size_t bytes = 0;
  cusparseIndexType_t rt = m->rp64 ? CUSPARSE_INDEX_64I : CUSPARSE_INDEX_32I;
  cusparseIndexType_t ct = m->col64 ? CUSPARSE_INDEX_64I : CUSPARSE_INDEX_32I;
  cusparseStatus_t st = cusparseCreateCsr(&sp->A[a], m->n, m->n, m->nnz, m->rowptr, m->col,
                                          m->val, rt, ct, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F);
  if (st == CUSPARSE_STATUS_SUCCESS)
    st = cusparseSpMV_bufferSize(sp->h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, sp->A[a],
                                 sp->x[0], &zero, sp->y[0], CUDA_R_64F, k_algs[a], &bytes);
  if (st == CUSPARSE_STATUS_SUCCESS) {
    CK(cudaMalloc(&sp->buf[a], bytes ? bytes : 16));
    st = cusparseSpMV_preprocess(sp->h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, sp->A[a],
                                 sp->x[0], &zero, sp->y[0], CUDA_R_64F, k_algs[a], sp->buf[a]);
  }
  if (st == CUSPARSE_STATUS_SUCCESS) return true;
  printf("cuSPARSE ALG%d refused %s offsets with %s columns: %s\n", a + 1,
         m->rp64 ? "64-bit" : "32-bit", m->col64 ? "64-bit" : "32-bit", cusparseGetErrorName(st));
  if (sp->A[a]) cusparseDestroySpMat(sp->A[a]);
  sp->A[a] = NULL;
  if (sp->buf[a]) CK(cudaFree(sp->buf[a]));
  sp->buf[a] = NULL;
  return false;
}

static void sparse_setup(sparse_state *sp, const cis_hyb *h, cudaStream_t s, double **dx,
                         double **dy) {
  memset(sp, 0, sizeof *sp);
  csr_upload(h, &sp->m);
  CKS(cusparseCreate(&sp->h));
  CKS(cusparseSetStream(sp->h, s));
  for (int r = 0; r < NROT; r++) {
    CKS(cusparseCreateDnVec(&sp->x[r], h->n, dx[r], CUDA_R_64F));
    CKS(cusparseCreateDnVec(&sp->y[r], h->n, dy[r], CUDA_R_64F));
  }
  for (int a = 0; a < 2; a++) {
    if (sparse_prepare(sp, a)) continue;
    if (sp->m.col64) exit(4);
    csr_widen(&sp->m);
    for (int b = 0; b < a; b++) {
      cusparseDestroySpMat(sp->A[b]);
      CK(cudaFree(sp->buf[b]));
      sp->A[b] = NULL;
      sp->buf[b] = NULL;
    }
    a = -1; /* again from ALG1 with 64-bit columns */
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
  cudaFree(sp->m.rowptr);
  cudaFree(sp->m.col);
  cudaFree(sp->m.val);
}

static void format_sizes(const dev_csr *m, const cis_hyb *h, const cis_hyb_cuda_info *info,
                         formats *f) {
  memset(f, 0, sizeof *f);
  f->n = m->n;
  f->nnz = m->nnz;
  f->nnz_ref = h->ell.nnz;
  f->max_row = m->max_row;
  f->rp64 = m->rp64;
  f->col64 = m->col64;
  f->csr_bytes = (double)m->nnz * (m->col64 ? 16 : 12) + (double)(m->n + 1) * (m->rp64 ? 8 : 4);
  f->ell_bytes = (double)m->n * (double)f->max_row * 12;
  f->ours_bytes = (double)(info->ell_bytes + info->csr_bytes);
  /* the paper's format: the same ELL entries (slice widths rounded up to even, and 2 of padding)
   * and CSR, with 32-bit columns */
  double meta = (double)(h->ell.nslices + 1) * 8 + (double)h->ell.nslices * 4 + (double)m->n * 4;
  double ell_entries = 2;
  for (int64_t s = 0; s < h->ell.nslices; s++) {
    int64_t w = h->ell.slice_width[s];
    ell_entries += (double)std::min((int64_t)h->ell.slice, h->ell.nrows - s * h->ell.slice) *
                   (double)(w + (w & 1));
  }
  f->paper_bytes = ell_entries * 12 + meta + (double)info->csr_bytes +
                   (double)(h->nnz_exp + 2) * (4 - info->csr_bits / 8);
}

static void write_md(const bench_args *a, const char *title, int argc, char **argv,
                     const cudaDeviceProp *prop, const formats *f, const std::vector<row> &rows,
                     double copy_gbs, double best_sp) {
  FILE *out = fopen(a->md, "w");
  if (!out) {
    fprintf(stderr, "spmv_bench: cannot write %s\n", a->md);
    exit(1);
  }
  char date[64];
  time_t now = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
  fprintf(out, "### %s\n\n", title);
  fprintf(out, "Device: %s (%d SMs, %.0f MB L2). Commit %s. %s.\n\nCommand: `", prop->name,
          prop->multiProcessorCount, prop->l2CacheSize / 1e6, a->commit, date);
  for (int i = 0; i < argc; i++) fprintf(out, "%s%s", i ? " " : "", argv[i]);
  fprintf(out, "`\n\nMatrix: %lld nonzeros (%lld in the Reference region), longest row %lld. "
               "Memory: CSR %.1f MB, plain ELL %.1f MB, hybrid as in the paper (32-bit) "
               "%.1f MB, ours %.1f MB, cuSPARSE CSR %s offsets and %s columns. "
               "Copy bandwidth (1 GiB device-to-device, read + write): "
               "%.0f GB/s.\n\n",
          (long long)f->nnz, (long long)f->nnz_ref, (long long)f->max_row, f->csr_bytes / 1e6,
          f->ell_bytes / 1e6, f->paper_bytes / 1e6, f->ours_bytes / 1e6,
          f->rp64 ? "64-bit" : "32-bit", f->col64 ? "64-bit" : "32-bit", copy_gbs);
  if (f->coded_bytes > 0)
    fprintf(out, "Coded values (cisolve's upload when the cached blocks exceed twice the L2 "
                 "cache): a dictionary of %d magnitudes codes %lld of the %lld Expansion "
                 "entries; ours with coded values %.1f MB.\n\n",
            f->dict_size, (long long)f->coded_nnz, (long long)(f->nnz - f->nnz_ref),
            f->coded_bytes / 1e6);
  fprintf(out, "Before each timing L2 holds %s.\n\n",
          a->clean_flush ? "clean lines of other data (a memset, then a read, of twice its size)"
                         : "dirty lines (a memset of twice its size, `--clean-flush 0`)");
  fprintf(out, "Our single-vector launch, as chosen at upload (the fastest of those timed on the "
               "matrix, L2 not flushed): %s.\n\n", f->tuned);
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
  t.clean = NULL;
  CK(cudaMalloc(&t.sink, sizeof(int)));
  if (a.clean_flush) {
    CK(cudaMalloc(&t.clean, t.flush_bytes));
    CK(cudaMemset(t.clean, 0, t.flush_bytes));
  }
  printf("device: %s, %d SMs, L2 %.0f MB\n", prop.name, prop.multiProcessorCount,
         prop.l2CacheSize / 1e6);
  double copy_gbs = copy_bandwidth(&t, std::max(10, a.reps / 5));
  printf("copy bandwidth: %.0f GB/s (1 GiB device-to-device, read + write)\n", copy_gbs);

  double t0 = cis_wtime();
  bench_matrix bm;
  memset(&bm, 0, sizeof bm);
  if (a.fcidump)
    matrix_ci(&a, &bm);
  else
    matrix_synthetic(&a, &bm);
  const cis_hyb &h = *bm.h;
  printf("matrix: %s; %lld nonzeros (%lld Reference), built in %.1f s\n", bm.title,
         (long long)(h.ell.nnz + h.nnz_exp), (long long)h.ell.nnz, cis_wtime() - t0);

  const int64_t n = h.n;
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
  die_on(cis_hyb_cuda_create(&h, 0, CIS_HYB_CUDA_PLAIN | CIS_HYB_CUDA_NO_SELL, t.s, &d));
  cis_hyb_cuda_get_info(d, &info);
  if (info.streamed_blocks) usage_exit("the matrix does not fit the device");
  paper_matrix paper;
  die_on(paper_matrix_create(&h, &paper));
  sparse_state sp;
  sparse_setup(&sp, &h, t.s, dx, dy);
  printf("uploaded in %.1f s: ours %d-bit ELL and %d-bit Expansion columns, %d-lane sub-warps; "
         "cuSPARSE %s offsets, %s columns\n", cis_wtime() - t0, info.index_bits, info.csr_bits,
         info.subwarp,
         sp.m.rp64 ? "64-bit" : "32-bit", sp.m.col64 ? "64-bit" : "32-bit");

  formats f;
  format_sizes(&sp.m, &h, &info, &f);
  note_tuned(&f, &info);
  double xy = 2.0 * (double)n * 8;
  double ours_b = f.ours_bytes + xy, paper_b = f.paper_bytes + xy, csr_b = f.csr_bytes + xy;
  char csr_fmt[48];
  snprintf(csr_fmt, sizeof csr_fmt, "CSR, %s", sp.m.col64 ? "64-bit" : "32-bit");

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
  add("cuSPARSE CSR ALG1", csr_fmt, csr_b, 1, ms, device_rel_err(dy[0], yref.data(), n));
  double alg1 = ms;
  /* With the clean flush: the median of a timing after the memset alone, L2 left dirty. */
  auto median_dirty = [&](auto f) {
    void *c = t.clean;
    t.clean = NULL;
    double m = median_ms(&t, a.reps, f);
    t.clean = c;
    return m;
  };
  if (t.clean) {
    ms = median_dirty([&](int r) { sparse_spmv(&sp, 0, r % NROT); });
    add("cuSPARSE CSR ALG1, L2 left dirty by the flush", csr_fmt, csr_b, 1, ms,
        device_rel_err(dy[0], yref.data(), n));
  }
  ms = median_ms(&t, a.reps, [&](int r) { sparse_spmv(&sp, 1, r % NROT); });
  sparse_spmv(&sp, 1, 0);
  add("cuSPARSE CSR ALG2", csr_fmt, csr_b, 1, ms, device_rel_err(dy[0], yref.data(), n));
  double best_sp = std::min(alg1, ms);
  ms = median_ms(&t, a.reps, [&](int r) {
    die_on(paper_matrix_apply(&paper, dx[r % NROT], dy[r % NROT], t.s));
  });
  die_on(paper_matrix_apply(&paper, dx[0], dy[0], t.s));
  add("paper, Algorithm 7", "hybrid, 32-bit ELL", paper_b, 1, ms,
      device_rel_err(dy[0], yref.data(), n));
  /* The format column of one of our uploads. */
  auto ours_format = [](const cis_hyb_cuda_info &in, char *fmt, size_t cap) {
    char tiles[40] = "";
    if (in.tile_cols) snprintf(tiles, sizeof tiles, " in tiles of %d", in.tile_cols);
    if (in.sell) {
      snprintf(fmt, cap, "SELL-%d, 32-bit%s", in.sell, in.dict_size ? ", coded values" : "");
      return;
    }
    snprintf(fmt, cap, "hybrid, %d-bit ELL%s%s%s", in.index_bits, tiles,
             in.csr_bits == 16 ? ", 16-bit CSR" : "", in.dict_size ? ", coded values" : "");
  };
  /* One row: our single-vector product on an upload as it is set now. */
  auto time_single = [&](cis_hyb_cuda *dd, const cis_hyb_cuda_info &in, const char *nm) {
    char fmt[64];
    ours_format(in, fmt, sizeof fmt);
    double t1 = median_ms(&t, a.reps, [&](int r) {
      die_on(cis_hyb_cuda_apply(dd, 1, dx[r % NROT], dy[r % NROT]));
    });
    die_on(cis_hyb_cuda_apply(dd, 1, dx[0], dy[0]));
    add(nm, fmt, (double)(in.ell_bytes + in.csr_bytes) + xy, 1, t1,
        device_rel_err(dy[0], yref.data(), n));
  };
  /* Our kernels on one upload: the single-vector product at every sub-warp width, the
   * multi-vector kernel at k = 4 and 8. `tag` follows "ours" in the rows' names. */
  auto time_ours_all = [&](cis_hyb_cuda *dd, const cis_hyb_cuda_info &in, const char *tag) {
    char fmt[64], name[96];
    ours_format(in, fmt, sizeof fmt);
    double bytes = (double)(in.ell_bytes + in.csr_bytes);
    auto single = [&](const char *nm) { time_single(dd, in, nm); };
    snprintf(name, sizeof name, "ours%s", tag);
    single(name);
    /* the other sub-warp widths, for the record of the choice made at upload (SELL-32 has a
     * lane per row) */
    for (int w = 8; w <= 32 && !in.sell; w *= 2) {
      if (w == in.subwarp) continue;
      snprintf(name, sizeof name, "ours%s, %d lanes per row", tag, w);
      die_on(cis_hyb_cuda_set_subwarp(dd, w));
      single(name);
    }
    die_on(cis_hyb_cuda_set_subwarp(dd, in.subwarp));
    /* the launches not chosen at upload (cis_hyb_cuda_info.tune_ms) */
    if (in.sell) {
      die_on(cis_hyb_cuda_set_plain_launch(dd, !in.plain_launch));
      snprintf(name, sizeof name, "ours%s, %s", tag,
               in.plain_launch ? "a barrier every 32 entries" : "without barriers");
      single(name);
      die_on(cis_hyb_cuda_set_plain_launch(dd, in.plain_launch));
    } else if (in.dict_size) {
      for (int b = 1024; b >= 128; b /= 2) {
        if (b == in.coded_block || b == 512) continue;
        snprintf(name, sizeof name, "ours%s, %d threads per block", tag, b);
        die_on(cis_hyb_cuda_set_coded_block(dd, b));
        single(name);
      }
      die_on(cis_hyb_cuda_set_coded_block(dd, in.coded_block));
    } else {
      for (int c = 0; c < in.tune_candidates; c++) {
        if (c == in.tune_kept) continue;
        snprintf(name, sizeof name, "ours%s, %d warps per multiprocessor", tag, in.tune_warps[c]);
        die_on(cis_hyb_cuda_set_plain_launch(dd, c));
        single(name);
      }
      die_on(cis_hyb_cuda_set_plain_launch(dd, in.plain_launch));
    }
    for (int k = 4; k <= 8; k += 4) {
      /* k = 8 in one pass here, whatever the upload chose (in.group) */
      die_on(cis_hyb_cuda_set_group(dd, CIS_HYB_CUDA_MAX_K));
      double t1 = median_ms(&t, a.reps, [&](int) { die_on(cis_hyb_cuda_apply(dd, k, dX, dY)); });
      die_on(cis_hyb_cuda_apply(dd, k, dX, dY));
      double err = device_rel_err(dY, yref.data(), n * k);
      snprintf(name, sizeof name, "ours%s, multi-vector k=%d%s", tag, k, k == 8 ? ", one pass" : "");
      add(name, fmt, bytes + k * xy, k, t1, err);
    }
    die_on(cis_hyb_cuda_set_group(dd, 4));
    double t1 = median_ms(&t, a.reps, [&](int) { die_on(cis_hyb_cuda_apply(dd, 8, dX, dY)); });
    die_on(cis_hyb_cuda_apply(dd, 8, dX, dY));
    snprintf(name, sizeof name, "ours%s, k=8 as 2 passes of k=4", tag);
    add(name, fmt, 2 * bytes + 8 * xy, 8, t1, device_rel_err(dY, yref.data(), n * 8));
    die_on(cis_hyb_cuda_set_group(dd, in.group));
    snprintf(name, sizeof name, "ours%s, timed again (spread)", tag);
    single(name);
    if (t.clean) {
      double t1 = median_dirty([&](int r) {
        die_on(cis_hyb_cuda_apply(dd, 1, dx[r % NROT], dy[r % NROT]));
      });
      snprintf(name, sizeof name, "ours%s, L2 left dirty by the flush", tag);
      add(name, fmt, bytes + xy, 1, t1, device_rel_err(dy[0], yref.data(), n));
    }
  };
  /* The upload with coded values where they repeat (a CI matrix), whatever the matrix's size;
   * the plain upload above keeps every 8-byte value. */
  cis_hyb_cuda *dc = NULL;
  cis_hyb_cuda_info infoc;
  memset(&infoc, 0, sizeof infoc);
  die_on(cis_hyb_cuda_create(&h, 0, CIS_HYB_CUDA_CODED, t.s, &dc));
  cis_hyb_cuda_get_info(dc, &infoc);
  printf("coded upload: value dictionary of %d magnitudes (%.1f%% of a sample of the "
         "entries), %lld of %lld Expansion entries coded, %lld blocks streamed; cisolve codes "
         "them only when the cached blocks exceed twice the L2 cache (%.0f MB here)\n",
         infoc.dict_size, 100.0 * infoc.dict_cover, (long long)infoc.coded_nnz,
         (long long)h.nnz_exp, (long long)infoc.streamed_blocks, 2.0 * prop.l2CacheSize / 1e6);
  if (infoc.dict_size == 0 || infoc.streamed_blocks) cis_hyb_cuda_destroy(&dc);
  if (dc) {
    f.coded_bytes = (double)(infoc.ell_bytes + infoc.csr_bytes);
    f.coded_nnz = infoc.coded_nnz;
    f.dict_size = infoc.dict_size;
    note_tuned(&f, &infoc);
    time_ours_all(dc, infoc, ", coded values");
    cis_hyb_cuda_destroy(&dc);
  }
  time_ours_all(d, info, f.dict_size ? ", plain values" : "");
  {
    /* What a product of this size could reach: our upload's bytes (x and y included) read as
     * one array, timed like the products. Its "vs best cuSPARSE" bounds ours on this matrix
     * (BENCHMARKS.md: a short product does not reach the copy rate of 1 GiB). */
    auto time_read = [&](double bytes, const char *nm) {
      size_t words = (size_t)(bytes / 16) + 1;
      double2 *buf = NULL;
      CK(cudaMalloc(&buf, words * 16));
      CK(cudaMemset(buf, 0, words * 16));
      unsigned grid = (unsigned)prop.multiProcessorCount * 8;
      double m = median_ms(&t, a.reps, [&](int) {
        stream_kernel<<<grid, 256, 0, t.s>>>(buf, words, t.sink);
        CK(cudaGetLastError());
      });
      CK(cudaStreamSynchronize(t.s));
      CK(cudaFree(buf));
      add(nm, "one array", bytes, 1, m, NAN);
    };
    time_read((double)(info.ell_bytes + info.csr_bytes) + xy,
              f.dict_size ? "reading the plain upload's bytes alone" : "reading our bytes alone");
    if (f.coded_bytes > 0)
      time_read(f.coded_bytes + xy, "reading the coded upload's bytes alone");
    /* SELL-32, a lane per row (docs/gpu.md): cisolve's upload of a matrix of 262144 rows or
     * more with plain values and little padding (spmv/hyb_cuda_sell.cu, hyb_sell_layout), forced here on
     * every matrix */
    for (int coded = 1; coded >= 0; coded--) { /* coded: where the values repeat */
      if (coded && !f.dict_size) continue;
      cis_hyb_cuda *ds = NULL;
      cis_hyb_cuda_info is;
      die_on(cis_hyb_cuda_create(
          &h, 0, CIS_HYB_CUDA_SELL | (coded ? CIS_HYB_CUDA_CODED : CIS_HYB_CUDA_PLAIN), t.s, &ds));
      cis_hyb_cuda_get_info(ds, &is);
      const char *tag = coded ? ", coded SELL-32" : ", SELL-32";
      if (is.sell) {
        printf("%s upload: %lld slots for %lld entries (%.1f%% padding); launch kept at upload: "
               "%s (%.4f ms, the other %.4f ms)\n", tag + 2,
               (long long)is.sell_slots, (long long)(h.ell.nnz + h.nnz_exp),
               100.0 * (double)is.sell_slots / (double)(h.ell.nnz + h.nnz_exp) - 100.0,
               is.plain_launch ? "without barriers" : "a barrier every 32 entries",
               is.tune_ms[is.tune_kept], is.tune_ms[!is.tune_kept]);
        time_ours_all(ds, is, tag);
        char nm[64];
        snprintf(nm, sizeof nm, "reading the%s upload's bytes alone", tag + 1);
        time_read((double)is.csr_bytes + xy, nm);
      } else {
        printf("%s upload: not possible here\n", tag + 2);
      }
      cis_hyb_cuda_destroy(&ds);
    }
  }
  {
    /* the Reference region in column tiles where the upload kept one sliced ELL block
     * (docs/gpu.md) */
    cis_hyb_cuda *dt = NULL;
    cis_hyb_cuda_info it;
    if (h.ell.boundary > 0 && info.tile_cols == 0) {
      die_on(cis_hyb_cuda_create(&h, 0, CIS_HYB_CUDA_PLAIN | CIS_HYB_CUDA_TILED, t.s, &dt));
      cis_hyb_cuda_get_info(dt, &it);
      note_tuned(&f, &it);
      time_ours_all(dt, it, ", Reference region in column tiles");
      cis_hyb_cuda_destroy(&dt);
    }
  }
  if (a.chunks && !sp.m.rp64 && n <= 65536) {
    /* the experiment of --chunks: 16-bit columns, the row of each chunk's first entry */
    const int E = a.chunks;
    const int64_t nnz = sp.m.nnz, per = 32 * (int64_t)E, nch = (nnz + per - 1) / per;
    std::vector<int32_t> rp((size_t)n + 1), cr((size_t)nch);
    CK(cudaMemcpy(rp.data(), sp.m.rowptr, rp.size() * 4, cudaMemcpyDeviceToHost));
    for (int64_t w = 0, r = 0; w < nch; w++) {
      while (rp[(size_t)r + 1] <= w * per) r++;
      cr[(size_t)w] = (int32_t)r;
    }
    uint16_t *c16 = NULL;
    int32_t *dcr = NULL;
    CK(cudaMalloc((void **)&c16, (size_t)nnz * 2 + 16));
    CK(cudaMalloc((void **)&dcr, (size_t)nch * 4));
    CK(cudaMemcpy(dcr, cr.data(), (size_t)nch * 4, cudaMemcpyHostToDevice));
    narrow_kernel<<<4096, 256>>>((const int32_t *)sp.m.col, c16, nnz);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    /* coded values: a dictionary of up to 4096 magnitudes, the others escaped */
    cis_vdict dict;
    memset(&dict, 0, sizeof dict);
    die_on(cis_vdict_build(&h, (int64_t)1 << 22, 4096, &dict));
    std::vector<double> hv((size_t)nnz), esc;
    std::vector<uint16_t> code((size_t)nnz);
    std::vector<int32_t> eoff((size_t)nch);
    CK(cudaMemcpy(hv.data(), sp.m.val, (size_t)nnz * 8, cudaMemcpyDeviceToHost));
    for (int64_t q = 0; q < nnz; q++) {
      if (q % per == 0) eoff[(size_t)(q / per)] = (int32_t)esc.size();
      int cd = dict.size ? cis_vdict_code(&dict, hv[(size_t)q]) : -1;
      code[(size_t)q] = cd < 0 ? (uint16_t)0x7FFF : (uint16_t)cd;
      if (cd < 0) esc.push_back(hv[(size_t)q]);
    }
    uint16_t *dcode = NULL;
    double *dtab = NULL, *desc = NULL;
    int32_t *deoff = NULL;
    CK(cudaMalloc((void **)&dcode, (size_t)nnz * 2 + 16));
    CK(cudaMalloc((void **)&dtab, (size_t)(dict.size + 1) * 8));
    CK(cudaMalloc((void **)&desc, (esc.size() + 1) * 8));
    CK(cudaMalloc((void **)&deoff, (size_t)nch * 4));
    CK(cudaMemcpy(dcode, code.data(), (size_t)nnz * 2, cudaMemcpyHostToDevice));
    if (dict.size) CK(cudaMemcpy(dtab, dict.table, (size_t)dict.size * 8, cudaMemcpyHostToDevice));
    if (!esc.empty()) CK(cudaMemcpy(desc, esc.data(), esc.size() * 8, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(deoff, eoff.data(), (size_t)nch * 4, cudaMemcpyHostToDevice));
    const unsigned grid = (unsigned)((nch * 32 + 255) / 256);
    /* zero: 0 none (timing only), 1 cudaMemsetAsync, 2 zero_kernel with the chunk kernel as
     * its programmatic dependent */
    auto launch = [&](int r, int zero, bool coded) {
      if (zero == 1) CK(cudaMemsetAsync(dy[r], 0, (size_t)n * 8, t.s));
      if (zero == 2) zero_kernel<<<(unsigned)((n + 255) / 256), 256, 0, t.s>>>(dy[r], n);
      cudaLaunchAttribute at;
      at.id = cudaLaunchAttributeProgrammaticStreamSerialization;
      at.val.programmaticStreamSerializationAllowed = 1;
      cudaLaunchConfig_t cfg = {};
      cfg.gridDim = dim3(grid);
      cfg.blockDim = dim3(256);
      cfg.stream = t.s;
      cfg.attrs = &at;
      cfg.numAttrs = zero == 2 ? 1 : 0;
      const int32_t *rowptr = (const int32_t *)sp.m.rowptr;
      if (coded) {
        void (*kern)(const int32_t *, const uint16_t *, const uint16_t *, const double *,
                     const double *, const int32_t *, int64_t, const int32_t *, const double *,
                     double *) = E == 8 ? chunk_coded_kernel<8>
                                        : (E == 2 ? chunk_coded_kernel<2> : chunk_coded_kernel<4>);
        CK(cudaLaunchKernelEx(&cfg, kern, rowptr, (const uint16_t *)c16, (const uint16_t *)dcode,
                              (const double *)dtab, (const double *)desc, (const int32_t *)deoff,
                              nnz, (const int32_t *)dcr, (const double *)dx[r], dy[r]));
        return;
      }
      void (*kern)(const int32_t *, const uint16_t *, const double *, int64_t, const int32_t *,
                   const double *, double *) =
          E == 8 ? chunk_kernel<8> : (E == 2 ? chunk_kernel<2> : chunk_kernel<4>);
      CK(cudaLaunchKernelEx(&cfg, kern, rowptr, (const uint16_t *)c16, (const double *)sp.m.val,
                            nnz, (const int32_t *)dcr, (const double *)dx[r], dy[r]));
    };
    for (int coded = 0; coded < (dict.size ? 2 : 1); coded++) { /* coded: values that repeat */
      const double cb = (double)nnz * (coded ? 4 : 10) + (coded ? (double)esc.size() * 8 : 0) +
                        (double)(n + 1) * 4 + (double)nch * (coded ? 8 : 4) + xy;
      const char *fmt = coded ? "CSR, 16-bit, coded values" : "CSR, 16-bit";
      const char *cv = coded ? ", coded" : "";
      if (coded)
        printf("chunks with coded values: %d magnitudes, %zu of %lld entries escaped\n", dict.size,
               esc.size(), (long long)nnz);
      char nm[96];
      ms = median_ms(&t, a.reps, [&](int r) { launch(r % NROT, 1, coded); });
      launch(0, 1, coded);
      snprintf(nm, sizeof nm, "chunks of %d%s, y zeroed by a memset", 32 * E, cv);
      add(nm, fmt, cb, 1, ms, device_rel_err(dy[0], yref.data(), n));
      ms = median_ms(&t, a.reps, [&](int r) { launch(r % NROT, 2, coded); });
      CK(cudaMemsetAsync(dy[0], 0xff, (size_t)n * 8, t.s)); /* NaN: a row left unzeroed shows */
      launch(0, 2, coded);
      snprintf(nm, sizeof nm, "chunks of %d%s, y zeroed by a kernel they follow", 32 * E, cv);
      add(nm, fmt, cb, 1, ms, device_rel_err(dy[0], yref.data(), n));
      ms = median_ms(&t, a.reps, [&](int r) { launch(r % NROT, 0, coded); });
      snprintf(nm, sizeof nm, "chunks of %d%s, y not zeroed (timing only)", 32 * E, cv);
      add(nm, fmt, cb, 1, ms, 0.0);
    }
    cis_vdict_free(&dict);
    CK(cudaFree(dcode));
    CK(cudaFree(dtab));
    CK(cudaFree(desc));
    CK(cudaFree(deoff));
    CK(cudaFree(c16));
    CK(cudaFree(dcr));
  } else if (a.chunks) {
    printf("--chunks: not timed, the matrix has more than 65,536 rows\n");
  }
  if (bm.one.n) {
    /* the same matrix as one CSR with 16-bit columns: our kernel with no ELL part */
    cis_hyb_cuda *d1 = NULL;
    cis_hyb_cuda_info i1;
    die_on(cis_hyb_cuda_create(&bm.one, 0, CIS_HYB_CUDA_PLAIN, t.s, &d1));
    cis_hyb_cuda_get_info(d1, &i1);
    for (int w = 16; w <= 32; w *= 2) {
      die_on(cis_hyb_cuda_set_subwarp(d1, w));
      ms = median_ms(&t, a.reps, [&](int r) {
        die_on(cis_hyb_cuda_apply(d1, 1, dx[r % NROT], dy[r % NROT]));
      });
      die_on(cis_hyb_cuda_apply(d1, 1, dx[0], dy[0]));
      char name[64];
      snprintf(name, sizeof name, "ours, no Reference region, %d lanes per row", w);
      add(name, i1.csr_bits == 16 ? "CSR, 16-bit" : "CSR, 32-bit",
          (double)(i1.ell_bytes + i1.csr_bytes) + xy, 1, ms,
          device_rel_err(dy[0], yref.data(), n));
    }
    cis_hyb_cuda_destroy(&d1);
  }
  CK(cudaStreamSynchronize(t.s));
  if (bm.hm) {
    /* a CI Hamiltonian is symmetric: the upper triangle alone, transpose by atomics */
    upper_csr u;
    upper_upload(&h, &u);
    ms = median_ms(&t, a.reps, [&](int r) { upper_apply(&u, t.s, dx[r % NROT], dy[r % NROT]); });
    upper_apply(&u, t.s, dx[0], dy[0]);
    add("symmetric half, atomics for the transpose", "upper CSR, 32-bit",
        (double)u.nnz * 12 + (double)(n + 1) * 8 + 2 * xy, 1, ms,
        device_rel_err(dy[0], yref.data(), n));
    upper_free(&u);
  }

  printf("\nmemory: CSR %.1f MB, plain ELL %.1f MB, hybrid (paper, 32-bit) %.1f MB, ours %.1f MB, "
         "ours with coded values %.1f MB\n",
         f.csr_bytes / 1e6, f.ell_bytes / 1e6, f.paper_bytes / 1e6, f.ours_bytes / 1e6,
         f.coded_bytes / 1e6);
  printf("floor for our bytes at copy bandwidth: %.4f ms\n\n", ours_b / (copy_gbs * 1e9) * 1e3);
  printf("launch chosen at upload: %s\n\n", f.tuned);
  print_table(stdout, rows, copy_gbs, best_sp);
  if (a.md) write_md(&a, bm.title, argc, argv, &prop, &f, rows, copy_gbs, best_sp);
  if (bm.hm && a.stream) {
    /* The same products with no Expansion block resident: streamed from the host cache, then
     * regenerated in every product (a second matrix that caches none). */
    FILE *md = a.md ? fopen(a.md, "a") : NULL;
    const char *head =
        "\nStreamed products (ours, k = 1, mean of 3 after one warm-up; %d OpenMP threads):\n\n"
        "| Expansion blocks | streamed | GB sent | ms per product | generation ms | transfer ms "
        "| kernel ms | rel. err vs ALG1 |\n|---|---|---:|---:|---:|---:|---:|---:|\n";
    printf(head, omp_get_max_threads());
    if (md) fprintf(md, head, omp_get_max_threads());
    streamed_report("from the host cache", &h, t.s, dx[0], dy[0], yref.data(), md);
    cis_hmat *hr = NULL;
    cis_hmat_opts ho = {0, a.ref_size, 0, 0, 0}; /* cache none: regenerate every block */
    die_on(cis_hmat_build_ci(&bm.prob.ints, bm.space, &ho, &hr));
    streamed_report("regenerated", &hr->hyb, t.s, dx[0], dy[0], yref.data(), md);
    cis_hmat_destroy(&hr);
    if (md) fclose(md);
  }

  sparse_free(&sp);
  cis_hyb_cuda_destroy(&d);
  paper_matrix_destroy(&paper);
  for (int r = 0; r < NROT; r++) {
    cudaFree(dx[r]);
    cudaFree(dy[r]);
  }
  cudaFree(dX);
  cudaFree(dY);
  cudaFree(t.flush);
  cudaFree(t.clean);
  cudaFree(t.sink);
  matrix_free(&bm);
  return 0;
}
