/* The operators (kernels/operator.h) against one another: every implementation must give the
 * same products, k = 1 and k > 1, and the solver the same energies with each.
 *
 * usage: test_operators random
 *        test_operators FCIDUMP [SPIN2 SHIFT]
 * random: seeded random matrices (tests/tools/random_csr.h, larger than a warp, empty and long
 * rows), each as a dense operator (kernels/dense_op.c) and as the hybrid matrix on the CPU
 * (spmv/hyb_op.c) split at several boundaries, products compared; the solver refuses an
 * operator made for another backend, and without CUDA the GPU operator is not compiled.
 * FCIDUMP: the FCI Hamiltonian (with the spin penalty SHIFT (S^2 - S(S+1)), 2S = SPIN2, when
 * given), over a space with a Reference region of about 7 determinants, as the hybrid matrix
 * with every block cached, the hybrid matrix with none cached (every Expansion block
 * regenerated in each product), the
 * row-generating operator (hamiltonian/hmat_op.c) and, where small enough, a dense operator
 * from the matrix's elements: products compared, then Davidson with the stored and with the
 * row-generating operator, whose energies must agree to 1e-10. The row-generating operator
 * refuses an explicit matrix. Relative product errors must be <= 1e-12.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/tools/expect.h"
#include "tests/tools/random_csr.h"
#include "hamiltonian/hmat.h"
#include "hamiltonian/hmat_op.h"
#include "hamiltonian/space.h"
#include "io/input.h"
#include "kernels/operator.h"
#include "solver/eigs.h"
#include "spmv/hyb_op.h"

#define TOL 1e-12
#define DENSE_MAX 2500 /* largest order compared with a dense operator */

static const int ks[] = {1, 3, 8};
#define NK ((int)(sizeof ks / sizeof *ks))
#define KMAX 8

/* max |Y - R| / max |R| over n x k. */
static double rel_err(int64_t nk, const double *Y, const double *R) {
  double d = 0.0, s = 0.0;
  for (int64_t i = 0; i < nk; i++) {
    d = fmax(d, fabs(Y[i] - R[i]));
    s = fmax(s, fabs(R[i]));
  }
  return s > 0.0 ? d / s : d;
}

/* The products of op with the first k columns of X, k in ks, against those of ref (and the
 * products' count). */
static void compare(const char *what, cis_operator *op, cis_operator *ref, const double *X) {
  int64_t n = op->n;
  double *Y = malloc((size_t)n * KMAX * sizeof *Y), *R = malloc((size_t)n * KMAX * sizeof *R);
  EXPECT(Y && R, "out of memory");
  for (int i = 0; Y && R && i < NK; i++) {
    int k = ks[i];
    int64_t before = op->n_matvec;
    for (int64_t q = 0; q < n * k; q++) Y[q] = NAN;
    cis_err e = cis_operator_apply(op, k, X, Y);
    EXPECT(e == CIS_OK, "%s k=%d: %s", what, k, cis_error_message());
    EXPECT(cis_operator_apply(ref, k, X, R) == CIS_OK, "%s k=%d: reference: %s", what, k,
           cis_error_message());
    EXPECT(op->n_matvec == before + k, "%s k=%d: %lld products counted", what, k,
           (long long)(op->n_matvec - before));
    double r = rel_err(n * k, Y, R);
    printf("%-4s %s, k=%d: relative error %.2e\n", r <= TOL ? "ok" : "FAIL", what, k, r);
    EXPECT(r <= TOL, "%s k=%d: relative error %.3e", what, k, r);
  }
  free(Y);
  free(R);
}

static double *random_block(int64_t n) {
  double *X = malloc((size_t)n * KMAX * sizeof *X);
  for (int64_t q = 0; X && q < n * KMAX; q++) X[q] = 2.0 * urand() - 1.0;
  return X;
}

/* A random n x n matrix as a dense operator and as the hybrid one split at `boundary`. */
static void random_case(int64_t n, int avg, int dense, int64_t boundary, int64_t block_rows) {
  csr m;
  cis_hyb H;
  cis_backend *be = NULL;
  cis_operator *dop = NULL, *hop = NULL;
  char what[128];
  memset(&H, 0, sizeof H);
  make_csr(n, avg, dense, 0, boundary, 4, 0, &m);
  double *A = calloc((size_t)(n * n), sizeof *A), *X = random_block(n);
  EXPECT(A && X, "out of memory");
  if (!A || !X) goto done;
  for (int64_t i = 0; i < n; i++)
    for (int64_t q = m.rowptr[i]; q < m.rowptr[i + 1]; q++) A[i + (int64_t)m.col[q] * n] = m.val[q];
  int64_t nref = boundary < 50 ? boundary : 50;
  snprintf(what, sizeof what, "random n=%lld, boundary %lld, blocks of %lld rows (0: automatic): "
           "hybrid vs dense", (long long)n, (long long)boundary, (long long)block_rows);
  cis_operator_info info;
  if (cis_backend_create_cpu(n, 0, &be) || cis_dense_op_create(be, n, A, nref, &dop) ||
      cis_hyb_from_csr(n, m.rowptr, m.col, m.val, boundary, block_rows, 0, &H)) {
    EXPECT(0, "%s: setup: %s", what, cis_error_message());
    goto done;
  }
  info = (cis_operator_info){n, dop->diag, dop->nref, dop->ref_block};
  if (cis_hyb_op_create(&H, &info, be, &hop)) {
    EXPECT(0, "%s: %s", what, cis_error_message());
    goto done;
  }
  compare(what, hop, dop, X);
done:
  cis_operator_destroy(&hop);
  cis_operator_destroy(&dop);
  cis_backend_destroy(&be);
  cis_hyb_free(&H);
  csr_free(&m);
  free(A);
  free(X);
}

/* The solver refuses an operator made for another backend; without CUDA the GPU operator's
 * constructor says it was not compiled. */
static void misuse(void) {
  double A[4] = {1.0, 0.5, 0.5, 2.0};
  cis_backend *b1 = NULL, *b2 = NULL;
  cis_operator *op = NULL;
  cis_eig_opts o;
  cis_eig_result r;
  cis_eig_opts_default(&o, 1);
  memset(&r, 0, sizeof r);
  if (cis_backend_create_cpu(2, 0, &b1) || cis_backend_create_cpu(2, 0, &b2) ||
      cis_dense_op_create(b1, 2, A, 1, &op)) {
    EXPECT(0, "misuse: setup: %s", cis_error_message());
  } else {
    cis_err e = cis_davidson_solve(b2, op, &o, &r);
    int ok = e == CIS_ERR_INTERNAL && strstr(cis_error_message(), "does not multiply");
    printf("%-4s an operator of another backend: %s (\"%s\")\n", ok ? "ok" : "FAIL",
           cis_err_name(e), cis_error_message());
    EXPECT(ok, "the solver took an operator of another backend");
    cis_error_clear();
    e = cis_davidson_solve(b1, op, &o, &r);
    EXPECT(e == CIS_OK && fabs(r.evals[0] - (1.5 - sqrt(0.5))) < 1e-12,
           "2 x 2 dense: %s, E0 %.15f", cis_err_name(e), e == CIS_OK ? r.evals[0] : NAN);
    cis_eig_result_free(&r);
  }
#ifndef CISOLVE_HAVE_CUDA
  cis_operator *g = NULL;
  cis_hyb H;
  memset(&H, 0, sizeof H);
  cis_operator_info info = {2, A, 0, NULL};
  cis_err e = b1 ? cis_hyb_cuda_op_create(&H, &info, b1, 0, 0, &g) : CIS_ERR_INTERNAL;
  int ok = e == CIS_ERR_NOT_COMPILED && !g && strstr(cis_error_message(), "built without CUDA");
  printf("%-4s GPU operator without CUDA: %s (\"%s\")\n", ok ? "ok" : "FAIL", cis_err_name(e),
         cis_error_message());
  EXPECT(ok, "the GPU operator's stub");
  cis_error_clear();
#endif
  cis_operator_destroy(&op);
  cis_backend_destroy(&b1);
  cis_backend_destroy(&b2);
}

static int run_random(void) {
  misuse();
  random_case(300, 6, 40, 0, 64);     /* no Reference region */
  random_case(300, 6, 40, 300, 64);   /* no Expansion space */
  random_case(1000, 10, 200, 40, 97); /* long rows, uneven blocks */
  random_case(2000, 5, 60, 700, 0);   /* automatic blocks */
  return cis_test_summary();
}

/* The lowest 4 energies of op by Davidson. */
static cis_err lowest(cis_backend *be, cis_operator *op, double *e) {
  cis_eig_opts o;
  cis_eig_result r;
  cis_eig_opts_default(&o, 4);
  CIS_CALL(cis_davidson_solve(be, op, &o, &r));
  for (int j = 0; j < 4; j++) e[j] = r.evals[j];
  int ok = r.all_converged;
  cis_eig_result_free(&r);
  CIS_CHECK(ok, CIS_ERR_NUMERIC, "Davidson did not converge");
  return CIS_OK;
}

/* The dense matrix of h's elements (n <= DENSE_MAX), column-major. */
static double *dense_of(const cis_hmat *h) {
  cis_csr m;
  memset(&m, 0, sizeof m);
  double *A = calloc((size_t)(h->n * h->n), sizeof *A);
  if (!A || cis_hmat_to_csr(h, &m) != CIS_OK) {
    free(A);
    return NULL;
  }
  for (int64_t i = 0; i < h->n; i++)
    for (int64_t q = m.rowptr[i]; q < m.rowptr[i + 1]; q++)
      A[i + (int64_t)m.col[q] * h->n] = m.val[q];
  cis_csr_free(&m);
  return A;
}

static void explicit_refused(void) {
  int64_t rp[3] = {0, 2, 4};
  int32_t col[4] = {0, 1, 0, 1};
  double val[4] = {1.0, 0.5, 0.5, 2.0};
  cis_csr m = {.n = 2, .nnz = 4, .rowptr = rp, .col = col, .val = val};
  cis_hmat_opts ho = {.host_cache = 1 << 20};
  cis_hmat *h = NULL;
  cis_operator *op = NULL;
  cis_backend *b2 = NULL;
  if (cis_hmat_build_csr(&m, &ho, &h) || cis_backend_create_cpu(2, 0, &b2)) {
    EXPECT(0, "explicit matrix: %s", cis_error_message());
  } else {
    cis_err e = cis_hmat_rowgen_op_create(h, b2, &op);
    int ok = e == CIS_ERR_USAGE && !op && strstr(cis_error_message(), "explicit matrix");
    printf("%-4s row-generating operator of an explicit matrix: %s (\"%s\")\n", ok ? "ok" : "FAIL",
           cis_err_name(e), cis_error_message());
    EXPECT(ok, "the row-generating operator took an explicit matrix");
    cis_error_clear();
  }
  cis_operator_destroy(&op);
  cis_backend_destroy(&b2);
  cis_hmat_destroy(&h);
}

static int run_chem(const char *path, int spin2, double shift) {
  cis_problem p;
  cis_space *s7 = NULL;
  cis_hmat *hc = NULL, *hr = NULL;
  cis_backend *be = NULL;
  cis_operator *cached = NULL, *regen = NULL, *gen = NULL, *dense = NULL;
  double *X = NULL, *A = NULL, ec[4], eg[4];
  memset(&p, 0, sizeof p);
  cis_space_spec spec = {.kind = CIS_SPACE_FCI};
  cis_space_opts so7 = {7, 0, 0};
  cis_hmat_opts all = {.host_cache = (int64_t)1 << 30};
  cis_hmat_opts none = {.host_cache = 0, .block_rows = 32};
  double s2 = 0.25 * spin2 * (spin2 + 2);
  if (cis_input_read(path, &p) || cis_space_build(&p.ints, &spec, &so7, &s7) ||
      cis_hmat_build_ci_penalty(&p.ints, s7, &all, shift, s2, &hc) ||
      cis_hmat_build_ci_penalty(&p.ints, s7, &none, shift, s2, &hr)) {
    EXPECT(0, "%s: setup: %s", path, cis_error_message());
    goto done;
  }
  int64_t n = hc->n;
  printf("--   %s: %lld determinants, Reference region of %lld; %lld of %lld blocks cached, "
         "%lld of %lld without a budget\n", path, (long long)n, (long long)hc->nref,
         (long long)hc->hyb.ncached, (long long)hc->hyb.nblocks, (long long)hr->hyb.ncached,
         (long long)hr->hyb.nblocks);
  EXPECT(hc->hyb.ncached == hc->hyb.nblocks, "the cached matrix regenerates blocks");
  EXPECT(hr->hyb.ncached == 0 && hr->hyb.nblocks > 1, "the uncached matrix caches blocks");
  cis_operator_info ic = {n, hc->hdiag, hc->npre, hc->hpp};
  cis_operator_info ir = {n, hr->hdiag, hr->npre, hr->hpp};
  X = random_block(n);
  if (!X || cis_backend_create_cpu(n, 0, &be) || cis_hyb_op_create(&hc->hyb, &ic, be, &cached) ||
      cis_hyb_op_create(&hr->hyb, &ir, be, &regen) || cis_hmat_rowgen_op_create(hr, be, &gen)) {
    EXPECT(0, "%s: operators: %s", path, cis_error_message());
    goto done;
  }
  compare("regenerated hybrid vs cached hybrid", regen, cached, X);
  compare("row-generating vs cached hybrid", gen, cached, X);
  if (n <= DENSE_MAX) {
    A = dense_of(hc);
    if (!A || cis_dense_op_create(be, n, A, hc->npre, &dense)) {
      EXPECT(0, "%s: dense operator: %s", path, cis_error_message());
      goto done;
    }
    compare("cached hybrid vs dense", cached, dense, X);
    compare("row-generating vs dense", gen, dense, X);
  }
  if (lowest(be, cached, ec) || lowest(be, gen, eg)) {
    EXPECT(0, "%s: Davidson: %s", path, cis_error_message());
    goto done;
  }
  for (int j = 0; j < 4; j++) {
    double d = fabs(ec[j] - eg[j]);
    printf("%-4s root %d: stored %.12f, row-generating %.12f (%.1e)\n", d <= 1e-10 ? "ok" : "FAIL",
           j, ec[j], eg[j], d);
    EXPECT(d <= 1e-10, "root %d: %.3e apart", j, d);
  }
  explicit_refused();
done:
  cis_operator_destroy(&dense);
  cis_operator_destroy(&gen);
  cis_operator_destroy(&regen);
  cis_operator_destroy(&cached);
  cis_backend_destroy(&be);
  cis_hmat_destroy(&hr);
  cis_hmat_destroy(&hc);
  cis_space_destroy(&s7);
  cis_problem_free(&p);
  free(X);
  free(A);
  return cis_test_summary();
}

int main(int argc, char **argv) {
  if (argc == 2 && !strcmp(argv[1], "random")) return run_random();
  if (argc == 2) return run_chem(argv[1], 0, 0.0);
  if (argc == 4) return run_chem(argv[1], atoi(argv[2]), atof(argv[3]));
  fprintf(stderr, "usage: test_operators random | FCIDUMP [SPIN2 SHIFT]\n");
  return 2;
}
