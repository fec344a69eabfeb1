/* lane_model: how many lines of x one gather instruction of our kernel touches, on the CI
 * matrix of an FCIDUMP, with each row's entries in the row's own order and in lane order
 * (cis_lane_order, docs/gpu.md). A model, not a timing: it predicts what lane order can save
 * before the device measures it (docs/design-notes.md).
 *
 * usage: lane_model FCIDUMP [--level L] [--lanes W] [--every B]
 * The matrix is cisolve's (cis_space_build + cis_hmat_build_ci, FCI unless --level L), its
 * Expansion blocks regenerated one at a time (every B-th block, default every one). For each
 * row, a sub-warp of W lanes (default 16) reads v consecutive positions per lane and step: the
 * ELL part with v = 2, the Expansion part once as plain values (v = 2) and once as coded ones
 * (v = 4; in cisolve the two share a row's entries). Each step and component is one gather
 * instruction; the model counts the distinct 128-byte lines of x (16 doubles) among its lanes'
 * columns, and prints the lines per gathered entry. Row starts are taken as aligned for the ELL
 * part and at (row * 7) mod v for the Expansion part.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "hamiltonian/hmat.h"
#include "hamiltonian/space.h"
#include "io/input.h"

typedef struct {
  double lines, gathers;
} tally;

/* One row part: entries col[0..len) at positions [p0, p0 + len). */
static void count_row(const int32_t *col, int64_t len, int64_t p0, int v, int lanes, int order,
                      int32_t *to, int32_t *placed, tally *t) {
  int64_t base = p0 & -(int64_t)v, win = (int64_t)v * lanes, end = p0 + len;
  cis_lane_order(p0, end, v, order ? lanes : 0, to);
  for (int64_t k = 0; k < len; k++) placed[p0 - base + to[k]] = col[k];
  for (int64_t a = base; a < end; a += win)
    for (int j = 0; j < v; j++) {
      int32_t seen[32];
      int nseen = 0;
      for (int l = 0; l < lanes; l++) {
        int64_t pos = a + (int64_t)v * l + j;
        if (pos < p0 || pos >= end) continue;
        int32_t line = placed[pos - base] / 16;
        int dup = 0;
        for (int q = 0; q < nseen && !dup; q++) dup = seen[q] == line;
        if (!dup) seen[nseen++] = line;
        t->gathers += 1;
      }
      t->lines += nseen;
    }
}

static void die(void) {
  cis_error_print(1);
  exit(1);
}

int main(int argc, char **argv) {
  if (argc < 2 || argv[1][0] == '-') {
    fprintf(stderr, "usage: lane_model FCIDUMP [--level L] [--lanes W] [--every B]\n");
    return 2;
  }
  int level = 0, lanes = 16;
  int64_t every = 1;
  for (int i = 2; i + 1 < argc; i += 2) {
    long x = atol(argv[i + 1]);
    if (strcmp(argv[i], "--level") == 0 && x >= 0) level = (int)x;
    else if (strcmp(argv[i], "--lanes") == 0 && (x == 4 || x == 8 || x == 16 || x == 32))
      lanes = (int)x;
    else if (strcmp(argv[i], "--every") == 0 && x >= 1) every = x;
    else {
      fprintf(stderr, "lane_model: bad option %s %s\n", argv[i], argv[i + 1]);
      return 2;
    }
  }
  cis_problem prob;
  cis_space *space = NULL;
  cis_hmat *hm = NULL;
  if (cis_input_read(argv[1], &prob)) die();
  prob.space.kind = level > 0 ? CIS_SPACE_TRUNCATED : CIS_SPACE_FCI;
  prob.space.level = level;
  cis_space_opts so = {0, 0, 0};
  cis_hmat_opts ho = {.host_cache = 0}; /* nothing cached: blocks are regenerated below */
  if (cis_space_build(&prob.ints, &prob.space, &so, &space)) die();
  if (cis_hmat_build_ci(&prob.ints, space, &ho, &hm)) die();
  const cis_hyb *h = &hm->hyb;
  const cis_ell *e = &h->ell;
  int64_t longest = 8;
  for (int64_t s = 0; s < e->nslices; s++) longest = CIS_MAX(longest, (int64_t)e->slice_width[s]);
  cis_csr_block blk;
  memset(&blk, 0, sizeof blk);
  tally t[2][3]; /* [order][ELL, plain, coded] */
  memset(t, 0, sizeof t);
  int32_t *to = NULL, *placed = NULL;
  int64_t cap = 0;
  for (int64_t b = 0; b < h->nblocks; b += every) {
    const cis_csr_block *B = &h->blocks[b];
    if (!cis_csr_block_cached(B)) {
      if (h->regen(h->regen_ctx, B->row0, B->nrows, &blk)) die();
      B = &blk;
    }
    for (int64_t l = 0; l < B->nrows; l++) longest = CIS_MAX(longest, B->rowptr[l + 1] - B->rowptr[l]);
    if (longest + 8 > cap) {
      cap = 2 * longest + 8;
      to = realloc(to, (size_t)cap * sizeof *to);
      placed = realloc(placed, (size_t)cap * sizeof *placed);
      if (!to || !placed) {
        fprintf(stderr, "lane_model: out of memory\n");
        return 1;
      }
    }
    for (int64_t l = 0; l < B->nrows; l++) {
      int64_t r = B->row0 + l;
      const int32_t *ec = e->col + cis_ell_row_start(e, r);
      const int32_t *xc = B->col + B->rowptr[l];
      int64_t xlen = B->rowptr[l + 1] - B->rowptr[l];
      for (int order = 0; order < 2; order++) {
        count_row(ec, e->row_len[r], 0, 2, lanes, order, to, placed, &t[order][0]);
        count_row(xc, xlen, (r * 7) % 2, 2, lanes, order, to, placed, &t[order][1]);
        count_row(xc, xlen, (r * 7) % 4, 4, lanes, order, to, placed, &t[order][2]);
      }
    }
  }
  printf("%s, %s: %lld determinants, 1 in %lld Expansion blocks, %d lanes per row\n",
         argv[1], level ? "truncated CI" : "FCI", (long long)h->n, (long long)every, lanes);
  printf("lines of x per gathered entry (row order -> lane order):\n");
  const char *part[3] = {"ELL, 2 entries per lane and step", "Expansion, plain values (2 per step)",
                         "Expansion, coded values (4 per step)"};
  for (int p = 0; p < 3; p++)
    printf("  %-38s %.3f -> %.3f over %.0f gathers\n", part[p],
           t[0][p].gathers ? t[0][p].lines / t[0][p].gathers : 0.0,
           t[1][p].gathers ? t[1][p].lines / t[1][p].gathers : 0.0, t[0][p].gathers);
  free(to);
  free(placed);
  cis_csr_block_free(&blk);
  cis_hmat_destroy(&hm);
  cis_space_destroy(&space);
  cis_problem_free(&prob);
  return 0;
}
