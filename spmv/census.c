/* cisolve: the census of a hybrid matrix's Expansion rows (spmv/census.h). */
#include "spmv/census.h"

#include <omp.h>
#include <string.h>

#include "base/util.h"

void cis_census_free(cis_census *c) {
  cis_vdict_free(&c->dict);
  cis_free(&c->rlen);
  cis_free(&c->ncoded);
  cis_free(&c->bnnz);
  cis_free(&c->bcoded);
  cis_free(&c->counted);
  c->longest = 0;
}

cis_err cis_census_init(cis_census *c, const cis_hyb *h, int coded) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  size_t nr = (size_t)CIS_MAX(h->n, (int64_t)1), nb = (size_t)CIS_MAX(h->nblocks, (int64_t)1);
  memset(c, 0, sizeof *c);
  c->nblocks = h->nblocks;
  if (coded) CIS_TRY(cis_vdict_build(h, CIS_CENSUS_SAMPLE, CIS_CENSUS_DICT, &c->dict));
  CIS_TRY(cis_calloc(&c->rlen, nr, sizeof *c->rlen, "Expansion entries per row"));
  CIS_TRY(cis_calloc(&c->bnnz, nb, sizeof *c->bnnz, "Expansion entries per block"));
  CIS_TRY(cis_calloc(&c->counted, nb, sizeof *c->counted, "counted blocks"));
  if (c->dict.size) {
    CIS_TRY(cis_calloc(&c->ncoded, nr, sizeof *c->ncoded, "coded entries per row"));
    CIS_TRY(cis_calloc(&c->bcoded, nb, sizeof *c->bcoded, "coded entries per block"));
  }
cleanup:
  if (err != CIS_OK) cis_census_free(c);
  return err;
}

/* The row lengths of block b, and that it was counted (its coded counts are the caller's). */
static void count_rows(cis_census *c, int64_t b, const cis_csr_block *rows) {
  int64_t longest = 0;
  for (int64_t l = 0; l < rows->nrows; l++) {
    int64_t len = rows->rowptr[l + 1] - rows->rowptr[l];
    c->rlen[rows->row0 + l] = (int32_t)len;
    longest = CIS_MAX(longest, len);
  }
  c->bnnz[b] = rows->nnz;
#pragma omp critical(cis_census_longest)
  c->longest = CIS_MAX(c->longest, longest);
  c->counted[b] = 1;
}

void cis_census_block(cis_census *c, int64_t b, const cis_csr_block *rows) {
  if (c->dict.size) c->bcoded[b] = cis_vdict_count_block(&c->dict, rows, c->ncoded + rows->row0);
  count_rows(c, b, rows);
}

int64_t cis_census_split(cis_census *c, int64_t b, const cis_csr_block *rows, int coded,
                         double *val, int32_t *col, int32_t *ccol, uint16_t *code) {
  const cis_vdict *d = c->dict.size ? &c->dict : NULL;
  int64_t kp = 0, kc = 0, sum = 0;
  coded = coded && d;
  for (int64_t l = 0; l < rows->nrows; l++) {
    int32_t n = 0;
    for (int64_t p = rows->rowptr[l]; p < rows->rowptr[l + 1]; p++) {
      int k = d ? cis_vdict_code(d, rows->val[p]) : -1;
      n += k >= 0;
      if (k >= 0 && coded) {
        ccol[kc] = rows->col[p];
        code[kc++] = (uint16_t)k;
      } else {
        col[kp] = rows->col[p];
        val[kp++] = rows->val[p];
      }
    }
    if (d) c->ncoded[rows->row0 + l] = n;
    sum += n;
  }
  if (d) c->bcoded[b] = sum;
  count_rows(c, b, rows);
  return kc;
}

int cis_census_complete(const cis_census *c) {
  for (int64_t b = 0; b < c->nblocks; b++)
    if (!c->counted[b]) return 0;
  return 1;
}

cis_err cis_census_take(cis_census *c, const cis_hyb *h, const unsigned char *want) {
  cis_worker_error we = {CIS_OK, ""};
  int64_t rows_done = 0;
  cis_progress_update(h->progress, "counting the rows for the GPU", 0, h->n);
#pragma omp parallel
  {
    cis_csr_block scratch;
    memset(&scratch, 0, sizeof scratch);
#pragma omp for schedule(dynamic, 1)
    for (int64_t b = 0; b < h->nblocks; b++) {
      if ((want && !want[b]) || c->counted[b] || cis_worker_error_seen(&we)) continue;
      const cis_csr_block *blk = NULL;
      cis_err e = cis_hyb_block_rows(h, b, &scratch, &blk);
      if (e != CIS_OK) {
        cis_worker_error_keep(&we, e);
        continue;
      }
      cis_census_block(c, b, blk);
      if (h->progress) { /* counted by every thread, told by one */
        int64_t done;
#pragma omp atomic capture
        done = rows_done += h->blocks[b].nrows;
        if (omp_get_thread_num() == 0)
          cis_progress_update(h->progress, "counting the rows for the GPU", done, h->n);
      }
    }
    cis_csr_block_free(&scratch);
  }
  cis_progress_finish(h->progress);
  CIS_WORKER_RERAISE(we);
  return CIS_OK;
}
