/* cisolve: --frozen, --active and the MRCI model space, applied to the problem (app/spaces.h). */
#include "app/spaces.h"

#include <string.h>

#include "base/util.h"
#include "hamiltonian/orbitals.h"
#include "hamiltonian/space.h"

cis_err cis_resolve_orbitals(const cis_options *o, cis_problem *p) {
  if (o->frozen < 0 && !o->active[0]) return CIS_OK;
  int *active = NULL, n = 0;
  if (o->active[0]) CIS_CALL(cis_orbitals_parse(o->active, "--active", &active, &n));
  cis_err err = cis_orbitals_apply(p, o->frozen, active, n);
  cis_free(&active);
  return err;
}

cis_err cis_resolve_mrci(const cis_options *o, cis_problem *p) {
  cis_space_spec *sp = &p->space;
  if (sp->kind != CIS_SPACE_MRCI) {
    CIS_CHECK(!o->cas_norb, CIS_ERR_USAGE,
              "--cas %d,%d names the model space of an MRCI space: give --space mrci<N> (e.g. "
              "mrci2 for MRCISD)", o->cas_nelec, o->cas_norb);
    return CIS_OK;
  }
  CIS_CHECK(!o->ref_size, CIS_ERR_USAGE,
            "--ref-size does not apply to --space mrci%d: its Reference region is the model "
            "space", sp->level);
  if (o->cas_norb) {
    sp->cas_nelec = o->cas_nelec;
    sp->cas_norb = o->cas_norb;
  }
  if (sp->cas_norb) {
    CIS_CALL(cis_space_mrci_check_cas(&p->ints, sp->cas_nelec, sp->cas_norb));
    return CIS_OK;
  }
  if (sp->nref_dets == 0 && sp->ndets > 0) { /* the list is the model space */
    sp->ref_alpha = sp->det_alpha;
    sp->ref_beta = sp->det_beta;
    sp->nref_dets = sp->ndets;
    sp->det_alpha = sp->det_beta = NULL;
    sp->ndets = 0;
  }
  CIS_CHECK(sp->nref_dets > 0, CIS_ERR_USAGE,
            "--space mrci%d needs a model space: --cas NE,NO, or reference determinants or a "
            "determinant list in %s (docs/input-format.md)", sp->level, o->input);
  return CIS_OK;
}
