"""cisolve: the lowest eigenpairs of a configuration-interaction Hamiltonian, from Python.

    import cisolve
    r = cisolve.solve(h1e, eri, norb, (na, nb), ecore=0.0, nroots=3, spin=0)
    r.energies, r.vectors, r.s2, r.converged, r.alpha, r.beta

The same solver as the program `cisolve` (libcisolve.so through ctypes, docs/python.md): the
options are its long options (``max_iter=50`` or ``**{"max-iter": 50}``), the GPU backend is used
when the library was built with CUDA and a GPU is usable (``device="cpu"`` to stay on the host).
Vectors are in cisolve's determinant order: ``r.alpha[i]``, ``r.beta[i]`` are determinant i's
occupation bit strings (orbital p is bit p % 64 of word p // 64); signs are PySCF's.

The library is ``libcisolve.so`` beside this file (an installed package), or the file named by
the environment variable CISOLVE_LIBRARY (a build tree).
"""
import ctypes
import os
import warnings

import numpy as np

__all__ = ["solve", "Solver", "Result", "Error", "library_path", "version"]

# The codes of include/cisolve.h (the program's exit codes).
OK, ERR_INPUT, NOT_CONVERGED, INTERRUPTED, ERR_RESOURCE = 0, 1, 2, 3, 4


class Error(RuntimeError):
    """A refusal or failure of cisolve: its message, and `code`, the program's exit code
    (1: bad input or option, 4: resources: memory, no usable GPU, not built)."""

    def __init__(self, message, code=ERR_INPUT):
        super().__init__(message)
        self.code = code


_lib = None


def library_path():
    """The libcisolve.so this package loads: $CISOLVE_LIBRARY, else the one beside it."""
    env = os.environ.get("CISOLVE_LIBRARY")
    if env:
        return env
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "libcisolve.so")


def _load():
    global _lib
    if _lib is not None:
        return _lib
    path = library_path()
    if not os.path.exists(path):
        raise Error("libcisolve.so not found at %s: install the package (python3 -m pip install "
                    "<cisolve source>) or set CISOLVE_LIBRARY to a build's libcisolve.so" % path,
                    ERR_RESOURCE)
    lib = ctypes.CDLL(path)
    p, i, i64, d = ctypes.c_void_p, ctypes.c_int, ctypes.c_int64, ctypes.c_double
    dp = np.ctypeslib.ndpointer(np.float64, flags="C_CONTIGUOUS")
    up = np.ctypeslib.ndpointer(np.uint64, flags="C_CONTIGUOUS")
    ip = np.ctypeslib.ndpointer(np.intc, flags="C_CONTIGUOUS")
    i32p = np.ctypeslib.ndpointer(np.int32, flags="C_CONTIGUOUS")
    sig = {
        "cisolve_create": (i, [i, i, i, dp, dp, d, ctypes.POINTER(p)]),
        "cisolve_set_integrals": (i, [p, dp, dp, d]),
        "cisolve_set_option": (i, [p, ctypes.c_char_p, ctypes.c_char_p]),
        "cisolve_build_space": (i, [p]),
        "cisolve_set_guess": (i, [p, i, dp]),
        "cisolve_solve": (i, [p]),
        "cisolve_ndet": (i64, [p]),
        "cisolve_nwords": (i, [p]),
        "cisolve_nroots": (i, [p]),
        "cisolve_energies": (i, [p, dp]),
        "cisolve_converged": (i, [p, ip]),
        "cisolve_vectors": (i, [p, dp]),
        "cisolve_s2": (i, [p, dp]),
        "cisolve_iterations": (i, [p, ctypes.POINTER(i), ctypes.POINTER(i64)]),
        "cisolve_backend": (ctypes.c_char_p, [p]),
        "cisolve_timings": (i, [p, dp]),
        "cisolve_dets": (i, [p, up, up]),
        "cisolve_det_addresses": (i, [p, i32p, i32p]),
        "cisolve_set_orbsym": (i, [p, p]),
        "cisolve_rdm12s": (i, [p, dp, dp] + [p] * 6),
        "cisolve_rdm12": (i, [p, dp, dp, p, p]),
        "cisolve_apply": (i, [p, i, dp, dp]),
        "cisolve_diagonal": (i, [p, dp]),
        "cisolve_spin_square": (i, [p, i, dp, dp]),
        "cisolve_last_error": (ctypes.c_char_p, []),
        "cisolve_destroy": (None, [ctypes.POINTER(p)]),
        "cisolve_version": (ctypes.c_char_p, []),
    }
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    _lib = lib
    return lib


def version():
    """The library's version."""
    return _load().cisolve_version().decode()


def _check(rc):
    if rc != OK:
        raise Error(_load().cisolve_last_error().decode(errors="replace"), rc)


def _nelec(nelec):
    """(nalpha, nbeta) from an int (PySCF's rule: the extra electron is alpha) or a pair."""
    if isinstance(nelec, (int, np.integer)):
        nb = int(nelec) // 2
        return int(nelec) - nb, nb
    na, nb = nelec
    return int(na), int(nb)


def _eri8(eri, norb):
    """The integrals as 8-fold packed (pq|rs) (PySCF's ao2mo.restore(8, ...)), from the 8-fold,
    4-fold (npair x npair) or full (norb^4 values) forms."""
    eri = np.asarray(eri)
    if np.iscomplexobj(eri):
        raise Error("eri is complex: cisolve takes real orbitals")
    eri = np.asarray(eri, dtype=np.float64)
    npair = norb * (norb + 1) // 2
    n8 = npair * (npair + 1) // 2
    tp, tq = np.tril_indices(norb)
    if eri.size == n8 and eri.ndim == 1:
        return np.ascontiguousarray(eri)
    if eri.size == npair * npair and eri.ndim in (1, 2):
        m = eri.reshape(npair, npair)
    elif eri.size == norb ** 4:
        full = eri.reshape(norb, norb, norb, norb)
        m = full[tp, tq][:, tp, tq]
    else:
        raise Error("eri has %d values (shape %s): for norb=%d expected %d (8-fold packed), "
                    "%dx%d (4-fold) or %d^4 (full)" % (eri.size, eri.shape, norb, n8, npair,
                                                        npair, norb))
    i, j = np.tril_indices(npair)
    return np.ascontiguousarray(m[i, j])


def _h1e(h1e, norb):
    h1e = np.asarray(h1e)
    if np.iscomplexobj(h1e):
        raise Error("h1e is complex: cisolve takes real orbitals")
    h1e = np.ascontiguousarray(h1e, dtype=np.float64)
    if h1e.shape != (norb, norb):
        raise Error("h1e has shape %s: expected (%d, %d)" % (h1e.shape, norb, norb))
    return h1e


def _option_value(v):
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    return str(v)


class Solver:
    """One problem and its options (a handle of the C API). Lower level than solve(): the space
    can be built and its determinants read before a solve (a guess is given in its order)."""

    def __init__(self, h1e, eri, norb, nelec, ecore=0.0, **options):
        lib = _load()
        norb = int(norb)
        na, nb = _nelec(nelec)
        self.norb, self.nelec = norb, (na, nb)
        self._h = ctypes.c_void_p()
        _check(lib.cisolve_create(norb, na, nb, _h1e(h1e, norb), _eri8(eri, norb), float(ecore),
                                  ctypes.byref(self._h)))
        for k, v in options.items():
            self.set_option(k, v)

    def __del__(self):
        self.close()

    def close(self):
        h = getattr(self, "_h", None)
        if h is not None and h.value and _lib is not None:
            _lib.cisolve_destroy(ctypes.byref(h))

    def set_integrals(self, h1e, eri, ecore=0.0):
        """Other integrals of the same orbitals and electrons (CASSCF's next macro-iteration).
        The space, once built, is kept with its order (a guess in it stays valid): cheaper than a
        new Solver."""
        _check(_load().cisolve_set_integrals(self._h, _h1e(h1e, self.norb),
                                             _eri8(eri, self.norb), float(ecore)))

    def set_option(self, key, value):
        """A long option of `cisolve --help` (underscores read as dashes); None skips it."""
        if value is None:
            return
        _check(_load().cisolve_set_option(self._h, key.replace("_", "-").encode(),
                                          _option_value(value).encode()))

    def set_orbsym(self, orbsym):
        """The orbitals' irreps, norb values 1..8 in Molpro's numbering (an FCIDUMP's ORBSYM);
        None removes them. With them the option irrep restricts the space to one irrep."""
        lib = _load()
        if orbsym is None:
            _check(lib.cisolve_set_orbsym(self._h, None))
            return
        o = np.ascontiguousarray(orbsym, dtype=np.intc).ravel()
        if o.size != self.norb:
            raise Error("orbsym has %d values: expected one per orbital (%d)" % (o.size, self.norb))
        _check(lib.cisolve_set_orbsym(self._h, o.ctypes.data_as(ctypes.c_void_p)))

    def build_space(self):
        _check(_load().cisolve_build_space(self._h))

    @property
    def ndet(self):
        """Determinants of the space (built now if need be)."""
        self.build_space()
        return int(_load().cisolve_ndet(self._h))

    def dets(self):
        """(alpha, beta): the determinants' strings, (ndet, nwords) uint64 each, our order."""
        n, nw = self.ndet, _load().cisolve_nwords(self._h)
        a = np.zeros((n, nw), dtype=np.uint64)
        b = np.zeros((n, nw), dtype=np.uint64)
        _check(_load().cisolve_dets(self._h, a, b))
        return a, b

    def det_addresses(self):
        """(ia, ib): each determinant's alpha and beta string as its position in the ascending
        lists of the space's distinct strings, (ndet,) int32 each, our order; for FCI these are
        PySCF's cistring addresses."""
        n = self.ndet
        ia = np.zeros(n, dtype=np.int32)
        ib = np.zeros(n, dtype=np.int32)
        _check(_load().cisolve_det_addresses(self._h, ia, ib))
        return ia, ib

    def set_guess(self, X):
        """Guess vectors, (ndet,) or (ndet, k), in our order; None removes the guess."""
        lib = _load()
        if X is None:
            _check(lib.cisolve_set_guess(self._h, 0, np.zeros(1)))
            return
        X = np.asarray(X, dtype=np.float64)
        if X.ndim == 1:
            X = X[:, None]
        n = self.ndet
        if X.ndim != 2 or X.shape[0] != n:
            raise Error("guess has shape %s: expected (%d,) or (%d, k), the space's "
                        "determinants in cisolve's order" % (X.shape, n, n))
        _check(lib.cisolve_set_guess(self._h, X.shape[1], np.ascontiguousarray(X.T)))

    def _columns(self, X, what):
        """(X^T as k contiguous vectors, whether X was one vector) for vectors of the space in
        our order, (ndet,) or (ndet, k)."""
        X = np.asarray(X, dtype=np.float64)
        one = X.ndim == 1
        if one:
            X = X[:, None]
        n = self.ndet
        if X.ndim != 2 or X.shape[0] != n or X.shape[1] < 1:
            raise Error("%s: vectors of shape %s: expected (%d,) or (%d, k), the space's "
                        "determinants in cisolve's order" % (what, X.shape, n, n))
        return np.ascontiguousarray(X.T), one

    def apply(self, X):
        """H X (without ecore) for vectors of the space in our order, (ndet,) or (ndet, k): the
        rows of H generated for this product, on the GPU where the options put the solve."""
        xt, one = self._columns(X, "apply")
        yt = np.empty_like(xt)
        _check(_load().cisolve_apply(self._h, xt.shape[0], xt, yt))
        return yt[0] if one else yt.T

    def spin_square(self, X):
        """<S^2> of vectors of the space in our order: a number for (ndet,), an array of k for
        (ndet, k)."""
        xt, one = self._columns(X, "spin_square")
        s2 = np.empty(xt.shape[0])
        _check(_load().cisolve_spin_square(self._h, xt.shape[0], xt, s2))
        return float(s2[0]) if one else s2

    def diagonal(self):
        """The diagonal of H (without ecore), (ndet,) in our order."""
        d = np.empty(self.ndet)
        _check(_load().cisolve_diagonal(self._h, d))
        return d

    def solve(self):
        """Solve; a Result (a warning when some root did not converge)."""
        lib = _load()
        rc = lib.cisolve_solve(self._h)
        msg = lib.cisolve_last_error().decode(errors="replace")
        if rc not in (OK, NOT_CONVERGED):
            raise Error(msg, rc)
        if rc == NOT_CONVERGED:
            warnings.warn("cisolve: " + msg, RuntimeWarning, stacklevel=2)
        return Result(self)

    def _rdm_vectors(self, bra, ket, what):
        n = self.ndet
        bra = np.ascontiguousarray(bra, dtype=np.float64).ravel()
        ket = bra if ket is bra else np.ascontiguousarray(ket, dtype=np.float64).ravel()
        if bra.size != n or ket.size != n:
            raise Error("%s: bra and ket need %d values each (got %d and %d)"
                        % (what, n, bra.size, ket.size))
        return bra, ket

    def rdm12(self, bra, ket, two=True):
        """(dm1, dm2): the spin sums of rdm12s's matrices (PySCF's fci.direct_spin1.trans_rdm12
        / make_rdm12), dm2 from one product of intermediates where rdm12s's take three;
        two=False: dm1 alone, and None."""
        bra, ket = self._rdm_vectors(bra, ket, "rdm12")
        norb = self.norb
        d1 = np.zeros((norb, norb))
        d2 = np.zeros((norb,) * 4) if two else None
        ptrs = [None if m is None else m.ctypes.data_as(ctypes.c_void_p) for m in (d1, d2)]
        _check(_load().cisolve_rdm12(self._h, bra, ket, *ptrs))
        return d1, d2

    def rdm12s(self, bra, ket, two=True):
        """((dm1a, dm1b), (dm2aa, dm2ab, dm2ba, dm2bb)) of <bra| ... |ket> (vectors of the
        space in our order), PySCF's conventions (fci.direct_spin1.trans_rdm12s); two=False:
        the one-particle matrices alone, and None for the others."""
        bra, ket = self._rdm_vectors(bra, ket, "rdm12s")
        norb = self.norb
        d1 = [np.zeros((norb, norb)) for _ in range(2)]
        d2 = [np.zeros((norb,) * 4) for _ in range(4)] if two else [None] * 4
        ptrs = [None if m is None else m.ctypes.data_as(ctypes.c_void_p) for m in d1 + d2]
        _check(_load().cisolve_rdm12s(self._h, bra, ket, *ptrs))
        return tuple(d1), tuple(d2)


# The steps of a solve whose seconds Result.timings gives (include/cisolve.h, cisolve_timings).
TIMINGS = ("space", "hamiltonian", "backend", "operator", "states", "solver", "products",
           "orthogonalisation", "check", "results", "total")


class Result:
    """What a solve found: energies (nroots, with ecore), vectors (ndet, nroots, our order),
    alpha / beta (ndet, nwords) uint64 strings, s2 (<S^2>, nroots), converged (nroots bools),
    iterations, matvecs, backend (what it ran on), timings (seconds the solve's steps took:
    TIMINGS names them, as cisolve_timings does)."""

    def __init__(self, solver):
        lib, h = _load(), solver._h
        self._solver = solver  # kept for rdm12s
        k = lib.cisolve_nroots(h)
        n = int(lib.cisolve_ndet(h))
        self.nroots, self.ndet, self.norb, self.nelec = k, n, solver.norb, solver.nelec
        self.energies = np.zeros(k)
        _check(lib.cisolve_energies(h, self.energies))
        vt = np.zeros((k, n))
        _check(lib.cisolve_vectors(h, vt))
        self.vectors = vt.T
        self._s2 = None
        conv = np.zeros(k, dtype=np.intc)
        _check(lib.cisolve_converged(h, conv))
        self.converged = conv.astype(bool)
        it, mv = ctypes.c_int(), ctypes.c_int64()
        _check(lib.cisolve_iterations(h, ctypes.byref(it), ctypes.byref(mv)))
        self.iterations, self.matvecs = it.value, mv.value
        self.backend = lib.cisolve_backend(h).decode()
        t = np.zeros(len(TIMINGS))
        _check(lib.cisolve_timings(h, t))
        self.timings = dict(zip(TIMINGS, t.tolist()))
        self._dets = None

    @property
    def s2(self):
        """<S^2> of each root (computed when first asked for, on the solve's GPU where it ran
        on one)."""
        if self._s2 is None:
            s2 = np.zeros(self.nroots)
            _check(_load().cisolve_s2(self._solver._h, s2))
            self._s2 = s2
        return self._s2

    @property
    def alpha(self):
        if self._dets is None:
            self._dets = self._solver.dets()
        return self._dets[0]

    @property
    def beta(self):
        if self._dets is None:
            self._dets = self._solver.dets()
        return self._dets[1]

    def _vec(self, v):
        if isinstance(v, (int, np.integer)):
            return self.vectors[:, int(v)]
        return v

    def rdm12s(self, bra=0, ket=None):
        """Spin-resolved 1- and 2-RDMs <bra| ... |ket>: bra and ket are root indices or vectors
        (ket None: bra's), ((dm1a, dm1b), (dm2aa, dm2ab, dm2ba, dm2bb)) as PySCF's
        fci.direct_spin1.trans_rdm12s (make_rdm12s when bra == ket)."""
        b = self._vec(bra)
        return self._solver.rdm12s(b, b if ket is None else self._vec(ket))


def solve(h1e, eri, norb, nelec, ecore=0.0, guess=None, **options):
    """The lowest eigenpairs of the CI Hamiltonian of h1e (norb x norb) and eri (8-fold packed,
    4-fold or full (pq|rs)) with nelec electrons (an int or (nalpha, nbeta)), ecore added to the
    energies; guess: vectors (ndet,) or (ndet, k) in cisolve's order; options: the long options
    of `cisolve --help` (nroots=3, spin=0, tol=1e-10, max_iter=100, space="cisd",
    device="cpu", threads=4, ...). Returns a Result; raises cisolve.Error with cisolve's
    message on a refusal."""
    s = Solver(h1e, eri, norb, nelec, ecore, **options)
    if guess is not None:
        s.set_guess(guess)
    return s.solve()
