#!/usr/bin/env python3
"""PySCF's sigma (direct_spin1.contract_2e on a random normalised vector, h1e absorbed once) on
an FCIDUMP: the per-product reference that cisolve's products are compared with
(docs/BENCHMARKS.md).

usage: pyscf_sigma.py FCIDUMP [REPEATS]

Prints the determinants, the time to absorb h1e, and the wall time of each sigma after one
untimed warm-up (REPEATS, default 3), with the OpenMP threads PySCF used.
"""
import os
import sys
import time

import numpy
from pyscf import fci, lib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pyscf_fci import read_fcidump  # noqa: E402


def main():
    path = sys.argv[1]
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    norb, nelec, ms2, ecore, h1, eri = read_fcidump(path)
    nelec = ((nelec + ms2) // 2, (nelec - ms2) // 2)
    na = fci.cistring.num_strings(norb, nelec[0])
    nb = fci.cistring.num_strings(norb, nelec[1])
    t0 = time.time()
    h2 = fci.direct_spin1.absorb_h1e(h1, eri, norb, nelec, 0.5)
    t_absorb = time.time() - t0
    rng = numpy.random.default_rng(1)
    c = rng.standard_normal((na, nb))
    c /= numpy.linalg.norm(c)
    fci.direct_spin1.contract_2e(h2, c, norb, nelec)  # warm-up: link tables, allocation
    times = []
    for _ in range(repeats):
        t0 = time.time()
        fci.direct_spin1.contract_2e(h2, c, norb, nelec)
        times.append(time.time() - t0)
    print(f"pyscf sigma  {path}: {na * nb} determinants, {lib.num_threads()} threads, "
          f"absorb_h1e {t_absorb:.3f} s, sigma {min(times):.3f} s (min of {repeats}: "
          + ", ".join(f"{t:.3f}" for t in times) + ")")


if __name__ == "__main__":
    main()
