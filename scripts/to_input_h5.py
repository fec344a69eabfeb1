#!/usr/bin/env python3
"""Write a cisolve input.h5 (version 1, docs/input-format.md) from an FCIDUMP or from a
PySCF calculation.

Command line:
    to_input_h5.py FCIDUMP -o input.h5 [--space cisd] [--nroots 3] [--option tol=1e-8]
                   [--reference "0 1 2/0 1 2"] [--list dets.txt] [--cisolve PATH]

An FCIDUMP is read by cisolve itself (`cisolve --write-input`), so that the converter reads
every dialect cisolve reads and refuses what cisolve refuses; this script adds the space and
the options. cisolve is found with --cisolve, else $CISOLVE, else on PATH, else in build/
beside scripts/.

As a module:
    from to_input_h5 import write_input, from_scf, from_fcidump
    write_input("in.h5", h1e, eri, norb, nelec, ms2=0, ecore=e_nuc, space="cisd",
                options={"nroots": 3})
    from_scf(mf, "in.h5", ncas=8, nelecas=8, space="cisd", options={"nroots": 2})

Occupation lists (0-based orbital indices) are turned into the bit strings the file holds:
orbital p is bit p % 64 of word p // 64.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

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


MAX_LEVEL = 1000  # CIS_SPACE_MAX_LEVEL


def parse_space(space):
    """The names cisolve's --space takes: 'fci' | 'cis' | 'cisd' | 'cisdt' | 'cisdtq' |
    'ci<N>' (1 <= N <= 1000) | 'list' -> (kind, level)."""
    s = space.lower()
    named = {"fci": ("fci", None), "cis": ("truncated", 1), "cisd": ("truncated", 2),
             "cisdt": ("truncated", 3), "cisdtq": ("truncated", 4), "list": ("list", None)}
    if s in named:
        return named[s]
    m = re.fullmatch(r"ci(\d+)", s)
    if m and 1 <= int(m.group(1)) <= MAX_LEVEL:
        return "truncated", int(m.group(1))
    raise ValueError(f"space '{space}': expected fci, cis, cisd, cisdt, cisdtq, ci<N> "
                     f"(1 <= N <= {MAX_LEVEL}) or list")


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


def molden_orbitals(mol, active, core=None):
    """The /orbitals group's content for molecule `mol`: the Molden header (its [Molden Format],
    [Atoms] and [GTO] sections and the spherical/Cartesian marks) exactly as
    pyscf.tools.molden.header writes it, and the AO x MO coefficients of the active orbitals
    (and of the doubly occupied core ones, if given) in that file's AO order and normalisation,
    exactly as pyscf.tools.molden.orbital_coeff writes them (Cartesian functions normalised,
    l >= 5 shells dropped when the header drops them, d/f/g functions reordered)."""
    import io
    from pyscf.tools import molden
    text = io.StringIO()
    molden.header(mol, text)
    norm = mol.intor("int1e_ovlp").diagonal() ** 0.5 if mol.cart else None

    def to_molden(c):
        c = np.asarray(c, dtype=np.float64).reshape(mol.nao_nr(), -1)
        if norm is not None:
            c = norm[:, None] * c
        pmol = mol
        if molden.IGNORE_H:
            pmol, c = molden.remove_high_l(mol, c)
        return np.ascontiguousarray(c[molden.order_ao_index(pmol)])

    orb = {"molden_header": text.getvalue(), "active": to_molden(active)}
    if core is not None and np.asarray(core).size:
        orb["core"] = to_molden(core)
    return orb


def _write_orbitals(f, norb, orbitals):
    a = np.asarray(orbitals["active"], dtype=np.float64)
    if a.ndim != 2 or a.shape[1] != norb:
        raise ValueError(f"orbitals['active'] has shape {a.shape}, expected (nao, {norb})")
    g = f.create_group("orbitals")
    g.create_dataset("molden_header",
                     data=np.frombuffer(orbitals["molden_header"].encode("ascii"), np.uint8))
    g.create_dataset("active", data=a)
    core = orbitals.get("core")
    if core is not None:
        core = np.asarray(core, dtype=np.float64)
        if core.ndim != 2 or core.shape[0] != a.shape[0]:
            raise ValueError(f"orbitals['core'] has shape {core.shape}, expected "
                             f"({a.shape[0]}, ncore)")
        g.create_dataset("core", data=core)


def write_input(path, h1e, eri, norb, nelec, ms2=0, ecore=0.0, orbsym=None, isym=None,
                space=None, reference=None, dets=None, options=None, orbitals=None):
    """Write input.h5. orbsym: FCIDUMP (1-based) irrep labels. space: see parse_space.
    reference/dets: lists of (alpha_occ, beta_occ) with 0-based orbitals. options: dict of
    long command-line option names to int, float or str values. orbitals: the /orbitals group
    for a Molden file of natural orbitals (molden_orbitals(mol, active, core))."""
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
        if orbitals is not None:
            _write_orbitals(f, norb, orbitals)


def find_cisolve(cisolve=None):
    """The cisolve executable: the argument, $CISOLVE, PATH, or build/ beside scripts/."""
    here = os.path.dirname(os.path.abspath(__file__))
    for c in (cisolve, os.environ.get("CISOLVE"), shutil.which("cisolve"),
              os.path.join(here, "..", "build", "cisolve")):
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    raise FileNotFoundError("cisolve not found: FCIDUMPs are read by cisolve itself "
                            "(cisolve --write-input); give its path with --cisolve or $CISOLVE, "
                            "or put it on PATH")


def _add_space_options(path, space, reference, dets, options):
    with h5py.File(path, "r+") as f:
        norb = int(np.asarray(f["integrals"].attrs["norb"]))
        _write_space(f, norb, space, reference, dets)
        if options:
            o = f.create_group("options")
            for k, v in options.items():
                o.attrs[k] = v


def from_fcidump(fcidump, path, space=None, reference=None, dets=None, options=None,
                 cisolve=None):
    """FCIDUMP -> input.h5, read and checked by `cisolve --write-input` (every dialect cisolve
    reads; its refusals are raised as RuntimeError with cisolve's message), then the space and
    the options (as write_input) added. The file appears complete or not at all."""
    exe = find_cisolve(cisolve)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".to_input_h5.", suffix=".h5", dir=folder)
    os.close(fd)
    try:
        p = subprocess.run([exe, "--write-input", tmp, fcidump], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True)
        if p.returncode != 0:
            raise RuntimeError((p.stderr.strip() or p.stdout.strip() or
                                "cisolve --write-input exited with %d" % p.returncode))
        _add_space_options(tmp, space, reference, dets, options)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def from_scf(mf, path, ncas=None, nelecas=None, ms2=None, **kw):
    """PySCF SCF object (RHF or ROHF) -> input.h5 over its molecular orbitals.

    ncas and nelecas go together, as in pyscf.mcscf.CASCI(mf, ncas, nelecas): the active
    space is ncas orbitals holding nelecas electrons (an int, or a tuple (nalpha, nbeta)),
    above (mol.nelectron - nelecas) / 2 doubly occupied orbitals frozen into ecore. Neither
    is guessed. ms2 defaults to mol.spin (or nalpha - nbeta of a tuple nelecas).

    The file also carries the orbitals' AO coefficients (/orbitals: molden_orbitals), so that
    `cisolve --molden` can write the natural orbitals as a Molden file."""
    from pyscf import ao2mo, mcscf, scf
    mol = mf.mol
    mo = np.asarray(mf.mo_coeff)
    if isinstance(mf, (scf.uhf.UHF, scf.ghf.GHF)) or mo.ndim != 2:
        raise TypeError("from_scf: %s has unrestricted or generalized orbitals (mo_coeff of "
                        "shape %s); input.h5 holds integrals over one set of spatial orbitals: "
                        "use scf.RHF or scf.ROHF" % (type(mf).__name__, mo.shape))
    if (ncas is None) != (nelecas is None):
        raise ValueError("from_scf: give ncas and nelecas together (the active orbitals and "
                         "the electrons in them, as for mcscf.CASCI), or neither for all "
                         "orbitals and electrons")
    if ncas is None:
        norb = mo.shape[1]
        h1e = mo.T @ mf.get_hcore() @ mo
        eri = ao2mo.kernel(mol, mo)
        ecore, nelec = mol.energy_nuc(), mol.nelectron
        active, core = mo, None
        if ms2 is None:
            ms2 = mol.spin
    else:
        if isinstance(nelecas, (tuple, list)):
            if ms2 is None:
                ms2 = int(nelecas[0]) - int(nelecas[1])
            nelecas = int(nelecas[0]) + int(nelecas[1])
        elif ms2 is None:
            ms2 = mol.spin
        mc = mcscf.CASCI(mf, ncas, nelecas)
        h1e, ecore = mc.get_h1eff()
        eri, norb, nelec = mc.get_h2eff(), ncas, nelecas
        active, core = mo[:, mc.ncore:mc.ncore + ncas], mo[:, :mc.ncore]
    kw.setdefault("orbitals", molden_orbitals(mol, active, core))
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
    ap.add_argument("--cisolve", metavar="PATH",
                    help="the cisolve that reads the FCIDUMP (default: $CISOLVE, PATH, "
                         "build/cisolve)")
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
    try:
        from_fcidump(args.fcidump, args.output, space=args.space, reference=args.reference,
                     dets=dets, options=options, cisolve=args.cisolve)
    except (RuntimeError, FileNotFoundError, ValueError) as exc:
        print("to_input_h5.py: %s" % exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
