#!/usr/bin/env python3
"""output.h5's density matrices against PySCF's of the same vectors.

usage: CISOLVE=path/to/cisolve check_rdm.py FCIDUMP WORKDIR

Runs `cisolve --nroots 3 --rdm2` and `cisolve --nroots 2 --trans-rdm` on FCIDUMP, maps each
root's vector into PySCF's (na_strings, nb_strings) layout with cistring.str2addr, and checks
/results dm1a, dm1b, rdm1, dm2aa, dm2ab, dm2bb (pyscf.fci.direct_spin1.make_rdm12s), the
transition matrices trans_dm1a, trans_dm1b, trans_dm2aa, trans_dm2ab, trans_dm2ba, trans_dm2bb
of each pair in trans_pairs (trans_rdm12s(bra, ket)) to 1e-10, natural_orbitals and
natural_occupations against rdm1 (R C = C diag(occ), C orthogonal, occupations descending), and
the energy of root 0 from its density matrices against /results/energies (1e-8 Eh). With
--trans-rdm alone: the transition one-particle matrices, and no two-particle ones.
"""
import os
import subprocess
import sys

import h5py
import numpy as np
from pyscf import ao2mo
from pyscf.fci import cistring, direct_spin1
from pyscf.tools import fcidump

TOL = 1e-10
fails = []


def check(what, err, tol=TOL):
    if not err <= tol:
        fails.append(f"{what}: error {err:.3e}")


def run(args, out):
    cmd = [os.environ["CISOLVE"], "--device", os.environ.get("CISOLVE_DEVICE", "cpu"),
           "--quiet", "-o", out, "--checkpoint", out + ".ckpt.h5"] + args
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"check_rdm: {' '.join(cmd)} exited {r.returncode}: {r.stderr}")


def load(out, norb, na, nb):
    with h5py.File(out) as f:
        res = {k: f["results"][k][()] for k in f["results"]}
        a = f["determinants/alpha"][:, 0].astype(np.int64)
        b = f["determinants/beta"][:, 0].astype(np.int64)
    ia = cistring.strs2addr(norb, na, a)
    ib = cistring.strs2addr(norb, nb, b)
    nsa, nsb = cistring.num_strings(norb, na), cistring.num_strings(norb, nb)
    vecs = []
    for c in res["vectors"]:
        v = np.zeros((nsa, nsb))
        v[ia, ib] = c
        vecs.append(v)
    return res, vecs


def main():
    path, work = sys.argv[1], sys.argv[2]
    d = fcidump.read(path)
    norb, nelec, ms = d["NORB"], d["NELEC"], d.get("MS2", 0)
    na, nb = (nelec + ms) // 2, (nelec - ms) // 2
    out = os.path.join(work, "rdm2.out.h5")
    run(["--nroots", "3", "--rdm2", path], out)
    res, vecs = load(out, norb, na, nb)
    for j, v in enumerate(vecs):
        (d1a, d1b), (aa, ab, bb) = direct_spin1.make_rdm12s(v, norb, (na, nb))
        for name, ref in dict(dm1a=d1a, dm1b=d1b, rdm1=d1a + d1b, dm2aa=aa, dm2ab=ab,
                              dm2bb=bb).items():
            check(f"root {j} {name}", abs(res[name][j] - ref).max())
        occ, C, R = res["natural_occupations"][j], res["natural_orbitals"][j], res["rdm1"][j]
        check(f"root {j} natural orbitals", abs(R @ C - C * occ).max())
        check(f"root {j} natural orbitals orthonormal", abs(C.T @ C - np.eye(norb)).max())
        check(f"root {j} occupations descending", max(0.0, float(np.diff(occ).max())))
    h1 = d["H1"]
    eri = ao2mo.restore(1, d["H2"], norb)
    dm2 = res["dm2aa"][0] + res["dm2ab"][0] + res["dm2ab"][0].transpose(2, 3, 0, 1) + res["dm2bb"][0]
    e = np.einsum("pq,qp", h1, res["rdm1"][0]) + 0.5 * np.einsum("pqrs,pqrs", eri, dm2) + d["ECORE"]
    check("root 0 energy from its density matrices", abs(e - res["energies"][0]), 1e-8)
    pairs = res["trans_pairs"]
    check("transition pairs", 0.0 if pairs.tolist() == [[0, 1], [0, 2], [1, 2]] else 1.0)
    for t, (i, j) in enumerate(pairs):
        (t1a, t1b), (taa, tab, tba, tbb) = direct_spin1.trans_rdm12s(vecs[i], vecs[j], norb,
                                                                     (na, nb))
        for name, ref in dict(trans_dm1a=t1a, trans_dm1b=t1b, trans_dm2aa=taa, trans_dm2ab=tab,
                              trans_dm2ba=tba, trans_dm2bb=tbb).items():
            check(f"pair {i},{j} {name}", abs(res[name][t] - ref).max())
    out = os.path.join(work, "trans.out.h5")
    run(["--nroots", "2", "--trans-rdm", path], out)
    res, vecs = load(out, norb, na, nb)
    t1a, t1b = direct_spin1.trans_rdm1s(vecs[0], vecs[1], norb, (na, nb))
    check("--trans-rdm trans_dm1a", abs(res["trans_dm1a"][0] - t1a).max())
    check("--trans-rdm trans_dm1b", abs(res["trans_dm1b"][0] - t1b).max())
    check("--trans-rdm writes no two-particle matrices",
          0.0 if not any(k.startswith(("dm2", "trans_dm2")) for k in res) else 1.0)
    for f in fails:
        print("FAIL", f)
    if not fails:
        print("density matrices in output.h5 match PySCF's")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
