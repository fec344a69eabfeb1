/* cisolve: output.h5 (layout in docs/output-format.md). Written under a temporary name beside
 * PATH, flushed, then renamed to PATH: a reader never sees a half-written file.
 */
#ifndef CIS_OUTPUT_H
#define CIS_OUTPUT_H

#include "app/options.h"
#include "hamiltonian/hmat.h"
#include "solver/eigs.h"

/* What the driver learnt about the roots beyond the eigenpairs; every pointer may be NULL. */
typedef struct {
  int spin_set;            /* --spin given */
  double spin_s2;          /* S(S+1) of the target */
  const int *spin_ok;      /* nroots: |<S^2> - S(S+1)| <= CIS_SPIN_TOL */
  const int *degen_group;  /* nroots: index of the first root of its degenerate group */
  int norb;
  const double *rdm1;      /* nroots x norb x norb, spin-summed */
  const double *noons;     /* nroots x norb, descending */
  const double *nos;       /* nroots x norb x norb: column i = natural orbital i */
  const double *dm1a, *dm1b; /* nroots x norb x norb, PySCF's make_rdm1s */
  const double *dm2[3];    /* --rdm2: aa, ab, bb, each nroots x norb^4 (make_rdm12s) */
  int ntrans;              /* transition pairs (bra root < ket root) */
  const int32_t *trans_pairs; /* ntrans x 2 */
  const double *tdm1[2];   /* ntrans x norb^2 each, alpha and beta (trans_rdm1s) */
  const double *tdm2[4];   /* --rdm2: aa, ab, ba, bb, each ntrans x norb^4 (trans_rdm12s) */
  int check_blocks;        /* the search of every symmetry block ran (--check-roots blocks) */
  cis_blockcheck blocks;   /* its outcome */
  int check_roots;         /* the search from random vectors ran (--check-roots full) */
  int missed;              /* lower states it found (and included) */
  int check_conclusive;    /* its answer holds: it found a lower state or converged */
  int check_iterations;    /* its iterations (2 products each) */
  double check_lowest;     /* lowest energy it found outside the roots (total, Eh) */
  double check_threshold;  /* Eh */
} cis_analysis;

#define CIS_SPIN_TOL 1e-6
#define CIS_DEGEN_TOL 1e-6

typedef struct {
  const cis_options *opt;
  const cis_hmat *h;        /* n, ecore, nref, perm; h->space is NULL for explicit matrices */
  const cis_eig_result *res;
  const double *s2;         /* nroots <S^2> values, or NULL (explicit matrices) */
  const char *version;      /* CISOLVE_VERSION */
  const char *device_desc;  /* backend description */
} cis_output;

/* /results/energies (total, Eh), /results/vectors (nroots x n, row j = root j, our det order),
 * /results/s2, /results/residual_norms, /results/converged, /determinants/{alpha,beta}
 * (n x nwords uint64), /options (attributes), /problem (norb, nalpha, nbeta, ndet, nref,
 * ecore, space); cis_output_write_analysis adds /results/degenerate_group, spin_ok, rdm1,
 * natural_occupations, natural_orbitals and
 * root-check attributes (docs/output-format.md). */
cis_err cis_output_write(const char *path, const cis_output *out);

/* The same, with the analysis `an` (may be NULL). */
cis_err cis_output_write_analysis(const char *path, const cis_output *out,
                                  const cis_analysis *an);

#endif
