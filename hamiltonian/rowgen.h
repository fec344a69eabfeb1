/* cisolve: the row generator (private to hamiltonian/).
 *
 * String link tables are built once for the alpha and the beta string lists of a space, as
 * PySCF's cistring link_index: for each string, its single excitations inside the list
 * (target, sign, pair index of (i,a), same-spin part of the element) and its same-spin double
 * excitations (target, full element, sign included). A row (ia, ib) is then: the diagonal,
 * alpha singles (with beta unchanged, and times beta singles: the alpha-beta doubles), beta
 * singles, alpha doubles, beta doubles; each target (ja, jb) is looked up in the space's
 * alpha-major lookup and skipped if absent. Memory: 24 bytes per single and 16 per double link,
 * e.g. CAS(16,16): 12870 strings x 784 doubles x 2 spins = 320 MB.
 *
 * A generator is read-only once built; every thread brings its own cis_rowbuf.
 */
#ifndef CIS_ROWGEN_H
#define CIS_ROWGEN_H

#include <stdint.h>

#include "hamiltonian/slater.h"
#include "hamiltonian/space_impl.h"
#include "spmv/hyb.h"

typedef struct {
  double v;     /* sign * same-spin part: h_ia + sum_{k same spin} [(ia|kk) - (ik|ka)] */
  int32_t tgt;  /* target string index */
  int32_t pai;  /* cis_pair(a, i) */
  int32_t sign; /* +1 / -1 */
  int32_t from; /* i, the orbital emptied (tells a spin flip from a pair move: see rowgen.c) */
} cis_link1;

typedef struct {
  double v;    /* sign * [(ai|bj) - (aj|bi)] */
  int32_t tgt;
  int32_t pad;
} cis_link2;

typedef struct {
  int64_t *s_ptr, *d_ptr; /* n + 1 each */
  cis_link1 *s;
  cis_link2 *d;
  int max_s, max_d;       /* most links of one string */
} cis_links;

typedef struct {
  const cis_space *space; /* borrowed */
  cis_sc sc;
  cis_links la, lb;
  int64_t max_row;        /* bound on the entries of one row */
  /* Spin penalty: rows of H + spin_shift * A with A = S^2 - spin_s2 when the target is the
   * lowest spin of the space's Ms (A >= 0 there), else H + spin_shift * A^2 (A is not positive
   * when S > |Ms|: a lower spin would be favoured). spin_shift 0 = none. cis_rowgen_set_spin. */
  double spin_shift, spin_s2;
  int spin_squared;
  int64_t max_flips;      /* bound on the spin flips of one determinant */
  cis_s2_targets s2t;     /* for the rows of A (spin_squared only) */
  /* Pair classes (see rowgen.c): pairs P with the same set {Q : |V(P,Q)| > CIS_ROWGEN_DROP}
   * share a class; every beta string's singles are grouped by the class of their pair, so the
   * alpha-beta doubles skip the groups whose integrals all vanish. ncls = 1: no grouping. */
  int ncls;
  int32_t *pcls;          /* npair */
  unsigned char *cls_nz;  /* ncls x ncls: some V(P,Q) of these classes is kept */
  int32_t *cls_ptr;       /* bstr.n x (ncls + 1): offsets of each class in a string's singles */
  struct cis_rowbuf_pool *pool; /* row scratch reused by regeneration calls (rowgen.c) */
} cis_rowgen;

/* Choose the penalty (see above) and grow max_row for the squared form's extra entries. */
void cis_rowgen_set_spin(cis_rowgen *g, double shift, double s2);

/* The penalty's diagonal element for determinant `row`: spin_shift * A_ii, with
 * S^2_ii = Sz(Sz+1) + (beta electrons in orbitals without an alpha electron); or, squared,
 * spin_shift * (A_ii^2 + the number of in-space spin flips of `row`). */
double cis_rowgen_penalty_diag(const cis_rowgen *g, int64_t row);

/* Per-thread scratch for one row. */
typedef struct {
  int64_t cap;
  uint64_t *key, *tmp; /* (col << 32 | entry) sort keys */
  double *val;         /* unsorted values, by entry */
  int32_t *col;        /* the sorted row */
  double *out;
  int32_t *pkk;        /* pair indices (kk) of the occupied orbitals */
  int64_t *fcol;       /* squared spin penalty: two rows of A (2 x (max_flips + 1)) */
  double *fval;
  uint64_t *fw;        /* 2 nwords */
} cis_rowbuf;

cis_err cis_rowgen_init(const cis_integrals *ints, const cis_space *space, cis_rowgen *g);
void cis_rowgen_free(cis_rowgen *g);
cis_err cis_rowbuf_init(const cis_rowgen *g, cis_rowbuf *b);
void cis_rowbuf_free(cis_rowbuf *b);

/* Row `row` (our order) into b->col / b->out, |H_ij| > CIS_ROWGEN_DROP (the diagonal always
 * kept); returns the entry count. With `sorted` the row is sorted by column; without, it comes
 * in generation order (each column once all the same), which is all a product needs and saves
 * the sort. */
#define CIS_ROWGEN_DROP 1e-14
int64_t cis_rowgen_row(const cis_rowgen *g, int64_t row, int sorted, cis_rowbuf *b);
/* The same row, unsorted, written to col/val (room for max_row entries) instead of b's arrays
 * (b is still the scratch): lets a builder generate straight into its storage. */
int64_t cis_rowgen_row_to(const cis_rowgen *g, int64_t row, cis_rowbuf *b, int32_t *col,
                          double *val);

/* First position in the sorted row whose column is >= boundary. */
static inline int64_t cis_row_split(const int32_t *col, int64_t len, int64_t boundary) {
  int64_t lo = 0, hi = len;
  while (lo < hi) {
    int64_t mid = (lo + hi) >> 1;
    if (col[mid] < boundary)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* cis_regen_fn: the Expansion part of rows [row0, row0+nrows) into out (grown as needed).
 * ctx is a cis_rowgen; single-threaded, callable from several threads at once. */
cis_err cis_rowgen_regen(void *ctx, int64_t row0, int64_t nrows, cis_csr_block *out);
/* cis_regen_apply_fn: Y[r, :] += (Expansion part of row r) X for those rows, each row
 * multiplied as it is generated (no CSR written). Same threading as cis_rowgen_regen. */
cis_err cis_rowgen_apply(void *ctx, int64_t row0, int64_t nrows, int k, const double *X,
                         double *Y, int64_t n);

#endif
