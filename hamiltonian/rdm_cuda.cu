/* The density matrices' intermediates filled on a CUDA device (hamiltonian/rdm_cuda.h). */
#include <string.h>

extern "C" {
#include "base/util.h"
#include "hamiltonian/rdm_cuda.h"
}
#include "base/cuda_check.cuh"
#include "hamiltonian/space_lookup.cuh"
#include "kernels/backend_cuda.h"

/* What the kernel reads: device copies of rdm_rows and of the space's lookup. */
typedef struct {
  int norb, nw;
  int64_t nka, nb;            /* A strings (rows' alpha strings); the space's beta strings */
  const int64_t *kptr;        /* nka + 1 */
  const int32_t *kb;          /* rows */
  const int32_t *amap, *bmap; /* NULL: the identity */
  const uint64_t *abits, *bbits;
  const int64_t *la_ptr, *lb_ptr;
  const rdm_sx *la, *lb;
  const int64_t *aptr;        /* the space's alpha-major lookup */
  const int32_t *amaj_ib, *amaj_det;
} rdm_view;

struct cis_rdm_cuda {
  rdm_view g;
  cudaStream_t stream;
  void *mem[16];
  int nmem;
};

__device__ __forceinline__ int64_t rlookup(const rdm_view &g, int64_t ia, int32_t ib) {
  return cis_dev_space_lookup(g.aptr, g.amaj_ib, g.amaj_det, g.nb, ia, ib);
}

/* rdm.c row_terms for row k0 + r, without the one-particle sums (a product of the block); XA ==
 * XB sums the spins. */
__global__ void fill_kernel(rdm_view g, int64_t k0, int64_t cur, const double *v, double *XA,
                            double *XB, const double *w, double *w_rows) {
  int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= cur) return;
  int64_t k = k0 + r, lo = 0, hi = g.nka; /* the A string: kptr[ka] <= k < kptr[ka + 1] */
  while (hi - lo > 1) {
    int64_t mid = (lo + hi) >> 1;
    if (g.kptr[mid] <= k)
      lo = mid;
    else
      hi = mid;
  }
  int64_t ka = lo;
  int32_t kb = g.kb[k];
  int64_t ja0 = g.amap ? g.amap[ka] : ka, jb0 = g.bmap ? g.bmap[kb] : kb;
  int64_t K = ja0 >= 0 && jb0 >= 0 ? rlookup(g, ja0, (int32_t)jb0) : -1;
  if (w_rows) w_rows[r] = K >= 0 ? w[K] : 0.0;
  int norb = g.norb;
  if (K >= 0) { /* E_pp: the occupation of p */
    double vk = v[K];
    for (int wd = 0; wd < g.nw; wd++) {
      for (uint64_t bits = g.abits[ka * g.nw + wd]; bits; bits &= bits - 1)
        XA[(int64_t)(64 * wd + __ffsll((long long)bits) - 1) * (norb + 1) * cur + r] += vk;
      for (uint64_t bits = g.bbits[(int64_t)kb * g.nw + wd]; bits; bits &= bits - 1)
        XB[(int64_t)(64 * wd + __ffsll((long long)bits) - 1) * (norb + 1) * cur + r] += vk;
    }
  }
  if (jb0 >= 0) /* E^A_pq, p = i emptied from K towards J, q = a */
    for (int64_t t = g.la_ptr[ka]; t < g.la_ptr[ka + 1]; t++) {
      rdm_sx x = g.la[t];
      int64_t J = rlookup(g, x.tgt, (int32_t)jb0);
      if (J >= 0) XA[((int64_t)x.i * norb + x.a) * cur + r] += x.sign * v[J];
    }
  if (ja0 >= 0) /* E^B_pq: passes the alpha string with even parity */
    for (int64_t t = g.lb_ptr[kb]; t < g.lb_ptr[kb + 1]; t++) {
      rdm_sx y = g.lb[t];
      int64_t J = rlookup(g, ja0, y.tgt);
      if (J >= 0) XB[((int64_t)y.i * norb + y.a) * cur + r] += y.sign * v[J];
    }
}

/* A copy of n bytes of src on the device (8 bytes when n is 0, so that the pointer is valid),
 * kept in d->mem. */
static cis_err upload(cis_rdm_cuda *d, const void *src, size_t n, const void **dst) {
  void *p = NULL;
  cudaError_t e = cudaMalloc(&p, n ? n : 8);
  if (e != cudaSuccess) {
    char b[32];
    CIS_ERROR(cis_cuda_code(e), "cudaMalloc of the density matrices' tables (%s): %s",
              cis_format_bytes((double)n, b, sizeof b), cudaGetErrorString(e));
  }
  d->mem[d->nmem++] = p;
  if (n) CIS_CUDA(cudaMemcpyAsync(p, src, n, cudaMemcpyHostToDevice, d->stream));
  *dst = p;
  return CIS_OK;
}

extern "C" cis_err cis_rdm_cuda_create(const rdm_rows *R, cis_backend *be, cis_rdm_cuda **out) {
  cis_err err = CIS_OK;
  cis_rdm_cuda *d = NULL;
  const cis_space *s = R->s;
  *out = NULL;
  CIS_CLEANUP_FUNCTION;
  CIS_TRY(cis_calloc(&d, 1, sizeof *d, "density matrices on the device"));
  d->stream = cis_backend_cuda_stream(be);
  {
    rdm_view *g = &d->g;
    int64_t nka = R->A.n, nkb = R->B.n, nd = s->ndet;
    g->norb = s->norb;
    g->nw = s->nw;
    g->nka = nka;
    g->nb = s->bstr.n;
    size_t i64 = sizeof(int64_t), i32 = sizeof(int32_t), u64 = sizeof(uint64_t);
    CIS_TRY(upload(d, R->kptr, (size_t)(nka + 1) * i64, (const void **)&g->kptr));
    if (R->kb == s->amaj_ib) {
      CIS_TRY(upload(d, s->amaj_ib, (size_t)nd * i32, (const void **)&g->amaj_ib));
      g->kb = g->amaj_ib;
    } else {
      CIS_TRY(upload(d, R->kb, (size_t)R->nk * i32, (const void **)&g->kb));
      CIS_TRY(upload(d, s->amaj_ib, (size_t)nd * i32, (const void **)&g->amaj_ib));
    }
    CIS_TRY(upload(d, s->amaj_det, (size_t)nd * i32, (const void **)&g->amaj_det));
    CIS_TRY(upload(d, s->aptr, (size_t)(s->astr.n + 1) * i64, (const void **)&g->aptr));
    if (R->amap) CIS_TRY(upload(d, R->amap, (size_t)nka * i32, (const void **)&g->amap));
    if (R->bmap) CIS_TRY(upload(d, R->bmap, (size_t)nkb * i32, (const void **)&g->bmap));
    CIS_TRY(upload(d, R->A.bits, (size_t)(nka * R->A.nw) * u64, (const void **)&g->abits));
    CIS_TRY(upload(d, R->B.bits, (size_t)(nkb * R->B.nw) * u64, (const void **)&g->bbits));
    CIS_TRY(upload(d, R->la.ptr, (size_t)(nka + 1) * i64, (const void **)&g->la_ptr));
    CIS_TRY(upload(d, R->lb.ptr, (size_t)(nkb + 1) * i64, (const void **)&g->lb_ptr));
    CIS_TRY(upload(d, R->la.x, (size_t)R->la.ptr[nka] * sizeof(rdm_sx), (const void **)&g->la));
    CIS_TRY(upload(d, R->lb.x, (size_t)R->lb.ptr[nkb] * sizeof(rdm_sx), (const void **)&g->lb));
    /* the host's tables may go once the copies are made */
    CIS_CUDA_TRY(cudaStreamSynchronize(d->stream));
  }
  *out = d;
  d = NULL;
cleanup:
  cis_rdm_cuda_destroy(&d);
  return err;
}

extern "C" void cis_rdm_cuda_destroy(cis_rdm_cuda **d) {
  if (!d || !*d) return;
  if ((*d)->stream) cudaStreamSynchronize((*d)->stream);
  for (int i = 0; i < (*d)->nmem; i++) cudaFree((*d)->mem[i]);
  cis_free(d);
}

extern "C" cis_err cis_rdm_cuda_fill(const cis_rdm_cuda *d, int64_t k0, int64_t cur,
                                     const double *v, double *XA, double *XB, const double *w,
                                     double *w_rows) {
  if (cur <= 0) return CIS_OK;
  size_t bytes = sizeof(double) * (size_t)cur * (size_t)d->g.norb * (size_t)d->g.norb;
  CIS_CUDA(cudaMemsetAsync(XA, 0, bytes, d->stream));
  if (XB != XA) CIS_CUDA(cudaMemsetAsync(XB, 0, bytes, d->stream));
  const int threads = 128;
  unsigned blocks = (unsigned)((cur + threads - 1) / threads);
  fill_kernel<<<blocks, threads, 0, d->stream>>>(d->g, k0, cur, v, XA, XB, w, w_rows);
  CIS_CUDA(cudaGetLastError());
  return CIS_OK;
}
