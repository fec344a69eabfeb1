#!/usr/bin/env python3
"""Reference data for tests/hamiltonian: PySCF's FCI Hamiltonians, written to HDF5 (gzip).

Provenance: PySCF (pyscf.fci.direct_spin1, pyscf.fci.cistring, pyscf.ao2mo); the version used
is stored in each file's `pyscf_version` attribute. Regenerate with
    python3 tests/hamiltonian/make_matrix_ref.py tests/hamiltonian/data
Files:
  h2o_fci55.h5  H2O/STO-3G RHF orbitals, 7 orbitals, (5,5): 441 determinants
  h2o_fci54.h5  the same integrals with (5,4) electrons (Ms = 1/2): 735 determinants
  model70_20.h5 70 orbitals, (2,0) electrons, sparse random 8-fold-symmetric integrals (seed 7)
  model70_11.h5 the same integrals with (1,1) electrons
(70 orbitals: two-word strings. (2,1) would test the same code paths with 169,050 determinants
and ~12,000 candidate elements a row: minutes, not seconds.)
Datasets: norb, nalpha, nbeta, ecore, h1e (norb x norb), eri (8-fold packed, PySCF/FCIDUMP
order), alpha_strings / beta_strings (uint64, n x nwords, bit p%64 of word p/64 = orbital p,
in PySCF's string order), x (na*nb, seeded random), hx (PySCF contract_2e of x, without
ecore). The H2O files also hold H as COO (h_row, h_col, h_val: every |H_IJ| > 1e-15, with
I = ia*nb + ib) built by applying contract_2e(absorb_h1e(...)) to unit vectors, FCI
eigenvectors `civec` (nroots x na*nb) and PySCF's spin_square of each (`s2`).
"""
import sys

import h5py
import numpy as np
import pyscf
from pyscf import ao2mo, fci, gto, scf
from pyscf.fci import cistring, direct_spin1


def strings_u64(norb, nel):
    nw = (norb + 63) // 64
    if norb < 64:
        s = np.asarray(cistring.make_strings(range(norb), nel), dtype=np.int64)
        return s.astype(np.uint64).reshape(-1, 1)
    occ = cistring.make_strings(range(norb), nel)  # occupation lists for norb >= 64
    out = np.zeros((len(occ), nw), dtype=np.uint64)
    for k, o in enumerate(occ):
        for p in o:
            out[k, p // 64] |= np.uint64(1) << np.uint64(p % 64)
    return out


def write(path, norb, nelec, ecore, h1e, eri8, with_matrix, nroots=0):
    na_, nb_ = nelec
    h2 = direct_spin1.absorb_h1e(h1e, ao2mo.restore(4, eri8, norb), norb, nelec, 0.5)
    na = cistring.num_strings(norb, na_)
    nb = cistring.num_strings(norb, nb_)
    n = na * nb
    rng = np.random.default_rng(12345)
    x = rng.standard_normal(n)
    hx = direct_spin1.contract_2e(h2, x.reshape(na, nb), norb, nelec).ravel()
    with h5py.File(path, "w") as f:
        f.attrs["pyscf_version"] = pyscf.__version__
        f["norb"] = norb
        f["nalpha"] = na_
        f["nbeta"] = nb_
        f["ecore"] = ecore
        gz = dict(compression="gzip", compression_opts=9)
        f.create_dataset("h1e", data=h1e, **gz)
        f.create_dataset("eri", data=eri8, **gz)
        f.create_dataset("alpha_strings", data=strings_u64(norb, na_), **gz)
        f.create_dataset("beta_strings", data=strings_u64(norb, nb_), **gz)
        f.create_dataset("x", data=x, **gz)
        f.create_dataset("hx", data=hx, **gz)
        if with_matrix:
            rows, cols, vals = [], [], []
            for j in range(n):
                e = np.zeros(n)
                e[j] = 1.0
                col = direct_spin1.contract_2e(h2, e.reshape(na, nb), norb, nelec).ravel()
                nz = np.nonzero(np.abs(col) > 1e-15)[0]
                rows.append(nz)
                cols.append(np.full(nz.size, j))
                vals.append(col[nz])
            f.create_dataset("h_row", data=np.concatenate(rows).astype(np.int64), **gz)
            f.create_dataset("h_col", data=np.concatenate(cols).astype(np.int64), **gz)
            f.create_dataset("h_val", data=np.concatenate(vals), **gz)
        if nroots:
            cis = fci.direct_spin1.FCI()
            e, c = cis.kernel(h1e, eri8, norb, nelec, nroots=nroots, tol=1e-12)
            c = [np.asarray(v).ravel() for v in c]
            s2 = [fci.spin_op.spin_square(v.reshape(na, nb), norb, nelec)[0] for v in c]
            f.create_dataset("civec", data=np.array(c), **gz)
            f["s2"] = np.array(s2)
            f["energies"] = np.array(e)


def h2o():
    mol = gto.M(atom="O 0 0 0; H 0 -0.757 0.587; H 0 0.757 0.587", basis="sto-3g",
                verbose=0)
    mf = scf.RHF(mol).run()
    c = mf.mo_coeff
    h1e = c.T @ mf.get_hcore() @ c
    eri8 = ao2mo.restore(8, ao2mo.full(mol, c), c.shape[1])
    return c.shape[1], mol.energy_nuc(), h1e, eri8


def model70():
    norb = 70
    rng = np.random.default_rng(7)
    npair = norb * (norb + 1) // 2
    eri8 = np.zeros(npair * (npair + 1) // 2)
    mask = rng.random(eri8.size) < 0.002
    eri8[mask] = rng.normal(scale=0.05, size=mask.sum())
    for p in range(norb):  # Coulomb-like diagonal so the model is not pathological
        pp = p * (p + 1) // 2 + p
        eri8[pp * (pp + 1) // 2 + pp] = 0.5 + 0.1 * rng.random()
    h1e = np.zeros((norb, norb))
    m1 = rng.random((norb, norb)) < 0.05
    h1e[m1] = rng.normal(scale=0.1, size=m1.sum())
    h1e = h1e + h1e.T + np.diag(np.linspace(-2.0, 1.0, norb))
    return norb, 0.0, h1e, eri8


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "data"
    norb, ecore, h1e, eri8 = h2o()
    write(f"{out}/h2o_fci55.h5", norb, (5, 5), ecore, h1e, eri8, True, nroots=6)
    write(f"{out}/h2o_fci54.h5", norb, (5, 4), ecore, h1e, eri8, True, nroots=4)
    norb, ecore, h1e, eri8 = model70()
    write(f"{out}/model70_20.h5", norb, (2, 0), ecore, h1e, eri8, False)
    write(f"{out}/model70_11.h5", norb, (1, 1), ecore, h1e, eri8, False)
