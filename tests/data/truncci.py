"""Truncated-CI references built from PySCF's own Hamiltonian action.

Used by make_refs.py. Three ways to apply H, all PySCF's matrix elements:

* full FCI grid:   direct_spin1.contract_2e(absorb_h1e(...)) on the (na, nb) grid;
* selected strings: selected_ci.contract_2e on the product grid of chosen
  alpha x beta strings (exact H among those determinants; norb < 64 only);
* E_pq operators:  H = sum h'_pq E_pq + 1/2 sum (pq|rs) E_pq E_rs with
  E_pq = A_pq (x) 1 + 1 (x) B_pq, where A_pq and B_pq are the string
  excitation tables of cistring.gen_linkstr_index (PySCF's signs); works for
  norb >= 64 and exploits sparse integrals. check_eop_against_pyscf() proves
  it equal to direct_spin1.contract_2e.

In every case the truncation is a mask on determinants (total excitation level
from a reference determinant); Davidson (pyscf.lib.davidson) runs on the
compressed vector of kept determinants, and the final residual is returned.
"""
import numpy as np
import scipy.sparse as sp
from pyscf import lib, ao2mo
from pyscf.fci import cistring, direct_spin1


def string_levels(norb, nelec, ref_occ):
    """Excitation level of every string (PySCF address order) w.r.t. ref_occ."""
    occ = np.asarray(cistring.gen_occslst(range(norb), nelec)).reshape(-1, nelec)
    ref = np.zeros(norb, dtype=bool)
    ref[list(ref_occ)] = True
    return (~ref[occ]).sum(axis=1)


def level_mask(norb, nelec, max_level):
    """Flat indices of the (na, nb) FCI grid with total excitation level
    (alpha + beta, from the aufbau determinant) <= max_level."""
    na_el, nb_el = nelec
    la = string_levels(norb, na_el, range(na_el))
    lb = string_levels(norb, nb_el, range(nb_el))
    tot = la[:, None] + lb[None, :]
    return np.flatnonzero(tot.ravel() <= max_level), (len(la), len(lb))


def davidson_masked(matvec_grid, grid_shape, sel, hdiag_sel, ref_pos,
                    tol=1e-12, max_cycle=150, max_space=24, verbose=0):
    """Lowest eigenpair of P H P on the kept determinants sel (flat grid indices).

    matvec_grid(X) must return H X for X of shape grid_shape.
    Returns (e, c_compressed, residual_norm)."""
    n = int(np.prod(grid_shape))
    hdiag_sel = np.asarray(hdiag_sel, dtype=float).ravel()

    def aop1(x):
        X = np.zeros(n)
        X[sel] = x
        return np.asarray(matvec_grid(X.reshape(grid_shape))).ravel()[sel]

    def precond(r, e, *args):
        return r / (hdiag_sel - e + 1e-4)

    x0 = np.zeros(len(sel))
    x0[ref_pos] = 1.0
    e, c = lib.davidson(aop1, [x0], precond, tol=tol, max_cycle=max_cycle,
                        max_space=max_space, lindep=1e-14, verbose=verbose)
    r = aop1(c) - e * c
    return e, c, float(np.linalg.norm(r))


# ---------------------------------------------------------------- FCI grid

def fci_grid_matvec(h1e, eri, norb, nelec):
    h2e = direct_spin1.absorb_h1e(h1e, eri, norb, nelec, 0.5)
    link = (cistring.gen_linkstr_index_trilidx(range(norb), nelec[0]),
            cistring.gen_linkstr_index_trilidx(range(norb), nelec[1]))

    def mv(X):
        return direct_spin1.contract_2e(h2e, X, norb, nelec, link).reshape(X.shape)
    return mv


# ---------------------------------------------------------- selected strings

def sci_strings(norb, nel, max_level):
    strs = cistring.make_strings(range(norb), nel)
    lev = string_levels(norb, nel, range(nel))
    return np.asarray(strs[lev <= max_level], dtype=np.int64)


def sci_matvec(h1e, eri, norb, nelec, ci_strs):
    from pyscf.fci import selected_ci
    h2e = direct_spin1.absorb_h1e(h1e, eri, norb, nelec, 0.5)
    h2e = ao2mo.restore(1, h2e, norb)
    link = selected_ci._all_linkstr_index(ci_strs, norb, nelec)

    def mv(X):
        v = selected_ci._as_SCIvector(np.ascontiguousarray(X), ci_strs)
        return np.asarray(selected_ci.contract_2e(h2e, v, norb, nelec, link)).reshape(X.shape)
    hdiag = selected_ci.make_hdiag(h1e, eri, ci_strs, norb, nelec)
    return mv, hdiag


def sci_levels(norb, nelec, ci_strs):
    """Total excitation level on the selected product grid (flat)."""
    def lev(strs, nel):
        ref = (1 << nel) - 1
        return np.array([bin(int(s) ^ ref).count('1') // 2 for s in strs])
    return (lev(ci_strs[0], nelec[0])[:, None] + lev(ci_strs[1], nelec[1])[None, :]).ravel()


# -------------------------------------------------------------- E_pq operators

def unpack_sparse_eri(eri8, norb, tol=0.0):
    """All (p,q,r,s) -> value of an 8-fold packed eri with |value| > tol."""
    nz = np.flatnonzero(np.abs(eri8) > tol)
    tri = np.array([(i, j) for i in range(norb) for j in range(i + 1)])
    out = {}
    for idx in nz:
        ij = int((np.sqrt(8 * idx + 1) - 1) // 2)
        while ij * (ij + 1) // 2 > idx:
            ij -= 1
        while (ij + 1) * (ij + 2) // 2 <= idx:
            ij += 1
        kl = idx - ij * (ij + 1) // 2
        i, j = tri[ij]
        k, l = tri[kl]
        v = eri8[idx]
        for (a, b) in ((i, j), (j, i)):
            for (c, d) in ((k, l), (l, k)):
                out[(a, b, c, d)] = v
                out[(c, d, a, b)] = v
    return out


def excitation_ops(norb, nel):
    """{(p,q): sparse A_pq} with A_pq[str1, str0] = sign of p^+ q |str0>."""
    link = cistring.gen_linkstr_index(range(norb), nel)
    ns, nlink = link.shape[:2]
    a = link[:, :, 0].ravel().astype(np.int64)
    i = link[:, :, 1].ravel().astype(np.int64)
    str1 = link[:, :, 2].ravel()
    sign = link[:, :, 3].ravel().astype(float)
    str0 = np.repeat(np.arange(ns), nlink)
    key = a * norb + i
    order = np.argsort(key, kind='stable')
    key, str0, str1, sign = key[order], str0[order], str1[order], sign[order]
    bounds = np.flatnonzero(np.diff(key)) + 1
    ops = {}
    for lo, hi in zip(np.r_[0, bounds], np.r_[bounds, len(key)]):
        p, q = divmod(int(key[lo]), norb)
        ops[(p, q)] = sp.csr_matrix((sign[lo:hi], (str1[lo:hi], str0[lo:hi])), shape=(ns, ns))
    return ops


class EopHamiltonian:
    """H X for X on the (na, nb) FCI grid, from sparse integrals.

    H X = Haa X + X Hbb^T + sum_{pqrs} (pq|rs) A_pq X B_rs^T, with
    Haa = sum k_pq A_pq + 1/2 sum (pq|rs) A_pq A_rs, k_ps = h_ps - 1/2 sum_q (pq|qs).
    """

    def __init__(self, h1e, eri8, norb, nelec, tol=0.0):
        g = unpack_sparse_eri(eri8, norb, tol)
        k = np.array(h1e, dtype=float, copy=True)
        for (p, q, r, s), v in g.items():
            if q == r:
                k[p, s] -= 0.5 * v
        A = excitation_ops(norb, nelec[0])
        B = A if nelec[0] == nelec[1] else excitation_ops(norb, nelec[1])
        self.shape = (A[(0, 0)].shape[0], B[(0, 0)].shape[0])
        self.Haa = self._same_spin(A, k, g)
        self.Hbb = self.Haa if B is A else self._same_spin(B, k, g)
        by_rs = {}
        for (p, q, r, s), v in g.items():
            by_rs.setdefault((r, s), []).append((p, q, v))
        self.mixed = []
        for (r, s), terms in by_rs.items():
            if (r, s) not in B:
                continue
            M = sum(v * A[(p, q)] for p, q, v in terms if (p, q) in A)
            if isinstance(M, int):
                continue
            coo = B[(r, s)].tocoo()
            self.mixed.append((M.tocsr(), coo.col, coo.row, coo.data))

    @staticmethod
    def _same_spin(A, k, g):
        n = A[(0, 0)].shape[0]
        terms = [k[p, q] * op for (p, q), op in A.items() if k[p, q] != 0.0]
        terms += [(0.5 * v) * (A[(p, q)] @ A[(r, s)]) for (p, q, r, s), v in g.items()
                  if (p, q) in A and (r, s) in A]
        coo = [t.tocoo() for t in terms]
        rows = np.concatenate([c.row for c in coo])
        cols = np.concatenate([c.col for c in coo])
        vals = np.concatenate([c.data for c in coo])
        return sp.csr_matrix((vals, (rows, cols)), shape=(n, n))  # duplicates are summed

    def __call__(self, X):
        X = np.asarray(X).reshape(self.shape)
        XT = np.ascontiguousarray(X.T)
        YT = np.asarray(self.Hbb @ XT)
        for M, src, dst, sgn in self.mixed:
            ZT = XT[src] * sgn[:, None]
            YT[dst] += np.asarray(M @ ZT.T).T
        return np.asarray(self.Haa @ X) + YT.T


def check_eop_against_pyscf(h1e, eri8, norb, nelec, seed=7):
    """max |H x (E_pq route) - H x (direct_spin1.contract_2e)| on a random x."""
    hop = EopHamiltonian(h1e, eri8, norb, nelec)
    x = np.random.default_rng(seed).standard_normal(hop.shape)
    ref = fci_grid_matvec(h1e, eri8, norb, nelec)(x)
    return float(np.max(np.abs(hop(x) - ref)))
