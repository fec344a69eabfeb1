/* cisolve: FCIDUMP reader (PySCF, Psi4, Molpro and HANDE dialects).
 *
 * Layout: a Fortran namelist header "&FCI key=value, ... &END" (or "$FCI ... $END", or "/" as
 * the end), keys in any order and case, separated by commas or blanks, possibly over several
 * lines or one key per line; then one record per line, "value i j k l" with 1-based orbital
 * indices:
 *   i j k l > 0   (ij|kl), any of its 8 permutations   -> eri[cis_eri_index]
 *   i j 0 0       h1e[i][j] (and h1e[j][i])
 *   0 0 0 0       core energy
 *   i 0 0 0       orbital energy (Psi4): ignored
 * Files can hold tens of millions of records, so records are parsed with strtod/strtol on
 * a line buffer, never with sscanf.
 *
 * What a wrong answer would come from is refused: a file without its core-energy record or
 * without one-electron records (every writer writes both, the core energy last: a file cut
 * short lacks it), two values for one integral (two records equal under the 8-fold symmetry,
 * h(i,j) against h(j,i), two core energies), an orbital no record mentions (a NORB that is not
 * the file's), unrestricted (UHF/IUHF) and complex Lz-adapted (SYML/SYMLZ) orbitals.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/util.h"
#include "io/input.h"
#include "io/io_private.h"

#define HEADER_MAX_BYTES (64L << 20)

typedef struct {
  cis_io_lines in;
  long hdr_first, hdr_last; /* header line range, for messages */
  char where[64];           /* "FCIDUMP header (lines 1-4)" */
  char general[48];         /* the header's IGENERAL=1 / ITGENERAL=1, for messages */
} reader;

typedef struct {
  long norb, nelec, ms2, isym;
  int have_norb, have_nelec;
  char uhf[48];     /* "IUHF=1" as the file has it, when it asks for unrestricted orbitals */
  char general[48]; /* "IGENERAL=1" or "ITGENERAL=1" as the file has it, when set */
  long *orbsym;
  long norbsym;
  long occ[8], closed[8]; /* OCC= and CLOSED= (Molpro): orbitals per irrep */
  long nocc, nclosed;
} header;

/* What the records so far have set, to refuse a second, different value for the same item. */
typedef struct {
  uint64_t *eri_seen, *h1_seen; /* one bit per packed integral / per pair i >= j */
  unsigned char *used;          /* norb: the orbital appears in an integral record */
  long ecore_line;              /* line of the core-energy record, 0 = none yet */
  long nh1;                     /* one-electron records */
} book;

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
  do {
    CIS_CALL(cis_io_next_line(&r->in, &more));
  } while (more && is_blank(r->in.line));
  if (!more) CIS_ERROR(CIS_ERR_INPUT, "%s: empty file (no FCIDUMP header)", r->in.path);
  char *s = r->in.line;
  while (isspace((unsigned char)*s)) s++;
  if ((s[0] != '&' && s[0] != '$') || strncasecmp(s + 1, "FCI", 3) != 0) {
    char b[64];
    show(s, b, sizeof b);
    CIS_ERROR(CIS_ERR_INPUT,
              "%s: line %ld: expected an FCIDUMP header starting with '&FCI' (or '$FCI'), found "
              "'%s' (the file is neither HDF5 nor Matrix Market either)",
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
    CIS_CALL(cis_io_next_line(&r->in, &more));
    if (!more)
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

/* "KEY=value" as the file spells it (value without the separators around it). */
static void spelled(const char *key, const char *v, const char *vend, char *out, size_t len) {
  while (v < vend && is_sep(*v)) v++;
  while (vend > v && is_sep(vend[-1])) vend--;
  snprintf(out, len, "%s=%.*s", key, (int)CIS_MIN(vend - v, 24), v);
}

/* SYML / SYMLZ: angular momenta of Lz-adapted orbitals. Such orbitals are complex and their
 * integrals have only 4-fold symmetry; read as real 8-fold ones they give a wrong energy
 * (below the exact one in a case we met). All zero means real orbitals. */
static cis_err refuse_lz(const reader *r, const char *key, const char *v, const char *vend) {
  long n, *x = NULL;
  CIS_CALL(parse_ints(r, key, v, vend, NULL, 0, &n));
  CIS_CALL(cis_malloc(&x, (size_t)CIS_MAX(n, 1), sizeof(long), key));
  cis_err err = parse_ints(r, key, v, vend, x, n, &n);
  long k = 0;
  while (err == CIS_OK && k < n && x[k] == 0) k++;
  long val = k < n ? x[k] : 0;
  cis_free(&x);
  CIS_CALL(err);
  CIS_CHECK(k == n, CIS_ERR_INPUT, "%s: %s: %s is %ld for orbital %ld: the orbitals are complex "
            "(Lz-adapted), and their integrals have only 4-fold symmetry; cisolve reads real "
            "orbitals with 8-fold symmetric integrals (write the FCIDUMP in real orbitals, "
            "without Lz symmetry)", r->in.path, r->where, key, val, k + 1);
  return CIS_OK;
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
    h->uhf[0] = '\0';
    if (is_true(v, vend)) spelled(key, v, vend, h->uhf, sizeof h->uhf);
  } else if (strcasecmp(key, "IGENERAL") == 0 || strcasecmp(key, "ITGENERAL") == 0) {
    if (is_true(v, vend)) spelled(key, v, vend, h->general, sizeof h->general);
  } else if (strcasecmp(key, "SYML") == 0 || strcasecmp(key, "SYMLZ") == 0) {
    CIS_CALL(refuse_lz(r, key, v, vend));
  } else if (strcasecmp(key, "OCC") == 0) {
    CIS_CALL(parse_ints(r, "OCC", v, vend, h->occ, 8, &h->nocc));
  } else if (strcasecmp(key, "CLOSED") == 0) {
    CIS_CALL(parse_ints(r, "CLOSED", v, vend, h->closed, 8, &h->nclosed));
  } else if (strcasecmp(key, "ORBSYM") == 0) {
    long n;
    CIS_CALL(parse_ints(r, "ORBSYM", v, vend, NULL, 0, &n));
    cis_free(&h->orbsym);
    CIS_CALL(cis_malloc(&h->orbsym, (size_t)CIS_MAX(n, 1), sizeof(long), "ORBSYM"));
    CIS_CALL(parse_ints(r, "ORBSYM", v, vend, h->orbsym, n, &h->norbsym));
  }
  return CIS_OK; /* other keys (IPRTIM, INT, MEMORY, ST, PNTGRP, ...) carry nothing we use */
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

/* OCC= / CLOSED=: at most 8 counts (one per irrep), each 0..NORB. */
static cis_err occupations(const reader *r, const char *key, const long *v, long n, long norb,
                           int *out, int *nout) {
  CIS_CHECK(n <= 8, CIS_ERR_INPUT, "%s: %s: %s has %ld entries, expected one per irrep (at most "
            "8)", r->in.path, r->where, key, n);
  for (long g = 0; g < n; g++) {
    CIS_CHECK(v[g] >= 0 && v[g] <= norb, CIS_ERR_INPUT, "%s: %s: %s entry %ld is %ld, expected "
              "0..NORB=%ld orbitals", r->in.path, r->where, key, g + 1, v[g], norb);
    out[g] = (int)v[g];
  }
  *nout = (int)n;
  return CIS_OK;
}

static cis_err check_header(const reader *r, const header *h, cis_problem *p) {
  CIS_CHECK(h->have_norb, CIS_ERR_INPUT, "%s: %s has no NORB",
            r->in.path, r->where);
  CIS_CHECK(h->have_nelec, CIS_ERR_INPUT, "%s: %s has no NELEC",
            r->in.path, r->where);
  CIS_CHECK(!h->uhf[0], CIS_ERR_INPUT, "%s: %s has %s: unrestricted integrals are not "
            "supported (give restricted orbitals)", r->in.path, r->where, h->uhf);
  CIS_CHECK(h->norb > 0 && h->norb <= 100000, CIS_ERR_INPUT,
            "%s: %s: NORB=%ld, expected 1..100000", r->in.path, r->where, h->norb);
  const char *where = r->where;
  cis_integrals *I = &p->ints;
  I->norb = (int)h->norb;
  CIS_CALL(cis_io_electrons(r->in.path, where, I->norb, h->nelec, h->ms2, &I->nalpha, &I->nbeta));
  CIS_CHECK(labs(h->isym) <= INT_MAX, CIS_ERR_INPUT, "%s: %s: ISYM=%ld, expected an irrep "
            "label", r->in.path, where, h->isym);
  I->isym = (int)h->isym;
  if (h->orbsym) {
    CIS_CHECK(h->norbsym == h->norb, CIS_ERR_INPUT, "%s: %s: ORBSYM has %ld entries, expected "
              "NORB=%ld", r->in.path, where, h->norbsym, h->norb);
    for (long i = 0; i < h->norb; i++)
      CIS_CHECK(h->orbsym[i] >= 0 && h->orbsym[i] <= INT_MAX, CIS_ERR_INPUT, "%s: %s: ORBSYM "
                "entry %ld is %ld, expected an irrep label >= 0", r->in.path, where, i + 1,
                h->orbsym[i]);
    CIS_CALL(cis_malloc(&I->orbsym, (size_t)h->norb, sizeof(int), "ORBSYM"));
    for (long i = 0; i < h->norb; i++) I->orbsym[i] = (int)h->orbsym[i];
  }
  CIS_CALL(occupations(r, "OCC", h->occ, h->nocc, h->norb, I->occ, &I->nocc));
  CIS_CALL(occupations(r, "CLOSED", h->closed, h->nclosed, h->norb, I->closed, &I->nclosed));
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
  if (e == s || (*e && !isspace((unsigned char)*e)))
    return bad_record(r, "value is not a number");
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

/* 0 core energy, 1 one-electron, 2 two-electron, 3 orbital energy, -1 no valid pattern. */
static int record_kind(const long x[4]) {
  if (!x[0] && !x[1] && !x[2] && !x[3]) return 0;
  if (x[0] && x[1] && !x[2] && !x[3]) return 1;
  if (x[0] && x[1] && x[2] && x[3]) return 2;
  if (x[0] && !x[1] && !x[2] && !x[3]) return 3;
  return -1;
}

/* Where the item x sets lives: the packed (ij|kl) index, or the pair index of h(i,j). */
static int64_t item_index(const long x[4]) {
  if (record_kind(x) == 2)
    return cis_eri_index((int)x[0] - 1, (int)x[1] - 1, (int)x[2] - 1, (int)x[3] - 1);
  return cis_pair(x[0] - 1, x[1] - 1);
}

/* The first record line that sets the same item as x, its indices and value (0: none). Read
 * again from the file only when a conflict is found, so that no line number is kept per
 * integral. */
static long first_record_of(const reader *r, const long x[4], long x0[4], double *v0) {
  reader s = {.hdr_last = r->hdr_last};
  long found = 0;
  int more, got;
  if (cis_io_lines_open(&s.in, r->in.path, "FCIDUMP") != CIS_OK) goto done;
  while (!found && cis_io_next_line(&s.in, &more) == CIS_OK && more &&
         s.in.lineno < r->in.lineno) {
    if (s.in.lineno <= s.hdr_last) continue;
    if (parse_record(&s, v0, x0, &got) != CIS_OK) break;
    if (got && record_kind(x0) == record_kind(x) && item_index(x0) == item_index(x))
      found = s.in.lineno;
  }
done:
  cis_io_lines_close(&s.in);
  cis_error_clear(); /* a failure here only costs the line number */
  return found;
}

/* A second value for an item already set: the same to round-off of the writer (the 8 index
 * orders of (ij|kl), or h(i,j) and h(j,i), computed apart) is taken, another is an error that
 * names both lines. */
static cis_err second_value(const reader *r, double old, double v, const long x[4]) {
  if (fabs(old - v) <= 1e-10 * CIS_MAX(1.0, CIS_MAX(fabs(old), fabs(v)))) return CIS_OK;
  long x0[4] = {0, 0, 0, 0};
  double v0 = old;
  long l0 = first_record_of(r, x, x0, &v0);
  char first[64] = "an earlier line";
  if (l0) snprintf(first, sizeof first, "line %ld", l0);
  if (record_kind(x) == 1)
    CIS_ERROR(CIS_ERR_INPUT, "%s: %s gives h(%ld,%ld) = %.16g but line %ld gives h(%ld,%ld) = "
              "%.16g: the one-electron integrals must be symmetric, each element given once "
              "or twice (h(i,j) and h(j,i)) with one value", r->in.path, first, x0[0], x0[1],
              v0, r->in.lineno, x[0], x[1], v);
  CIS_ERROR(CIS_ERR_INPUT, "%s: %s gives (%ld %ld|%ld %ld) = %.16g but line %ld gives (%ld "
            "%ld|%ld %ld) = %.16g: for real orbitals both are one integral (its 8 index orders "
            "are equal)%s%s%s", r->in.path, first, x0[0], x0[1], x0[2], x0[3], v0, r->in.lineno,
            x[0], x[1], x[2], x[3], v, r->general[0] ? "; the header's " : "", r->general,
            r->general[0] ? " says the file holds integrals without that symmetry, which cisolve "
                            "does not support" : "");
}

static int test_and_set(uint64_t *bits, int64_t k) {
  uint64_t m = (uint64_t)1 << (k % 64);
  int was = (bits[k / 64] & m) != 0;
  bits[k / 64] |= m;
  return was;
}

static cis_err store_record(const reader *r, book *b, cis_integrals *I, double v,
                            const long x[4]) {
  long n = I->norb;
  for (int k = 0; k < 4; k++)
    if (x[k] < 0 || x[k] > n) {
      char why[96];
      snprintf(why, sizeof why, "orbital index %ld outside 1..NORB=%ld", x[k], n);
      return bad_record(r, why);
    }
  if (!isfinite(v)) return bad_record(r, "value is not a finite number");
  int kind = record_kind(x);
  if (kind < 0)
    return bad_record(r, "index pattern is none of (i j k l), (i j 0 0), (i 0 0 0), (0 0 0 0)");
  if (kind == 0) {
    CIS_CHECK(!b->ecore_line, CIS_ERR_INPUT, "%s: lines %ld and %ld are both core-energy "
              "records '0 0 0 0': expected one (a second one separates the spin blocks of an "
              "unrestricted FCIDUMP, or two files were joined)", r->in.path, b->ecore_line,
              r->in.lineno);
    b->ecore_line = r->in.lineno;
    I->ecore = v;
    return CIS_OK;
  }
  if (kind == 3) return CIS_OK;
  int64_t k = item_index(x);
  double *at = kind == 2 ? &I->eri[k] : &I->h1e[(x[0] - 1) * n + (x[1] - 1)];
  if (test_and_set(kind == 2 ? b->eri_seen : b->h1_seen, k))
    CIS_CALL(second_value(r, *at, v, x));
  if (kind == 2) {
    *at = v;
  } else {
    I->h1e[(x[0] - 1) * n + (x[1] - 1)] = I->h1e[(x[1] - 1) * n + (x[0] - 1)] = v;
    b->nh1++;
  }
  for (int q = 0; q < 4; q++)
    if (x[q]) b->used[x[q] - 1] = 1;
  return CIS_OK;
}

/* What every writer writes, and orbitals every record leaves out. */
static cis_err check_records(const reader *r, const book *b, int norb) {
  CIS_CHECK(b->ecore_line, CIS_ERR_INPUT, "%s: no core-energy record 'E 0 0 0 0' in the %ld "
            "lines: PySCF, Psi4 and Molpro write it last, so the file is cut short (write "
            "'0.0 0 0 0 0' if the core energy is zero)", r->in.path, r->in.lineno);
  CIS_CHECK(b->nh1, CIS_ERR_INPUT, "%s: no one-electron record 'h i j 0 0' in the %ld lines: "
            "the file is cut short, or holds no Hamiltonian", r->in.path, r->in.lineno);
  int first = -1, count = 0;
  for (int i = 0; i < norb; i++)
    if (!b->used[i]) {
      if (first < 0) first = i;
      count++;
    }
  CIS_CHECK(first < 0, CIS_ERR_INPUT, "%s: orbital %d%s appear%s in no integral record: NORB=%d "
            "in the %s is not the number of orbitals of the integrals", r->in.path, first + 1,
            count > 1 ? " and others" : "", count > 1 ? "" : "s", norb, r->where);
  return CIS_OK;
}

static cis_err read_records(reader *r, cis_integrals *I) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  book b = {0};
  int64_t neri = cis_eri_size(I->norb), npair = cis_pair(I->norb, 0);
  CIS_TRY(cis_calloc(&I->h1e, (size_t)I->norb * (size_t)I->norb, sizeof(double), "h1e"));
  CIS_TRY(cis_calloc(&I->eri, (size_t)neri, sizeof(double), "two-electron integrals"));
  CIS_TRY(cis_calloc(&b.eri_seen, (size_t)(neri / 64 + 1), sizeof(uint64_t), "integral flags"));
  CIS_TRY(cis_calloc(&b.h1_seen, (size_t)(npair / 64 + 1), sizeof(uint64_t), "integral flags"));
  CIS_TRY(cis_calloc(&b.used, (size_t)I->norb, 1, "orbital flags"));
  double v;
  long x[4];
  int got, more;
  for (;;) {
    CIS_TRY(cis_io_next_line(&r->in, &more));
    if (!more) break;
    CIS_TRY(parse_record(r, &v, x, &got));
    if (got) CIS_TRY(store_record(r, &b, I, v, x));
  }
  CIS_TRY(check_records(r, &b, I->norb));
cleanup:
  cis_free(&b.eri_seen);
  cis_free(&b.h1_seen);
  cis_free(&b.used);
  return err;
}

cis_err cis_fcidump_read(const char *path, cis_problem *p) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  reader r = {0};
  header h = {0};
  char *text = NULL;
  memset(p, 0, sizeof *p);
  CIS_TRY(cis_io_lines_open(&r.in, path, "FCIDUMP"));
  CIS_TRY(read_header_text(&r, &text));
  CIS_TRY(parse_header(&r, text, &h));
  snprintf(r.general, sizeof r.general, "%s", h.general);
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
