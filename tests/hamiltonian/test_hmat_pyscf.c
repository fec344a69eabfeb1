/* Our Hamiltonian against PySCF's (data from make_matrix_ref.py).
 *
 * usage: test_hmat_pyscf FILE.h5 [--space fci|cisd] [--ref-size N] [--budget BYTES]
 *                                [--block-rows N] [--expect-streamed] [--expect-cached N]
 *                                [--s2-search] [--census] [--sink take|decline] [--split P]
 * Determinants are matched by their bit strings. Checks: every element of our H against
 * PySCF's H (when the file holds it; for a truncated space, the principal submatrix), H x
 * against PySCF's contract_2e x (FCI only), the Reference block and the diagonal against H,
 * and <S^2> of PySCF's FCI vectors against PySCF's spin_square (--s2-search: with the
 * single-excitation targets found by search, not from cis_space_s2's table). --census: the
 * matrix is built with the census a GPU upload takes (cis_hmat_opts.census), which must match
 * every block's rows as regenerated afterwards (the upload stores them so), counted again with
 * the census's own dictionary. --sink (with --census): the build sends its blocks to a sink
 * (cis_hmat_opts.sink, spmv/hyb.h) that keeps a copy of each (take) or declines them (decline):
 * a taking sink must be asked once, get every block once, not yet counted (the sink counts it
 * in the census, which check_census then checks), from a thread the build announced, and the
 * same rows as regenerated afterwards; a declining one must get no block. --split P: the rows
 * split over P ranks (cis_hmat_split_ci) and each part built alone (cis_hmat_opts.rows_split,
 * with the same census): each holds exactly the whole matrix's rows of its range and nothing
 * else, the same diagonal and Reference block, and the parts' nonzeros add up to the whole's.
 */
#include <hdf5.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/tools/expect.h"
#include "base/util.h"
#include "hamiltonian/hmat.h"
#include "spmv/census.h"

#define TOL 1e-12


static int has(hid_t f, const char *name) { return H5Lexists(f, name, H5P_DEFAULT) > 0; }

/* Read a whole dataset of native type `type`; *count gets its number of elements. */
static cis_err read_ds(hid_t f, const char *name, hid_t type, size_t elsize, void *pp,
                       int64_t *count) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  hid_t d = H5Dopen2(f, name, H5P_DEFAULT), sp = -1;
  if (d < 0) CIS_FAIL(CIS_ERR_IO, "dataset '%s' missing", name);
  sp = H5Dget_space(d);
  hssize_t n = sp < 0 ? -1 : H5Sget_simple_extent_npoints(sp);
  if (n < 0) CIS_FAIL(CIS_ERR_IO, "dataset '%s': no extent", name);
  CIS_TRY(cis_malloc(pp, (size_t)n, elsize, name));
  if (H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, *(void **)pp) < 0)
    CIS_FAIL(CIS_ERR_IO, "dataset '%s': read failed", name);
  if (count) *count = n;
cleanup:
  if (sp >= 0) H5Sclose(sp);
  if (d >= 0) H5Dclose(d);
  return err;
}

typedef struct {
  cis_integrals ints;
  int64_t na, nb, nw, nh, nroots;
  uint64_t *astr, *bstr;
  double *x, *hx, *hval, *civec, *s2;
  int64_t *hrow, *hcol;
} ref_data;

static cis_err read_ref(const char *path, ref_data *r) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  int64_t cnt, *iv = NULL;
  double *dv = NULL;
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) CIS_FAIL(CIS_ERR_IO, "%s: cannot open", path);
  CIS_TRY(read_ds(f, "norb", H5T_NATIVE_INT64, 8, &iv, NULL));
  r->ints.norb = (int)iv[0];
  cis_free(&iv);
  CIS_TRY(read_ds(f, "nalpha", H5T_NATIVE_INT64, 8, &iv, NULL));
  r->ints.nalpha = (int)iv[0];
  cis_free(&iv);
  CIS_TRY(read_ds(f, "nbeta", H5T_NATIVE_INT64, 8, &iv, NULL));
  r->ints.nbeta = (int)iv[0];
  CIS_TRY(read_ds(f, "ecore", H5T_NATIVE_DOUBLE, 8, &dv, NULL));
  r->ints.ecore = dv[0];
  CIS_TRY(read_ds(f, "h1e", H5T_NATIVE_DOUBLE, 8, &r->ints.h1e, NULL));
  CIS_TRY(read_ds(f, "eri", H5T_NATIVE_DOUBLE, 8, &r->ints.eri, &cnt));
  if (cnt != cis_eri_size(r->ints.norb)) CIS_FAIL(CIS_ERR_INPUT, "%s: eri size %ld", path, (long)cnt);
  r->nw = cis_nwords(r->ints.norb);
  CIS_TRY(read_ds(f, "alpha_strings", H5T_NATIVE_UINT64, 8, &r->astr, &cnt));
  r->na = cnt / r->nw;
  CIS_TRY(read_ds(f, "beta_strings", H5T_NATIVE_UINT64, 8, &r->bstr, &cnt));
  r->nb = cnt / r->nw;
  CIS_TRY(read_ds(f, "x", H5T_NATIVE_DOUBLE, 8, &r->x, NULL));
  CIS_TRY(read_ds(f, "hx", H5T_NATIVE_DOUBLE, 8, &r->hx, NULL));
  if (has(f, "h_val")) {
    CIS_TRY(read_ds(f, "h_row", H5T_NATIVE_INT64, 8, &r->hrow, &r->nh));
    CIS_TRY(read_ds(f, "h_col", H5T_NATIVE_INT64, 8, &r->hcol, NULL));
    CIS_TRY(read_ds(f, "h_val", H5T_NATIVE_DOUBLE, 8, &r->hval, NULL));
  }
  if (has(f, "s2")) {
    CIS_TRY(read_ds(f, "s2", H5T_NATIVE_DOUBLE, 8, &r->s2, &r->nroots));
    CIS_TRY(read_ds(f, "civec", H5T_NATIVE_DOUBLE, 8, &r->civec, NULL));
  }
cleanup:
  cis_free(&iv);
  cis_free(&dv);
  if (f >= 0) H5Fclose(f);
  return err;
}

/* map[I] = our index of PySCF determinant I (ia*nb + ib), or -1 outside our space. */
static void map_dets(const ref_data *r, const cis_space *s, int64_t *map) {
  for (int64_t ia = 0; ia < r->na; ia++)
    for (int64_t ib = 0; ib < r->nb; ib++)
      map[ia * r->nb + ib] = cis_space_find(s, r->astr + ia * r->nw, r->bstr + ib * r->nw);
}

/* The export's rows (cis_hmat_row_source, three chunks at a time, cached or regenerated) are
 * the rows of cis_hmat_to_csr, bit for bit, and as many as it announced. */
static void check_row_source(const cis_hmat *h, const cis_csr *m) {
  cis_row_source src;
  cis_csr ch[3];
  memset(ch, 0, sizeof ch);
  cis_hmat_row_source(h, &src);
  EXPECT(src.n == m->n && src.nnz == m->nnz && src.chunk_nnz > 0, "row source: n %lld nnz %lld "
         "(to_csr: %lld, %lld), chunk_nnz %lld", (long long)src.n, (long long)src.nnz,
         (long long)m->n, (long long)m->nnz, (long long)src.chunk_nnz);
  int64_t row = 0, bad = -1;
  for (int64_t c0 = 0; c0 < src.nchunks && bad < 0; c0 += 3) {
    int count = (int)CIS_MIN((int64_t)3, src.nchunks - c0);
    if (src.rows(&src, c0, count, 1, ch) != CIS_OK) {
      EXPECT(0, "row source chunks %lld..: %s", (long long)c0, cis_error_message());
      break;
    }
    for (int i = 0; i < count && bad < 0; i++)
      for (int64_t l = 0; l < ch[i].n && bad < 0; l++, row++) {
        int64_t q0 = m->rowptr[row], len = m->rowptr[row + 1] - q0;
        if (ch[i].rowptr[l + 1] - ch[i].rowptr[l] != len ||
            memcmp(ch[i].col + ch[i].rowptr[l], m->col + q0, (size_t)len * sizeof(int32_t)) ||
            memcmp(ch[i].val + ch[i].rowptr[l], m->val + q0, (size_t)len * sizeof(double)))
          bad = row;
      }
  }
  EXPECT(bad < 0 && row == m->n, "row source: row %lld differs from cis_hmat_to_csr (%lld rows "
         "read)", (long long)bad, (long long)row);
  for (int i = 0; i < 3; i++) cis_csr_free(&ch[i]);
}

/* Every element of our H (to_csr) against PySCF's dense H, over our determinants. */
static void check_elements(const ref_data *r, const cis_hmat *h, const int64_t *map) {
  int64_t N = r->na * r->nb, n = h->n, *inv = calloc((size_t)n, sizeof(int64_t));
  double *ref = calloc((size_t)(N * N), sizeof(double)), *ours = calloc((size_t)(n * n), 8);
  cis_csr m = {0};
  if (!inv || !ref || !ours || cis_hmat_to_csr(h, &m) != CIS_OK) {
    EXPECT(0, "setup of the element check: %s", cis_error_message());
    goto done;
  }
  check_row_source(h, &m);
  for (int64_t q = 0; q < r->nh; q++) ref[r->hrow[q] * N + r->hcol[q]] = r->hval[q];
  for (int64_t I = 0; I < N; I++)
    if (map[I] >= 0) inv[map[I]] = I;
  for (int64_t i = 0; i < n; i++) {
    for (int64_t q = m.rowptr[i]; q < m.rowptr[i + 1]; q++) {
      EXPECT(q == m.rowptr[i] || m.col[q] > m.col[q - 1], "row %ld not sorted", (long)i);
      ours[i * n + m.col[q]] = m.val[q];
    }
  }
  double worst = 0.0;
  int64_t wi = 0, wj = 0;
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++) {
      double d = fabs(ours[i * n + j] - ref[inv[i] * N + inv[j]]);
      if (d > worst) worst = d, wi = i, wj = j;
    }
  printf("elements: %ld x %ld, %ld stored nonzeros, max |ours - PySCF| = %.3e\n", (long)n,
         (long)n, (long)m.nnz, worst);
  EXPECT(worst <= TOL, "H[%ld,%ld] = %.15f, PySCF %.15f", (long)wi, (long)wj, ours[wi * n + wj],
         ref[inv[wi] * N + inv[wj]]);
  for (int64_t i = 0; i < n; i++)
    EXPECT(fabs(h->hdiag[i] - ours[i * n + i]) <= TOL, "hdiag[%ld]", (long)i);
  EXPECT(h->npre == h->nref, "npre %ld, nref %ld", (long)h->npre, (long)h->nref);
  for (int64_t i = 0; i < h->npre; i++)
    for (int64_t j = 0; j < h->npre; j++)
      EXPECT(h->hpp[i + j * h->npre] == ours[i * n + j], "hpp[%ld,%ld]", (long)i, (long)j);
done:
  cis_csr_free(&m);
  free(inv);
  free(ref);
  free(ours);
}

/* H x through the hybrid product (regenerating uncached blocks) against contract_2e x. */
static void check_hx(const ref_data *r, const cis_hmat *h, const int64_t *map) {
  int64_t N = r->na * r->nb, n = h->n;
  double *x = malloc(sizeof(double) * (size_t)n), *y = malloc(sizeof(double) * (size_t)n);
  if (!x || !y) {
    EXPECT(0, "out of memory");
    goto done;
  }
  for (int64_t I = 0; I < N; I++) x[map[I]] = r->x[I];
  cis_err e = cis_hyb_apply_cpu(&h->hyb, 1, x, y);
  EXPECT(e == CIS_OK, "hybrid product: %s", cis_error_message());
  double worst = 0.0, scale = 0.0;
  for (int64_t I = 0; I < N; I++) {
    worst = fmax(worst, fabs(y[map[I]] - r->hx[I]));
    scale = fmax(scale, fabs(r->hx[I]));
  }
  printf("H x: max |ours - PySCF contract_2e| = %.3e (max |Hx| = %.3f)\n", worst, scale);
  EXPECT(worst <= TOL, "H x differs from PySCF by %.3e", worst);
done:
  free(x);
  free(y);
}

static void check_s2(const ref_data *r, const cis_space *s, const int64_t *map) {
  int64_t N = r->na * r->nb, n = cis_space_ndet(s);
  int k = (int)r->nroots;
  double *c = calloc((size_t)(n * k), sizeof(double)), *s2 = calloc((size_t)k, sizeof(double));
  if (!c || !s2) {
    EXPECT(0, "out of memory");
    goto done;
  }
  for (int v = 0; v < k; v++)
    for (int64_t I = 0; I < N; I++) c[v * n + map[I]] = r->civec[v * N + I];
  EXPECT(cis_space_s2(s, k, c, s2) == CIS_OK, "cis_space_s2: %s", cis_error_message());
  for (int v = 0; v < k; v++) {
    printf("<S^2> root %d: ours %.12f PySCF %.12f\n", v, s2[v], r->s2[v]);
    EXPECT(fabs(s2[v] - r->s2[v]) <= 1e-10, "<S^2> of root %d", v);
  }
done:
  free(c);
  free(s2);
}

/* The census taken during the build against the rows as the upload reads them: cached, or
 * regenerated. */
static void check_census(const cis_hmat *h) {
  const cis_hyb *y = &h->hyb;
  const cis_census *c = y->census;
  cis_csr_block scratch;
  int32_t *nc = NULL;
  int64_t total = 0, bad_rows = 0, bad_blocks = 0;
  memset(&scratch, 0, sizeof scratch);
  EXPECT(c != NULL && cis_census_complete(c), "the build took a complete census");
  if (!c || !cis_census_complete(c)) return;
  printf("census: dictionary of %d magnitudes (%.0f%% of a sample of %ld entries), longest row "
         "%ld\n", c->dict.size, 100.0 * c->dict.cover, (long)c->dict.sampled, (long)c->longest);
  EXPECT(c->dict.size > 0, "a CI matrix's values repeat: the census has a dictionary");
  nc = calloc((size_t)y->n + 1, sizeof *nc);
  for (int64_t b = 0; b < y->nblocks && nc; b++) {
    const cis_csr_block *blk = NULL;
    if (cis_hyb_block_rows(y, b, &scratch, &blk) != CIS_OK) {
      cis_error_print(1);
      bad_blocks++;
      continue;
    }
    int64_t coded = c->dict.size ? cis_vdict_count_block(&c->dict, blk, nc + blk->row0) : 0;
    for (int64_t l = 0; l < blk->nrows; l++) {
      int64_t r = blk->row0 + l;
      bad_rows += c->rlen[r] != blk->rowptr[l + 1] - blk->rowptr[l] ||
                  (c->dict.size && c->ncoded[r] != nc[r]);
    }
    bad_blocks += c->bnnz[b] != blk->nnz || (c->dict.size && c->bcoded[b] != coded);
    total += c->bnnz[b];
  }
  EXPECT(nc != NULL, "memory for the recount");
  EXPECT(bad_rows == 0 && bad_blocks == 0, "census: %ld rows and %ld blocks differ from a recount",
         (long)bad_rows, (long)bad_blocks);
  EXPECT(total == y->nnz_exp, "census: %ld Expansion entries, the matrix has %ld", (long)total,
         (long)y->nnz_exp);
  free(nc);
  cis_csr_block_free(&scratch);
}

/* A block sink that keeps a copy of every block it is sent, or declines the build. */
typedef struct {
  cis_block_sink base;
  int take, begun, nthreads;
  int64_t est, nblocks, sent, bad_thread, counted_before;
  cis_census *census;
  int *seen;           /* per block: times sent */
  cis_csr_block *copy; /* per block: the rows sent */
} rec_sink;

static int rec_begin(cis_block_sink *s, const cis_hyb *h, int64_t est, cis_census *c,
                     int nthreads) {
  rec_sink *r = (rec_sink *)s;
  r->begun++;
  r->est = est;
  r->census = c;
  r->nthreads = nthreads;
  r->nblocks = h->nblocks;
  if (!r->take) return 0;
  r->seen = calloc((size_t)h->nblocks + 1, sizeof *r->seen);
  r->copy = calloc((size_t)h->nblocks + 1, sizeof *r->copy);
  return r->seen && r->copy;
}

static void rec_block(cis_block_sink *s, int64_t b, const cis_csr_block *rows) {
  rec_sink *r = (rec_sink *)s;
#pragma omp atomic
  r->sent++;
  if (omp_get_thread_num() >= r->nthreads) {
#pragma omp atomic
    r->bad_thread++;
  }
  if (!r->seen || b < 0 || b >= r->nblocks) return;
  if (r->census->counted[b]) { /* the sink counts it, not the build */
#pragma omp atomic
    r->counted_before++;
  }
  cis_census_block(r->census, b, rows);
#pragma omp atomic
  r->seen[b]++;
  cis_csr_block *c = &r->copy[b];
  if (cis_csr_block_reserve(c, rows->nrows, CIS_MAX(rows->nnz, (int64_t)1)) != CIS_OK) return;
  c->row0 = rows->row0;
  c->nrows = rows->nrows;
  c->nnz = rows->nnz;
  memcpy(c->rowptr, rows->rowptr, sizeof(int64_t) * (size_t)(rows->nrows + 1));
  memcpy(c->col, rows->col, sizeof(int32_t) * (size_t)rows->nnz);
  memcpy(c->val, rows->val, sizeof(double) * (size_t)rows->nnz);
}

static void check_sink(const cis_hmat *h, rec_sink *r) {
  const cis_hyb *y = &h->hyb;
  cis_csr_block scratch;
  int64_t twice = 0, differ = 0;
  memset(&scratch, 0, sizeof scratch);
  EXPECT(r->begun == 1, "the sink was asked %d times whether it takes the build", r->begun);
  EXPECT(r->est > 0 && r->census == y->census && r->nblocks == y->nblocks,
         "the sink was told the sampled entries (%ld), the census and the %ld blocks",
         (long)r->est, (long)y->nblocks);
  if (!r->take) {
    EXPECT(r->sent == 0 && y->sink == NULL, "a declining sink was sent %ld blocks",
           (long)r->sent);
    return;
  }
  EXPECT(y->sink == &r->base, "the matrix keeps the sink that took its blocks");
  EXPECT(r->bad_thread == 0 && r->counted_before == 0,
         "%ld blocks came from threads the build did not announce, %ld counted already",
         (long)r->bad_thread, (long)r->counted_before);
  for (int64_t b = 0; r->seen && b < y->nblocks; b++) {
    twice += r->seen[b] != 1;
    const cis_csr_block *blk = NULL, *c = &r->copy[b];
    if (cis_hyb_block_rows(y, b, &scratch, &blk) != CIS_OK) {
      cis_error_print(1);
      differ++;
      continue;
    }
    differ += c->row0 != blk->row0 || c->nrows != blk->nrows || c->nnz != blk->nnz ||
              memcmp(c->rowptr, blk->rowptr, sizeof(int64_t) * (size_t)(blk->nrows + 1)) ||
              memcmp(c->col, blk->col, sizeof(int32_t) * (size_t)blk->nnz) ||
              memcmp(c->val, blk->val, sizeof(double) * (size_t)blk->nnz);
  }
  printf("sink: %ld blocks sent, %ld entries sampled before the build\n", (long)r->sent,
         (long)r->est);
  EXPECT(twice == 0 && r->sent == y->nblocks, "%ld blocks not sent exactly once", (long)twice);
  EXPECT(differ == 0, "%ld blocks sent differ from their rows regenerated", (long)differ);
  for (int64_t b = 0; r->copy && b < y->nblocks; b++) cis_csr_block_free(&r->copy[b]);
  free(r->copy);
  free(r->seen);
  cis_csr_block_free(&scratch);
}

/* An explicit list: every third PySCF determinant, in reverse order. */
static cis_err make_list(const ref_data *r, cis_space_spec *spec) {
  int64_t N = r->na * r->nb, n = (N + 2) / 3, nw = r->nw;
  CIS_CALL(cis_malloc(&spec->det_alpha, (size_t)(n * nw), sizeof(uint64_t), "list"));
  CIS_CALL(cis_malloc(&spec->det_beta, (size_t)(n * nw), sizeof(uint64_t), "list"));
  for (int64_t t = 0; t < n; t++) {
    int64_t I = 3 * (n - 1 - t);
    memcpy(spec->det_alpha + t * nw, r->astr + (I / r->nb) * nw, sizeof(uint64_t) * nw);
    memcpy(spec->det_beta + t * nw, r->bstr + (I % r->nb) * nw, sizeof(uint64_t) * nw);
  }
  spec->ndets = n;
  return CIS_OK;
}

/* How many blocks from the first are cached without a gap. */
static void check_split(const cis_integrals *ints, const cis_space *s, const cis_hmat_opts *ho,
                        const cis_hmat *h, int parts) {
  int64_t bounds[65], shared[65], br = 0, total = 0;
  cis_csr whole = {0};
  double *w = NULL, *ws = NULL;
  if (parts < 1 || parts > 64 || cis_hmat_split_blocks(ints, s, ho, &br) ||
      cis_calloc(&w, (size_t)(h->n / br + 1), sizeof *w, "w") ||
      cis_calloc(&ws, (size_t)(h->n / br + 1), sizeof *ws, "w") ||
      cis_hmat_split_weigh(ints, s, 0, br, 0, 1, w) || cis_hmat_to_csr(h, &whole)) {
    cis_error_print(1);
    EXPECT(0, "split into %d parts", parts);
    cis_free(&w);
    cis_free(&ws);
    return;
  }
  cis_hmat_split_cut(w, h->n, br, parts, bounds);
  /* the sampling shared out as ranks share it (3 shares, weights summed) cuts the same rows */
  for (int share = 0; share < 3; share++) {
    double *part = NULL;
    if (cis_calloc(&part, (size_t)(h->n / br + 1), sizeof *part, "w") ||
        cis_hmat_split_weigh(ints, s, 0, br, share, 3, part)) {
      cis_error_print(1);
      EXPECT(0, "share %d of 3", share);
    } else {
      for (int64_t b = 0; b <= h->n / br; b++) ws[b] += part[b];
    }
    cis_free(&part);
  }
  cis_hmat_split_cut(ws, h->n, br, parts, shared);
  for (int p = 0; p <= parts; p++)
    EXPECT(shared[p] == bounds[p], "part %d: bound %ld shared out, %ld in one", p,
           (long)shared[p], (long)bounds[p]);
  cis_free(&w);
  cis_free(&ws);
  EXPECT(bounds[0] == 0 && bounds[parts] == h->n, "bounds [%ld, %ld) for %ld rows",
         (long)bounds[0], (long)bounds[parts], (long)h->n);
  for (int p = 0; p < parts; p++) {
    cis_hmat_opts o = *ho;
    o.sink = NULL;
    o.block_rows = br;
    o.rows_split = 1;
    o.row_begin = bounds[p];
    o.row_end = bounds[p + 1];
    cis_hmat *hp = NULL;
    cis_csr m = {0};
    EXPECT(bounds[p] <= bounds[p + 1] && (bounds[p] % br == 0 || bounds[p] == h->n),
           "part %d: rows [%ld, %ld) are not whole blocks of %ld", p, (long)bounds[p],
           (long)bounds[p + 1], (long)br);
    if (cis_hmat_build_ci(ints, s, &o, &hp) || cis_hmat_to_csr(hp, &m)) {
      cis_error_print(1);
      EXPECT(0, "part %d not built", p);
      return;
    }
    total += m.nnz;
    long bad = 0;
    for (int64_t i = 0; i < h->n; i++) {
      int64_t len = m.rowptr[i + 1] - m.rowptr[i], wl = whole.rowptr[i + 1] - whole.rowptr[i];
      int own = i >= bounds[p] && i < bounds[p + 1];
      if (!own) {
        bad += len != 0;
        continue;
      }
      if (len != wl) {
        bad++;
        continue;
      }
      for (int64_t q = 0; q < len; q++)
        bad += m.col[m.rowptr[i] + q] != whole.col[whole.rowptr[i] + q] ||
               m.val[m.rowptr[i] + q] != whole.val[whole.rowptr[i] + q];
    }
    EXPECT(bad == 0, "part %d (rows [%ld, %ld)): %ld rows differ from the whole matrix's", p,
           (long)bounds[p], (long)bounds[p + 1], bad);
    EXPECT(hp->npre == h->npre && memcmp(hp->hpp, h->hpp, sizeof(double) * (size_t)(h->npre * h->npre)) == 0,
           "part %d: the Reference block differs", p);
    EXPECT(memcmp(hp->hdiag, h->hdiag, sizeof(double) * (size_t)h->n) == 0,
           "part %d: the diagonal differs", p);
    EXPECT(!ho->census || hp->hyb.census, "part %d: no census", p);
    printf("part %d: rows [%ld, %ld), %ld nonzeros\n", p, (long)bounds[p], (long)bounds[p + 1],
           (long)m.nnz);
    cis_csr_free(&m);
    cis_hmat_destroy(&hp);
  }
  EXPECT(total == whole.nnz, "the parts hold %ld nonzeros, the whole %ld", (long)total,
         (long)whole.nnz);
  cis_csr_free(&whole);
}

static int64_t b_leading(const cis_hmat *h) {
  int64_t b = 0;
  while (b < h->hyb.nblocks && h->hyb.blocks[b].val) b++;
  return b;
}

static int run(const char *path, int argc, char **argv) {
  ref_data r;
  memset(&r, 0, sizeof r);
  cis_space_spec spec = {.kind = CIS_SPACE_FCI};
  cis_space_opts so = {0, 0, 0};
  cis_hmat_opts ho = {.host_cache = -1};
  rec_sink sink = {.base = {rec_begin, rec_block}};
  int expect_streamed = 0, split = 0;
  long expect_cached = -1;
  for (int a = 2; a < argc; a++) {
    if (!strcmp(argv[a], "--space") && a + 1 < argc) {
      a++;
      if (!strcmp(argv[a], "cisd")) spec = (cis_space_spec){.kind = CIS_SPACE_TRUNCATED, .level = 2};
      if (!strcmp(argv[a], "list")) spec.kind = CIS_SPACE_LIST;
    } else if (!strcmp(argv[a], "--ref-size") && a + 1 < argc) {
      so.ref_size = atol(argv[++a]);
    } else if (!strcmp(argv[a], "--budget") && a + 1 < argc) {
      ho.host_cache = atol(argv[++a]);
    } else if (!strcmp(argv[a], "--block-rows") && a + 1 < argc) {
      ho.block_rows = atol(argv[++a]);
    } else if (!strcmp(argv[a], "--expect-streamed")) {
      expect_streamed = 1;
    } else if (!strcmp(argv[a], "--expect-cached-sequential")) {
      expect_cached = 1;
    } else if (!strcmp(argv[a], "--census")) {
      ho.census = 1;
    } else if (!strcmp(argv[a], "--sink") && a + 1 < argc) {
      sink.take = !strcmp(argv[++a], "take");
      ho.sink = &sink.base;
    } else if (!strcmp(argv[a], "--split") && a + 1 < argc) {
      split = atoi(argv[++a]);
    } else if (!strcmp(argv[a], "--s2-search")) {
      cis_space_set_s2_table_limit(0);
    } else {
      printf("unknown argument %s\n", argv[a]);
      return 1;
    }
  }
  cis_space *s = NULL;
  cis_hmat *h = NULL;
  int64_t *map = NULL;
  if (read_ref(path, &r) || (spec.kind == CIS_SPACE_LIST && make_list(&r, &spec)) ||
      cis_space_build(&r.ints, &spec, &so, &s) ||
      cis_hmat_build_ci(&r.ints, s, &ho, &h)) {
    cis_error_print(1);
    return 1;
  }
  int64_t N = r.na * r.nb, inside = 0;
  map = malloc(sizeof(int64_t) * (size_t)N);
  if (!map) return 1;
  map_dets(&r, s, map);
  for (int64_t I = 0; I < N; I++) inside += map[I] >= 0;
  printf("%s: %s, norb %d, (%d,%d), %ld determinants (%ld of PySCF's %ld), nref %ld, "
         "blocks %ld cached of %ld, %.3f s\n",
         path, cis_space_describe(s), r.ints.norb, r.ints.nalpha, r.ints.nbeta, (long)h->n,
         (long)inside, (long)N, (long)h->nref, (long)h->hyb.ncached, (long)h->hyb.nblocks,
         h->stats.t_build);
  EXPECT(inside == h->n, "%ld of our determinants are not PySCF's", (long)(h->n - inside));
  if (expect_streamed)
    EXPECT(h->hyb.ncached < h->hyb.nblocks && h->hyb.regen, "no block is regenerated");
  if (expect_cached >= 0) {
    /* the blocks a build on one thread, which fills them in row order, keeps */
    cis_hmat *h1 = NULL;
    cis_hmat_opts o1 = ho;
    o1.nthreads = 1;
    if (cis_hmat_build_ci(&r.ints, s, &o1, &h1)) {
      cis_error_print(1);
      return 1;
    }
    EXPECT(h->hyb.ncached == h1->hyb.ncached, "%ld blocks cached, %ld on one thread",
           (long)h->hyb.ncached, (long)h1->hyb.ncached);
    for (int64_t b = 0; b < h->hyb.nblocks && b < h1->hyb.nblocks; b++)
      EXPECT((h->hyb.blocks[b].val != NULL) == (h1->hyb.blocks[b].val != NULL),
             "block %ld cached on %s only", (long)b, h->hyb.blocks[b].val ? "4 threads" : "1");
    EXPECT(h1->hyb.ncached == b_leading(h1), "one thread kept %ld blocks, not the leading ones",
           (long)h1->hyb.ncached);
    cis_hmat_destroy(&h1);
  }
  if (ho.census) check_census(h);
  if (ho.sink) check_sink(h, &sink);
  EXPECT(ho.census || h->hyb.census == NULL, "no census unless asked for");
  if (r.hval) check_elements(&r, h, map);
  if (split) check_split(&r.ints, s, &ho, h, split);
  if (spec.kind == CIS_SPACE_FCI) {
    EXPECT(h->n == N, "FCI has %ld determinants, PySCF %ld", (long)h->n, (long)N);
    check_hx(&r, h, map);
    if (r.s2) check_s2(&r, s, map);
  }
  cis_hmat_destroy(&h);
  cis_space_destroy(&s);
  EXPECT(h == NULL && s == NULL, "destroy leaves NULL");
  free(map);
  cis_free(&r.ints.h1e);
  cis_free(&r.ints.eri);
  cis_free(&r.astr);
  cis_free(&r.bstr);
  cis_free(&r.x);
  cis_free(&r.hx);
  cis_free(&r.hrow);
  cis_free(&r.hcol);
  cis_free(&r.hval);
  cis_free(&r.civec);
  cis_free(&r.s2);
  cis_free(&spec.det_alpha);
  cis_free(&spec.det_beta);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    printf("usage: %s FILE.h5 [options]\n", argv[0]);
    return 1;
  }
  if (run(argv[1], argc, argv)) return 1;
  return cis_test_summary();
}
