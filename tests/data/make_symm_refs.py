#!/usr/bin/env python3
"""Write the "lowest states" test set: FCIDUMPs whose lowest states lie in several spatial
symmetry and spin blocks, and references for the K lowest states of each.

Run from the repository root:
    python3 tests/data/make_symm_refs.py                  # every case (about 5 min, one thread)
    python3 tests/data/make_symm_refs.py --only co_dz_cas1010_singlets,nh3_sto3g_triplets

Writes tests/data/NAME.fcidump and NAME.ref for every case and the section of
tests/data/README.md between the markers LOWEST_BEGIN / LOWEST_END. Deterministic: fixed
geometries, seeded random numbers, no timing-dependent choice.

Why a separate script: tests/data/make_refs.py takes the lowest roots of one plain
direct_spin1 Davidson run. On these problems such a run misses states (its initial guess and
state following see only some symmetry and spin blocks), so here every reference is the K
lowest over an exhaustive scan of the spatial irreps:

  A. per irrep, pyscf.fci.direct_spin1_symm.FCI with wfnsym = that irrep (Davidson, conv_tol
     1e-12, up to nper roots);
  B. per irrep, an independent eigensolver on the same irrep block: numpy.linalg.eigh of the
     dense block (pyscf.fci.direct_spin1.pspace restricted to the irrep's determinants) when
     it has at most DENSE_IRREP determinants, else scipy ARPACK (eigsh, which='SA') on the
     block operator, started from a seeded random vector;
  A and B must agree root by root to AGREE Eh. Completeness: in every irrep the highest root
  computed lies above the K-th wanted energy (or the irrep has no more determinants), else
  nper is doubled for that irrep; so every state below the K-th is in the list.
  C. when the whole Ms block has at most DENSE_ALL determinants, numpy.linalg.eigh of the
     dense Ms-block matrix (no symmetry used) must give the same K lowest energies of the
     wanted spin.
Every reference vector is checked with pyscf.fci.direct_spin1.contract_2e (no symmetry):
||H c - E c|| < RES_MAX; <S^2> by pyscf.fci.spin_op.spin_square0.

Without a target spin the K lowest states of the Ms block of any spin are listed (what
cisolve computes without --spin); with spin S the K lowest of total spin S (cisolve --spin S).
The integrals are read back from the FCIDUMP just written; the orbital irreps come from the
generator (the hidden-symmetry files carry no ORBSYM; their integrals equal their parent's).
"""
import os
os.environ.setdefault('OMP_NUM_THREADS', '1')

import argparse
import re
import sys
import time

import numpy as np
import scipy
import scipy.linalg
import scipy.sparse.linalg
import pyscf
from pyscf import gto, scf, mcscf, ao2mo, symm
from pyscf.fci import direct_spin1, direct_spin1_symm, cistring
from pyscf.fci.spin_op import spin_square0
from pyscf.tools import fcidump

DATA = 'tests/data'
SCRIPT = 'tests/data/make_symm_refs.py'
FCIDUMP_TOL = 1e-14
DAV_TOL = 1e-12        # Davidson energy tolerance (residual ~ sqrt of it)
RES_MAX = 1e-6         # ||H c - E c|| bound for every reference vector
AGREE = 1e-9           # A vs B, A vs C (Eh)
DENSE_IRREP = 3000     # irrep blocks up to this size are diagonalised densely in B
DENSE_ALL = 5000       # whole Ms blocks up to this size are diagonalised densely (C)
SEED = 20261126
EXTRA = 4              # roots computed beyond those kept, per irrep

# Molpro irrep names by Molpro number (1-based). The Molpro numbering minus one multiplies
# by XOR in every D2h subgroup, so (number - 1) serves directly as the irrep id.
IRREP_NAMES = {
    'D2h': ['Ag', 'B3u', 'B2u', 'B1g', 'B1u', 'B2g', 'B3g', 'Au'],
    'C2v': ['A1', 'B1', 'B2', 'A2'],
    'Cs': ["A'", 'A"'],
}

C4 = 'C 0 0 -1.95; C 0 0 -0.65; C 0 0 0.65; C 0 0 1.95'
NH3 = 'N 0 0 0.1173; H 0 0.9377 -0.2737; H 0.8121 -0.4689 -0.2737; H -0.8121 -0.4689 -0.2737'

N2_250 = 'N 0 0 0; N 0 0 2.5'
CO = 'C 0 0 0; O 0 0 1.128'
O2 = 'O 0 0 0; O 0 0 1.21'

# One entry per reference. name: the .ref (and, without 'dump', the FCIDUMP); dump: the
# FCIDUMP when several references share it; system, geom (Angstrom), basis, group (the point
# group PySCF uses, = the ORBSYM subgroup); scf = (charge, 2S) of the SCF whose canonical MOs
# span the CAS (ROHF triplet for O2 and C4, whose RHF orbitals break the Pi pairs); charge and
# nelecas = (nalpha, nbeta) of the CAS problem (MS2 = nalpha - nbeta); K roots of spin `spin`
# (None: any spin); args: the cisolve options of the test (tests/lowest/CMakeLists.txt).
# A 'variant' entry takes its parent's integrals: 'noorbsym' writes them without the ORBSYM
# line, 'rotated' after a seeded random rotation of the active orbitals (no symmetry left in
# the integrals at all); either way the eigenvalues are the parent's.
CASES = [
    dict(name='c2_631g_cas88_r140', system='C2, R = 1.40 A, Ms = 0', geom='C 0 0 0; C 0 0 1.40',
         basis='6-31G', group='D2h', scf=(0, 0), charge=0, ncas=8, nelecas=(4, 4),
         K=1, spin=None, args=[],
         note='X 1Sigma_g+ (Ag) lies 2.77 mEh below the 3Pi_u pair (B3u, B2u). At ce41704 the '
              'default returned -75.528237208 (3Pi_u, <S^2> = 2), 2.77 mEh too high.'),
    dict(name='c2_631g_cas88_r140_noorbsym', variant='noorbsym', parent='c2_631g_cas88_r140',
         note='Same integrals as c2_631g_cas88_r140.fcidump, no ORBSYM line. At ce41704: the '
              'same wrong state as there.'),
    dict(name='c2_631g_cas88_r140_rotated', variant='rotated', parent='c2_631g_cas88_r140',
         rotation=0.2,
         note='The active orbitals of c2_631g_cas88_r140 rotated by expm(A), A antisymmetric with '
              'entries 0.2 N(0,1) (numpy default_rng(SEED)); ORBSYM=1,...,1 (C1). At ce41704: the '
              'same wrong state as the parent.'),
    dict(name='c4m_sto3g_cas1311_ms3', system='linear C4-, Ms = 3/2', geom=C4,
         basis='STO-3G', group='D2h', scf=(0, 2), charge=-1, ncas=11, nelecas=(8, 5),
         K=1, spin=None, args=[],
         note='The ground state is in B1u; the lowest Ag state lies 17.2 mEh above it. At '
              'ce41704 the default returned -149.202506995 (B3u/B2u pair), 10.66 mEh too high.'),
    dict(name='n2_631g_cas108_r250', system='N2, R = 2.5 A, Ms = 0', geom=N2_250,
         basis='6-31G', group='D2h', scf=(0, 0), charge=0, ncas=8, nelecas=(5, 5),
         K=7, spin=None, args=['--nroots', '7'],
         note='Singlet to septet states within 11 mEh; roots 5-6 are a degenerate triplet pair '
              '(B1u, Au). At ce41704 the default returned one partner and then -108.629957513 '
              '(Ag/B1g triplet pair), 1.10 mEh too high, as root 6.'),
    dict(name='n2_631g_cas108_r250_singlets', dump='n2_631g_cas108_r250',
         system='N2, R = 2.5 A, Ms = 0', geom=N2_250,
         basis='6-31G', group='D2h', scf=(0, 0), charge=0, ncas=8, nelecas=(5, 5),
         K=7, spin=0, args=['--spin', '0', '--nroots', '7'],
         note='Roots 3-4: the 1Delta_g pair (Ag, B1g); roots 5-6: the 1Pi_g pair (B2g, B3g). '
              'At ce41704 Davidson was right; Lanczos returned one partner of each pair: roots '
              '4-6 -108.534215894, -108.532485688, -108.528870774 (4.43, 1.73, 5.35 mEh too '
              'high).'),
    dict(name='co_dz_cas1010_singlets', dump='co_dz_cas1010', system='CO, R = 1.128 A, Ms = 0',
         geom=CO, basis='cc-pVDZ', group='C2v', scf=(0, 0), charge=0,
         ncas=10, nelecas=(5, 5), K=4, spin=0, args=['--spin', '0', '--nroots', '4'],
         note='Roots 1-2: the 1Pi pair (B1, B2); root 3: one partner of the 1Delta pair (A1, '
              'A2; the other, at the same energy, would be root 4). At ce41704 Davidson '
              'returned -112.443063055 as root 3 (1.07 mEh too high); Lanczos one partner of '
              'the 1Pi pair only (roots 2-3: -112.444132666, -112.443063055).'),
    dict(name='o2_631g_cas128_singlets', dump='o2_631g_cas128', system='O2, R = 1.21 A, Ms = 0',
         geom=O2, basis='6-31G', group='D2h', scf=(0, 2), charge=0,
         ncas=8, nelecas=(6, 6), K=2, spin=0, args=['--spin', '0', '--nroots', '2'],
         note='Roots 0-1: the 1Delta_g pair (Ag, B1g), below 1Sigma_g+ (Ag). At ce41704 '
              'Davidson was right; Lanczos returned one partner and then -149.565182389 '
              '(1Sigma_g+), 18.5 mEh too high.'),
    dict(name='o2_631g_cas128_triplet', dump='o2_631g_cas128', system='O2, R = 1.21 A, Ms = 0',
         geom=O2, basis='6-31G', group='D2h', scf=(0, 2), charge=0,
         ncas=8, nelecas=(6, 6), K=1, spin=1, args=['--spin', '1'],
         note='X 3Sigma_g- (B1g) from the MS2 = 0 file. Right at ce41704.'),
    dict(name='nh3_sto3g_triplets', dump='nh3_sto3g', system='NH3 (C3v; PySCF uses Cs)', geom=NH3,
         basis='STO-3G', group='Cs', scf=(0, 0), charge=0, ncas=8, nelecas=(5, 5),
         K=2, spin=1, args=['--spin', '1', '--nroots', '2'],
         note='Triplets: A\' -55.040319, A" -55.004815, A\' -55.004774 (the last two an E '
              'pair split by 4e-5 Eh: the geometry, 4 decimals, is C3v to 1e-4 A only). At '
              'ce41704 the default returned the third as root 1, 4.08e-5 Eh too high.'),
]

RESULTS = {}


# ------------------------------------------------------------------ integrals

def casci_integrals(c):
    """CASCI integrals over canonical SCF MOs of the molecule with charge/2S c['scf']; the CAS
    takes c['nelecas'] electrons of the molecule with charge c['charge'] (cores: the lowest
    MOs). Orbital irreps in Molpro numbering."""
    scf_charge, scf_spin = c['scf']
    mol = gto.M(atom=c['geom'], basis=c['basis'], unit='Angstrom', symmetry=c['group'],
                charge=scf_charge, spin=scf_spin, verbose=0)
    assert mol.groupname == c['group'], (mol.groupname, c['group'])
    mf = (scf.RHF if scf_spin == 0 else scf.ROHF)(mol)
    mf.conv_tol = 1e-12
    mf.conv_tol_grad = 1e-9
    mf.max_cycle = 200
    mf.kernel()
    assert mf.converged, 'SCF not converged for %s' % c['name']
    na, nb = c['nelecas']
    mol_t = mol.copy()
    mol_t.charge, mol_t.spin = c['charge'], na - nb
    mol_t.build(verbose=0)
    mc = mcscf.CASCI(scf.RHF(mol_t) if na == nb else scf.ROHF(mol_t), c['ncas'], c['nelecas'])
    mc.mo_coeff = mf.mo_coeff
    h1, ecore = mc.get_h1eff()
    h2 = mc.get_h2eff()
    ids = symm.label_orb_symm(mol, mol.irrep_id, mol.symm_orb, mf.mo_coeff)
    ids = ids[mc.ncore:mc.ncore + c['ncas']]
    molpro = [fcidump.ORBSYM_MAP[c['group']][i] for i in ids]
    return h1, h2, ecore, molpro, mc.ncore, mf.e_tot


def write_fcidump(path, c, h1, h2, ecore, molpro, with_orbsym=True):
    na, nb = c['nelecas']
    fcidump.from_integrals(path, h1, h2, c['ncas'], na + nb, nuc=ecore, ms=na - nb,
                           orbsym=molpro, tol=FCIDUMP_TOL)
    if not with_orbsym:
        with open(path) as f:
            text = f.read()
        text, n = re.subn(r'\n *ORBSYM=[^\n]*', '', text, count=1)
        assert n == 1
        with open(path, 'w') as f:
            f.write(text)


def load(path):
    d = fcidump.read(path, verbose=False)
    norb, nel, ms2 = d['NORB'], d['NELEC'], d['MS2']
    nelec = ((nel + ms2) // 2, (nel - ms2) // 2)
    return d['H1'], ao2mo.restore(1, d['H2'], norb), norb, nelec, d['ECORE'], 'ORBSYM' in d


# ------------------------------------------------------------------ eigensolvers

def string_irreps(norb, n, ids):
    strs = cistring.gen_strings4orblist(range(norb), n)
    ir = np.zeros(len(strs), dtype=np.int64)
    for p, s in enumerate(ids):
        ir[(strs >> p) & 1 == 1] ^= s
    return ir


def spin_of(s2):
    s = (-1 + np.sqrt(1 + 4 * max(s2, 0.0))) / 2
    assert abs(2 * s - round(2 * s)) < 1e-5, 'spin contaminated state, <S^2> = %.8f' % s2
    return round(2 * s) / 2


def solve_A(h1, eri, norb, nelec, ecore, ids, ir, nroots):
    """Davidson in one irrep: direct_spin1_symm with wfnsym."""
    s = direct_spin1_symm.FCI()
    s.conv_tol = DAV_TOL
    s.lindep = 1e-14
    s.max_cycle = 1000
    s.max_space = max(30, 4 * nroots + 10)
    s.verbose = 0
    e, c = s.kernel(h1, eri, norb, nelec, ecore=ecore, nroots=nroots,
                    orbsym=np.array(ids), wfnsym=ir)
    if nroots == 1:
        e, c = [e], [c]
    conv = np.all(s.converged)
    assert conv, 'direct_spin1_symm not converged (irrep %d)' % ir
    return np.asarray(e), [np.asarray(x).ravel() for x in c]


def solve_B(h1, eri, h2e, norb, nelec, ecore, idx, nroots, rng):
    """Independent check in one irrep: dense eigh or ARPACK on the irrep block."""
    na = cistring.num_strings(norb, nelec[0])
    nb = cistring.num_strings(norb, nelec[1])
    n = idx.size
    if n <= DENSE_IRREP:
        hdiag = direct_spin1.make_hdiag(h1, eri, norb, nelec).ravel().copy()
        mask = np.ones(na * nb, bool)
        mask[idx] = False
        hdiag[mask] = 1e9            # pspace picks the n lowest: exactly this irrep's block
        addr, h0 = direct_spin1.pspace(h1, eri, norb, nelec, hdiag, n)
        assert np.array_equal(np.sort(addr), np.sort(idx))
        w = np.linalg.eigvalsh(h0)
        return w[:nroots] + ecore, 'dense eigh (%d)' % n

    def mv(x):
        full = np.zeros(na * nb)
        full[idx] = x.ravel()
        return direct_spin1.contract_2e(h2e, full, norb, nelec).ravel()[idx]

    op = scipy.sparse.linalg.LinearOperator((n, n), matvec=mv, dtype=float)
    v0 = rng.standard_normal(n)
    if nroots >= n - 1:
        raise ValueError('irrep block of %d determinants: raise DENSE_IRREP' % n)
    w = scipy.sparse.linalg.eigsh(op, k=nroots, which='SA', v0=v0, tol=1e-13,
                                  ncv=max(2 * nroots + 1, 40), maxiter=100000,
                                  return_eigenvectors=False)
    return np.sort(w) + ecore, 'ARPACK (%d)' % n


def dense_all(h1, eri, norb, nelec, ecore):
    """C: the whole Ms block, no symmetry."""
    na = cistring.num_strings(norb, nelec[0])
    nb = cistring.num_strings(norb, nelec[1])
    n = na * nb
    hdiag = direct_spin1.make_hdiag(h1, eri, norb, nelec).ravel()
    addr, h0 = direct_spin1.pspace(h1, eri, norb, nelec, hdiag, n)
    nlow = min(n, 60)
    w, v = scipy.linalg.eigh(h0, subset_by_index=[0, nlow - 1])
    h2e = direct_spin1.absorb_h1e(h1, eri, norb, nelec, 0.5)
    x = np.random.default_rng(SEED).standard_normal(n)
    full = np.zeros(n)
    full[addr] = x
    hx = direct_spin1.contract_2e(h2e, full, norb, nelec).ravel()[addr]
    assert np.abs(hx - h0 @ x).max() < 1e-10, 'pspace matrix differs from contract_2e'
    out = []
    for k in range(nlow):
        c = np.zeros(n)
        c[addr] = v[:, k]
        out.append((w[k] + ecore, spin_square0(c.reshape(na, nb), norb, nelec)[0]))
    return out


def reference(path, c, ids):
    """K lowest states (of spin c['spin'] if set) over every irrep."""
    h1, eri, norb, nelec, ecore, _ = load(path)
    na = cistring.num_strings(norb, nelec[0])
    nb = cistring.num_strings(norb, nelec[1])
    h2e = direct_spin1.absorb_h1e(h1, eri, norb, nelec, 0.5)
    nirrep = len(IRREP_NAMES[c['group']])
    airr = string_irreps(norb, nelec[0], ids)
    birr = string_irreps(norb, nelec[1], ids)
    blocks = {ir: np.flatnonzero((airr[:, None] ^ birr[None, :]).ravel() == ir)
              for ir in range(nirrep)}
    K, want = c['K'], c['spin']
    rng = np.random.default_rng(SEED)
    nper = {ir: min(c.get('nper', 2 * K + 2), blocks[ir].size) for ir in blocks}
    done = {}
    while True:
        for ir in range(nirrep):
            if blocks[ir].size == 0 or (ir in done and len(done[ir]['e']) >= nper[ir]):
                continue
            # Both solvers get EXTRA roots more than are kept: the highest roots of an
            # iterative run are the least reliable (a Davidson run had converged its top
            # root to the next state up).
            m = min(nper[ir] + EXTRA, blocks[ir].size)
            eA, vA = solve_A(h1, eri, norb, nelec, ecore, ids, ir, m)
            eB, howB = solve_B(h1, eri, h2e, norb, nelec, ecore, blocks[ir], m, rng)
            eA, vA, eB = eA[:nper[ir]], vA[:nper[ir]], eB[:nper[ir]]
            dAB = np.abs(eA - eB).max()
            assert dAB < AGREE, 'irrep %d: A and B differ by %g' % (ir, dAB)
            st = []
            for e, v in zip(eA, vA):
                hv = direct_spin1.contract_2e(h2e, v, norb, nelec).ravel()
                res = np.linalg.norm(hv - (e - ecore) * v)
                assert res < RES_MAX, 'irrep %d: residual %g' % (ir, res)
                off = np.abs(np.delete(v, blocks[ir])).max() if blocks[ir].size < v.size else 0
                assert off < 1e-10, 'irrep %d: vector leaves its irrep (%g)' % (ir, off)
                s2 = spin_square0(v.reshape(na, nb), norb, nelec)[0]
                st.append(dict(e=e, s2=s2, S=spin_of(s2), ir=ir, res=res))
            done[ir] = dict(e=eA, states=st, B=howB, dAB=dAB)
            print('  %-4s %-3s %s' % (IRREP_NAMES[c['group']][ir], nper[ir],
                                     ' '.join('%.8f(%g)' % (s['e'], s['S']) for s in st)),
                  flush=True)
        allst = sorted((s for d in done.values() for s in d['states']), key=lambda s: s['e'])
        good = [s for s in allst if want is None or s['S'] == want]
        if len(good) >= K:
            ek = good[K - 1]['e']
            grow = [ir for ir in done if done[ir]['e'][-1] <= ek + 1e-6
                    and nper[ir] < blocks[ir].size]
        else:
            grow = [ir for ir in done if nper[ir] < blocks[ir].size]
        if not grow:
            break
        for ir in grow:
            nper[ir] = min(2 * nper[ir], blocks[ir].size)
    assert len(good) >= K, 'fewer than K states of the wanted spin'
    roots = good[:K]
    dense = None
    if na * nb <= DENSE_ALL:
        dense = dense_all(h1, eri, norb, nelec, ecore)
        dgood = [e for e, s2 in dense if want is None or spin_of(s2) == want]
        assert len(dgood) >= K, 'fewer than K wanted states among the dense lowest'
        ddiff = max(abs(a['e'] - b) for a, b in zip(roots, dgood))
        assert ddiff < AGREE, 'dense Ms block differs by %g' % ddiff
        dense = (ddiff, dense)
    return dict(roots=roots, irreps=done, allst=allst, dense=dense, ndet=na * nb,
                norb=norb, nelec=nelec)


# ------------------------------------------------------------------ output

def fmt_s2(s2):
    return '%.8f' % (0.0 if abs(s2) < 5e-9 else s2)


def space_line(r, c):
    return 'CAS(%de,%do) FCI, norb %d, nelec %s, ms2 %d, %d determinants' % (
        sum(c['nelecas']), c['ncas'], r['norb'], r['nelec'], r['nelec'][0] - r['nelec'][1],
        r['ndet'])


def want_line(c):
    what = 'the lowest state' if c['K'] == 1 else 'the %d lowest states' % c['K']
    if c['spin'] is None:
        return '%s of any spin (cisolve without --spin)' % what
    return '%s of spin S = %g (cisolve --spin %g)' % (what, c['spin'], c['spin'])


def head_lines(c, r, dump, orbsym_line):
    return ['reference for %s.fcidump' % dump,
            'generated by %s with pyscf %s, numpy %s, scipy %s (see tests/data/README.md)'
            % (SCRIPT, pyscf.__version__, np.__version__, scipy.__version__),
            'system: %s; geometry (Angstrom): %s' % (c['system'], c['geom']),
            'basis: %s; orbitals: %s canonical MOs, %s, frozen core %d, active %d'
            % (c['basis'], 'RHF' if c['scf'][1] == 0 else
               'ROHF (charge %d, 2S = %d)' % c['scf'], c['group'], r['ncore'], c['ncas']),
            'ORBSYM: %s' % orbsym_line,
            'space: %s' % space_line(r, c),
            'wanted: %s; cisolve options: %s' % (want_line(c), ' '.join(c['args']) or '(none)')]


def irrep_lines(c, r):
    names = IRREP_NAMES[c['group']]
    lines = ['method: per irrep (%s) direct_spin1_symm.FCI(wfnsym) Davidson, conv_tol %g, checked '
             'by dense eigh / ARPACK of the irrep block (max diff %.1e); every irrep solved above '
             'the K-th wanted energy; residual max %.1e'
             % (', '.join(names), DAV_TOL, max(d['dAB'] for d in r['irreps'].values()),
                max(s['res'] for s in r['roots']))]
    if r['dense']:
        lines.append('dense eigh of the whole Ms block (%d determinants) agrees to %.1e'
                     % (r['ndet'], r['dense'][0]))
    lines.append('lowest energy per irrep (S): ' + ', '.join(
        '%s %.10f (%g)' % (names[ir], d['states'][0]['e'], d['states'][0]['S'])
        for ir, d in sorted(r['irreps'].items())))
    if c['spin'] is not None:
        lows = []
        for ir, d in sorted(r['irreps'].items()):
            e = [x['e'] for x in d['states'] if x['S'] == c['spin']]
            lows.append('%s %s' % (names[ir], '%.10f' % e[0] if e else 'above the scan'))
        lines.append('lowest S = %g energy per irrep: %s' % (c['spin'], ', '.join(lows)))
    lines.append('reference roots by irrep: ' + ', '.join(
        '%d %s S=%g' % (i, names[s['ir']], s['S']) for i, s in enumerate(r['roots'])))
    return lines


def write_ref(name, lines, roots):
    with open(os.path.join(DATA, name + '.ref'), 'w') as f:
        for line in lines:
            f.write('# %s\n' % line)
        f.write('# columns: root energy_total_Eh s2\n')
        for i, s in enumerate(roots):
            f.write('%d %.12f %s\n' % (i, s['e'], fmt_s2(s['s2'])))


def find_case(name):
    return next(c for c in CASES if c['name'] == name)


def rotate(h1, h2, norb, scale):
    """Integrals in the orbitals rotated by U = expm(A), A antisymmetric, seeded."""
    a = np.random.default_rng(SEED).standard_normal((norb, norb)) * scale
    u = scipy.linalg.expm(a - a.T)
    eri = ao2mo.restore(1, h2, norb)
    eri = np.einsum('pqrs,pi,qj,rk,sl->ijkl', eri, u, u, u, u, optimize=True)
    return u.T @ h1 @ u, ao2mo.restore(8, eri, norb)


def run_case(c, fcidump_only=False):
    t0 = time.time()
    if 'variant' in c:
        return run_variant(c, fcidump_only)
    print('%s: %s' % (c['name'], c['system']), flush=True)
    dump = c.get('dump', c['name'])
    path = os.path.join(DATA, dump + '.fcidump')
    h1, h2, ecore, molpro, ncore, escf = casci_integrals(c)
    write_fcidump(path, c, h1, h2, ecore, molpro)
    if fcidump_only:
        return None
    r = reference(path, c, [m - 1 for m in molpro])
    r.update(ncore=ncore, molpro=molpro, time=time.time() - t0, dump=dump, case=c)
    lines = head_lines(c, r, dump, 'in the file, Molpro numbering') + irrep_lines(c, r)
    if c.get('note'):
        lines.append('note: ' + c['note'])
    write_ref(c['name'], lines, r['roots'])
    RESULTS[c['name']] = dict(r, lines=lines)
    print('  -> %s  (%.0f s)' % (' '.join('%.12f' % s['e'] for s in r['roots']), r['time']),
          flush=True)
    return r


def run_variant(v, fcidump_only):
    """The parent's integrals without ORBSYM, or in rotated orbitals."""
    t0 = time.time()
    c = dict(find_case(v['parent']), **{k: v[k] for k in ('name', 'note')})
    c.pop('dump', None)
    print('%s: %s, %s' % (c['name'], c['system'], v['variant']), flush=True)
    path = os.path.join(DATA, c['name'] + '.fcidump')
    h1, h2, ecore, molpro, ncore, escf = casci_integrals(c)
    if v['variant'] == 'noorbsym':
        write_fcidump(path, c, h1, h2, ecore, molpro, with_orbsym=False)
    else:
        h1r, h2r = rotate(h1, h2, c['ncas'], v['rotation'])
        write_fcidump(path, c, h1r, h2r, ecore, None)
    if fcidump_only:
        return None
    rp = RESULTS.get(v['parent']) or run_case(find_case(v['parent']))
    h1f, erif, norb, nelec, ecf, has_orbsym = load(path)
    assert not (v['variant'] == 'noorbsym' and has_orbsym)
    if v['variant'] == 'noorbsym':
        # Same numbers as the parent's file: the parent's reference holds as it is.
        p = load(os.path.join(DATA, rp['dump'] + '.fcidump'))
        assert np.array_equal(p[0], h1f) and np.array_equal(p[1], erif) and p[4] == ecf
        roots = rp['roots']
        method = irrep_lines(c, rp) + [
            'this file: integrals read back equal those of %s.fcidump exactly; reference taken '
            'from there' % rp['dump']]
        orbsym_line = 'none (removed)'
    else:
        # No symmetry left: dense eigh of the rotated file's Ms block, which must give the
        # parent's energies (FCI is invariant under active-orbital rotations).
        na = cistring.num_strings(norb, nelec[0])
        nb = cistring.num_strings(norb, nelec[1])
        assert na * nb <= DENSE_ALL, 'rotated variants need a dense-sized parent'
        dense = dense_all(h1f, erif, norb, nelec, ecf)
        want = c['spin']
        good = [dict(e=e, s2=s2, S=spin_of(s2)) for e, s2 in dense
                if want is None or spin_of(s2) == want][:c['K']]
        diff = max(abs(a['e'] - b['e']) for a, b in zip(good, rp['roots']))
        assert diff < AGREE, 'rotated energies differ from the parent by %g' % diff
        roots = good
        method = ['method: dense eigh of the whole Ms block of this file (%d determinants; '
                  'pyscf.fci.direct_spin1.pspace, checked against contract_2e), scipy.linalg.eigh; '
                  'equals the per-irrep reference of %s.fcidump to %.1e'
                  % (na * nb, rp['dump'], diff)]
        orbsym_line = 'none (rotated orbitals have no symmetry; ORBSYM=1,...,1)'
    r = dict(rp, dump=c['name'], time=time.time() - t0)
    lines = head_lines(c, r, c['name'], orbsym_line) + method + ['note: ' + c['note']]
    write_ref(c['name'], lines, roots)
    RESULTS[c['name']] = dict(r, roots=roots, case=c, variant=v['variant'], lines=lines)
    print('  -> %s  (%.0f s)' % (' '.join('%.12f' % s['e'] for s in roots), r['time']),
          flush=True)


README = os.path.join(DATA, 'README.md')
BEGIN = '<!-- LOWEST_BEGIN: this section is written by tests/data/make_symm_refs.py -->'
END = '<!-- LOWEST_END -->'

README_HEAD = """{begin}
## Lowest states (tests/lowest)

Problems whose lowest states lie in several spatial-symmetry and spin blocks (D2h, C2v and Cs
molecules, high spin, a stretched bond, degenerate pairs); tests/lowest/CMakeLists.txt runs
cisolve on them with the default solver options (only `--nroots`, `--spin`, `--solver`) and
compares with the references to 1e-8 Eh and <S^2> to 1e-6. Every file of this section is
written by `tests/data/make_symm_refs.py`, run from the repository root:

    python3 tests/data/make_symm_refs.py       # every case and this section
    python3 tests/data/make_symm_refs.py --only nh3_sto3g_triplets   # those files only

A full run takes about {minutes} min (one thread; OMP_NUM_THREADS defaults to 1: on a shared
machine PySCF's OpenMP loops with 2 threads ran many times slower).

Generated {date} with pyscf {pyscf}, numpy {numpy}, scipy {scipy}, Python {python}.

Not from make_refs.py: one plain `direct_spin1` Davidson run misses states on such problems
(its guess and state following see only some blocks). Here each reference is the K lowest
over an exhaustive scan of the spatial irreps:

- A: per irrep, `pyscf.fci.direct_spin1_symm.FCI` with `wfnsym` = that irrep (Davidson,
  `conv_tol` 1e-12);
- B: per irrep, an independent solver on the same block: `numpy.linalg.eigvalsh` of the dense
  irrep block (`direct_spin1.pspace` over the irrep's determinants) up to 3000 determinants,
  else ARPACK (`scipy.sparse.linalg.eigsh`, `which='SA'`, seeded random start) with
  `direct_spin1.contract_2e`. A and B agree root by root to 1e-9 Eh. Both compute 4 roots more
  than are kept (the top roots of an iterative run are the least reliable: a 14-root Davidson
  run converged its top root to the 15th state of the block);
- completeness: in every irrep the highest kept root lies above the K-th wanted energy (or the
  irrep has no more determinants); otherwise that irrep is solved again with twice the roots;
- C: up to 5000 determinants, `scipy.linalg.eigh` of the dense matrix of the whole Ms block
  (no symmetry; one product checked against `contract_2e`) gives the same K energies;
- every reference vector has `||H c - E c||` < 1e-6 with `direct_spin1.contract_2e` (no
  symmetry), lies in its irrep, and has `<S^2>` (`spin_square0`) within 1e-5 of S(S+1).

Without a target spin the K lowest states of the Ms block of any spin are listed (cisolve
without `--spin`), with spin S the K lowest of total spin S (`--spin S`). Orbitals: canonical
SCF MOs in the symmetry-adapted basis (RHF; ROHF triplet for O2 and C4, whose RHF orbitals
break the Pi pairs), the CAS by `pyscf.mcscf.CASCI` (the lowest MOs frozen),
`fcidump.from_integrals(..., tol=1e-14)`, `ORBSYM` in Molpro numbering. The integrals are read
back from the FCIDUMP; the orbital irreps come from the SCF (the `_noorbsym` and `_rotated`
files carry none). In the table, the irreps of the roots; pairs are the two components of one
degenerate state of the linear molecule (or of the C3v E state for NH3).

| name | FCIDUMP | space | options | roots: E_total (Eh) | <S^2> | irreps |
|---|---|---|---|---|---|---|
"""


def readme_section(minutes):
    rows = []
    for c in CASES:
        r = RESULTS[c['name']]
        cc = r['case']
        names = IRREP_NAMES[cc['group']]
        irr = ', '.join(names[s['ir']] if 'ir' in s else '-' for s in r['roots'])
        rows.append('| %s | %s | %s | `%s` | %s | %s | %s |' % (
            c['name'], r['dump'], space_line(r, cc), ' '.join(cc['args']) or '(default)',
            ', '.join('%.12f' % s['e'] for s in r['roots']),
            ', '.join('%.6f' % abs(s['s2']) for s in r['roots']), irr))
    text = README_HEAD.format(
        begin=BEGIN, minutes=minutes, date=time.strftime('%Y-%m-%d'), pyscf=pyscf.__version__,
        numpy=np.__version__, scipy=scipy.__version__, python=sys.version.split()[0])
    text += '\n'.join(rows) + '\n'
    for c in CASES:
        r = RESULTS[c['name']]
        text += '\n### %s\n\nFiles: `tests/data/%s.fcidump`, `tests/data/%s.ref`.\n\n' % (
            c['name'], r['dump'], c['name'])
        text += ''.join('- %s\n' % line for line in r['lines'][2:])
    return text + END + '\n'


def write_readme(section):
    with open(README) as f:
        text = f.read()
    if BEGIN in text:
        a = text.index(BEGIN)
        b = text.index(END, a) + len(END) + 1
        text = text[:a] + section + text[b:]
    else:
        text = text.rstrip('\n') + '\n\n' + section
    with open(README, 'w') as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--only', help='comma-separated case names')
    ap.add_argument('--fcidump-only', action='store_true',
                    help='write the FCIDUMPs, compute no reference')
    a = ap.parse_args()
    only = set(a.only.split(',')) if a.only else None
    t0 = time.time()
    for c in CASES:
        if (only is None or c['name'] in only) and c['name'] not in RESULTS:
            run_case(c, a.fcidump_only)
    if only is None and not a.fcidump_only:
        write_readme(readme_section(max(1, round((time.time() - t0) / 60))))
        print('wrote %s (%.0f s in all)' % (README, time.time() - t0))


if __name__ == '__main__':
    main()
