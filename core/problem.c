#include "core/problem.h"

#include <string.h>

#include "core/util.h"

void cis_csr_free(cis_csr *m) {
  if (!m) return;
  cis_free(&m->rowptr);
  cis_free(&m->col);
  cis_free(&m->val);
  m->n = m->nnz = 0;
}

void cis_problem_free(cis_problem *p) {
  if (!p) return;
  cis_free(&p->ints.h1e);
  cis_free(&p->ints.eri);
  cis_free(&p->ints.orbsym);
  cis_free(&p->space.ref_alpha);
  cis_free(&p->space.ref_beta);
  cis_free(&p->space.det_alpha);
  cis_free(&p->space.det_beta);
  cis_csr_free(&p->matrix);
  memset(p, 0, sizeof *p);
}
