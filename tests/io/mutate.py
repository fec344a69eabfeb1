#!/usr/bin/env python3
"""Mutation test of the input readers: seeded single-byte changes and truncations of small
inputs, each run through the command line.

    mutate.py --cisolve BIN --work DIR [--seed S] [--flips N] [--cuts N] INPUT...

For every INPUT, N flips (one byte replaced by another value drawn from the seed) and N cuts
(the file truncated at a drawn length; for a text file half of them at a line boundary). Each
mutant is run as `cisolve --device cpu --threads 1 ... MUTANT` in a folder of its own, with a
timeout. Every run must
  - exit with 0 or 1: never a signal (a crash), a timeout (a hang) or another code;
  - leave no half-written file: after exit 1 the folder holds only the mutant; after exit 0
    also the output, which must be a complete output.h5 (it opens, its energies are finite).
The failures are listed with the seed and the mutation, so that any one can be rebuilt:
`--only INDEX` reruns a single mutant and keeps its folder.
"""
import argparse
import concurrent.futures
import math
import os
import random
import shutil
import subprocess
import sys
import time

import h5py
import numpy as np


def mutants(data, rng, flips, cuts):
    """(description, bytes) pairs: `flips` one-byte changes, then `cuts` truncations."""
    out = []
    for _ in range(flips):
        pos = rng.randrange(len(data))
        new = (data[pos] + rng.randrange(1, 256)) % 256
        out.append(("byte %d: 0x%02x -> 0x%02x" % (pos, data[pos], new),
                    data[:pos] + bytes([new]) + data[pos + 1:]))
    text = b"\0" not in data
    lines = [i + 1 for i, c in enumerate(data) if c == 0x0A] if text else []
    for k in range(cuts):
        if lines and k % 2 == 0:
            n = rng.choice(lines[:-1] or lines)
        else:
            n = rng.randrange(len(data))
        out.append(("cut at %d of %d bytes" % (n, len(data)), data[:n]))
    return out


def complete_output(path):
    """'' if path is a complete output.h5, else what is wrong with it."""
    try:
        with h5py.File(path, "r") as f:
            e = np.asarray(f["results/energies"])
            if e.size == 0 or not np.all(np.isfinite(e)):
                return "energies missing or not finite"
            if f.attrs.get("format") not in ("cisolve-output", b"cisolve-output"):
                return "format attribute missing"
    except Exception as exc:  # noqa: BLE001 - any failure to read it is the finding
        return "unreadable (%s)" % exc
    return ""


def run_one(args, index, name, desc, data):
    d = os.path.join(args.work, "m%05d" % index)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    mutant = os.path.join(d, name)
    with open(mutant, "wb") as f:
        f.write(data)
    # The solver's criteria are loose: this tests reading, and a mutant whose integrals reach
    # 1e100 cannot converge to 1e-10 Eh (exit 2, rightly). A small CISD space keeps it fast.
    cmd = [args.cisolve, "--device", "cpu", "--threads", "1", "--quiet", "--max-iter",
           str(args.max_iter), "--tol", "1e300", "--tol-residual", "1e300", "--space", "cisd",
           "--nroots", "1", "--output", "out.h5", name]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, cwd=d, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=args.timeout)
        rc, out = p.returncode, p.stdout.decode(errors="replace")
    except subprocess.TimeoutExpired as exc:
        rc, out = None, (exc.stdout or b"").decode(errors="replace")
    secs = time.monotonic() - t0
    problems = []
    if rc is None:
        problems.append("no exit after %g s (a hang)" % args.timeout)
    elif rc < 0:
        problems.append("killed by signal %d (a crash)" % -rc)
    elif rc not in (0, 1):
        problems.append("exit code %d, expected 0 or 1" % rc)
    left = sorted(set(os.listdir(d)) - {name})
    if rc == 0:
        if left != ["out.h5"]:
            problems.append("after exit 0 the folder holds %s, expected out.h5" % left)
        else:
            why = complete_output(os.path.join(d, "out.h5"))
            if why:
                problems.append("out.h5 is not complete: " + why)
    elif rc is not None and left:
        problems.append("after exit %d the folder holds %s, expected nothing" % (rc, left))
    if not problems and args.only is None:
        shutil.rmtree(d, ignore_errors=True)
    tail = out.strip().splitlines()[-1:] if out.strip() else []
    return index, name, desc, rc, secs, problems, tail


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("inputs", nargs="+")
    ap.add_argument("--cisolve", required=True)
    ap.add_argument("--work", required=True, help="scratch folder (emptied first)")
    ap.add_argument("--seed", type=int, default=21)
    ap.add_argument("--flips", type=int, default=460, help="one-byte changes per input")
    ap.add_argument("--cuts", type=int, default=80, help="truncations per input")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds per run")
    ap.add_argument("--max-iter", type=int, default=40)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", type=int, help="run only the mutant with this index")
    args = ap.parse_args()
    args.cisolve = os.path.abspath(args.cisolve)
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)

    jobs = []
    for k, path in enumerate(args.inputs):
        with open(path, "rb") as f:
            data = f.read()
        rng = random.Random("%d:%d" % (args.seed, k))
        name = "in" + os.path.splitext(path)[1]
        for desc, m in mutants(data, rng, args.flips, args.cuts):
            jobs.append((len(jobs), name, "%s: %s" % (os.path.basename(path), desc), m))
    if args.only is not None:
        jobs = [j for j in jobs if j[0] == args.only]

    t0 = time.monotonic()
    counts, failures, slowest = {}, [], (0.0, "")
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for index, name, desc, rc, secs, problems, tail in pool.map(
                lambda j: run_one(args, *j), jobs):
            counts[rc] = counts.get(rc, 0) + 1
            slowest = max(slowest, (secs, desc))
            if problems or args.only is not None:
                failures.append((index, desc, problems, tail))
    wall = time.monotonic() - t0

    for index, desc, problems, tail in failures:
        print("mutant %d (%s): %s%s" % (index, desc, "; ".join(problems) or "ok",
                                        (" -- last line: " + tail[0]) if tail else ""))
    summary = ", ".join("%s: %d" % ("timeout" if rc is None else "exit %d" % rc, n)
                        for rc, n in sorted(counts.items(), key=lambda x: (x[0] is None, x[0] or 0)))
    print("%d mutants of %d inputs (seed %d) in %.1f s: %s; slowest %.2f s (%s)"
          % (len(jobs), len(args.inputs), args.seed, wall, summary, slowest[0], slowest[1]))
    bad = [f for f in failures if f[2]]
    if bad:
        print("FAIL: %d mutants crashed, hung, gave another exit code or left a file" % len(bad))
        return 1
    print("ok: every mutant exited with 0 or 1 and left no half-written file")
    return 0


if __name__ == "__main__":
    sys.exit(main())
