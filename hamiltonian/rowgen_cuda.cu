/* The row generator on a CUDA device (hamiltonian/rowgen_cuda.h). */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

extern "C" {
#include "base/util.h"
#include "hamiltonian/rowgen_cuda.h"
#include "spmv/valdict.h"
}
#include "base/cuda_check.cuh"
#include "hamiltonian/space_lookup.cuh"

#define WARPS 4   /* warps per block */
#define CIS_ROWGEN_CUDA_LANES 4 /* a row's lanes in products by default (lanes_for) */
#define FULL 0xffffffffu

/* What the kernels read: device copies of the host generator's tables. */
typedef struct {
  int64_t n, na, nb;        /* determinants; alpha and beta strings */
  int norb, nw, ncls;
  int64_t npair;
  int vpp;                  /* v is the pair-square V (npair x npair), else the 8-fold packed */
  int direct;               /* complete alpha rows take the class-grouped direct path */
  double spin_shift;        /* the (unsquared) spin penalty's shift, 0: none */
  const int64_t *las_ptr, *lad_ptr, *lbs_ptr, *lbd_ptr;
  const cis_link1 *las, *lbs;
  const cis_link2 *lad, *lbd;
  const int32_t *det_ia, *det_ib, *amaj_ib, *amaj_det;
  const int64_t *aptr;
  const uint64_t *abits, *bbits;
  const double *diag, *v;
  const int32_t *pcls, *cls_ptr;
  const unsigned char *cls_nz;
} gen_view;

struct cis_rowgen_cuda {
  gen_view g;
  int64_t bytes;
  void *mem[24];            /* the device arrays, freed together */
  int nmem;
  cis_regen_dev pub;        /* as the upload's device regenerator */
  int64_t nref;
  int lanes;                /* a row's lanes in products (4, 8, 16 or 32): lanes_for */
};

/* ---- device side ----------------------------------------------------------------------------- */

__device__ __forceinline__ int64_t dpair(int64_t p, int64_t q) {
  return p >= q ? p * (p + 1) / 2 + q : q * (q + 1) / 2 + p;
}

__device__ __forceinline__ double dv(const gen_view &g, int64_t P, int64_t Q) {
  return g.vpp ? g.v[P * g.npair + Q] : g.v[dpair(P, Q)];
}

__device__ __forceinline__ int64_t dlookup(const gen_view &g, int64_t ia, int32_t ib) {
  return cis_dev_space_lookup(g.aptr, g.amaj_ib, g.amaj_det, g.nb, ia, ib);
}

/* rowgen.c cross_sum, in its order */
__device__ __forceinline__ double dcross(const gen_view &g, int64_t P, const int32_t *pkk,
                                         int n) {
  double s = 0.0;
  if (g.vpp) {
    const double *row = g.v + P * g.npair;
    for (int x = 0; x < n; x++) s += row[pkk[x]];
  } else {
    for (int x = 0; x < n; x++) s += g.v[dpair(P, pkk[x])];
  }
  return s;
}

__device__ int docc_pairs(const uint64_t *str, int nw, int32_t *pkk) {
  int n = 0;
  for (int w = 0; w < nw; w++)
    for (uint64_t x = str[w]; x; x &= x - 1) {
      int64_t k = 64 * w + (__ffsll((long long)x) - 1);
      pkk[n++] = (int32_t)dpair(k, k);
    }
  return n;
}

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

/* The lanes of a row: NL of them (4, 8, 16 or 32), lane `lane` (0..NL-1) of the group `mask`. */
template <int NL>
__device__ __forceinline__ unsigned group_mask(int warp_lane) {
  return NL == 32 ? FULL : ((1u << NL) - 1u) << (warp_lane & ~(NL - 1));
}

/* Candidates [b, e) of a row, one a lane, NL at a time; f(t, col, v) makes candidate t and
 * says whether it exists. Every lane of the group pushes together. */
template <int NL, class S, class F>
__device__ __forceinline__ void lane_run(int64_t b, int64_t e, int lane, S &s, F f) {
  for (int64_t t0 = b; t0 < e; t0 += NL) {
    int64_t t = t0 + lane, col = -1;
    double v = 0.0;
    bool ok = t < e && f(t, col, v);
    s.push(ok, col, v);
  }
}

/* The row's candidates, in the host's order (rowgen.c gen_row), handed to s by the row's NL
 * lanes, NL at a time. pk: the group's 2 (norb + 1) pair slots. The diagonal is the caller's. */
template <int NL, class S>
__device__ void gen_offdiag(const gen_view &g, int64_t row, int lane, unsigned mask, int32_t *pk,
                            S &s) {
  int32_t ia = g.det_ia[row], ib = g.det_ib[row];
  int32_t *pka = pk, *pkb = pk + g.norb + 1;
  int na = 0, nb = 0;
  if (lane == 0) {
    na = docc_pairs(g.abits + (int64_t)ia * g.nw, g.nw, pka);
    nb = docc_pairs(g.bbits + (int64_t)ib * g.nw, g.nw, pkb);
  }
  na = __shfl_sync(mask, na, 0, NL);
  nb = __shfl_sync(mask, nb, 0, NL);
  __syncwarp(mask);
  const int64_t bs0 = g.lbs_ptr[ib];
  const int nbs = (int)(g.lbs_ptr[ib + 1] - bs0);
  const cis_link1 *bs = g.lbs + bs0;
  const int32_t *cp = g.cls_ptr + (int64_t)ib * (g.ncls + 1);
  /* alpha singles: with beta unchanged, and times every beta single */
  for (int64_t q = g.las_ptr[ia]; q < g.las_ptr[ia + 1]; q++) {
    const cis_link1 L = g.las[q];
    int64_t lo = g.aptr[L.tgt], len = g.aptr[L.tgt + 1] - lo;
    if (len == 0) continue;
    bool full = len == g.nb;
    /* with beta unchanged: one candidate, on lane q mod NL (the lanes take turns) */
    lane_run<NL>(0, 1, (lane - (int)q) & (NL - 1), s, [&](int64_t, int64_t &col, double &v) {
      col = full ? (int64_t)g.amaj_det[lo + ib] : dlookup(g, L.tgt, ib);
      v = L.v + L.sign * dcross(g, L.pai, pkb, nb);
      return true;
    });
    if (full && g.direct) { /* only the classes whose integrals with L's pair can be kept */
      const int32_t *det = g.amaj_det + lo;
      const unsigned char *nz = g.cls_nz + (int64_t)g.pcls[L.pai] * g.ncls;
      const double *vrow = g.v + (int64_t)L.pai * g.npair;
      const double sl = (double)L.sign;
      for (int c = 0; c < g.ncls; c++)
        if (nz[c])
          lane_run<NL>(cp[c], cp[c + 1], lane, s, [&](int64_t t, int64_t &col, double &v) {
            const cis_link1 M = bs[t];
            v = sl * (double)M.sign * vrow[M.pai];
            col = det[M.tgt];
            return true;
          });
      continue;
    }
    lane_run<NL>(0, nbs, lane, s, [&](int64_t t, int64_t &col, double &v) {
      const cis_link1 M = bs[t];
      col = full ? (int64_t)g.amaj_det[lo + M.tgt] : dlookup(g, L.tgt, M.tgt);
      double flip = 0.0; /* rowgen.c spin_flip (the unsquared penalty only) */
      if (g.spin_shift != 0.0 && L.pai == M.pai && L.from != M.from)
        flip = -g.spin_shift * L.sign * M.sign;
      v = L.sign * M.sign * dv(g, L.pai, M.pai) + flip;
      return true;
    });
  }
  /* beta singles, then alpha and beta doubles (rowgen.c row_rest) */
  int64_t alo = g.aptr[ia];
  bool afull = g.aptr[ia + 1] - alo == g.nb;
  lane_run<NL>(0, nbs, lane, s, [&](int64_t t, int64_t &col, double &v) {
    const cis_link1 M = bs[t];
    col = afull ? (int64_t)g.amaj_det[alo + M.tgt] : dlookup(g, ia, M.tgt);
    v = M.v + M.sign * dcross(g, M.pai, pka, na);
    return true;
  });
  lane_run<NL>(g.lad_ptr[ia], g.lad_ptr[ia + 1], lane, s, [&](int64_t p, int64_t &col, double &v) {
    const cis_link2 D = g.lad[p];
    if (g.aptr[D.tgt + 1] == g.aptr[D.tgt]) return false;
    col = dlookup(g, D.tgt, ib);
    v = D.v;
    return true;
  });
  lane_run<NL>(g.lbd_ptr[ib], g.lbd_ptr[ib + 1], lane, s, [&](int64_t p, int64_t &col, double &v) {
    const cis_link2 D = g.lbd[p];
    col = afull ? (int64_t)g.amaj_det[alo + D.tgt] : dlookup(g, ia, D.tgt);
    v = D.v;
    return true;
  });
  __syncwarp(mask); /* pk is reused by the group's next row */
}

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

/* ---- the matrix built on the device: its census, and its rows placed in the layouts ---------- */

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

__global__ void __launch_bounds__(32 * WARPS)
    census_kernel(gen_view g, dict_view D, int64_t row0, int64_t nrows, int64_t nref,
                  int32_t *ell_len, int32_t *exp_len, int32_t *exp_coded) {
  extern __shared__ int32_t smem[];
  int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  int32_t *pk = smem + w * 2 * (g.norb + 1);
  for (int64_t l = (int64_t)blockIdx.x * WARPS + w; l < nrows; l += (int64_t)gridDim.x * WARPS) {
    int64_t row = row0 + l;
    census_sink s = {nref, D, 0, 0, 0};
    s.take(lane == 0, row, g.diag[row]); /* the diagonal, kept even when zero */
    gen_offdiag<32>(g, row, lane, FULL, pk, s);
    int e = s.ell, p = s.plain, c = s.coded;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      e += __shfl_xor_sync(FULL, e, o);
      p += __shfl_xor_sync(FULL, p, o);
      c += __shfl_xor_sync(FULL, c, o);
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

/* A row's entries written where an upload stores them (cis_dev_layout): every lane of the warp
 * calls take together; each class's next entry number is warp-uniform. */
struct place_sink {
  const cis_dev_layout *L;
  dict_view D;
  int lane;
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
    unsigned me = __ballot_sync(FULL, e), mc = __ballot_sync(FULL, cc),
             mp = __ballot_sync(FULL, pl), below = (1u << lane) - 1u;
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

__global__ void __launch_bounds__(32 * WARPS)
    place_kernel(gen_view g, dict_view D, cis_dev_layout L, const int32_t *ell_len) {
  extern __shared__ int32_t smem[];
  int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  int32_t *pk = smem + w * 2 * (g.norb + 1);
  for (int64_t l = (int64_t)blockIdx.x * WARPS + w; l < L.nrows; l += (int64_t)gridDim.x * WARPS) {
    int64_t row = L.row0 + l;
    place_sink s;
    s.L = &L;
    s.D = D;
    s.lane = lane;
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
    gen_offdiag<32>(g, row, lane, FULL, pk, s);
    bool wrong = s.bad || (s.ell_on && s.ke != s.elen) ||
                 (s.exp_on && (s.p0 + s.kp != s.p1 || s.c0 + s.kc != s.c1));
    if (__any_sync(FULL, wrong) && lane == 0) *L.bad = 1;
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

/* Blocks for nrows rows, `per` rows a block. */
static unsigned grid_for(int64_t nrows, int per) {
  int64_t b = (nrows + per - 1) / per;
  return (unsigned)CIS_MIN(b, (int64_t)1 << 20);
}

/* Shared memory of a block of `groups` row groups. */
static size_t smem_for(const cis_rowgen_cuda *d, int groups) {
  return (size_t)groups * 2 * (size_t)(d->g.norb + 1) * sizeof(int32_t);
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
  int L = d->lanes, R = 32 / L * WARPS;
  unsigned gr = grid_for(nrows, R);
  size_t sm = smem_for(d, R);
  cudaStream_t st = (cudaStream_t)stream;
#define CIS_APPLY(K, LL)                                                                  \
  apply_kernel<K, LL><<<gr, 32 * WARPS, sm, st>>>(d->g, row0, nrows, min_col, k, x, ldx, Y, ldy)
#define CIS_APPLY_K(LL)  \
  do {                   \
    if (k == 1)          \
      CIS_APPLY(1, LL);  \
    else if (k <= 4)     \
      CIS_APPLY(4, LL);  \
    else                 \
      CIS_APPLY(8, LL);  \
  } while (0)
  if (L == 4)
    CIS_APPLY_K(4);
  else if (L == 8)
    CIS_APPLY_K(8);
  else if (L == 16)
    CIS_APPLY_K(16);
  else
    CIS_APPLY_K(32);
#undef CIS_APPLY_K
#undef CIS_APPLY
  CIS_CUDA(cudaGetLastError());
  return CIS_OK;
}

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
  census_kernel<<<grid_for(nrows, WARPS), 32 * WARPS, smem_for(d, WARPS)>>>(
      d->g, D, row0, nrows, d->nref, dev, dev + nrows, dev + 2 * nrows);
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
  place_kernel<<<grid_for(L->nrows, WARPS), 32 * WARPS, smem_for(d, WARPS),
                 (cudaStream_t)stream>>>(d->g, D, *L, ell_len);
  CIS_CUDA_TRY(cudaGetLastError());
  CIS_CUDA_TRY(cudaStreamSynchronize((cudaStream_t)stream)); /* before the dictionary goes */
cleanup:
  dict_free(dm);
  return err;
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
