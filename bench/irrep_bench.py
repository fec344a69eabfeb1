#!/usr/bin/env python3
"""FCI of a D2h molecule in its ground-state irrep against the same FCI without symmetry (C1):
dimension and time, for cisolve (--irrep) and for PySCF (direct_spin1_symm with wfnsym against
direct_spin1), back to back on one machine.

    irrep_bench.py make OUT.fcidump          # here: N2/cc-pVDZ CAS(10e,14o), Molpro ORBSYM
    irrep_bench.py run FCIDUMP CISOLVE [--csv OUT] [--device auto]

`make` needs pyscf.tools.fcidump (PySCF's DFT libraries); `run` needs only PySCF's FCI, and
reads the FCIDUMP with bench/pyscf_fci.py's reader. The irrep is the file's ground state's: Ag.
"""
import argparse
import datetime
import os
import re
import subprocess
import sys
import time

import numpy as np

# Molpro's D2h numbering (FCIDUMP ORBSYM) -> PySCF's irrep ids (pyscf.tools.fcidump.ORBSYM_MAP)
MOLPRO_TO_PYSCF_D2H = {1: 0, 4: 1, 6: 2, 7: 3, 8: 4, 5: 5, 3: 6, 2: 7}


def make(path, ncas=14):
    from pyscf import gto, mcscf, scf
    from pyscf.tools import fcidump
    mol = gto.M(atom="N 0 0 0; N 0 0 1.12", basis="cc-pvdz", symmetry="D2h", verbose=0)
    mf = scf.RHF(mol).run(conv_tol=1e-12)
    mc = mcscf.CASCI(mf, ncas, 10)
    h1, ecore = mc.get_h1eff()
    h2 = mc.get_h2eff()
    orbsym = [fcidump.ORBSYM_MAP["D2h"][g] for g in mc.mo_coeff.orbsym[mc.ncore:mc.ncore + ncas]]
    fcidump.from_integrals(path, h1, h2, ncas, 10, nuc=ecore, ms=0, orbsym=orbsym, tol=1e-15)
    print("wrote", path)


def run(args):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from pyscf import fci, lib
    from pyscf_fci import read_fcidump
    norb, nelec, ms2, ecore, h1, eri = read_fcidump(args.fcidump)
    head = open(args.fcidump).read(4000)
    orbsym_molpro = [int(x) for x in re.search(r"ORBSYM\s*=\s*([\d,\s]+)", head, re.I)
                     .group(1).replace(",", " ").split()][:norb]
    orbsym = np.array([MOLPRO_TO_PYSCF_D2H[g] for g in orbsym_molpro])
    na, nb = (nelec + ms2) // 2, (nelec - ms2) // 2
    rows = []

    def cisolve(extra):
        t0 = time.perf_counter()
        out = subprocess.run([args.cisolve, args.fcidump, "--output", "/dev/null", "--device",
                              args.device] + extra, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if out.returncode:
            sys.exit("cisolve failed: %s %s" % (out.stdout[-2000:], out.stderr[-2000:]))
        e = float(re.search(r"^\s*0\s+(-\d+\.\d+)\s", out.stdout, re.M).group(1))
        n = int(re.search(r"space\s+.*?, (\d+) determinants", out.stdout).group(1))
        return e, n, wall

    for label, extra in (("cisolve C1", []), ("cisolve Ag", ["--irrep", "Ag"])):
        e, n, wall = cisolve(extra)
        rows.append((label, n, e, wall))
    threads = lib.num_threads()
    for label, symm in (("PySCF direct_spin1 (C1)", False), ("PySCF direct_spin1_symm Ag", True)):
        s = fci.direct_spin1_symm.FCI() if symm else fci.direct_spin1.FCI()
        s.conv_tol = 1e-10
        kw = {"orbsym": orbsym, "wfnsym": 0} if symm else {}
        t0 = time.perf_counter()
        e, c = s.kernel(h1, eri, norb, (na, nb), ecore=ecore, **kw)
        rows.append((label, c.size if not symm else int(np.count_nonzero(
            fci.direct_spin1_symm._gen_strs_irrep(fci.cistring.make_strings(range(norb), na),
                                                   orbsym)[:, None] ^
            fci.direct_spin1_symm._gen_strs_irrep(fci.cistring.make_strings(range(norb), nb),
                                                   orbsym)[None, :] == 0)),
                     e, time.perf_counter() - t0))
    print("%-28s %12s %18s %10s" % ("", "determinants", "energy (Eh)", "time (s)"))
    for r in rows:
        print("%-28s %12d %18.10f %10.2f" % r)
    print("cisolve C1/Ag time %.2f, PySCF C1/Ag time %.2f, PySCF Ag / cisolve Ag %.2f; "
          "energies agree to %.1e Eh" % (rows[0][3] / rows[1][3], rows[2][3] / rows[3][3],
                                         rows[3][3] / rows[1][3],
                                         max(abs(r[2] - rows[0][2]) for r in rows)))
    if args.csv:
        new = not os.path.exists(args.csv)
        with open(args.csv, "a") as f:
            if new:
                f.write("date,commit,case,side,threads,device,ndet,energy,time_s\n")
            for r in rows:
                f.write("%s,%s,n2-ccpvdz-cas10-14,%s,%d,%s,%d,%.10f,%.3f\n" % (
                    datetime.date.today().isoformat(), os.environ.get("CISOLVE_COMMIT", ""),
                    r[0], threads, args.device if r[0].startswith("cisolve") else "host",
                    r[1], r[2], r[3]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("make")
    m.add_argument("out")
    m.add_argument("--ncas", type=int, default=14)
    r = sub.add_parser("run")
    r.add_argument("fcidump")
    r.add_argument("cisolve")
    r.add_argument("--csv")
    r.add_argument("--device", default="auto")
    a = ap.parse_args()
    if a.cmd == "make":
        make(a.out, a.ncas)
    else:
        run(a)


if __name__ == "__main__":
    sys.exit(main())
