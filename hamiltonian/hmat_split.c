/* The rows of a Hamiltonian split over the ranks of a run (hamiltonian/hmat.h): ranges of
 * whole Expansion blocks with about equal nonzeros, and a built matrix reduced to its own. */
#include <string.h>

#include "base/util.h"
#include "hamiltonian/hmat.h"
#include "hamiltonian/hmat_private.h"
#include "hamiltonian/rowgen.h"

/* Rows sampled in each block of a CI matrix (evenly spread; every row of smaller blocks). */
#define SPLIT_SAMPLE 16

/* Part p ends at the first block boundary where the running sum reaches p/parts of the whole. */
void cis_hmat_split_cut(const double *w, int64_t n, int64_t block_rows, int parts,
                        int64_t *bounds) {
  int64_t nblocks = (n + block_rows - 1) / block_rows;
  double total = 0.0, run = 0.0;
  for (int64_t b = 0; b < nblocks; b++) total += w[b];
  int p = 1;
  bounds[0] = 0;
  for (int64_t b = 0; b < nblocks && p < parts; b++) {
    run += w[b];
    while (p < parts && run >= total * (double)p / (double)parts) bounds[p++] = (b + 1) * block_rows;
  }
  for (; p <= parts; p++) bounds[p] = n;
  for (p = 1; p <= parts; p++) bounds[p] = CIS_MIN(bounds[p], n);
}

cis_err cis_hmat_split_blocks(const cis_integrals *ints, const cis_space *space,
                              const cis_hmat_opts *opts, int64_t *block_rows) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  cis_rowgen g;
  memset(&g, 0, sizeof g);
  cis_hmat_opts whole = opts ? *opts : (cis_hmat_opts){.host_cache = -1};
  whole.rows_split = 0;
  CIS_TRY(cis_rowgen_init(ints, space, &g));
  cis_hmat_ci_decision dec;
  CIS_TRY(cis_hmat_ci_decide(&g, &whole, &dec));
  *block_rows = dec.block_rows;
cleanup:
  cis_rowgen_free(&g);
  return err;
}

cis_err cis_hmat_split_weigh(const cis_integrals *ints, const cis_space *space, int nthreads,
                             int64_t block_rows, int share, int shares, double *w) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  cis_rowgen g;
  memset(&g, 0, sizeof g);
  int fail = 0;
  int64_t n = cis_space_ndet(space), br = block_rows, nb = (n + br - 1) / br;
  CIS_TRY(cis_rowgen_init(ints, space, &g));
  int nt = cis_hmat_nthreads(nthreads);
#pragma omp parallel num_threads(nt) reduction(| : fail)
  {
    cis_rowbuf b;
    if (cis_rowbuf_init(&g, &b) != CIS_OK) {
      fail = 1;
    } else {
#pragma omp for schedule(dynamic, 16)
      for (int64_t k = share; k < nb; k += shares) {
        int64_t r0 = k * br, rows = CIS_MIN(br, n - r0), m = CIS_MIN(rows, (int64_t)SPLIT_SAMPLE);
        double sum = 0.0;
        for (int64_t s = 0; s < m; s++) sum += (double)cis_rowgen_row(&g, r0 + s * rows / m, 0, &b);
        w[k] = sum * (double)rows / (double)m;
      }
      cis_rowbuf_free(&b);
    }
  }
  if (fail) CIS_FAIL(CIS_ERR_NOMEM, "out of host memory for the row scratch of the rows split");
cleanup:
  cis_rowgen_free(&g);
  return err;
}

void cis_hmat_split_built(const cis_hmat *h, int parts, int64_t *bounds) {
  const cis_hyb *y = &h->hyb;
  double w[y->nblocks > 0 ? y->nblocks : 1];
  for (int64_t b = 0; b < y->nblocks; b++) {
    const cis_csr_block *blk = &y->blocks[b];
    double s = (double)blk->nnz;
    for (int64_t r = blk->row0; r < blk->row0 + blk->nrows; r++) s += y->ell.row_len[r];
    w[b] = s;
  }
  cis_hmat_split_cut(w, h->n, y->block_rows, parts, bounds);
}

cis_err cis_hmat_keep_rows(cis_hmat *h, int64_t r0, int64_t r1, int64_t *nnz) {
  cis_hyb *y = &h->hyb;
  cis_ell *e = &y->ell;
  int64_t br = y->block_rows;
  CIS_CHECK((r0 % br == 0 || r0 == h->n) && (r1 % br == 0 || r1 == h->n) && r0 <= r1 && r1 <= h->n,
            CIS_ERR_INTERNAL, "rows [%lld, %lld) of %lld are not whole blocks of %lld",
            (long long)r0, (long long)r1, (long long)h->n, (long long)br);
  CIS_CHECK(y->ncached == y->nblocks, CIS_ERR_INTERNAL,
            "only a matrix whose blocks are all stored is reduced to its rows");
  y->nnz_exp = 0;
  for (int64_t b = 0; b < y->nblocks; b++) {
    cis_csr_block *blk = &y->blocks[b];
    if (blk->row0 < r0 || blk->row0 >= r1) {
      cis_csr_block_free(blk);
      CIS_CALL(cis_csr_block_reserve(blk, blk->nrows, 1));
      memset(blk->rowptr, 0, sizeof(int64_t) * (size_t)(blk->nrows + 1));
      blk->nnz = 0;
    }
    y->nnz_exp += blk->nnz;
  }
  e->nnz = 0;
  for (int64_t r = 0; r < h->n; r++) {
    if (r < r0 || r >= r1) e->row_len[r] = 0; /* the slice keeps its room, read as padding */
    e->nnz += e->row_len[r];
  }
  h->stats.cached_bytes = cis_hyb_cached_bytes(y);
  *nnz = e->nnz + y->nnz_exp;
  return CIS_OK;
}
