/* cisolve: the rows of the density matrices' intermediates (private to hamiltonian/rdm*.c).
 *
 * The rows K are determinants (A string ka, B string kb), alpha-major: those of A string ka are
 * kptr[ka] .. kptr[ka+1], their B strings kb[...], ascending. A holds the space's alpha strings
 * and, for the closure, every string one single excitation from one of them; amap gives the
 * index of an A string in the space's alpha list (-1: not there); B, bmap likewise. la lists,
 * for each A string, its single excitations that land on an alpha string of the space (target
 * = that index); lb the same for B. When the rows are the space itself, A and B are the
 * space's lists, amap and bmap NULL (the identity), kptr and kb its alpha-major lookup.
 */
#ifndef CIS_RDM_IMPL_H
#define CIS_RDM_IMPL_H

#include <stdint.h>

#include "hamiltonian/space_impl.h"

typedef struct {
  int32_t tgt;  /* the string a+_a a_i S, as an index of the target list */
  int16_t i, a; /* orbitals emptied and filled */
  int32_t sign; /* of a+_a a_i on S (hamiltonian/strings.h) */
} rdm_sx;

typedef struct {
  int64_t *ptr; /* strings + 1 */
  rdm_sx *x;
} rdm_sx_list;

typedef struct {
  const cis_space *s;
  cis_strlist A, B;
  int own;                  /* A, B, kptr, kb are this struct's (else the space's) */
  int32_t *amap, *bmap;
  rdm_sx_list la, lb;
  int64_t nk;
  const int64_t *kptr;
  const int32_t *kb;
} rdm_rows;

/* The rows for s: the space itself unless `closure` is asked for and s is not FCI (then its
 * single-excitation closure). Errors: CIS_ERR_NOMEM (cis_space_check_room) naming the part. */
cis_err cis_rdm_rows_build(const cis_space *s, int closure, rdm_rows *R);
void cis_rdm_rows_free(rdm_rows *R);

#endif
