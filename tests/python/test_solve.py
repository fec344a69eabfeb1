"""The Python package `cisolve` (python/cisolve) against PySCF: H2O/STO-3G FCI energies (one
root, several, spin 0, Ms = 1), the vector in PySCF's layout, a guess that shortens the solve,
and bad inputs that raise cisolve.Error with cisolve's message. The references are PySCF's own
FCI (pyscf.fci.direct_spin1), computed here on the same integrals.
Run from a build: PYTHONPATH=<source>/python CISOLVE_LIBRARY=<build>/libcisolve.so.
Exit 77 (skipped) without numpy or pyscf."""
import os
import sys
import warnings

try:
    import numpy as np
    from pyscf import ao2mo, fci, gto, scf
    from pyscf.fci import cistring
except ImportError as e:
    print("SKIPPED: the Python tests need numpy and pyscf (%s)" % e)
    sys.exit(77)

import cisolve

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL " + what)


def h2o_sto3g():
    mol = gto.M(atom="O 0 0 0.1173; H 0 0.7572 -0.4692; H 0 -0.7572 -0.4692", basis="sto-3g",
                verbose=0)
    mf = scf.RHF(mol).run(conv_tol=1e-12)
    c = mf.mo_coeff
    h1e = c.T @ mf.get_hcore() @ c
    eri = ao2mo.kernel(mol, c)  # 4-fold (npair x npair)
    return h1e, eri, c.shape[1], mol.energy_nuc()


def h2o_c2v():
    """H2O/STO-3G with C2v symmetry: h1e, eri, the orbitals' irreps in Molpro's numbering, ecore;
    the molecule and PySCF's irrep ids as attributes of the function."""
    from pyscf import symm
    mol = gto.M(atom="O 0 0 0.1173; H 0 0.7572 -0.4692; H 0 -0.7572 -0.4692", basis="sto-3g",
                symmetry=True, verbose=0)
    mf = scf.RHF(mol).run(conv_tol=1e-12)
    c = mf.mo_coeff
    ids = symm.label_orb_symm(mol, mol.irrep_id, mol.symm_orb, c)
    h2o_c2v.mol, h2o_c2v.pyscf_orbsym = mol, ids
    molpro = [(1, 4, 2, 3)[i] for i in ids]  # PySCF's C2v ids (A1 A2 B1 B2) in Molpro's order
    return c.T @ mf.get_hcore() @ c, ao2mo.kernel(mol, c), molpro, mol.energy_nuc()


def rotated(h1e, eri, norb, angle):
    """The integrals in orbitals rotated by exp(angle K), K a fixed antisymmetric matrix."""
    rng = np.random.default_rng(11)
    k = rng.standard_normal((norb, norb))
    w, v = np.linalg.eigh(1j * (k - k.T))
    u = (v @ np.diag(np.exp(-1j * angle * w)) @ v.conj().T).real
    h = u.T @ h1e @ u
    g = ao2mo.incore.full(ao2mo.restore(8, eri, norb), u)
    return h, g


def pyscf_fci(h1e, eri, norb, nelec, ecore, nroots=1, spin=None):
    s = fci.direct_spin1.FCI()
    s.conv_tol = 1e-13
    if spin is not None:
        s = fci.addons.fix_spin_(s, ss=spin * (spin + 1))
    e, c = s.kernel(h1e, eri, norb, nelec, ecore=ecore, nroots=nroots)
    return np.atleast_1d(e), c


def to_pyscf(vec, alpha, beta, norb, nelec):
    """Our vector in PySCF's (na_strings, nb_strings) layout (norb < 64: one word a string)."""
    sa = cistring.make_strings(range(norb), nelec[0])
    sb = cistring.make_strings(range(norb), nelec[1])
    C = np.zeros((len(sa), len(sb)))
    C[np.searchsorted(sa, alpha[:, 0].astype(np.int64)),
      np.searchsorted(sb, beta[:, 0].astype(np.int64))] = vec
    return C


def refused(pattern, f, *args, **kw):
    try:
        f(*args, **kw)
    except cisolve.Error as e:
        check(pattern in str(e) and e.code == 1, "message '%s' lacks '%s'" % (e, pattern))
        return
    except Exception as e:  # noqa: BLE001 - any other exception is a failure of the check
        check(False, "%s raised %r, not cisolve.Error" % (pattern, e))
        return
    check(False, "not refused: " + pattern)


def main():
    h1e, eri, norb, ecore = h2o_sto3g()
    nelec = (5, 5)
    device = os.environ.get("CISOLVE_TEST_DEVICE", "cpu")
    opts = dict(device=device, tol=1e-11)

    e_ref, c_ref = pyscf_fci(h1e, eri, norb, nelec, ecore)
    r = cisolve.solve(h1e, eri, norb, nelec, ecore=ecore, **opts)
    check(abs(r.energies[0] - e_ref[0]) < 1e-8,
          "1 root: %.12f, PySCF %.12f" % (r.energies[0], e_ref[0]))
    check(r.converged.all() and abs(r.s2[0]) < 1e-6, "converged %s, s2 %s" % (r.converged, r.s2))
    check(r.backend.startswith("CPU" if device == "cpu" else "GPU"),
          "device %s ran on %s" % (device, r.backend))
    check(r.vectors.shape == (441, 1) and r.alpha.shape == (441, 1), "shapes")
    C = to_pyscf(r.vectors[:, 0], r.alpha, r.beta, norb, nelec)
    ia, ib = r._solver.det_addresses()
    check(np.array_equal(ia, np.searchsorted(cistring.make_strings(range(norb), nelec[0]),
                                             r.alpha[:, 0].astype(np.int64))) and
          np.array_equal(ib, np.searchsorted(cistring.make_strings(range(norb), nelec[1]),
                                             r.beta[:, 0].astype(np.int64))),
          "det_addresses: PySCF's cistring addresses of the strings")
    check(abs(abs(np.vdot(C, c_ref)) - 1) < 1e-8, "overlap with PySCF's vector %.12f"
          % np.vdot(C, c_ref))
    e_c = fci.direct_spin1.energy(h1e, ao2mo.restore(8, eri, norb), C, norb, nelec) + ecore
    check(abs(e_c - e_ref[0]) < 1e-8, "PySCF's energy of our vector %.12f" % e_c)
    # the same through the full and the 8-fold packed integrals, nelec as an int
    full = ao2mo.restore(1, eri, norb)
    r8 = cisolve.solve(h1e, ao2mo.restore(8, eri, norb), norb, 10, ecore, **opts)
    rf = cisolve.solve(h1e, full, norb, 10, ecore, **opts)
    check(abs(r8.energies[0] - e_ref[0]) < 1e-8 and abs(rf.energies[0] - e_ref[0]) < 1e-8,
          "8-fold %.12f, full %.12f" % (r8.energies[0], rf.energies[0]))

    # several roots, all spins; spin 0 (PySCF's fix_spin_); Ms = 1
    e4, _ = pyscf_fci(h1e, eri, norb, nelec, ecore, nroots=4)
    r4 = cisolve.solve(h1e, eri, norb, nelec, ecore, nroots=4, **opts)
    check(np.abs(r4.energies - e4).max() < 1e-8, "4 roots %s, PySCF %s" % (r4.energies, e4))
    es, _ = pyscf_fci(h1e, eri, norb, nelec, ecore, nroots=3, spin=0)
    rs = cisolve.solve(h1e, eri, norb, nelec, ecore, nroots=3, spin=0, **opts)
    check(np.abs(rs.energies - es).max() < 1e-8, "spin 0 %s, PySCF %s" % (rs.energies, es))
    check(np.abs(rs.s2).max() < 1e-6, "spin 0: s2 %s" % rs.s2)
    et, _ = pyscf_fci(h1e, eri, norb, (6, 4), ecore)
    rt = cisolve.solve(h1e, eri, norb, nelec, ecore, ms2=2, **opts)
    check(abs(rt.energies[0] - et[0]) < 1e-8 and abs(rt.s2[0] - 2) < 1e-6,
          "ms2 2: %.12f (s2 %.6f), PySCF (6, 4) %.12f" % (rt.energies[0], rt.s2[0], et[0]))

    # a guess: the converged vectors start a new solve, which takes fewer iterations
    # (a Reference region smaller than the space's 441 determinants leaves iterations to save)
    r2 = cisolve.solve(h1e, eri, norb, nelec, ecore, nroots=2, ref_size=20, **opts)
    rg = cisolve.solve(h1e, eri, norb, nelec, ecore, guess=r2.vectors, nroots=2, ref_size=20,
                       **opts)
    check(np.abs(rg.energies - e4[:2]).max() < 1e-8, "guess: %s" % rg.energies)
    check(rg.iterations < r2.iterations, "guess: %d iterations, without %d"
          % (rg.iterations, r2.iterations))
    # a guess that is an excited state (the triplet, an exact eigenvector) does not hide the
    # ground state: the check of the lowest states finds it
    rx = cisolve.solve(h1e, eri, norb, nelec, ecore, guess=r4.vectors[:, 1], ref_size=20, **opts)
    check(abs(rx.energies[0] - e4[0]) < 1e-8 and abs(rx.s2[0]) < 1e-6,
          "guess of the triplet: %.12f (s2 %.6f), the ground state %.12f"
          % (rx.energies[0], rx.s2[0], e4[0]))

    # not converged: a warning, the result flagged
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        rn = cisolve.solve(h1e, eri, norb, nelec, ecore, max_iter=2, ref_size=20, **opts)
    check(not rn.converged[0] and any("not converged" in str(x.message) for x in w),
          "max_iter 2: converged %s, warnings %s" % (rn.converged, [str(x.message) for x in w]))

    # bad inputs raise cisolve.Error with cisolve's message, and nothing crashes
    refused("eri has 27 values", cisolve.solve, h1e, np.zeros(27), norb, nelec)
    refused("cannot occupy 7 orbitals", cisolve.solve, h1e, eri, norb, (8, 5))
    bad = h1e.copy()
    bad[2, 3] = np.nan
    refused("h1e[2][3] = nan is not a finite number", cisolve.solve, bad, eri, norb, nelec)
    refused("unknown option 'nroot'", cisolve.solve, h1e, eri, norb, nelec, nroot=2)
    refused("--spin", cisolve.solve, h1e, eri, norb, nelec, spin=0.5)
    refused("the space has only 441 determinants", cisolve.solve, h1e, eri, norb, nelec,
            nroots=500, device=device)
    refused("the library takes the integrals of the orbitals to correlate", cisolve.solve, h1e,
            eri, norb, nelec, frozen=1)
    refused("guess has shape", cisolve.solve, h1e, eri, norb, nelec, guess=np.ones(5))
    # orbital irreps (set_orbsym, Molpro's numbering) with the option irrep: every orbital in
    # irrep 1 keeps every determinant; labels the integrals do not obey are refused, and so is
    # a value outside 1..8 (the restriction itself: casscf_n2.py, H2O in C2v)
    s = cisolve.Solver(h1e, eri, norb, nelec, ecore, device="cpu", irrep=1)
    s.set_orbsym([1] * norb)
    check(s.ndet == 441, "irrep 1 with every orbital in it: %d determinants of 441" % s.ndet)
    s.set_orbsym([1, 1, 1, 4, 1, 2, 4])
    refused("do not have ORBSYM's symmetry", s.build_space)
    refused("orbital 4 has irrep 9", s.set_orbsym, [1, 1, 1, 9, 1, 2, 4])

    # a handle's next irrep: the space is built again (a kept one gave irrep 1's energy
    # for irrep 2), as a new handle builds it; the references are PySCF's per irrep
    h1s, eris, orbsym, ecs = h2o_c2v()
    s = cisolve.Solver(h1s, eris, norb, nelec, ecs, **opts)
    s.set_orbsym(orbsym)
    for irrep, name in ((1, "A1"), (2, "B1")):
        s.set_option("irrep", irrep)
        e_irrep = s.solve().energies[0]
        e_sym = fci.direct_spin1_symm.FCI(h2o_c2v.mol).kernel(
            h1s, eris, norb, nelec, ecore=ecs, orbsym=h2o_c2v.pyscf_orbsym, wfnsym=name)[0]
        check(abs(e_irrep - e_sym) < 1e-8, "irrep %d (%s) after another: %.12f, PySCF's %.12f"
              % (irrep, name, e_irrep, e_sym))
    # integrals whose orbitals no longer have those irreps are refused for the kept space of
    # one irrep, and the handle keeps its integrals
    broken = rotated(h1s, eris, norb, 0.3)
    refused("do not have ORBSYM's symmetry", s.set_integrals, broken[0], broken[1], ecs)
    check(abs(s.solve().energies[0] - e_sym) < 1e-8, "a refused set_integrals changed irrep 2")

    # other integrals for the same handle (set_integrals: the space and its order are kept, a
    # guess stays): the orbitals rotated, so that the diagonal's order changes; the energies
    # equal the eigenvalues of PySCF's dense Hamiltonian of the rotated integrals (its Davidson
    # misses the second state there) and a new handle's
    rot = rotated(h1e, eri, norb, 0.3)
    dense = fci.direct_spin1.pspace(rot[0], ao2mo.restore(8, rot[1], norb), norb, nelec,
                                    np=441)[1]
    e_rot = np.linalg.eigvalsh(dense)[:2] + ecore
    s = cisolve.Solver(h1e, eri, norb, nelec, ecore, nroots=2, ref_size=20, **opts)
    first = s.solve()
    s.set_guess(first.vectors)
    s.set_integrals(rot[0], rot[1], ecore)
    check(s.ndet == 441, "set_integrals keeps the space: %d determinants" % s.ndet)
    again = s.solve()
    fresh = cisolve.solve(rot[0], rot[1], norb, nelec, ecore, nroots=2, ref_size=20, **opts)
    check(np.abs(again.energies - e_rot).max() < 1e-8 and
          np.abs(again.energies - fresh.energies).max() < 1e-10,
          "set_integrals: %s, PySCF %s, a new handle %s" % (again.energies, e_rot,
                                                             fresh.energies))
    check(np.array_equal(again.alpha, first.alpha) and np.array_equal(again.beta, first.beta),
          "set_integrals keeps the determinants' order")
    bad = rot[0].copy()
    bad[1, 0] = np.inf
    refused("h1e[1][0] = inf is not a finite number", s.set_integrals, bad, rot[1], ecore)
    check(np.array_equal(s.solve().energies, again.energies),
          "a refused set_integrals leaves the integrals as they were")

    # the spin-resolved RDMs against PySCF's of the same vector
    (d1a, d1b), (d2aa, d2ab, d2ba, d2bb) = r4.rdm12s(0, 1)
    ca = [to_pyscf(r4.vectors[:, j], r4.alpha, r4.beta, norb, nelec) for j in (0, 1)]
    (p1a, p1b), (p2aa, p2ab, p2ba, p2bb) = fci.direct_spin1.trans_rdm12s(
        ca[0], ca[1], norb, nelec, reorder=True)
    err = max(np.abs(a - b).max() for a, b in zip((d1a, d1b, d2aa, d2ab, d2ba, d2bb),
                                                  (p1a, p1b, p2aa, p2ab, p2ba, p2bb)))
    check(err < 1e-10, "rdm12s differs from PySCF's by %.2e" % err)
    (d1, d2) = r4._solver.rdm12(r4.vectors[:, 0], r4.vectors[:, 1])
    p1, p2 = fci.direct_spin1.trans_rdm12(ca[0], ca[1], norb, nelec, reorder=True)
    err = max(np.abs(d1 - p1).max(), np.abs(d2 - p2).max())
    check(err < 1e-10, "rdm12 (the spin sums) differs from PySCF's trans_rdm12 by %.2e" % err)

    # H X and the diagonal against PySCF's contract_2e and make_hdiag, <S^2> of any vector
    sv = r4._solver
    rng = np.random.default_rng(5)
    Xr = rng.standard_normal((441, 2))
    HX = sv.apply(Xr)
    h2e = fci.direct_spin1.absorb_h1e(h1e, ao2mo.restore(8, eri, norb), norb, nelec, 0.5)
    err = 0.0
    for j in range(2):
        c = to_pyscf(Xr[:, j], r4.alpha, r4.beta, norb, nelec)
        want = fci.direct_spin1.contract_2e(h2e, c, norb, nelec)
        err = max(err, np.abs(to_pyscf(HX[:, j], r4.alpha, r4.beta, norb, nelec) - want).max())
        s2 = fci.spin_op.spin_square0(c / np.linalg.norm(c), norb, nelec)[0]  # normalised
        check(abs(sv.spin_square(Xr[:, j]) - s2) < 1e-10,
              "spin_square of a random vector %.12f, PySCF %.12f" % (sv.spin_square(Xr[:, j]), s2))
    check(err < 1e-10, "apply differs from PySCF's contract_2e by %.2e" % err)
    hd = fci.direct_spin1.make_hdiag(h1e, eri, norb, nelec)
    check(np.abs(to_pyscf(sv.diagonal(), r4.alpha, r4.beta, norb, nelec).ravel() - hd).max()
          < 1e-10, "diagonal differs from PySCF's make_hdiag")
    check(np.allclose(sv.apply(Xr[:, 0]), HX[:, 0], atol=1e-12), "apply of one vector")
    refused("apply: vectors of shape", sv.apply, np.zeros(440))
    refused("spin_square: vectors of shape", sv.spin_square, np.zeros((441, 0)))

    # where a solve's time went: every step, none negative, the parts within the whole
    t = r4.timings
    check(list(t) == list(cisolve.TIMINGS) and min(t.values()) >= 0 and
          t["products"] + t["orthogonalisation"] <= t["solver"] <= t["total"] and
          sum(t[k] for k in ("space", "hamiltonian", "backend", "operator", "states", "solver",
                             "check", "results")) <= t["total"] * (1 + 1e-9) and t["total"] > 0,
          "timings %s" % t)

    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("ok: cisolve.solve equals PySCF's FCI (%s)" % r.backend)
    return 0


if __name__ == "__main__":
    sys.exit(main())
