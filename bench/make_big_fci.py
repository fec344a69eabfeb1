#!/usr/bin/env python3
"""bench/data/h2o_631gs_cas16.fcidump: H2O/6-31G* (same geometry as tests/data), the lowest 16
RHF orbitals and all 10 electrons: an FCI of 19,079,424 determinants whose Hamiltonian is
larger than one GPU's memory (the streaming benchmark of docs/BENCHMARKS.md). No reference
energy: PySCF's FCI at this size takes far longer than the benchmark itself. With NORB, the
lowest NORB orbitals instead (17: 38,291,344 determinants, the several-GPU benchmark; 18:
73,410,624), into h2o_631gs_casNORB.fcidump.
usage (repo root): python3 bench/make_big_fci.py [NORB]"""
import sys

from pyscf import ao2mo, gto, mcscf, scf
from pyscf.tools import fcidump

norb = int(sys.argv[1]) if len(sys.argv) > 1 else 16
path = 'bench/data/h2o_631gs_cas%d.fcidump' % norb

mol = gto.M(atom='O 0 0 0.1173; H 0 0.7572 -0.4692; H 0 -0.7572 -0.4692', basis='6-31g*',
            symmetry=True, verbose=0)
mf = scf.RHF(mol).run(conv_tol=1e-12)
mc = mcscf.CASCI(mf, norb, 10)
h1, ecore = mc.get_h1eff()
eri = ao2mo.restore(8, mc.get_h2eff(), norb)
orbsym = [int(x) for x in mc.mo_coeff.orbsym[:norb]] if hasattr(mc.mo_coeff, 'orbsym') else None
fcidump.from_integrals(path, h1, eri, norb, 10, nuc=ecore, ms=0,
                       orbsym=orbsym, tol=1e-14)
print('RHF %.10f, wrote %s' % (mf.e_tot, path))
