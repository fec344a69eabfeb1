#!/usr/bin/env python3
"""Writes data/random_sym_300.mtx: a seeded random sparse symmetric matrix (300 x 300, a
CI-like diagonal plus ~12 off-diagonal entries per row), used to check cisolve's explicit-matrix
path against LAPACK dsyevd on the dense matrix (tests/e2e/mtx_check.c). Run from this folder:
    python3 make_matrix.py
numpy only; the file is committed, so the tests do not need Python."""
import numpy as np

rng = np.random.default_rng(20261122)
n = 300
A = np.zeros((n, n))
for i in range(n):
    for j in rng.choice(n, size=6, replace=False):
        if j != i:
            A[i, j] = A[j, i] = rng.normal(scale=0.05)
A[np.diag_indices(n)] = np.sort(rng.uniform(-2.0, 3.0, size=n))
with open("data/random_sym_300.mtx", "w") as f:
    f.write("%%MatrixMarket matrix coordinate real symmetric\n")
    f.write("% seeded random symmetric test matrix, tests/e2e/make_matrix.py\n")
    ii, jj = np.nonzero(np.tril(A))
    f.write(f"{n} {n} {len(ii)}\n")
    for i, j in zip(ii, jj):
        f.write(f"{i + 1} {j + 1} {A[i, j]:.17g}\n")
