/* The Z2 symmetries of the integrals (hamiltonian/symmetry.h).
 *
 * Pairs pq of orbitals carry the label g_p ^ g_q. A nonzero (pq|rs) says pairs pq and rs carry
 * the same label, a nonzero h_pq that pq carries none (like every pair pp): union-find over the
 * pairs collects these classes in one pass over the integrals. Each member of a class then
 * gives one linear condition over GF(2) (its label equals the class representative's), and the
 * solutions of the conditions are the symmetries. */
#include "hamiltonian/symmetry.h"

#include <math.h>
#include <string.h>

#include "base/util.h"

static int64_t uf_find(int32_t *up, int64_t x) {
  while (up[x] != x) {
    up[x] = up[up[x]];
    x = up[x];
  }
  return x;
}

/* The root of a class is its smallest pair, so the first member met in ascending order. */
static void uf_join(int32_t *up, int64_t a, int64_t b) {
  a = uf_find(up, a);
  b = uf_find(up, b);
  if (a < b) up[b] = (int32_t)a;
  else if (b < a) up[a] = (int32_t)b;
}

/* Rows of a GF(2) system over norb unknowns, kept by their lowest set bit (the pivot). */
typedef struct {
  int n, nw;
  uint64_t *rows; /* n x nw: row p has pivot p when has[p] */
  unsigned char *has;
} gf2;

static int lowest_bit(const uint64_t *v, int nw) {
  for (int w = 0; w < nw; w++)
    if (v[w]) return w * 64 + __builtin_ctzll(v[w]);
  return -1;
}

/* Add condition v (destroyed) to the system. */
static void gf2_add(gf2 *g, uint64_t *v) {
  for (int p; (p = lowest_bit(v, g->nw)) >= 0;) {
    uint64_t *r = g->rows + (int64_t)p * g->nw;
    if (!g->has[p]) {
      memcpy(r, v, (size_t)g->nw * sizeof *v);
      g->has[p] = 1;
      return;
    }
    for (int w = 0; w < g->nw; w++) v[w] ^= r[w];
  }
}

static void gf2_condition(gf2 *g, uint64_t *v, const int *orbs, int k) {
  memset(v, 0, (size_t)g->nw * sizeof *v);
  for (int i = 0; i < k; i++) v[orbs[i] >> 6] ^= (uint64_t)1 << (orbs[i] & 63);
  gf2_add(g, v);
}

/* Whether labels y (one bit per orbital) satisfy every condition. */
static int gf2_solves(const gf2 *g, const uint64_t *y) {
  for (int p = 0; p < g->n; p++) {
    if (!g->has[p]) continue;
    const uint64_t *r = g->rows + (int64_t)p * g->nw;
    int par = 0;
    for (int w = 0; w < g->nw; w++) par ^= __builtin_parityll(r[w] & y[w]);
    if (par) return 0;
  }
  return 1;
}

/* The classes of pairs that the integrals tie together (up: np entries). */
static void pair_classes(const cis_integrals *ints, int32_t *up) {
  int n = ints->norb;
  int64_t np = (int64_t)n * (n + 1) / 2, idx = 0;
  for (int64_t q = 0; q < np; q++) up[q] = (int32_t)q;
  for (int p = 0; p < n; p++) {
    uf_join(up, 0, cis_pair(p, p));
    for (int q = 0; q < p; q++)
      if (fabs(ints->h1e[p * n + q]) > CIS_SYM_ZERO || fabs(ints->h1e[q * n + p]) > CIS_SYM_ZERO)
        uf_join(up, 0, cis_pair(p, q));
  }
  for (int64_t pq = 0; pq < np; pq++)
    for (int64_t rs = 0; rs <= pq; rs++, idx++)
      if (fabs(ints->eri[idx]) > CIS_SYM_ZERO) uf_join(up, pq, rs);
}

/* ORBSYM's symmetries (Molpro numbering: the irrep of a product is the XOR of the numbers less
 * one) against the conditions. */
static void compare_orbsym(const cis_integrals *ints, const gf2 *g, uint64_t *y,
                           cis_orbsym *out) {
  int n = ints->norb, nw = g->nw, stated = 0;
  out->orbsym = CIS_ORBSYM_ABSENT;
  if (!ints->orbsym) return;
  for (int b = 0; b < 3; b++) {
    memset(y, 0, (size_t)nw * sizeof *y);
    int base = ((ints->orbsym[0] - 1) >> b) & 1, any = 0;
    for (int p = 0; p < n; p++)
      if ((((ints->orbsym[p] - 1) >> b) & 1) != base) {
        y[p >> 6] |= (uint64_t)1 << (p & 63);
        any = 1;
      }
    if (!any) continue;
    stated++;
    if (!gf2_solves(g, y)) {
      out->orbsym = CIS_ORBSYM_BROKEN;
      return;
    }
  }
  out->orbsym_bits = stated;
  if (stated) out->orbsym = CIS_ORBSYM_AGREES;
}

/* Reduce the system fully, then one solution per free unknown: that unknown 1, the other free
 * ones 0, each pivot unknown the entry of its row in that column. */
static void solutions(gf2 *g, cis_orbsym *out) {
  int n = g->n, nw = g->nw;
  for (int p = n - 1; p >= 0; p--) {
    if (!g->has[p]) continue;
    const uint64_t *rp = g->rows + (int64_t)p * nw;
    for (int q = 0; q < p; q++) {
      uint64_t *rq = g->rows + (int64_t)q * nw;
      if (g->has[q] && (rq[p >> 6] >> (p & 63) & 1))
        for (int w = 0; w < nw; w++) rq[w] ^= rp[w];
    }
  }
  out->nbits = 0;
  for (int f = 0; f < n && out->nbits < 63; f++) {
    if (g->has[f]) continue;
    uint64_t bit = (uint64_t)1 << out->nbits++;
    out->orb[f] |= bit;
    for (int p = 0; p < n; p++)
      if (g->has[p] && (g->rows[(int64_t)p * nw + (f >> 6)] >> (f & 63) & 1)) out->orb[p] |= bit;
  }
}

cis_err cis_orbsym_find(const cis_integrals *ints, cis_orbsym *out) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  int n = ints->norb, nw = cis_nwords(n);
  int64_t np = (int64_t)n * (n + 1) / 2;
  int32_t *up = NULL;
  int *pi = NULL, *pj = NULL;
  uint64_t *v = NULL;
  gf2 g = {n, nw, NULL, NULL};
  memset(out, 0, sizeof *out);
  out->norb = n;
  CIS_TRY(cis_calloc(&out->orb, (size_t)n, sizeof *out->orb, "orbital symmetry labels"));
  CIS_TRY(cis_malloc(&up, (size_t)np, sizeof *up, "orbital pair classes"));
  CIS_TRY(cis_malloc(&pi, (size_t)np, sizeof *pi, "orbital pairs"));
  CIS_TRY(cis_malloc(&pj, (size_t)np, sizeof *pj, "orbital pairs"));
  CIS_TRY(cis_calloc(&g.rows, (size_t)n * (size_t)nw, sizeof *g.rows, "symmetry conditions"));
  CIS_TRY(cis_calloc(&g.has, (size_t)n, 1, "symmetry pivots"));
  CIS_TRY(cis_malloc(&v, (size_t)nw, sizeof *v, "symmetry condition"));
  for (int p = 0; p < n; p++)
    for (int q = 0; q <= p; q++) {
      pi[cis_pair(p, q)] = p;
      pj[cis_pair(p, q)] = q;
    }
  pair_classes(ints, up);
  int zero[1] = {0};
  gf2_condition(&g, v, zero, 1); /* the gauge: orbital 0 carries label 0 */
  for (int64_t q = 0; q < np; q++) {
    int64_t r = uf_find(up, q);
    if (r == q) continue;
    int orbs[4] = {pi[q], pj[q], pi[r], pj[r]};
    gf2_condition(&g, v, orbs, 4);
  }
  compare_orbsym(ints, &g, v, out);
  solutions(&g, out);
cleanup:
  cis_free(&up);
  cis_free(&pi);
  cis_free(&pj);
  cis_free(&g.rows);
  cis_free(&g.has);
  cis_free(&v);
  if (err != CIS_OK) cis_orbsym_free(out);
  return err;
}

void cis_orbsym_free(cis_orbsym *o) {
  cis_free(&o->orb);
  o->nbits = 0;
}
