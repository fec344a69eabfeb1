"""cisolve as PySCF's FCI solver: the active-space solver of CASCI and CASSCF.

    from pyscf import gto, scf, mcscf
    from cisolve.pyscf import FCISolver
    mc = mcscf.CASSCF(mf, 8, 8)
    mc.fcisolver = FCISolver(mol)
    mc.kernel()

FCISolver follows PySCF's fcisolver protocol (pyscf.fci.direct_spin1.FCISolver): kernel returns
(e, civec) with civec in PySCF's layout (na_strings x nb_strings, strings in cistring order),
and the density matrices come in PySCF's conventions. The eigenvectors, <S^2> and every density
matrix are computed by cisolve (on its GPU where one is present); PySCF only supplies the
integrals. mcscf.state_average_ and mcscf.state_specific_ wrap it as they wrap PySCF's own
solvers, and second-order CASSCF (mc.newton()) multiplies by H through its contract_2e.
docs/python.md has the options and an example.
"""
import os
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from pyscf import ao2mo, lib
from pyscf.fci import addons as fci_addons
from pyscf.fci import cistring
from pyscf.lib import logger

import cisolve as _cis


def _unpack_nelec(nelec, spin):
    return fci_addons._unpack_nelec(nelec, spin)


_POOL = None


def _take(src, idx):
    """src[idx] (1-d), gathered on the host's threads: a CI vector's permutation takes one
    thread tens of milliseconds at 10^7 determinants, every kernel and density-matrix call."""
    global _POOL
    out = np.empty(idx.size)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    parts = min(cores or 1, idx.size >> 16)
    if parts < 2:
        return np.take(src, idx, out=out, mode="clip")
    if _POOL is None:
        _POOL = ThreadPoolExecutor(cores)
    cut = np.linspace(0, idx.size, parts + 1).astype(np.int64)
    # np.take releases the GIL: the parts run at once
    list(_POOL.map(lambda j: np.take(src, idx[cut[j]:cut[j + 1]], out=out[cut[j]:cut[j + 1]],
                                     mode="clip"), range(parts)))
    return out


class _Layout:
    """Where each determinant of cisolve's order sits in PySCF's (na_strings, nb_strings) array,
    for FCI of (na, nb) electrons in norb orbitals, or the part of it of one irrep (sol: a Solver
    of that space; PySCF's array holds zeros for the determinants outside it)."""

    def __init__(self, norb, na, nb, sol):
        if norb > 64:
            raise ValueError("cisolve.pyscf: PySCF's FCI layout holds at most 64 orbitals")
        self.norb, self.na, self.nb = norb, na, nb
        self.shape = (cistring.num_strings(norb, na), cistring.num_strings(norb, nb))
        n = sol.ndet
        if n > self.shape[0] * self.shape[1]:
            raise ValueError("cisolve.pyscf: the space is not within FCI of (%d, %d) electrons "
                             "in %d orbitals" % (na, nb, norb))
        ia, ib = sol.det_addresses()
        if n and (ia.max() + 1 != self.shape[0] or ib.max() + 1 != self.shape[1]):
            # some strings are absent from the space (one irrep): address them by value
            a, b = sol.dets()
            ia = cistring.strs2addr(norb, na, a[:, 0].astype(np.int64))
            ib = cistring.strs2addr(norb, nb, b[:, 0].astype(np.int64))
        self.flat = ia.astype(np.intp) * self.shape[1] + ib
        self.inv = None  # FCI: the inverse permutation, PySCF's order from ours
        if n == self.shape[0] * self.shape[1]:
            self.inv = np.empty(n, dtype=np.intp)
            self.inv[self.flat] = np.arange(n)

    def to_pyscf(self, x):
        if self.inv is not None:
            return _take(np.asarray(x, dtype=float), self.inv).reshape(self.shape)
        c = np.zeros(self.shape[0] * self.shape[1])
        c[self.flat] = x
        return c.reshape(self.shape)

    def to_ours(self, civec):
        c = np.asarray(civec, dtype=float)
        if c.size != self.shape[0] * self.shape[1]:
            raise ValueError("cisolve.pyscf: a CI vector of %d elements; FCI of (%d, %d) "
                             "electrons in %d orbitals has %d x %d"
                             % (c.size, self.na, self.nb, self.norb, *self.shape))
        return _take(c.reshape(-1), self.flat)


# PySCF's irrep ids of D2h and its subgroups in Molpro's numbering (pyscf.tools.fcidump's table,
# which that module's import would bring the DFT libraries along for)
_MOLPRO_IRREP = {"D2h": (1, 4, 6, 7, 8, 5, 3, 2), "C2v": (1, 4, 2, 3), "C2h": (1, 4, 2, 3),
                 "D2": (1, 4, 3, 2), "Cs": (1, 2), "C2": (1, 2), "Ci": (1, 2), "C1": (1,)}


def _molpro_irreps(mol, orbsym, wfnsym):
    """The active orbitals' irreps (PySCF's ids) and the target irrep (an id or a name) in
    Molpro's numbering, cisolve's: Dooh and Coov by their D2h and C2v subgroups, as PySCF's
    FCIDUMP writer does (a linear molecule's state is then restricted to the subgroup's irrep)."""
    from pyscf import symm
    group = getattr(mol, "groupname", None)
    if group is None:
        raise ValueError("cisolve.pyscf: a target irrep (wfnsym %r) needs the molecule: "
                         "FCISolver(mol)" % (wfnsym,))
    if orbsym is None:
        raise ValueError("cisolve.pyscf: a target irrep (wfnsym %r) needs the active orbitals' "
                         "irreps (orbsym)" % (wfnsym,))
    wid = symm.irrep_name2id(group, wfnsym) if isinstance(wfnsym, str) else int(wfnsym)
    ids = np.asarray(orbsym, dtype=int)
    sub = {"Dooh": "D2h", "Coov": "C2v"}.get(group, group)
    if sub != group:
        ids, wid = ids % 10, wid % 10
    if sub not in _MOLPRO_IRREP:
        raise NotImplementedError("cisolve.pyscf: point group %s (cisolve takes D2h and its "
                                  "subgroups)" % group)
    table = _MOLPRO_IRREP[sub]
    return [table[i] for i in ids], table[wid]


def _check_reorder(reorder):
    if not reorder:
        raise NotImplementedError("cisolve.pyscf: density matrices come in PySCF's reordered "
                                  "convention only (reorder=True)")


# What contract_2e's and make_hdiag's Solver is prepared with: no ecore, the solver's own
# defaults, no check (it is never solved), kept apart from kernel's.
_PRODUCTS = dict(ecore=0.0, nroots=None, tol=None, max_cycle=None, wfnsym=None, orbsym=None,
                 check_roots=False, products=True)


class _Absorbed:
    """FCISolver.absorb_h1e's result: the integrals apart, and PySCF's factor."""

    def __init__(self, h1e, eri, fac):
        self.h1e, self.eri, self.fac = h1e, eri, fac


def _as_list(ci0):
    if ci0 is None:
        return []
    if isinstance(ci0, np.ndarray) and ci0.ndim <= 2:
        return [ci0]
    return list(ci0)


class FCISolver(lib.StreamObject):
    """PySCF's FCI solver protocol over cisolve.

    Options (attributes, also keyword arguments of the constructor):
      nroots      roots of kernel (default 1)
      spin        2S = na - nb when nelec is given as one number (PySCF's meaning)
      conv_tol    energy convergence per root, Eh (default 1e-10)
      conv_tol_residual  residual-norm convergence (default: cisolve's, 1e-5)
      max_cycle   most solver iterations (default 100)
      device      "auto" (the GPU where one is usable, else the CPU), "cpu", "gpu", "gpu:N"
      threads     OpenMP threads (default: all)
      options     any further cisolve option, as {"level-shift": 0.1, ...}
    fix_spin_(shift, ss) targets total spin S with S(S+1) = ss, as PySCF's fix_spin_ does.
    """

    def __init__(self, mol=None, nroots=1, spin=None, conv_tol=1e-10, conv_tol_residual=None,
                 max_cycle=100, device="auto", threads=None, **options):
        self.mol = mol
        self.verbose = mol.verbose if mol is not None else logger.NOTE
        self.stdout = mol.stdout if mol is not None else sys.stdout
        self.max_memory = mol.max_memory if mol is not None else lib.param.MAX_MEMORY
        self.nroots = nroots
        self.spin = spin
        self.conv_tol = conv_tol
        self.conv_tol_residual = conv_tol_residual
        self.max_cycle = max_cycle
        self.device = device
        self.threads = threads
        self.options = {k.replace("_", "-"): v for k, v in options.items()}
        self.ss_value = None
        self.ss_penalty = None
        self.wfnsym = None
        self.orbsym = None
        self.converged = False
        self.iterations = self.matvecs = 0  # of the last kernel call
        self.timings = {}  # of the last kernel call: Result.timings
        self.solvers_built = 0  # spaces built: one for a whole CASSCF (later calls reuse it)
        self.eci = None
        self.ci = None
        self.norb = None
        self.nelec = None
        self._layouts = {}
        self._product_layouts = {}  # contract_2e's and make_hdiag's Solver, apart (see there)

    # ---- spin -----------------------------------------------------------------------------
    def fix_spin_(self, shift=0.2, ss=None):
        """Target total spin S, S(S+1) = ss (default: the lowest spin of the electrons' Ms),
        with a penalty shift * (S^2 - ss) (cisolve's --spin and --spin-shift)."""
        self.ss_penalty = shift
        self.ss_value = ss
        return self

    fix_spin = fix_spin_

    def undo_fix_spin(self):
        self.ss_penalty = self.ss_value = None
        return self

    def _spin_options(self, na, nb):
        if self.ss_penalty is None:
            return {}
        if self.ss_value is None:
            s = abs(na - nb) / 2
        else:
            s = (np.sqrt(1 + 4 * self.ss_value) - 1) / 2
        s2 = int(round(2 * s))
        if abs(s2 / 2 * (s2 / 2 + 1) - (self.ss_value if self.ss_value is not None
                                          else s * (s + 1))) > 1e-6:
            raise ValueError("cisolve.pyscf: fix_spin_ ss=%g is not S(S+1) for a half-integer S"
                             % self.ss_value)
        return {"spin": "%g" % (s2 / 2), "spin-shift": repr(float(self.ss_penalty))}

    # ---- the layout of PySCF's vectors ---------------------------------------------------
    def _layout(self, norb, na, nb):
        """A space of FCI (na, nb) in norb orbitals and its layout: the last solve's, else one
        built for the purpose (its order depends on integrals; the layout follows it)."""
        key = (norb, na, nb)
        if key not in self._layouts:  # no solve of this space yet
            rng = np.random.default_rng(7)
            h = rng.standard_normal((norb, norb))  # dense: no symmetry blocks to order by
            s = _cis.Solver(h + h.T, np.zeros(norb * (norb + 1) // 2 * (norb * (norb + 1) // 2
                                                                       + 1) // 2),
                            norb, (na, nb), device="cpu", **self._thread_options())
            self._layouts[key] = (s, _Layout(norb, na, nb, s), None)
        return self._layouts[key]

    def _thread_options(self):
        return {"threads": int(self.threads)} if self.threads else {}

    # ---- the solver -----------------------------------------------------------------------
    def _solve_options(self, nroots, tol, max_cycle, na, nb):
        o = dict(self.options)
        o["nroots"] = nroots
        o["tol"] = repr(float(tol if tol is not None else self.conv_tol))
        if self.conv_tol_residual is not None:
            o["tol-residual"] = repr(float(self.conv_tol_residual))
        o["max-iter"] = int(max_cycle if max_cycle is not None else self.max_cycle)
        o["device"] = self.device
        o.update(self._thread_options())
        o.update(self._spin_options(na, nb))
        return o

    # What a call may change on the last call's Solver; any other option builds a new one.
    _PER_CALL = ("nroots", "tol", "max-iter", "check-roots")

    def _solver(self, h1e, eri8, norb, na, nb, ecore, opts, irreps, products=False):
        """The Solver of this call and its layout: the last call's, given these integrals, when
        the space and the other options are the same (CASSCF's calls: its space and order are
        kept, which saves building them), else a new one. products: the Solver of contract_2e
        and make_hdiag, kept apart from kernel's."""
        cache = "_product_layouts" if products else "_layouts"
        shape = (norb, na, nb, None if irreps is None else tuple(irreps),
                 tuple(sorted((k, str(v)) for k, v in opts.items() if k not in self._PER_CALL)))
        last = getattr(self, cache).get((norb, na, nb))
        if last is not None and last[2] == shape:
            sol, lay = last[0], last[1]
            sol.set_integrals(h1e, eri8, ecore)
            for k in self._PER_CALL:
                sol.set_option(k, opts[k])
        else:
            self.solvers_built += 1
            sol = _cis.Solver(h1e, eri8, norb, (na, nb), ecore=ecore, **opts)
            if irreps is not None:
                sol.set_orbsym(irreps)
            lay = _Layout(norb, na, nb, sol)
        setattr(self, cache, {(norb, na, nb): (sol, lay, shape)})
        return sol, lay

    def kernel(self, h1e, eri, norb, nelec, ci0=None, ecore=0, nroots=None, tol=None,
               max_cycle=None, wfnsym=None, orbsym=None, verbose=None, **kwargs):
        """Lowest nroots eigenpairs of the active-space Hamiltonian: (e, civec), or lists of
        both when nroots > 1. e includes ecore."""
        return FCISolver._kernel(self, h1e, eri, norb, nelec, ci0, ecore, nroots, tol,
                                 max_cycle, wfnsym, orbsym, verbose, True)

    def _prepare(self, h1e, eri, norb, nelec, ecore, nroots, tol, max_cycle, wfnsym, orbsym,
                 check_roots, products=False):
        """The Solver of these integrals (the last call's, when its space fits) and its layout,
        and the call's options."""
        if nroots is None:
            nroots = self.nroots
        if wfnsym is None:
            wfnsym = self.wfnsym
        if orbsym is None:
            orbsym = self.orbsym
        na, nb = _unpack_nelec(nelec, self.spin)
        self.norb, self.nelec = norb, (na, nb)
        if isinstance(h1e, (tuple, list)) or np.asarray(h1e).ndim != 2:
            raise ValueError("cisolve.pyscf: h1e must be one (norb, norb) matrix (restricted "
                             "orbitals)")
        h1e = np.ascontiguousarray(h1e, dtype=float)
        eri8 = np.ascontiguousarray(ao2mo.restore(8, eri, norb), dtype=float)
        opts = self._solve_options(nroots, tol, max_cycle, na, nb)
        opts["check-roots"] = opts.get("check-roots", "blocks") if check_roots else "none"
        irreps = None
        if wfnsym is not None:  # the states of that irrep alone, as PySCF's direct_spin1_symm
            irreps, opts["irrep"] = _molpro_irreps(self.mol, orbsym, wfnsym)
        sol, lay = self._solver(h1e, eri8, norb, na, nb, ecore, opts, irreps, products)
        return sol, lay, opts

    def _kernel(self, h1e, eri, norb, nelec, ci0, ecore, nroots, tol, max_cycle, wfnsym,
                orbsym, verbose, check_roots):
        log = logger.new_logger(self, verbose)
        t0 = (logger.process_clock(), logger.perf_counter())
        sol, lay, opts = FCISolver._prepare(self, h1e, eri, norb, nelec, ecore, nroots, tol,
                                            max_cycle, wfnsym, orbsym, check_roots)
        nroots = opts["nroots"]
        ci0 = _as_list(ci0)
        # the last call's guess, kept by a reused Solver, is not this call's
        g = None
        if ci0:
            g = np.empty((min(len(ci0), nroots), sol.ndet))
            for j, c in enumerate(ci0[:nroots]):
                g[j] = lay.to_ours(c)
        sol.set_guess(None if g is None else g.T)  # (ndet, k) whose transpose needs no copy
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # reported below, as PySCF does
            r = sol.solve()
        civecs = [lay.to_pyscf(r.vectors[:, j]) for j in range(r.nroots)]
        self.converged = bool(np.all(r.converged)) if nroots > 1 else bool(r.converged[0])
        self.iterations, self.matvecs = r.iterations, r.matvecs
        self.timings = r.timings
        e = np.asarray(r.energies, dtype=float)
        log.timer("cisolve FCI (%d determinants, %d roots, %s)" % (r.ndet, r.nroots,
                                                                   r.backend), *t0)
        if log.verbose >= logger.DEBUG:
            for j in range(r.nroots):
                log.debug("cisolve root %d  E = %.15g  <S^2> = %.7f", j, e[j], r.s2[j])
        if not self.converged:
            log.warn("cisolve: not converged within %s iterations", opts["max-iter"])
        if nroots == 1:
            self.eci, self.ci = e[0], civecs[0]
        else:
            self.eci, self.ci = list(e), civecs
        return self.eci, self.ci

    def approx_kernel(self, h1e, eri, norb, nelec, ci0=None, ecore=0, nroots=None, tol=None,
                      max_cycle=None, **kwargs):
        """An approximate solution for CASSCF's micro-iterations: a few iterations from ci0,
        without the check for lower states (the vector is a step of the orbital optimisation;
        kernel, which gives the energies, checks)."""
        if max_cycle is None:
            max_cycle = 4
        return FCISolver._kernel(self, h1e, eri, norb, nelec, ci0, ecore, nroots, tol,
                                 max_cycle, kwargs.get("wfnsym"), kwargs.get("orbsym"),
                                 kwargs.get("verbose"), False)

    # ---- products with H (second-order CASSCF: mcscf.CASSCF(...).newton()) -----------------
    # Their Solver is not kernel's: giving kernel's Solver other integrals would discard its
    # results, and with them the backend that makes the density matrices of its vectors on the
    # GPU (newton CASSCF asks for them between products).
    def absorb_h1e(self, h1e, eri, norb, nelec, fac=1):
        """What contract_2e takes: the integrals and fac, kept as they are (PySCF folds h1e into
        the two-electron integrals; contract_2e of the result is 2 fac H, as here)."""
        return _Absorbed(h1e, eri, fac)

    def contract_2e(self, eri, fcivec, norb, nelec, link_index=None, **kwargs):
        """2 fac H civec (without ecore) for eri = absorb_h1e(h1e, eri, norb, nelec, fac), in
        PySCF's layout; H's rows generated by cisolve for the product."""
        if not isinstance(eri, _Absorbed):
            raise NotImplementedError("cisolve.pyscf: contract_2e takes what FCISolver."
                                      "absorb_h1e returns (h1e and eri apart)")
        sol, lay = FCISolver._prepare(self, eri.h1e, eri.eri, norb, nelec, **_PRODUCTS)[:2]
        shape = np.shape(fcivec)
        return (2.0 * eri.fac * lay.to_pyscf(sol.apply(lay.to_ours(fcivec)))).reshape(shape)

    def make_hdiag(self, h1e, eri, norb, nelec, *args, **kwargs):
        """The diagonal of H (without ecore) in PySCF's layout, flattened as PySCF's."""
        sol, lay = FCISolver._prepare(self, h1e, eri, norb, nelec, **_PRODUCTS)[:2]
        return lay.to_pyscf(sol.diagonal()).ravel()

    # ---- density matrices (computed by cisolve) -------------------------------------------
    def _rdms(self, bra, ket, norb, nelec, two, summed=False):
        """rdm12s's matrices of bra and ket, or (summed) rdm12's spin sums."""
        na, nb = _unpack_nelec(nelec, self.spin)
        sol, lay = self._layout(norb, na, nb)[:2]
        b = lay.to_ours(bra)
        k = b if ket is bra else lay.to_ours(ket)
        return (sol.rdm12 if summed else sol.rdm12s)(b, k, two=two)

    # Each public method calls FCISolver's own helpers, never another public method through
    # self: mcscf.state_average_ and state_specific_ subclass the solver and redefine those.
    def trans_rdm1s(self, cibra, ciket, norb, nelec, link_index=None):
        (a, b), _ = self._rdms(cibra, ciket, norb, nelec, False)
        return a, b

    def trans_rdm1(self, cibra, ciket, norb, nelec, link_index=None):
        return self._rdms(cibra, ciket, norb, nelec, False, True)[0]

    def make_rdm1s(self, civec, norb, nelec, link_index=None):
        (a, b), _ = self._rdms(civec, civec, norb, nelec, False)
        return a, b

    def make_rdm1(self, civec, norb, nelec, link_index=None):
        return self._rdms(civec, civec, norb, nelec, False, True)[0]

    def trans_rdm12s(self, cibra, ciket, norb, nelec, link_index=None, reorder=True):
        _check_reorder(reorder)
        return self._rdms(cibra, ciket, norb, nelec, True)

    def trans_rdm12(self, cibra, ciket, norb, nelec, link_index=None, reorder=True):
        _check_reorder(reorder)
        return self._rdms(cibra, ciket, norb, nelec, True, True)

    def make_rdm12s(self, civec, norb, nelec, link_index=None, reorder=True):
        _check_reorder(reorder)
        dm1, (aa, ab, ba, bb) = self._rdms(civec, civec, norb, nelec, True)
        return dm1, (aa, ab, bb)

    def make_rdm12(self, civec, norb, nelec, link_index=None, reorder=True):
        _check_reorder(reorder)
        return self._rdms(civec, civec, norb, nelec, True, True)

    def make_rdm2(self, civec, norb, nelec, link_index=None, reorder=True):
        return FCISolver.make_rdm12(self, civec, norb, nelec, reorder=reorder)[1]

    # ---- spin and analysis ----------------------------------------------------------------
    def spin_square(self, civec, norb, nelec):
        """(<S^2>, 2S+1) of civec, computed by cisolve (Solver.spin_square: on the GPU where the
        last solve ran on one)."""
        na, nb = _unpack_nelec(nelec, self.spin)
        sol, lay = self._layout(norb, na, nb)[:2]
        ss = sol.spin_square(lay.to_ours(civec))
        s = np.sqrt(ss + 0.25) - 0.5
        return ss, s * 2 + 1

    def large_ci(self, civec, norb, nelec, tol=0.1, return_strs=True):
        na, nb = _unpack_nelec(nelec, self.spin)
        return fci_addons.large_ci(civec, norb, (na, nb), tol, return_strs)

    def transform_ci_for_orbital_rotation(self, civec, norb, nelec, u):
        na, nb = _unpack_nelec(nelec, self.spin)
        return fci_addons.transform_ci_for_orbital_rotation(civec, norb, (na, nb), u)

    def dump_flags(self, verbose=None):
        log = logger.new_logger(self, verbose)
        log.info("******** cisolve FCI solver (%s) ********", _cis.version())
        log.info("device = %s, threads = %s", self.device, self.threads or "all")
        log.info("conv_tol = %g, max_cycle = %d, nroots = %d", self.conv_tol, self.max_cycle,
                 self.nroots)
        if self.ss_penalty is not None:
            log.info("spin penalty %g, ss = %s", self.ss_penalty, self.ss_value)
        return self
