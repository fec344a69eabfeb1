/* cisolve: Expansion blocks that are not resident: grouped into batches at upload, and in every
 * product generated and multiplied on the device by the matrix's device regenerator where it
 * has one, else regenerated (or read from the host cache) on OpenMP threads, packed into pinned
 * buffers, copied and applied, two batches in flight. */
#include <omp.h>
#include <string.h>

#include "spmv/hyb_cuda_private.cuh"

static size_t align16(size_t b) { return (b + 15) & ~(size_t)15; }

/* Bytes kept back from the budget for the streaming buffers: two batches of `nscratch` blocks
 * of a quarter more than the mean block, on the device. */
int64_t hyb_stream_reserve(const cis_hyb *h, int nscratch) {
  return cis_place_stream_reserve(h->nnz_exp, h->nblocks, h->block_rows, nscratch);
}

int64_t cis_hyb_cuda_stream_bytes(const cis_hyb *h) {
  return hyb_stream_reserve(h, CIS_MAX(1, omp_get_max_threads()));
}

/* The rows and entries of the blocks generated on the device in every product (the report's). */
static void devgen_count(cis_hyb_cuda *d, const char *resident) {
  const cis_hyb *h = d->h;
  d->info.devgen_rows = d->info.devgen_nnz = 0;
  for (int64_t b = 0; b < h->nblocks; b++) {
    if (resident[b]) continue;
    d->info.devgen_rows += h->blocks[b].nrows;
    d->info.devgen_nnz += d->cen ? d->cen->bnnz[b] : 0;
  }
}

/* With the device generator made: the resident blocks chosen again within `room` (*avail), the
 * blocks left to it counted in *streamed. */
static cis_err choose_again(cis_hyb_cuda *d, int flags, int64_t room, int64_t *avail,
                            char *resident, int64_t *streamed) {
  *avail = room;
  d->info.regenerated_blocks = 0;
  CIS_CALL(hyb_choose_resident(d, room, flags, resident));
  *streamed = 0;
  for (int64_t b = 0; b < d->h->nblocks; b++) *streamed += !resident[b];
  return CIS_OK;
}

/* The device generator of a matrix built on the GPU, which the upload needs to place its rows
 * (its tables are part of the matrix's least bytes, cis_hyb_cuda_min_bytes); with it, streamed
 * blocks need no streaming buffers, whose room goes to resident blocks, chosen again. */
static cis_err devgen_place_setup(cis_hyb_cuda *d, int flags, int64_t *avail, char *resident) {
  const cis_hyb *h = d->h;
  char why[160] = "";
  int64_t bytes = -1;
  CIS_CHECK(h->regen_dev, CIS_ERR_INTERNAL, "a matrix built on the GPU without its generator");
  CIS_CALL(h->regen_dev(h->regen_dev_ctx, &bytes, why, &d->gen));
  CIS_CHECK(d->gen, CIS_ERR_INTERNAL, "a matrix built on the GPU, whose rows the GPU cannot "
            "generate again: %s", why);
  int64_t streamed = 0;
  CIS_CALL(choose_again(d, flags, *avail + hyb_stream_reserve(h, d->st.nscratch), avail,
                        resident, &streamed));
  d->info.devgen = streamed > 0;
  d->info.devgen_bytes = d->gen->bytes;
  devgen_count(d, resident);
  return CIS_OK;
}

cis_err hyb_devgen_setup(cis_hyb_cuda *d, int flags, int64_t *avail, char *resident) {
  const cis_hyb *h = d->h;
  char why[160] = "", b1[32], b2[32];
  int64_t streamed = 0, bytes = -1;
  for (int64_t b = 0; b < h->nblocks; b++) streamed += !resident[b];
  /* a matrix built on the GPU: its rows are placed by the device generator, which stays */
  if (h->device_built) return devgen_place_setup(d, flags, avail, resident);
  /* no regenerator: an explicit matrix, or a CI one built with host_regen (--regen host) */
  if (!streamed || !h->regen_dev) return CIS_OK;
  CIS_CALL(h->regen_dev(h->regen_dev_ctx, &bytes, why, NULL));
  if (bytes < 0) {
    snprintf(d->info.devgen_note, sizeof d->info.devgen_note, "%s", why);
    return CIS_OK;
  }
  /* the streaming buffers are not needed: their room goes to the tables, then to blocks */
  int64_t room = *avail + hyb_stream_reserve(h, d->st.nscratch) - bytes;
  if (room < 0) {
    snprintf(d->info.devgen_note, sizeof d->info.devgen_note,
             "its tables need %s, the budget leaves %s",
             cis_format_bytes((double)bytes, b1, sizeof b1),
             cis_format_bytes((double)(*avail + hyb_stream_reserve(h, d->st.nscratch)), b2,
                              sizeof b2));
    return CIS_OK;
  }
  CIS_CALL(h->regen_dev(h->regen_dev_ctx, &bytes, why, &d->gen));
  if (!d->gen) {
    snprintf(d->info.devgen_note, sizeof d->info.devgen_note, "%s", why);
    return CIS_OK;
  }
  CIS_CALL(choose_again(d, flags, room, avail, resident, &streamed));
  if (!streamed) { /* the streaming buffers' room alone let every block stay */
    d->gen->destroy(d->gen);
    d->gen = NULL;
    return CIS_OK;
  }
  d->info.devgen = 1;
  d->info.devgen_bytes = d->gen->bytes;
  devgen_count(d, resident);
  return CIS_OK;
}

cis_err hyb_slots_create(cis_hyb_cuda *d) {
  CIS_CUDA(cudaStreamCreateWithFlags(&d->copy_stream, cudaStreamNonBlocking));
  for (int i = 0; i < CIS_NSLOTS; i++) {
    CIS_CUDA(cudaEventCreateWithFlags(&d->st.slots[i].copied, cudaEventDisableTiming));
    CIS_CUDA(cudaEventCreateWithFlags(&d->st.slots[i].consumed, cudaEventDisableTiming));
  }
  return CIS_OK;
}

/* Group the streamed blocks into batches of at most nscratch blocks with consecutive rows. */
static cis_err make_batches(cis_hyb_cuda *d) {
  const cis_hyb *h = d->h;
  CIS_CALL(cis_calloc(&d->st.batches, (size_t)CIS_MAX(d->st.nblocks, (int64_t)1),
                      sizeof *d->st.batches, "streamed batches"));
  d->st.nbatch = 0;
  for (int64_t i = 0; i < d->st.nblocks; i++) {
    const cis_csr_block *blk = &h->blocks[d->st.ids[i]];
    stream_batch *bt = d->st.nbatch ? &d->st.batches[d->st.nbatch - 1] : NULL;
    /* the device generates a run of consecutive blocks in one launch */
    if (bt && (d->gen || bt->count < d->st.nscratch) && bt->row0 + bt->nrows == blk->row0) {
      bt->count++;
      bt->nrows += blk->nrows;
      continue;
    }
    stream_batch nb = {i, 1, blk->row0, blk->nrows};
    d->st.batches[d->st.nbatch++] = nb;
  }
  d->info.batches = d->st.nbatch;
  return CIS_OK;
}

cis_err hyb_stream_setup(cis_hyb_cuda *d) {
  CIS_CALL(make_batches(d));
  CIS_CALL(cis_calloc(&d->st.scratch, (size_t)d->st.nscratch, sizeof *d->st.scratch,
                      "streamed block scratch"));
  CIS_CALL(
      cis_calloc(&d->st.src, (size_t)d->st.nscratch, sizeof *d->st.src, "streamed block sources"));
  CIS_CALL(cis_calloc(&d->st.pack_off, (size_t)d->st.nscratch + 1, sizeof *d->st.pack_off,
                      "streamed block offsets"));
  d->timer.nev = 2 + 4 * d->st.nbatch;
  CIS_CALL(cis_calloc(&d->timer.ev, (size_t)d->timer.nev, sizeof *d->timer.ev, "timing events"));
  for (int64_t i = 0; i < d->timer.nev; i++) CIS_CUDA(cudaEventCreate(&d->timer.ev[i]));
  return CIS_OK;
}

/* Regenerate (or look up) the batch's blocks, one block per OpenMP thread. */
static cis_err batch_generate(cis_hyb_cuda *d, const stream_batch *bt) {
  cis_worker_error we = {CIS_OK, ""};
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t j = 0; j < bt->count; j++) {
    if (cis_worker_error_seen(&we)) continue;
    cis_err e =
        cis_hyb_block_rows(d->h, d->st.ids[bt->first + j], &d->st.scratch[j], &d->st.src[j]);
    if (e != CIS_OK) cis_worker_error_keep(&we, e);
  }
  CIS_WORKER_RERAISE(we);
  return CIS_OK;
}

typedef struct {
  size_t off_col, off_val, bytes;
} stage_layout;

static stage_layout layout_for(int64_t nrows, int64_t nnz) {
  stage_layout L;
  L.off_col = align16((size_t)(nrows + 1) * 8);
  L.off_val = align16(L.off_col + (size_t)(nnz + 2) * 4);
  L.bytes = L.off_val + (size_t)(nnz + 2) * 8;
  return L;
}

/* Pack the batch's blocks as one CSR into the slot's pinned buffer, once the previous copy out
 * of it is done; the blocks go in parallel, each to its offset. */
static cis_err batch_pack(cis_hyb_cuda *d, const stream_batch *bt, stream_slot *s,
                          stage_layout *Lout) {
  int64_t *off = d->st.pack_off;
  off[0] = 0;
  for (int64_t j = 0; j < bt->count; j++)
    off[j + 1] = off[j] + d->st.src[j]->rowptr[d->st.src[j]->nrows];
  int64_t nnz = off[bt->count];
  stage_layout L = layout_for(bt->nrows, nnz);
  CIS_CUDA(cudaEventSynchronize(s->copied));
  if (L.bytes > s->pinned_cap) {
    if (s->pinned) CIS_CUDA(cudaFreeHost(s->pinned));
    s->pinned = NULL;
    s->pinned_cap = 0;
    size_t cap = L.bytes + L.bytes / 4;
    CIS_CUDA(cudaMallocHost((void **)&s->pinned, cap));
    s->pinned_cap = cap;
  }
  int64_t *rp = (int64_t *)s->pinned;
  int32_t *col = (int32_t *)(s->pinned + L.off_col);
  double *val = (double *)(s->pinned + L.off_val);
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t j = 0; j < bt->count; j++) {
    const cis_csr_block *b = d->st.src[j];
    int64_t r0 = b->row0 - bt->row0, o = off[j], m = b->rowptr[b->nrows];
    for (int64_t l = 0; l < b->nrows; l++) rp[r0 + l] = o + b->rowptr[l];
    if (m) {
      memcpy(col + o, b->col, (size_t)m * 4);
      memcpy(val + o, b->val, (size_t)m * 8);
    }
  }
  rp[bt->nrows] = nnz;
  col[nnz] = col[nnz + 1] = 0;
  val[nnz] = val[nnz + 1] = 0.0;
  *Lout = L;
  return CIS_OK;
}

/* Copy the staged batch to the slot's device buffer once the previous kernel on it is done,
 * then add its product on the compute stream once the copy has landed. `ev`: 4 timing events
 * (copy start, end, kernel start, end) or NULL. */
static cis_err ship_and_apply(cis_hyb_cuda *d, stream_slot *s, const stream_batch *bt,
                              stage_layout L, int k, const double *xt, double *Y, int64_t ldy,
                              cudaEvent_t *ev) {
  if (L.bytes > s->dev_cap) {
    CIS_CUDA(cudaEventSynchronize(s->consumed));
    d->info.stream_buf_bytes -= (int64_t)s->dev_cap;
    hyb_dev_free(&s->dev);
    s->dev_cap = 0;
    size_t cap = L.bytes + L.bytes / 4;
    CIS_CALL(hyb_dev_alloc(&s->dev, cap, "streamed Expansion batch buffer"));
    s->dev_cap = cap;
    d->info.stream_buf_bytes += (int64_t)cap;
  }
  CIS_CUDA(cudaStreamWaitEvent(d->copy_stream, s->consumed, 0));
  if (ev) CIS_CUDA(cudaEventRecord(ev[0], d->copy_stream));
  CIS_CUDA(cudaMemcpyAsync(s->dev, s->pinned, L.bytes, cudaMemcpyHostToDevice, d->copy_stream));
  if (ev) CIS_CUDA(cudaEventRecord(ev[1], d->copy_stream));
  CIS_CUDA(cudaEventRecord(s->copied, d->copy_stream));
  CIS_CUDA(cudaStreamWaitEvent(d->stream, s->copied, 0));
  cis_csr_view<int32_t> m = {bt->row0, bt->nrows, (const int64_t *)s->dev,
                             (const int32_t *)(s->dev + L.off_col),
                             (const double *)(s->dev + L.off_val)};
  if (ev) CIS_CUDA(cudaEventRecord(ev[2], d->stream));
  CIS_CALL(hyb_launch(d, k, &m, xt, Y, ldy));
  if (ev) CIS_CUDA(cudaEventRecord(ev[3], d->stream));
  CIS_CUDA(cudaEventRecord(s->consumed, d->stream));
  return CIS_OK;
}

/* The device generates and multiplies every batch, one launch each, on the compute stream
 * (timed between ev[0] and ev[1] when given). */
static cis_err apply_devgen(cis_hyb_cuda *d, int k, const double *xt, double *Y, int64_t ldy,
                            cudaEvent_t *ev) {
  if (ev) CIS_CUDA(cudaEventRecord(ev[0], d->stream));
  for (int64_t i = 0; i < d->st.nbatch; i++) {
    const stream_batch *bt = &d->st.batches[i];
    CIS_CALL(d->gen->apply(d->gen, bt->row0, bt->nrows, k, xt, Y, ldy, (void *)d->stream));
  }
  if (ev) CIS_CUDA(cudaEventRecord(ev[1], d->stream));
  d->info.streamed_nnz = d->info.devgen_nnz;
  d->info.streamed_bytes = 0;
  return CIS_OK;
}

/* Host generation of batch i+1 overlaps the copy and the kernel of batch i. */
cis_err hyb_apply_streamed(cis_hyb_cuda *d, int k, const double *xt, double *Y, int64_t ldy) {
  int64_t nnz = 0, bytes = 0;
  if (d->gen) return apply_devgen(d, k, xt, Y, ldy, d->timer.on ? d->timer.ev + 2 : NULL);
  for (int64_t i = 0; i < d->st.nbatch; i++) {
    const stream_batch *bt = &d->st.batches[i];
    stream_slot *s = &d->st.slots[i % CIS_NSLOTS];
    stage_layout L;
    double t0 = cis_wtime();
    CIS_CALL(batch_generate(d, bt));
    CIS_CALL(batch_pack(d, bt, s, &L));
    d->timer.times.t_gen += cis_wtime() - t0;
    CIS_CALL(
        ship_and_apply(d, s, bt, L, k, xt, Y, ldy, d->timer.on ? d->timer.ev + 2 + 4 * i : NULL));
    nnz += (int64_t)((L.bytes - L.off_val) / 8) - 2;
    bytes += (int64_t)L.bytes;
  }
  d->info.streamed_nnz = nnz;
  d->info.streamed_bytes = bytes;
  d->timer.times.bytes_copied += bytes;
  return CIS_OK;
}
