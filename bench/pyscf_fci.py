#!/usr/bin/env python3
"""PySCF's FCI (direct_spin1) on an FCIDUMP: the end-to-end reference that cisolve is timed
against (docs/BENCHMARKS.md).

usage: pyscf_fci.py FCIDUMP NROOTS [CONV_TOL]

Prints the energies (total, Eh) and the wall time of the whole solve (the kernel call: the
Hamiltonian diagonal, the initial guess, every sigma product and the Davidson steps), with the
OpenMP thread count PySCF used. conv_tol defaults to 1e-10 Eh, cisolve's default --tol.
"""
import re
import sys
import time

import numpy
from pyscf import fci, lib


def read_fcidump(path):
    """NORB, NELEC, MS2, ECORE, H1 and the full 4-index ERI of an FCIDUMP (pyscf.tools.fcidump
    pulls in the DFT modules, whose libraries the benchmark machine need not have)."""
    with open(path) as f:
        text = f.read()
    head, body = re.split(r'&END|/', text, maxsplit=1, flags=re.IGNORECASE)
    key = lambda k, d=None: int(re.search(k + r'\s*=\s*(-?\d+)', head, re.I).group(1)) \
        if re.search(k + r'\s*=', head, re.I) else d
    norb, nelec, ms2 = key('NORB'), key('NELEC'), key('MS2', 0)
    h1 = numpy.zeros((norb, norb))
    eri = numpy.zeros((norb,) * 4)
    ecore = 0.0
    for line in body.splitlines():
        w = line.split()
        if len(w) != 5:
            continue
        v = float(w[0].replace('D', 'E').replace('d', 'e'))
        i, j, k, l = (int(x) - 1 for x in w[1:])
        if i < 0:
            ecore = v
        elif k < 0:
            h1[i, j] = h1[j, i] = v
        else:
            for a, b, c, d in ((i, j, k, l), (j, i, k, l), (i, j, l, k), (j, i, l, k)):
                eri[a, b, c, d] = eri[c, d, a, b] = v
    return norb, nelec, ms2, ecore, h1, eri


def main():
    path, nroots = sys.argv[1], int(sys.argv[2])
    tol = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-10
    t0 = time.time()
    norb, nelec, ms2, ecore, h1, eri = read_fcidump(path)
    nelec = ((nelec + ms2) // 2, (nelec - ms2) // 2)
    t_read = time.time() - t0
    solver = fci.direct_spin1.FCI()
    solver.conv_tol = tol
    solver.max_cycle = 200
    solver.nroots = nroots
    t0 = time.time()
    e, _ = solver.kernel(h1, eri, norb, nelec, ecore=ecore, nroots=nroots)
    t_solve = time.time() - t0
    e = [e] if nroots == 1 else list(e)
    import pyscf
    print('pyscf %s direct_spin1: norb %d nelec %s, %d threads, conv_tol %g'
          % (pyscf.__version__, norb, nelec, lib.num_threads(), tol))
    for j, x in enumerate(e):
        print('root %d %.12f' % (j, x))
    print('pyscf_time read %.2f s, solve %.2f s (%d roots)' % (t_read, t_solve, nroots))


if __name__ == '__main__':
    main()
