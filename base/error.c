#include "base/error.h"

#include <stdio.h>
#include <string.h>

#define CIS_MSG_MAX 1024
#define CIS_WHERE_MAX 2048

static _Thread_local cis_err g_code = CIS_OK;
static _Thread_local char g_msg[CIS_MSG_MAX];
static _Thread_local char g_where[CIS_WHERE_MAX];

const char *cis_err_name(cis_err e) {
  switch (e) {
    case CIS_OK: return "ok";
    case CIS_ERR_USAGE: return "usage";
    case CIS_ERR_INPUT: return "input";
    case CIS_ERR_IO: return "io";
    case CIS_ERR_NUMERIC: return "numeric";
    case CIS_ERR_INTERNAL: return "internal";
    case CIS_ERR_NOMEM: return "memory";
    case CIS_ERR_RESOURCE: return "resource";
    case CIS_ERR_NOT_COMPILED: return "not-compiled";
    case CIS_ERR_INTERRUPTED: return "interrupted";
  }
  return "unknown";
}

int cis_exit_code(cis_err e) {
  switch (e) {
    case CIS_OK: return CIS_EXIT_OK;
    case CIS_ERR_INTERRUPTED: return CIS_EXIT_INTERRUPTED;
    case CIS_ERR_NOMEM:
    case CIS_ERR_RESOURCE:
    case CIS_ERR_NOT_COMPILED: return CIS_EXIT_RESOURCE;
    default: return CIS_EXIT_INPUT;
  }
}

static void append_frame(const char *file, int line, const char *func) {
  size_t len = strlen(g_where);
  if (len + 8 >= CIS_WHERE_MAX) return;
  snprintf(g_where + len, CIS_WHERE_MAX - len, "  at %s:%d %s\n", file, line, func);
}

cis_err cis_error_raise(cis_err code, const char *file, int line, const char *func,
                        const char *fmt, ...) {
  /* Formatted aside first: the arguments may be the current message itself
   * (CIS_ERROR(..., "%s: ...", cis_error_message())), which vsnprintf must not write over
   * while it reads it. */
  char msg[CIS_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  memcpy(g_msg, msg, strlen(msg) + 1);
  g_code = code;
  g_where[0] = '\0';
  append_frame(file, line, func);
  return code;
}

void cis_error_trace(const char *file, int line, const char *func) {
  append_frame(file, line, func);
}

const char *cis_error_message(void) { return g_msg; }
const char *cis_error_where(void) { return g_where; }
cis_err cis_error_code(void) { return g_code; }

void cis_error_clear(void) {
  g_code = CIS_OK;
  g_msg[0] = '\0';
  g_where[0] = '\0';
}

void cis_error_print(int verbose) {
  fprintf(stderr, "cisolve: error: %s\n", g_msg[0] ? g_msg : cis_err_name(g_code));
  if (verbose && g_where[0]) fprintf(stderr, "%s", g_where);
}

void cis_worker_error_keep(cis_worker_error *we, cis_err e) {
#pragma omp critical(cis_worker_error)
  {
    if (we->code == CIS_OK) {
      we->code = e;
      snprintf(we->msg, sizeof we->msg, "%s", cis_error_message());
    }
  }
}

int cis_worker_error_seen(cis_worker_error *we) {
  cis_err c;
#pragma omp atomic read
  c = we->code;
  return c != CIS_OK;
}
