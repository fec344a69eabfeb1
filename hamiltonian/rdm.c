/* Density matrices (see rdm.h).
 *
 * The rows K of the intermediates are determinants (A string ka, B string kb) in alpha-major
 * order: for FCI, or when no two-particle matrix is wanted, the space itself (its alpha-major
 * lookup); otherwise the space's single-excitation closure (rdm_closure.c). Single excitations
 * of every A and B string that land on a string of the space are listed once (target string,
 * i, a, sign), so a row costs one lookup per excitation.
 *
 * A block of cur rows of the intermediates of one vector is two column-major cur x norb^2
 * arrays (ld cur), XA[pq * cur + r] = <K_r|E^A_pq|v>, XB likewise: the layout the backend's
 * gemm_tn takes, so that each spin block of the two-particle matrix is
 *   G[(qp), (rs)] += sum_r Y[r][qp] X[r][rs]    (X of the ket, Y of the bra),
 * G[(qp), (rs)] = <bra|E_pq E_rs|ket>, put in PySCF's order afterwards (rows (qp) and (pq)
 * exchanged, the delta term removed from the same-spin blocks).
 */
#include "hamiltonian/rdm.h"

#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "hamiltonian/rdm_impl.h"
#ifdef CISOLVE_HAVE_CUDA
#include "hamiltonian/rdm_cuda.h"
#endif

static int64_t g_block_rows = 0;

/* Work below SMALL rows (or SMALL^2 entries) stays on one thread: a parallel region would cost
 * more than it saves. */
#define SMALL 256

void cis_rdm_set_block_rows(int64_t rows) { g_block_rows = rows > 0 ? rows : 0; }

/* Row K = (ka, kb) of the intermediates of v: <K|E^A_pq|v> added to XA[pq * ld + rr] and
 * <K|E^B_pq|v> to XB (both NULL: not stored; XA == XB: the spin sum) and, times w at K (w NULL
 * or K outside the space: nothing), added to eA[pq], eB[pq]. Within one spin every entry has
 * one term (E_pq with p != q leads from K to one determinant). */
static void row_terms(const rdm_rows *R, int64_t ka, int32_t kb, const double *v,
                      const double *w, double *XA, double *XB, int64_t ld, int64_t rr,
                      double *eA, double *eB) {
  const cis_space *s = R->s;
  int norb = s->norb;
  int64_t ja0 = R->amap ? R->amap[ka] : ka, jb0 = R->bmap ? R->bmap[kb] : kb;
  int64_t K = ja0 >= 0 && jb0 >= 0 ? cis_space_lookup(s, ja0, (int32_t)jb0) : -1;
  double wk = w && K >= 0 ? w[K] : 0.0;
  if (!XA && wk == 0.0) return;
  if (K >= 0) { /* E_pp: the occupation of p */
    double vk = v[K];
    const uint64_t *str[2] = {cis_strlist_at(&R->A, ka), cis_strlist_at(&R->B, kb)};
    double *X[2] = {XA, XB}, *e[2] = {eA, eB};
    for (int spin = 0; spin < 2; spin++)
      for (int wd = 0; wd < s->nw; wd++)
        for (uint64_t bits = str[spin][wd]; bits; bits &= bits - 1) {
          int64_t col = (int64_t)(64 * wd + __builtin_ctzll(bits)) * (norb + 1);
          if (X[spin]) X[spin][col * ld + rr] += vk;
          if (wk != 0.0) e[spin][col] += wk * vk;
        }
  }
  if (jb0 >= 0) /* E^A_pq, p = i emptied from K towards J, q = a */
    for (int64_t t = R->la.ptr[ka]; t < R->la.ptr[ka + 1]; t++) {
      const rdm_sx *x = &R->la.x[t];
      int64_t J = cis_space_lookup(s, x->tgt, (int32_t)jb0);
      if (J < 0) continue;
      double val = x->sign * v[J];
      int64_t col = (int64_t)x->i * norb + x->a;
      if (XA) XA[col * ld + rr] += val;
      if (wk != 0.0) eA[col] += wk * val;
    }
  if (ja0 >= 0) /* E^B_pq: passes the alpha string with even parity */
    for (int64_t t = R->lb.ptr[kb]; t < R->lb.ptr[kb + 1]; t++) {
      const rdm_sx *y = &R->lb.x[t];
      int64_t J = cis_space_lookup(s, ja0, y->tgt);
      if (J < 0) continue;
      double val = y->sign * v[J];
      int64_t col = (int64_t)y->i * norb + y->a;
      if (XB) XB[col * ld + rr] += val;
      if (wk != 0.0) eB[col] += wk * val;
    }
}

/* Rows [k0, k0 + cur) on the OpenMP threads: the ket's intermediates into TA, TB and the
 * bra's into BA, BB (NULL: not stored), and e1 (2 x n2) += <bra|E^A|ket>, <bra|E^B|ket> from
 * the rows inside the space. */
static cis_err rows_walk(const rdm_rows *R, int64_t k0, int64_t cur, const double *ket,
                         const double *bra, double *TA, double *TB, double *BA, double *BB,
                         double *e1) {
  int64_t n2 = (int64_t)R->s->norb * R->s->norb;
  int fail = 0;
#pragma omp parallel if (cur > SMALL)
  {
    int nt = omp_get_num_threads(), id = omp_get_thread_num();
    int64_t chunk = (cur + nt - 1) / nt, r0 = k0 + id * chunk;
    int64_t r1 = CIS_MIN(k0 + cur, r0 + chunk);
    double *e = r0 < r1 ? calloc((size_t)(2 * n2), sizeof(double)) : NULL;
    if (r0 < r1 && !e) {
#pragma omp atomic write
      fail = 1;
    }
    if (e) {
      int64_t lo = 0, hi = R->A.n; /* the A string of row r0: kptr[ka] <= r0 < kptr[ka+1] */
      while (hi - lo > 1) {
        int64_t mid = (lo + hi) / 2;
        if (R->kptr[mid] <= r0)
          lo = mid;
        else
          hi = mid;
      }
      int64_t ka = lo;
      for (int64_t r = r0; r < r1; r++) {
        while (R->kptr[ka + 1] <= r) ka++;
        row_terms(R, ka, R->kb[r], ket, bra, TA, TB, cur, r - k0, e, e + n2);
        if (BA) row_terms(R, ka, R->kb[r], bra, NULL, BA, BB, cur, r - k0, NULL, NULL);
      }
#pragma omp critical
      for (int64_t t = 0; t < 2 * n2; t++) e1[t] += e[t];
      free(e);
    }
  }
  CIS_CHECK(!fail, CIS_ERR_NOMEM, "out of host memory for density-matrix accumulators");
  return CIS_OK;
}

/* Where the block products run: the host's BLAS (be NULL), or a device backend with copies of
 * the block's intermediates; g holds a product that is scattered into its matrix (a device's,
 * or a product of compacted columns). */
typedef struct {
  cis_backend *be;
  double *g;
  int64_t gcap;
  int64_t n2;
} rdm_gemm;

/* One block's intermediate: cur rows of m columns (ld cur); col[k]: the pair index of column
 * k, or NULL when the columns are all n2 pairs in order. */
typedef struct {
  double *x, *dx; /* host, device */
  int m;
  int32_t *col;
} rdm_block;

/* Drop the columns that are zero in every row of the block (a space that reaches few orbital
 * pairs), moving the rest forward, when that leaves at most COMPACT of them: the products then
 * run on the columns kept. */
#define COMPACT 0.7
static void compact(rdm_block *B, int64_t cur, int64_t n2, int32_t *col) {
  int m = 0;
  for (int64_t c = 0; c < n2; c++) {
    const double *x = B->x + c * cur;
    int64_t r = 0;
    while (r < cur && x[r] == 0.0) r++;
    if (r < cur) col[m++] = (int32_t)c;
  }
  B->m = (int)n2;
  B->col = NULL;
  if (m > COMPACT * n2) return;
  for (int k = 0; k < m; k++)
    if (col[k] != k) memcpy(B->x + k * cur, B->x + col[k] * cur, sizeof(double) * (size_t)cur);
  B->m = m;
  B->col = col;
}

/* D[(qp), (rs)] += sum_r Y[r][qp] X[r][rs] over the block's cur rows. sym (host, Y == X): the
 * upper triangle of column-major D only (dsyrk), completed by finish_same_spin. */
static cis_err block_product(rdm_gemm *gm, int64_t cur, const rdm_block *X, const rdm_block *Y,
                             int sym, double *D) {
  int64_t n2 = gm->n2;
  int mx = X->m, my = Y->m, direct = !gm->be && !X->col && !Y->col;
  double *G = D;
  if (mx == 0 || my == 0) return CIS_OK;
  if (!direct && (int64_t)mx * my > gm->gcap) {
    CIS_CALL(cis_realloc(&gm->g, (size_t)mx * (size_t)my, sizeof(double),
                         "density-matrix product"));
    gm->gcap = (int64_t)mx * my;
  }
  if (!direct) G = gm->g;
  if (!gm->be) {
    double beta = direct ? 1.0 : 0.0;
    int ldg = direct ? (int)n2 : mx;
    if (sym)
      cblas_dsyrk(CblasColMajor, CblasUpper, CblasTrans, mx, (int)cur, 1.0, X->x, (int)cur, beta,
                  G, ldg);
    else
      cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, mx, my, (int)cur, 1.0, X->x,
                  (int)cur, Y->x, (int)cur, beta, G, ldg);
  } else {
    /* gemm_tn contracts over the backend's vector length: a view of the backend whose vectors
     * are the block's columns. */
    cis_backend view = *gm->be;
    view.n = cur;
    view.t_ortho = 0.0;
    CIS_CALL(view.ops->gemm_tn(&view, mx, my, X->dx, Y->dx, G));
    gm->be->t_ortho += view.t_ortho;
  }
  if (direct) return CIS_OK;
#pragma omp parallel for schedule(static) if ((int64_t)mx * my > SMALL * SMALL)
  for (int j = 0; j < my; j++) {
    int64_t cj = Y->col ? Y->col[j] : j;
    for (int i = 0; i < (sym ? j + 1 : mx); i++)
      D[cj * n2 + (X->col ? X->col[i] : i)] += G[(int64_t)j * mx + i];
  }
  return CIS_OK;
}

/* Exchange rows (qp) and (pq) of D (n2 x n2): G[(qp), (rs)] becomes D[p, q, r, s]. */
static void swap_pairs(int norb, double *D) {
  int64_t n2 = (int64_t)norb * norb;
#pragma omp parallel for schedule(dynamic, 1) if (n2 > SMALL)
  for (int p = 0; p < norb; p++)
    for (int q = p + 1; q < norb; q++) {
      double *x = D + (p * (int64_t)norb + q) * n2, *y = D + (q * (int64_t)norb + p) * n2;
      for (int64_t t = 0; t < n2; t++) {
        double u = x[t];
        x[t] = y[t];
        y[t] = u;
      }
    }
}

/* A same-spin block: the lower half from the upper (sym), PySCF's order, and
 * a+_p a+_r a_s a_q = E_pq E_rs - delta_qr E_ps with e[p * norb + s] = <bra|E_ps|ket>. */
static void finish_same_spin(int norb, const double *e, int sym, double *D) {
  int64_t n2 = (int64_t)norb * norb;
  if (sym)
#pragma omp parallel for schedule(dynamic, 16) if (n2 > SMALL)
    for (int64_t i = 0; i < n2; i++)
      for (int64_t j = i + 1; j < n2; j++) D[i * n2 + j] = D[j * n2 + i];
  swap_pairs(norb, D);
  for (int p = 0; p < norb; p++)
    for (int q = 0; q < norb; q++)
      for (int s = 0; s < norb; s++)
        D[((p * (int64_t)norb + q) * norb + q) * norb + s] -= e[p * norb + s];
}

/* ba[p,q,r,s] = ab[r,s,p,q]: the transpose of ab as an n2 x n2 matrix. */
static void transpose_pairs(int64_t n2, const double *ab, double *ba) {
  const int64_t T = 32;
#pragma omp parallel for schedule(static) if (n2 > SMALL)
  for (int64_t i0 = 0; i0 < n2; i0 += T)
    for (int64_t j0 = 0; j0 < n2; j0 += T)
      for (int64_t i = i0; i < CIS_MIN(n2, i0 + T); i++)
        for (int64_t j = j0; j < CIS_MIN(n2, j0 + T); j++) ba[i * n2 + j] = ab[j * n2 + i];
}

/* Rows per block: the intermediates of nbuf arrays within `bytes`. */
static int64_t block_rows(int64_t nk, int64_t n2, int nbuf, int64_t bytes) {
  int64_t rows = g_block_rows ? g_block_rows : bytes / (nbuf * n2 * 8);
  return CIS_MAX(1, CIS_MIN(rows, nk));
}

/* The ket's and the bra's vectors on the device, and the bra's values at a block's rows, when
 * the intermediates are filled there (hamiltonian/rdm_cuda.h). */
typedef struct {
  struct cis_rdm_cuda *fill;
  double *ket, *bra, *w_rows;
} rdm_dev;

/* e1 (2 x n2) += <bra|E^A_pq|ket>, <bra|E^B_pq|ket> over a block filled on the device: the
 * ket's intermediates times the bra's values at the block's rows (TA == TB, the spin sum:
 * e1's first half gets the sum). */
static cis_err device_one_particle(rdm_gemm *gm, int64_t cur, const rdm_block *TA,
                                   const rdm_block *TB, const double *w_rows, double *e1) {
  const rdm_block *T[2] = {TA, TB};
  for (int spin = 0; spin < (TA == TB ? 1 : 2); spin++) {
    cis_backend view = *gm->be;
    view.n = cur;
    view.t_ortho = 0.0;
    CIS_CALL(view.ops->gemm_tn(&view, (int)gm->n2, 1, T[spin]->dx, w_rows, gm->g));
    gm->be->t_ortho += view.t_ortho;
    for (int64_t t = 0; t < gm->n2; t++) e1[spin * gm->n2 + t] += gm->g[t];
  }
  return CIS_OK;
}

/* The two-particle blocks asked for in out, from the intermediates of rows R, a block at a
 * time: filled on the device where the backend is a CUDA one, else filled on the host (and
 * copied to a device backend's memory); e1 (2 x n2) gets <bra|E^A|ket>, <bra|E^B|ket>, or their
 * sum in its first half and zero in the other. With `summed`, out->dm2 alone, from the
 * intermediates of the spin sum E_pq. */
static cis_err two_particle(const rdm_rows *R, cis_backend *be, const double *bra,
                            const double *ket, int summed, double *e1, cis_rdm_out *out) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  const cis_space *s = R->s;
  int norb = s->norb, same = bra == ket, nbuf = (same ? 1 : 2) * (summed ? 1 : 2);
  int64_t n2 = (int64_t)norb * norb;
  rdm_gemm gm = {.be = be && be->is_device ? be : NULL, .n2 = n2};
  rdm_dev dev = {0};
#ifdef CISOLVE_HAVE_CUDA
  if (gm.be && cis_backend_is_cuda(be)) CIS_TRY(cis_rdm_cuda_create(R, be, &dev.fill));
#endif
  int64_t rows = block_rows(R->nk, n2, nbuf,
                            dev.fill ? CIS_RDM_DEVICE_BLOCK_BYTES : CIS_RDM_BLOCK_BYTES);
  double *host = NULL;
  int32_t *cols = NULL;
  rdm_block X[4];
  int sym = same && !gm.be;
  char parts[200];
  memset(X, 0, sizeof X);
  if (dev.fill) {
    CIS_TRY(be->ops->alloc(be, s->ndet, &dev.ket));
    CIS_TRY(be->ops->from_host(be, dev.ket, ket, s->ndet));
    dev.bra = dev.ket;
    if (!same) {
      CIS_TRY(be->ops->alloc(be, s->ndet, &dev.bra));
      CIS_TRY(be->ops->from_host(be, dev.bra, bra, s->ndet));
    }
    CIS_TRY(be->ops->alloc(be, rows, &dev.w_rows));
    CIS_TRY(cis_realloc(&gm.g, (size_t)(n2 * n2), sizeof(double), "density-matrix product"));
    gm.gcap = n2 * n2;
  } else {
    snprintf(parts, sizeof parts,
             "%lld rows of %d intermediates of %lld entries and a product%s", (long long)rows,
             nbuf, (long long)n2, gm.be ? " (the intermediates on the device too)" : "");
    double gbytes = (gm.be ? 1.0 : COMPACT * COMPACT) * (double)n2 * (double)n2 * 8.0;
    CIS_TRY(cis_space_check_room(s, (double)nbuf * (double)rows * (double)n2 * 8.0 + gbytes,
                                 "each block of the two-particle density matrices", parts));
    CIS_TRY(cis_malloc(&host, (size_t)(nbuf * rows * n2), sizeof *host, "density-matrix block"));
    CIS_TRY(cis_malloc(&cols, (size_t)(nbuf * n2), sizeof *cols, "density-matrix columns"));
  }
  for (int b = 0; b < nbuf; b++) {
    if (host) X[b].x = host + b * rows * n2;
    if (gm.be) CIS_TRY(be->ops->alloc(be, rows * n2, &X[b].dx));
    X[b].m = (int)n2;
  }
  /* ket: TA, TB = X[0], X[1]; bra: BA, BB = X[2], X[3], or the ket's; the spin sum: ket X[0],
   * bra X[1] */
  int bra0 = summed ? 1 : 2;
  rdm_block *TA = &X[0], *TB = &X[summed ? 0 : 1];
  rdm_block *BA = same ? TA : &X[bra0], *BB = same ? TB : &X[bra0 + (summed ? 0 : 1)];
  for (int64_t k0 = 0; k0 < R->nk; k0 += rows) {
    int64_t cur = CIS_MIN(rows, R->nk - k0);
    if (dev.fill) {
#ifdef CISOLVE_HAVE_CUDA
      CIS_TRY(cis_rdm_cuda_fill(dev.fill, k0, cur, dev.ket, TA->dx, TB->dx, dev.bra,
                                dev.w_rows));
      if (!same)
        CIS_TRY(cis_rdm_cuda_fill(dev.fill, k0, cur, dev.bra, BA->dx, BB->dx, NULL, NULL));
#endif
      CIS_TRY(device_one_particle(&gm, cur, TA, TB, dev.w_rows, e1));
    } else {
#pragma omp parallel for schedule(static) if (cur * n2 > SMALL * SMALL)
      for (int64_t t = 0; t < nbuf * n2; t++) memset(X[t / n2].x + (t % n2) * cur, 0, cur * 8);
      CIS_TRY(rows_walk(R, k0, cur, ket, bra, TA->x, TB->x, same ? NULL : BA->x,
                        same ? NULL : BB->x, e1));
      for (int b = 0; b < nbuf; b++) {
        compact(&X[b], cur, n2, cols + b * n2);
        if (gm.be) CIS_TRY(be->ops->from_host(be, X[b].dx, X[b].x, cur * X[b].m));
      }
    }
    if (summed) CIS_TRY(block_product(&gm, cur, TA, BA, sym, out->dm2));
    if (out->dm2aa) CIS_TRY(block_product(&gm, cur, TA, BA, sym, out->dm2aa));
    if (out->dm2bb) CIS_TRY(block_product(&gm, cur, TB, BB, sym, out->dm2bb));
    if (out->dm2ab) CIS_TRY(block_product(&gm, cur, TB, BA, 0, out->dm2ab));
    if (out->dm2ba && !out->dm2ab) CIS_TRY(block_product(&gm, cur, TA, BB, 0, out->dm2ba));
  }
  if (summed) {
    for (int64_t t = 0; t < n2; t++) e1[t] += e1[n2 + t];
    memset(e1 + n2, 0, sizeof(double) * (size_t)n2);
    finish_same_spin(norb, e1, sym, out->dm2);
  }
  if (out->dm2aa) finish_same_spin(norb, e1, sym, out->dm2aa);
  if (out->dm2bb) finish_same_spin(norb, e1 + n2, sym, out->dm2bb);
  if (out->dm2ab) swap_pairs(norb, out->dm2ab);
  if (out->dm2ba) {
    if (out->dm2ab)
      transpose_pairs(n2, out->dm2ab, out->dm2ba);
    else
      swap_pairs(norb, out->dm2ba);
  }
cleanup:
  for (int b = 0; b < 4; b++)
    if (X[b].dx) be->ops->free(be, &X[b].dx);
  if (dev.bra && dev.bra != dev.ket) be->ops->free(be, &dev.bra);
  if (dev.ket) be->ops->free(be, &dev.ket);
  if (dev.w_rows) be->ops->free(be, &dev.w_rows);
#ifdef CISOLVE_HAVE_CUDA
  cis_rdm_cuda_destroy(&dev.fill);
#endif
  cis_free(&gm.g);
  cis_free(&cols);
  cis_free(&host);
  return err;
}

cis_err cis_rdm12s(const cis_space *s, cis_backend *be, const double *bra, const double *ket,
                   cis_rdm_out *out) {
  cis_err err = CIS_OK;
  int norb = s->norb;
  int64_t n2 = (int64_t)norb * norb, n4 = n2 * n2;
  CIS_CHECK(norb < 32768, CIS_ERR_INPUT, "density matrices: %d orbitals (at most 32767)", norb);
  CIS_CLEANUP_FUNCTION;
  rdm_rows R;
  double *e1 = NULL; /* <bra|E^A_pq|ket>, <bra|E^B_pq|ket> */
  double *tmp[4] = {NULL, NULL, NULL, NULL};
  cis_rdm_out o = *out;
  double **d2[4] = {&o.dm2aa, &o.dm2ab, &o.dm2ba, &o.dm2bb};
  int resolved = o.dm2aa || o.dm2ab || o.dm2ba || o.dm2bb, two = resolved || o.dm2;
  /* the spin sum alone comes from the summed intermediates, which give no spin-resolved dm1;
   * with a spin block or dm1a, dm1b: every block, then their sum */
  int summed = o.dm2 && !resolved && !o.dm1a && !o.dm1b, by_blocks = o.dm2 && !summed;
  for (int b = 0; b < 4 && by_blocks; b++)
    if (!*d2[b]) {
      CIS_TRY(cis_space_check_room(s, (double)n4 * 8.0, "a spin block of the two-particle "
                                   "density matrix", "norb^4 doubles"));
      CIS_TRY(cis_malloc(&tmp[b], (size_t)n4, sizeof(double), "two-particle spin block"));
      *d2[b] = tmp[b];
    }
  memset(&R, 0, sizeof R);
  for (int b = 0; b < 4; b++)
    if (*d2[b]) memset(*d2[b], 0, sizeof(double) * (size_t)n4);
  if (o.dm2) memset(o.dm2, 0, sizeof(double) * (size_t)n4);
  CIS_TRY(cis_calloc(&e1, (size_t)(2 * n2), sizeof *e1, "one-particle density matrices"));
  CIS_TRY(cis_rdm_rows_build(s, two, &R));
  if (two)
    CIS_TRY(two_particle(&R, be, bra, ket, summed, e1, &o));
  else
    CIS_TRY(rows_walk(&R, 0, R.nk, ket, bra, NULL, NULL, NULL, NULL, e1));
  if (by_blocks)
#pragma omp parallel for schedule(static) if (n4 > SMALL * SMALL)
    for (int64_t t = 0; t < n4; t++) o.dm2[t] = o.dm2aa[t] + o.dm2ab[t] + o.dm2ba[t] + o.dm2bb[t];
  double *d1[3] = {o.dm1a, o.dm1b, o.dm1};
  for (int spin = 0; spin < 3; spin++) /* PySCF's dm1[p,q] = <bra|E_qp|ket> */
    if (d1[spin])
      for (int p = 0; p < norb; p++)
        for (int q = 0; q < norb; q++) {
          int64_t t = q * norb + p;
          d1[spin][p * norb + q] = spin < 2 ? e1[spin * n2 + t] : e1[t] + e1[n2 + t];
        }
cleanup:
  for (int b = 0; b < 4; b++) cis_free(&tmp[b]);
  cis_rdm_rows_free(&R);
  cis_free(&e1);
  return err;
}

#ifdef CISOLVE_HAVE_CUDA
/* cis_rdm_s2 on a CUDA backend: the spin-flip term sum_pq dm2ab[p,q,q,p] of each vector is
 * sum_K sum_pq <K|E^A_pq|v> <K|E^B_pq|v>, the dot product of its two intermediates, a block of
 * rows at a time. */
static cis_err s2_device(const cis_space *s, cis_backend *be, int k, const double *C,
                         double *s2) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  rdm_rows R;
  struct cis_rdm_cuda *fill = NULL;
  double *v = NULL, *XA = NULL, *XB = NULL;
  int64_t n = s->ndet, n2 = (int64_t)s->norb * s->norb;
  double sz = 0.5 * (s->nalpha - s->nbeta);
  memset(&R, 0, sizeof R);
  CIS_TRY(cis_rdm_rows_build(s, 1, &R));
  CIS_TRY(cis_rdm_cuda_create(&R, be, &fill));
  int64_t rows = block_rows(R.nk, n2, 2, CIS_RDM_DEVICE_BLOCK_BYTES);
  CIS_TRY(be->ops->alloc(be, n, &v));
  CIS_TRY(be->ops->alloc(be, rows * n2, &XA));
  CIS_TRY(be->ops->alloc(be, rows * n2, &XB));
  for (int j = 0; j < k; j++) {
    double nrm = 0.0, flip = 0.0;
    CIS_TRY(be->ops->from_host(be, v, C + (int64_t)j * n, n));
    CIS_TRY(be->ops->dot(be, n, v, v, &nrm));
    for (int64_t k0 = 0; k0 < R.nk; k0 += rows) {
      int64_t cur = CIS_MIN(rows, R.nk - k0);
      double d = 0.0;
      CIS_TRY(cis_rdm_cuda_fill(fill, k0, cur, v, XA, XB, NULL, NULL));
      CIS_TRY(be->ops->dot(be, cur * n2, XA, XB, &d));
      flip += d;
    }
    s2[j] = nrm > 0.0 ? sz * (sz + 1.0) + s->nbeta - flip / nrm : 0.0;
  }
cleanup:
  if (XA) be->ops->free(be, &XA);
  if (XB) be->ops->free(be, &XB);
  if (v) be->ops->free(be, &v);
  cis_rdm_cuda_destroy(&fill);
  cis_rdm_rows_free(&R);
  return err;
}
#endif

cis_err cis_rdm_s2(const cis_space *s, cis_backend *be, int k, const double *C, double *s2) {
#ifdef CISOLVE_HAVE_CUDA
  /* what the device cannot hold next to the solve's matrix (or any failure there) goes to the
   * host, which gives the same values */
  if (be && be->is_device && cis_backend_is_cuda(be)) {
    if (s2_device(s, be, k, C, s2) == CIS_OK) return CIS_OK;
    cis_error_clear();
  }
#endif
  (void)be;
  return cis_space_s2(s, k, C, s2);
}

cis_err cis_natural_orbitals(int norb, int k, const double *rdm, double *occ, double *vec) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  double *A = NULL, *w = NULL;
  int64_t nn = (int64_t)norb * norb;
  CIS_TRY(cis_malloc(&A, (size_t)nn, sizeof *A, "density matrix copy"));
  CIS_TRY(cis_malloc(&w, (size_t)norb, sizeof *w, "natural occupations"));
  for (int v = 0; v < k; v++) {
    memcpy(A, rdm + v * nn, sizeof(double) * (size_t)nn);
    lapack_int info = LAPACKE_dsyevd(LAPACK_COL_MAJOR, vec ? 'V' : 'N', 'U', norb, A, norb, w);
    if (info != 0)
      CIS_FAIL(CIS_ERR_NUMERIC, "LAPACKE_dsyevd failed (info %d) on the density matrix of "
               "root %d", (int)info, v);
    for (int i = 0; i < norb; i++) {
      int c = norb - 1 - i; /* descending */
      occ[v * norb + i] = w[c];
      if (!vec) continue;
      const double *col = A + (int64_t)c * norb;
      int big = 0;
      for (int p = 1; p < norb; p++)
        if (fabs(col[p]) > fabs(col[big])) big = p;
      double sg = col[big] < 0.0 ? -1.0 : 1.0;
      for (int p = 0; p < norb; p++) vec[v * nn + (int64_t)p * norb + i] = sg * col[p];
    }
  }
cleanup:
  cis_free(&A);
  cis_free(&w);
  return err;
}
