/* The device row generator (hamiltonian/rowgen_cuda.h) against the host's (hamiltonian/rowgen.h).
 *
 * usage: test_rowgen_gpu [--small | [cisd:]FCIDUMP...]
 * For seeded random integrals (FCI with Ms = 0 and Ms != 0, CISDT, an explicit list of every
 * third FCI determinant, CISD of two electrons in 70 orbitals (more than 64: two words a
 * string, the packed integrals), FCI with the unsquared spin penalty) and for each FCIDUMP given (FCI and CISD, or
 * CISD alone with the prefix cisd:):
 *  - rows: every row generated on the device (count, then fill) holds exactly the host's
 *    columns, sorted, and values equal to 1e-15 relative; the same for the Expansion part alone
 *    (columns >= nref);
 *  - products: the fused generate-and-multiply kernel's Y += (Expansion part) X with 4, 8, 16
 *    and 32 lanes a row for k = 1 and 8 (and 3 with 32; interleaved vectors) and with the lanes
 *    chosen for k = 5 (column-major) equals the host's cis_rowgen_apply to 1e-12 relative, in
 *    row ranges that do not start at 0;
 *  - the squared spin penalty is refused on the device with a reason.
 * --small: the random cases in 8 orbitals, without the 70 (for compute-sanitizer). Exit 77 (skipped) when
 * no CUDA device is usable.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <utility>
#include <vector>

extern "C" {
#include "base/util.h"
#include "hamiltonian/rowgen.h"
#include "hamiltonian/rowgen_cuda.h"
#include "hamiltonian/space.h"
#include "io/input.h"
}
#include <cuda_runtime.h>

#include "tests/tools/random_ints.h"

static int g_fail = 0;

#define CHECK(cond, ...)          \
  do {                            \
    if (!(cond)) {                \
      printf("FAIL: ");           \
      printf(__VA_ARGS__);        \
      printf("\n");               \
      g_fail = 1;                 \
    }                             \
  } while (0)

#define CUDA_OK(call)                                                               \
  do {                                                                              \
    cudaError_t e_ = (call);                                                        \
    if (e_ != cudaSuccess) {                                                        \
      printf("FAIL: %s: %s\n", #call, cudaGetErrorString(e_));                      \
      exit(1);                                                                      \
    }                                                                               \
  } while (0)

static void die_on(cis_err e) {
  if (e != CIS_OK) {
    cis_error_print(1);
    exit(1);
  }
}

/* Rows on the device with columns >= min_col against the host's sorted rows. */
static void compare_rows(const char *what, const cis_rowgen *g, const cis_rowgen_cuda *d,
                         int64_t n, int64_t min_col) {
  int32_t *dlen = NULL, *dcol = NULL;
  int64_t *drp = NULL;
  double *dval = NULL;
  std::vector<int32_t> len(n);
  std::vector<int64_t> rp(n + 1, 0);
  CUDA_OK(cudaMalloc(&dlen, sizeof(int32_t) * n));
  die_on(cis_rowgen_cuda_count(d, 0, n, min_col, dlen, NULL));
  CUDA_OK(cudaMemcpy(len.data(), dlen, sizeof(int32_t) * n, cudaMemcpyDeviceToHost));
  for (int64_t r = 0; r < n; r++) rp[r + 1] = rp[r] + len[r];
  int64_t nnz = rp[n];
  CUDA_OK(cudaMalloc(&drp, sizeof(int64_t) * (n + 1)));
  CUDA_OK(cudaMalloc(&dcol, sizeof(int32_t) * (nnz + 1)));
  CUDA_OK(cudaMalloc(&dval, sizeof(double) * (nnz + 1)));
  CUDA_OK(cudaMemcpy(drp, rp.data(), sizeof(int64_t) * (n + 1), cudaMemcpyHostToDevice));
  die_on(cis_rowgen_cuda_fill(d, 0, n, min_col, drp, dcol, dval, NULL));
  std::vector<int32_t> col(nnz);
  std::vector<double> val(nnz);
  CUDA_OK(cudaMemcpy(col.data(), dcol, sizeof(int32_t) * nnz, cudaMemcpyDeviceToHost));
  CUDA_OK(cudaMemcpy(val.data(), dval, sizeof(double) * nnz, cudaMemcpyDeviceToHost));
  cudaFree(dlen);
  cudaFree(drp);
  cudaFree(dcol);
  cudaFree(dval);

  cis_rowbuf b;
  die_on(cis_rowbuf_init(g, &b));
  int64_t bad_rows = 0, host_nnz = 0;
  double worst = 0.0;
  std::vector<std::pair<int32_t, double>> row;
  for (int64_t r = 0; r < n; r++) {
    int64_t m = cis_rowgen_row(g, r, 1, &b), k = 0;
    row.clear();
    for (int64_t p = rp[r]; p < rp[r + 1]; p++) row.push_back(std::make_pair(col[p], val[p]));
    std::sort(row.begin(), row.end(),
              [](const std::pair<int32_t, double> &x, const std::pair<int32_t, double> &y) {
                return x.first < y.first;
              });
    int ok = 1;
    for (int64_t t = 0; t < m; t++) {
      if (b.col[t] < min_col) continue;
      host_nnz++;
      if (k >= (int64_t)row.size() || row[k].first != b.col[t]) {
        ok = 0;
        break;
      }
      double a = row[k].second, h = b.out[t], s = fmax(fabs(a), fabs(h));
      double rel = s > 0 ? fabs(a - h) / s : 0.0;
      worst = fmax(worst, rel);
      if (rel > 1e-15) ok = 0;
      k++;
    }
    if (k != (int64_t)row.size()) ok = 0;
    if (!ok && bad_rows++ < 3)
      printf("  row %ld: device %zu entries, host differs\n", (long)r, row.size());
  }
  cis_rowbuf_free(&b);
  printf("  %s rows (columns >= %ld): %ld entries on the device, %ld on the host, %ld rows "
         "differ, largest relative value difference %.2e\n",
         what, (long)min_col, (long)nnz, (long)host_nnz, (long)bad_rows, worst);
  CHECK(bad_rows == 0 && nnz == host_nnz, "%s: device rows differ from the host's", what);
}

/* The fused product on rows [r0, r1) for k vectors against cis_rowgen_apply. */
static void compare_apply(const char *what, const cis_rowgen *g, const cis_rowgen_cuda *d,
                          int64_t n, int64_t nref, int k, int64_t r0, int64_t r1, int colmajor) {
  std::vector<double> X((size_t)n * k), xt((size_t)n * k), Yh((size_t)n * k), Yd((size_t)n * k);
  srand(7 + k);
  for (size_t i = 0; i < X.size(); i++) X[i] = 2.0 * rand() / RAND_MAX - 1.0;
  for (int64_t c = 0; c < n; c++)
    for (int j = 0; j < k; j++) xt[c * k + j] = X[j * n + c];
  for (size_t i = 0; i < Yh.size(); i++) Yh[i] = Yd[i] = 0.25 * (double)(i % 7);
  die_on(cis_rowgen_apply((void *)g, r0, r1 - r0, k, X.data(), Yh.data(), n));
  double *dx = NULL, *dy = NULL;
  CUDA_OK(cudaMalloc(&dx, sizeof(double) * n * k));
  CUDA_OK(cudaMalloc(&dy, sizeof(double) * n * k));
  CUDA_OK(cudaMemcpy(dx, k == 1 || colmajor ? X.data() : xt.data(), sizeof(double) * n * k,
                     cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(dy, Yd.data(), sizeof(double) * n * k, cudaMemcpyHostToDevice));
  die_on(cis_rowgen_cuda_apply(d, r0, r1 - r0, nref, k, dx, colmajor ? n : 0, dy, n, NULL));
  CUDA_OK(cudaMemcpy(Yd.data(), dy, sizeof(double) * n * k, cudaMemcpyDeviceToHost));
  cudaFree(dx);
  cudaFree(dy);
  double num = 0.0, den = 0.0;
  for (size_t i = 0; i < Yh.size(); i++) {
    num = fmax(num, fabs(Yd[i] - Yh[i]));
    den = fmax(den, fabs(Yh[i]));
  }
  double rel = den > 0 ? num / den : num;
  printf("  %s product, k = %d%s, rows [%ld, %ld): relative error %.2e\n", what, k,
         colmajor ? " (column-major)" : "", (long)r0, (long)r1, rel);
  CHECK(rel <= 1e-12 && rel == rel, "%s: product k = %d off by %.2e", what, k, rel);
}

static void run_case(const char *what, const cis_integrals *ints, const cis_space_spec *spec,
                     double shift, double s2) {
  cis_space *s = NULL;
  cis_space_opts so = {60, 0, 0};
  die_on(cis_space_build(ints, spec, &so, &s));
  cis_rowgen g;
  die_on(cis_rowgen_init(ints, s, &g));
  cis_rowgen_set_spin(&g, shift, s2);
  int64_t n = cis_space_ndet(s), nref = cis_space_nref(s);
  printf("%s: %s, %d orbitals, (%d,%d), %ld determinants, nref %ld, %d pair classes\n", what,
         cis_space_describe(s), ints->norb, ints->nalpha, ints->nbeta, (long)n, (long)nref,
         g.ncls);
  const char *why = cis_rowgen_cuda_why(&g);
  cis_rowgen_cuda *d = NULL;
  if (g.spin_squared) {
    cis_err e = cis_rowgen_cuda_create(&g, &d);
    printf("  refused on the device: %s\n", why ? why : "(no reason)");
    CHECK(why && e == CIS_ERR_USAGE && !d, "%s: the squared penalty was not refused", what);
    cis_error_clear();
  } else {
    CHECK(!why, "%s: refused on the device: %s", what, why);
    die_on(cis_rowgen_cuda_create(&g, &d));
    compare_rows(what, &g, d, n, 0);
    compare_rows(what, &g, d, n, nref);
    int64_t r0 = n / 7, r1 = n - n / 5;
    int chosen = cis_rowgen_cuda_lanes(d);
    printf("  %d lanes a row chosen for products\n", chosen);
    for (int lanes : {4, 8, 16, 32}) {
      if (cis_rowgen_cuda_set_lanes(d, lanes) != CIS_OK) { /* too many orbitals for so few */
        cis_error_clear();
        continue;
      }
      printf("  %d lanes a row:\n", lanes);
      for (int k : {1, 3, 8})
        if (lanes == 32 || k != 3)
          compare_apply(what, &g, d, n, nref, k, k == 1 ? 0 : r0, k == 1 ? n : r1, 0);
      if (lanes == chosen) compare_apply(what, &g, d, n, nref, 5, r0, r1, 1);
    }
    cis_rowgen_cuda_destroy(&d);
  }
  cis_rowgen_free(&g);
  cis_space_destroy(&s);
}

/* Every third determinant of the FCI space, as an explicit list. */
static void list_case(const cis_integrals *ints) {
  cis_space *f = NULL;
  cis_space_spec fci = {};
  fci.kind = CIS_SPACE_FCI;
  cis_space_opts so = {0, 0, 0};
  die_on(cis_space_build(ints, &fci, &so, &f));
  int nw = cis_space_nwords(f);
  int64_t nf = cis_space_ndet(f), m = 0;
  std::vector<uint64_t> a, b;
  for (int64_t i = 0; i < nf; i += 3, m++) {
    const uint64_t *x = cis_space_alpha(f, i), *y = cis_space_beta(f, i);
    a.insert(a.end(), x, x + nw);
    b.insert(b.end(), y, y + nw);
  }
  cis_space_destroy(&f);
  cis_space_spec spec = {};
  spec.kind = CIS_SPACE_LIST;
  spec.ndets = m;
  spec.det_alpha = a.data();
  spec.det_beta = b.data();
  run_case("random list (every third FCI determinant)", ints, &spec, 0.0, 0.0);
}

int main(int argc, char **argv) {
  int ndev = 0, small = argc > 1 && strcmp(argv[1], "--small") == 0;
  if (small) argc = 1; /* the random cases under 70 orbitals alone (compute-sanitizer) */
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    printf("SKIPPED: no usable CUDA device\n");
    return 77;
  }
  cis_integrals in;
  cis_space_spec fci = {}, cisd = {}, cisdt = {};
  fci.kind = CIS_SPACE_FCI;
  cisd.kind = CIS_SPACE_TRUNCATED;
  cisd.level = 2;
  cisdt.kind = CIS_SPACE_TRUNCATED;
  cisdt.level = 3;

  /* --small: 8 orbitals (3136 determinants) where the others take 10 (44100) */
  int no = small ? 8 : 10;
  random_ints(&in, no, small ? 3 : 4, small ? 3 : 4, 11);
  run_case("random FCI, Ms 0", &in, &fci, 0.0, 0.0);
  run_case("random CISDT", &in, &cisdt, 0.0, 0.0);
  run_case("random FCI, unsquared spin penalty (S = 0)", &in, &fci, 0.5, 0.0);
  run_case("random FCI, squared spin penalty (S = 1)", &in, &fci, 0.5, 2.0);
  free(in.h1e);
  free(in.eri);

  random_ints(&in, no, small ? 4 : 5, small ? 2 : 3, 12);
  run_case("random FCI, Ms 1", &in, &fci, 0.0, 0.0);
  free(in.h1e);
  free(in.eri);

  random_ints(&in, 10, 3, 3, 13);
  list_case(&in);
  free(in.h1e);
  free(in.eri);

  if (!small) { /* two words a string, the packed integrals */
    random_ints(&in, 70, 1, 1, 14);
    run_case("random CISD, 70 orbitals", &in, &cisd, 0.0, 0.0);
    free(in.h1e);
    free(in.eri);
  }

  for (int a = 1; a < argc; a++) {
    cis_problem p;
    int only_cisd = strncmp(argv[a], "cisd:", 5) == 0;
    const char *path = argv[a] + (only_cisd ? 5 : 0);
    die_on(cis_input_read(path, &p));
    if (!only_cisd) run_case(path, &p.ints, &fci, 0.0, 0.0);
    run_case(path, &p.ints, &cisd, 0.0, 0.0);
    cis_problem_free(&p);
  }
  printf(g_fail ? "FAILED\n" : "all device rows equal the host's\n");
  return g_fail;
}
