#!/usr/bin/env python3
"""Write a cisolve input.h5 (version 1, docs/input-format.md) from an FCIDUMP or from a
PySCF calculation.

Command line:
    to_input_h5.py FCIDUMP -o input.h5 [--space cisd] [--nroots 3] [--option tol=1e-8]
                   [--reference "0 1 2/0 1 2"] [--list dets.txt]

As a module:
    from to_input_h5 import write_input, from_scf, from_fcidump
    write_input("in.h5", h1e, eri, norb, nelec, ms2=0, ecore=e_nuc, space="cisd",
                options={"nroots": 3})
    from_scf(mf, "in.h5", ncas=8, nelecas=8, space="cisd", options={"nroots": 2})

Occupation lists (0-based orbital indices) are turned into the bit strings the file holds:
orbital p is bit p % 64 of word p // 64.
"""
import argparse
import re
import sys

import h5py
import numpy as np

FORMAT = "cisolve-input"
VERSION = 1


def nwords(norb):
    return (norb + 63) // 64


def occ_to_bits(occ, norb):
    """0-based occupied orbitals -> uint64 words."""
    words = np.zeros(nwords(norb), dtype=np.uint64)
    for p in occ:
        p = int(p)
        if not 0 <= p < norb:
            raise ValueError(f"orbital {p} outside 0..{norb - 1}")
        words[p // 64] |= np.uint64(1) << np.uint64(p % 64)
    return words


def dets_to_bits(dets, norb):
    """[(alpha_occ, beta_occ), ...] -> (alpha, beta) arrays of shape (ndet, nwords)."""
    a = np.array([occ_to_bits(d[0], norb) for d in dets], dtype=np.uint64)
    b = np.array([occ_to_bits(d[1], norb) for d in dets], dtype=np.uint64)
    return a.reshape(len(dets), nwords(norb)), b.reshape(len(dets), nwords(norb))


def pack_eri(eri, norb):
    """Any PySCF symmetry form (1-fold 4-D or 2-D, 4-fold, 8-fold) -> 8-fold packed 1-D."""
    from pyscf import ao2mo
    eri = np.asarray(eri, dtype=np.float64)
    if eri.ndim == 4:
        eri = eri.reshape(norb * norb, norb * norb)
    return np.ascontiguousarray(ao2mo.restore(8, eri, norb)).ravel()


def parse_space(space):
    """'fci' | 'cisd' | 'cisdt' | 'ci<N>' | 'list' -> (kind, level)."""
    s = space.lower()
    named = {"fci": ("fci", None), "cisd": ("truncated", 2), "cisdt": ("truncated", 3),
             "cisdtq": ("truncated", 4), "list": ("list", None)}
    if s in named:
        return named[s]
    m = re.fullmatch(r"ci(\d+)", s)
    if m and int(m.group(1)) > 0:
        return "truncated", int(m.group(1))
    raise ValueError(f"space '{space}': expected fci, cisd, cisdt, ci<N> or list")


def _write_space(f, norb, space, reference, dets):
    if space is None and reference is None and dets is None:
        return
    kind, level = parse_space(space or ("list" if dets is not None else "fci"))
    g = f.create_group("space")
    g.attrs["kind"] = kind
    if level is not None:
        g.create_dataset("level", data=np.int64(level))
    if reference is not None:
        a, b = dets_to_bits(reference, norb)
        g.create_dataset("reference_alpha", data=a)
        g.create_dataset("reference_beta", data=b)
    if kind == "list":
        if dets is None:
            raise ValueError("space 'list' needs dets=[(alpha_occ, beta_occ), ...]")
        a, b = dets_to_bits(dets, norb)
        g.create_dataset("det_alpha", data=a)
        g.create_dataset("det_beta", data=b)


def write_input(path, h1e, eri, norb, nelec, ms2=0, ecore=0.0, orbsym=None, isym=None,
                space=None, reference=None, dets=None, options=None):
    """Write input.h5. orbsym: FCIDUMP (1-based) irrep labels. space: see parse_space.
    reference/dets: lists of (alpha_occ, beta_occ) with 0-based orbitals. options: dict of
    long command-line option names to int, float or str values."""
    norb = int(norb)
    h1e = np.asarray(h1e, dtype=np.float64).reshape(norb, norb)
    h1e = 0.5 * (h1e + h1e.T)  # round-off of C^T h C leaves it asymmetric in the last bits
    with h5py.File(path, "w") as f:
        f.attrs["format"] = FORMAT
        f.attrs["version"] = np.int64(VERSION)
        g = f.create_group("integrals")
        g.create_dataset("norb", data=np.int64(norb))
        g.create_dataset("nelec", data=np.int64(nelec))
        g.create_dataset("ms2", data=np.int64(ms2))
        g.create_dataset("ecore", data=np.float64(ecore))
        g.create_dataset("h1e", data=h1e)
        g.create_dataset("eri", data=pack_eri(eri, norb))
        if orbsym is not None:
            g.create_dataset("orbsym", data=np.asarray(orbsym, dtype=np.int64))
        if isym is not None:
            g.create_dataset("isym", data=np.int64(isym))
        _write_space(f, norb, space, reference, dets)
        if options:
            o = f.create_group("options")
            for k, v in options.items():
                o.attrs[k] = v


def from_fcidump(fcidump, path, **kw):
    """FCIDUMP -> input.h5 (keyword arguments as write_input)."""
    from pyscf.tools import fcidump as fd
    d = fd.read(fcidump, molpro_orbsym=False, verbose=False)
    norb, nelec, ms2 = d["NORB"], d["NELEC"], d.get("MS2", d.get("MS", 0))
    orbsym = d.get("ORBSYM")  # as written in the file (molpro_orbsym=False)
    if orbsym is None or len(orbsym) != norb:
        orbsym = None
    write_input(path, d["H1"], d["H2"], norb, nelec, ms2, d.get("ECORE", 0.0), orbsym,
                d.get("ISYM"), **kw)


def from_scf(mf, path, ncas=None, nelecas=None, ms2=None, **kw):
    """PySCF SCF object -> input.h5 over its molecular orbitals. With ncas/nelecas, the
    lowest doubly occupied orbitals are frozen into ecore (as in a CASCI)."""
    from pyscf import ao2mo, mcscf
    mol = mf.mol
    if ms2 is None:
        ms2 = mol.spin
    if ncas is None:
        mo = mf.mo_coeff
        norb = mo.shape[1]
        h1e = mo.T @ mf.get_hcore() @ mo
        eri = ao2mo.kernel(mol, mo)
        ecore, nelec = mol.energy_nuc(), mol.nelectron
    else:
        nelecas = mol.nelectron - 2 * ((mol.nelectron - ncas) // 2) if nelecas is None else nelecas
        mc = mcscf.CASCI(mf, ncas, nelecas)
        h1e, ecore = mc.get_h1eff()
        eri, norb, nelec = mc.get_h2eff(), ncas, nelecas
    write_input(path, h1e, eri, norb, nelec, ms2, ecore, **kw)


def _typed(v):
    for conv in (int, float):
        try:
            return conv(v)
        except ValueError:
            pass
    return v


def _occ_pair(text):
    a, sep, b = text.partition("/")
    if not sep:
        raise argparse.ArgumentTypeError(f"'{text}': expected 'ALPHA_OCC/BETA_OCC'")
    return ([int(x) for x in a.replace(",", " ").split()],
            [int(x) for x in b.replace(",", " ").split()])


def main(argv=None):
    ap = argparse.ArgumentParser(description="FCIDUMP -> cisolve input.h5 (version 1)")
    ap.add_argument("fcidump")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--space", help="fci, cisd, cisdt, ci<N> or list")
    ap.add_argument("--reference", action="append", type=_occ_pair, metavar="A/B",
                    help="reference determinant as 0-based occupied orbitals, e.g. "
                         "'0 1 2/0 1 2'; repeat for several")
    ap.add_argument("--list", metavar="FILE",
                    help="determinant list: one 'ALPHA_OCC/BETA_OCC' per line (space list)")
    ap.add_argument("--nroots", type=int)
    ap.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                    help="any long command-line option stored in the file")
    args = ap.parse_args(argv)
    options = {}
    if args.nroots is not None:
        options["nroots"] = args.nroots
    for kv in args.option:
        k, sep, v = kv.partition("=")
        if not sep:
            ap.error(f"--option {kv}: expected KEY=VALUE")
        options[k] = _typed(v)
    dets = None
    if args.list:
        with open(args.list) as fh:
            dets = [_occ_pair(line) for line in fh if line.strip()]
    from_fcidump(args.fcidump, args.output, space=args.space, reference=args.reference,
                 dets=dets, options=options)
    return 0


if __name__ == "__main__":
    sys.exit(main())
