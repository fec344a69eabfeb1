/* spmv_bench's experiment --split: the whole matrix split by columns over the multiprocessors
 * of a thread-block cluster, each with its part of x and the value table in shared memory.
 *
 * Rows are cut into G groups of about equal entries, and each group's columns into P parts of
 * about equal entries and at most SPLIT_PART columns (P = the cluster's size). Cluster g takes
 * group g; its block h the entries of the group's rows whose columns lie in part h, with x's
 * part h and the table in shared memory.
 * The block's entries are one stream, row after row (a row with none in the part has a dummy
 * entry), cut into SPLIT_T runs of equal length, one per thread, stored interleaved so that
 * step i of the 1024 threads is one coalesced load. An entry is a 32-bit word: bits 0-13 the
 * column within the part, bit 14 "the row ends here", bits 16-31 the value's code (the
 * dictionary's sign and index; index 0x7FFF: the thread's next escaped value). A row ends in
 * one thread's run, which stores its sum in the block's row sums in shared memory; the runs it
 * went through before add theirs after a barrier. The cluster then sums its blocks' row sums
 * through distributed shared memory and writes y once. No row offsets are read, every thread
 * has the same work, the gathers of x and of the table are from shared memory, and an entry is
 * 4 bytes. */
#ifndef CIS_BENCH_SPLIT_CUH
#define CIS_BENCH_SPLIT_CUH

#include <cooperative_groups.h>
#include <cuda_pipeline.h>

#include <vector>


#define SPLIT_T 1024
#define SPLIT_U 2 /* 16-byte loads per thread and step */
#define SPLIT_PART 16384
#define SPLIT_ESC 0x7FFFu
#define SPLIT_END 0x4000u

#define SPLIT_MAXB 256 /* blocks a launch may have */
#define SPLIT_MAXP 8   /* blocks a cluster may have */

/* What a block needs to start, passed with the launch (no trip to memory before its loads). */
struct split_blk {
  int64_t base;     /* its first 16-byte word */
  int c0, cw;       /* its part's columns (each group has its own cuts) */
  int r0, nr;       /* its group's rows */
  int steps;        /* 16-byte words per thread */
  int e0, ne;       /* its escaped values, in stream order */
  int pad;
};

struct split_view {
  const uint32_t *first; /* per block and thread: its first entry's group row (bits 0-15) and
                          * its first escaped value, from the block's (bits 16-31) */
  const uint4 *w;
  const double *esc;
  const double *table; /* ntab1 entries, the last 0.0 (dummy and padding entries) */
  int ntab1, xw, maxesc; /* shared memory: xw doubles of x, the table, the block's escaped
                          * values (maxesc at most), then the row sums */
  split_blk b[SPLIT_MAXB];
};

/* as cis_apply_sign in spmv/hyb_kernels.cuh, whose non-template kernels the library defines */
__device__ __forceinline__ double split_sign(double v, unsigned code) {
  return __longlong_as_double(__double_as_longlong(v) | ((unsigned long long)(code >> 15) << 63));
}

/* DIAG (timing only, wrong products): 1 no entries, 2 unfinished rows added without atomics, 3 no
 * gathers of x, 4 neither gathers of x nor of the table, nor atomics, 5 a block returns at
 * once, 6 no entries and no copies into shared memory.
 * The 4 U words of a step: every shared-memory gather first (x and the value, from the table or
 * the escaped ones), then the sums row by row. Done word by word, a row's atomic add into the
 * row sums kept the next word's gathers behind it (they might alias). */
template <int DIAG>
__device__ __forceinline__ void split_step(const uint4 &q, const double *xs, const double *tab,
                                           const double *&ep, double &acc, int &row,
                                           double *yp) {
  const unsigned wd[4] = {q.x, q.y, q.z, q.w};
  double xv[4], vv[4];
#pragma unroll
  for (int k = 0; k < 4; k++) {
    const unsigned c = wd[k] >> 16, idx = c & 0x7FFFu;
    /* one shared load for either kind of value (an escaped one has no sign bit in its code) */
    const bool e = idx == SPLIT_ESC;
    vv[k] = DIAG == 4 ? (double)c : split_sign(*(e ? ep : tab + idx), c);
    ep += e;
    xv[k] = DIAG >= 3 ? (double)(wd[k] & 0x3FFFu) : xs[wd[k] & 0x3FFFu];
  }
#pragma unroll
  for (int k = 0; k < 4; k++) {
    acc = fma(vv[k], xv[k], acc);
    if (wd[k] & SPLIT_END) { /* the one thread where the row ends: a plain store */
      yp[row] = acc;
      acc = 0.0;
      row++;
    }
  }
}

template <int DIAG>
__global__ void __launch_bounds__(SPLIT_T, 1)
    split_kernel(const __grid_constant__ split_view v, const double *__restrict__ x,
                 double *__restrict__ y) {
  namespace cg = cooperative_groups;
  extern __shared__ double split_sh[];
  cg::cluster_group cl = cg::this_cluster();
  const int h = (int)cl.block_rank(), P = (int)cl.num_blocks();
  const int t = threadIdx.x;
  const split_blk &B = v.b[blockIdx.x];
  double *xs = split_sh, *tab = xs + v.xw, *es = tab + v.ntab1, *yp = es + v.maxesc;
  if (DIAG == 5) return;
  const int steps = DIAG == 1 || DIAG == 6 ? 0 : B.steps;
  const uint4 *wp = v.w + B.base + t;
  uint4 q[SPLIT_U];
#pragma unroll
  for (int u = 0; u < SPLIT_U; u++)
    q[u] = u < steps ? __ldcs(wp + (int64_t)u * SPLIT_T) : make_uint4(0, 0, 0, 0);
  const uint32_t first = __ldcs(v.first + (int64_t)blockIdx.x * SPLIT_T + t);
  /* x's part, the table and the block's escaped values copied asynchronously (all in flight
   * at once), the row sums zeroed meanwhile */
  for (int i = t; i < (DIAG == 6 ? 0 : B.cw); i += SPLIT_T)
    __pipeline_memcpy_async(xs + i, x + B.c0 + i, 8);
  for (int i = t; i < (DIAG == 6 ? 0 : v.ntab1); i += SPLIT_T)
    __pipeline_memcpy_async(tab + i, v.table + i, 8);
  for (int i = t; i < (DIAG == 6 ? 0 : B.ne); i += SPLIT_T)
    __pipeline_memcpy_async(es + i, v.esc + B.e0 + i, 8);
  __pipeline_commit();
  int row = (int)(first & 0xFFFFu);
  const double *ep = es + (first >> 16);
  double acc = 0.0;
  __pipeline_wait_prior(0);
  __syncthreads();
  for (int s = 0; s < steps; s += SPLIT_U) {
    uint4 nq[SPLIT_U];
#pragma unroll
    for (int u = 0; u < SPLIT_U; u++)
      nq[u] = s + SPLIT_U + u < steps ? __ldcs(wp + (int64_t)(s + SPLIT_U + u) * SPLIT_T) : q[u];
#pragma unroll
    for (int u = 0; u < SPLIT_U; u++)
      if (s + u < steps) split_step<DIAG>(q[u], xs, tab, ep, acc, row, yp);
#pragma unroll
    for (int u = 0; u < SPLIT_U; u++) q[u] = nq[u];
  }
  /* the row the run stopped in, unfinished: added after every row's store (its other parts
   * are other threads' unfinished rows, or the store of the thread where it ends) */
  __syncthreads();
  if (row < B.nr) {
    if (DIAG == 2 || DIAG == 4)
      yp[row] += acc;
    else
      atomicAdd(yp + row, acc);
  }
  cl.sync();
  for (int l = h + P * t; l < B.nr; l += P * SPLIT_T) {
    double part[SPLIT_MAXP];
#pragma unroll
    for (int r = 0; r < SPLIT_MAXP; r++) part[r] = r < P ? cl.map_shared_rank(yp, r)[l] : 0.0;
    double sum = 0.0;
#pragma unroll
    for (int r = 0; r < SPLIT_MAXP; r++) sum += part[r];
    y[B.r0 + l] = sum;
  }
  cl.sync(); /* the others' row sums are read before any block leaves */
}

/* The layout on the host. */
struct split_host {
  int parts, groups, ntab1, xw, maxrows, maxesc;
  std::vector<int32_t> c0, grow, len, ebase, eb0;
  std::vector<int64_t> base;
  std::vector<uint16_t> start;
  std::vector<uint32_t> w, first;
  std::vector<double> esc, table;
  int64_t dummies, padding;
};

/* Build from a CSR (rows' columns in any order) and a dictionary of at most 4096 magnitudes;
 * false when the matrix does not fit P parts or the shared memory. */
static bool split_build(int64_t n, const int64_t *rp, const int32_t *col, const double *val,
                        const cis_vdict *d, int P, int G, split_host *o) {
  o->parts = P;
  o->groups = G;
  o->dummies = o->padding = 0;
  if ((int64_t)P * SPLIT_PART < n) return false;
  /* Groups of about equal entries, then each group's columns cut into parts of about equal
   * entries, each at most SPLIT_PART columns (c0[g * (P + 1) + h]). Where a part had to be held
   * to SPLIT_PART columns its group's largest part is above the mean: the rows are weighted by
   * that excess and the groups cut again, up to 4 times, keeping the cut whose largest part is
   * smallest. */
  std::vector<double> wcum((size_t)n + 1);
  for (int64_t r = 0; r <= n; r++) wcum[(size_t)r] = (double)rp[r];
  std::vector<int64_t> cum((size_t)n + 1);
  std::vector<int32_t> grow((size_t)G + 1), c0all((size_t)G * (P + 1));
  std::vector<double> excess((size_t)G);
  int64_t best = INT64_MAX;
  for (int pass = 0; pass < 4; pass++) {
    grow[0] = 0;
    grow[(size_t)G] = (int32_t)n;
    for (int g = 1; g < G; g++)
      grow[(size_t)g] = (int32_t)(std::lower_bound(wcum.begin(), wcum.end(),
                                                   wcum[(size_t)n] * g / G) - wcum.begin());
    int64_t worst = 0;
    int xw = 0;
    for (int g = 0; g < G; g++) {
      std::fill(cum.begin(), cum.end(), 0);
      for (int64_t p = rp[grow[(size_t)g]]; p < rp[grow[(size_t)g + 1]]; p++)
        cum[(size_t)col[p] + 1]++;
      for (int64_t c = 0; c < n; c++) cum[(size_t)c + 1] += cum[(size_t)c];
      int32_t *c0 = &c0all[(size_t)g * (P + 1)];
      c0[0] = 0;
      c0[P] = (int32_t)n;
      int64_t most = 0;
      for (int h = 1; h <= P; h++) {
        if (h < P) {
          /* the entries left shared evenly among the parts left */
          const int64_t done = cum[(size_t)c0[h - 1]];
          int64_t c = std::lower_bound(cum.begin(), cum.end(),
                                       done + (cum[(size_t)n] - done) / (P - h + 1)) -
                      cum.begin();
          c = std::max<int64_t>(
              c, std::max<int64_t>(c0[h - 1] + 1, n - (int64_t)(P - h) * SPLIT_PART));
          c = std::min<int64_t>(c, c0[h - 1] + SPLIT_PART);
          c0[h] = (int32_t)std::min<int64_t>(c, n);
        }
        most = std::max(most, cum[(size_t)c0[h]] - cum[(size_t)c0[h - 1]]);
        xw = std::max(xw, c0[h] - c0[h - 1]);
      }
      const int64_t total = cum[(size_t)n];
      excess[(size_t)g] = total ? (double)P * most / total : 1.0;
      worst = std::max(worst, most);
    }
    if (worst < best) {
      best = worst;
      o->grow = grow;
      o->c0 = c0all;
      o->xw = xw;
    }
    for (int64_t r = 0, g = 0; r < n; r++) { /* weights for the next pass */
      while (r >= grow[(size_t)g + 1]) g++;
      wcum[(size_t)r + 1] = wcum[(size_t)r] + (double)(rp[r + 1] - rp[r]) * excess[(size_t)g];
    }
  }
  o->maxrows = 0;
  for (int g = 0; g < G; g++)
    o->maxrows = std::max(o->maxrows, o->grow[(size_t)g + 1] - o->grow[(size_t)g]);
  if (o->xw > SPLIT_PART) return false;
  o->ntab1 = d->size + 1;
  if (d->size > 4096 || o->maxrows > 65535 ||
      (size_t)(o->xw + o->ntab1 + o->maxrows) * 8 > 227 * 1024)
    return false;
  o->table.assign(d->table, d->table + d->size);
  o->table.push_back(0.0);
  const uint32_t zero = (uint32_t)d->size << 16;
  o->base.assign((size_t)G * P, 0);
  o->len.assign((size_t)G * P, 0);
  o->start.assign((size_t)G * P * SPLIT_T, 0);
  o->ebase.assign((size_t)G * P * SPLIT_T, 0);
  o->eb0.assign((size_t)G * P + 1, 0);
  o->maxesc = 0;
  o->w.clear();
  o->esc.clear();
  std::vector<uint32_t> sw;
  std::vector<uint16_t> srow;
  std::vector<double> sesc;
  std::vector<int32_t> sesc_at; /* escapes before each stream position */
  for (int g = 0; g < G; g++)
    for (int h = 0; h < P; h++) {
      const int b = g * P + h, lo = o->c0[(size_t)g * (P + 1) + h],
                hi = o->c0[(size_t)g * (P + 1) + h + 1];
      const int r0 = o->grow[(size_t)g], r1 = o->grow[(size_t)g + 1];
      sw.clear();
      srow.clear();
      sesc.clear();
      sesc_at.clear();
      for (int r = r0; r < r1; r++) {
        size_t first = sw.size();
        for (int64_t p = rp[r]; p < rp[r + 1]; p++) {
          if (col[p] < lo || col[p] >= hi) continue;
          int cd = cis_vdict_code(d, val[p]);
          sesc_at.push_back((int32_t)sesc.size());
          if (cd < 0) {
            sesc.push_back(val[p]);
            cd = (int)SPLIT_ESC;
          }
          sw.push_back((uint32_t)(col[p] - lo) | ((uint32_t)cd << 16));
          srow.push_back((uint16_t)(r - r0));
        }
        if (sw.size() == first) { /* a dummy entry: 0 x x[lo] */
          sesc_at.push_back((int32_t)sesc.size());
          sw.push_back(zero);
          srow.push_back((uint16_t)(r - r0));
          o->dummies++;
        }
        sw.back() |= SPLIT_END;
      }
      const int64_t S = (int64_t)sw.size(), step = 4;
      const int64_t L = ((S + SPLIT_T - 1) / SPLIT_T + step - 1) / step * step;
      o->len[(size_t)b] = (int32_t)L;
      o->base[(size_t)b] = (int64_t)o->w.size() / 4;
      const size_t w0 = o->w.size();
      o->w.resize(w0 + (size_t)(L * SPLIT_T), zero);
      o->padding += L * SPLIT_T - S;
      for (int t = 0; t < SPLIT_T; t++) {
        const int64_t p0 = (int64_t)t * L;
        const size_t bt = (size_t)b * SPLIT_T + t;
        o->start[bt] = p0 < S ? srow[(size_t)p0] : (uint16_t)(r1 - r0);
        o->ebase[bt] = (int32_t)(p0 < S ? sesc_at[(size_t)p0] : sesc.size());
        for (int64_t i = 0; i < L && p0 + i < S; i++)
          o->w[w0 + (size_t)(((i / 4) * SPLIT_T + t) * 4 + i % 4)] = sw[(size_t)(p0 + i)];
      }
      o->esc.insert(o->esc.end(), sesc.begin(), sesc.end());
      o->eb0[(size_t)b + 1] = (int32_t)o->esc.size();
      o->maxesc = std::max(o->maxesc, (int)sesc.size());
    }
  o->first.resize(o->start.size());
  for (size_t i = 0; i < o->start.size(); i++) {
    if (o->ebase[i] > 65535) return false;
    o->first[i] = o->start[i] | ((uint32_t)o->ebase[i] << 16);
  }
  return G * P <= SPLIT_MAXB &&
         (size_t)(o->xw + o->ntab1 + o->maxrows + o->maxesc) * 8 <= 227 * 1024;
}

#endif
