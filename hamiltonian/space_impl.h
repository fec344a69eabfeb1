/* cisolve: the layout of a determinant space (private to hamiltonian/).
 *
 * Strings: two sorted lists (alpha, beta). Determinant d (our order) is the pair
 * (det_ia[d], det_ib[d]). The alpha-major lookup lists, for alpha string ia, the beta strings
 * present with it in ascending order, amaj_ib[aptr[ia] .. aptr[ia+1]), and their determinant
 * indices amaj_det[...]. An alpha row holding every beta string (FCI) is found in O(1);
 * otherwise by binary search within the row.
 */
#ifndef CIS_SPACE_IMPL_H
#define CIS_SPACE_IMPL_H

#include "hamiltonian/space.h"
#include "hamiltonian/strings.h"
#include "hamiltonian/symmetry.h"

struct cis_space {
  int norb, nw, nalpha, nbeta;
  char desc[96];
  int64_t ndet, nref;
  int64_t host_mem;         /* cis_space_opts.host_mem: what it and its link tables may take */
  cis_strlist astr, bstr;
  int32_t *det_ia, *det_ib; /* ndet, our order */
  int64_t *aptr;            /* astr.n + 1 */
  int32_t *amaj_ib;         /* ndet, alpha-major */
  int32_t *amaj_det;        /* ndet, alpha-major -> our index */
  double *hdiag;            /* ndet, our order, without ecore */
  cis_orbsym sym;           /* the integrals' symmetries */
  uint64_t *alab, *blab;    /* symmetry label of each alpha and beta string */
  int nblocks, nblocks_more;/* symmetry labels found in the space (more: beyond those kept) */
  int nblocks_ref;          /* blocks given a determinant of their own in the Reference region */
  uint64_t *ref_label;      /* nref: label of each Reference determinant */
  int64_t *ref_partner;     /* nref, nalpha == nbeta only: the exchanged determinant, or -1 */
  int ref_exact;            /* the Reference region is the references alone (an MRCI model
                               space), in ascending diagonal energy: no rule adds to it */
  int irrep;                /* the target irrep 1..8 (hamiltonian/irrep.h), 0: every irrep */
  int *orbsym;              /* norb irreps 1..8, or NULL where the integrals have none usable */
  int has_irrep_dims;
  double irrep_dim[8];      /* determinants of each irrep (0..7) before the target's filter */
};

static inline int64_t cis_space_lookup(const cis_space *s, int64_t ia, int32_t ib) {
  int64_t lo = s->aptr[ia], hi = s->aptr[ia + 1];
  if (hi - lo == s->bstr.n) return s->amaj_det[lo + ib];
  hi--;
  while (lo <= hi) {
    int64_t mid = lo + ((hi - lo) >> 1);
    int32_t v = s->amaj_ib[mid];
    if (v == ib) return s->amaj_det[mid];
    if (v < ib)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return -1;
}

/* CIS_ERR_NOMEM, before anything that takes `need` bytes is stored, when that is more than the
 * process may still take (s->host_mem when set, else cis_host_mem_probe; nothing is refused
 * where no bound is known): "<what> needs X of host memory for <parts>; Y available (bound)". */
cis_err cis_space_check_room(const cis_space *s, double need, const char *what,
                             const char *parts);

/* The room strings and determinants take while a space is built, checked as cis_space_check_room
 * does: the strings enumerated within `level` of nra alpha and nrb beta reference strings
 * (repeats included), and ndet determinants (at most ndet where `bound`) over na and nb
 * strings. */
cis_err cis_space_check_strings(const cis_space *s, int level, int64_t nra, int64_t nrb);
cis_err cis_space_check_dets(const cis_space *s, int64_t na, int64_t nb, int64_t ndet, int bound);

/* MRCI (hamiltonian/space_mrci.c): the model space's determinants, nm of them (the CAS of spec
 * expanded, or spec's reference determinants; caller frees *ma, *mb), and the string lists and
 * alpha-major sorted pair keys of every determinant within `level` of one of them. */
cis_err cis_space_mrci_model(const cis_space *s, const cis_space_spec *spec, int64_t *nm,
                             uint64_t **ma, uint64_t **mb);
cis_err cis_space_mrci_pairs(cis_space *s, int level, int64_t nm, const uint64_t *ma,
                             const uint64_t *mb, int nthreads, int64_t **keys, int64_t *nkeys);

/* Our order (hamiltonian/refregion.c): the Reference region, of s->nref determinants asked for
 * and as many as its rule adds, then the rest in alpha-major order. hd and keys are in
 * alpha-major order; order[d] is the alpha-major position of determinant d. Sets s->nref. */
cis_err cis_space_order(cis_space *s, const double *hd, const int64_t *keys,
                        const int64_t *refpos, int64_t nr, int64_t *order);
/* hamiltonian/space_irrep.c. Setup: s->irrep and s->orbsym from the spec and the integrals
 * (CIS_ERR_USAGE when a target irrep has no usable ORBSYM), FCI's dimensions per irrep. Filter:
 * count the sorted unique keys by irrep and keep the target's (no target: counts only). */
cis_err cis_space_irrep_setup(cis_space *s, const cis_integrals *ints,
                              const cis_space_spec *spec);
cis_err cis_space_irrep_strings(const cis_space *s, unsigned char **ga, unsigned char **gb);
cis_err cis_space_irrep_filter(cis_space *s, int64_t *keys, int64_t *nkeys);

/* ref_label and ref_partner, once the space is in our order. */
cis_err cis_space_ref_symmetry(cis_space *s);

#endif
