/* MRCI spaces: every determinant within N excitations (electrons moved, alpha + beta) of any
 * determinant of a model space; the model space is the Reference region (docs/format.md).
 *
 * The union of the model determinants' neighbourhoods is enumerated without repeats, counted
 * before it is stored. The model determinants are grouped into product blocks SA_g x SB_g
 * (model alpha strings sharing the same set of beta partners: a CAS is one block, a list of
 * distinct alpha strings one block each). A determinant (a, b) is within N of block g when
 * la_g(a) + lb_g(b) <= N, la_g(a) = min over SA_g of the electrons a moves, and likewise lb_g:
 * the two spins are independent within a block. Per alpha string, the beta strings of every
 * block it reaches (those with lb_g <= N - la_g(a), kept in order of lb_g) are marked once
 * each; a first pass counts them, the second stores them.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "hamiltonian/space_impl.h"

#define MAX_INDEX ((int64_t)0x7fffffff)

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* (key, index) pairs of int64, by key then index. */
static int cmp_pair(const void *a, const void *b) {
  const int64_t *x = a, *y = b;
  if (x[0] != y[0]) return (x[0] > y[0]) - (x[0] < y[0]);
  return (x[1] > y[1]) - (x[1] < y[1]);
}

/* ---- the model space --------------------------------------------------------------------- */

/* The strings of nel electrons in the no orbitals above the ncore lowest, those occupied. */
static cis_err cas_strings(int norb, int ncore, int no, int nel, cis_strlist *out) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  cis_strlist act = {0, 0, NULL};
  int occ[CIS_MAX_NORB];
  CIS_TRY(cis_strlist_all(no, nel, &act));
  out->nw = cis_nwords(norb);
  out->n = act.n;
  CIS_TRY(cis_calloc(&out->bits, (size_t)(act.n * out->nw), sizeof(uint64_t), "CAS strings"));
  for (int64_t i = 0; i < act.n; i++) {
    uint64_t *s = out->bits + i * out->nw;
    for (int p = 0; p < ncore; p++) cis_str_set(s, p);
    int n = cis_str_occ(cis_strlist_at(&act, i), act.nw, occ);
    for (int x = 0; x < n; x++) cis_str_set(s, ncore + occ[x]);
  }
cleanup:
  cis_strlist_free(&act);
  return err;
}

cis_err cis_space_mrci_check_cas(const cis_integrals *in, int ne, int no) {
  int nelec = in->nalpha + in->nbeta, ncore = (nelec - ne) / 2;
  CIS_CHECK(ne >= 1 && no >= 1, CIS_ERR_USAGE, "--cas %d,%d: expected NE,NO >= 1", ne, no);
  CIS_CHECK(ne <= nelec && (nelec - ne) % 2 == 0, CIS_ERR_USAGE,
            "--cas %d,%d: the other %d of the %d electrons must fill doubly occupied orbitals "
            "(an even number, at least 0)", ne, no, nelec - ne, nelec);
  CIS_CHECK(ncore + no <= in->norb, CIS_ERR_USAGE,
            "--cas %d,%d: %d doubly occupied and %d active orbitals are more than the %d "
            "orbitals", ne, no, ncore, no, in->norb);
  int na = in->nalpha - ncore, nb = in->nbeta - ncore;
  CIS_CHECK(na >= 0 && nb >= 0 && na <= no && nb <= no, CIS_ERR_USAGE,
            "--cas %d,%d with MS2 = %d needs %d alpha and %d beta electrons in %d orbitals", ne, no,
            in->nalpha - in->nbeta, na, nb, no);
  return CIS_OK;
}

/* One model determinant given by the user: electron counts and orbitals beyond norb. */
static cis_err check_model_det(const cis_space *s, const uint64_t *a, const uint64_t *b,
                               int64_t idx) {
  int nw = s->nw, tail = s->norb % 64;
  CIS_CHECK(!tail || (!(a[nw - 1] >> tail) && !(b[nw - 1] >> tail)), CIS_ERR_INPUT,
            "model determinant %lld occupies an orbital beyond norb = %d", (long long)idx,
            s->norb);
  int na = cis_str_popcount(a, nw), nb = cis_str_popcount(b, nw);
  CIS_CHECK(na == s->nalpha && nb == s->nbeta, CIS_ERR_INPUT,
            "model determinant %lld has %d alpha and %d beta electrons, expected %d and %d",
            (long long)idx, na, nb, s->nalpha, s->nbeta);
  return CIS_OK;
}

cis_err cis_space_mrci_model(const cis_space *s, const cis_space_spec *spec, int64_t *nm,
                             uint64_t **ma, uint64_t **mb) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  cis_strlist A = {0, 0, NULL}, B = {0, 0, NULL};
  int64_t *pk = NULL;
  int nw = s->nw;
  *nm = 0;
  if (spec->cas_norb > 0) {
    cis_integrals shape = {.norb = s->norb, .nalpha = s->nalpha, .nbeta = s->nbeta};
    CIS_TRY(cis_space_mrci_check_cas(&shape, spec->cas_nelec, spec->cas_norb));
    int ncore = (s->nalpha + s->nbeta - spec->cas_nelec) / 2;
    CIS_TRY(cas_strings(s->norb, ncore, spec->cas_norb, s->nalpha - ncore, &A));
    CIS_TRY(cas_strings(s->norb, ncore, spec->cas_norb, s->nbeta - ncore, &B));
    if (A.n * B.n > MAX_INDEX)
      CIS_FAIL(CIS_ERR_INPUT, "CAS(%d,%d) has more than 2^31-1 determinants", spec->cas_nelec,
               spec->cas_norb);
    *nm = A.n * B.n;
    CIS_TRY(cis_space_check_room(s, 16.0 * nw * (double)*nm, "the CAS model space",
                                 "its determinants"));
    CIS_TRY(cis_malloc(ma, (size_t)(*nm * nw), sizeof(uint64_t), "model alpha strings"));
    CIS_TRY(cis_malloc(mb, (size_t)(*nm * nw), sizeof(uint64_t), "model beta strings"));
    for (int64_t i = 0; i < A.n; i++)
      for (int64_t j = 0; j < B.n; j++) {
        memcpy(*ma + (i * B.n + j) * nw, cis_strlist_at(&A, i), sizeof(uint64_t) * (size_t)nw);
        memcpy(*mb + (i * B.n + j) * nw, cis_strlist_at(&B, j), sizeof(uint64_t) * (size_t)nw);
      }
    goto cleanup;
  }
  int64_t n = spec->nref_dets;
  if (n <= 0 || !spec->ref_alpha || !spec->ref_beta)
    CIS_FAIL(CIS_ERR_INPUT, "the MRCI space has no model space (a CAS, or model determinants)");
  for (int64_t i = 0; i < n; i++)
    CIS_TRY(check_model_det(s, spec->ref_alpha + i * nw, spec->ref_beta + i * nw, i));
  /* repeats: by their strings' ranks in the sorted lists */
  A.nw = B.nw = nw;
  CIS_TRY(cis_malloc(&A.bits, (size_t)(n * nw), sizeof(uint64_t), "model alpha strings"));
  CIS_TRY(cis_malloc(&B.bits, (size_t)(n * nw), sizeof(uint64_t), "model beta strings"));
  memcpy(A.bits, spec->ref_alpha, sizeof(uint64_t) * (size_t)(n * nw));
  memcpy(B.bits, spec->ref_beta, sizeof(uint64_t) * (size_t)(n * nw));
  A.n = B.n = n;
  cis_strlist_sort_unique(&A);
  cis_strlist_sort_unique(&B);
  CIS_TRY(cis_malloc(&pk, (size_t)(2 * n), sizeof *pk, "model determinant keys"));
  for (int64_t i = 0; i < n; i++) {
    pk[2 * i] = cis_strlist_find(&A, spec->ref_alpha + i * nw) << 32 |
                cis_strlist_find(&B, spec->ref_beta + i * nw);
    pk[2 * i + 1] = i;
  }
  qsort(pk, (size_t)n, 2 * sizeof *pk, cmp_pair); /* equal determinants are neighbours */
  for (int64_t i = 1; i < n; i++)
    if (pk[2 * i] == pk[2 * i - 2])
      CIS_FAIL(CIS_ERR_INPUT, "model determinant %lld repeats determinant %lld",
               (long long)pk[2 * i + 1], (long long)pk[2 * i - 1]);
  CIS_TRY(cis_malloc(ma, (size_t)(n * nw), sizeof(uint64_t), "model alpha strings"));
  CIS_TRY(cis_malloc(mb, (size_t)(n * nw), sizeof(uint64_t), "model beta strings"));
  memcpy(*ma, spec->ref_alpha, sizeof(uint64_t) * (size_t)(n * nw));
  memcpy(*mb, spec->ref_beta, sizeof(uint64_t) * (size_t)(n * nw));
  *nm = n;
cleanup:
  cis_strlist_free(&A);
  cis_strlist_free(&B);
  cis_free(&pk);
  if (err) {
    cis_free(ma);
    cis_free(mb);
    *nm = 0;
  }
  return err;
}

/* ---- the union of the neighbourhoods ----------------------------------------------------- */

/* The product blocks of the model space: block g holds the model alpha strings sa[sa_ptr[g] ..
 * sa_ptr[g+1]) and their common beta partners sb[sb_ptr[g] .. sb_ptr[g+1]) (indices into the
 * sorted lists of distinct model strings). */
typedef struct {
  int nblocks;
  int64_t *sa_ptr, *sb_ptr;
  int32_t *sa, *sb;
} blocks;

static void blocks_free(blocks *b) {
  cis_free(&b->sa_ptr);
  cis_free(&b->sb_ptr);
  cis_free(&b->sa);
  cis_free(&b->sb);
}

/* A model alpha string with its run of beta partners (sorted). */
typedef struct {
  const int64_t *run;
  int64_t len;
} alpha_row;

static int cmp_row(const void *a, const void *b) {
  const alpha_row *x = a, *y = b;
  if (x->len != y->len) return (x->len > y->len) - (x->len < y->len);
  for (int64_t i = 0; i < x->len; i++) {
    int64_t u = x->run[i] & 0xffffffff, v = y->run[i] & 0xffffffff;
    if (u != v) return (u > v) - (u < v);
  }
  return (x->run[0] > y->run[0]) - (x->run[0] < y->run[0]);
}

static int same_partners(const alpha_row *x, const alpha_row *y) {
  if (x->len != y->len) return 0;
  for (int64_t i = 0; i < x->len; i++)
    if ((x->run[i] & 0xffffffff) != (y->run[i] & 0xffffffff)) return 0;
  return 1;
}

/* pk: the nm model determinants as sorted keys (alpha rank << 32 | beta rank). */
static cis_err make_blocks(const int64_t *pk, int64_t nm, blocks *b) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  alpha_row *rows = NULL;
  int64_t nrows = 0;
  CIS_TRY(cis_malloc(&rows, (size_t)nm, sizeof *rows, "model alpha rows"));
  for (int64_t i = 0; i < nm; i++) {
    if (i == 0 || (pk[i] >> 32) != (pk[i - 1] >> 32)) rows[nrows++] = (alpha_row){pk + i, 0};
    rows[nrows - 1].len++;
  }
  qsort(rows, (size_t)nrows, sizeof *rows, cmp_row);
  int nb = 0;
  int64_t nsb = 0;
  for (int64_t r = 0; r < nrows; r++)
    if (r == 0 || !same_partners(&rows[r], &rows[r - 1])) nb++, nsb += rows[r].len;
  b->nblocks = nb;
  CIS_TRY(cis_malloc(&b->sa_ptr, (size_t)nb + 1, sizeof *b->sa_ptr, "model blocks"));
  CIS_TRY(cis_malloc(&b->sb_ptr, (size_t)nb + 1, sizeof *b->sb_ptr, "model blocks"));
  CIS_TRY(cis_malloc(&b->sa, (size_t)nrows, sizeof *b->sa, "model blocks"));
  CIS_TRY(cis_malloc(&b->sb, (size_t)nsb, sizeof *b->sb, "model blocks"));
  int g = -1;
  int64_t na = 0, nbeta = 0;
  for (int64_t r = 0; r < nrows; r++) {
    if (r == 0 || !same_partners(&rows[r], &rows[r - 1])) {
      g++;
      b->sa_ptr[g] = na;
      b->sb_ptr[g] = nbeta;
      for (int64_t i = 0; i < rows[r].len; i++)
        b->sb[nbeta++] = (int32_t)(rows[r].run[i] & 0xffffffff);
    }
    b->sa[na++] = (int32_t)(rows[r].run[0] >> 32);
  }
  b->sa_ptr[nb] = na;
  b->sb_ptr[nb] = nbeta;
cleanup:
  cis_free(&rows);
  return err;
}

/* Every string within `level` of one of the model strings m (sorted, without repeats); the
 * list is made unique whenever it doubles, so repeats never pile up. */
static cis_err strings_within(int norb, const cis_strlist *m, int level, cis_strlist *out) {
  int64_t unique = 0;
  out->nw = m->nw;
  for (int64_t i = 0; i < m->n; i++) {
    CIS_CALL(cis_strlist_append_within(norb, cis_strlist_at(m, i), level, out));
    if (out->n > 2 * unique + 4096) {
      cis_strlist_sort_unique(out);
      unique = out->n;
    }
  }
  cis_strlist_sort_unique(out);
  return CIS_OK;
}

/* Electrons string s moves to reach the nearest of the model strings idx[0..n) of m, at most
 * cap. */
static int level_to(const uint64_t *s, const cis_strlist *m, const int32_t *idx, int64_t n,
                    int cap) {
  int best = cap;
  for (int64_t i = 0; i < n && best > 0; i++) {
    int l = cis_str_excitation(s, cis_strlist_at(m, idx[i]), m->nw);
    if (l < best) best = l;
  }
  return best;
}

/* The blocks each alpha string reaches: (block, level) pairs of alpha string ia at
 * [ptr[ia], ptr[ia+1]). Counted, checked against the memory left, then stored. */
static cis_err alpha_reach(cis_space *s, const cis_strlist *MA, const blocks *b, int level,
                           int nt, int64_t **ptr, int32_t **blk, int8_t **lev) {
  int64_t na = s->astr.n;
  CIS_CALL(cis_calloc(ptr, (size_t)na + 1, sizeof **ptr, "alpha reach"));
  for (int pass = 0; pass < 2; pass++) {
#pragma omp parallel for schedule(dynamic, 64) num_threads(nt)
    for (int64_t ia = 0; ia < na; ia++) {
      const uint64_t *a = cis_strlist_at(&s->astr, ia);
      int64_t k = pass ? (*ptr)[ia] : 0;
      for (int g = 0; g < b->nblocks; g++) {
        int l = level_to(a, MA, b->sa + b->sa_ptr[g], b->sa_ptr[g + 1] - b->sa_ptr[g],
                         level + 1);
        if (l > level) continue;
        if (pass) {
          (*blk)[k] = g;
          (*lev)[k] = (int8_t)CIS_MIN(l, 127);
        }
        k++;
      }
      if (!pass) (*ptr)[ia + 1] = k;
    }
    if (pass) break;
    for (int64_t ia = 0; ia < na; ia++) (*ptr)[ia + 1] += (*ptr)[ia];
    int64_t n = (*ptr)[na];
    CIS_CALL(cis_space_check_room(s, 5.0 * (double)n, "the MRCI space's alpha strings",
                                  "the model blocks each reaches"));
    CIS_CALL(cis_malloc(blk, (size_t)CIS_MAX(n, 1), sizeof **blk, "alpha reach"));
    CIS_CALL(cis_malloc(lev, (size_t)CIS_MAX(n, 1), sizeof **lev, "alpha reach"));
  }
  return CIS_OK;
}

/* The beta strings within `level` of each block's beta strings, by ascending level: those of
 * block g at list[ptr[g] ..], the first lstart[g * (level + 2) + l + 1] of them within l. */
static cis_err beta_reach(cis_space *s, const cis_strlist *MB, const blocks *b, int level,
                          int nt, int64_t **ptr, int64_t **lstart, int32_t **list) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  int64_t nb = s->bstr.n, L = level + 2;
  int8_t *lb = NULL;
  CIS_TRY(cis_malloc(&lb, (size_t)nb, sizeof *lb, "beta levels"));
  CIS_TRY(cis_calloc(ptr, (size_t)b->nblocks + 1, sizeof **ptr, "beta reach"));
  CIS_TRY(cis_calloc(lstart, (size_t)(b->nblocks * L), sizeof **lstart, "beta reach"));
  for (int pass = 0; pass < 2; pass++) {
    for (int g = 0; g < b->nblocks; g++) {
      const int32_t *idx = b->sb + b->sb_ptr[g];
      int64_t n = b->sb_ptr[g + 1] - b->sb_ptr[g], *ls = *lstart + g * L;
#pragma omp parallel for schedule(static) num_threads(nt)
      for (int64_t ib = 0; ib < nb; ib++)
        lb[ib] = (int8_t)level_to(cis_strlist_at(&s->bstr, ib), MB, idx, n, level + 1);
      if (!pass) {
        for (int64_t ib = 0; ib < nb; ib++)
          if (lb[ib] <= level) ls[lb[ib] + 1]++;
        for (int l = 0; l <= level; l++) ls[l + 1] += ls[l];
        (*ptr)[g + 1] = (*ptr)[g] + ls[level + 1];
        continue;
      }
      int64_t pos[CIS_SPACE_MAX_LEVEL + 2];
      for (int l = 0; l <= level; l++) pos[l] = ls[l];
      for (int64_t ib = 0; ib < nb; ib++)
        if (lb[ib] <= level) (*list)[(*ptr)[g] + pos[lb[ib]]++] = (int32_t)ib;
    }
    if (pass) break;
    int64_t n = (*ptr)[b->nblocks];
    CIS_TRY(cis_space_check_room(s, 4.0 * (double)n, "the MRCI space's beta strings",
                                 "those each model block reaches"));
    CIS_TRY(cis_malloc(list, (size_t)CIS_MAX(n, 1), sizeof **list, "beta reach"));
  }
cleanup:
  cis_free(&lb);
  return err;
}

typedef struct {
  const int64_t *aptr, *bptr, *lstart;
  const int32_t *ablk, *blist;
  const int8_t *alev;
  int level;
  int64_t L;
} reach;

/* The beta strings alpha string ia pairs with, each once (mark: nb stamps of this thread, set
 * to ia), into out when not NULL; returns how many. */
static int64_t row_of(const reach *r, int64_t ia, int32_t *mark, int64_t *out) {
  int64_t c = 0;
  for (int64_t k = r->aptr[ia]; k < r->aptr[ia + 1]; k++) {
    int g = r->ablk[k], room = r->level - r->alev[k];
    const int32_t *list = r->blist + r->bptr[g];
    int64_t end = r->lstart[g * r->L + room + 1];
    for (int64_t t = 0; t < end; t++) {
      int32_t ib = list[t];
      if (mark[ib] == (int32_t)ia) continue;
      mark[ib] = (int32_t)ia;
      if (out) out[c] = ia << 32 | ib;
      c++;
    }
  }
  return c;
}

/* Count (keys NULL: per alpha string into cnt) or store every row. */
static cis_err rows_pass(const cis_space *s, const reach *r, int nt, int64_t *cnt,
                         int64_t *keys) {
  int64_t na = s->astr.n, nb = s->bstr.n;
  int fail = 0;
#pragma omp parallel num_threads(nt)
  {
    int32_t *mark = malloc(sizeof *mark * (size_t)CIS_MAX(nb, 1));
    if (!mark) {
#pragma omp atomic write
      fail = 1;
    } else {
      for (int64_t ib = 0; ib < nb; ib++) mark[ib] = -1;
    }
#pragma omp for schedule(dynamic, 16)
    for (int64_t ia = 0; ia < na; ia++) {
      if (!mark) continue;
      if (!keys) {
        cnt[ia] = row_of(r, ia, mark, NULL);
        continue;
      }
      int64_t *row = keys + cnt[ia];
      int64_t n = row_of(r, ia, mark, row);
      qsort(row, (size_t)n, sizeof *row, cmp_i64);
    }
    free(mark);
  }
  CIS_CHECK(!fail, CIS_ERR_NOMEM, "out of host memory enumerating the MRCI space");
  return CIS_OK;
}

cis_err cis_space_mrci_pairs(cis_space *s, int level, int64_t nm, const uint64_t *ma,
                             const uint64_t *mb, int nt, int64_t **keys, int64_t *nkeys) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  int nw = s->nw;
  cis_strlist MA = {0, nw, NULL}, MB = {0, nw, NULL};
  blocks b = {0, NULL, NULL, NULL, NULL};
  int64_t *pk = NULL, *aptr = NULL, *bptr = NULL, *lstart = NULL, *cnt = NULL;
  int32_t *ablk = NULL, *blist = NULL;
  int8_t *alev = NULL;
  if (!(level <= 126))
    CIS_FAIL(CIS_ERR_INPUT, "MRCI excitation level %d: at most 126", level);
  CIS_TRY(cis_malloc(&MA.bits, (size_t)(nm * nw), sizeof(uint64_t), "model alpha strings"));
  CIS_TRY(cis_malloc(&MB.bits, (size_t)(nm * nw), sizeof(uint64_t), "model beta strings"));
  memcpy(MA.bits, ma, sizeof(uint64_t) * (size_t)(nm * nw));
  memcpy(MB.bits, mb, sizeof(uint64_t) * (size_t)(nm * nw));
  MA.n = MB.n = nm;
  cis_strlist_sort_unique(&MA);
  cis_strlist_sort_unique(&MB);
  CIS_TRY(cis_malloc(&pk, (size_t)nm, sizeof *pk, "model determinant keys"));
  for (int64_t i = 0; i < nm; i++)
    pk[i] = cis_strlist_find(&MA, ma + i * nw) << 32 | cis_strlist_find(&MB, mb + i * nw);
  qsort(pk, (size_t)nm, sizeof *pk, cmp_i64);
  CIS_TRY(make_blocks(pk, nm, &b));
  /* the strings: within `level` of a model string of their spin */
  CIS_TRY(cis_space_check_strings(s, level, MA.n, MB.n));
  CIS_TRY(strings_within(s->norb, &MA, level, &s->astr));
  CIS_TRY(strings_within(s->norb, &MB, level, &s->bstr));
  if (!(s->astr.n <= MAX_INDEX && s->bstr.n <= MAX_INDEX))
    CIS_FAIL(CIS_ERR_INPUT,
            "the MRCI space has more than 2^31-1 strings of one spin");
  CIS_TRY(alpha_reach(s, &MA, &b, level, nt, &aptr, &ablk, &alev));
  CIS_TRY(beta_reach(s, &MB, &b, level, nt, &bptr, &lstart, &blist));
  reach r = {aptr, bptr, lstart, ablk, blist, alev, level, level + 2};
  /* count, check, store */
  int64_t na = s->astr.n;
  CIS_TRY(cis_malloc(&cnt, (size_t)na + 1, sizeof *cnt, "MRCI row counts"));
  CIS_TRY(rows_pass(s, &r, nt, cnt, NULL));
  int64_t total = 0;
  for (int64_t ia = 0; ia < na; ia++) {
    int64_t c = cnt[ia];
    cnt[ia] = total;
    total += c;
    if (total > MAX_INDEX)
      CIS_FAIL(CIS_ERR_INPUT, "the MRCI space has more than 2^31-1 determinants");
  }
  cnt[na] = total;
  CIS_TRY(cis_space_check_dets(s, s->astr.n, s->bstr.n, total, 0));
  CIS_TRY(cis_malloc(keys, (size_t)CIS_MAX(total, 1), sizeof **keys, "determinant keys"));
  CIS_TRY(rows_pass(s, &r, nt, cnt, *keys));
  *nkeys = total;
cleanup:
  cis_strlist_free(&MA);
  cis_strlist_free(&MB);
  blocks_free(&b);
  cis_free(&pk);
  cis_free(&aptr);
  cis_free(&bptr);
  cis_free(&lstart);
  cis_free(&cnt);
  cis_free(&ablk);
  cis_free(&blist);
  cis_free(&alev);
  return err;
}
