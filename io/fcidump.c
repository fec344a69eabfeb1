/* cisolve: FCIDUMP reader (PySCF, Psi4 and Molpro dialects).
 *
 * Layout: a Fortran namelist header "&FCI key=value, ... &END" (or "/" as the end), keys in
 * any order and case, possibly over several lines; then one record per line,
 * "value i j k l" with 1-based orbital indices:
 *   i j k l > 0   (ij|kl), any of its 8 permutations   -> eri[cis_eri_index]
 *   i j 0 0       h1e[i][j] (and h1e[j][i])
 *   0 0 0 0       core energy
 *   i 0 0 0       orbital energy (Psi4): ignored
 * Files can hold tens of millions of records, so records are parsed with strtod/strtol on
 * a line buffer, never with sscanf.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/util.h"
#include "io/input.h"
#include "io/io_private.h"

#define HEADER_MAX_BYTES (64L << 20)

typedef struct {
  cis_io_lines in;
  long hdr_first, hdr_last; /* header line range, for messages */
  char where[64];           /* "FCIDUMP header (lines 1-4)" */
} reader;

typedef struct {
  long norb, nelec, ms2, isym;
  int have_norb, have_nelec, uhf;
  long *orbsym;
  long norbsym;
} header;

static int is_blank(const char *s) {
  while (*s && isspace((unsigned char)*s)) s++;
  return *s == '\0';
}

/* Position of the namelist end ("&END", "$END" or "/") in s, or NULL. */
static char *header_end(char *s) {
  for (char *c = s; *c; c++) {
    if (*c == '/') return c;
    if ((*c == '&' || *c == '$') && strncasecmp(c + 1, "END", 3) == 0) return c;
  }
  return NULL;
}

/* A line that can only be an integral record: a real number first, no '=' or ','. */
static int looks_like_record(const char *s) {
  if (strchr(s, '=') || strchr(s, ',')) return 0;
  while (isspace((unsigned char)*s)) s++;
  char *e;
  strtod(s, &e);
  if (e == s) return 0;
  for (const char *c = s; c < e; c++)
    if (*c == '.' || *c == 'e' || *c == 'E') return 1;
  return 0;
}

static void show(const char *s, char *buf, size_t len) {
  while (isspace((unsigned char)*s)) s++;
  snprintf(buf, len, "%s", s);
  size_t n = strlen(buf);
  while (n > 0 && isspace((unsigned char)buf[n - 1])) buf[--n] = '\0';
}

/* Collect the header text (without "&FCI" and the end marker) into *text. */
static cis_err read_header_text(reader *r, char **text) {
  size_t len = 0, cap = 4096;
  CIS_CALL(cis_malloc(text, cap, 1, "FCIDUMP header"));
  (*text)[0] = '\0';
  int more;
  while ((more = cis_io_next_line(&r->in)) && is_blank(r->in.line)) {
  }
  if (!more) CIS_ERROR(CIS_ERR_INPUT, "%s: empty file (no FCIDUMP header)", r->in.path);
  char *s = r->in.line;
  while (isspace((unsigned char)*s)) s++;
  if (strncasecmp(s, "&FCI", 4) != 0) {
    char b[64];
    show(s, b, sizeof b);
    CIS_ERROR(CIS_ERR_INPUT,
              "%s: line %ld: expected an FCIDUMP header starting with '&FCI', found '%s' (the "
              "file is neither HDF5 nor Matrix Market either)",
              r->in.path, r->in.lineno, b);
  }
  r->hdr_first = r->in.lineno;
  s += 4;
  for (;;) {
    char *end = header_end(s);
    if (end) *end = '\0';
    size_t k = strlen(s);
    if (len + k + 2 > cap) {
      CIS_CHECK(len + k < HEADER_MAX_BYTES, CIS_ERR_INPUT,
                "%s: FCIDUMP header starting at line %ld has no end (&END or /) in its first "
                "%ld MiB", r->in.path, r->hdr_first, HEADER_MAX_BYTES >> 20);
      cap = 2 * (len + k + 2);
      CIS_CALL(cis_realloc(text, cap, 1, "FCIDUMP header"));
    }
    memcpy(*text + len, s, k);
    len += k;
    (*text)[len++] = ' ';
    (*text)[len] = '\0';
    if (end) break;
    if (!cis_io_next_line(&r->in))
      CIS_ERROR(CIS_ERR_INPUT, "%s: FCIDUMP header starting at line %ld has no end (&END or /) "
                "before the end of the file", r->in.path, r->hdr_first);
    if (looks_like_record(r->in.line))
      CIS_ERROR(CIS_ERR_INPUT, "%s: FCIDUMP header starting at line %ld has no end (&END or /) "
                "before the integrals at line %ld", r->in.path, r->hdr_first, r->in.lineno);
    s = r->in.line;
  }
  r->hdr_last = r->in.lineno;
  if (r->hdr_first == r->hdr_last)
    snprintf(r->where, sizeof r->where, "FCIDUMP header (line %ld)", r->hdr_first);
  else
    snprintf(r->where, sizeof r->where, "FCIDUMP header (lines %ld-%ld)", r->hdr_first,
             r->hdr_last);
  return CIS_OK;
}

/* The key starting at s if it is "NAME =" (returns the end of the name), else NULL. */
static const char *key_at(const char *s) {
  if (!isalpha((unsigned char)*s)) return NULL;
  const char *e = s;
  while (isalnum((unsigned char)*e) || *e == '_') e++;
  const char *q = e;
  while (isspace((unsigned char)*q)) q++;
  return *q == '=' ? e : NULL;
}

static int is_sep(char c) { return c == ',' || isspace((unsigned char)c); }

/* Integers of a value list "1,2, 3," into out (at most max). */
static cis_err parse_ints(const reader *r, const char *key, const char *v, const char *vend,
                          long *out, long max, long *count) {
  long n = 0;
  const char *s = v;
  for (;;) {
    while (s < vend && is_sep(*s)) s++;
    if (s >= vend) break;
    char *e;
    errno = 0;
    long x = strtol(s, &e, 10);
    if (e == s || errno || (e < vend && !is_sep(*e))) {
      char b[48];
      snprintf(b, sizeof b, "%.*s", (int)CIS_MIN(vend - s, 40), s);
      CIS_ERROR(CIS_ERR_INPUT, "%s: %s: %s='%s' is not an integer "
                "list", r->in.path, r->where, key, b);
    }
    if (n < max) out[n] = x;
    n++;
    s = e;
  }
  *count = n;
  return CIS_OK;
}

static cis_err parse_one_int(const reader *r, const char *key, const char *v, const char *vend,
                             long *out) {
  long n;
  CIS_CALL(parse_ints(r, key, v, vend, out, 1, &n));
  CIS_CHECK(n == 1, CIS_ERR_INPUT, "%s: %s: %s has %ld values, "
            "expected one integer", r->in.path, r->where, key, n);
  return CIS_OK;
}

static int is_true(const char *v, const char *vend) {
  while (v < vend && (is_sep(*v) || *v == '.')) v++;
  return v < vend && (toupper((unsigned char)*v) == 'T' || *v == '1');
}

static cis_err header_value(const reader *r, header *h, const char *key, const char *v,
                            const char *vend) {
  if (strcasecmp(key, "NORB") == 0) {
    CIS_CALL(parse_one_int(r, "NORB", v, vend, &h->norb));
    h->have_norb = 1;
  } else if (strcasecmp(key, "NELEC") == 0) {
    CIS_CALL(parse_one_int(r, "NELEC", v, vend, &h->nelec));
    h->have_nelec = 1;
  } else if (strcasecmp(key, "MS2") == 0) {
    CIS_CALL(parse_one_int(r, "MS2", v, vend, &h->ms2));
  } else if (strcasecmp(key, "ISYM") == 0) {
    CIS_CALL(parse_one_int(r, "ISYM", v, vend, &h->isym));
  } else if (strcasecmp(key, "UHF") == 0 || strcasecmp(key, "IUHF") == 0) {
    h->uhf = is_true(v, vend);
  } else if (strcasecmp(key, "ORBSYM") == 0) {
    long n;
    CIS_CALL(parse_ints(r, "ORBSYM", v, vend, NULL, 0, &n));
    cis_free(&h->orbsym);
    CIS_CALL(cis_malloc(&h->orbsym, (size_t)n, sizeof(long), "ORBSYM"));
    CIS_CALL(parse_ints(r, "ORBSYM", v, vend, h->orbsym, n, &h->norbsym));
  }
  return CIS_OK; /* other keys (IPRTIM, INT, MEMORY, ST, ...) carry nothing we use */
}

static cis_err parse_header(const reader *r, const char *text, header *h) {
  const char *s = text;
  for (;;) {
    while (*s && is_sep(*s)) s++;
    if (!*s) break;
    const char *kend = key_at(s);
    if (!kend) {
      char b[48];
      show(s, b, sizeof b);
      CIS_ERROR(CIS_ERR_INPUT, "%s: %s: expected KEY=value, found "
                "'%.40s'", r->in.path, r->where, b);
    }
    char key[32];
    snprintf(key, sizeof key, "%.*s", (int)CIS_MIN(kend - s, 31), s);
    const char *v = strchr(kend, '=') + 1, *vend = v;
    while (*vend && !key_at(vend)) {
      /* step over a whole word so that "T" inside ".TRUE." is never taken for a key */
      if (isalnum((unsigned char)*vend))
        while (isalnum((unsigned char)*vend) || *vend == '_') vend++;
      else
        vend++;
    }
    CIS_CALL(header_value(r, h, key, v, vend));
    s = vend;
  }
  return CIS_OK;
}

static cis_err check_header(const reader *r, const header *h, cis_problem *p) {
  CIS_CHECK(h->have_norb, CIS_ERR_INPUT, "%s: %s has no NORB",
            r->in.path, r->where);
  CIS_CHECK(h->have_nelec, CIS_ERR_INPUT, "%s: %s has no NELEC",
            r->in.path, r->where);
  CIS_CHECK(!h->uhf, CIS_ERR_INPUT, "%s: %s has UHF=.TRUE.: "
            "unrestricted integrals are not supported (give restricted orbitals)",
            r->in.path, r->where);
  CIS_CHECK(h->norb > 0 && h->norb <= 100000, CIS_ERR_INPUT,
            "%s: %s: NORB=%ld, expected 1..100000", r->in.path, r->where, h->norb);
  const char *where = r->where;
  cis_integrals *I = &p->ints;
  I->norb = (int)h->norb;
  CIS_CALL(cis_io_electrons(r->in.path, where, I->norb, h->nelec, h->ms2, &I->nalpha, &I->nbeta));
  I->isym = (int)h->isym;
  if (h->orbsym) {
    CIS_CHECK(h->norbsym == h->norb, CIS_ERR_INPUT, "%s: %s: ORBSYM has %ld entries, expected "
              "NORB=%ld", r->in.path, where, h->norbsym, h->norb);
    CIS_CALL(cis_malloc(&I->orbsym, (size_t)h->norb, sizeof(int), "ORBSYM"));
    for (long i = 0; i < h->norb; i++) I->orbsym[i] = (int)h->orbsym[i];
  }
  return CIS_OK;
}

/* Fortran writers may use a D exponent ("1.0D-02"), which strtod does not know. */
static double parse_real(const char *s, char **end) {
  double v = strtod(s, end);
  if (**end == 'D' || **end == 'd') {
    char buf[64];
    size_t k = (size_t)(*end - s);
    const char *e = *end + 1;
    size_t m = strcspn(e, " \t\r\n");
    if (k + 1 + m < sizeof buf) {
      memcpy(buf, s, k);
      buf[k] = 'E';
      memcpy(buf + k + 1, e, m);
      buf[k + 1 + m] = '\0';
      char *be;
      v = strtod(buf, &be);
      if (be == buf + k + 1 + m) *end = (char *)e + m;
    }
  }
  return v;
}

static cis_err bad_record(const reader *r, const char *why) {
  char b[64];
  show(r->in.line, b, sizeof b);
  CIS_ERROR(CIS_ERR_INPUT, "%s: line %ld: %s; expected 'value i j k l', found '%s'", r->in.path,
            r->in.lineno, why, b);
}

/* Parse one record line into value and the four indices; 0 = blank line. */
static cis_err parse_record(const reader *r, double *v, long idx[4], int *got) {
  char *s = r->in.line, *e;
  while (isspace((unsigned char)*s)) s++;
  *got = *s != '\0';
  if (!*got) return CIS_OK;
  *v = parse_real(s, &e);
  if (e == s || !isspace((unsigned char)*e)) return bad_record(r, "value is not a number");
  for (int k = 0; k < 4; k++) {
    s = e;
    errno = 0;
    idx[k] = strtol(s, &e, 10);
    if (e == s) return bad_record(r, "fewer than 5 fields (truncated file?)");
    if (errno || (*e && !isspace((unsigned char)*e))) return bad_record(r, "bad orbital index");
  }
  while (isspace((unsigned char)*e)) e++;
  if (*e) return bad_record(r, "trailing text after 5 fields");
  return CIS_OK;
}

static cis_err store_record(const reader *r, cis_integrals *I, double v, const long x[4]) {
  long n = I->norb;
  for (int k = 0; k < 4; k++)
    if (x[k] < 0 || x[k] > n) {
      char why[96];
      snprintf(why, sizeof why, "orbital index %ld outside 1..NORB=%ld", x[k], n);
      return bad_record(r, why);
    }
  if (!isfinite(v)) return bad_record(r, "value is not a finite number");
  if (x[0] && x[1] && x[2] && x[3]) {
    I->eri[cis_eri_index((int)x[0] - 1, (int)x[1] - 1, (int)x[2] - 1, (int)x[3] - 1)] = v;
  } else if (x[0] && x[1] && !x[2] && !x[3]) {
    I->h1e[(x[0] - 1) * n + (x[1] - 1)] = v;
    I->h1e[(x[1] - 1) * n + (x[0] - 1)] = v;
  } else if (!x[0] && !x[1] && !x[2] && !x[3]) {
    I->ecore = v;
  } else if (!(x[0] && !x[1] && !x[2] && !x[3])) {
    return bad_record(r, "index pattern is none of (i j k l), (i j 0 0), (i 0 0 0), (0 0 0 0)");
  }
  return CIS_OK;
}

static cis_err read_records(reader *r, cis_integrals *I) {
  CIS_CALL(cis_calloc(&I->h1e, (size_t)I->norb * (size_t)I->norb, sizeof(double), "h1e"));
  CIS_CALL(cis_calloc(&I->eri, (size_t)cis_eri_size(I->norb), sizeof(double),
                      "two-electron integrals"));
  double v;
  long x[4];
  int got;
  while (cis_io_next_line(&r->in)) {
    CIS_CALL(parse_record(r, &v, x, &got));
    if (got) CIS_CALL(store_record(r, I, v, x));
  }
  if (ferror(r->in.f))
    CIS_ERROR(CIS_ERR_IO, "%s: read error after line %ld: %s", r->in.path, r->in.lineno,
              strerror(errno));
  return CIS_OK;
}

cis_err cis_fcidump_read(const char *path, cis_problem *p) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  reader r = {0};
  header h = {0};
  char *text = NULL;
  memset(p, 0, sizeof *p);
  CIS_TRY(cis_io_lines_open(&r.in, path, "FCIDUMP"));
  /* a large stdio buffer: the file is read once, front to back */
  setvbuf(r.in.f, NULL, _IOFBF, 1 << 20);
  CIS_TRY(read_header_text(&r, &text));
  CIS_TRY(parse_header(&r, text, &h));
  CIS_TRY(check_header(&r, &h, p));
  CIS_TRY(read_records(&r, &p->ints));
  p->kind = CIS_PROBLEM_INTEGRALS;
  p->space.kind = CIS_SPACE_FCI;
  p->space_from_file = 0;
  snprintf(p->source, sizeof p->source, "%s", path);
cleanup:
  cis_io_lines_close(&r.in);
  cis_free(&text);
  cis_free(&h.orbsym);
  if (err != CIS_OK) cis_problem_free(p);
  return err;
}
