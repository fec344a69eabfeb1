/* cisolve: the C API of libcisolve (docs/api.md).
 *
 * The lowest eigenpairs of a configuration-interaction Hamiltonian given as integrals in memory,
 * solved as the program `cisolve` solves an input file (the same steps and options), and the
 * results: energies, vectors, <S^2>, the determinants, density matrices.
 *
 *   cisolve *c = NULL;
 *   int rc = cisolve_create(norb, na, nb, h1e, eri, ecore, &c);
 *   if (rc == 0) rc = cisolve_set_option(c, "nroots", "3");
 *   if (rc == 0) rc = cisolve_solve(c);
 *   if (rc == 0 || rc == CISOLVE_NOT_CONVERGED) cisolve_energies(c, e);
 *   else fprintf(stderr, "%s\n", cisolve_last_error());
 *   cisolve_destroy(&c);
 *
 * Errors. Every function that returns int returns 0 or a code of `cisolve` (docs/exit-codes.md):
 * CISOLVE_ERR_INPUT for a bad argument, option or problem, CISOLVE_ERR_RESOURCE for memory, a
 * device asked for and not usable, or a feature not built; cisolve_solve also returns
 * CISOLVE_NOT_CONVERGED, with every result there and flagged. The message (what was wrong and
 * what was expected) is then cisolve_last_error()'s. A failure leaves the handle as it was
 * before the call (a failed solve: without results, ready for another solve). Nothing is printed
 * unless the option "verbose" is set; nothing exits the process.
 *
 * Ownership. Every array is the caller's: the library copies what it is given and writes into
 * what it is handed, whose sizes are stated below. The handle is the library's, freed by
 * cisolve_destroy.
 *
 * Threads. A handle is used by one thread at a time. The solver runs on OpenMP threads (option
 * "threads", else OMP_NUM_THREADS or all cores) and, with device "auto" or "gpu", on a GPU
 * when libcisolve was built with CUDA; a solve sets the calling thread's OpenMP thread count for
 * its duration only. Solves of several handles at once in one process are not supported.
 *
 * Conventions (those of the program and of PySCF):
 *  - h1e: norb x norb, row-major, symmetric to round-off (checked).
 *  - eri: the 8-fold packed chemists' integrals (pq|rs) of norb orbitals, as PySCF's
 *    ao2mo.restore(8, eri, norb): pq = p(p+1)/2 + q for p >= q, then the same on the pairs;
 *    npair (npair + 1) / 2 values, npair = norb (norb + 1) / 2.
 *  - Determinants in *our order*: the Reference region first (chosen from the diagonal energies,
 *    so the order depends on the integrals and the options), then the rest. cisolve_dets gives
 *    each determinant's alpha and beta strings; orbital p is bit p % 64 of word p / 64, and a
 *    string takes nwords = (norb + 63) / 64 words. Signs are PySCF's (cistring order: every alpha
 *    creator left of every beta creator, each in ascending orbital order).
 *  - Vectors: ndet x k column-major (column j, root j, is ndet consecutive doubles).
 *  - Energies include ecore.
 */
#ifndef CISOLVE_H
#define CISOLVE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define CISOLVE_API __attribute__((visibility("default")))
#else
#define CISOLVE_API
#endif

/* The codes functions return: those the program exits with (docs/exit-codes.md). */
enum {
  CISOLVE_OK = 0,
  CISOLVE_ERR_INPUT = 1,     /* a bad argument, option, problem; a numerical breakdown */
  CISOLVE_NOT_CONVERGED = 2, /* cisolve_solve: results there, some root not converged */
  CISOLVE_INTERRUPTED = 3,   /* not returned by this API (the program's signals and walltime) */
  CISOLVE_ERR_RESOURCE = 4   /* memory, no usable GPU when one was asked for, not built */
};

typedef struct cisolve cisolve;

/* A problem of norb orbitals (1 <= norb), nalpha and nbeta electrons (0 <= n <= norb), the
 * integrals h1e and eri (copied; see the conventions above; every value finite) and the constant
 * energy ecore (nuclear repulsion and frozen core). Options start at the program's defaults: one
 * root, FCI, device auto. *out: the new handle (NULL on failure). */
CISOLVE_API int cisolve_create(int norb, int nalpha, int nbeta, const double *h1e,
                               const double *eri, double ecore, cisolve **out);

/* Other integrals h1e, eri and ecore for the same orbitals and electrons (copied; checked as
 * cisolve_create checks them), as CASSCF's macro-iterations give them: discards the results.
 * A space already built is kept: its diagonal energies and symmetry labels follow the new
 * integrals, its determinants keep their order (the Reference region stays the leading
 * determinants of the integrals the space was built from; results do not depend on it), and a
 * guess, in that order, stays. Cheaper than a new handle, whose space is built again. Bad
 * integrals, and for a space of one irrep (the option irrep) integrals without the orbitals'
 * irreps, leave the handle as it was; out of memory, the space and the guess are discarded. */
CISOLVE_API int cisolve_set_integrals(cisolve *c, const double *h1e, const double *eri,
                                      double ecore);

/* One option: a long option of `cisolve --help` without "--" ("nroots", "tol", "tol-residual",
 * "max-iter", "max-subspace", "level-shift", "solver", "spin", "spin-shift", "check-roots",
 * "space", "ms2", "ref-size", "device", "mem", "gpu-mem", "threads", "verbose", "quiet") and
 * its value as the command line takes it ("3", "1e-10", "cpu", "gpu:1", "cisd", "4G"); a flag
 * takes a truth value ("true"/"false", "1"/"0"; NULL: true). The program's own options (files,
 * checkpoints, restart, walltime, dry-run, rdm1) are refused. Parsed by the same code as the
 * command line and input.h5's /options. Discards the results of an earlier solve, and the
 * space and the guess (which is in the space's order) when the option shapes the space (space,
 * ms2, ref-size, ref-det, cas, irrep, point-group). */
CISOLVE_API int cisolve_set_option(cisolve *c, const char *key, const char *value);

/* The orbitals' point-group irreps: norb values 1..8 in Molpro's numbering (as an FCIDUMP's
 * ORBSYM; D2h and its subgroups), copied; NULL removes them. With them the option "irrep" (a
 * number, or a name with "point-group") restricts the space to the determinants of one irrep.
 * Discards the results, the space and the guess. */
CISOLVE_API int cisolve_set_orbsym(cisolve *c, const int *orbsym);

/* Build the determinant space of the current options now (cisolve_solve does it when it is not
 * built), so that cisolve_ndet and cisolve_dets answer before a solve: a guess is given in its
 * order. */
CISOLVE_API int cisolve_build_space(cisolve *c);

/* A guess for the next solves: k vectors X (ndet x k, our order, copied; the space is built
 * first when it is not). They need not be normalised nor orthogonal; fewer than nroots are
 * completed with the default guess (the Reference block's lowest states), more than nroots are
 * cut to the first nroots. The solve still checks that it found the lowest states (option
 * "check-roots", on by default). k = 0 or X = NULL removes the guess. The Lanczos solver
 * (option "solver" "lanczos") takes no guess. */
CISOLVE_API int cisolve_set_guess(cisolve *c, int k, const double *X);

/* Build the space (unless built), the Hamiltonian, the backend, solve, check that no lower state
 * was missed. Returns 0 when every root converged, CISOLVE_NOT_CONVERGED when
 * some did not (results there), or an error (no results). Keeps the space, the backend and the
 * results; the Hamiltonian is released. */
CISOLVE_API int cisolve_solve(cisolve *c);

/* Y = H X for k >= 1 vectors X of the space (ndet x k as cisolve_set_guess takes them, our
 * order; Y likewise): the Hamiltonian of the handle's integrals without ecore (with option
 * "spin", its spin penalty), its rows generated for this product (on the GPU of option
 * "device" where there is one). Builds the space when it is not built; the results stay. */
CISOLVE_API int cisolve_apply(cisolve *c, int k, const double *X, double *Y);

/* The diagonal of H (ndet values, our order, without ecore; no spin penalty). Builds the space
 * when it is not built. */
CISOLVE_API int cisolve_diagonal(cisolve *c, double *d);

/* Determinants of the space (-1 before it is built), words per string, roots of the results
 * (0 before a solve). */
CISOLVE_API int64_t cisolve_ndet(const cisolve *c);
CISOLVE_API int cisolve_nwords(const cisolve *c);
CISOLVE_API int cisolve_nroots(const cisolve *c);

/* Results of the last solve (else CISOLVE_ERR_INPUT): energies with ecore (nroots), whether
 * each root converged (nroots flags), the vectors (ndet x nroots, normalised), <S^2> (nroots;
 * computed by this call, on the solve's GPU where it ran on one, else on the host, unless
 * the solve had a spin penalty),
 * the solver's iterations and single-vector products (either pointer may be NULL), the
 * backend it ran on (a description; "" before a solve). */
CISOLVE_API int cisolve_energies(const cisolve *c, double *e);
CISOLVE_API int cisolve_converged(const cisolve *c, int *conv);
CISOLVE_API int cisolve_vectors(const cisolve *c, double *X);
CISOLVE_API int cisolve_s2(const cisolve *c, double *s2);
/* <S^2> of any k vectors X of the space (ndet x k as cisolve_set_guess takes them, our order;
 * 0 for a zero vector), as cisolve_s2 computes it: on the last solve's GPU where it ran on one
 * and its results stand, else on the host. */
CISOLVE_API int cisolve_spin_square(const cisolve *c, int k, const double *X, double *s2);
CISOLVE_API int cisolve_iterations(const cisolve *c, int *iterations, int64_t *matvecs);
CISOLVE_API const char *cisolve_backend(const cisolve *c);

/* Where the last solve's time went, in seconds (wall clock), CISOLVE_NTIMINGS values in the
 * order of the enum: building the space (0 when it was kept), the Hamiltonian (its diagonal,
 * Reference block and row tables; the stored matrix when one is built), starting the backend,
 * the operator (uploads), the Reference block's states and the guess, the solver (its products
 * and orthogonalisation also apart), the check for lower states, the results, and the whole. */
enum {
  CISOLVE_T_SPACE, CISOLVE_T_HAMILTONIAN, CISOLVE_T_BACKEND, CISOLVE_T_OPERATOR, CISOLVE_T_STATES,
  CISOLVE_T_SOLVER, CISOLVE_T_PRODUCTS, CISOLVE_T_ORTHO, CISOLVE_T_CHECK, CISOLVE_T_RESULTS,
  CISOLVE_T_TOTAL, CISOLVE_NTIMINGS
};
CISOLVE_API int cisolve_timings(const cisolve *c, double *t);

/* The determinants of the space (built by cisolve_build_space or a solve): alpha and beta
 * strings, ndet x nwords each, row i = determinant i in our order. */
CISOLVE_API int cisolve_dets(const cisolve *c, uint64_t *alpha, uint64_t *beta);

/* Each determinant's alpha and beta strings as positions ia[i], ib[i] (ndet each, our order) in
 * the ascending lists of the space's distinct alpha and beta strings (a string read as a number,
 * its highest word first). For FCI of norb <= 64 orbitals these are PySCF's cistring addresses,
 * so that determinant i is element (ia[i], ib[i]) of PySCF's (na_strings, nb_strings) vector. */
CISOLVE_API int cisolve_det_addresses(const cisolve *c, int32_t *ia, int32_t *ib);

/* Spin-resolved one- and two-particle (transition) density matrices <bra| ... |ket> of two
 * vectors of the space (ndet each, our order; bra == ket: the ordinary RDMs), in PySCF's
 * conventions (fci.direct_spin1.trans_rdm12s with reorder): dm1a[p,q] = <a+_pA a_qA>,
 * dm2aa[p,q,r,s] = <a+_pA a+_rA a_sA a_qA>, dm2ab[p,q,r,s] = <a+_pA a+_rB a_sB a_qA>,
 * dm2ba[p,q,r,s] = <a+_pB a+_rA a_sA a_qB>, dm2bb likewise; row-major, norb^2 and norb^4
 * doubles. Any output may be NULL (not computed). Computed on the solve's backend (a GPU where
 * the solve ran on one), else on the host. */
CISOLVE_API int cisolve_rdm12s(const cisolve *c, const double *bra, const double *ket,
                               double *dm1a, double *dm1b, double *dm2aa, double *dm2ab,
                               double *dm2ba, double *dm2bb);

/* Their spin sums, dm1 = dm1a + dm1b and dm2 = dm2aa + dm2ab + dm2ba + dm2bb (PySCF's
 * fci.direct_spin1.trans_rdm12 / make_rdm12 with reorder), either may be NULL. dm2 costs one
 * product of intermediates where the spin blocks cost three. */
CISOLVE_API int cisolve_rdm12(const cisolve *c, const double *bra, const double *ket, double *dm1,
                              double *dm2);

/* The message of the last failure on the calling thread ("" when none). Valid until the next
 * call on this thread. */
CISOLVE_API const char *cisolve_last_error(void);

/* Frees the handle and sets *c = NULL; NULL and *c == NULL are allowed. */
CISOLVE_API void cisolve_destroy(cisolve **c);

/* The library's version, e.g. "0.1.0". */
CISOLVE_API const char *cisolve_version(void);

#ifdef __cplusplus
}
#endif

#endif
