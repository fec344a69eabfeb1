/* cisolve: stopping cleanly. SIGTERM, SIGUSR1 and SIGINT (and, with --walltime, the clock) only
 * raise a flag; the solver polls it between iterations, writes a checkpoint and the program
 * exits with code 3 (the driver also looks at it between the steps before the solver: a stop
 * there exits 3 with nothing to checkpoint). The handlers are installed before the input is
 * read. A second SIGINT while stopping kills the program at once (default action), so a user at
 * a terminal is never stuck. */
#ifndef CIS_SIGNALS_H
#define CIS_SIGNALS_H

/* Install the handlers (idempotent). SIGHUP, SIGQUIT, SIGPIPE, SIGXCPU and SIGALRM (and a
 * second SIGINT) still end the program at once, after removing the temporary file being
 * written; SIGXFSZ is ignored, so that a write beyond `ulimit -f` fails with a message. */
void cis_signals_install(void);
/* The temporary file being written, for the handlers to remove if a signal ends the program
 * during the write; NULL: none. Writers write one file at a time. */
void cis_signals_tmp(const char *path);
/* The signal number received, or 0. */
int cis_signal_pending(void);
const char *cis_signal_name(int sig);

/* Walltime: the run must have written its checkpoint and stopped by `deadline` (cis_wtime()
 * seconds). 0 disables. */
void cis_walltime_set(double deadline);
/* Nonzero when the run should stop now: a signal arrived, or the time left before the deadline
 * is less than `need` seconds (an estimate of one more iteration plus a checkpoint write) plus a
 * safety margin. `why` receives a sentence for the report. */
int cis_stop_requested(double need, char *why, unsigned long len);
/* Parse HH:MM:SS, MM:SS or SS (also D-HH:MM:SS as SLURM prints it) into seconds. */
int cis_parse_walltime(const char *s, double *seconds);

#endif
