"""References for --irrep and the reference determinant of truncated CI (tests/irrep).

Run from anywhere: python3 tests/irrep/make_irrep_refs.py  (PySCF >= 2.x; writes tests/irrep/data).

1. Per-irrep FCI energies and dimensions, PySCF direct_spin1_symm:
   * n2_dz_cas1010.fcidump: N2/cc-pVDZ, R = 1.0977 A, D2h, RHF canonical orbitals, CAS(10,10)
     over 2 frozen core orbitals (mcscf.CASCI(mf, 10, 10).get_h1eff / get_h2eff), ORBSYM in
     Molpro's numbering (fcidump.ORBSYM_MAP, as from_scf(..., molpro_orbsym=True) writes it).
   * h2o_631g_cas810.fcidump: H2O/6-31G, C2v, the same with CAS(8,10) over 1 core orbital.
   For MS2 = 0, 2, 4 (the file says MS2=0; cisolve runs with --ms2) and every irrep, the two
   lowest states: direct_spin1_symm.FCI, orbsym in PySCF's ids, wfnsym = PySCF's id of the
   irrep, conv_tol 1e-12; the dimension: alpha x beta string pairs whose irrep product is the
   target (direct_spin1_symm._gen_strs_irrep). Cross-check: the lowest over the irreps is not
   above direct_spin1's (no symmetry) lowest, whose Davidson can stop at a higher state.
   irreps.ref: "case ms2 irrep(Molpro) dim e0 e1" per line.

2. Truncated CI from a symmetry-ordered file: H2O/6-31G (13 orbitals, all electrons), RHF.
   * h2o_631g_symorder.fcidump: the MOs sorted by irrep (Molpro's order 1..4, each irrep in
     ascending orbital energy), as Molpro writes an FCIDUMP; the lowest-numbered orbitals are
     then not the occupied ones.
   * h2o_631g_symorder_occ.fcidump: the same with Molpro's OCC= and CLOSED= header keys.
   * h2o_631g_symorder_cisd.ref: PySCF ci.CISD(mf) (RCISD = determinant CISD for a closed-shell
     reference) around the RHF determinant.
   * h2o_631g_symorder_cisdt.ref: CISDT around the RHF determinant, from the energy-ordered
     integrals (tests/data/truncci.py: FCI grid, total excitation level <= 3 from the lowest
     orbitals, which there are the occupied ones).
"""
import os
import sys

import numpy as np
from pyscf import ao2mo, ci, fci, gto, mcscf, scf, symm
from pyscf.fci import cistring, direct_spin1, direct_spin1_symm
from pyscf.tools import fcidump

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, 'data')
sys.path.insert(0, os.path.join(HERE, '..', 'data'))
import truncci  # noqa: E402

TOL = 1e-14


def rhf(atom, basis, group):
    mol = gto.M(atom=atom, basis=basis, unit='Angstrom', symmetry=group, verbose=0)
    mf = scf.RHF(mol)
    mf.conv_tol = 1e-12
    mf.conv_tol_grad = 1e-9
    mf.kernel()
    assert mf.converged
    return mol, mf


def molpro(mol, ids):
    return [fcidump.ORBSYM_MAP[mol.groupname][i] for i in ids]


def cas_dump(name, atom, basis, group, ncas, nelecas):
    mol, mf = rhf(atom, basis, group)
    mc = mcscf.CASCI(mf, ncas, nelecas)
    h1, ecore = mc.get_h1eff()
    h2 = ao2mo.restore(8, mc.get_h2eff(), ncas)
    ids = np.asarray(symm.label_orb_symm(mol, mol.irrep_id, mol.symm_orb,
                                         mf.mo_coeff[:, mc.ncore:mc.ncore + ncas]))
    fcidump.from_integrals(os.path.join(DATA, name + '.fcidump'), h1, h2, ncas, nelecas,
                           nuc=ecore, ms=0, orbsym=molpro(mol, ids), tol=TOL)
    return mol, h1, h2, ecore, ids


def dims(norb, nelec, ids):
    sa = direct_spin1_symm._gen_strs_irrep(cistring.make_strings(range(norb), nelec[0]), ids)
    sb = direct_spin1_symm._gen_strs_irrep(cistring.make_strings(range(norb), nelec[1]), ids)
    return {g: int(np.sum((sa[:, None] ^ sb[None, :]) == g)) for g in range(8)}


def per_irrep(case, mol, h1, h2, ecore, ids, nel, out):
    norb = h1.shape[0]
    nirrep = len(fcidump.ORBSYM_MAP[mol.groupname])
    for ms2 in (0, 2, 4):
        nelec = ((nel + ms2) // 2, (nel - ms2) // 2)
        d = dims(norb, nelec, ids)
        lowest = []
        for pid in range(nirrep):
            mp = fcidump.ORBSYM_MAP[mol.groupname][pid]
            if d[pid] == 0:
                continue
            s = direct_spin1_symm.FCI()
            s.conv_tol = 1e-12
            s.max_cycle = 300
            s.nroots = min(2, d[pid])
            e, c = s.kernel(h1, h2, norb, nelec, orbsym=ids, wfnsym=pid, ecore=ecore)
            e = np.atleast_1d(e)
            assert all(np.atleast_1d(s.converged)), (case, ms2, pid)
            lowest.append(e[0])
            out.append('%s %d %d %d %s' % (case, ms2, mp, d[pid],
                                           ' '.join('%.12f' % x for x in e)))
        e1 = direct_spin1.FCI()
        e1.conv_tol = 1e-12
        eg = e1.kernel(h1, h2, norb, nelec, ecore=ecore)[0]
        # no symmetry: its Davidson may stop at a higher state (seen at MS2=4), never lower
        assert min(lowest) < eg + 1e-9, (case, ms2, min(lowest), eg)
        print(case, ms2, 'done', min(lowest), eg, flush=True)


def symorder():
    mol, mf = rhf('O 0 0 0.1173; H 0 0.7572 -0.4692; H 0 -0.7572 -0.4692', '6-31g', 'C2v')
    ids = np.asarray(symm.label_orb_symm(mol, mol.irrep_id, mol.symm_orb, mf.mo_coeff))
    mp = np.asarray(molpro(mol, ids))
    order = np.lexsort((mf.mo_energy, mp))  # by Molpro irrep, then energy
    c = mf.mo_coeff[:, order]
    occ = mf.mo_occ[order]
    path = os.path.join(DATA, 'h2o_631g_symorder.fcidump')
    fcidump.from_mo(mol, path, c, orbsym=list(mp[order]), tol=TOL)
    ncl = [int(np.sum((mp == g) & (mf.mo_occ > 0))) for g in range(1, 5)]
    text = open(path).read()
    head = ' OCC=%s,\n CLOSED=%s,\n' % (','.join(map(str, ncl)), ','.join(map(str, ncl)))
    i = text.index(' ISYM')
    open(os.path.join(DATA, 'h2o_631g_symorder_occ.fcidump'), 'w').write(text[:i] + head + text[i:])
    refocc = [int(k) for k in np.flatnonzero(occ > 0)]
    myci = ci.CISD(mf)
    myci.conv_tol = 1e-12
    myci.kernel()
    assert myci.converged
    # CISDT around the RHF determinant in the energy-ordered orbitals
    h1 = mf.mo_coeff.T @ mf.get_hcore() @ mf.mo_coeff
    eri = ao2mo.restore(8, ao2mo.kernel(mol, mf.mo_coeff), h1.shape[0])
    norb, nelec = h1.shape[0], mol.nelec
    res = {}
    for lev in (2, 3):
        sel, shape = truncci.level_mask(norb, nelec, lev)
        mv = truncci.fci_grid_matvec(h1, eri, norb, nelec)
        hd = direct_spin1.make_hdiag(h1, eri, norb, nelec)
        e, _, r = truncci.davidson_masked(mv, shape, sel, hd[sel], 0)
        assert r < 1e-6, r
        res[lev] = (e + mol.energy_nuc(), r)
    assert abs(res[2][0] - myci.e_tot) < 1e-9, (res[2][0], myci.e_tot)
    for lev, name, e, how in ((2, 'cisd', myci.e_tot, 'pyscf.ci.CISD(mf).kernel(), conv_tol 1e-12 '
                               '(truncci level-2 cross-check %.12f)' % res[2][0]),
                              (3, 'cisdt', res[3][0], 'truncci.level_mask(norb, nelec, 3) + '
                               'fci_grid_matvec + davidson_masked on the energy-ordered RHF '
                               'integrals, residual %.1e' % res[3][1])):
        with open(os.path.join(DATA, 'h2o_631g_symorder_%s.ref' % name), 'w') as f:
            f.write('# reference for h2o_631g_symorder.fcidump, %s around the RHF determinant\n'
                    % name.upper())
            f.write('# generated by tests/irrep/make_irrep_refs.py with pyscf %s\n'
                    % __import__('pyscf').__version__)
            f.write('# RHF occupied orbitals in the symmetry-ordered file (0-based): %s; OCC=CLOSED=%s\n'
                    % (' '.join(map(str, refocc)), ncl))
            f.write('# method: %s\n# columns: root energy_total_Eh s2\n0 %.12f 0.0\n' % (how, e))


def symorder_b1():
    """CISD of irrep B1 (Molpro 2) around the RHF determinant (of irrep A1, so outside the
    space): PySCF's selected_ci Hamiltonian on the strings within 2 excitations
    (tests/data/truncci.py), the determinants of total level <= 2 and irrep B1."""
    mol, mf = rhf('O 0 0 0.1173; H 0 0.7572 -0.4692; H 0 -0.7572 -0.4692', '6-31g', 'C2v')
    ids = np.asarray(symm.label_orb_symm(mol, mol.irrep_id, mol.symm_orb, mf.mo_coeff))
    h1 = mf.mo_coeff.T @ mf.get_hcore() @ mf.mo_coeff
    eri = ao2mo.restore(8, ao2mo.kernel(mol, mf.mo_coeff), h1.shape[0])
    norb, nelec = h1.shape[0], mol.nelec
    strs = (truncci.sci_strings(norb, nelec[0], 2), truncci.sci_strings(norb, nelec[1], 2))
    mv, hd = truncci.sci_matvec(h1, eri, norb, nelec, strs)
    lev = truncci.sci_levels(norb, nelec, strs)

    def irrep(st):
        g = 0
        for p in range(norb):
            if st >> p & 1:
                g ^= int(ids[p])
        return g
    ga = np.array([irrep(int(x)) for x in strs[0]])
    gb = np.array([irrep(int(x)) for x in strs[1]])
    pid = fcidump.ORBSYM_MAP['C2v'].index(2)
    sel = np.flatnonzero((lev <= 2) & ((ga[:, None] ^ gb[None, :]).ravel() == pid))
    e, _, r = truncci.davidson_masked(mv, (len(strs[0]), len(strs[1])), sel, hd[sel],
                                      int(np.argmin(hd[sel])))
    assert r < 1e-6, r
    with open(os.path.join(DATA, 'h2o_631g_symorder_cisd_b1.ref'), 'w') as f:
        f.write('# reference for h2o_631g_symorder.fcidump, CISD around the RHF determinant, '
                'irrep B1 (Molpro 2) only: %d determinants\n' % len(sel))
        f.write('# generated by tests/irrep/make_irrep_refs.py (symorder_b1) with pyscf %s\n'
                % __import__('pyscf').__version__)
        f.write('# method: truncci.sci_matvec on strings within 2 excitations, mask level <= 2 '
                'and irrep B1, davidson_masked, residual %.1e\n' % r)
        f.write('# columns: root energy_total_Eh\n0 %.12f\n' % (e + mol.energy_nuc()))


def bad_orbsym():
    """h2o_sto3g_badorbsym.fcidump: tests/data/h2o_sto3g.fcidump with the ORBSYM labels of
    orbitals 5 (B1) and 7 (B2) exchanged, so that the integrals break the ORBSYM it states."""
    src = open(os.path.join(HERE, '..', 'data', 'h2o_sto3g.fcidump')).read()
    assert 'ORBSYM=1,1,3,1,2,1,3' in src
    open(os.path.join(DATA, 'h2o_sto3g_badorbsym.fcidump'), 'w').write(
        src.replace('ORBSYM=1,1,3,1,2,1,3', 'ORBSYM=1,1,3,1,3,1,2', 1))


def main():
    bad_orbsym()
    out = ['# case ms2 irrep(Molpro) dim e0 [e1]: PySCF %s direct_spin1_symm (make_irrep_refs.py)'
           % __import__('pyscf').__version__]
    n2 = cas_dump('n2_dz_cas1010', 'N 0 0 0; N 0 0 1.0977', 'cc-pvdz', 'D2h', 10, 10)
    per_irrep('n2', *n2, 10, out)
    h2o = cas_dump('h2o_631g_cas810', 'O 0 0 0.1173; H 0 0.7572 -0.4692; H 0 -0.7572 -0.4692',
                   '6-31g', 'C2v', 10, 8)
    per_irrep('h2o', *h2o, 8, out)
    open(os.path.join(DATA, 'irreps.ref'), 'w').write('\n'.join(out) + '\n')
    symorder()
    symorder_b1()


if __name__ == '__main__':
    main()
