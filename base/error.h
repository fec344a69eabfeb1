/* cisolve: one error type, one way to raise and propagate it.
 *
 * Every function that can fail returns cis_err. A failure is raised once, where it is
 * detected, with CIS_ERROR (which records the message and the place); every caller passes it
 * up with CIS_CALL (or CIS_TRY inside a function that owns resources and cleans up), which
 * appends "at file:line function" to the trace. main() prints the message and the trace and
 * maps the code to the documented exit code with cis_exit_code().
 *
 * The error state is per thread (C11 _Thread_local): OpenMP workers may raise errors, and the
 * thread that joins them re-raises the first one.
 */
#ifndef CIS_ERROR_H
#define CIS_ERROR_H

#include <stdarg.h>

typedef enum {
  CIS_OK = 0,
  CIS_ERR_USAGE,        /* bad command line                              -> exit 1 */
  CIS_ERR_INPUT,        /* bad input file or inconsistent problem        -> exit 1 */
  CIS_ERR_IO,           /* cannot read or write a file                   -> exit 1 */
  CIS_ERR_NUMERIC,      /* NaN/Inf or a numerical breakdown              -> exit 1 */
  CIS_ERR_INTERNAL,     /* a bug: an invariant does not hold             -> exit 1 */
  CIS_ERR_NOMEM,        /* host or device memory, or a budget too small  -> exit 4 */
  CIS_ERR_RESOURCE,     /* no usable GPU, or a library failed to start   -> exit 4 */
  CIS_ERR_NOT_COMPILED, /* feature built out (e.g. CUDA)                 -> exit 4 */
  CIS_ERR_INTERRUPTED   /* stopped by a signal or walltime, state saved  -> exit 3 */
} cis_err;

/* Documented exit codes (docs/exit-codes.md). */
enum {
  CIS_EXIT_OK = 0,
  CIS_EXIT_INPUT = 1,
  CIS_EXIT_NOT_CONVERGED = 2,
  CIS_EXIT_INTERRUPTED = 3,
  CIS_EXIT_RESOURCE = 4
};

const char *cis_err_name(cis_err e);
int cis_exit_code(cis_err e);

/* Record a new error (replacing any earlier one on this thread) and return its code. */
cis_err cis_error_raise(cis_err code, const char *file, int line, const char *func,
                        const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/* Append one propagation frame to the current error's trace. */
void cis_error_trace(const char *file, int line, const char *func);
/* The current message ("" when none) and trace, and a reset. */
const char *cis_error_message(void);
const char *cis_error_where(void);
cis_err cis_error_code(void);
void cis_error_clear(void);
/* Print "cisolve: error: MESSAGE" (and the trace when verbose) to stderr. */
void cis_error_print(int verbose);

/* The first error raised by any of a team of OpenMP workers. The error state is per thread, so a
 * worker keeps a copy (cis_worker_error_keep, thread-safe), the others stop early when
 * cis_worker_error_seen says so, and the joining thread re-raises it with CIS_WORKER_RERAISE. */
typedef struct {
  cis_err code;
  char msg[1024];
} cis_worker_error;

void cis_worker_error_keep(cis_worker_error *we, cis_err e);
int cis_worker_error_seen(cis_worker_error *we);
#define CIS_WORKER_RERAISE(we) \
  do {                         \
    if ((we).code != CIS_OK) CIS_ERROR((we).code, "%s", (we).msg); \
  } while (0)

/* Returning checks and cleanup labels. CIS_ERROR, CIS_CHECK and CIS_CALL return at once, so in
 * a function that owns resources (one `cleanup:` label) they would skip the cleanup. Such a
 * function declares CIS_CLEANUP_FUNCTION beside its `cis_err err`, before the first statement
 * that takes a resource: from there to the end of the function the returning macros do not
 * compile (its local cis_may_return_ hides the file-scope one), and CIS_TRY and CIS_FAIL
 * compile only there. Plain C11 (C++11 for the .cu files): a block-scope enumerator and a
 * static assertion. */
enum { cis_may_return_ = 1 };
#define CIS_CLEANUP_FUNCTION enum { cis_may_return_ = 0, cis_cleanup_function_ = 1 }

#ifdef __cplusplus
#define CIS_STATIC_ASSERT_(cond, msg) static_assert(cond, msg)
#else
#define CIS_STATIC_ASSERT_(cond, msg) _Static_assert(cond, msg)
#endif
#define CIS_RETURN_ALLOWED_                                                               \
  CIS_STATIC_ASSERT_(cis_may_return_, "CIS_ERROR, CIS_CHECK and CIS_CALL return at once: " \
                                      "after CIS_CLEANUP_FUNCTION use CIS_FAIL or CIS_TRY")
#define CIS_CLEANUP_DECLARED_                                                 \
  CIS_STATIC_ASSERT_(cis_cleanup_function_, "CIS_TRY and CIS_FAIL go to cleanup: declare " \
                                            "CIS_CLEANUP_FUNCTION beside `cis_err err`")

#define CIS_ERROR(code, ...)                                                   \
  do {                                                                         \
    CIS_RETURN_ALLOWED_;                                                       \
    return cis_error_raise((code), __FILE__, __LINE__, __func__, __VA_ARGS__); \
  } while (0)

#define CIS_CHECK(cond, code, ...)   \
  do {                               \
    if (!(cond)) CIS_ERROR((code), __VA_ARGS__); \
  } while (0)

#define CIS_CALL(expr)                                   \
  do {                                                   \
    CIS_RETURN_ALLOWED_;                                 \
    cis_err cis_e_ = (expr);                             \
    if (cis_e_ != CIS_OK) {                              \
      cis_error_trace(__FILE__, __LINE__, __func__);     \
      return cis_e_;                                     \
    }                                                    \
  } while (0)

/* For functions with one `cleanup:` label, a local `cis_err err` and CIS_CLEANUP_FUNCTION. */
#define CIS_TRY(expr)                                    \
  do {                                                   \
    CIS_CLEANUP_DECLARED_;                               \
    err = (expr);                                        \
    if (err != CIS_OK) {                                 \
      cis_error_trace(__FILE__, __LINE__, __func__);     \
      goto cleanup;                                      \
    }                                                    \
  } while (0)

#define CIS_FAIL(code, ...)                                                  \
  do {                                                                       \
    CIS_CLEANUP_DECLARED_;                                                   \
    err = cis_error_raise((code), __FILE__, __LINE__, __func__, __VA_ARGS__); \
    goto cleanup;                                                            \
  } while (0)

#endif
