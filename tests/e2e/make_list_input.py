#!/usr/bin/env python3
"""An input.h5 with an explicit determinant list, for the --dry-run test: the FCIDUMP's
integrals (scripts/to_input_h5.py) and COUNT determinants drawn from its FCI space with a fixed
seed (the aufbau determinant first, then the others in random order).

usage: make_list_input.py FCIDUMP OUT.h5 COUNT
"""
import itertools
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
from pyscf.tools import fcidump  # noqa: E402
from to_input_h5 import from_fcidump  # noqa: E402


def main():
    src, out, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    d = fcidump.read(src, verbose=False)
    norb, nelec, ms2 = d["NORB"], d["NELEC"], d.get("MS2", 0)
    na, nb = (nelec + ms2) // 2, (nelec - ms2) // 2
    alpha = list(itertools.combinations(range(norb), na))
    beta = list(itertools.combinations(range(norb), nb))
    dets = [(a, b) for a in alpha for b in beta]
    aufbau = (tuple(range(na)), tuple(range(nb)))
    rest = [x for x in dets if x != aufbau]
    random.Random(21).shuffle(rest)
    from_fcidump(src, out, space="list", dets=[aufbau] + rest[:count - 1])


if __name__ == "__main__":
    main()
