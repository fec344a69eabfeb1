/* cisolve: a matrix built on the GPU (hamiltonian/rowgen_cuda.h cis_rowgen_cuda_census,
 * cis_rowgen_cuda_place; docs/gpu.md, "The matrix built on the GPU"): each row's entries
 * counted as an upload stores them, and written into the upload's layouts. */
#include <string.h>

extern "C" {
#include "spmv/valdict.h"
}
#include "hamiltonian/rowgen_cuda_private.cuh"

/* A value dictionary's hash on the device (spmv/valdict.h cis_vdict_code). */
typedef struct {
  const uint64_t *keys;
  const uint16_t *slot;
} dict_view;

__device__ __forceinline__ int dcode(const dict_view &D, double v) {
  if (!D.slot) return -1;
  uint64_t b = (uint64_t)__double_as_longlong(v), key = b & ~(1ull << 63);
  const uint64_t mask = ((uint64_t)1 << CIS_VDICT_SLOTS_LOG2) - 1;
  for (uint64_t s = (key * 0x9E3779B97F4A7C15ull) >> (64 - CIS_VDICT_SLOTS_LOG2);;
       s = (s + 1) & mask) {
    uint16_t i = D.slot[s];
    if (i == CIS_VDICT_EMPTY) return -1;
    if (D.keys[s] == key) return (int)i | (int)((b >> 63) << 15);
  }
}

/* A row's entries counted as an upload stores them: Reference (columns < nref), and of the
 * Expansion ones, those the dictionary codes and the others. */
struct census_sink {
  int64_t nref;
  dict_view D;
  int ell, plain, coded;
  __device__ void take(bool keep, int64_t c, double v) {
    if (!keep) return;
    if (c < nref)
      ell++;
    else if (dcode(D, v) >= 0)
      coded++;
    else
      plain++;
  }
  /* c < 0: a determinant outside the space (a truncated space or a list) */
  __device__ void push(bool ok, int64_t c, double v) {
    take(ok && c >= 0 && fabs(v) > CIS_ROWGEN_DROP, c, v);
  }
};

/* A row per group of NL lanes, as in products (rowgen_cuda.cu apply_kernel). */
template <int NL>
__global__ void __launch_bounds__(32 * WARPS)
    census_kernel(gen_view g, dict_view D, int64_t row0, int64_t nrows, int64_t nref,
                  int32_t *ell_len, int32_t *exp_len, int32_t *exp_coded) {
  extern __shared__ int32_t smem[];
  const int R = 32 / NL * WARPS;
  int lane = threadIdx.x & (NL - 1), w = threadIdx.x / NL;
  unsigned mask = group_mask<NL>(threadIdx.x & 31);
  int32_t *pk = smem + w * 2 * (g.norb + 1);
  for (int64_t l = (int64_t)blockIdx.x * R + w; l < nrows; l += (int64_t)gridDim.x * R) {
    int64_t row = row0 + l;
    census_sink s = {nref, D, 0, 0, 0};
    s.take(lane == 0, row, g.diag[row]); /* the diagonal, kept even when zero */
    gen_offdiag<NL>(g, row, lane, mask, pk, s);
    int e = s.ell, p = s.plain, c = s.coded;
#pragma unroll
    for (int o = NL / 2; o > 0; o >>= 1) {
      e += __shfl_xor_sync(mask, e, o, NL);
      p += __shfl_xor_sync(mask, p, o, NL);
      c += __shfl_xor_sync(mask, c, o, NL);
    }
    if (lane == 0) {
      ell_len[l] = e;
      exp_len[l] = p + c;
      exp_coded[l] = c;
    }
  }
}

__device__ __forceinline__ void put_col(void *a, int bits, int64_t i, int64_t c) {
  if (bits == 16)
    ((uint16_t *)a)[i] = (uint16_t)c;
  else
    ((int32_t *)a)[i] = (int32_t)c;
}

/* A row's entries written where an upload stores them (cis_dev_layout): every lane of the row's
 * group (`mask`; wl, this lane's place in the warp) calls take together; each class's next entry
 * number is uniform in the group. */
struct place_sink {
  const cis_dev_layout *L;
  dict_view D;
  unsigned mask;
  int wl;
  bool ell_on, exp_on;
  int64_t eq, elen, p0, p1, c0, c1; /* the row's ELL start and length; its CSR ranges */
  int64_t ke, kp, kc;
  bool bad;
  /* The k-th entry of a range [p0, p1) read v positions a step: column c, value x; false when
   * the range has no room for it. */
  template <typename T>
  __device__ bool put(int64_t p0, int64_t p1, int v, int64_t k, void *col, int bits, T *val,
                      int64_t c, T x) {
    if (p0 + k >= p1) return false;
    int64_t at = cis_lane_pos(p0, p1, v, L->lanes, k);
    put_col(col, bits, at, c);
    val[at] = x;
    return true;
  }
  __device__ void take(bool keep, int64_t c, double v) {
    bool e = keep && c < L->nref;
    bool x = keep && !e && exp_on;
    int cd = x && L->dict ? dcode(D, v) : -1;
    bool cc = x && cd >= 0, pl = x && cd < 0;
    unsigned me = __ballot_sync(mask, e) & mask, mc = __ballot_sync(mask, cc) & mask,
             mp = __ballot_sync(mask, pl) & mask, below = (1u << wl) - 1u;
    /* (an ELL row starts on an even entry, so its lane order is that of [eq, eq + elen)) */
    if (e && ell_on) bad |= !put(eq, eq + elen, 2, ke + __popc(me & below), L->ell_col,
                                 L->ell_bits, L->ell_val, c, v);
    if (cc) bad |= !put(c0, c1, 4, kc + __popc(mc & below), L->ccol, L->csr_bits, L->code, c,
                        (uint16_t)cd);
    if (pl) bad |= !put(p0, p1, 2, kp + __popc(mp & below), L->col, L->csr_bits, L->val, c, v);
    ke += __popc(me);
    kc += __popc(mc);
    kp += __popc(mp);
  }
  __device__ void push(bool ok, int64_t c, double v) { /* as census_sink's */
    take(ok && c >= 0 && fabs(v) > CIS_ROWGEN_DROP, c, v);
  }
};

template <int NL>
__global__ void __launch_bounds__(32 * WARPS)
    place_kernel(gen_view g, dict_view D, cis_dev_layout L, const int32_t *ell_len) {
  extern __shared__ int32_t smem[];
  const int R = 32 / NL * WARPS;
  int lane = threadIdx.x & (NL - 1), w = threadIdx.x / NL;
  unsigned mask = group_mask<NL>(threadIdx.x & 31);
  int32_t *pk = smem + w * 2 * (g.norb + 1);
  for (int64_t l = (int64_t)blockIdx.x * R + w; l < L.nrows; l += (int64_t)gridDim.x * R) {
    int64_t row = L.row0 + l;
    place_sink s;
    s.L = &L;
    s.D = D;
    s.mask = mask;
    s.wl = threadIdx.x & 31;
    s.ell_on = L.ell_col != NULL;
    s.eq = s.elen = 0;
    if (s.ell_on) {
      int64_t sl = row / L.slice;
      s.eq = L.ell_ptr[sl] + (row - sl * L.slice) * (int64_t)L.ell_width[sl];
      s.elen = ell_len[row];
    }
    s.p0 = s.p1 = s.c0 = s.c1 = 0;
    if (L.rp) {
      s.p0 = L.rp[row];
      s.p1 = L.rp[row + 1];
      if (L.crp) {
        s.c0 = L.crp[row];
        s.c1 = L.crp[row + 1];
      }
    }
    /* rows whose Expansion entries are not resident have empty ranges */
    s.exp_on = s.p1 > s.p0 || s.c1 > s.c0;
    s.ke = s.kp = s.kc = 0;
    s.bad = false;
    s.take(lane == 0, row, g.diag[row]); /* the diagonal, kept even when zero */
    gen_offdiag<NL>(g, row, lane, mask, pk, s);
    bool wrong = s.bad || (s.ell_on && s.ke != s.elen) ||
                 (s.exp_on && (s.p0 + s.kp != s.p1 || s.c0 + s.kc != s.c1));
    if (__any_sync(mask, wrong) && lane == 0) *L.bad = 1;
  }
}

/* ---- host side -------------------------------------------------------------------------------- */

/* The dictionary's hash copied to the device (none without a dictionary): two arrays freed
 * with dict_free. */
static cis_err dict_upload(const cis_vdict *dict, dict_view *D, void **mem) {
  D->keys = NULL;
  D->slot = NULL;
  mem[0] = mem[1] = NULL;
  if (!dict || dict->size == 0) return CIS_OK;
  size_t nslots = (size_t)1 << CIS_VDICT_SLOTS_LOG2;
  CIS_CUDA(cudaMalloc(&mem[0], nslots * 8));
  CIS_CUDA(cudaMalloc(&mem[1], nslots * 2));
  CIS_CUDA(cudaMemcpy(mem[0], dict->keys, nslots * 8, cudaMemcpyHostToDevice));
  CIS_CUDA(cudaMemcpy(mem[1], dict->slot, nslots * 2, cudaMemcpyHostToDevice));
  D->keys = (const uint64_t *)mem[0];
  D->slot = (const uint16_t *)mem[1];
  return CIS_OK;
}

static void dict_free(void **mem) {
  for (int i = 0; i < 2; i++)
    if (mem[i]) cudaFree(mem[i]);
}

cis_err cis_rowgen_cuda_census(const cis_rowgen_cuda *d, int64_t row0, int64_t nrows,
                               const cis_vdict *dict, int32_t *ell_len, int32_t *exp_len,
                               int32_t *exp_coded) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  void *dm[2] = {NULL, NULL};
  int32_t *dev = NULL;
  dict_view D;
  if (nrows <= 0) return CIS_OK;
  CIS_TRY(dict_upload(dict, &D, dm));
  CIS_CUDA_TRY(cudaMalloc((void **)&dev, (size_t)nrows * 3 * sizeof *dev));
  by_lanes(d->lanes, [&](auto nl) {
    constexpr int NL = decltype(nl)::value, R = 32 / NL * WARPS;
    census_kernel<NL><<<grid_for(nrows, R), 32 * WARPS, smem_for(d, R)>>>(
        d->g, D, row0, nrows, d->nref, dev, dev + nrows, dev + 2 * nrows);
  });
  CIS_CUDA_TRY(cudaGetLastError());
  CIS_CUDA_TRY(cudaMemcpy(ell_len, dev, (size_t)nrows * 4, cudaMemcpyDeviceToHost));
  CIS_CUDA_TRY(cudaMemcpy(exp_len, dev + nrows, (size_t)nrows * 4, cudaMemcpyDeviceToHost));
  CIS_CUDA_TRY(cudaMemcpy(exp_coded, dev + 2 * nrows, (size_t)nrows * 4, cudaMemcpyDeviceToHost));
cleanup:
  if (dev) cudaFree(dev);
  dict_free(dm);
  return err;
}

cis_err cis_rowgen_cuda_place(const cis_rowgen_cuda *d, const cis_dev_layout *L,
                              const int32_t *ell_len, void *stream) {
  CIS_CHECK(L->nref == d->nref, CIS_ERR_INTERNAL,
            "device layouts of a Reference region of %lld columns for rows with %lld",
            (long long)L->nref, (long long)d->nref);
  if (L->nrows <= 0) return CIS_OK;
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  void *dm[2] = {NULL, NULL};
  dict_view D;
  CIS_TRY(dict_upload(L->crp ? L->dict : NULL, &D, dm));
  by_lanes(d->lanes, [&](auto nl) {
    constexpr int NL = decltype(nl)::value, R = 32 / NL * WARPS;
    place_kernel<NL><<<grid_for(L->nrows, R), 32 * WARPS, smem_for(d, R), (cudaStream_t)stream>>>(
        d->g, D, *L, ell_len);
  });
  CIS_CUDA_TRY(cudaGetLastError());
  CIS_CUDA_TRY(cudaStreamSynchronize((cudaStream_t)stream)); /* before the dictionary goes */
cleanup:
  dict_free(dm);
  return err;
}
