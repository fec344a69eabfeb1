/* cisolve: the census of a hybrid matrix's Expansion rows, for an upload that splits them into
 * coded and plain entries (spmv/hyb_cuda_upload.cu): each row's entries, and with a value dictionary
 * (spmv/valdict.h) the entries whose value it codes; per block, their sums.
 *
 * The upload needs every row's counts before it stores any row (they place the rows). Taken
 * while the matrix is built (cis_hmat_opts.census), each block is counted on the thread that has
 * just generated it, while it is in cache; the upload then reads or regenerates every block once
 * instead of twice. Taken by the upload itself otherwise (cis_census_take).
 *
 * A census is complete when every block was counted (cis_census_complete). Counting blocks is
 * thread-safe for distinct blocks. Ownership: a census owns its arrays and its dictionary. */
#ifndef CIS_CENSUS_H
#define CIS_CENSUS_H

#include <stdint.h>

#include "base/error.h"
#include "spmv/hyb.h"
#include "spmv/valdict.h"

typedef struct cis_census {
  cis_vdict dict;         /* size 0: no dictionary, ncoded and bcoded NULL */
  int64_t nblocks;
  int32_t *rlen, *ncoded; /* n: Expansion entries of each row, of them coded */
  int64_t *bnnz, *bcoded; /* nblocks: the same per block */
  unsigned char *counted; /* nblocks: the block's rows were counted */
  int64_t longest;        /* entries of the longest row counted */
} cis_census;

/* Entries a census's dictionary is chosen from (cis_vdict_build's sample), and its largest
 * size: on H2O/6-31G FCI 1024 magnitudes code 72% of the entries, 2048 and 4096 95.3%; a larger
 * table was slower (it competes with x for L1; docs/BENCHMARKS.md). */
#define CIS_CENSUS_SAMPLE ((int64_t)1 << 21)
#define CIS_CENSUS_DICT 4096

/* An empty census of h's rows; with `coded`, the dictionary chosen from a sample of h's
 * Expansion blocks (cis_vdict_build; regenerated where they are not cached), which may come out
 * empty. */
cis_err cis_census_init(cis_census *c, const cis_hyb *h, int coded);
/* Count the rows of block b (rows: its entries, cached or just generated). */
void cis_census_block(cis_census *c, int64_t b, const cis_csr_block *rows);
/* The same, splitting the entries on the way as an upload with coded values stores them, one
 * dictionary lookup an entry for both: with `coded` (and a dictionary), each coded entry's
 * column and code into ccol and code, the others' values and columns into val and col; without,
 * every entry into val and col. Each row's entries keep their order, rows follow each other;
 * each array has room for the block's entries. Returns the entries put into ccol. */
int64_t cis_census_split(cis_census *c, int64_t b, const cis_csr_block *rows, int coded,
                         double *val, int32_t *col, int32_t *ccol, uint16_t *code);
int cis_census_complete(const cis_census *c);
/* Count every block of h that `want` selects (NULL: all) and that c has not counted yet, on
 * OpenMP threads, a block per task; blocks the host does not cache are regenerated. */
cis_err cis_census_take(cis_census *c, const cis_hyb *h, const unsigned char *want);
void cis_census_free(cis_census *c);

#endif
