#!/usr/bin/env python3
"""CASSCF with cisolve.pyscf.FCISolver against PySCF's own FCI solver, back to back on one
machine: time per macro-iteration and in all, and the energies.

    casscf_bench.py [--case f2-12-12] [--macro N] [--threads T] [--device auto]
                    [--option KEY=VALUE ...] [--sides pyscf,cisolve] [--csv OUT]

Each side runs CASSCF from the same RHF orbitals with the same settings; --macro caps the
macro-iterations of both (then the energies are compared only as a check that both did the same
work). PySCF's side uses T threads (lib.num_threads); cisolve's uses the GPU where there is one
and T host threads.
"""
import argparse
import datetime
import os
import subprocess
import sys
import time

import numpy as np

CASES = {
    # name: (atoms, basis, ncas, nelecas)
    "n2-6-6": ("N 0 0 0; N 0 0 1.098", "cc-pvdz", 6, 6),
    "f2-10-10": ("F 0 0 0; F 0 0 1.412", "cc-pvdz", 10, 10),
    "f2-12-12": ("F 0 0 0; F 0 0 1.412", "cc-pvdz", 12, 12),
    "f2-14-14": ("F 0 0 0; F 0 0 1.412", "cc-pvdz", 14, 14),
}


def _timed(cls, name, acc, key=None):
    """Wrap cls.name so that its calls' count and seconds add up in acc[key or name]."""
    f = getattr(cls, name)
    key = key or name

    def wrapper(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return f(*args, **kwargs)
        finally:
            n, t = acc.get(key, (0, 0.0))
            acc[key] = (n + 1, t + time.perf_counter() - t0)
    setattr(cls, name, wrapper)
    return f


def _breakdown(acc, solves, total):
    """Where cisolve's side went: the FCI solver's calls, the steps of its solves, the rest."""
    print("where the time went (%d s in all):" % total)
    for key in sorted(acc, key=lambda k: -acc[k][1]):
        n, t = acc[key]
        print("  %-24s %4d calls  %8.3f s  %7.3f s each" % (key, n, t, t / n))
    for kind in sorted(solves):
        rows = solves[kind]
        print("  the steps of the %d %s solves (s, summed):" % (len(rows), kind))
        for step in rows[0]:
            print("    %-20s %8.3f" % (step, sum(r[step] for r in rows)))
    fci = sum(t for k, (n, t) in acc.items() if k in ("kernel", "approx_kernel", "rdms"))
    print("  %-24s            %8.3f s" % ("outside the FCI solver", total - fci))


def run(case, ours, macro, threads, device, options, breakdown=False):
    from pyscf import gto, lib, mcscf, scf
    lib.num_threads(threads)
    atoms, basis, ncas, nelecas = CASES[case]
    mol = gto.M(atom=atoms, basis=basis, symmetry=False, verbose=0)
    mf = scf.RHF(mol).run(conv_tol=1e-10)
    mc = mcscf.CASSCF(mf, ncas, nelecas)
    mc.conv_tol = 1e-8
    mc.max_cycle_macro = macro
    acc, solves, restore = {}, {}, []
    if ours:
        from cisolve import pyscf as cp
        if breakdown:
            for cls, name, key in ((cp.FCISolver, "kernel", None),
                                   (cp.FCISolver, "approx_kernel", None),
                                   (cp.FCISolver, "_rdms", "rdms"),
                                   (cp._Layout, "to_ours", "layout to_ours"),
                                   (cp._Layout, "to_pyscf", "layout to_pyscf"),
                                   (cp._cis.Solver, "set_integrals", "Solver.set_integrals"),
                                   (cp._cis.Solver, "solve", "Solver.solve"),
                                   (cp._cis.Solver, "rdm12s", "Solver.rdm12s")):
                restore.append((cls, name, _timed(cls, name, acc, key)))
        mc.fcisolver = cp.FCISolver(mol, device=device, threads=threads, **options)
        if breakdown:
            kern = cp.FCISolver._kernel

            def kernel_steps(self, *args):
                out = kern(self, *args)
                solves.setdefault("kernel" if args[-1] else "approx_kernel",
                                  []).append(dict(self.timings))
                return out
            cp.FCISolver._kernel = kernel_steps
            restore.append((cp.FCISolver, "_kernel", kern))
    stamps = {}  # the callback runs in micro-iterations too: the last call of each macro-iteration

    def callback(env):
        stamps[env.get("imacro", len(stamps))] = time.perf_counter()
    mc.callback = callback
    t0 = time.perf_counter()
    try:
        mc.kernel()
    finally:
        for cls, name, f in restore:
            setattr(cls, name, f)
    total = time.perf_counter() - t0
    stamps = [stamps[k] for k in sorted(stamps)]
    per = np.diff([t0] + stamps)
    if ours and breakdown:
        _breakdown(acc, solves, total)
    return {"e": mc.e_tot, "converged": mc.converged, "total": total, "macro": len(stamps),
            "per_macro": per.tolist()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--case", default="f2-12-12", choices=sorted(CASES))
    ap.add_argument("--macro", type=int, default=50)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--device", default="auto")
    ap.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                    help="a cisolve option for FCISolver (e.g. matrix-free=true); repeatable")
    ap.add_argument("--sides", default="pyscf,cisolve",
                    help="which solvers to run, in this order (pyscf, cisolve)")
    ap.add_argument("--csv", help="append one line per side to this CSV")
    ap.add_argument("--breakdown", action="store_true",
                    help="print where cisolve's side spent its time: the FCI solver's calls "
                    "and the steps of its solves (Result.timings)")
    a = ap.parse_args()
    options = dict(kv.split("=", 1) for kv in a.option)
    sides = a.sides.split(",")
    res = {}
    for side in sides:
        r = run(a.case, side == "cisolve", a.macro, a.threads, a.device, options, a.breakdown)
        res[side] = r
        print("%-8s E = %.10f  converged %s  %d macro-iterations  total %.2f s  per macro: "
              "first %.2f s, median %.2f s" % (side, r["e"], r["converged"], r["macro"],
                                                r["total"], r["per_macro"][0],
                                                np.median(r["per_macro"])), flush=True)
    if len(res) == 2:
        p, c = res["pyscf"], res["cisolve"]
        print("energy difference %.2e Eh; total time ratio pyscf/cisolve %.2f; median "
              "macro-iteration ratio %.2f" % (c["e"] - p["e"], p["total"] / c["total"],
                                             np.median(p["per_macro"]) /
                                             np.median(c["per_macro"])))
    if a.csv:
        try:
            commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                    text=True, cwd=os.path.dirname(__file__)).stdout.strip()
        except OSError:
            commit = ""
        new = not os.path.exists(a.csv)
        with open(a.csv, "a") as f:
            if new:
                f.write("date,commit,case,side,threads,device,energy,converged,macro,total_s,"
                        "median_macro_s\n")
            for side in sides:
                r = res[side]
                f.write("%s,%s,%s,%s,%d,%s,%.10f,%s,%d,%.3f,%.3f\n" % (
                    datetime.date.today().isoformat(), os.environ.get("CISOLVE_COMMIT", commit),
                    a.case, side, a.threads, a.device if side == "cisolve" else "host",
                    r["e"], r["converged"], r["macro"], r["total"], np.median(r["per_macro"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
