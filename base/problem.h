/* cisolve: the problem as read from the input, before any Hamiltonian is built.
 *
 * io/ fills a cis_problem from an FCIDUMP, an input.h5 or a Matrix Market file;
 * hamiltonian/ turns it into a determinant space and a hybrid matrix. Ownership: everything
 * pointed to belongs to the cis_problem and is released by cis_problem_free().
 *
 * Determinant bit strings: orbital p (0-based) of a string is bit (p % 64) of word (p / 64);
 * a string of norb orbitals takes cis_nwords(norb) 64-bit words. A determinant is its alpha
 * string followed by its beta string; its sign convention is that of PySCF's cistring (all
 * alpha creators to the left of all beta creators, each in ascending orbital order).
 */
#ifndef CIS_PROBLEM_H
#define CIS_PROBLEM_H

#include <stdint.h>

#include "base/error.h"

static inline int cis_nwords(int norb) { return (norb + 63) / 64; }

/* Number of unique pairs (p>=q) and the 8-fold packed index of (pq|rs), as in PySCF's
 * ao2mo.restore(8, ...) and FCIDUMP order: pq = p*(p+1)/2+q for p>=q, then the same on pairs. */
static inline int64_t cis_pair(int64_t p, int64_t q) {
  return p >= q ? p * (p + 1) / 2 + q : q * (q + 1) / 2 + p;
}
static inline int64_t cis_eri_index(int p, int q, int r, int s) {
  return cis_pair(cis_pair(p, q), cis_pair(r, s));
}
/* Values in the 8-fold packed integrals of norb orbitals, or INT64_MAX where they are more than
 * that (norb > 92681): then no allocation serves them, and nothing overflows on the way. */
static inline int64_t cis_eri_size(int norb) {
  int64_t np = (int64_t)norb * ((int64_t)norb + 1) / 2;
  if (np > (int64_t)UINT32_MAX) return INT64_MAX;
  return (int64_t)((uint64_t)np * (uint64_t)(np + 1) / 2);
}

typedef struct {
  int norb;
  int nalpha, nbeta; /* electrons of each spin; ms2 = nalpha - nbeta */
  double ecore;      /* nuclear repulsion + frozen core, Eh */
  double *h1e;       /* norb*norb, symmetric, row-major */
  double *eri;       /* cis_eri_size(norb), 8-fold packed chemists' (pq|rs) */
  int *orbsym;       /* norb irrep labels (1-based as in FCIDUMP), or NULL */
  int isym;          /* target irrep from the FCIDUMP, 0 if absent (app/target.c applies it) */
  /* Molpro's OCC= and CLOSED= header keys: occupied and doubly occupied orbitals per irrep
   * (nocc / nclosed entries, 0 = absent); the reference of truncated CI (hamiltonian/refdet.h) */
  int nocc, nclosed;
  int occ[8], closed[8];
} cis_integrals;

typedef enum {
  CIS_SPACE_FCI = 0,
  CIS_SPACE_TRUNCATED, /* all determinants within `level` excitations of the reference */
  CIS_SPACE_LIST,      /* an explicit determinant list */
  CIS_SPACE_MRCI       /* all determinants within `level` excitations of any determinant of a
                          model space (hamiltonian/space_mrci.c), which is the Reference region */
} cis_space_kind;

/* The highest excitation level a truncated space may name (ci<N>, /space/level). */
#define CIS_SPACE_MAX_LEVEL 1000

/* A space by its name, as --space and input.h5's /space kind give it (any case): "fci",
 * "list", "cis", "cisd", "cisdt", "cisdtq", "ci<N>" or "mrci<N>" with
 * 1 <= N <= CIS_SPACE_MAX_LEVEL.
 * Returns 1 with *kind and *level (0 for fci and list), or 0 for any other name. */
int cis_space_by_name(const char *name, cis_space_kind *kind, int *level);

typedef struct {
  cis_space_kind kind;
  int level;           /* excitation level for CIS_SPACE_TRUNCATED and _MRCI (2 = CISD, ...) */
  /* CIS_SPACE_MRCI's model space: CAS(cas_nelec, cas_norb), cas_nelec electrons in the cas_norb
   * orbitals above the (nelec - cas_nelec) / 2 lowest, doubly occupied ones (as PySCF's CASCI
   * counts them); cas_norb = 0: the reference determinants below are the model space. */
  int cas_nelec, cas_norb;
  /* Reference determinant(s), nref_dets of them: alpha then beta strings, each
   * cis_nwords(norb) words. NULL means the aufbau determinant (lowest orbitals). */
  int64_t nref_dets;
  uint64_t *ref_alpha, *ref_beta;
  /* Explicit list for CIS_SPACE_LIST: ndets alpha and beta strings. */
  int64_t ndets;
  uint64_t *det_alpha, *det_beta;
  /* 1..8: only determinants of this irrep (Molpro's numbering of cis_integrals.orbsym,
   * hamiltonian/irrep.h); 0: every irrep */
  int irrep;
} cis_space_spec;

/* An explicit symmetric matrix (both triangles stored), CSR, 0-based. */
typedef struct {
  int64_t n;
  int64_t nnz;
  int64_t *rowptr; /* n+1 */
  int32_t *col;    /* nnz, sorted within each row */
  double *val;     /* nnz */
} cis_csr;

/* The orbitals of an integral problem in an atomic-orbital basis, as input.h5's optional
 * /orbitals group gives them (docs/input-format.md), for a Molden file of natural orbitals:
 * the converter writes the basis-set conventions (the Molden header and the coefficients in its
 * AO order), so the program needs none of them. nao == 0: the input carries none. */
typedef struct {
  int nao;             /* atomic orbitals (rows of the coefficients) */
  int ncore;           /* doubly occupied orbitals frozen out of the problem (columns of core) */
  char *molden_header; /* the Molden file up to its [MO] section, NUL-terminated */
  double *active;      /* nao x norb, row-major: column p is orbital p of the integrals */
  double *core;        /* nao x ncore, row-major, or NULL when ncore == 0 */
} cis_orbitals;

typedef enum { CIS_PROBLEM_INTEGRALS = 0, CIS_PROBLEM_MATRIX } cis_problem_kind;

/* Options stored in an input file, as (long option name without "--", value) strings; the
 * command line is applied after them and overrides them. */
#define CIS_MAX_FILE_OPTIONS 64
typedef struct {
  int n;
  struct {
    char key[64];
    char value[256];
  } kv[CIS_MAX_FILE_OPTIONS];
} cis_kvlist;

/* The orbitals --frozen and --active kept (hamiltonian/orbitals.h): the N lowest orbitals of
 * the input doubly occupied and folded into the core energy, the active ones kept, the rest
 * deleted (empty). applied = 0: the input's orbitals as they are. */
typedef struct {
  int applied;
  int norb_input;     /* orbitals of the input */
  int nfrozen;        /* its lowest orbitals, doubly occupied */
  int *kept;          /* ints.norb input orbitals (0-based, ascending) kept, in their order */
  double ecore_input; /* the input's core energy, before the frozen orbitals were folded in */
} cis_orbital_window;

typedef struct {
  cis_problem_kind kind;
  char source[4096];       /* the input path, for messages and the output's provenance */
  cis_integrals ints;      /* CIS_PROBLEM_INTEGRALS */
  cis_space_spec space;    /* CIS_PROBLEM_INTEGRALS; kind FCI unless the file says */
  int space_from_file;     /* the input file named a space */
  cis_csr matrix;          /* CIS_PROBLEM_MATRIX */
  cis_kvlist file_options; /* solver options found in the input file */
  cis_orbitals orbitals;   /* CIS_PROBLEM_INTEGRALS from input.h5 /orbitals; nao 0 if none */
  cis_orbital_window window; /* CIS_PROBLEM_INTEGRALS: --frozen / --active, as applied */
} cis_problem;

void cis_problem_free(cis_problem *p);
/* The space's arrays (reference and listed determinants) freed, the spec zeroed. */
void cis_space_spec_free(cis_space_spec *s);

/* --spin S (2S = spin2) against the problem's electrons and orbitals: 2S >= |MS2|, 2S of the
 * parity of the electron count, and 2S <= min(nelec, 2*norb - nelec), the most unpaired
 * electrons nelec electrons can have in norb orbitals. CIS_ERR_USAGE naming the limit. */
cis_err cis_problem_check_spin(const cis_integrals *ints, int spin2);
void cis_csr_free(cis_csr *m);

/* One entry of a row, for sorting. */
typedef struct {
  int32_t col;
  double val;
} cis_csr_entry;
/* Sort the len entries of one row (or part of a row) by column, columns and values together;
 * a sorted row is left as it is. *tmp / *cap: scratch grown as needed (start NULL / 0, free
 * with cis_free). */
cis_err cis_csr_sort_row(int32_t *col, double *val, int64_t len, cis_csr_entry **tmp,
                         int64_t *cap);
/* Every row of m sorted by column. */
cis_err cis_csr_sort_rows(cis_csr *m);

/* A symmetric matrix read out a chunk of rows at a time, for writers that stream it
 * (--export-matrix) rather than hold it whole. Chunk c is rows [c * chunk_rows,
 * min(n, (c + 1) * chunk_rows)). rows(src, c0, count, sorted, out) fills out[i] with the rows
 * of chunk c0 + i: out[i].n rows, rowptr from 0, both triangles, each row sorted by column when
 * `sorted` (else in an order of the source's, which may be cheaper); out[i]'s arrays are
 * (re)allocated as needed, so the caller keeps them from call to call and frees them with
 * cis_csr_free. The chunks of one call may be filled at once, on OpenMP threads. */
typedef struct cis_row_source cis_row_source;
struct cis_row_source {
  int64_t n, nnz;      /* rows (= columns) and entries of the whole matrix */
  int64_t chunk_rows, nchunks;
  int64_t chunk_nnz;   /* about the most entries a chunk holds */
  int64_t scratch;     /* bytes the source takes beside out while it fills one chunk */
  const void *ctx;
  cis_err (*rows)(const cis_row_source *src, int64_t c0, int count, int sorted, cis_csr *out);
};

/* m's rows as they are stored (sorted or not), chunks of about 2^20 entries (m is borrowed). */
void cis_csr_row_source(const cis_csr *m, cis_row_source *src);
/* The rows [row0, row0 + nrows) of m into out (its arrays reallocated to fit). */
cis_err cis_csr_copy_rows(const cis_csr *m, int64_t row0, int64_t nrows, cis_csr *out);

#endif
