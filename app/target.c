/* The run's target irrep and reference determinant (app/target.h). */
#include "app/target.h"

#include "app/irrep_all.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/util.h"
#include "hamiltonian/irrep.h"
#include "hamiltonian/refdet.h"
#include "hamiltonian/symmetry.h"

void cis_target_irrep_name(const cis_target *t, const cis_integrals *ints, int g, char *buf,
                           size_t len) {
  char name[32];
  cis_irrep_name(t->group, ints->orbsym, ints->norb, g, name, sizeof name);
  if (strncmp(name, "irrep", 5) == 0)
    snprintf(buf, len, "%s", name);
  else
    snprintf(buf, len, "%s (%d)", name, g);
}

cis_err cis_target_check_orbsym(const cis_options *o, const cis_integrals *ints,
                                const char *what) {
  CIS_CALL(cis_irrep_check_orbsym(ints, o->input, what));
  cis_orbsym sym;
  CIS_CALL(cis_orbsym_find(ints, &sym));
  cis_orbsym_status st = sym.orbsym;
  cis_orbsym_free(&sym);
  CIS_CHECK(st != CIS_ORBSYM_BROKEN, CIS_ERR_USAGE, "%s: %s: the integrals do not have ORBSYM's "
            "symmetry (an integral couples orbitals whose irreps forbid it), so its irreps do not "
            "divide the determinants; run without %s", what, o->input, what);
  return CIS_OK;
}

static int orbsym_usable(const cis_integrals *ints) {
  if (!ints->orbsym) return 0;
  for (int p = 0; p < ints->norb; p++)
    if (ints->orbsym[p] < 1 || ints->orbsym[p] > 8) return 0;
  return 1;
}

static cis_err resolve_irrep(const cis_options *o, cis_problem *p, cis_target *t) {
  const cis_integrals *I = &p->ints;
  const char *v = o->irrep;
  if (o->point_group[0]) {
    t->group = cis_point_group_find(o->point_group);
    CIS_CHECK(t->group >= 0, CIS_ERR_USAGE, "--point-group: unknown group '%s' (expected D2h, "
              "C2v, C2h, D2, Cs, Ci, C2 or C1)", o->point_group);
  } else if (orbsym_usable(I)) {
    t->group = cis_point_group_infer(I->orbsym, I->norb);
  }
  if (!v[0]) { /* the default: ISYM when it says something */
    if (I->isym > 8 && orbsym_usable(I)) {
      snprintf(t->irrep_why, sizeof t->irrep_why, "the input's ISYM=%d is not an irrep 1..8: "
               "not applied", I->isym);
    } else if (I->isym > 1 && orbsym_usable(I)) {
      cis_err e = cis_target_check_orbsym(o, I, "the input's ISYM");
      if (e != CIS_OK) {
        snprintf(t->irrep_why, sizeof t->irrep_why, "the input's ISYM=%d is not applied: the "
                 "integrals do not have ORBSYM's symmetry", I->isym);
        cis_error_clear();
        return CIS_OK;
      }
      t->irrep = I->isym;
      snprintf(t->irrep_why, sizeof t->irrep_why, "the input's ISYM=%d (--irrep none: every "
               "irrep)", I->isym);
    } else if (I->isym == 1 && orbsym_usable(I)) {
      snprintf(t->irrep_why, sizeof t->irrep_why, "the input's ISYM=1 is not applied (PySCF "
               "writes it for every state; --irrep isym applies it)");
    }
    return CIS_OK;
  }
  if (!strcasecmp(v, "none")) return CIS_OK;
  if (!strcasecmp(v, "all")) { /* app/irrep_all.h runs each irrep in turn */
    CIS_CHECK(cis_irrep_all_current(), CIS_ERR_USAGE, "--irrep all: give it on the command line "
              "(not in an input file's /options)");
    CIS_CALL(cis_target_check_orbsym(o, I, "--irrep all"));
    t->irrep = cis_irrep_all_current();
    snprintf(t->irrep_why, sizeof t->irrep_why, "--irrep all (each irrep in turn)");
    return CIS_OK;
  }
  CIS_CALL(cis_target_check_orbsym(o, I, "--irrep"));
  if (!strcasecmp(v, "isym")) {
    CIS_CHECK(I->isym >= 1 && I->isym <= 8, CIS_ERR_USAGE, "--irrep isym: %s has no ISYM (or "
              "ISYM=%d is not an irrep 1..8)", o->input, I->isym);
    t->irrep = I->isym;
    snprintf(t->irrep_why, sizeof t->irrep_why, "--irrep isym: the input's ISYM=%d", I->isym);
  } else {
    int named = -1;
    CIS_CALL(cis_irrep_parse(v, t->group, I->orbsym, I->norb, &t->irrep, &named));
    if (t->group < 0) t->group = named; /* a name only one group has names the group */
    snprintf(t->irrep_why, sizeof t->irrep_why, "--irrep %s", v);
  }
  return CIS_OK;
}

/* --ref-det, the input's reference, or the rule of hamiltonian/refdet.h for truncated CI. */
static cis_err resolve_ref(const cis_options *o, cis_problem *p, cis_target *t) {
  cis_space_spec *s = &p->space;
  const cis_integrals *I = &p->ints;
  int nw = cis_nwords(I->norb);
  if (!o->ref_det[0] && s->nref_dets > 0 && s->ref_alpha) {
    cis_refdet_format(I->norb, s->ref_alpha, s->ref_beta, t->ref, sizeof t->ref);
    snprintf(t->ref_why, sizeof t->ref_why, "given in the input%s",
             s->nref_dets > 1 ? " (the first of several)" : "");
    return CIS_OK;
  }
  if (!o->ref_det[0] && s->kind != CIS_SPACE_TRUNCATED) return CIS_OK;
  uint64_t *a = NULL, *b = NULL;
  cis_err err = cis_calloc(&a, (size_t)nw, sizeof *a, "reference determinant");
  if (err == CIS_OK) err = cis_calloc(&b, (size_t)nw, sizeof *b, "reference determinant");
  if (err == CIS_OK && o->ref_det[0]) {
    err = cis_refdet_parse(o->ref_det, I, a, b);
    snprintf(t->ref_why, sizeof t->ref_why, "--ref-det%s",
             s->nref_dets > 0 ? " (replacing the input's)" : "");
  } else if (err == CIS_OK) {
    err = cis_refdet_choose(I, a, b, t->ref_why, sizeof t->ref_why);
  }
  if (err != CIS_OK) {
    cis_free(&a);
    cis_free(&b);
    return err;
  }
  cis_free(&s->ref_alpha);
  cis_free(&s->ref_beta);
  s->ref_alpha = a;
  s->ref_beta = b;
  s->nref_dets = 1;
  cis_refdet_format(I->norb, a, b, t->ref, sizeof t->ref);
  return CIS_OK;
}

cis_err cis_target_resolve(const cis_options *o, cis_problem *p, cis_target *t) {
  memset(t, 0, sizeof *t);
  t->group = -1;
  if (p->kind == CIS_PROBLEM_MATRIX) {
    CIS_CHECK(!o->irrep[0] && !o->point_group[0] && !o->ref_det[0], CIS_ERR_USAGE,
              "%s holds an explicit matrix: --irrep, --point-group and --ref-det apply only to "
              "integral inputs", o->input);
    return CIS_OK;
  }
  CIS_CALL(resolve_irrep(o, p, t));
  p->space.irrep = t->irrep;
  CIS_CALL(resolve_ref(o, p, t));
  return CIS_OK;
}
