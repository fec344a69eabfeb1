#!/usr/bin/env python3
"""Fallback reference data for tests/chem, made exactly as tests/data/make_refs.py makes it.

tests/chem uses tests/data/{n2_sto3g_singlets,o2_sto3g_triplet}.* when they exist and these
copies (tests/chem/data) otherwise. This script runs make_refs.py's own p_n2_sto3g_singlets and
p_o2_sto3g_triplet (same molecules, bases, PySCF calls and header lines) with the output folder
switched to tests/chem/data.

Run from the repository root: OMP_NUM_THREADS=1 python3 tests/chem/make_chem_refs.py
"""
import os
import sys

os.environ.setdefault('OMP_NUM_THREADS', '1')
sys.path.insert(0, 'tests/data')
import make_refs  # noqa: E402

OUT = 'tests/chem/data'
make_refs.DATA = OUT
make_refs.write_ref.__defaults__ = (OUT,)
make_refs.p_n2_sto3g_singlets()
make_refs.p_o2_sto3g_triplet()
