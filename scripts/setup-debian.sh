#!/usr/bin/env bash
# Install what cisolve needs to build and test on Debian/Ubuntu, only what is missing.
# Needs root or sudo for apt-get. The CUDA toolkit is optional: when nvcc is on the PATH
# (or CMAKE_CUDA_COMPILER is set), CMake builds the GPU backend too.
set -euo pipefail
# Open MPI: `mpirun -np P cisolve` (docs/parallel.md) and its tests; a build without it runs one
# process.
pkgs=(build-essential cmake libhdf5-dev libopenblas-dev liblapacke-dev libopenmpi-dev openmpi-bin python3)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# Python with h5py and numpy is used by a few tests (the converter scripts/to_input_h5.py, the
# mutation test of the readers), PySCF by the test of to_input_h5.from_scf; those tests are
# skipped when they are missing. Try Debian's packages first, then pip for a non-system python3.
if ! python3 -c 'import h5py, numpy' 2>/dev/null; then
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-h5py python3-numpy >/dev/null 2>&1 || true
  python3 -c 'import h5py, numpy' 2>/dev/null || python3 -m pip install -q h5py numpy 2>/dev/null || \
    echo "setup: note: python3 h5py/numpy not available; the tests that need them will be skipped"
fi
if ! python3 -c 'import pyscf' 2>/dev/null; then
  python3 -m pip install -q pyscf 2>/dev/null || \
    echo "setup: note: python3 pyscf not available; the from_scf test will be skipped"
fi
echo "setup: ok"
