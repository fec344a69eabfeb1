#include "io/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "core/version.h"

static int quiet(const cis_report *r) { return r->opt->quiet; }

void cis_report_problem(const cis_report *r) {
  if (quiet(r)) return;
  const cis_problem *p = r->prob;
  printf("cisolve %s\n", CISOLVE_VERSION);
  printf("input            %s\n", r->opt->input);
  if (p->kind == CIS_PROBLEM_MATRIX) {
    printf("problem          explicit symmetric matrix, n = %lld, nnz = %lld\n",
           (long long)p->matrix.n, (long long)p->matrix.nnz);
  } else {
    const cis_integrals *in = &p->ints;
    printf("problem          %d orbitals, %d electrons (%d alpha, %d beta, MS2 = %d)\n", in->norb,
           in->nalpha + in->nbeta, in->nalpha, in->nbeta, in->nalpha - in->nbeta);
    printf("core energy      %.10f Eh\n", in->ecore);
  }
  fflush(stdout);
}

void cis_report_matrix(const cis_report *r) {
  if (quiet(r)) return;
  const cis_hmat *h = r->h;
  char b1[32], b2[32], b3[32];
  if (h->space)
    printf("space            %s, %lld determinants\n", cis_space_describe(h->space),
           (long long)h->n);
  printf("reference region %lld determinants (%s)", (long long)h->nref,
         r->opt->ref_size ? "--ref-size" : "automatic");
  if (h->npre < h->nref)
    printf("; the preconditioner's dense block is its first %lld", (long long)h->npre);
  printf("\n");
  const cis_hyb *y = &h->hyb;
  int64_t nnz = y->ell.nnz + y->nnz_exp;
  printf("nonzeros         %lld (%.1f per row): Reference (ELL) %lld, Expansion (CSR) %lld\n",
         (long long)nnz, h->n ? (double)nnz / (double)h->n : 0.0, (long long)y->ell.nnz,
         (long long)y->nnz_exp);
  /* A device backend says itself what it holds and streams (its report op, below); here the
   * host's part only. */
  if (r->be->ops->report)
    printf("memory           ELL %s resident; Expansion %lld/%lld blocks cached on the host "
           "(%s)\n",
           cis_format_bytes((double)h->stats.ell_bytes, b1, sizeof b1), (long long)y->ncached,
           (long long)y->nblocks, cis_format_bytes((double)h->stats.cached_bytes, b2, sizeof b2));
  else
    printf("memory           ELL %s resident; Expansion %lld/%lld blocks cached (%s), "
           "%s regenerated per matvec\n",
           cis_format_bytes((double)h->stats.ell_bytes, b1, sizeof b1), (long long)y->ncached,
           (long long)y->nblocks, cis_format_bytes((double)h->stats.cached_bytes, b2, sizeof b2),
           cis_format_bytes((double)h->stats.streamed_bytes_per_matvec, b3, sizeof b3));
  /* what bounded the default: the machine's memory, a cgroup or an address-space limit */
  cis_host_mem hm;
  cis_host_mem_probe("", &hm);
  char deflt[200] = "default: 3/4 of the available memory less the solver's vectors";
  if (hm.least != hm.meminfo)
    snprintf(deflt, sizeof deflt, "default: 3/4 of what %s leaves, less the solver's vectors",
             hm.bound);
  const char *why = r->opt->mem >= 0 ? "--mem"
                    : h->stats.budget == 0 && r->opt->device != CIS_DEVICE_CPU && h->space
                        ? (y->sink ? "default on a GPU: the GPU holds the matrix, sent to it as "
                                     "it was built; --mem for a host cache"
                                   : "default on a GPU: the GPU holds the matrix, regenerated at "
                                     "upload; --mem for a host cache")
                        : deflt;
  printf("budget           %s (%s)\n", cis_format_bytes((double)h->stats.budget, b1, sizeof b1),
         why);
  printf("build            %.3f s (space %.3f s, matrix %.3f s), %.3g elements generated\n",
         r->t_space + r->t_hmat, r->t_space, r->t_hmat, (double)h->stats.elements_generated);
  printf("device           %s\n", r->be->desc);
  if (r->be->ops->report) r->be->ops->report((cis_backend *)r->be, stdout);
  printf("\n%5s %5s %6s  %-20s %-10s %s\n", "iter", "basis", "conv", "lowest energy (Eh)",
         "max |r|", "");
  fflush(stdout);
}

int cis_report_iter(void *ctx, int iter, int k, const double *evals, const double *rnorm,
                    const int *conv, int nbasis) {
  cis_report *r = (cis_report *)ctx;
  if (quiet(r)) return 0;
  int nconv = 0;
  double rmax = 0;
  for (int j = 0; j < k; j++) {
    nconv += conv[j] != 0;
    if (rnorm[j] > rmax) rmax = rnorm[j];
  }
  printf("%5d %5d %3d/%-2d  %20.12f %10.3e\n", iter, nbasis, nconv, k, evals[0] + r->h->ecore,
         rmax);
  if (r->opt->verbose && k > 1) {
    for (int j = 0; j < k; j++)
      printf("        root %-3d %20.12f  |r| %10.3e%s\n", j, evals[j] + r->h->ecore, rnorm[j],
             conv[j] ? "  converged" : "");
  }
  fflush(stdout);
  r->last_iter_printed = iter;
  return 0;
}

typedef struct {
  double c;
  int64_t i;
} coef;

static int by_abs_desc(const void *a, const void *b) {
  double x = fabs(((const coef *)a)->c), y = fabs(((const coef *)b)->c);
  return (x < y) - (x > y);
}

/* The `m` largest |c| of one vector, by a bounded insertion (n may be large, m is small). */
static int leading(const double *v, int64_t n, coef *top, int m) {
  int cnt = 0;
  for (int64_t i = 0; i < n; i++) {
    double a = fabs(v[i]);
    if (cnt == m && a <= fabs(top[cnt - 1].c)) continue;
    int pos = cnt < m ? cnt++ : m - 1;
    while (pos > 0 && fabs(top[pos - 1].c) < a) {
      top[pos] = top[pos - 1];
      pos--;
    }
    top[pos].c = v[i];
    top[pos].i = i;
  }
  qsort(top, (size_t)cnt, sizeof *top, by_abs_desc);
  return cnt;
}

static void print_leading(const cis_report *r, const double *v) {
  const cis_hmat *h = r->h;
  coef top[5];
  int cnt = leading(v, h->n, top, 5);
  char *occ = NULL;
  if (h->space && cis_malloc(&occ, (size_t)cis_space_norb(h->space) + 1, 1, "occupation") != CIS_OK)
    return;
  for (int t = 0; t < cnt; t++) {
    if (h->space) {
      cis_space_det_string(h->space, top[t].i, occ);
      printf("      %+.8f  (weight %.6f)  %s\n", top[t].c, top[t].c * top[t].c, occ);
    } else {
      int64_t row = h->perm ? h->perm[top[t].i] : top[t].i;
      printf("      %+.8f  (weight %.6f)  row %lld\n", top[t].c, top[t].c * top[t].c,
             (long long)row + 1);
    }
  }
  cis_free(&occ);
}

/* Degenerate groups, the spin target, the root check and natural occupations. */
static void print_analysis(const cis_report *r, const cis_eig_result *res) {
  const cis_analysis *an = r->an;
  int K = res->nroots, nbad = 0;
  if (an->spin_set) {
    for (int j = 0; j < K; j++) nbad += an->spin_ok && !an->spin_ok[j];
    printf("spin             target <S^2> = %.6f (S = %g), penalty shift %g Eh: %s\n",
           an->spin_s2, r->opt->spin2 * 0.5, r->opt->spin_shift,
           nbad ? "SOME ROOTS MISS THE TARGET SPIN (flagged; raise --spin-shift)"
                : "every root has the target spin");
  }
  for (int j = 0; an->degen_group && j < K;) {
    int e = j;
    while (e + 1 < K && an->degen_group[e + 1] == j) e++;
    if (e > j)
      printf("degenerate       roots %d-%d degenerate (%d-fold), |dE| < %.0e Eh\n", j, e,
             e - j + 1, CIS_DEGEN_TOL);
    j = e + 1;
  }
  if (an->check_roots) {
    if (an->missed)
      printf("root check       MISSED ROOT: %d lower state%s found (lowest %.12f Eh, below root "
             "%d by more than %.0e Eh); included and re-converged\n",
             an->missed, an->missed > 1 ? "s" : "", an->check_lowest, K - 1, an->check_threshold);
    else if (an->check_conclusive)
      printf("root check       no missed root: the lowest state outside the %d roots found is "
             "%.12f Eh (threshold %.0e Eh)\n", K, an->check_lowest, an->check_threshold);
    else
      printf("root check       INCONCLUSIVE: the search outside the %d roots did not converge "
             "in %d iterations; its lowest energy so far, %.12f Eh, is above root %d, which "
             "proves nothing (ask for more roots, or a larger --ref-size)\n",
             K, an->check_iterations, an->check_lowest, K - 1);
  }
  for (int j = 0; an->noons && j < K; j++) {
    double sum = 0.0;
    printf("natural occupations, root %d:", j);
    for (int p = 0; p < an->norb; p++) {
      printf("%s%.6f", p % 8 ? " " : "\n     ", an->noons[j * an->norb + p]);
      sum += an->noons[j * an->norb + p];
    }
    printf("\n     (sum %.8f)\n", sum);
  }
}

void cis_report_results(const cis_report *r, const cis_eig_result *res, const double *s2) {
  const cis_hmat *h = r->h;
  double eref = h->space ? cis_space_hdiag(h->space)[0] + h->ecore : NAN;
  if (quiet(r)) {
    for (int j = 0; j < res->nroots; j++) printf("%.12f\n", res->evals[j] + h->ecore);
    return;
  }
  printf("\n%s after %d iterations, %lld matrix-vector products\n",
         res->all_converged ? "converged" : "NOT CONVERGED", res->iterations,
         (long long)res->matvecs);
  printf("\n%4s %20s %18s %12s %10s %s\n", "root", "total energy (Eh)", "correlation (Eh)",
         "<S^2>", "|r|", "");
  const cis_analysis *an = r->an;
  for (int j = 0; j < res->nroots; j++) {
    double e = res->evals[j] + h->ecore;
    int spin_bad = an && an->spin_ok && !an->spin_ok[j];
    printf("%4d %20.12f %18.12f %12.6f %10.3e %s%s%s\n", j, e, e - eref, s2 ? s2[j] : NAN,
           res->rnorm[j], res->converged[j] ? "" : "not converged",
           spin_bad && !res->converged[j] ? ", " : "", spin_bad ? "SPIN MISMATCH" : "");
  }
  if (h->space)
    printf("(correlation energy relative to the reference determinant, %.12f Eh)\n", eref);
  if (an) print_analysis(r, res);
  for (int j = 0; j < res->nroots; j++) {
    printf("\n  root %d, leading %s:\n", j, h->space ? "determinants (orbitals 1..norb: 2 a b 0)" : "components");
    print_leading(r, res->evecs + (size_t)j * (size_t)h->n);
  }
  double total = cis_wtime() - r->t_start;
  double other = total - r->t_space - r->t_hmat - r->t_upload - res->t_matvec - res->t_ortho;
  char b[32];
  printf("\ntimings          total %.3f s: build %.3f, upload %.3f, matvec %.3f (%.2f ms each), "
         "orthogonalisation %.3f, other %.3f\n",
         total, r->t_space + r->t_hmat, r->t_upload, res->t_matvec,
         res->matvecs ? 1e3 * res->t_matvec / (double)res->matvecs : 0.0, res->t_ortho,
         other > 0 ? other : 0.0);
  /* Where "other" went: the solver's own share is its calls less their products and
   * orthogonalisation (which includes checkpoint writes, printed apart). */
  double solver = r->t_solve - res->t_matvec - res->t_ortho - r->t_ckpt;
  double rest = other - r->t_read - r->t_device - r->t_ckpt - r->t_analysis -
                (solver > 0 ? solver : 0.0);
  printf("other time       input %.3f, device start %.3f, solver %.3f (guess, projected "
         "problems, residuals), checkpoints %.3f, <S^2> and analysis %.3f, rest %.3f\n",
         r->t_read, r->t_device, solver > 0 ? solver : 0.0, r->t_ckpt, r->t_analysis,
         rest > 0 ? rest : 0.0);
  printf("peak memory      %s (host)\n", cis_format_bytes((double)cis_peak_rss(), b, sizeof b));
  /* The backend's own account: for a GPU, placement and the split of each product. */
  if (r->be && r->be->ops->report) r->be->ops->report((cis_backend *)r->be, stdout);
  fflush(stdout);
}
