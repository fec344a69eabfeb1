/* cisolve: determinant spaces.
 *
 * A space is a set of determinants (alpha string, beta string) drawn from two string lists.
 * Determinants are numbered in *our order*: the Reference region first (the reference
 * determinant(s), then the rule of docs/format.md and hamiltonian/refregion.c: every symmetry
 * block's lowest determinant, the lowest diagonal energies, whole configurations), then the
 * Expansion Space (ascending diagonal energy is NOT required there).
 *
 * Ownership: cis_space_build allocates *out; cis_space_destroy(&s) frees it and sets s = NULL.
 */
#ifndef CIS_SPACE_H
#define CIS_SPACE_H

#include <stdint.h>

#include "base/problem.h"

typedef struct cis_space cis_space;

/* The automatic Reference region size (before whole configurations are added), for spaces and
 * explicit matrices alike. */
#define CIS_REF_AUTO_MAX 500

typedef struct {
  int64_t ref_size;  /* requested Reference region size; 0 = automatic */
  int nthreads;      /* OpenMP threads; 0 = default */
  int64_t host_mem;  /* bytes the space and its link tables may take; 0 = what the host allows
                        (cis_host_mem_probe: free memory, cgroup limits, ulimit -v / -d) */
} cis_space_opts;

/* Build the space of `spec` for the electrons of `ints` (nalpha, nbeta), compute the diagonal
 * energies and order it Reference region first. Its memory is counted before it is stored
 * (the strings from binomials, the determinants from binomials for FCI and from the
 * enumeration's count for a truncated space, before either is stored; FCI's link tables with
 * them, other spaces' when the row generator has counted them) and refused past host_mem.
 * Errors: CIS_ERR_INPUT (impossible electron count, a reference/list determinant with the wrong
 * electron count or beyond norb, an empty space, more than 2^31-1 determinants or strings of one
 * spin); CIS_ERR_NOMEM (the space needs more host memory than host_mem: the message names the
 * space, its determinants, the bytes it needs and those available). */
cis_err cis_space_build(const cis_integrals *ints, const cis_space_spec *spec,
                        const cis_space_opts *opts, cis_space **out);
void cis_space_destroy(cis_space **s);
/* Other integrals of the same orbitals and electrons for a built space: its diagonal energies
 * and its symmetry labels (found from the integrals) follow them; its determinants keep their
 * order, so that the Reference region stays the leading determinants of the integrals the space
 * was built from (vectors in that order stay valid). On failure the space must be destroyed. */
cis_err cis_space_set_integrals(cis_space *s, const cis_integrals *ints, int nthreads);
/* CIS_ERR_USAGE unless CAS(ne, no) fits the electrons and orbitals of `in`: ne electrons, the
 * other ones doubly occupying the orbitals below the no active ones, each spin's active
 * electrons at most no (hamiltonian/space_mrci.c). */
cis_err cis_space_mrci_check_cas(const cis_integrals *in, int ne, int no);

int64_t cis_space_ndet(const cis_space *s);
int64_t cis_space_nref(const cis_space *s);   /* the Reference region size chosen */
int cis_space_norb(const cis_space *s);
int cis_space_nwords(const cis_space *s);
int cis_space_nalpha(const cis_space *s);
int cis_space_nbeta(const cis_space *s);
const char *cis_space_describe(const cis_space *s); /* e.g. "CISD (level 2)" */
int64_t cis_space_bytes(const cis_space *s);        /* host memory it holds */
/* The host memory FCI of nalpha and nbeta electrons in norb orbitals takes while it is built
 * and once built with the row generator's link tables, whichever is more: what
 * cis_space_build checks against host_mem. A double: counts past int64 do not wrap. */
double cis_space_fci_bytes(int norb, int nalpha, int nbeta);
/* Strings of determinant i (in our order): nwords words each. */
const uint64_t *cis_space_alpha(const cis_space *s, int64_t i);
const uint64_t *cis_space_beta(const cis_space *s, int64_t i);
/* Determinant i's alpha and beta strings as positions (ia[i], ib[i]) in the space's lists of
 * distinct alpha and beta strings, each sorted ascending (hamiltonian/strings.h cis_str_cmp);
 * ndet each, our order. */
const int32_t *cis_space_alpha_index(const cis_space *s);
const int32_t *cis_space_beta_index(const cis_space *s);
/* Diagonal energies H_ii (without ecore), in our order. */
const double *cis_space_hdiag(const cis_space *s);
/* The symmetry blocks of H on the Reference region (hamiltonian/symmetry.h): the label of each
 * of its nref determinants (H couples only equal labels) and, when nalpha == nbeta, the position
 * of the determinant with alpha and beta strings exchanged (-1 outside the region; NULL when
 * nalpha != nbeta). */
const uint64_t *cis_space_ref_labels(const cis_space *s);
const int64_t *cis_space_ref_partners(const cis_space *s);
/* What the report says of them. */
typedef struct {
  int nbits;        /* independent symmetries of the integrals */
  int nblocks;      /* symmetry blocks the space holds (blocks_more: and more beyond those) */
  int blocks_more;
  int blocks_ref;   /* blocks with a determinant of their own in the Reference region */
  int orbsym;       /* cis_orbsym_status of the file's ORBSYM */
  int orbsym_bits;  /* independent symmetries ORBSYM states */
} cis_space_symmetry;
cis_space_symmetry cis_space_symmetry_info(const cis_space *s);
/* The determinants of each irrep (index = Molpro's number less one) that the space's rule
 * enumerates before the target irrep's filter: returns 0 (dims untouched) when the integrals have
 * no usable ORBSYM. And the target irrep, 1..8, or 0 for every irrep. */
int cis_space_irrep_dims(const cis_space *s, double dims[8]);
int cis_space_irrep(const cis_space *s);
/* Index of the determinant (alpha, beta) in our order, or -1 if not in the space. */
int64_t cis_space_find(const cis_space *s, const uint64_t *alpha, const uint64_t *beta);

/* <S^2> of k host vectors (n x k, ld n) over this space: s2[j] = c_j^T S^2 c_j / c_j^T c_j.
 * S^2 maps out of a truncated space; only components inside it count (the projected S^2). */
cis_err cis_space_s2(const cis_space *s, int k, const double *C, double *s2);
/* Where the single excitations of each string lead within its list, for S^2 rows: per list a
 * table of strings x norb^2 targets, or NULL (then they are searched). */
typedef struct {
  int32_t *alpha, *beta;
} cis_s2_targets;
/* Never fails: a table that would be too large, or find no memory, is left NULL. */
void cis_s2_targets_make(const cis_space *s, cis_s2_targets *t);
void cis_s2_targets_free(cis_s2_targets *t);
/* Row d of S^2 inside the space: (d, its diagonal) first, then each determinant one spin flip
 * away (alpha q -> p with beta p -> q) with its element -s_alpha s_beta; returns how many, at
 * most 1 + nalpha * nbeta. w: nw words of scratch. */
int64_t cis_space_s2_row(const cis_space *s, const cis_s2_targets *t, int64_t d, int64_t *col,
                         double *val, uint64_t *w);

/* The largest table of single-excitation targets cis_s2_targets_make builds per string list, in
 * entries (strings x norb^2; default 2^24, 64 MiB): above it, targets are found by binary
 * search. Tests set 0 to check the search. */
void cis_space_set_s2_table_limit(int64_t entries);

/* Occupation string of a determinant: one char per orbital, '2', 'a', 'b' or '0'. buf must
 * hold norb+1 chars. */
void cis_space_det_string(const cis_space *s, int64_t i, char *buf);

#endif
