#!/usr/bin/env bash
# usage: build_energies.sh CISOLVE CMP_REF SHOW_RESULTS INPUT [OPTIONS...]
#
# A stored matrix built on the GPU (--build gpu, the default: the rows counted on the device and
# generated into its layouts there) against the CPU backend: the energies agree to 1e-10 Eh, and
# the GPU run's report says that its rows were built on the GPU. Exit 77 (skipped) when no GPU
# is usable.
set -u
cis=$1 cmp=$2 show=$3 in=$4
shift 4
dir=$(mktemp -d) && trap 'rm -rf "$dir"' EXIT
"$cis" --device gpu --matrix-free=off --output "$dir/gpu.h5" "$@" "$in" >"$dir/gpu.log" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -qiE "no usable CUDA device|is not usable" "$dir/gpu.log"; then
  echo "SKIPPED: no usable CUDA device"
  exit 77
fi
[ $rc -eq 0 ] || { echo "FAIL: the GPU run exited $rc"; cat "$dir/gpu.log"; exit 1; }
"$cis" --device cpu --output "$dir/cpu.h5" "$@" "$in" >"$dir/cpu.log" 2>&1 ||
  { echo "FAIL: the CPU run exited $?"; cat "$dir/cpu.log"; exit 1; }
"$show" "$dir/cpu.h5" >"$dir/cpu.ref" || exit 1
grep -m1 '^build' "$dir/gpu.log"
if ! grep -qE '^build .*counted on the GPU' "$dir/gpu.log"; then
  echo "FAIL: the rows were not built on the GPU"
  grep -E '^note' "$dir/gpu.log"
  exit 1
fi
"$cmp" "$dir/gpu.h5" "$dir/cpu.ref" 1e-10 || { echo "FAIL: the GPU-built matrix's energies differ"; exit 1; }
echo "passed: built on the GPU, the CPU backend's energies"
