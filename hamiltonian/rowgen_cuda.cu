/* The row generator on a CUDA device (hamiltonian/rowgen_cuda.h). */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

extern "C" {
#include "base/util.h"
#include "hamiltonian/rowgen_cuda.h"
}
#include "hamiltonian/rowgen_cuda_private.cuh"

/* ---- device side ----------------------------------------------------------------------------- */

/* The consumers of a row's candidates; every lane of the warp calls push together (ok: whether
 * this lane has a candidate). */
struct count_sink {
  int64_t min_col;
  int cnt;
  __device__ void push(bool ok, int64_t col, double v) {
    cnt += ok && col >= min_col && fabs(v) > CIS_ROWGEN_DROP;
  }
  __device__ void push_diag(bool ok, int64_t col) { cnt += ok && col >= min_col; }
};

struct fill_sink {
  int64_t min_col;
  int64_t at; /* warp-uniform: the next free position */
  int32_t *col;
  double *val;
  int lane;
  __device__ void put(bool keep, int64_t c, double v) {
    unsigned m = __ballot_sync(FULL, keep);
    if (keep) {
      int64_t p = at + __popc(m & ((1u << lane) - 1u));
      col[p] = (int32_t)c;
      val[p] = v;
    }
    at += __popc(m);
  }
  __device__ void push(bool ok, int64_t c, double v) {
    put(ok && c >= min_col && fabs(v) > CIS_ROWGEN_DROP, c, v);
  }
  __device__ void push_diag(bool ok, int64_t c) { put(ok && c >= min_col, c, 0.0); }
  double diag;
};

/* x_j[c]: the k vectors interleaved (ldx 0: x[c k + j]) or column-major (x[j ldx + c]). */
__device__ __forceinline__ double xval(const double *x, int64_t ldx, int k, int64_t c, int j) {
  return ldx ? x[j * ldx + c] : x[c * k + j];
}

template <int K>
struct apply_sink {
  int64_t min_col, ldx;
  const double *x;
  int k;
  double acc[K];
  __device__ void push(bool ok, int64_t c, double v) {
    if (ok && c >= min_col && fabs(v) > CIS_ROWGEN_DROP) {
      if (K == 1) {
        acc[0] += v * x[c];
      } else {
#pragma unroll
        for (int j = 0; j < K; j++)
          if (j < k) acc[j] += v * xval(x, ldx, k, c, j);
      }
    }
  }
};

__global__ void __launch_bounds__(32 * WARPS)
    count_kernel(gen_view g, int64_t row0, int64_t nrows, int64_t min_col, int32_t *len) {
  extern __shared__ int32_t smem[];
  int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  int32_t *pk = smem + w * 2 * (g.norb + 1);
  for (int64_t l = (int64_t)blockIdx.x * WARPS + w; l < nrows; l += (int64_t)gridDim.x * WARPS) {
    int64_t row = row0 + l;
    count_sink s = {min_col, 0};
    s.push_diag(lane == 0, row);
    gen_offdiag<32>(g, row, lane, FULL, pk, s);
    int c = s.cnt;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) c += __shfl_xor_sync(FULL, c, o);
    if (lane == 0) len[l] = c;
  }
}

__global__ void __launch_bounds__(32 * WARPS)
    fill_kernel(gen_view g, int64_t row0, int64_t nrows, int64_t min_col, const int64_t *rowptr,
                int32_t *col, double *val) {
  extern __shared__ int32_t smem[];
  int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  int32_t *pk = smem + w * 2 * (g.norb + 1);
  for (int64_t l = (int64_t)blockIdx.x * WARPS + w; l < nrows; l += (int64_t)gridDim.x * WARPS) {
    int64_t row = row0 + l;
    fill_sink s;
    s.min_col = min_col;
    s.at = rowptr[l] - rowptr[0];
    s.col = col;
    s.val = val;
    s.lane = lane;
    bool d = lane == 0 && row >= min_col;
    unsigned m = __ballot_sync(FULL, d);
    if (d) {
      col[s.at] = (int32_t)row;
      val[s.at] = g.diag[row];
    }
    s.at += __popc(m);
    gen_offdiag<32>(g, row, lane, FULL, pk, s);
  }
}

/* A row per group of NL lanes: 32 / NL rows per warp, each group on its own rows. */
template <int K, int NL>
__global__ void __launch_bounds__(32 * WARPS)
    apply_kernel(gen_view g, int64_t row0, int64_t nrows, int64_t min_col, int k,
                 const double *x, int64_t ldx, double *Y, int64_t ldy) {
  extern __shared__ int32_t smem[];
  const int R = 32 / NL * WARPS; /* rows of a block at a time */
  int lane = threadIdx.x & (NL - 1), w = threadIdx.x / NL;
  unsigned mask = group_mask<NL>(threadIdx.x & 31);
  int32_t *pk = smem + w * 2 * (g.norb + 1);
  for (int64_t l = (int64_t)blockIdx.x * R + w; l < nrows; l += (int64_t)gridDim.x * R) {
    int64_t row = row0 + l;
    apply_sink<K> s;
    s.min_col = min_col;
    s.ldx = ldx;
    s.x = x;
    s.k = k;
#pragma unroll
    for (int j = 0; j < K; j++) s.acc[j] = 0.0;
    if (lane == 0 && row >= min_col) { /* the diagonal, kept even when zero */
      double dg = g.diag[row];
#pragma unroll
      for (int j = 0; j < K; j++)
        if (j < k) s.acc[j] += dg * (K == 1 ? x[row] : xval(x, ldx, k, row, j));
    }
    gen_offdiag<NL>(g, row, lane, mask, pk, s);
#pragma unroll
    for (int j = 0; j < K; j++) {
      if (j >= k) break;
      double a = s.acc[j];
#pragma unroll
      for (int o = NL / 2; o > 0; o >>= 1) a += __shfl_xor_sync(mask, a, o, NL);
      if (lane == 0) Y[row + j * ldy] += a;
    }
  }
}

/* ---- host side ------------------------------------------------------------------------------- */

const char *cis_rowgen_cuda_why(const cis_rowgen *g) {
  if (g->spin_squared)
    return "the squared spin penalty (a spin above the lowest of the space's Ms) is generated on "
           "the host only";
  if (g->space->norb > CIS_ROWGEN_CUDA_MAX_NORB) return "more orbitals than the device generator takes";
  if (g->space->ndet > INT32_MAX) return "more than 2^31 - 1 determinants";
  return NULL;
}

/* The arrays a device generator holds, with their bytes: one table shared by the byte count and
 * the copy. */
typedef struct {
  const void *src;
  size_t bytes;
  const void **dst;
} gen_array;

static int gen_arrays(const cis_rowgen *g, gen_view *v, const double *diag, gen_array *a) {
  const cis_space *s = g->space;
  int64_t na = s->astr.n, nb = s->bstr.n, n = s->ndet;
  int64_t nv = g->sc.vpp ? g->sc.npair * g->sc.npair : cis_eri_size(s->norb);
  const gen_array t[] = {
      {g->la.s_ptr, (size_t)(na + 1) * 8, (const void **)&v->las_ptr},
      {g->la.d_ptr, (size_t)(na + 1) * 8, (const void **)&v->lad_ptr},
      {g->lb.s_ptr, (size_t)(nb + 1) * 8, (const void **)&v->lbs_ptr},
      {g->lb.d_ptr, (size_t)(nb + 1) * 8, (const void **)&v->lbd_ptr},
      {g->la.s, (size_t)g->la.s_ptr[na] * sizeof(cis_link1), (const void **)&v->las},
      {g->lb.s, (size_t)g->lb.s_ptr[nb] * sizeof(cis_link1), (const void **)&v->lbs},
      {g->la.d, (size_t)g->la.d_ptr[na] * sizeof(cis_link2), (const void **)&v->lad},
      {g->lb.d, (size_t)g->lb.d_ptr[nb] * sizeof(cis_link2), (const void **)&v->lbd},
      {s->det_ia, (size_t)n * 4, (const void **)&v->det_ia},
      {s->det_ib, (size_t)n * 4, (const void **)&v->det_ib},
      {s->amaj_ib, (size_t)n * 4, (const void **)&v->amaj_ib},
      {s->amaj_det, (size_t)n * 4, (const void **)&v->amaj_det},
      {s->aptr, (size_t)(na + 1) * 8, (const void **)&v->aptr},
      {s->astr.bits, (size_t)(na * s->nw) * 8, (const void **)&v->abits},
      {s->bstr.bits, (size_t)(nb * s->nw) * 8, (const void **)&v->bbits},
      {diag, (size_t)n * 8, (const void **)&v->diag},
      {g->sc.vpp ? (const void *)g->sc.vpp : (const void *)g->sc.eri, (size_t)nv * 8,
       (const void **)&v->v},
      {g->pcls, (size_t)g->sc.npair * 4, (const void **)&v->pcls},
      {g->cls_ptr, (size_t)(nb * (g->ncls + 1)) * 4, (const void **)&v->cls_ptr},
      {g->cls_nz, (size_t)(g->ncls * g->ncls), (const void **)&v->cls_nz},
  };
  int m = (int)(sizeof t / sizeof *t);
  for (int i = 0; i < m; i++) a[i] = t[i];
  return m;
}

int64_t cis_rowgen_cuda_bytes(const cis_rowgen *g) {
  gen_view v;
  gen_array a[24];
  int m = gen_arrays(g, &v, NULL, a);
  int64_t b = 0;
  for (int i = 0; i < m; i++) b += (int64_t)((a[i].bytes + 255) & ~(size_t)255);
  return b;
}

int64_t cis_rowgen_cuda_size(const cis_rowgen_cuda *d) { return d->bytes; }

const double *cis_rowgen_cuda_diag(const cis_rowgen_cuda *d) { return d->g.diag; }

int cis_rowgen_cuda_lanes(const cis_rowgen_cuda *d) { return d->lanes; }

cis_err cis_rowgen_cuda_set_lanes(cis_rowgen_cuda *d, int lanes) {
  CIS_CHECK(lanes == 4 || lanes == 8 || lanes == 16 || lanes == 32, CIS_ERR_USAGE,
            "%d lanes a row: expected 4, 8, 16 or 32", lanes);
  CIS_CHECK((size_t)(32 / lanes * WARPS) * 2 * (size_t)(d->g.norb + 1) * 4 <= 48 * 1024,
            CIS_ERR_USAGE, "%d lanes a row: %d orbitals' pair slots exceed shared memory", lanes,
            d->g.norb);
  d->lanes = lanes;
  return CIS_OK;
}

/* A row's lanes in products: 4, the fastest of 4, 8, 16 and 32 on every input measured
 * (docs/BENCHMARKS.md, bench/rowgen_gpu_bench: H2O/6-31G FCI in C1 and H2O/6-31G* in C2v, where
 * a beta string's runs of singles of one pair class are 40 and about 14 long), unless the
 * groups' pair slots would not fit the default 48 KiB of shared memory (32 lanes always do:
 * CIS_ROWGEN_CUDA_MAX_NORB). */
static int lanes_for(const cis_rowgen *g) {
  int L = CIS_ROWGEN_CUDA_LANES;
  while (L < 32 && (size_t)(32 / L * WARPS) * 2 * (size_t)(g->space->norb + 1) * 4 > 48 * 1024)
    L *= 2;
  return L;
}

void cis_rowgen_cuda_destroy(cis_rowgen_cuda **pd) {
  cis_rowgen_cuda *d = *pd;
  if (!d) return;
  for (int i = 0; i < d->nmem; i++)
    if (d->mem[i]) cudaFree(d->mem[i]);
  cis_free(pd);
}

cis_err cis_rowgen_cuda_create(const cis_rowgen *g, cis_rowgen_cuda **out) {
  cis_err err = CIS_OK;
  cis_rowgen_cuda *d = NULL;
  double *diag = NULL;
  const cis_space *s = g->space;
  const char *why = cis_rowgen_cuda_why(g);
  *out = NULL;
  CIS_CHECK(!why, CIS_ERR_USAGE, "rows on the device: %s", why);
  CIS_CLEANUP_FUNCTION;
  CIS_TRY(cis_calloc(&d, 1, sizeof *d, "device row generator"));
  /* the diagonal as the host's row has it (rowgen.c gen_row): the space's, with the spin
   * penalty's part where there is one */
  if (g->spin_shift != 0.0) {
    CIS_TRY(cis_malloc(&diag, (size_t)s->ndet, sizeof *diag, "diagonal"));
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < s->ndet; r++) diag[r] = s->hdiag[r] + cis_rowgen_penalty_diag(g, r);
  }
  {
    gen_view *v = &d->g;
    gen_array a[24];
    int m = gen_arrays(g, v, diag ? diag : s->hdiag, a);
    for (int i = 0; i < m; i++) {
      void *p = NULL;
      size_t bytes = a[i].bytes ? a[i].bytes : 8;
      cudaError_t e = cudaMalloc(&p, bytes);
      if (e != cudaSuccess) {
        char b[32];
        CIS_FAIL(cis_cuda_code(e), "cudaMalloc of the device row generator's tables (%s): %s",
                 cis_format_bytes((double)bytes, b, sizeof b), cudaGetErrorString(e));
      }
      d->mem[d->nmem++] = p;
      d->bytes += (int64_t)((bytes + 255) & ~(size_t)255);
      if (a[i].bytes) CIS_CUDA_TRY(cudaMemcpy(p, a[i].src, a[i].bytes, cudaMemcpyHostToDevice));
      *a[i].dst = p;
    }
    v->n = s->ndet;
    v->na = s->astr.n;
    v->nb = s->bstr.n;
    v->norb = s->norb;
    v->nw = s->nw;
    v->ncls = g->ncls;
    v->npair = g->sc.npair;
    v->vpp = g->sc.vpp != NULL;
    v->spin_shift = g->spin_shift;
    /* rowgen.c row_alpha_singles: direct_ok (the squared penalty never reaches here) */
    v->direct = v->vpp && g->spin_shift == 0.0;
  }
  d->nref = s->nref;
  d->lanes = lanes_for(g);
  *out = d;
  d = NULL;
cleanup:
  cis_free(&diag);
  cis_rowgen_cuda_destroy(&d);
  return err;
}

cis_err cis_rowgen_cuda_create_on(const cis_rowgen *g, int device, cis_rowgen_cuda **out) {
  *out = NULL;
  cudaError_t e = cudaSetDevice(device < 0 ? 0 : device);
  if (e != cudaSuccess) {
    cudaGetLastError();
    CIS_ERROR(CIS_ERR_RESOURCE, "GPU %d is not usable: %s", device < 0 ? 0 : device,
              cudaGetErrorString(e));
  }
  return cis_rowgen_cuda_create(g, out);
}

cis_err cis_rowgen_cuda_count(const cis_rowgen_cuda *d, int64_t row0, int64_t nrows,
                              int64_t min_col, int32_t *len, void *stream) {
  if (nrows <= 0) return CIS_OK;
  count_kernel<<<grid_for(nrows, WARPS), 32 * WARPS, smem_for(d, WARPS), (cudaStream_t)stream>>>(
      d->g, row0, nrows, min_col, len);
  CIS_CUDA(cudaGetLastError());
  return CIS_OK;
}

cis_err cis_rowgen_cuda_fill(const cis_rowgen_cuda *d, int64_t row0, int64_t nrows,
                             int64_t min_col, const int64_t *rowptr, int32_t *col, double *val,
                             void *stream) {
  if (nrows <= 0) return CIS_OK;
  fill_kernel<<<grid_for(nrows, WARPS), 32 * WARPS, smem_for(d, WARPS), (cudaStream_t)stream>>>(
      d->g, row0, nrows, min_col, rowptr, col, val);
  CIS_CUDA(cudaGetLastError());
  return CIS_OK;
}

cis_err cis_rowgen_cuda_apply(const cis_rowgen_cuda *d, int64_t row0, int64_t nrows,
                              int64_t min_col, int k, const double *x, int64_t ldx, double *Y,
                              int64_t ldy, void *stream) {
  CIS_CHECK(k >= 1 && k <= 8, CIS_ERR_INTERNAL, "device row generator: %d vectors", k);
  if (nrows <= 0) return CIS_OK;
  cudaStream_t st = (cudaStream_t)stream;
  by_lanes(d->lanes, [&](auto nl) {
    constexpr int NL = decltype(nl)::value, R = 32 / NL * WARPS;
    unsigned gr = grid_for(nrows, R);
    size_t sm = smem_for(d, R);
    const gen_view &g = d->g;
    if (k == 1)
      apply_kernel<1, NL><<<gr, 32 * WARPS, sm, st>>>(g, row0, nrows, min_col, k, x, ldx, Y, ldy);
    else if (k <= 4)
      apply_kernel<4, NL><<<gr, 32 * WARPS, sm, st>>>(g, row0, nrows, min_col, k, x, ldx, Y, ldy);
    else
      apply_kernel<8, NL><<<gr, 32 * WARPS, sm, st>>>(g, row0, nrows, min_col, k, x, ldx, Y, ldy);
  });
  CIS_CUDA(cudaGetLastError());
  return CIS_OK;
}

/* ---- as the upload's device regenerator (spmv/hyb.h cis_regen_dev) ---------------------------- */

static cis_rowgen_cuda *of_pub(cis_regen_dev *p) {
  return (cis_rowgen_cuda *)((char *)p - offsetof(cis_rowgen_cuda, pub));
}

static cis_err regen_dev_apply(cis_regen_dev *p, int64_t row0, int64_t nrows, int k,
                               const double *x, double *Y, int64_t ldy, void *stream) {
  cis_rowgen_cuda *d = of_pub(p);
  return cis_rowgen_cuda_apply(d, row0, nrows, d->nref, k, x, 0, Y, ldy, stream);
}

static cis_err regen_dev_place(cis_regen_dev *p, const cis_dev_layout *L, void *stream) {
  return cis_rowgen_cuda_place(of_pub(p), L, L->ell_len, stream);
}

static void regen_dev_destroy(cis_regen_dev *p) {
  cis_rowgen_cuda *d = of_pub(p);
  cis_rowgen_cuda_destroy(&d);
}

cis_err cis_rowgen_regen_dev(void *ctx, int64_t *bytes, char *why, cis_regen_dev **out) {
  const cis_rowgen *g = (const cis_rowgen *)ctx;
  const char *no = cis_rowgen_cuda_why(g);
  if (out) *out = NULL;
  *bytes = no ? -1 : cis_rowgen_cuda_bytes(g);
  if (why) snprintf(why, 160, "%s", no ? no : "");
  if (no || !out) return CIS_OK;
  cis_rowgen_cuda *d = NULL;
  CIS_CALL(cis_rowgen_cuda_create(g, &d));
  d->pub.bytes = d->bytes;
  d->pub.apply = regen_dev_apply;
  d->pub.place = regen_dev_place;
  d->pub.destroy = regen_dev_destroy;
  *out = &d->pub;
  return CIS_OK;
}
