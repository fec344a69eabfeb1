/* cisolve: checkpoints (docs/batch.md).
 *
 * A checkpoint holds what a resumed run needs to continue where the interrupted one stopped:
 * the current Ritz vectors X and their products H X (so the restart costs no matrix-vector
 * product), the Ritz values, the residual norms and the energy history, the iteration and
 * matvec counts, and a fingerprint of the problem. Files are written under a temporary name
 * beside PATH (io/io_private.h), flushed, fsync'ed and renamed over PATH: the previous
 * checkpoint stays valid until the new one is complete, and a run killed at any moment leaves
 * either the old or the new file.
 *
 * Integrity: every array carries a 64-bit checksum; a truncated, corrupted or bit-flipped file
 * is refused with a message, never used.
 *
 * Ownership: cis_ckpt_read allocates the arrays of *c; cis_ckpt_free releases them.
 */
#ifndef CIS_CHECKPOINT_H
#define CIS_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/problem.h"

/* What identifies a problem. Each part is compared separately so that a refusal can say
 * what differs. */
typedef struct {
  uint64_t integrals; /* norb, h1e, eri, ecore (or the explicit matrix) */
  uint64_t space;     /* kind, level, reference and list determinants */
  int nalpha, nbeta;
  int64_t ndet, nref;
  int nroots;
  int spin2;          /* --spin as 2S, or -1 without a spin penalty */
  double spin_shift;  /* the penalty's shift (0 without) */
} cis_fingerprint;

typedef struct {
  cis_fingerprint fp;
  int iteration;       /* outer iterations done */
  int64_t matvecs;     /* single-vector products done */
  int converged;       /* all roots converged: a restart returns the results at once */
  int64_t n;           /* vector length */
  int k;               /* vectors stored */
  double *X;           /* n x k Ritz vectors (column-major) */
  double *HX;          /* n x k, H X */
  double *evals;       /* k */
  double *rnorm;       /* k */
  int nhist;           /* iterations in the history */
  double *hist_evals;  /* nhist x k energies per iteration (row-major: iteration, root) */
  double *hist_rnorm;  /* nhist x k */
  double t_elapsed;    /* solver seconds so far */
} cis_ckpt;

uint64_t cis_hash_bytes(uint64_t h, const void *data, size_t len);
#define CIS_HASH_SEED 0xcbf29ce484222325ULL

/* The fingerprint of a problem as resolved (after --space / --ms2), with the run's sizes and
 * its spin penalty (spin2 < 0: none), which changes the matrix the vectors belong to. */
void cis_fingerprint_make(const cis_problem *p, int64_t ndet, int64_t nref, int nroots,
                          int spin2, double spin_shift, cis_fingerprint *fp);
/* CIS_OK when equal; else CIS_ERR_INPUT naming what differs (path for the message). A run's
 * ndet or nref below 0 (not known before the space and the matrix are built) is not compared. */
cis_err cis_fingerprint_check(const char *path, const cis_fingerprint *file,
                              const cis_fingerprint *run);

cis_err cis_ckpt_write(const char *path, const cis_ckpt *c);
cis_err cis_ckpt_read(const char *path, cis_ckpt *c);
/* Before the build: read only the header of the checkpoint at path (its checksum checked) and
 * compare its fingerprint with the run's `fp` (CIS_ERR_INPUT naming what differs). */
cis_err cis_ckpt_check(const char *path, const cis_fingerprint *fp);
/* The Ritz values of the iteration before the saved one (from the history), which the resumed
 * solver compares the first values with, as the interrupted run would have: so a restart judges
 * the energy criterion of this run, not a difference of zero. c->evals when the history does
 * not have them. */
const double *cis_ckpt_previous_evals(const cis_ckpt *c);
void cis_ckpt_free(cis_ckpt *c);

#endif
