#!/usr/bin/env python3
"""cisolve --molden and --rdm1's natural orbitals against PySCF's own.

    molden_natorb.py CISOLVE SCRATCH_DIR

For each case an input.h5 is written by scripts/to_input_h5.py's from_scf (which stores the
orbitals' AO coefficients in /orbitals), cisolve runs with --molden, and the Molden file is read
back with pyscf.tools.molden.load. The reference is PySCF's CASCI of the same molecule and
active space: its natural orbitals from mc.cas_natorb (for several roots, of the roots'
average density matrix). Checked:
- the occupations (Occup=) equal PySCF's to 1e-8, the core ones 2;
- the orbitals equal PySCF's to 1e-6 up to the sign of each orbital and rotations among
  degenerate ones: the projector onto each group of natural orbitals with equal occupations
  (within 1e-6), in the AO basis, and the projector onto the core orbitals;
- output.h5's natural_occupations and natural_orbitals (active-MO basis, per root) equal the
  eigen-decomposition of PySCF's make_rdm1 of each root, in the same sense.
Cases: H2O/6-31G CAS(6,6) (spherical, s and p), N2/cc-pVDZ CAS(6,6) (spherical d functions,
reordered in Molden's order), H2O/6-31G* with Cartesian d functions (normalised in the file),
and two roots of H2O/6-31G (state-averaged natural orbitals in the file).
"""
import os
import subprocess
import sys

import h5py
import numpy as np
from pyscf import gto, mcscf, scf
from pyscf.tools import molden

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
from to_input_h5 import from_scf  # noqa: E402

failures = []
DEGEN = 1e-6


def check(cond, what):
    print("%s: %s" % ("ok" if cond else "FAIL", what))
    if not cond:
        failures.append(what)


def groups(occ):
    """Index groups of equal occupations (descending order within DEGEN)."""
    out, cur = [], [0]
    for i in range(1, len(occ)):
        if abs(occ[i] - occ[cur[-1]]) < DEGEN:
            cur.append(i)
        else:
            out.append(cur)
            cur = [i]
    out.append(cur)
    return out


def projector_error(a, b, metric, occ):
    """Largest difference between the projectors onto each degenerate group of columns of a
    and b (orthonormal under `metric`, the AO overlap, or the identity)."""
    err = 0.0
    for g in groups(occ):
        pa = a[:, g] @ a[:, g].T @ metric
        pb = b[:, g] @ b[:, g].T @ metric
        err = max(err, abs(pa - pb).max())
    return err


def pyscf_natorbs(mc, dm):
    """PySCF's natural orbitals of the active density matrix dm: AO coefficients, occupations
    (descending), from mc.cas_natorb."""
    ncore, ncas = mc.ncore, mc.ncas
    mo, _, occ = mc.cas_natorb(casdm1=dm, sort=False)
    act, occ = mo[:, ncore:ncore + ncas], np.asarray(occ)[ncore:ncore + ncas]
    order = np.argsort(-occ, kind="stable")
    return act[:, order], occ[order]


def run_case(exe, scratch, name, mol, ncas, nelecas, nroots):
    mf = scf.RHF(mol).run(conv_tol=1e-12)
    inp = os.path.join(scratch, "molden_%s.h5" % name)
    out = os.path.join(scratch, "molden_%s.out.h5" % name)
    mfile = os.path.join(scratch, "molden_%s.molden" % name)
    for p in (out, mfile):
        if os.path.exists(p):
            os.remove(p)
    from_scf(mf, inp, ncas=ncas, nelecas=nelecas)
    subprocess.run([exe, "--device", "cpu", "--quiet", "--nroots", str(nroots), "--tol",
                    "1e-12", "--tol-residual", "1e-8", "--output", out, "--molden=" + mfile,
                    inp], check=True, stdout=subprocess.DEVNULL)

    mc = mcscf.CASCI(mf, ncas, nelecas)
    mc.fcisolver.nroots = nroots
    mc.fcisolver.conv_tol = 1e-12
    mc.kernel()
    cis = [mc.ci] if nroots == 1 else list(mc.ci)
    dms = [mc.fcisolver.make_rdm1(c, ncas, nelecas) for c in cis]
    with h5py.File(out, "r") as f:
        e = f["results/energies"][:]
        occ_out = f["results/natural_occupations"][:]
        no_out = f["results/natural_orbitals"][:]
    e_ref = np.atleast_1d(mc.e_tot)
    check(abs(e - e_ref).max() < 1e-8, "%s: energies %s equal PySCF's %s" % (name, e, e_ref))
    for j, dm in enumerate(dms):
        w, v = np.linalg.eigh(dm)
        w, v = w[::-1], v[:, ::-1]
        check(abs(occ_out[j] - w).max() < 1e-8,
              "%s root %d: output.h5 natural_occupations equal PySCF's to 1e-8" % (name, j))
        err = projector_error(no_out[j], v, np.eye(ncas), w)
        check(err < 1e-6, "%s root %d: output.h5 natural_orbitals span PySCF's (%.1e)"
              % (name, j, err))
        u = no_out[j]
        check(abs(u.T @ u - np.eye(ncas)).max() < 1e-10,
              "%s root %d: natural_orbitals are orthonormal" % (name, j))
        big = np.argmax(abs(u), axis=0)
        check(all(u[big[i], i] > 0 for i in range(ncas)),
              "%s root %d: each natural orbital's largest component is positive" % (name, j))

    ref_no, ref_occ = pyscf_natorbs(mc, sum(dms) / len(dms))
    mol2, _, coef, occ, _, spins = molden.load(mfile)
    s = mol.intor("int1e_ovlp")
    ncore = mc.ncore
    check(coef.shape == (mol.nao_nr(), ncore + ncas),
          "%s: the Molden file holds %d core and %d natural orbitals over %d AOs (%s)"
          % (name, ncore, ncas, mol.nao_nr(), coef.shape))
    check(all(sp.upper().startswith("ALPHA") for sp in spins), "%s: Spin= Alpha" % name)
    check(abs(occ[:ncore] - 2).max() < 1e-12 and abs(occ[ncore:] - ref_occ).max() < 1e-8,
          "%s: Occup= equals PySCF's natural occupations to 1e-8" % name)
    core_err = projector_error(coef[:, :ncore], mf.mo_coeff[:, :ncore], s, np.full(ncore, 2.0))
    check(core_err < 1e-6, "%s: the core orbitals span PySCF's core (%.1e)" % (name, core_err))
    err = projector_error(coef[:, ncore:], ref_no, s, ref_occ)
    check(err < 1e-6, "%s: the natural orbitals equal PySCF's, per degenerate group (%.1e)"
          % (name, err))
    check(abs(mol2.atom_coords() - mol.atom_coords()).max() < 1e-10 and mol2.cart == mol.cart,
          "%s: the file's atoms and basis kind are the molecule's" % name)


def conversions(exe, scratch):
    """--write-input keeps /orbitals (the same Molden file from the converted input); a Molden
    path in the input's /options is refused (paths come from the command line only)."""
    inp = os.path.join(scratch, "molden_h2o_631g.h5")
    conv = os.path.join(scratch, "molden_converted.h5")
    files = [os.path.join(scratch, "molden_%s.molden" % k) for k in ("a", "b")]
    for p in [conv] + files:
        if os.path.exists(p):
            os.remove(p)
    subprocess.run([exe, "--write-input", conv, inp], check=True, stdout=subprocess.DEVNULL)
    for src, dst in zip((inp, conv), files):
        subprocess.run([exe, "--device", "cpu", "--quiet", "--output", os.devnull,
                        "--molden=" + dst, src], check=True, stdout=subprocess.DEVNULL)
    with open(files[0]) as a, open(files[1]) as b:
        head = [t.read().split("[MO]")[0] for t in (a, b)]
    ca, cb = molden.load(files[0])[2], molden.load(files[1])[2]
    # the density matrix is summed over threads in any order: equal to rounding, not in bits
    check(head[0] == head[1] and ca.shape == cb.shape and abs(ca - cb).max() < 1e-9,
          "--write-input keeps /orbitals: the same Molden file")
    with h5py.File(conv, "r+") as f:
        f.require_group("options").attrs["molden"] = "victim.molden"
    p = subprocess.run([exe, "--device", "cpu", "--output", os.devnull, conv],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    check(p.returncode == 1 and "/options/molden: file paths come from the command line only"
          in p.stdout, "a Molden path in the input's /options is refused (exit %d)"
          % p.returncode)


def main():
    exe, scratch = sys.argv[1], sys.argv[2]
    h2o = "O 0 0 0.1173; H 0 0.7572 -0.4692; H 0 -0.7572 -0.4692"
    run_case(exe, scratch, "h2o_631g", gto.M(atom=h2o, basis="6-31g", verbose=0), 6, 6, 1)
    run_case(exe, scratch, "n2_ccpvdz", gto.M(atom="N 0 0 0; N 0 0 1.098", basis="cc-pvdz",
                                              verbose=0), 6, 6, 1)
    run_case(exe, scratch, "h2o_631gs_cart", gto.M(atom=h2o, basis="6-31g*", cart=True,
                                                   verbose=0), 6, 6, 1)
    run_case(exe, scratch, "h2o_631g_2roots", gto.M(atom=h2o, basis="6-31g", verbose=0), 6, 6,
             2)
    conversions(exe, scratch)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
