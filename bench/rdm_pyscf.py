#!/usr/bin/env python3
"""PySCF's direct_spin1.make_rdm12s on the vector rdm_bench wrote, timed, and its matrices
against cisolve's.

usage: OMP_NUM_THREADS=T python3 bench/rdm_pyscf.py NORB NALPHA NBETA PREFIX [REPS]
(run `rdm_bench NORB NALPHA NBETA --out PREFIX` first, with the same OMP_NUM_THREADS).
"""
import sys
import time

import numpy as np
from pyscf import lib
from pyscf.fci import cistring, direct_spin1

norb, na, nb, prefix = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
reps = int(sys.argv[5]) if len(sys.argv) > 5 else 3
nsa, nsb = cistring.num_strings(norb, na), cistring.num_strings(norb, nb)
c = np.fromfile(prefix + ".vec").reshape(nsa, nsb)
best = 1e30
for _ in range(reps):
    t0 = time.perf_counter()
    (d1a, d1b), (aa, ab, bb) = direct_spin1.make_rdm12s(c, norb, (na, nb))
    best = min(best, time.perf_counter() - t0)
print(f"pyscf make_rdm12s FCI ({na},{nb}) in {norb} orbitals, {c.size} determinants, "
      f"{lib.num_threads()} threads: {best:.3f} s (best of {reps})")
ours = np.fromfile(prefix + ".rdm")
n2, n4 = norb * norb, norb ** 4
parts = np.split(ours, [n2, 2 * n2, 2 * n2 + n4, 2 * n2 + 2 * n4])
err = max(abs(p.reshape(r.shape) - r).max() for p, r in zip(parts, (d1a, d1b, aa, ab, bb)))
print(f"largest difference from cisolve's matrices: {err:.2e}")
