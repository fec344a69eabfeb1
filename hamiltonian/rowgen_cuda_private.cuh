/* cisolve: the row generator on a CUDA device, what its two sources share (private to
 * hamiltonian/): the device tables, the candidates of a row as the host generator makes them
 * (gen_offdiag), handed to a sink by a group of lanes, and the launch shapes.
 *   rowgen_cuda.cu        the tables, and rows counted, filled or multiplied (products)
 *   rowgen_cuda_build.cu  a matrix built on the device: its census and its rows placed in an
 *                         upload's layouts */
#ifndef CIS_ROWGEN_CUDA_PRIVATE_CUH
#define CIS_ROWGEN_CUDA_PRIVATE_CUH

#include <math.h>
#include <stdint.h>

#include <type_traits>

extern "C" {
#include "base/util.h"
#include "hamiltonian/rowgen_cuda.h"
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

/* ---- device side: a row's candidates ------------------------------------------------------ */

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

static __device__ int docc_pairs(const uint64_t *str, int nw, int32_t *pkk) {
  int n = 0;
  for (int w = 0; w < nw; w++)
    for (uint64_t x = str[w]; x; x &= x - 1) {
      int64_t k = 64 * w + (__ffsll((long long)x) - 1);
      pkk[n++] = (int32_t)dpair(k, k);
    }
  return n;
}

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

/* ---- launch shapes ------------------------------------------------------------------------ */

/* Blocks for nrows rows, `per` rows a block. */
static inline unsigned grid_for(int64_t nrows, int per) {
  int64_t b = (nrows + per - 1) / per;
  return (unsigned)CIS_MIN(b, (int64_t)1 << 20);
}

/* f(std::integral_constant<int, NL>()) for a row's lanes L (4, 8, 16 or 32): a kernel's launch
 * for the lanes chosen at run time. */
template <class F>
static inline void by_lanes(int L, F f) {
  if (L == 4)
    f(std::integral_constant<int, 4>());
  else if (L == 8)
    f(std::integral_constant<int, 8>());
  else if (L == 16)
    f(std::integral_constant<int, 16>());
  else
    f(std::integral_constant<int, 32>());
}

/* Shared memory of a block of `groups` row groups. */
static inline size_t smem_for(const cis_rowgen_cuda *d, int groups) {
  return (size_t)groups * 2 * (size_t)(d->g.norb + 1) * sizeof(int32_t);
}

#endif
