/* Row generation through string link tables (see rowgen.h). */
#include "hamiltonian/rowgen.h"

#include <math.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

/* Row scratch for regeneration, one slot per thread of the default team: a product
 * regenerates many blocks per call (and the squared spin penalty's diagonal needs scratch per
 * row), each needing max_row entries. A slot is taken with one atomic exchange per call (no
 * lock); a caller that finds none free (more threads than slots) allocates its own. Slots are
 * set up on first use, after cis_rowgen_set_spin. */
typedef struct {
  atomic_int busy;
  int ready;
  cis_rowbuf b;
} rowbuf_slot;

struct cis_rowbuf_pool {
  int n;
  rowbuf_slot *slot;
};

static cis_err pool_init(cis_rowgen *g) {
  int n = omp_get_max_threads();
  CIS_CALL(cis_calloc(&g->pool, 1, sizeof *g->pool, "row scratch pool"));
  CIS_CALL(cis_calloc(&g->pool->slot, (size_t)n, sizeof(rowbuf_slot), "row scratch pool"));
  g->pool->n = n;
  for (int i = 0; i < n; i++) atomic_init(&g->pool->slot[i].busy, 0);
  return CIS_OK;
}

static void pool_free(cis_rowgen *g) {
  if (!g->pool) return;
  for (int i = 0; g->pool->slot && i < g->pool->n; i++) cis_rowbuf_free(&g->pool->slot[i].b);
  cis_free(&g->pool->slot);
  cis_free(&g->pool);
}

/* A free slot's scratch, or *own set up when none is free (then *slot = NULL). */
static cis_err pool_take(const cis_rowgen *g, rowbuf_slot **slot, cis_rowbuf *own,
                         cis_rowbuf **b) {
  struct cis_rowbuf_pool *p = g->pool;
  for (int i = 0; i < p->n; i++) {
    rowbuf_slot *s = &p->slot[i];
    if (atomic_load_explicit(&s->busy, memory_order_relaxed) ||
        atomic_exchange_explicit(&s->busy, 1, memory_order_acquire))
      continue;
    if (!s->ready) {
      cis_err e = cis_rowbuf_init(g, &s->b);
      if (e != CIS_OK) {
        atomic_store_explicit(&s->busy, 0, memory_order_release);
        return e;
      }
      s->ready = 1;
    }
    *slot = s;
    *b = &s->b;
    return CIS_OK;
  }
  *slot = NULL;
  CIS_CALL(cis_rowbuf_init(g, own));
  *b = own;
  return CIS_OK;
}

static void pool_give(rowbuf_slot *slot, cis_rowbuf *own) {
  if (slot)
    atomic_store_explicit(&slot->busy, 0, memory_order_release);
  else
    cis_rowbuf_free(own);
}

/* Singles (pass 1: count only) of string I whose target lies in the list. */
static int64_t string_singles(const cis_sc *sc, const cis_strlist *l, int64_t I, const int *occ,
                              int nel, const int *vir, int nvir, uint64_t *t, cis_link1 *out) {
  const uint64_t *s = cis_strlist_at(l, I);
  int64_t n = 0;
  for (int x = 0; x < nel; x++)
    for (int u = 0; u < nvir; u++) {
      int i = occ[x], a = vir[u];
      memcpy(t, s, sizeof(uint64_t) * l->nw);
      cis_str_clear(t, i);
      cis_str_set(t, a);
      int64_t tgt = cis_strlist_find(l, t);
      if (tgt < 0) continue;
      if (out) {
        cis_link1 *k = &out[n];
        k->sign = cis_str_sign(s, i, a);
        k->v = k->sign * cis_sc_single_same(sc, occ, nel, i, a);
        k->tgt = (int32_t)tgt;
        k->pai = (int32_t)cis_pair(a, i);
        k->from = i;
      }
      n++;
    }
  return n;
}

/* Same-spin doubles i<j -> a<b of string I; the sign is that of i->a followed by j->b. */
static int64_t string_doubles(const cis_sc *sc, const cis_strlist *l, int64_t I, const int *occ,
                              int nel, const int *vir, int nvir, uint64_t *t, cis_link2 *out) {
  const uint64_t *s = cis_strlist_at(l, I);
  int64_t n = 0;
  for (int x = 0; x < nel; x++)
    for (int y = x + 1; y < nel; y++)
      for (int u = 0; u < nvir; u++)
        for (int w = u + 1; w < nvir; w++) {
          int i = occ[x], j = occ[y], a = vir[u], b = vir[w];
          memcpy(t, s, sizeof(uint64_t) * l->nw);
          cis_str_clear(t, i);
          cis_str_set(t, a);
          int s1 = cis_str_sign(s, i, a), s2 = cis_str_sign(t, j, b);
          cis_str_clear(t, j);
          cis_str_set(t, b);
          int64_t tgt = cis_strlist_find(l, t);
          if (tgt < 0) continue;
          if (out) {
            double v = s1 * s2 * cis_sc_double_same(sc, i, j, a, b);
            /* The element is this value alone: one every row would drop is not linked (the
             * counting pass leaves room for it; links_build closes the gaps). */
            if (!(fabs(v) > CIS_ROWGEN_DROP)) continue;
            out[n].v = v;
            out[n].tgt = (int32_t)tgt;
            out[n].pad = 0;
          }
          n++;
        }
  return n;
}

static int split_occ(const uint64_t *s, int nw, int norb, int *occ, int *vir, int *nvir) {
  int n = 0;
  *nvir = 0;
  for (int p = 0; p < norb; p++) {
    if (cis_str_test(s, p))
      occ[n++] = p;
    else
      vir[(*nvir)++] = p;
  }
  (void)nw;
  return n;
}

/* Two passes over the strings: count, then fill at the counted offsets. */
static cis_err links_pass(const cis_sc *sc, const cis_strlist *l, cis_links *lk,
                          int64_t *kept) {
  int fill = kept != NULL;
  int norb = sc->norb, fail = 0;
#pragma omp parallel
  {
    int *occ = malloc(sizeof(int) * 2 * (size_t)norb), *vir = occ ? occ + norb : NULL;
    uint64_t *t = malloc(sizeof(uint64_t) * (size_t)l->nw);
    if (!occ || !t) {
#pragma omp atomic write
      fail = 1;
    }
#pragma omp for schedule(dynamic, 16)
    for (int64_t I = 0; I < l->n; I++) {
      if (!occ || !t) continue;
      int nvir, nel = split_occ(cis_strlist_at(l, I), l->nw, norb, occ, vir, &nvir);
      if (fill) {
        string_singles(sc, l, I, occ, nel, vir, nvir, t, lk->s + lk->s_ptr[I]);
        kept[I] = string_doubles(sc, l, I, occ, nel, vir, nvir, t, lk->d + lk->d_ptr[I]);
      } else {
        lk->s_ptr[I + 1] = string_singles(sc, l, I, occ, nel, vir, nvir, t, NULL);
        lk->d_ptr[I + 1] = string_doubles(sc, l, I, occ, nel, vir, nvir, t, NULL);
      }
    }
    free(occ);
    free(t);
  }
  CIS_CHECK(!fail, CIS_ERR_NOMEM, "out of host memory building string link tables");
  return CIS_OK;
}

/* The links of list l (`spin`: "alpha" or "beta") of `space`: counted, checked against the host
 * memory left (cis_space_check_room), then filled. */
static cis_err links_build(const cis_sc *sc, const cis_space *space, const char *spin,
                           const cis_strlist *l, cis_links *lk) {
  int64_t n = l->n;
  CIS_CALL(cis_calloc(&lk->s_ptr, (size_t)n + 1, sizeof(int64_t), "single link pointers"));
  CIS_CALL(cis_calloc(&lk->d_ptr, (size_t)n + 1, sizeof(int64_t), "double link pointers"));
  CIS_CALL(links_pass(sc, l, lk, NULL));
  lk->max_s = lk->max_d = 0;
  for (int64_t I = 0; I < n; I++) {
    lk->max_s = (int)CIS_MAX(lk->max_s, lk->s_ptr[I + 1]);
    lk->max_d = (int)CIS_MAX(lk->max_d, lk->d_ptr[I + 1]);
    lk->s_ptr[I + 1] += lk->s_ptr[I];
    lk->d_ptr[I + 1] += lk->d_ptr[I];
  }
  char what[160], parts[64];
  snprintf(what, sizeof what, "%s of %lld determinants", space->desc, (long long)space->ndet);
  snprintf(parts, sizeof parts, "its %s string link tables", spin);
  CIS_CALL(cis_space_check_room(space,
                                (double)lk->s_ptr[n] * sizeof(cis_link1) +
                                    (double)lk->d_ptr[n] * sizeof(cis_link2) + (double)n * 8.0,
                                what, parts));
  CIS_CALL(cis_malloc(&lk->s, (size_t)lk->s_ptr[n], sizeof(cis_link1), "single links"));
  CIS_CALL(cis_malloc(&lk->d, (size_t)lk->d_ptr[n], sizeof(cis_link2), "double links"));
  int64_t *kept = NULL;
  CIS_CALL(cis_malloc(&kept, (size_t)n + 1, sizeof(int64_t), "double link counts"));
  cis_err err = links_pass(sc, l, lk, kept);
  if (err == CIS_OK) { /* close the gaps left by dropped doubles */
    int64_t at = 0;
    lk->max_d = 0;
    for (int64_t I = 0; I < n; I++) {
      memmove(lk->d + at, lk->d + lk->d_ptr[I], sizeof(cis_link2) * (size_t)kept[I]);
      lk->d_ptr[I] = at;
      at += kept[I];
      lk->max_d = (int)CIS_MAX(lk->max_d, kept[I]);
    }
    lk->d_ptr[n] = at;
    if (at > 0) err = cis_realloc(&lk->d, (size_t)at, sizeof(cis_link2), "double links");
  }
  cis_free(&kept);
  return err;
}

static void links_free(cis_links *lk) {
  cis_free(&lk->s_ptr);
  cis_free(&lk->d_ptr);
  cis_free(&lk->s);
  cis_free(&lk->d);
}

#define CIS_ROWGEN_MAX_CLASSES 16

/* Classes of pairs by their zero pattern in V. For a molecule with point-group symmetry (even
 * when its integrals were written without symmetry labels) the integrals between pairs of
 * different symmetry vanish and most alpha-beta doubles would be generated only to be dropped;
 * grouping lets the generator skip them. Exact: such an element is +-V(P,Q) alone, so it is
 * skipped only when it would be dropped. No pair-square array or too many classes: one class. */
static cis_err pair_classes(cis_rowgen *g) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  const cis_sc *sc = &g->sc;
  int64_t np = sc->npair, nw = (np + 63) / 64;
  uint64_t *pat = NULL;
  int n = 0;
  CIS_TRY(cis_calloc(&g->pcls, (size_t)np, sizeof(int32_t), "pair classes"));
  if (sc->vpp) {
    CIS_TRY(cis_calloc(&pat, (size_t)(nw * (CIS_ROWGEN_MAX_CLASSES + 1)), sizeof(uint64_t),
                       "pair patterns"));
    for (int64_t P = 0; P < np && n <= CIS_ROWGEN_MAX_CLASSES; P++) {
      uint64_t *row = pat + (int64_t)n * nw; /* the next free pattern */
      memset(row, 0, sizeof(uint64_t) * (size_t)nw);
      for (int64_t Q = 0; Q < np; Q++)
        if (fabs(sc->vpp[P * np + Q]) > CIS_ROWGEN_DROP) row[Q >> 6] |= (uint64_t)1 << (Q & 63);
      int c = 0;
      while (c < n && memcmp(pat + (int64_t)c * nw, row, sizeof(uint64_t) * (size_t)nw)) c++;
      g->pcls[P] = c;
      n += c == n;
    }
  }
  if (n == 0 || n > CIS_ROWGEN_MAX_CLASSES) {
    n = 1;
    memset(g->pcls, 0, sizeof(int32_t) * (size_t)np);
  }
  g->ncls = n;
  CIS_TRY(cis_calloc(&g->cls_nz, (size_t)(n * n), 1, "pair class table"));
  if (n == 1) g->cls_nz[0] = 1;
  for (int64_t P = 0; P < np && n > 1; P++)
    for (int64_t Q = 0; Q < np; Q++)
      if (fabs(sc->vpp[P * np + Q]) > CIS_ROWGEN_DROP) g->cls_nz[g->pcls[P] * n + g->pcls[Q]] = 1;
cleanup:
  cis_free(&pat);
  return err;
}

/* Each beta string's singles in class order (stable), with the offsets of each class. */
static cis_err group_singles(cis_rowgen *g) {
  cis_links *lk = &g->lb;
  int nc = g->ncls;
  int64_t n = g->space->bstr.n;
  CIS_CALL(cis_malloc(&g->cls_ptr, (size_t)(n * (nc + 1)), sizeof(int32_t), "single groups"));
#pragma omp parallel for schedule(static)
  for (int64_t I = 0; I < n; I++) {
    cis_link1 *s = lk->s + lk->s_ptr[I];
    int64_t m = lk->s_ptr[I + 1] - lk->s_ptr[I];
    for (int64_t i = 1; i < m; i++) { /* a few dozen links: insertion sort */
      cis_link1 x = s[i];
      int64_t j = i - 1;
      for (; j >= 0 && g->pcls[s[j].pai] > g->pcls[x.pai]; j--) s[j + 1] = s[j];
      s[j + 1] = x;
    }
    int32_t *cp = g->cls_ptr + I * (nc + 1), t = 0;
    cp[0] = 0;
    for (int c = 0; c < nc; c++) {
      while (t < m && g->pcls[s[t].pai] == c) t++;
      cp[c + 1] = t;
    }
  }
  return CIS_OK;
}

cis_err cis_rowgen_init(const cis_integrals *ints, const cis_space *space, cis_rowgen *g) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  memset(g, 0, sizeof *g);
  g->space = space;
  CIS_TRY(cis_sc_init(ints, &g->sc));
  CIS_TRY(links_build(&g->sc, space, "alpha", &space->astr, &g->la));
  CIS_TRY(links_build(&g->sc, space, "beta", &space->bstr, &g->lb));
  CIS_TRY(pair_classes(g));
  CIS_TRY(group_singles(g));
  CIS_TRY(pool_init(g));
  g->max_row = 1 + (int64_t)g->la.max_s * (1 + g->lb.max_s) + g->lb.max_s + g->la.max_d +
               g->lb.max_d;
cleanup:
  if (err) cis_rowgen_free(g);
  return err;
}

void cis_rowgen_free(cis_rowgen *g) {
  if (!g) return;
  cis_sc_free(&g->sc);
  links_free(&g->la);
  links_free(&g->lb);
  cis_free(&g->pcls);
  cis_free(&g->cls_nz);
  cis_free(&g->cls_ptr);
  cis_s2_targets_free(&g->s2t);
  pool_free(g);
}

cis_err cis_rowbuf_init(const cis_rowgen *g, cis_rowbuf *b) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  memset(b, 0, sizeof *b);
  int64_t n = g->max_row;
  b->cap = n;
  CIS_TRY(cis_malloc(&b->key, (size_t)n, sizeof(uint64_t), "row keys"));
  CIS_TRY(cis_malloc(&b->tmp, (size_t)n, sizeof(uint64_t), "row keys"));
  CIS_TRY(cis_malloc(&b->val, (size_t)n, sizeof(double), "row values"));
  CIS_TRY(cis_malloc(&b->col, (size_t)n, sizeof(int32_t), "row columns"));
  CIS_TRY(cis_malloc(&b->out, (size_t)n, sizeof(double), "row values"));
  CIS_TRY(cis_malloc(&b->pkk, 2 * (size_t)g->space->norb + 2, sizeof(int32_t), "pair indices"));
  if (g->spin_squared) {
    size_t m = 2 * (size_t)(g->max_flips + 1);
    CIS_TRY(cis_malloc(&b->fcol, m, sizeof(int64_t), "spin penalty columns"));
    CIS_TRY(cis_malloc(&b->fval, m, sizeof(double), "spin penalty values"));
    CIS_TRY(cis_malloc(&b->fw, 2 * (size_t)g->space->nw, sizeof(uint64_t), "spin penalty strings"));
  }
cleanup:
  if (err) cis_rowbuf_free(b);
  return err;
}

void cis_rowbuf_free(cis_rowbuf *b) {
  if (!b) return;
  cis_free(&b->key);
  cis_free(&b->tmp);
  cis_free(&b->val);
  cis_free(&b->col);
  cis_free(&b->out);
  cis_free(&b->pkk);
  cis_free(&b->fcol);
  cis_free(&b->fval);
  cis_free(&b->fw);
}

/* Sort keys by their upper 32 bits (the column): insertion sort for short rows, else LSD
 * radix on the bytes where the columns differ. */
static uint64_t *sort_keys(uint64_t *key, uint64_t *tmp, int64_t n) {
  if (n <= 48) {
    for (int64_t i = 1; i < n; i++) {
      uint64_t k = key[i];
      int64_t j = i - 1;
      for (; j >= 0 && key[j] > k; j--) key[j + 1] = key[j];
      key[j + 1] = k;
    }
    return key;
  }
  uint32_t diff = 0, c0 = (uint32_t)(key[0] >> 32);
  for (int64_t i = 1; i < n; i++) diff |= (uint32_t)(key[i] >> 32) ^ c0;
  for (int shift = 32; shift < 64; shift += 8) {
    if (!((diff >> (shift - 32)) & 0xffu)) continue;
    int64_t cnt[257] = {0};
    for (int64_t i = 0; i < n; i++) cnt[((key[i] >> shift) & 0xffu) + 1]++;
    for (int d = 0; d < 256; d++) cnt[d + 1] += cnt[d];
    for (int64_t i = 0; i < n; i++) tmp[cnt[(key[i] >> shift) & 0xffu]++] = key[i];
    uint64_t *sw = key;
    key = tmp;
    tmp = sw;
  }
  return key;
}

/* A row under construction: every candidate is written, and the count advances only for a
 * kept one (an existing column, |v| > CIS_ROWGEN_DROP). Most candidates of a molecular row are
 * dropped (integrals that vanish by symmetry), so a data-dependent branch here would
 * mispredict about as often as it is taken. */
typedef struct {
  int32_t *col;
  double *val;
  int64_t n;
} row_acc;

static inline void row_push(row_acc *r, int64_t col, double v) {
  r->col[r->n] = (int32_t)col;
  r->val[r->n] = v;
  r->n += (col >= 0) & (fabs(v) > CIS_ROWGEN_DROP);
}

static inline double cross_sum(const cis_sc *sc, int64_t P, const int32_t *pkk, int n) {
  double v = 0.0;
  if (sc->vpp) {
    const double *row = sc->vpp + P * sc->npair;
    for (int x = 0; x < n; x++) v += row[pkk[x]];
  } else {
    for (int x = 0; x < n; x++) v += cis_sc_v(sc, P, pkk[x]);
  }
  return v;
}

/* S^2 = S_- S_+ + Sz + Sz^2 couples two determinants that differ by a spin flip, alpha q->p
 * with beta p->q: an alpha and a beta single on the same orbital pair but from opposite
 * orbitals (the same pair from the same orbital is a pair move, which S^2 does not couple).
 * Its element is -s_alpha s_beta (as in cis_space_s2). */
static inline double spin_flip(const cis_rowgen *g, const cis_link1 *L, const cis_link1 *M) {
  if (g->spin_shift == 0.0 || g->spin_squared || L->pai != M->pai || L->from == M->from)
    return 0.0;
  return -g->spin_shift * L->sign * M->sign;
}

/* Row `d` of A = S^2 - spin_s2 inside the space (cis_space_s2_row). w: nwords of scratch. */
static int64_t s2_row(const cis_rowgen *g, int64_t d, int64_t *col, double *val, uint64_t *w) {
  int64_t c = cis_space_s2_row(g->space, &g->s2t, d, col, val, w);
  val[0] -= g->spin_s2;
  return c;
}

/* Row `row` of spin_shift * A^2 into r: sum over k of A_row,k A_k,j (duplicates are merged
 * after sorting). */
static void row_spin_squared(const cis_rowgen *g, int64_t row, cis_rowbuf *b, row_acc *r) {
  int64_t m = g->max_flips + 1, *c1 = b->fcol, *c2 = b->fcol + m;
  double *v1 = b->fval, *v2 = b->fval + m;
  int64_t n1 = s2_row(g, row, c1, v1, b->fw);
  for (int64_t x = 0; x < n1; x++) {
    int64_t n2 = s2_row(g, c1[x], c2, v2, b->fw);
    for (int64_t y = 0; y < n2; y++) row_push(r, c2[y], g->spin_shift * v1[x] * v2[y]);
  }
}

void cis_rowgen_set_spin(cis_rowgen *g, double shift, double s2) {
  const cis_space *s = g->space;
  double sz = 0.5 * (s->nalpha - s->nbeta);
  g->spin_shift = shift;
  g->spin_s2 = s2;
  g->spin_squared = shift != 0.0 && s2 > sz * (sz + 1.0) + 1e-9;
  g->max_flips = (int64_t)s->nalpha * s->nbeta;
  if (g->spin_squared) g->max_row += (g->max_flips + 1) * (g->max_flips + 1);
  cis_s2_targets_free(&g->s2t);
  if (g->spin_squared) cis_s2_targets_make(s, &g->s2t);
}

double cis_rowgen_penalty_diag(const cis_rowgen *g, int64_t row) {
  if (g->spin_shift == 0.0) return 0.0;
  if (g->spin_squared) {
    rowbuf_slot *slot;
    cis_rowbuf own, *b;
    double v = 0.0;
    if (pool_take(g, &slot, &own, &b) != CIS_OK) return NAN; /* caught as a non-finite diagonal */
    int64_t n1 = s2_row(g, row, b->fcol, b->fval, b->fw);
    for (int64_t x = 0; x < n1; x++) v += b->fval[x] * b->fval[x];
    pool_give(slot, &own);
    return g->spin_shift * v;
  }
  const cis_space *s = g->space;
  const uint64_t *a = cis_strlist_at(&s->astr, s->det_ia[row]);
  const uint64_t *b = cis_strlist_at(&s->bstr, s->det_ib[row]);
  int open_b = 0;
  for (int w = 0; w < s->nw; w++) open_b += __builtin_popcountll(b[w] & ~a[w]);
  double sz = 0.5 * (s->nalpha - s->nbeta);
  return g->spin_shift * (sz * (sz + 1.0) + open_b - g->spin_s2);
}

/* Alpha-beta doubles of alpha single L with every beta single [bs, be) of an alpha row that
 * holds every beta string (FCI-like): direct addressing, no spin flip. The hot loop. */
static inline int64_t ab_doubles_full(const int32_t *det, const double *vrow, double sl,
                                      const cis_link1 *bs, const cis_link1 *be, int32_t *col,
                                      double *val, int64_t n) {
  for (const cis_link1 *M = bs; M < be; M++) {
    double v = sl * (double)M->sign * vrow[M->pai];
    col[n] = det[M->tgt];
    val[n] = v;
    n += fabs(v) > CIS_ROWGEN_DROP;
  }
  return n;
}

/* Alpha singles of ia: with beta unchanged, and combined with every beta single. */
static void row_alpha_singles(const cis_rowgen *g, int32_t ia, int32_t ib, const int32_t *pkb,
                              int nb, row_acc *r) {
  const cis_space *s = g->space;
  const cis_sc *sc = &g->sc;
  const cis_link1 *bs = g->lb.s + g->lb.s_ptr[ib], *be = g->lb.s + g->lb.s_ptr[ib + 1];
  int direct_ok = sc->vpp && (g->spin_shift == 0.0 || g->spin_squared);
  for (int64_t p = g->la.s_ptr[ia]; p < g->la.s_ptr[ia + 1]; p++) {
    const cis_link1 *L = &g->la.s[p];
    int64_t lo = s->aptr[L->tgt], len = s->aptr[L->tgt + 1] - lo;
    if (len == 0) continue;
    if (len == s->bstr.n) { /* complete alpha row: direct addressing */
      const int32_t *det = s->amaj_det + lo;
      row_push(r, det[ib], L->v + L->sign * cross_sum(sc, L->pai, pkb, nb));
      if (direct_ok) { /* only the classes whose integrals with L's pair can be kept */
        const unsigned char *nz = g->cls_nz + (int64_t)g->pcls[L->pai] * g->ncls;
        const int32_t *cp = g->cls_ptr + (int64_t)ib * (g->ncls + 1);
        const double *vrow = sc->vpp + (int64_t)L->pai * sc->npair;
        for (int c = 0; c < g->ncls; c++)
          if (nz[c])
            r->n = ab_doubles_full(det, vrow, (double)L->sign, bs + cp[c], bs + cp[c + 1],
                                   r->col, r->val, r->n);
        continue;
      }
    } else {
      row_push(r, cis_space_lookup(s, L->tgt, ib),
               L->v + L->sign * cross_sum(sc, L->pai, pkb, nb));
    }
    for (const cis_link1 *M = bs; M < be; M++)
      row_push(r, cis_space_lookup(s, L->tgt, M->tgt),
               L->sign * M->sign * cis_sc_v(sc, L->pai, M->pai) + spin_flip(g, L, M));
  }
}

static int occ_pairs(const uint64_t *str, int nw, int32_t *pkk) {
  int n = 0;
  for (int w = 0; w < nw; w++)
    for (uint64_t x = str[w]; x; x &= x - 1) {
      int64_t k = 64 * w + __builtin_ctzll(x);
      pkk[n++] = (int32_t)cis_pair(k, k);
    }
  return n;
}

/* Beta singles and same-spin doubles of (ia, ib), after the alpha singles. */
static void row_rest(const cis_rowgen *g, int32_t ia, int32_t ib, const int32_t *pka, int na,
                     row_acc *r) {
  const cis_space *s = g->space;
  int64_t lo = s->aptr[ia];
  const int32_t *det = s->aptr[ia + 1] - lo == s->bstr.n ? s->amaj_det + lo : NULL;
  for (int64_t p = g->lb.s_ptr[ib]; p < g->lb.s_ptr[ib + 1]; p++) {
    const cis_link1 *M = &g->lb.s[p];
    row_push(r, det ? det[M->tgt] : cis_space_lookup(s, ia, M->tgt),
             M->v + M->sign * cross_sum(&g->sc, M->pai, pka, na));
  }
  for (int64_t p = g->la.d_ptr[ia]; p < g->la.d_ptr[ia + 1]; p++)
    if (s->aptr[g->la.d[p].tgt + 1] > s->aptr[g->la.d[p].tgt])
      row_push(r, cis_space_lookup(s, g->la.d[p].tgt, ib), g->la.d[p].v);
  for (int64_t p = g->lb.d_ptr[ib]; p < g->lb.d_ptr[ib + 1]; p++)
    row_push(r, det ? det[g->lb.d[p].tgt] : cis_space_lookup(s, ia, g->lb.d[p].tgt),
             g->lb.d[p].v);
}

/* Sort the row by column; only the squared spin penalty repeats a column: merge those. */
static int64_t sort_row(cis_rowbuf *b, int64_t n) {
  memcpy(b->val, b->out, sizeof(double) * (size_t)n);
  for (int64_t t = 0; t < n; t++) b->key[t] = ((uint64_t)(uint32_t)b->col[t] << 32) | (uint64_t)t;
  const uint64_t *k = sort_keys(b->key, b->tmp, n);
  int64_t m = 0;
  for (int64_t t = 0; t < n; t++) {
    int32_t c = (int32_t)(k[t] >> 32);
    double v = b->val[k[t] & 0xffffffffu];
    if (m > 0 && b->col[m - 1] == c) {
      b->out[m - 1] += v;
    } else {
      b->col[m] = c;
      b->out[m++] = v;
    }
  }
  return m;
}

/* Row `row` in generation order into col/val (room for max_row entries). */
static int64_t gen_row(const cis_rowgen *g, int64_t row, cis_rowbuf *b, int32_t *col,
                       double *val) {
  const cis_space *s = g->space;
  int32_t ia = s->det_ia[row], ib = s->det_ib[row];
  row_acc r = {col, val, 0};
  int32_t *pka = b->pkk, *pkb = b->pkk + s->norb + 1;
  int na = occ_pairs(cis_strlist_at(&s->astr, ia), s->nw, pka);
  int nb = occ_pairs(cis_strlist_at(&s->bstr, ib), s->nw, pkb);
  r.col[0] = (int32_t)row; /* the diagonal, kept even when zero */
  r.val[0] = s->hdiag[row] + (g->spin_squared ? 0.0 : cis_rowgen_penalty_diag(g, row));
  r.n = 1;
  row_alpha_singles(g, ia, ib, pkb, nb, &r);
  row_rest(g, ia, ib, pka, na, &r);
  if (g->spin_squared) row_spin_squared(g, row, b, &r);
  return r.n;
}

int64_t cis_rowgen_row(const cis_rowgen *g, int64_t row, int sorted, cis_rowbuf *b) {
  int64_t n = gen_row(g, row, b, b->col, b->out);
  /* Without the squared penalty every column appears once: an unsorted row is complete. */
  if (!sorted && !g->spin_squared) return n;
  return sort_row(b, n);
}

int64_t cis_rowgen_row_to(const cis_rowgen *g, int64_t row, cis_rowbuf *b, int32_t *col,
                          double *val) {
  if (!g->spin_squared) return gen_row(g, row, b, col, val);
  int64_t n = cis_rowgen_row(g, row, 0, b);
  memcpy(col, b->col, sizeof(int32_t) * (size_t)n);
  memcpy(val, b->out, sizeof(double) * (size_t)n);
  return n;
}

cis_err cis_rowgen_regen(void *ctx, int64_t row0, int64_t nrows, cis_csr_block *out) {
  cis_err err = CIS_OK;
  const cis_rowgen *g = ctx;
  rowbuf_slot *slot = NULL;
  cis_rowbuf own, *b = NULL;
  CIS_CALL(pool_take(g, &slot, &own, &b));
  CIS_CLEANUP_FUNCTION;
  int64_t nnz = 0, nref = g->space->nref;
  CIS_TRY(cis_csr_block_reserve(out, nrows, CIS_MAX(out->cap, 16 * nrows)));
  out->rowptr[0] = 0;
  for (int64_t l = 0; l < nrows; l++) {
    /* The product does not need sorted rows: keep the Expansion columns as they come. */
    int64_t len = cis_rowgen_row(g, row0 + l, 0, b);
    if (nnz + len > out->cap)
      CIS_TRY(cis_csr_block_reserve(out, nrows, CIS_MAX(2 * out->cap, nnz + len)));
    for (int64_t t = 0; t < len; t++) {
      out->col[nnz] = b->col[t];
      out->val[nnz] = b->out[t];
      nnz += b->col[t] >= nref;
    }
    out->rowptr[l + 1] = nnz;
  }
  out->row0 = row0;
  out->nrows = nrows;
  out->nnz = nnz;
cleanup:
  pool_give(slot, &own);
  return err;
}

cis_err cis_rowgen_apply(void *ctx, int64_t row0, int64_t nrows, int k, const double *X,
                         double *Y, int64_t n) {
  const cis_rowgen *g = ctx;
  rowbuf_slot *slot = NULL;
  cis_rowbuf own, *b = NULL;
  CIS_CALL(pool_take(g, &slot, &own, &b));
  int64_t nref = g->space->nref;
  for (int64_t r = row0; r < row0 + nrows; r++) {
    int64_t len = cis_rowgen_row(g, r, 0, b);
    for (int j = 0; j < k; j++) {
      const double *x = X + (int64_t)j * n;
      double acc = 0.0;
      for (int64_t t = 0; t < len; t++) /* the Reference columns are the ELL's */
        acc += b->col[t] >= nref ? b->out[t] * x[b->col[t]] : 0.0;
      Y[(int64_t)j * n + r] += acc;
    }
  }
  pool_give(slot, &own);
  return CIS_OK;
}
