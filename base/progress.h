/* cisolve: the progress of a long pass over the rows of a matrix (the Hamiltonian build, a GPU
 * upload), told to whoever shows it (app/report.c, cis_report_progress).
 *
 * A pass calls cis_progress_update with done = 0 when it starts, then with the rows done so
 * far from one thread at a time (it counts them with an atomic counter; one thread reports),
 * and cis_progress_finish when it ends, failed or not. The listener decides when to print (it
 * rate-limits), so an update costs a clock read. A NULL listener hears nothing. */
#ifndef CIS_PROGRESS_H
#define CIS_PROGRESS_H

#include <stdint.h>

typedef struct cis_progress cis_progress;
struct cis_progress {
  void (*update)(cis_progress *p, const char *what, int64_t done, int64_t total);
  void (*finish)(cis_progress *p);
};

static inline void cis_progress_update(cis_progress *p, const char *what, int64_t done,
                                       int64_t total) {
  if (p) p->update(p, what, done, total);
}

static inline void cis_progress_finish(cis_progress *p) {
  if (p) p->finish(p);
}

#endif
