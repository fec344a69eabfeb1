#!/usr/bin/env python3
"""Reference density matrices for tests/hamiltonian/test_rdm.c, from PySCF, written to HDF5.

Provenance: pyscf.fci.direct_spin1.make_rdm12s, make_rdm1s, trans_rdm12s and trans_rdm1s
(reorder=True) of seeded random vectors; the PySCF version is stored in the file's
`pyscf_version` attribute. Regenerate with
    python3 tests/hamiltonian/make_rdm_ref.py tests/hamiltonian/data
File rdm_h2o.h5, one group per case, on the H2O/STO-3G RHF integrals of make_matrix_ref.py
(7 orbitals):
  fci55   FCI (5,5), 441 determinants
  fci54   FCI (5,4) (Ms = 1/2), 735 determinants
  cisd54  (5,4), vectors zero outside CISD (<= 2 excitations from the aufbau determinant): the
          exact matrix elements of a truncated space's vectors, as PySCF gives them for the
          vectors embedded in FCI
Each group: norb, nalpha, nbeta, fci (1: FCI, 0: CISD), h1e, eri (8-fold packed), alpha_strings
and beta_strings (uint64, n x 1, PySCF's string order), ket and bra (na*nb, element
ia*nb + ib, normalised), the ket's dm1a, dm1b, dm2aa, dm2ab, dm2bb (make_rdm12s) and the
transition matrices t_dm1a, t_dm1b, t_dm2aa, t_dm2ab, t_dm2ba, t_dm2bb (trans_rdm12s(bra, ket)).
"""
import sys

import h5py
import numpy as np
import pyscf
from pyscf import ao2mo, gto, scf
from pyscf.fci import cistring, direct_spin1


def h2o():
    mol = gto.M(atom="O 0 0 0; H 0 -0.757 0.587; H 0 0.757 0.587", basis="sto-3g",
                verbose=0)
    mf = scf.RHF(mol).run()
    c = mf.mo_coeff
    h1e = c.T @ mf.get_hcore() @ c
    eri8 = ao2mo.restore(8, ao2mo.full(mol, c), c.shape[1])
    return c.shape[1], h1e, eri8


def cisd_mask(norb, na_, nb_, level):
    sa = np.asarray(cistring.make_strings(range(norb), na_), dtype=np.int64)
    sb = np.asarray(cistring.make_strings(range(norb), nb_), dtype=np.int64)
    ra, rb = (1 << na_) - 1, (1 << nb_) - 1
    ea = np.array([bin(int(s) ^ ra).count("1") // 2 for s in sa])
    eb = np.array([bin(int(s) ^ rb).count("1") // 2 for s in sb])
    return (ea[:, None] + eb[None, :]) <= level


def write(f, name, norb, nelec, h1e, eri8, space, seed):
    na_, nb_ = nelec
    na = cistring.num_strings(norb, na_)
    nb = cistring.num_strings(norb, nb_)
    rng = np.random.default_rng(seed)
    ket = rng.standard_normal((na, nb))
    bra = rng.standard_normal((na, nb))
    if space == "cisd":
        m = cisd_mask(norb, na_, nb_, 2)
        ket *= m
        bra *= m
    ket /= np.linalg.norm(ket)
    bra /= np.linalg.norm(bra)
    (d1a, d1b), (aa, ab, bb) = direct_spin1.make_rdm12s(ket, norb, nelec, reorder=True)
    r1a, r1b = direct_spin1.make_rdm1s(ket, norb, nelec)
    assert abs(r1a - d1a).max() < 1e-13 and abs(r1b - d1b).max() < 1e-13
    (t1a, t1b), (taa, tab, tba, tbb) = direct_spin1.trans_rdm12s(bra, ket, norb, nelec,
                                                                 reorder=True)
    s1a, s1b = direct_spin1.trans_rdm1s(bra, ket, norb, nelec)
    assert abs(s1a - t1a).max() < 1e-13 and abs(s1b - t1b).max() < 1e-13
    g = f.create_group(name)
    g["norb"] = norb
    g["nalpha"] = na_
    g["nbeta"] = nb_
    g["fci"] = int(space == "fci")
    g["h1e"] = h1e
    g["eri"] = eri8
    g["alpha_strings"] = np.asarray(cistring.make_strings(range(norb), na_),
                                    dtype=np.uint64).reshape(-1, 1)
    g["beta_strings"] = np.asarray(cistring.make_strings(range(norb), nb_),
                                   dtype=np.uint64).reshape(-1, 1)
    g["ket"] = ket.ravel()
    g["bra"] = bra.ravel()
    for k, v in dict(dm1a=d1a, dm1b=d1b, dm2aa=aa, dm2ab=ab, dm2bb=bb, t_dm1a=t1a, t_dm1b=t1b,
                     t_dm2aa=taa, t_dm2ab=tab, t_dm2ba=tba, t_dm2bb=tbb).items():
        g.create_dataset(k, data=np.ascontiguousarray(v), compression="gzip",
                         compression_opts=9)


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "data"
    norb, h1e, eri8 = h2o()
    with h5py.File(f"{out}/rdm_h2o.h5", "w") as f:
        f.attrs["pyscf_version"] = pyscf.__version__
        write(f, "fci55", norb, (5, 5), h1e, eri8, "fci", 101)
        write(f, "fci54", norb, (5, 4), h1e, eri8, "fci", 102)
        write(f, "cisd54", norb, (5, 4), h1e, eri8, "cisd", 103)
