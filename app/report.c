#define _POSIX_C_SOURCE 200809L
#include "app/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "app/irrep_all.h"
#include "app/version.h"
#include "hamiltonian/orbitals.h"
#include "kernels/comm.h"
#include "hamiltonian/symmetry.h"

static int quiet(const cis_report *r) { return r->opt->quiet; }

/* What --frozen / --active kept of the input's orbitals (1-based, as in the FCIDUMP). */
static void report_window(const cis_problem *p) {
  const cis_orbital_window *w = &p->window;
  if (!w->applied) return;
  int n = w->norb_input, nk = p->ints.norb, nd = 0, *del = malloc(sizeof(int) * (size_t)n);
  char buf[256];
  if (!del) return;
  for (int q = w->nfrozen, k = 0; q < n; q++) {
    if (k < nk && w->kept[k] == q) k++;
    else del[nd++] = q;
  }
  cis_orbitals_format(w->kept, nk, buf, sizeof buf);
  printf("orbitals         %d of the input's %d kept: active %s; frozen (doubly occupied) ", nk,
         n, buf);
  if (w->nfrozen == 0) printf("none");
  else if (w->nfrozen == 1) printf("1");
  else printf("1-%d", w->nfrozen);
  cis_orbitals_format(del, nd, buf, sizeof buf);
  printf("; deleted %s\n", buf);
  printf("frozen core      %d electrons, %.10f Eh folded into the core energy (the input's "
         "%.10f Eh)\n", 2 * w->nfrozen, p->ints.ecore - w->ecore_input, w->ecore_input);
  free(del);
}

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
    report_window(p);
    const cis_target *t = r->target;
    if (t && t->irrep) {
      char name[48];
      cis_target_irrep_name(t, in, t->irrep, name, sizeof name);
      printf("irrep            %s: %s\n", name, t->irrep_why);
    } else if (t && t->irrep_why[0]) {
      printf("irrep            every irrep; %s\n", t->irrep_why);
    }
    if (t && t->ref[0]) printf("reference det    %s (0-based alpha/beta), %s\n", t->ref, t->ref_why);
  }
  fflush(stdout);
}

/* How the Reference region's size was chosen. */
static const char *region_why(const cis_report *r) {
  if (r->prob && r->prob->kind == CIS_PROBLEM_INTEGRALS && r->prob->space.kind == CIS_SPACE_MRCI)
    return "the MRCI model space";
  return r->opt->ref_size ? "--ref-size" : "automatic";
}

/* The space's determinants per irrep (those of the target marked), when ORBSYM gives them. */
static void report_irrep_dims(const cis_report *r, int has, const double *dims, int target) {
  if (!has || !r->prob || r->prob->kind != CIS_PROBLEM_INTEGRALS) return;
  const cis_integrals *in = &r->prob->ints;
  cis_target none = {.group = -1};
  const cis_target *t = r->target ? r->target : &none;
  int shown = 0;
  for (int g = 0; g < 8; g++) {
    if (dims[g] <= 0.0) continue;
    char name[48];
    cis_target_irrep_name(t, in, g + 1, name, sizeof name);
    printf("%s%s %.0f%s", shown ? ", " : "by irrep         ", name, dims[g],
           target == g + 1 ? " (this run's)" : "");
    shown++;
  }
  if (shown) printf("\n");
}

/* ---- the plan's decisions: one way of printing them, for a run and for --dry-run ---------- */

/* Why the host cache has the budget it has: --mem, the GPU taking every block (sent to it as
 * they are built, through the pool, or regenerated once at upload), or the default and what
 * bounded it (the machine's memory, a cgroup or an address-space limit). */
static const char *budget_why(const cis_plan_decisions *d, int cache_none, int pool, char *buf,
                              size_t cap) {
  if (d->host_cache_asked) return "--mem";
  if (cache_none)
    return pool ? "default on a GPU: the GPU holds the matrix, sent to it as it is built; --mem "
                  "for a host cache"
                : "default on a GPU: the GPU holds the matrix, regenerated at upload; --mem for "
                  "a host cache";
  cis_host_mem hm;
  cis_host_mem_probe("", &hm);
  snprintf(buf, cap, "default: 3/4 of the available memory less the solver's vectors");
  if (hm.least != hm.meminfo)
    snprintf(buf, cap, "default: 3/4 of what %s leaves, less the solver's vectors", hm.bound);
  return buf;
}

/* The solver's n-length vectors (solver/eigs.h cis_eig_vectors): where the solver works (a
 * GPU's memory, where the backend keeps room for them, or the host's) and the host's copies;
 * with --verbose, what they are. */
static void report_vectors(const cis_report *r, const cis_plan_decisions *d, int on_gpu) {
  char b1[32], b2[32];
  int64_t host = d->host_vectors - d->device_vectors;
  if (on_gpu)
    printf("solver vectors   %lld of length %lld on the GPU (%s, room kept when the matrix is "
           "placed), %lld copies on the host\n",
           (long long)d->device_vectors, (long long)d->n,
           cis_format_bytes((double)(d->device_vectors * d->n * 8), b1, sizeof b1),
           (long long)host);
  else
    printf("solver vectors   %lld of length %lld in host memory (%s), %lld of them copies\n",
           (long long)d->host_vectors, (long long)d->n,
           cis_format_bytes((double)(d->host_vectors * d->n * 8), b1, sizeof b1),
           (long long)host);
  if (r->op && cis_backend_is_part(r->op->be)) { /* several ranks: the vectors split by rows */
    const cis_backend *be = r->op->be;
    int64_t gathered = cis_plan_rank_vectors(r->opt, 0, 0, d->n);
    printf("                 split by rows over the ranks: rank 0 holds %lld of the %lld rows "
           "of each of the %lld the solver works on (%s), and up to %lld whole vectors gathered "
           "for a product (%s)\n",
           (long long)be->n, (long long)be->n_global, (long long)d->device_vectors,
           cis_format_bytes((double)(d->device_vectors * be->n * 8), b1, sizeof b1),
           (long long)gathered, cis_format_bytes((double)(gathered * d->n * 8), b2, sizeof b2));
  }
  if (r->opt->verbose)
    printf("                 at most, over the run: the Davidson basis and its products, Ritz "
           "vectors, residuals and scratch (or Lanczos's basis, or the lowest-state check's "
           "search); the copies: the results, a checkpoint's vectors and products, a "
           "restart's\n");
}

/* The stored matrix: its nonzeros, what the host holds, the budget and the build. */
static void report_stored(const cis_report *r) {
  const cis_hmat *h = r->h;
  const cis_hyb *y = &h->hyb;
  int64_t nnz = y->ell.nnz + y->nnz_exp;
  char b1[32], b2[32], b3[32];
  if (cis_comm_size() > 1) /* rank 0's rows: the `ranks` line gives every rank's */
    printf("nonzeros         %lld in rank 0's rows: Reference (ELL) %lld, Expansion (CSR) %lld\n",
           (long long)nnz, (long long)y->ell.nnz, (long long)y->nnz_exp);
  else
    printf("nonzeros         %lld (%.1f per row): Reference (ELL) %lld, Expansion (CSR) %lld\n",
           (long long)nnz, h->n ? (double)nnz / (double)h->n : 0.0, (long long)y->ell.nnz,
           (long long)y->nnz_exp);
  /* An operator on a device says itself what it holds and streams (its report, below); here
   * the host's part only. */
  if (r->op->ops->report)
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
  char deflt[200];
  const cis_plan_decisions *d = r->dec;
  if (y->device_built) {
    printf("build            %.3f s (space %.3f s, matrix %.3f s): the rows counted on the GPU "
           "(%.3f s), the host stores none; the upload generates them into the GPU's layouts "
           "(--build host: on the host's threads)\n",
           r->t_space + r->t_hmat, r->t_space, r->t_hmat, h->stats.t_gpu_count);
    return;
  }
  const char *why = budget_why(d, h->stats.budget == 0 && d->cache_none_within > 0 && h->space,
                               y->sink != NULL, deflt, sizeof deflt);
  printf("budget           %s (%s)\n", cis_format_bytes((double)h->stats.budget, b1, sizeof b1),
         why);
  printf("build            %.3f s (space %.3f s, matrix %.3f s), %.3g elements generated\n",
         r->t_space + r->t_hmat, r->t_space, r->t_hmat, (double)h->stats.elements_generated);
  if (h->stats.gpu_build_note[0])
    printf("note             the rows were built on the host, not on the GPU: %s\n",
           h->stats.gpu_build_note);
}

/* Why --matrix-free auto stored the rows or not (run and plan alike). */
static void report_matrix_free_auto(const cis_plan_decisions *d) {
  if (!d || !d->mf_auto) return;
  printf("matrix-free      %s (--matrix-free auto): about %lld products expected, storing the "
         "rows pays after about %lld%s\n", d->matrix_free ? "chosen" : "not chosen",
         (long long)d->mf_expected, (long long)d->mf_breakeven,
         d->matrix_free ? "" : " (--matrix-free asks for it)");
}

void cis_report_matrix(const cis_report *r) {
  if (quiet(r)) return;
  const cis_hmat *h = r->h;
  if (h->space) {
    printf("space            %s, %lld determinants\n", cis_space_describe(h->space),
           (long long)h->n);
    double dims[8];
    int has = cis_space_irrep_dims(h->space, dims);
    report_irrep_dims(r, has, dims, cis_space_irrep(h->space));
    int g = cis_space_irrep(h->space);
    if (has && g && r->prob->space.kind == CIS_SPACE_LIST) {
      double other = 0.0;
      for (int x = 0; x < 8; x++) other += x == g - 1 ? 0.0 : dims[x];
      if (other > 0)
        printf("note             %.0f determinants of the list are of other irreps: removed\n",
               other);
    }
  }
  printf("reference region %lld determinants (%s)", (long long)h->nref, region_why(r));
  if (h->npre < h->nref)
    printf("; the preconditioner's dense block is its first %lld", (long long)h->npre);
  printf("\n");
  report_matrix_free_auto(r->dec);
  if (h->matrix_free) {
    printf("nonzeros         about %.3g%s (sampled), none stored (--matrix-free): every product "
           "generates the rows\n", h->mf_nnz, cis_comm_size() > 1 ? " in rank 0's rows" : "");
    printf("build            %.3f s (space %.3f s, the row generator and the preconditioner's "
           "block %.3f s)\n", r->t_space + r->t_hmat, r->t_space, r->t_hmat);
  } else {
    report_stored(r);
  }
  printf("device           %s\n", r->be->desc);
  cis_operator_report(r->op, stdout);
  report_vectors(r, r->dec, r->be->is_device);
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

/* Where the symmetry blocks of the check came from. */
static void print_symmetry(const cis_report *r) {
  const cis_hmat *h = r->h;
  if (!h->space) {
    printf("connected components of the matrix");
    return;
  }
  static const char *orbsym[] = {"", ", as ORBSYM states", ", more than ORBSYM states",
                                 "; ORBSYM is not a symmetry of these integrals"};
  cis_space_symmetry y = cis_space_symmetry_info(h->space);
  int which = y.orbsym == CIS_ORBSYM_BROKEN ? 3
              : y.orbsym == CIS_ORBSYM_AGREES ? (y.orbsym_bits == y.nbits ? 1 : 2)
                                              : 0;
  printf("%d label%s of %d symmetr%s found in the integrals%s%s%s", y.nblocks,
         y.nblocks == 1 ? "" : "s", y.nbits, y.nbits == 1 ? "y" : "ies",
         y.blocks_more ? " (and more labels)" : "", orbsym[which],
         cis_space_ref_partners(h->space) ? "; Ms = 0: split by spin parity" : "");
}

/* The default check that the roots are the lowest states (cis_check_blocks). */
static void print_block_check(const cis_report *r, const cis_eig_result *res) {
  const cis_blockcheck *b = &r->an->blocks;
  int K = res->nroots;
  printf("lowest states    %d symmetry block%s (", b->nblocks, b->nblocks == 1 ? "" : "s");
  print_symmetry(r);
  printf("): %d search%s within %.3g Eh above root %d, %d block%s beyond it", b->searched,
         b->searched == 1 ? "" : "es", b->window, K - 1, b->beyond, b->beyond == 1 ? "" : "s");
  if (b->bounded) printf(", %d bounded above it", b->bounded);
  if (b->missed)
    printf(";\n                 MISSED STATE: %d lower state%s found and included, the roots "
           "converged again; %lld products\n", b->missed, b->missed > 1 ? "s" : "",
           (long long)b->matvecs);
  else
    printf("; no lower state (%lld products)\n", (long long)b->matvecs);
  static const char *how[] = {"lower state", "above", "degenerate with the last root",
                              "no answer"};
  for (int i = 0; r->opt->verbose && i < b->nlog; i++)
    printf("  search %-3d block %-3d from %.10f to %.10f Eh, |r| %.2e, %d products: %s\n", i,
           b->log[i].block, b->log[i].start + r->h->ecore, b->log[i].end + r->h->ecore,
           b->log[i].rnorm, b->log[i].products, how[b->log[i].outcome]);
  if (b->unsettled)
    printf("lowest states    %d search%s ended without an answer: --check-roots full searches "
           "further\n", b->unsettled, b->unsettled == 1 ? "" : "es");
  if (b->degenerate)
    printf("note             root %d has a degenerate partner outside the %d roots "
           "(--nroots %d includes it)\n", K - 1, K, K + 1);
}

/* Degenerate groups, the spin target, the root checks and natural occupations. */
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
  if (an->check_blocks) print_block_check(r, res);
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
  if (cis_irrep_all_current()) {
    double e[64];
    int k = res->nroots < 64 ? res->nroots : 64;
    for (int j = 0; j < k; j++) e[j] = res->evals[j] + h->ecore;
    cis_irrep_all_record(k, e, s2);
  }
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
  if (cis_comm_size() > 1) /* a rank waits for the slowest at its first collective step */
    printf("ranks' times     build %.3f-%.3f s, upload %.3f-%.3f s, matvec %.3f-%.3f s (the "
           "fastest and slowest of the %d ranks)\n",
           r->rank_min[0], r->rank_max[0], r->rank_min[1], r->rank_max[1], r->rank_min[2],
           r->rank_max[2], cis_comm_size());
  printf("peak memory      %s (host)\n", cis_format_bytes((double)cis_peak_rss(), b, sizeof b));
  /* The operator's own account: for a GPU, placement and the split of each product. */
  cis_operator_report(r->op, stdout);
  fflush(stdout);
}

/* ---- the plan (--dry-run) --------------------------------------------------------------- */

/* "about 1.13e+09" for an estimate, the number itself when counted. */
static const char *count_str(int64_t v, int exact, char *buf, size_t len) {
  if (exact)
    snprintf(buf, len, "%lld", (long long)v);
  else
    snprintf(buf, len, "about %.4g", (double)v);
  return buf;
}

static void plan_nonzeros(const cis_plan *pl) {
  const cis_hmat_plan *hm = &pl->hm;
  char b1[48], b2[48], b3[48];
  int64_t nnz = hm->nnz_ref + hm->nnz_exp;
  printf("nonzeros         %s (%.1f per row): Reference (ELL) %s, Expansion (CSR) %s", 
         count_str(nnz, hm->exact, b1, sizeof b1), hm->n ? (double)nnz / (double)hm->n : 0.0,
         count_str(hm->nnz_ref, hm->exact, b2, sizeof b2),
         count_str(hm->nnz_exp, hm->exact, b3, sizeof b3));
  if (pl->space[0] && hm->exact)
    printf("; counted: every row generated (and none stored)\n");
  else if (pl->space[0])
    printf("; estimated from %lld rows spread over the space, +-%.2g%% (two standard errors)\n",
           (long long)hm->nsample, 200.0 * hm->rel_err);
  else
    printf("; counted\n");
}

static void plan_host(const cis_plan *pl) {
  const cis_hmat_plan *hm = &pl->hm;
  char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32], deflt[200];
  const char *why = budget_why(&pl->dec, hm->cache_none, pl->place.pool, deflt, sizeof deflt);
  printf("host cache       budget %s (%s): ", cis_format_bytes((double)hm->budget, b1, sizeof b1),
         why);
  if (!pl->space[0] && hm->need > hm->budget)
    printf("too small for the Expansion blocks' %s: a run stops with exit code 4\n",
           cis_format_bytes((double)hm->need, b2, sizeof b2));
  else if (hm->ncached == 0 && hm->cache_none)
    printf("none of the %lld Expansion blocks of %lld rows cached: the GPU holds them\n",
           (long long)hm->nblocks, (long long)hm->block_rows);
  else if (hm->ncached == hm->nblocks)
    printf("every Expansion block cached, %lld blocks of %lld rows, %s\n", (long long)hm->nblocks,
           (long long)hm->block_rows, cis_format_bytes((double)hm->cached_bytes, b2, sizeof b2));
  else
    printf("%lld of %lld Expansion blocks of %lld rows cached (%s of %s), the others %s\n",
           (long long)hm->ncached, (long long)hm->nblocks, (long long)hm->block_rows,
           cis_format_bytes((double)hm->cached_bytes, b2, sizeof b2),
           cis_format_bytes((double)hm->exp_bytes, b3, sizeof b3),
           pl->device == CIS_PLAN_GPU ? "held by the GPU or regenerated (below)"
                                      : "regenerated in every product");
  printf("host memory      about %s: the cache %s, the ELL block %s, the solver's vectors %s "
         "(%lld of length %lld), %s %s, the input %s",
         cis_format_bytes((double)pl->host_bytes, b1, sizeof b1),
         cis_format_bytes((double)hm->cached_bytes, b2, sizeof b2),
         cis_format_bytes((double)hm->ell_bytes, b3, sizeof b3),
         cis_format_bytes((double)pl->vector_bytes, b4, sizeof b4), (long long)pl->host_vectors,
         (long long)hm->n, pl->space[0] ? "the space and its link tables" : "the permutation",
         cis_format_bytes((double)pl->space_bytes, b5, sizeof b5),
         cis_format_bytes((double)pl->input_bytes, b6, sizeof b6));
  if (pl->copy_bytes)
    printf(", its permuted copy %s", cis_format_bytes((double)pl->copy_bytes, b1, sizeof b1));
  printf("\n");
}

static void plan_gpu_lines(const cis_plan *pl, int r_gpu_mem) {
  const cis_hmat_plan *hm = &pl->hm;
  const cis_place_plan *g = &pl->place;
  char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32], b7[32], b8[32];
  printf("gpu memory       about %s of %s: the matrix is offered %s (%s; %s kept for %lld "
         "solver vectors); ELL block %s, resident Expansion %s, workspace and row pointers %s, "
         "%s %s%s\n",
         cis_format_bytes((double)pl->gpu_bytes, b1, sizeof b1),
         cis_format_bytes((double)pl->gpu.memory, b2, sizeof b2),
         cis_format_bytes((double)pl->gpu_offer, b3, sizeof b3),
         r_gpu_mem ? "--gpu-mem" : "95% of the memory less the vectors' room",
         cis_format_bytes((double)(pl->gpu_vectors * hm->n * 8), b4, sizeof b4),
         (long long)pl->gpu_vectors, cis_format_bytes((double)g->ell_bytes, b5, sizeof b5),
         cis_format_bytes((double)g->resident_bytes, b6, sizeof b6),
         cis_format_bytes((double)(g->min_bytes - g->ell_bytes), b7, sizeof b7),
         g->devgen ? "the row generator's tables" : "streaming buffers",
         cis_format_bytes((double)(g->devgen ? hm->devgen_bytes : g->stream_reserve), b8,
                          sizeof b8),
         g->streamed_blocks ? "" : " kept back (nothing streams)");
  if (g->min_bytes > pl->gpu_offer) {
    printf("gpu placement    the ELL block and the workspace need %s, more than the %s offered: "
           "a run stops with exit code 4 (--gpu-mem, or a smaller --ref-size)\n",
           cis_format_bytes((double)g->min_bytes, b1, sizeof b1),
           cis_format_bytes((double)pl->gpu_offer, b2, sizeof b2));
    return;
  }
  if (g->streamed_blocks == 0)
    printf("gpu placement    every Expansion block resident (%lld), %s\n", (long long)hm->nblocks,
           g->gpu_build ? "generated into place on the GPU at upload (--build gpu)"
           : g->regenerated_at_upload == 0 ? "copied from the host cache at upload"
           : g->pool ? "sent to the GPU as the build generates them (the build's pool)"
                     : "regenerated once at upload (the host caches them not)");
  else if (g->devgen)
    printf("gpu placement    %lld of %lld Expansion blocks resident%s; %lld generated on the GPU "
           "in every product (row generator tables %s)\n",
           (long long)g->resident_blocks, (long long)hm->nblocks,
           g->gpu_build                 ? " (generated into place on the GPU at upload)"
           : g->regenerated_at_upload ? " (some regenerated once at upload)"
                                      : "",
           (long long)g->streamed_blocks, cis_format_bytes((double)hm->devgen_bytes, b1, sizeof b1));
  else
    printf("gpu placement    %lld of %lld Expansion blocks resident%s; %lld streamed in every "
           "product, %lld of them from the host cache and %lld regenerated by the host\n",
           (long long)g->resident_blocks, (long long)hm->nblocks,
           g->regenerated_at_upload ? " (some regenerated once at upload)" : "",
           (long long)g->streamed_blocks,
           (long long)CIS_MIN(g->streamed_cached, g->streamed_blocks),
           (long long)(g->streamed_blocks - CIS_MIN(g->streamed_cached, g->streamed_blocks)));
  char coded[160] = "plain values (12 bytes an entry)";
  if (!pl->space[0]) /* no census before the upload: its own decides */
    snprintf(coded, sizeof coded, "plain values (12 bytes an entry) unless the upload finds "
             "that they repeat");
  else if (g->coded)
    snprintf(coded, sizeof coded, "coded values: a dictionary of %d magnitudes codes %.0f%% of "
             "the sampled entries (%d bytes an entry instead of %d)", hm->dict_size,
             100.0 * hm->dict_cover, 2 + g->csr_bits / 8, 8 + g->csr_bits / 8);
  if (g->sell_candidate)
    printf("gpu layout       SELL-32, a lane per row, where its padding adds at most a quarter "
           "and the upload has room for it (counted at upload; else the hybrid layout below)\n");
  printf("gpu layout       hybrid: Reference ELL%s with %d-bit columns; Expansion CSR with %d-bit "
         "columns, %s\n", g->tiled ? " in tiles of 2048 columns" : "", g->index_bits,
         g->csr_bits, coded);
}

static void plan_cost(const cis_plan *pl) {
  const cis_hmat_plan *hm = &pl->hm;
  char b1[32], b2[32], rate[160] = "";
  int gpu = pl->device == CIS_PLAN_GPU;
  if (hm->gen_rate > 0)
    snprintf(rate, sizeof rate, "the sampled rate, %.3g elements a second on each of %d threads",
             hm->gen_rate, pl->threads);
  printf("product          reads %s of matrix %s",
         cis_format_bytes((double)pl->product_read, b1, sizeof b1),
         gpu ? "on the GPU" : "from host memory");
  if (gpu)
    printf(", sends %s from the host", cis_format_bytes((double)pl->product_sent, b2, sizeof b2));
  if (pl->product_gpu_gen > 0)
    printf(", generates about %.3g elements on the GPU\n", (double)pl->product_gpu_gen);
  else if (pl->product_regen == 0)
    printf(", regenerates nothing\n");
  else if (pl->product_regen_seconds > 0)
    printf(", regenerates about %.3g elements on the host: about %.3g s at %s (an estimate)\n",
           (double)pl->product_regen, pl->product_regen_seconds, rate);
  else
    printf(", regenerates about %.3g elements on the host\n", (double)pl->product_regen);
  if (pl->space[0] && hm->gen_rate > 0) {
    double elements = (double)(hm->nnz_ref + hm->nnz_exp);
    printf("build            generates about %.3g elements: generating them alone takes about "
           "%.3g s at %s (an estimate; storing them adds to it)\n",
           elements, elements / (hm->gen_rate * pl->threads), rate);
  }
}

void cis_report_plan(const cis_report *r, const cis_plan *pl) {
  const cis_hmat_plan *hm = &pl->hm;
  char b1[32];
  printf("dry run          the plan of this run: the space is built and rows are sampled, no "
         "matrix is built, no file written\n");
  if (pl->space[0]) {
    printf("space            %s, %lld determinants\n", pl->space, (long long)hm->n);
    report_irrep_dims(r, pl->has_irrep_dims, pl->irrep_dim, pl->irrep);
  } else
    printf("space            explicit matrix, n = %lld\n", (long long)hm->n);
  printf("reference region %lld determinants (%s)", (long long)hm->nref, region_why(r));
  if (hm->npre < hm->nref)
    printf("; the preconditioner's dense block is its first %lld", (long long)hm->npre);
  printf("\n");
  plan_nonzeros(pl);
  if (pl->device == CIS_PLAN_GPU)
    printf("device           GPU %d: %s, %s, compute capability %d.%d (from its properties; a "
           "run checks it is usable)\n", r->opt->device_index < 0 ? 0 : r->opt->device_index,
           pl->gpu.name, cis_format_bytes((double)pl->gpu.memory, b1, sizeof b1),
           pl->gpu.major, pl->gpu.minor);
  else if (pl->device == CIS_PLAN_NO_GPU)
    printf("device           --device gpu, but no usable GPU (%s): a run stops with exit code 4; "
           "the host's part below is what it builds first\n", pl->note);
  else if (pl->note[0])
    printf("device           CPU, %d threads (%s)\n", pl->threads, pl->note);
  else
    printf("device           CPU, %d threads\n", pl->threads);
  report_matrix_free_auto(&pl->dec);
  if (pl->dec.matrix_free) {
    int gpu = pl->device == CIS_PLAN_GPU;
    printf("matrix-free      nothing stored: every product generates about %.3g elements %s%s\n",
           (double)(hm->nnz_ref + hm->nnz_exp), gpu ? "on the GPU" : "on the host's threads",
           gpu && hm->devgen_bytes > 0 ? "" : gpu ? " (the device generator cannot: a run "
           "stops, hamiltonian/rowgen_cuda.h)" : "");
    if (gpu && hm->devgen_bytes > 0)
      printf("gpu memory       the row generator's tables %s, and the solver's vectors\n",
             cis_format_bytes((double)hm->devgen_bytes, b1, sizeof b1));
    report_vectors(r, &pl->dec, gpu);
    fflush(stdout);
    return;
  }
  plan_host(pl);
  if (pl->device == CIS_PLAN_GPU)
    plan_gpu_lines(pl, r->opt->gpu_mem > 0 && pl->gpu_offer == r->opt->gpu_mem);
  report_vectors(r, &pl->dec, pl->device == CIS_PLAN_GPU);
  if (!(!pl->space[0] && hm->need > hm->budget)) plan_cost(pl);
  fflush(stdout);
}

/* ---- progress of long passes ------------------------------------------------------------- */

#define CIS_PROGRESS_TTY_FIRST 1.0  /* seconds into a pass before a terminal's line appears */
#define CIS_PROGRESS_TTY_EVERY 0.25 /* between its updates */
#define CIS_PROGRESS_LOG_EVERY 10.0 /* a log's: before its first line, and between lines */

static const char *duration(double s, char *buf, size_t len) {
  if (s < 10)
    snprintf(buf, len, "%.1f s", s);
  else if (s < 120)
    snprintf(buf, len, "%.0f s", s);
  else if (s < 7200)
    snprintf(buf, len, "%.0f min", s / 60);
  else
    snprintf(buf, len, "%.1f h", s / 3600);
  return buf;
}

static void meter_update(cis_progress *p, const char *what, int64_t done, int64_t total) {
  cis_report_meter *m = (cis_report_meter *)p;
  double now = cis_wtime();
  if (done == 0) { /* a pass starts */
    m->t0 = now;
    m->next = now + m->first;
    m->shown = 0;
    return;
  }
  if (now < m->next || total <= 0) return;
  m->next = now + m->every;
  double el = now - m->t0, rate = el > 0 ? (double)done / el : 0.0;
  char t1[32], t2[32];
  if (m->tty)
    printf("\rprogress         %s: %.1f%% (%lld of %lld rows), %.3g rows/s, about %s left\033[K",
           what, 100.0 * (double)done / (double)total, (long long)done, (long long)total, rate,
           duration(rate > 0 ? (double)(total - done) / rate : 0.0, t1, sizeof t1));
  else
    printf("progress         %s: %.1f%% (%lld of %lld rows) in %s, %.3g rows/s, about %s left\n",
           what, 100.0 * (double)done / (double)total, (long long)done, (long long)total,
           duration(el, t1, sizeof t1), rate,
           duration(rate > 0 ? (double)(total - done) / rate : 0.0, t2, sizeof t2));
  fflush(stdout);
  m->shown = 1;
}

/* A terminal's line is cleared: the report's own lines follow. */
static void meter_finish(cis_progress *p) {
  cis_report_meter *m = (cis_report_meter *)p;
  if (m->tty && m->shown) {
    printf("\r\033[K");
    fflush(stdout);
  }
  m->shown = 0;
}

cis_progress *cis_report_progress(cis_report *r) {
  cis_report_meter *m = &r->meter;
  if (quiet(r)) return NULL;
  memset(m, 0, sizeof *m);
  m->base.update = meter_update;
  m->base.finish = meter_finish;
  m->tty = isatty(STDOUT_FILENO);
  m->first = m->tty ? CIS_PROGRESS_TTY_FIRST : CIS_PROGRESS_LOG_EVERY;
  m->every = m->tty ? CIS_PROGRESS_TTY_EVERY : CIS_PROGRESS_LOG_EVERY;
  const char *env = getenv("CISOLVE_PROGRESS_INTERVAL");
  double sec;
  if (env && *env && cis_parse_double(env, "CISOLVE_PROGRESS_INTERVAL", &sec) == CIS_OK &&
      sec >= 0)
    m->first = m->every = sec;
  cis_error_clear();
  return &m->base;
}
