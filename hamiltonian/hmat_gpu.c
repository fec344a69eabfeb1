/* cisolve: a CI matrix built on the GPU (hamiltonian/hmat.h, cis_hmat_opts.gpu_build; docs/gpu.md,
 * "The matrix built on the GPU"): its rows counted there, none stored on the host. CUDA builds. */
#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "hamiltonian/hmat_private.h"
#include "hamiltonian/rowgen_cuda.h"
#include "spmv/census.h"

/* opts->gpu_build: the rows this process stores counted on the GPU, as the upload will store
 * them (hamiltonian/rowgen_cuda.h cis_rowgen_cuda_census): the ELL's row lengths and slices,
 * every block's entries and the census, with the dictionary chosen from a sample of rows the
 * host generates; no entry is kept on the host (hyb.device_built). */
static cis_err build_ci_gpu(cis_hmat *h, const cis_rowgen *g, const cis_hmat_opts *opts) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  cis_hyb *hy = &h->hyb;
  cis_ell *e = &hy->ell;
  int64_t n = h->n;
  cis_hmat_ci_decision dec = {0};
  cis_rowgen_cuda *dg = NULL;
  cis_census *cen = NULL;
  int32_t *ncoded = NULL;
  int64_t r0, r1;
  CIS_TRY(cis_hmat_ci_begin(h, g, opts, &dec, &r0, &r1));
  CIS_TRY(cis_hmat_census_start(h, g, &dec, &cen)); /* its dictionary from host rows */
  if (!cen->ncoded)
    CIS_TRY(cis_calloc(&ncoded, (size_t)CIS_MAX(n, (int64_t)1), sizeof *ncoded, "coded entries"));
  double t0 = cis_wtime();
  CIS_TRY(cis_rowgen_cuda_create_on(g, opts->gpu_device, &dg));
  CIS_TRY(cis_rowgen_cuda_census(dg, r0, r1 - r0, cen->dict.size ? &cen->dict : NULL,
                                 e->row_len + r0, cen->rlen + r0,
                                 (cen->ncoded ? cen->ncoded : ncoded) + r0));
  cis_rowgen_cuda_destroy(&dg);
  h->stats.t_gpu_count = cis_wtime() - t0;
  /* the blocks: this process's uncached, with their counts; other ranks' empty */
  hy->nnz_exp = 0;
  hy->ncached = 0;
  for (int64_t b = 0; b < hy->nblocks; b++) {
    cis_csr_block *blk = &hy->blocks[b];
    int64_t nnz = 0, coded = 0, longest = 0;
    if (blk->row0 >= r0 && blk->row0 < r1) {
      for (int64_t r = blk->row0; r < blk->row0 + blk->nrows; r++) {
        nnz += cen->rlen[r];
        coded += cen->ncoded ? cen->ncoded[r] : 0;
        longest = CIS_MAX(longest, (int64_t)cen->rlen[r]);
      }
      blk->nnz = nnz;
    } else { /* another rank's rows: empty and cached, as the host's build leaves them */
      CIS_TRY(cis_csr_block_reserve(blk, blk->nrows, 1));
      memset(blk->rowptr, 0, sizeof(int64_t) * (size_t)(blk->nrows + 1));
      blk->nnz = 0;
      hy->ncached++;
    }
    cen->bnnz[b] = nnz;
    if (cen->bcoded) cen->bcoded[b] = coded;
    cen->counted[b] = 1;
    cen->longest = CIS_MAX(cen->longest, longest);
    hy->nnz_exp += nnz;
  }
  CIS_TRY(cis_hmat_ell_slices(e, n, h->nref)); /* the ELL's shape, without its entries */
  hy->census = cen;
  cen = NULL;
  hy->device_built = 1;
  hy->dev_row0 = r0;
  hy->dev_row1 = r1;
  h->stats.gpu_built = 1;
  h->stats.elements_generated = e->nnz + hy->nnz_exp;
  h->stats.budget = 0;
cleanup:
  cis_rowgen_cuda_destroy(&dg);
  if (cen) cis_census_free(cen);
  cis_free(&cen);
  cis_free(&ncoded);
  if (err != CIS_OK) { /* left as an empty matrix for the host's build */
    cis_hyb_free(hy);
    hy->n = n;
  }
  return err;
}

cis_err cis_hmat_try_gpu_build(cis_hmat *h, const cis_rowgen *g, const cis_hmat_opts *opts,
                               int *built) {
  *built = 0;
  const char *why = cis_rowgen_cuda_why(g);
  if (why) {
    snprintf(h->stats.gpu_build_note, sizeof h->stats.gpu_build_note, "%s", why);
    return CIS_OK;
  }
  cis_err e = build_ci_gpu(h, g, opts);
  if (e == CIS_OK) {
    *built = 1;
  } else if (e == CIS_ERR_NOMEM || e == CIS_ERR_RESOURCE) { /* the host builds instead */
    snprintf(h->stats.gpu_build_note, sizeof h->stats.gpu_build_note, "%s", cis_error_message());
    cis_error_clear();
  } else {
    return e;
  }
  return CIS_OK;
}
