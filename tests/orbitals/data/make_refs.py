#!/usr/bin/env python3
"""References for --frozen / --active and MRCI spaces (tests/orbitals), from PySCF alone.

Run from the repository root:  OMP_NUM_THREADS=1 python3 tests/orbitals/data/make_refs.py

Every reference starts from the integrals read back from an all-electron FCIDUMP of
tests/data (written by pyscf.tools.fcidump.from_scf: tests/data/README.md), so it is the exact
answer for that file.

Frozen core (*.casci.ref): pyscf.mcscf.CASCI on those orbitals (mo_coeff = identity of the
FCIDUMP's MO basis), ncore/ncas/nelecas as the cisolve options say; orbitals outside the core
and the CAS (deleted virtuals, or an orbital left out of --active) are CASCI's virtuals.

MRCI (*.mrci.ref): the frozen-core integrals from CASCI's own get_h1eff / get_h2eff; the
determinants within N excitations (electrons moved, alpha + beta) of any model determinant
selected here by brute force over the FCI strings (pyscf.fci.cistring); the lowest eigenvalue
of PySCF's Hamiltonian projected on them (selected_ci.contract_2e over the product of the
strings the space uses, masked to the space; scipy eigsh), checked against a dense
diagonalisation (numpy eigvalsh) where the space has at most 300 determinants, and, at level 1,
one product against direct_spin1.contract_2e on the whole FCI vector, masked. The count of
determinants is written in each file (# ndet N) and checked by the tests.

h2o_631g_opts_f1_a2-11.h5: the all-electron integrals with /options frozen = "1", active =
"2-11" (the problem of h2o_631g_f1_a2-11.casci.ref).

List model spaces: *.h5 inputs (docs/input-format.md) holding the all-electron integrals and
the model determinants as /space/reference_alpha, reference_beta with kind mrci<N>; and
h2o_631g_list6.h5, the same 6 determinants as a list space (det_alpha, det_beta), which
--space mrci2 takes as its model space.
"""
import os
import sys

import h5py
import numpy as np
import scipy.sparse.linalg as sla
from pyscf import ao2mo, fci, gto, mcscf, scf
from pyscf.fci import cistring, selected_ci
from pyscf.tools import fcidump

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "data")


def read(name):
    d = fcidump.read(os.path.join(DATA, name), verbose=False)
    n = d["NORB"]
    return d, n


def fake_scf(d, n, nelec):
    """An RHF object whose MOs are the FCIDUMP's orbitals (identity coefficients)."""
    mol = gto.M(verbose=0)
    mol.nelectron = nelec
    mol.incore_anyway = True
    mf = scf.RHF(mol)
    h1 = d["H1"]
    mf.get_hcore = lambda *a: h1
    mf.get_ovlp = lambda *a: np.eye(n)
    mf._eri = ao2mo.restore(8, d["H2"], n)
    mf.energy_nuc = lambda *a: d["ECORE"]
    mf.mo_coeff = np.eye(n)
    mf.mo_occ = np.zeros(n)
    return mf


def casci(fcidump_name, ncore, cas_orbitals, nelecas, label, args):
    """CASCI energy with core orbitals 0..ncore-1 and the given (0-based) active orbitals."""
    d, n = read(fcidump_name)
    nelec = d["NELEC"]
    mf = fake_scf(d, n, nelec)
    mc = mcscf.CASCI(mf, len(cas_orbitals), nelecas, ncore=ncore)
    mc.fcisolver.conv_tol = 1e-13
    mc.fcisolver.max_cycle = 500
    mc.verbose = 0
    mo = mcscf.sort_mo(mc, np.eye(n), [p + 1 for p in cas_orbitals], base=1)
    e = mc.kernel(mo)[0]
    write_ref(label + ".casci.ref", [e], [
        f"CASCI of {fcidump_name}: ncore {ncore}, active orbitals (1-based) "
        f"{[p + 1 for p in cas_orbitals]}, nelecas {nelecas}",
        f"pyscf.mcscf.CASCI(mf, {len(cas_orbitals)}, {nelecas}, ncore={ncore}) with "
        "mcscf.sort_mo on the FCIDUMP's orbitals; fcisolver conv_tol 1e-13",
        f"cisolve arguments: {args}"], None)
    return e


def write_ref(name, energies, notes, ndet):
    with open(os.path.join(HERE, name), "w") as f:
        f.write(f"# written by tests/orbitals/data/make_refs.py\n")
        for line in notes:
            f.write(f"# {line}\n")
        if ndet is not None:
            f.write(f"# ndet {ndet}\n")
        for i, e in enumerate(energies):
            f.write(f"{i} {e:.12f} nan\n")
    print(name, ["%.12f" % e for e in energies], "" if ndet is None else f"ndet {ndet}")


# ---- MRCI --------------------------------------------------------------------------------


def frozen_integrals(fcidump_name, ncore, ncas, nelec_cas):
    """h1eff, eri and ecore of the orbitals above ncore, from PySCF's CASCI."""
    d, n = read(fcidump_name)
    mf = fake_scf(d, n, d["NELEC"])
    mc = mcscf.CASCI(mf, ncas, nelec_cas, ncore=ncore)
    h1, ecore = mc.get_h1eff()
    h2 = ao2mo.restore(1, mc.get_h2eff(), ncas)
    return h1, h2, ecore


def popcount(x):
    return np.array([bin(int(v)).count("1") for v in np.ravel(x)]).reshape(np.shape(x))


def cas_model(norb, neleca, nelecb, ne, no):
    """The CAS(ne, no) determinants as (alpha, beta) strings (ints)."""
    ncore = (neleca + nelecb - ne) // 2
    core = (1 << ncore) - 1
    sa = [core | (int(s) << ncore) for s in cistring.make_strings(range(no), neleca - ncore)]
    sb = [core | (int(s) << ncore) for s in cistring.make_strings(range(no), nelecb - ncore)]
    return [(a, b) for a in sa for b in sb]


def mrci_mask(norb, nelec, model, level):
    """Mask over the FCI vector (alpha-major, cistring order) of the determinants within
    `level` electrons moved of a model determinant (brute force)."""
    stra = cistring.make_strings(range(norb), nelec[0])
    strb = cistring.make_strings(range(norb), nelec[1])
    mask = np.zeros((len(stra), len(strb)), dtype=bool)
    for a, b in model:
        la = popcount(np.array([int(s) & ~a for s in stra], dtype=object))
        lb = popcount(np.array([int(s) & ~b for s in strb], dtype=object))
        mask |= (la[:, None] + lb[None, :]) <= level
    return mask


def projected_lowest(h1, h2, norb, nelec, mask, ecore, full_check=False):
    """Lowest eigenvalue of PySCF's H projected on the masked determinants. H x is taken over
    the product of the alpha and beta strings the space uses (pyscf.fci.selected_ci, exact on
    every determinant of that product, which holds the space), then masked."""
    stra_all = cistring.make_strings(range(norb), nelec[0])
    strb_all = cistring.make_strings(range(norb), nelec[1])
    ia = np.flatnonzero(mask.any(axis=1))
    ib = np.flatnonzero(mask.any(axis=0))
    sub = mask[np.ix_(ia, ib)]
    strs = (np.asarray(stra_all[ia], dtype=np.int64), np.asarray(strb_all[ib], dtype=np.int64))
    idx = np.flatnonzero(sub.ravel())
    n = len(idx)
    h2e = selected_ci.direct_spin1.absorb_h1e(h1, h2, norb, nelec, 0.5)

    def mv(x):
        v = np.zeros(sub.size)
        v[idx] = np.ravel(x)
        civ = selected_ci._as_SCIvector(v.reshape(sub.shape), strs)
        return np.asarray(selected_ci.contract_2e(h2e, civ, norb, nelec)).ravel()[idx]

    hdiag = np.asarray(selected_ci.make_hdiag(h1, h2, strs, norb, nelec)).ravel()[idx]
    op = sla.LinearOperator((n, n), matvec=mv, dtype=float)
    x0 = np.zeros(n)
    x0[np.argmin(hdiag)] = 1.0
    w = sla.eigsh(op, k=1, which="SA", tol=1e-13, v0=x0 + 1e-3, ncv=40)[0][0]
    if n <= 300:  # the same from the dense projected matrix, column by column
        H = np.empty((n, n))
        for i in range(n):
            e = np.zeros(n)
            e[i] = 1.0
            H[:, i] = mv(e)
        assert np.allclose(H, H.T, atol=1e-11)
        assert np.allclose(np.diag(H), hdiag, atol=1e-11)
        wd = np.linalg.eigvalsh(H)[0]
        assert abs(wd - w) < 1e-10, (wd, w)
    if full_check:  # the same with the FCI vector of direct_spin1, masked
        g = fci.direct_spin1.absorb_h1e(h1, h2, norb, nelec, 0.5)
        fidx = np.flatnonzero(mask.ravel())

        def fmv(x):
            v = np.zeros(mask.size)
            v[fidx] = np.ravel(x)
            return fci.direct_spin1.contract_2e(g, v.reshape(mask.shape), norb, nelec).ravel()[fidx]

        y = np.random.default_rng(1).standard_normal(n)
        assert np.allclose(fmv(y), mv(y), atol=1e-10)  # one product: the same H on the space
    return w + ecore, n


def mrci_case(label, fcidump_name, nfrozen, ms2, level, model_of, args, note):
    d, n = read(fcidump_name)
    nelec_all = d["NELEC"]
    na, nb = (nelec_all + ms2) // 2 - nfrozen, (nelec_all - ms2) // 2 - nfrozen
    norb = n - nfrozen
    h1, h2, ecore = frozen_integrals(fcidump_name, nfrozen, norb, (na, nb))
    model = model_of(norb, na, nb)
    mask = mrci_mask(norb, (na, nb), model, level)
    e, ndet = projected_lowest(h1, h2, norb, (na, nb), mask, ecore, full_check=(level == 1))
    write_ref(label + ".mrci.ref", [e], [
        f"MRCI level {level} of {fcidump_name}, frozen {nfrozen}, MS2 {ms2}: {note}",
        f"{len(model)} model determinants; lowest eigenvalue of PySCF's H projected on the "
        "determinants within the level of one of them",
        f"cisolve arguments: {args}"], ndet)


def orbs_to_int(orbs):
    v = 0
    for p in orbs:
        v |= 1 << p
    return v


def list_input(name, fcidump_name, ms2, level, model_full, as_list=False):
    """input.h5 with the all-electron integrals and model determinants (full numbering): as
    the references of an mrci<level> space, or (as_list) as a list space's determinants."""
    d, n = read(fcidump_name)
    with h5py.File(os.path.join(HERE, name), "w") as f:
        f.attrs["format"] = "cisolve-input"
        f.attrs["version"] = 1
        g = f.create_group("integrals")
        g.attrs["norb"] = n
        g.attrs["nelec"] = d["NELEC"]
        g.attrs["ms2"] = ms2
        g.attrs["ecore"] = d["ECORE"]
        g.create_dataset("h1e", data=d["H1"])
        g.create_dataset("eri", data=ao2mo.restore(8, d["H2"], n))
        if "ORBSYM" in d:
            g.create_dataset("orbsym", data=np.asarray(d["ORBSYM"], dtype=np.int32))
        s = f.create_group("space")
        s.attrs["kind"] = "list" if as_list else f"mrci{level}"
        what = "det" if as_list else "reference"
        s.create_dataset(what + "_alpha",
                         data=np.array([[a] for a, b in model_full], dtype=np.uint64))
        s.create_dataset(what + "_beta",
                         data=np.array([[b] for a, b in model_full], dtype=np.uint64))


def options_input(name, fcidump_name, options):
    """input.h5 with the all-electron integrals and /options (e.g. frozen, active)."""
    d, n = read(fcidump_name)
    with h5py.File(os.path.join(HERE, name), "w") as f:
        f.attrs["format"] = "cisolve-input"
        f.attrs["version"] = 1
        g = f.create_group("integrals")
        g.attrs["norb"] = n
        g.attrs["nelec"] = d["NELEC"]
        g.attrs["ms2"] = d["MS2"]
        g.attrs["ecore"] = d["ECORE"]
        g.create_dataset("h1e", data=d["H1"])
        g.create_dataset("eri", data=ao2mo.restore(8, d["H2"], n))
        o = f.create_group("options")
        for k, v in options.items():
            o.attrs[k] = v
    print(name, options)


def main():
    h2o = "h2o_631g_cisdt.fcidump"  # H2O/6-31G, 13 orbitals, 10 electrons (tests/data/README.md)
    h2o_min = "h2o_sto3g.fcidump"    # H2O/STO-3G, 7 orbitals
    n2 = "n2_631g_cisd.fcidump"      # N2/6-31G, 18 orbitals, 14 electrons
    # frozen core: without deleted virtuals (Ms 0 and 1), with them, an orbital left out
    casci(h2o_min, 1, list(range(1, 7)), (4, 4), "h2o_sto3g_f1", "--frozen 1")
    casci(h2o_min, 1, list(range(1, 7)), (5, 3), "h2o_sto3g_f1_ms2", "--frozen 1 --ms2 2")
    casci(n2, 2, list(range(2, 11)), (5, 5), "n2_631g_f2_a3-11", "--frozen 2 --active 3-11")
    casci(h2o, 1, list(range(1, 11)), (4, 4), "h2o_631g_f1_a2-11", "--frozen 1 --active 2-11")
    casci(h2o, 1, list(range(1, 11)), (5, 3), "h2o_631g_f1_a2-11_ms2",
          "--frozen 1 --active 2-11 --ms2 2")
    casci(n2, 2, list(range(2, 9)) + [10, 11], (5, 5), "n2_631g_a3-9,11-12",
          "--active 3-9,11-12")
    # the same options from an input.h5's /options (reference: h2o_631g_f1_a2-11.casci.ref)
    options_input("h2o_631g_opts_f1_a2-11.h5", h2o, {"frozen": "1", "active": "2-11"})
    # MRCI on H2O/6-31G with orbital 1 frozen (12 orbitals)
    for ne, no in ((2, 2), (4, 4)):
        for level in (1, 2):
            mrci_case(f"h2o_631g_f1_cas{ne}{no}_mrci{level}", h2o, 1, 0, level,
                      lambda norb, na, nb, ne=ne, no=no: cas_model(norb, na, nb, ne, no),
                      f"--frozen 1 --space mrci{level} --cas {ne},{no}", f"CAS({ne},{no})")
    for ne, no, level in ((4, 4, 2), (2, 2, 1)):
        mrci_case(f"h2o_631g_f1_cas{ne}{no}_mrci{level}_ms2", h2o, 1, 2, level,
                  lambda norb, na, nb, ne=ne, no=no: cas_model(norb, na, nb, ne, no),
                  f"--frozen 1 --ms2 2 --space mrci{level} --cas {ne},{no}", f"CAS({ne},{no})")
    # list model spaces, given in the all-electron numbering (orbital 0 doubly occupied)
    core = 1
    ms0 = [((core | orbs_to_int(a)), (core | orbs_to_int(b))) for a, b in (
        ((1, 2, 3, 4), (1, 2, 3, 4)), ((1, 2, 3, 5), (1, 2, 3, 5)), ((1, 2, 3, 5), (1, 2, 3, 4)),
        ((1, 2, 3, 4), (1, 2, 3, 5)), ((1, 2, 4, 6), (1, 2, 3, 4)), ((1, 2, 3, 7), (1, 2, 4, 7)))]
    ms1 = [((core | orbs_to_int(a)), (core | orbs_to_int(b))) for a, b in (
        ((1, 2, 3, 4, 5), (1, 2, 3)), ((1, 2, 3, 4, 6), (1, 2, 4)), ((1, 2, 4, 5, 6), (1, 2, 3)))]
    for name, ms2, level, model in (("h2o_631g_list6_mrci2", 0, 2, ms0),
                                    ("h2o_631g_list3_mrci1_ms2", 2, 1, ms1)):
        list_input(name + ".h5", h2o, ms2, level, model)
        if ms2 == 0:  # the same model space as a list space (run with --space mrci2)
            list_input("h2o_631g_list6.h5", h2o, ms2, level, model, as_list=True)
        shifted = [(a >> 1, b >> 1) for a, b in model]  # orbital 0 frozen
        mrci_case(name, h2o, 1, ms2, level, lambda norb, na, nb, m=shifted: m,
                  f"--frozen 1 {name}.h5", f"{len(model)} listed determinants")


if __name__ == "__main__":
    sys.exit(main())
