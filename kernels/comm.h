/* cisolve: the processes of one run (MPI ranks) and what passes between them. A run started by
 * a launcher (mpirun, mpiexec, srun) is P ranks; anything else is one process, and MPI is not
 * started at all (a single process needs no launcher, and the C API never starts it). Built
 * without MPI (CISOLVE_ENABLE_MPI=OFF), every run is one process.
 *
 * How a run is split (docs/parallel.md): every rank holds the whole determinant space; the rows
 * of H are split by nonzeros, and the solver's vectors by the same rows (kernels/backend.h,
 * cis_backend_part). Each rank builds and multiplies its own rows (kernels/dist_op.c), each
 * product starting with the vectors' rows gathered from their owners, and runs the same solver
 * on its rows, the sums over rows summed over the ranks, so that every rank takes the same
 * decisions. Decisions that depend on a clock or a signal are agreed (cis_comm_or) and files are
 * written by rank 0 alone.
 *
 * Every call below is collective (all ranks call it, in the same order) unless it says not;
 * with one process they do nothing and return at once. */
#ifndef CIS_COMM_H
#define CIS_COMM_H

#include <stdint.h>

#include "base/error.h"
#include "kernels/backend.h"

/* Start MPI when a launcher started this process (its environment says so: Open MPI, PMI or
 * PMIx variables), or when CISOLVE_MPI=1; with CISOLVE_MPI=0, never. Not collective. Ranks
 * other than 0 send their standard output to /dev/null (rank 0 prints the report); their
 * errors still reach standard error, prefixed with the rank. */
cis_err cis_comm_init(int *argc, char ***argv);
/* End MPI (after the last collective call); nothing without it. */
void cis_comm_finalize(void);
/* End the whole job now with `code` (MPI_Abort): a rank that fails while the others wait in a
 * collective call. With one process, returns (the caller exits normally). */
void cis_comm_abort(int code);

int cis_comm_rank(void);
int cis_comm_size(void);
/* The rank's place among the ranks of its node (0 .. ranks on the node - 1), for the GPU it
 * takes. */
int cis_comm_local_rank(void);
/* The ranks on this rank's node. */
int cis_comm_local_size(void);
/* Under a launcher: whether this process may use fewer cores (its CPU affinity, which launchers
 * set: mpirun binds each of 2 or fewer ranks to one core) than its share of the node's
 * (online cores / ranks on the node); then `note` says so and how to launch instead. Not
 * collective. */
int cis_comm_cores_note(char *note, int cap);
/* Several ranks: the OpenMP threads a rank takes when --threads does not say: its share of the
 * node's cores (online cores / ranks on the node) within the cores it may use (its CPU
 * affinity); 0 with one process (OpenMP's own default). Not collective. */
int cis_comm_default_threads(void);
/* "" with one process, else "rank R: " (for messages of ranks other than 0). */
const char *cis_comm_prefix(void);

/* `bytes` bytes at buf, from `root` to every rank. */
cis_err cis_comm_bcast(void *buf, int64_t bytes, int root);
/* The bitwise OR of every rank's `flags`. */
int cis_comm_or(int flags);
/* Every rank's `bytes` bytes at mine, in rank order, into all (ranks x bytes). */
cis_err cis_comm_allgather(const void *mine, int bytes, void *all);
/* v[0..count) summed over the ranks, in place. */
cis_err cis_comm_sum_i64(int64_t *v, int count);
/* v[0..count) summed over the ranks, in place (the same sums on every rank). */
cis_err cis_comm_sum_f64(double *v, int64_t count);
/* The rows of k vectors gathered from their owners: Y is n x k (leading dimension n, host),
 * rank r owns rows [bounds[r], bounds[r+1]) and has them in place; on return every rank holds
 * every row. */
cis_err cis_comm_gather_rows(double *Y, int64_t n, int k, const int64_t *bounds);

/* Between the GPUs of the ranks (one each; a CUDA build with NCCL and MPI): a communicator on
 * the CUDA backend `be`'s device and stream (CIS_ERR_NOT_COMPILED without NCCL, when the caller
 * gathers through the host instead), and the rows of k device vectors gathered from their owners
 * as cis_comm_gather_rows does on the host, ordered on be's stream. cis_nccl_start begins its
 * set-up on GPU `device` on a helper thread, so that it runs while the matrix is built;
 * cis_nccl_create finishes a started one (*out), or sets one up (*out NULL). Both collective. */
typedef struct cis_nccl cis_nccl;
cis_err cis_nccl_start(int device, cis_nccl **out);
cis_err cis_nccl_create(cis_backend *be, cis_nccl **out);
cis_err cis_nccl_gather_rows(cis_nccl *c, double *Y, int64_t n, int k, const int64_t *bounds);
void cis_nccl_destroy(cis_nccl **c);

#endif
