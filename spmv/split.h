/* cisolve: the column split of a small matrix over the blocks of a thread-block cluster, the
 * device layout of its single-vector product (docs/gpu.md, "Small matrices: split over a
 * cluster"; kernel cis_split_kernel in spmv/hyb_kernels.cuh). Built on the host.
 *
 * Rows are cut into `groups` groups and each group's columns into `parts` parts of at most
 * CIS_SPLIT_PART columns, so that every block (group g, part h: block g * parts + h) has about
 * the same entries: groups of about equal entries first, then, where a part had to be held to
 * CIS_SPLIT_PART columns and its group's largest part came out above the mean, the rows of that
 * group weighted by the excess and the groups cut again (up to CIS_SPLIT_PASSES times, keeping
 * the cut whose largest part is smallest). Block (g, h) holds the entries of group g's rows
 * whose columns lie in part h, as one stream, row after row (a row with none there has one
 * dummy entry), cut into CIS_SPLIT_T runs of equal length (a multiple of 4), one per thread:
 * word i of thread t at w[4 * (base + (i / 4) * CIS_SPLIT_T + t) + i % 4], so that the threads'
 * step i / 4 is one coalesced 16-byte load each. A word is
 *   bits 0-13: the column, counted from the part's first;
 *   bit 14: the row ends here;
 *   bits 16-31: the value's code (spmv/valdict.h: bit 31 its sign, bits 16-30 its index in
 *   `table`), index CIS_SPLIT_ESC: the thread's next escaped value (esc, in stream order; its
 *   sign is its own).
 * table holds the dictionary's magnitudes and a last 0.0, the value of dummy and padding words.
 * first[b * CIS_SPLIT_T + t]: bits 0-15 the group row of thread t's first word, bits 16-31 its
 * first escaped value counted from the block's.
 *
 * Ownership: a cis_split owns its arrays. */
#ifndef CIS_SPLIT_H
#define CIS_SPLIT_H

#include <stdint.h>

#include "core/error.h"
#include "spmv/valdict.h"

#define CIS_SPLIT_T 1024       /* threads per block */
#define CIS_SPLIT_PART 16384   /* columns per part: 14-bit columns */
#define CIS_SPLIT_MAXP 8       /* parts: blocks per cluster (the portable cluster size) */
#define CIS_SPLIT_ESC 0x7FFFu  /* the code index of an escaped value */
#define CIS_SPLIT_END 0x4000u  /* the row-end bit of a word */
#define CIS_SPLIT_PASSES 4
/* A block's shared memory: x's part, the table and the escaped values (after the block's
 * stream, the runs' unfinished sums and their rows: CIS_SPLIT_T doubles and ints), then the
 * row sums; at most CIS_SPLIT_SHARED bytes. */
#define CIS_SPLIT_SHARED (227 * 1024)
#ifdef __CUDACC__
#define CIS_SPLIT_HD __host__ __device__
#else
#define CIS_SPLIT_HD
#endif
static inline CIS_SPLIT_HD int cis_split_front(int xw, int ntab1, int maxesc) {
  int front = xw + ntab1 + maxesc;
  return front > CIS_SPLIT_T * 3 / 2 ? front : CIS_SPLIT_T * 3 / 2;
}
static inline CIS_SPLIT_HD int64_t cis_split_shared(int xw, int ntab1, int maxesc, int maxrows) {
  return (int64_t)(cis_split_front(xw, ntab1, maxesc) + maxrows) * 8;
}

/* What a block needs to start. */
typedef struct {
  int64_t base;   /* its first 16-byte word */
  int32_t c0, cw; /* its part's columns [c0, c0 + cw) */
  int32_t r0, nr; /* its group's rows [r0, r0 + nr) */
  int32_t steps;  /* 16-byte words per thread */
  int32_t e0, ne; /* its escaped values esc[e0, e0 + ne) */
  int32_t pad;
} cis_split_blk;

typedef struct {
  int parts, groups;
  int xw;               /* the widest part */
  int ntab1;            /* table entries (the dictionary's and the 0.0) */
  int maxesc, maxrows;  /* the most escaped values and rows of a block */
  cis_split_blk *blk;   /* groups * parts */
  uint32_t *first;      /* groups * parts * CIS_SPLIT_T */
  uint32_t *w;          /* nwords */
  int64_t nwords;
  double *esc;          /* nesc */
  int64_t nesc;
  double *table;        /* ntab1 */
  int64_t dummies, padding; /* dummy words, and padding words at the ends of the runs */
} cis_split;

/* Device bytes of the layout (words, escaped values, first words, table, block data). */
int64_t cis_split_bytes(const cis_split *s);

/* The split of the n x n matrix (rp: n + 1 offsets; col, val: its entries, each row's in any
 * order) into `groups` clusters of `parts` blocks, values coded with dictionary d (size 0: every
 * value escaped). *fits 0 (and out left empty) when it cannot be: parts * CIS_SPLIT_PART < n,
 * more than 65535 rows or escaped values in a block, a dictionary of CIS_SPLIT_ESC or more
 * magnitudes, more than CIS_SPLIT_SHARED bytes of shared memory, or a run of 2^31 words. */
cis_err cis_split_build(int64_t n, const int64_t *rp, const int32_t *col, const double *val,
                        const cis_vdict *d, int parts, int groups, int *fits, cis_split *out);
void cis_split_free(cis_split *s);

#endif
