/* cisolve: what a run targets among the determinants of its integrals: the point-group irrep
 * (--irrep, --point-group, the input's ISYM) and the reference determinant of truncated CI
 * (--ref-det, the input's, OCC/CLOSED, aufbau: hamiltonian/refdet.h). Resolved once the input
 * and --ms2 are applied, into the problem's space spec (so that the checkpoint's fingerprint
 * holds them), and printed by the report.
 *
 * Default irrep: the input's ISYM when it is present, ORBSYM is usable and ISYM is not 1.
 * PySCF writes ISYM=1 into every FCIDUMP whatever the state, so ISYM=1 says nothing and is
 * not applied (--irrep isym or --irrep 1 applies it); a Molpro or Psi4 ISYM of another irrep
 * is the irrep the file was written for.
 */
#ifndef CIS_TARGET_H
#define CIS_TARGET_H

#include "app/options.h"
#include "base/problem.h"

typedef struct {
  int irrep;            /* 1..8 (Molpro numbering), 0: every irrep */
  int group;            /* point group (hamiltonian/irrep.h), -1: not known */
  char irrep_why[200];  /* how the irrep was chosen, or why ISYM was not applied ("": nothing) */
  char ref[256];        /* the reference determinant, "A/B" ("": none chosen here) */
  char ref_why[256];
} cis_target;

/* CIS_ERR_USAGE: --irrep without ORBSYM, with ORBSYM that the integrals break, an unknown or
 * ambiguous name; --irrep, --point-group or --ref-det on an explicit matrix; a bad --ref-det. */
cis_err cis_target_resolve(const cis_options *o, cis_problem *p, cis_target *t);

/* ORBSYM usable for a target (entries 1..8) and a symmetry of the integrals: CIS_ERR_USAGE
 * naming `what` otherwise. */
cis_err cis_target_check_orbsym(const cis_options *o, const cis_integrals *ints,
                                const char *what);

/* Irrep g (1..8) as the report names it: "B1u (4)" when the group is known, else "irrep 4". */
void cis_target_irrep_name(const cis_target *t, const cis_integrals *ints, int g, char *buf,
                           size_t len);

#endif
