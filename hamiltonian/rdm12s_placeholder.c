/* PLACEHOLDER, to be deleted at the merge of the spin-resolved RDMs (hamiltonian/rdm.h
 * cis_rdm12s), which replace it: it only lets the C API (app/api.c) link before they land, and
 * computes nothing. Remove this file and its line in hamiltonian/CMakeLists.txt. */
#include "hamiltonian/rdm.h"

cis_err cis_rdm12s(const cis_space *s, cis_backend *be, const double *bra, const double *ket,
                   cis_rdm_out *out) {
  (void)s;
  (void)be;
  (void)bra;
  (void)ket;
  (void)out;
  CIS_ERROR(CIS_ERR_INTERNAL, "spin-resolved density matrices (cis_rdm12s): not built yet");
}
