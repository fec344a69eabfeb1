/* cisolve: the whole matrix as SELL-32, a lane per row: whether an upload takes that layout,
 * and its construction on the device from the hybrid upload. */
#include <string.h>

#include "spmv/hyb_cuda_private.cuh"

/* The whole matrix as SELL-32, a lane per row (spmv/hyb_kernels_sell.cuh, cis_sell_kernel),
 * instead of the hybrid layout: with CIS_HYB_CUDA_SELL wherever it can be; by default when the
 * caller asked for no layout of its own, the matrix has at least CIS_SELL_AUTO_ROWS rows (256
 * blocks of 1024 rows, enough to fill the device: a smaller matrix leaves multiprocessors idle)
 * and padding adds at most a quarter to its entries (beyond that the padding's bytes cost more
 * than the layout saves). It can be when every Expansion block is resident and the budget holds
 * the hybrid upload it is built from beside it. With coded values (a CI matrix larger than twice
 * the L2 cache) the coded entries go to a second SELL-32 of columns and 16-bit codes. Why it
 * beats the hybrid layout on large matrices, and by how much: docs/gpu.md ("A lane per row"),
 * docs/BENCHMARKS.md. */

/* Device bytes of SELL-32 with its entries (sell_plan: plain ones, 12 bytes: a 32-bit column
 * and a value; coded ones, 6 bytes: a 32-bit column and a 16-bit code), padding included. */
static int64_t sell_bytes(const cis_hyb_cuda *d, const sell_plan *p) {
  int64_t n = d->h->n, parts = d->coded.dict ? 2 : 1;
  return (p->slots + 1) * 12 + (d->coded.dict ? (p->cslots + 1) * 6 + d->coded.dict->size * 8 : 0) +
         parts * (n * 4 + ((n + 31) / 32 + 1) * 8 + (n + CIS_SELL_BLOCK - 1) / CIS_SELL_BLOCK * 4);
}

/* Row r's SELL-32 entries (every block resident): coded ones, with a dictionary; the others,
 * its ELL part and the rest of its Expansion part. */
static int64_t sell_row_coded(const cis_hyb_cuda *d, int64_t r) {
  return d->coded.dict ? d->cen->ncoded[r] : 0;
}

static int64_t sell_row_plain(const cis_hyb_cuda *d, int64_t r) {
  return (int64_t)d->h->ell.row_len[r] + d->cen->rlen[r] - sell_row_coded(d, r);
}

static void sell_count(const cis_hyb_cuda *d, sell_plan *p) {
  p->slots = p->cslots = 0;
  for (int64_t r0 = 0; r0 < d->h->n; r0 += 32) {
    int64_t w = 0, cw = 0;
    for (int64_t r = r0; r < CIS_MIN(r0 + 32, d->h->n); r++) {
      w = CIS_MAX(w, sell_row_plain(d, r));
      cw = CIS_MAX(cw, sell_row_coded(d, r));
    }
    p->slots += 32 * w;
    p->cslots += 32 * cw;
  }
}

/* Whether the upload is SELL-32 (after the census and the choice of resident blocks). */
int hyb_sell_layout(const cis_hyb_cuda *d, int flags, const char *resident, sell_plan *p) {
  const cis_hyb *h = d->h;
  int force = (flags & CIS_HYB_CUDA_SELL) != 0;
  int64_t nnz = h->ell.nnz;
  p->slots = p->cslots = 0;
  if (!cis_place_sell_wanted(h->n, flags)) return 0;
  for (int64_t b = 0; b < h->nblocks; b++) {
    if (!resident[b]) return 0;
    nnz += d->cen->bnnz[b];
  }
  sell_count(d, p);
  if (!force && 4 * (p->slots + p->cslots) > 5 * nnz) return 0;
  /* the hybrid upload it is built from, at most 12 bytes an Expansion entry */
  int64_t hybrid = hyb_sliced_bytes(&h->ell, hyb_index_bits(h, 0)) +
                   (nnz - h->ell.nnz + 6) * 12 + 2 * (h->n + 1) * 8 +
                   (d->coded.dict ? d->coded.dict->size * 8 : 0);
  return hybrid + sell_bytes(d, p) + h->n * (int64_t)CIS_HYB_CUDA_MAX_K * 8 <= d->info.budget;
}

template <int K>
static cis_err sell_prefer_l1() {
  /* little shared memory (the value table): the rest for L1, which keeps the block's band of x */
  for (int c = 0; c < 4; c++)
    CIS_CUDA(cudaFuncSetAttribute(cis_sell_kernel_for<K>(c & 1, c >> 1),
                                  cudaFuncAttributePreferredSharedMemoryCarveout, 0));
  return CIS_OK;
}

static_assert(CIS_CENSUS_DICT * sizeof(double) <= 48 * 1024,
              "the SELL-32 kernel's value table exceeds the 48 KB of shared memory a block gets");
cis_sell_view hyb_sell_view(const cis_hyb_cuda *d) {
  cis_sell_view v = {d->n,        d->sell.ptr,   d->sell.len,  d->sell.width, d->sell.col,
                     d->sell.val, d->sell.cptr,  d->sell.clen, d->sell.cwidth, d->sell.ccol,
                     d->sell.ccode, d->sell.ccode ? d->coded.table : NULL,
                     d->sell.ccode && d->coded.dict ? d->coded.dict->size : 0};
  return v;
}

template <typename CI, typename CE>
static void sell_fill(cis_hyb_cuda *d) {
  cis_sell_fill_kernel<CI, CE><<<(unsigned)((d->n + 255) / 256), 256>>>(
      ell_view<CI>(d, d->ell.col), resident_view<CE>(d, d->csr.col), coded_view<CE>(d), d->n,
      hyb_sell_view(d), d->sell.col, d->sell.val, d->sell.ccol, d->sell.ccode);
}

/* One SELL-32 part's slice offsets, row lengths (len(d, r)) and blocks' longest rows, on the
 * host and on the device; *slots: its entries with padding. */
static cis_err sell_shape(cis_hyb_cuda *d, int64_t (*len_of)(const cis_hyb_cuda *, int64_t),
                          int64_t **dptr, int32_t **dlen, int32_t **dwidth, int64_t *slots) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  const int64_t n = d->n, ns = (n + 31) / 32, nb = (n + CIS_SELL_BLOCK - 1) / CIS_SELL_BLOCK;
  int64_t *ptr = NULL;
  int32_t *len = NULL, *width = NULL;
  CIS_TRY(cis_malloc(&ptr, (size_t)ns + 1, sizeof *ptr, "SELL-32 slice offsets"));
  CIS_TRY(cis_malloc(&len, (size_t)n, sizeof *len, "SELL-32 row lengths"));
  CIS_TRY(cis_calloc(&width, (size_t)nb, sizeof *width, "SELL-32 block widths"));
  ptr[0] = 0;
  for (int64_t s = 0; s < ns; s++) {
    int32_t w = 0;
    for (int64_t r = 32 * s; r < CIS_MIN(32 * s + 32, n); r++) {
      len[r] = (int32_t)len_of(d, r);
      w = CIS_MAX(w, len[r]);
      width[r / CIS_SELL_BLOCK] = CIS_MAX(width[r / CIS_SELL_BLOCK], len[r]);
    }
    ptr[s + 1] = ptr[s] + 32 * (int64_t)w;
  }
  if (ptr[ns] != *slots)
    CIS_FAIL(CIS_ERR_INTERNAL, "upload: SELL-32 of %lld entries, counted %lld",
             (long long)ptr[ns], (long long)*slots);
  CIS_TRY(hyb_dev_alloc(dptr, (size_t)(ns + 1) * 8, "SELL-32 slice offsets"));
  CIS_TRY(hyb_dev_alloc(dlen, (size_t)n * 4, "SELL-32 row lengths"));
  CIS_TRY(hyb_dev_alloc(dwidth, (size_t)nb * 4, "SELL-32 block widths"));
  CIS_CUDA_TRY(cudaMemcpy(*dptr, ptr, (size_t)(ns + 1) * 8, cudaMemcpyHostToDevice));
  CIS_CUDA_TRY(cudaMemcpy(*dlen, len, (size_t)n * 4, cudaMemcpyHostToDevice));
  CIS_CUDA_TRY(cudaMemcpy(*dwidth, width, (size_t)nb * 4, cudaMemcpyHostToDevice));
cleanup:
  cis_free(&ptr);
  cis_free(&len);
  cis_free(&width);
  return err;
}

/* SELL-32 from the hybrid upload just made (every block resident, rows in their own order): the
 * shapes on the host, the entries copied on the device; then the hybrid arrays are freed (the
 * value table stays, for the coded part). */
cis_err hyb_sell_create(cis_hyb_cuda *d, const sell_plan *p) {
  int64_t slots = p->slots, cslots = p->cslots;
  CIS_CALL(sell_shape(d, sell_row_plain, &d->sell.ptr, &d->sell.len, &d->sell.width, &slots));
  CIS_CALL(hyb_dev_alloc(&d->sell.col, (size_t)(slots + 1) * 4, "SELL-32 column indices"));
  CIS_CALL(hyb_dev_alloc(&d->sell.val, (size_t)(slots + 1) * 8, "SELL-32 values"));
  CIS_CUDA(cudaMemset(d->sell.col, 0, (size_t)(slots + 1) * 4));
  CIS_CUDA(cudaMemset(d->sell.val, 0, (size_t)(slots + 1) * 8));
  if (d->coded.dict) {
    CIS_CALL(sell_shape(d, sell_row_coded, &d->sell.cptr, &d->sell.clen, &d->sell.cwidth, &cslots));
    CIS_CALL(
        hyb_dev_alloc(&d->sell.ccol, (size_t)(cslots + 1) * 4, "SELL-32 coded column indices"));
    CIS_CALL(hyb_dev_alloc(&d->sell.ccode, (size_t)(cslots + 1) * 2, "SELL-32 value codes"));
    CIS_CUDA(cudaMemset(d->sell.ccol, 0, (size_t)(cslots + 1) * 4));
    CIS_CUDA(cudaMemset(d->sell.ccode, 0, (size_t)(cslots + 1) * 2));
  }
  if (d->csr.bits == 16)
    sell_fill<uint16_t, uint16_t>(d);
  else if (d->ell.bits == 16)
    sell_fill<uint16_t, int32_t>(d);
  else
    sell_fill<int32_t, int32_t>(d);
  CIS_CUDA(cudaGetLastError());
  CIS_CUDA(cudaDeviceSynchronize());
  CIS_CALL(sell_prefer_l1<1>());
  CIS_CALL(sell_prefer_l1<2>());
  CIS_CALL(sell_prefer_l1<3>());
  CIS_CALL(sell_prefer_l1<4>());
  CIS_CALL(sell_prefer_l1<5>());
  CIS_CALL(sell_prefer_l1<6>());
  CIS_CALL(sell_prefer_l1<7>());
  CIS_CALL(sell_prefer_l1<8>());
  hyb_hybrid_free(d);
  d->info.ell_bytes = 0;
  d->info.csr_bytes = sell_bytes(d, p);
  d->info.index_bits = d->info.csr_bits = 32;
  d->info.sell = 32;
  d->info.sell_slots = slots + cslots;
  return CIS_OK;
}

