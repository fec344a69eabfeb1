/* cisolve: point-group irreps of determinants (D2h and its subgroups).
 *
 * ORBSYM (FCIDUMP, input.h5 /integrals/orbsym) numbers the irreps as Molpro does, 1..8; PySCF
 * writes that numbering with fcidump.from_scf(..., molpro_orbsym=True). The irrep of a product
 * is then the XOR of the numbers less one, so a string's irrep is the XOR over its occupied
 * orbitals and a determinant's that of its two strings. Irreps are passed here as Molpro's
 * numbers 1..8, and as 0..7 (the number less one) where they are combined.
 *
 * An FCIDUMP does not name its point group. A name (Ag, B1, A'', ...) is resolved against the
 * groups whose irrep count can hold every ORBSYM value present, or against --point-group: a
 * name that stands for different numbers in those groups is refused, naming each reading.
 */
#ifndef CIS_IRREP_H
#define CIS_IRREP_H

#include <stddef.h>
#include <stdint.h>

#include "base/problem.h"

#define CIS_IRREP_MAX 8

/* 0..7: the irrep (less one) of a string of nw words. */
static inline int cis_irrep_string(const int *orbsym, const uint64_t *s, int nw) {
  int g = 0;
  for (int w = 0; w < nw; w++)
    for (uint64_t x = s[w]; x; x &= x - 1) g ^= orbsym[w * 64 + __builtin_ctzll(x)] - 1;
  return g;
}

/* ORBSYM usable for an irrep target: present and every entry in 1..8. CIS_ERR_USAGE naming
 * `what` (e.g. "--irrep") and the input otherwise. */
cis_err cis_irrep_check_orbsym(const cis_integrals *ints, const char *input, const char *what);

/* A point group's index by name (any case: "d2h", "C2v", ...), or -1. */
int cis_point_group_find(const char *name);
/* Irrep count of point group `gi` (an index from cis_point_group_find). */
int cis_point_group_nirrep(int gi);
const char *cis_point_group_name(int gi);

/* The point group ORBSYM implies when it can be told (D2h when a value passes 4, C1 when every
 * value is 1), else -1. */
int cis_point_group_infer(const int *orbsym, int norb);

/* Resolve TEXT (a number 1..8, or an irrep name) to Molpro's number *irrep. group: index from
 * cis_point_group_find, or -1 to consider every group that can hold ORBSYM's values; *named:
 * `group`, or the one group that has the name when only one does (else -1). Errors
 * (CIS_ERR_USAGE): an unknown name, a name of no candidate group, a name that is ambiguous (the
 * message lists each group's number), a number beyond the group's irreps. */
cis_err cis_irrep_parse(const char *text, int group, const int *orbsym, int norb, int *irrep,
                        int *named);

/* Irrep `irrep` (1..8) as a name when the group is known (given or inferred), else "irrep N". */
void cis_irrep_name(int group, const int *orbsym, int norb, int irrep, char *buf, size_t len);

/* Strings of nel electrons in norb orbitals by irrep (0..7), counted without listing them. */
cis_err cis_irrep_string_counts(int norb, const int *orbsym, int nel,
                                double counts[CIS_IRREP_MAX]);
/* FCI determinants of (nalpha, nbeta) electrons by irrep (0..7). */
cis_err cis_irrep_fci_dims(int norb, const int *orbsym, int nalpha, int nbeta,
                           double dims[CIS_IRREP_MAX]);

#endif
