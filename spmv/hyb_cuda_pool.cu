/* cisolve: the build's pool of Expansion blocks (cis_hyb_cuda_pool_create): blocks sent to the
 * device as the build generates them, and their use by the upload. */
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "spmv/hyb_cuda_private.cuh"
#include "spmv/hyb_kernels_pool.cuh"

/* ---- the build's pool ---------------------------------------------------------------------
 * A GPU run that keeps no host copy of its matrix generates every Expansion block in the build
 * (for the census) and, without the pool, once more in the upload, a large part of a whole run
 * (docs/BENCHMARKS.md). The pool is the build's sink
 * (spmv/hyb.h): each block is counted for the census and split on its generating thread, one
 * dictionary lookup an entry for both (cis_census_split), into plain entries (a value and a
 * 32-bit column) and coded ones (a code and a column), each row's in its own order, into the
 * thread's pinned staging, and copied to device arrays at the next free places: blocks lie in
 * the order they came, a row's entries together. The
 * upload then fills SELL-32 from these arrays (pool_adopt; cis_sell_fill_kernel reads each row
 * from its start), or places their entries in the resident CSR on the device (pool_place,
 * cis_pool_place_kernel), instead of regenerating. */

/* A building thread's staging: values, columns, coded columns, codes; the copy that read it
 * (an event not yet recorded counts as complete). */
typedef struct {
  char *pinned;
  size_t cap;
  cudaEvent_t copied;
} pool_stage;

struct cis_hyb_cuda_pool {
  cis_block_sink sink; /* first: the build's cis_block_sink * is this pool */
  int device, flags, begun;
  int64_t device_bytes;
  cis_census *cen;
  const cis_vdict *dict; /* the census's, where the upload will code values; else NULL */
  int64_t *pbase, *cbase; /* per block: its first plain and coded entry in the arrays */
  int64_t pcap, ccap, pused, cused, stored;
  double *pval;
  int32_t *pcol, *ccol;
  uint16_t *ccode;
  cudaStream_t copy;
  int nstage;
  pool_stage *stage;
  int failed;
  char why[200];       /* why blocks were dropped (failed), or the pool declined */
  double seconds;      /* the building threads' time in pool_block, summed */
};

/* The pool's device arrays, in bytes (0 once an upload took or freed them). */
int64_t hyb_pool_device_bytes(const cis_hyb_cuda_pool *p) {
  return p && p->pval ? p->pcap * 12 + p->ccap * 6 : 0;
}

/* The first reason blocks could not be stored; later blocks are dropped too. */
static void pool_fail(cis_hyb_cuda_pool *p, const char *fmt, ...) {
#pragma omp critical(cis_hyb_cuda_pool)
  if (!p->failed) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->why, sizeof p->why, fmt, ap);
    va_end(ap);
#pragma omp atomic write
    p->failed = 1;
  }
}

/* The device arrays, the staging and the copy stream (the arrays only where no upload took
 * them); safe to call twice. */
void hyb_pool_release(cis_hyb_cuda_pool *p) {
  if (p->copy) cudaStreamSynchronize(p->copy);
  hyb_dev_free(&p->pval);
  hyb_dev_free(&p->pcol);
  hyb_dev_free(&p->ccol);
  hyb_dev_free(&p->ccode);
  for (int i = 0; p->stage && i < p->nstage; i++) {
    if (p->stage[i].pinned) cudaFreeHost(p->stage[i].pinned);
    if (p->stage[i].copied) cudaEventDestroy(p->stage[i].copied);
  }
  cis_free(&p->stage);
  p->nstage = 0;
  if (p->copy) cudaStreamDestroy(p->copy);
  p->copy = NULL;
  (void)cudaGetLastError();
}

static int pool_begin(cis_block_sink *s, const cis_hyb *h, int64_t est, cis_census *c,
                      int nthreads) {
  cis_hyb_cuda_pool *p = (cis_hyb_cuda_pool *)s;
  int coded = 0;
  if (p->begun) return 0; /* one build per pool */
  p->begun = 1;
  if (p->flags & CIS_HYB_CUDA_NO_CACHE) {
    snprintf(p->why, sizeof p->why, "not taken: the upload keeps no Expansion block on the GPU");
    return 0;
  }
  if (cudaSetDevice(p->device) != cudaSuccess ||
      hyb_codes_pay(p->flags, 12 * est, &coded) != CIS_OK) {
    snprintf(p->why, sizeof p->why, "not taken: GPU %d not usable", p->device);
    cis_error_clear();
    (void)cudaGetLastError();
    return 0;
  }
  /* room for the sampled entries and more, and the layout built beside them */
  double cover = coded && c->dict.size ? c->dict.cover : 0.0;
  p->dict = cover > 0.0 ? &c->dict : NULL;
  if (!cis_place_pool_fits(est, cover, p->device_bytes, &p->pcap, &p->ccap)) {
    char b1[32], b2[32];
    snprintf(p->why, sizeof p->why, "not taken: %s of blocks, with the layout built beside "
             "them, exceed the %s the GPU offers",
             cis_format_bytes((double)p->pcap * 12 + 6.0 * p->ccap, b1, sizeof b1),
             cis_format_bytes((double)p->device_bytes, b2, sizeof b2));
    p->pcap = p->ccap = 0;
    return 0;
  }
  p->cen = c;
  p->nstage = nthreads;
  if (cis_calloc(&p->pbase, (size_t)CIS_MAX(h->nblocks, (int64_t)1), sizeof *p->pbase, "pool") ||
      cis_calloc(&p->cbase, (size_t)CIS_MAX(h->nblocks, (int64_t)1), sizeof *p->cbase, "pool") ||
      cis_calloc(&p->stage, (size_t)nthreads, sizeof *p->stage, "pool staging") ||
      hyb_dev_alloc(&p->pval, (size_t)p->pcap * 8, "pool values") ||
      hyb_dev_alloc(&p->pcol, (size_t)p->pcap * 4, "pool columns") ||
      hyb_dev_alloc(&p->ccol, (size_t)p->ccap * 4, "pool coded columns") ||
      hyb_dev_alloc(&p->ccode, (size_t)p->ccap * 2, "pool codes")) {
    snprintf(p->why, sizeof p->why, "not taken: %s", cis_error_message());
    cis_error_clear();
    hyb_pool_release(p);
    return 0;
  }
  cudaError_t e = cudaStreamCreateWithFlags(&p->copy, cudaStreamNonBlocking);
  for (int i = 0; i < nthreads && e == cudaSuccess; i++)
    e = cudaEventCreateWithFlags(&p->stage[i].copied, cudaEventDisableTiming);
  if (e != cudaSuccess) {
    snprintf(p->why, sizeof p->why, "not taken: %s", cudaGetErrorName(e));
    hyb_pool_release(p);
    return 0;
  }
  p->why[0] = 0;
  return 1;
}

/* Block b: counted in the census and split into the thread's staging (values, columns, coded
 * columns, codes; room for every entry in each) in one pass over its entries
 * (cis_census_split), then copied to the next free places in the device arrays. A block the
 * pool cannot keep is still counted. */
static void pool_block(cis_block_sink *s, int64_t b, const cis_csr_block *rows) {
  cis_hyb_cuda_pool *p = (cis_hyb_cuda_pool *)s;
  int me = omp_get_thread_num(), failed;
  double t0 = cis_wtime();
#pragma omp atomic read
  failed = p->failed;
  if (failed || me >= p->nstage) {
    cis_census_block(p->cen, b, rows);
    if (!failed) pool_fail(p, "thread %d of a build announced with %d", me, p->nstage);
    return;
  }
  pool_stage *st = &p->stage[me];
  int64_t nnz = rows->nnz;
  size_t need = (size_t)nnz * 18;
  cudaError_t e = cudaSetDevice(p->device);
  if (e == cudaSuccess) e = cudaEventSynchronize(st->copied);
  if (e == cudaSuccess && need > st->cap) {
    if (st->pinned) cudaFreeHost(st->pinned);
    st->pinned = NULL;
    st->cap = 0;
    e = cudaMallocHost((void **)&st->pinned, need + need / 4);
    if (e == cudaSuccess) st->cap = need + need / 4;
  }
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    cis_census_block(p->cen, b, rows);
    return pool_fail(p, "block %lld: %s", (long long)b, cudaGetErrorName(e));
  }
  double *val = (double *)st->pinned;
  int32_t *col = (int32_t *)(st->pinned + nnz * 8), *ccol = col + nnz;
  uint16_t *code = (uint16_t *)(ccol + nnz);
  int64_t nc = cis_census_split(p->cen, b, rows, p->dict != NULL, val, col, ccol, code);
  int64_t np = nnz - nc, pb, cb;
#pragma omp atomic capture
  {
    pb = p->pused;
    p->pused += np;
  }
#pragma omp atomic capture
  {
    cb = p->cused;
    p->cused += nc;
  }
  if (pb + np > p->pcap || cb + nc > p->ccap)
    return pool_fail(p, "the blocks outgrew the room the build's sample gave them (%lld and "
                     "%lld entries)", (long long)p->pcap, (long long)p->ccap);
  if (np > 0)
    e = cudaMemcpyAsync(p->pval + pb, val, (size_t)np * 8, cudaMemcpyHostToDevice, p->copy);
  if (np > 0 && e == cudaSuccess)
    e = cudaMemcpyAsync(p->pcol + pb, col, (size_t)np * 4, cudaMemcpyHostToDevice, p->copy);
  if (nc > 0 && e == cudaSuccess)
    e = cudaMemcpyAsync(p->ccol + cb, ccol, (size_t)nc * 4, cudaMemcpyHostToDevice, p->copy);
  if (nc > 0 && e == cudaSuccess)
    e = cudaMemcpyAsync(p->ccode + cb, code, (size_t)nc * 2, cudaMemcpyHostToDevice, p->copy);
  if (e == cudaSuccess) e = cudaEventRecord(st->copied, p->copy);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return pool_fail(p, "block %lld: %s", (long long)b, cudaGetErrorName(e));
  }
  p->pbase[b] = pb;
  p->cbase[b] = cb;
  double dt = cis_wtime() - t0;
#pragma omp atomic
  p->stored++;
#pragma omp atomic
  p->seconds += dt;
}

cis_err cis_hyb_cuda_pool_create(int device, int64_t device_bytes, int flags,
                                 cis_block_sink **out) {
  cis_hyb_cuda_pool *p = NULL;
  *out = NULL;
  CIS_CALL(cis_calloc(&p, 1, sizeof *p, "the build's pool"));
  p->sink.begin = pool_begin;
  p->sink.block = pool_block;
  p->device = device < 0 ? 0 : device;
  p->device_bytes = device_bytes;
  p->flags = flags;
  *out = &p->sink;
  return CIS_OK;
}

void cis_hyb_cuda_pool_destroy(cis_block_sink **s) {
  if (!*s) return;
  cis_hyb_cuda_pool *p = (cis_hyb_cuda_pool *)*s;
  hyb_pool_release(p);
  cis_free(&p->pbase);
  cis_free(&p->cbase);
  cis_free(&p);
  *s = NULL;
}

/* The build's pool of h, where it has one. */
cis_hyb_cuda_pool *hyb_pool_of(const cis_hyb *h) {
  return h->sink && h->sink->begin == pool_begin ? (cis_hyb_cuda_pool *)h->sink : NULL;
}

/* Whether the upload takes its Expansion entries from the pool: it holds every block, counted
 * by the census the upload uses, coded as the upload codes them, and every block stays
 * resident. Else why not, in d->info.pool_note. */
int hyb_pool_usable(cis_hyb_cuda *d, const cis_hyb_cuda_pool *p, const char *resident) {
  int all = 1;
  for (int64_t b = 0; b < d->h->nblocks; b++) all = all && resident[b];
  const char *why = NULL;
  if (p->failed)
    why = p->why;
  else if (!p->pval)
    why = p->why[0] ? p->why : "not taken";
  else if (p->stored != d->h->nblocks || p->cen != d->cen)
    why = "it does not hold every block the census counted";
  else if ((p->dict != NULL) != (d->coded.dict != NULL))
    why = "its values are coded where the upload's are not, or the reverse";
  else if (!all)
    why = "not every block stays on the GPU";
  if (why) snprintf(d->info.pool_note, sizeof d->info.pool_note, "%s", why);
  return why == NULL;
}

/* Each row's first plain and coded entry in the pool's arrays, from the census and the blocks'
 * places, on the device: *dps, and with a dictionary *dcs (n + 1 entries each). */
static cis_err pool_starts(const cis_hyb_cuda *d, const cis_hyb_cuda_pool *p, int64_t **dps,
                           int64_t **dcs) {
  cis_err err = CIS_OK;
  const cis_hyb *h = d->h;
  const cis_census *c = d->cen;
  int64_t *ps = NULL, *cs = NULL;
  CIS_CUDA(cudaStreamSynchronize(p->copy));
  CIS_CLEANUP_FUNCTION;
  CIS_TRY(cis_malloc(&ps, (size_t)h->n + 1, sizeof *ps, "pool row starts"));
  CIS_TRY(cis_malloc(&cs, (size_t)h->n + 1, sizeof *cs, "pool coded row starts"));
  for (int64_t b = 0; b < h->nblocks; b++) {
    const cis_csr_block *blk = &h->blocks[b];
    int64_t at = p->pbase[b], cat = p->cbase[b];
    for (int64_t r = blk->row0; r < blk->row0 + blk->nrows; r++) {
      int64_t nc = d->coded.dict ? c->ncoded[r] : 0;
      ps[r] = at;
      cs[r] = cat;
      at += c->rlen[r] - nc;
      cat += nc;
    }
  }
  ps[h->n] = p->pused;
  cs[h->n] = p->cused;
  CIS_TRY(hyb_dev_alloc(dps, (size_t)(h->n + 1) * 8, "pool row starts"));
  CIS_CUDA_TRY(cudaMemcpy(*dps, ps, (size_t)(h->n + 1) * 8, cudaMemcpyHostToDevice));
  if (d->coded.dict) {
    CIS_TRY(hyb_dev_alloc(dcs, (size_t)(h->n + 1) * 8, "pool coded row starts"));
    CIS_CUDA_TRY(cudaMemcpy(*dcs, cs, (size_t)(h->n + 1) * 8, cudaMemcpyHostToDevice));
  }
cleanup:
  cis_free(&ps);
  cis_free(&cs);
  return err;
}

/* What the report says of an upload that took its Expansion entries from the pool. */
static void pool_taken(cis_hyb_cuda *d, const cis_hyb_cuda_pool *p) {
  d->info.pool_bytes = hyb_pool_device_bytes(p);
  d->info.pool_seconds = p->seconds;
  d->info.built_blocks = d->h->nblocks;
  d->info.regenerated_blocks = 0;
}

/* The pool's arrays as the resident Expansion CSR of an upload that turns it into SELL-32 at
 * once (sell_create, which frees them): each row's start (the row pointers' only use there),
 * 32-bit columns, the value table. */
cis_err hyb_pool_adopt(cis_hyb_cuda *d, cis_hyb_cuda_pool *p) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  const cis_hyb *h = d->h;
  CIS_TRY(pool_starts(d, p, &d->csr.rowptr, &d->coded.rowptr));
  if (d->coded.dict) CIS_TRY(hyb_table_upload(d));
  pool_taken(d, p);
  d->csr.val = p->pval;
  d->csr.col = p->pcol;
  d->coded.col = p->ccol;
  d->coded.code = p->ccode;
  p->pval = NULL;
  p->pcol = p->ccol = NULL;
  p->ccode = NULL;
  d->csr.bits = 32;
  d->info.coded_nnz = d->coded.dict ? p->cused : 0;
  d->info.dict_size = d->coded.dict ? d->coded.dict->size : 0;
  d->info.resident_blocks = h->nblocks;
  d->info.streamed_blocks = 0;
  CIS_TRY(cis_malloc(&d->st.ids, 1, sizeof *d->st.ids, "streamed block list"));
cleanup:
  hyb_pool_release(p);
  return err;
}

/* The pool's entries into the resident Expansion CSR that csr_upload laid out (its row
 * pointers on the device), in lane order, on the device (cis_pool_place_kernel); then the
 * pool's arrays are freed. */
template <typename CE>
static void pool_place_launch(cis_hyb_cuda *d, const cis_hyb_cuda_pool *p, const int64_t *ps,
                              const int64_t *cs) {
  cis_pool_place_kernel<CE><<<(unsigned)((d->n + 255) / 256), 256>>>(
      d->n, d->tune.lane_order, ps, d->csr.rowptr, p->pcol, p->pval, (CE *)d->csr.col, d->csr.val,
      cs, d->coded.dict ? d->coded.rowptr : NULL, p->ccol, p->ccode, (CE *)d->coded.col,
      d->coded.code);
}

cis_err hyb_pool_place(cis_hyb_cuda *d, cis_hyb_cuda_pool *p) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  int64_t *ps = NULL, *cs = NULL;
  CIS_TRY(pool_starts(d, p, &ps, &cs));
  if (d->csr.bits == 16)
    pool_place_launch<uint16_t>(d, p, ps, cs);
  else
    pool_place_launch<int32_t>(d, p, ps, cs);
  CIS_CUDA_TRY(cudaGetLastError());
  CIS_CUDA_TRY(cudaDeviceSynchronize());
  pool_taken(d, p);
cleanup:
  hyb_dev_free(&ps);
  hyb_dev_free(&cs);
  hyb_pool_release(p);
  return err;
}

