#!/usr/bin/env bash
# usage: stream_energies.sh CISOLVE CMP_REF SHOW_RESULTS FCIDUMP REF EXTRA [OPTIONS...]
#
# The same problem on the CPU backend and on the GPU several ways: every Expansion block cached
# on the device, by default (the rows counted on the GPU and generated into place there: --build
# gpu), built on the host without a host copy (--build host: the blocks go to the GPU as they are
# built) and with a host cache (--mem 1G, the blocks copied from it); a device budget EXTRA bytes above the
# smallest one (which cisolve names when given 1 byte), so that the blocks that do not fit are
# generated on the GPU in every product (the default, docs/gpu.md), or with --regen host streamed
# from the host cache (the default host cache, which a matrix that does not fit on the device
# keeps: every block must be cached on the host); and the same device budget with --regen host
# and a host budget of 2 MB, so that streamed blocks are regenerated on the host in every
# product; and --matrix-free, every row generated on the GPU in every product; and the default
# (--matrix-free auto). The stored runs ask for --matrix-free=off. Every GPU run must give the CPU run's energies to 1e-10 Eh, and every run the
# external reference (REF) to 1e-8 Eh. Where the driver prints the backend's placement line, the
# device-generated run must show blocks generated on the GPU, the streamed runs streamed blocks,
# and the default run every block resident, sent to the GPU as the host built it (the build's
# pool, docs/gpu.md). Exit 77 (skipped) when no GPU is usable.
set -u
cis=$1 cmp=$2 show=$3 in=$4 ref=$5 extra=$6
shift 6
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

probe=$("$cis" --device gpu --matrix-free=off --gpu-mem 1 --output "$dir/probe.h5" "$@" "$in" 2>&1)
if printf '%s' "$probe" | grep -qiE "no usable CUDA device|is not usable"; then
  echo "SKIPPED: no usable CUDA device ($(printf '%s' "$probe" | grep -iE -m1 'CUDA'))"
  exit 77
fi
need=$(printf '%s' "$probe" | sed -nE 's/.*give a budget of at least ([0-9]+) bytes.*/\1/p' | head -1)
if [ -z "$need" ]; then
  printf 'FAIL: --gpu-mem 1 did not name the smallest budget:\n%s\n' "$probe"
  exit 1
fi
budget=$((need + extra))
echo "smallest GPU budget $need bytes; streaming runs get $budget"

run() { # name, options...
  local name=$1
  shift
  "$cis" "$@" --output "$dir/$name.h5" "$in" > "$dir/$name.log" 2>&1
  local rc=$?
  if [ $rc -ne 0 ]; then
    echo "FAIL: $name exited with $rc"
    cat "$dir/$name.log"
    exit 1
  fi
}

run gpu_built --device gpu --matrix-free=off "$@"
run gpu_hostless --device gpu --matrix-free=off --build host "$@"
run gpu_cached --device gpu --matrix-free=off --mem 1G "$@"
run gpu_devgen --device gpu --matrix-free=off --gpu-mem "$budget" "$@"
run gpu_stream --device gpu --matrix-free=off --gpu-mem "$budget" --regen host "$@"
run gpu_regen --device gpu --matrix-free=off --gpu-mem "$budget" --mem 2M --regen host "$@"
run gpu_matrix_free --device gpu --matrix-free "$@"
run gpu_auto --device gpu "$@"
run cpu --device cpu "$@"
"$show" "$dir/cpu.h5" > "$dir/cpu.ref" || exit 1

fail=0
for name in cpu gpu_built gpu_hostless gpu_cached gpu_devgen gpu_stream gpu_regen gpu_matrix_free gpu_auto; do
  echo "== $name against $(basename "$ref") (1e-8)"
  "$cmp" "$dir/$name.h5" "$ref" 1e-8 || fail=1
  [ $name = cpu ] && continue
  echo "== $name against the CPU backend (1e-10)"
  "$cmp" "$dir/$name.h5" "$dir/cpu.ref" 1e-10 || fail=1
done
for name in gpu_stream gpu_regen; do
  line=$(grep -m1 '^gpu placement' "$dir/$name.log")
  if [ -z "$line" ]; then
    echo "note: $name: the driver prints no 'gpu placement' line; streaming not checked from it"
  elif ! printf '%s\n' "$line" | grep -qE '\(([1-9][0-9]*) blocks in'; then
    echo "FAIL: $name streamed no block: $line"
    fail=1
  else
    echo "$name: $line"
  fi
  grep -m1 '^gpu products' "$dir/$name.log"
done
line=$(grep -m1 '^gpu placement' "$dir/gpu_devgen.log")
if [ -n "$line" ] && ! printf '%s\n' "$line" | grep -qE 'the other ([1-9][0-9]*) blocks .* generated on the GPU in every product'; then
  echo "FAIL: gpu_devgen: no block generated on the GPU: $line"
  fail=1
else
  echo "gpu_devgen: $line"
  grep -m1 '^gpu products' "$dir/gpu_devgen.log"
fi
line=$(grep -m1 '^memory' "$dir/gpu_stream.log")
if ! printf '%s\n' "$line" | grep -qE 'Expansion ([0-9]+)/\1 blocks cached'; then
  echo "FAIL: gpu_stream: the matrix does not fit on the device, but the host did not cache it: $line"
  fail=1
fi
line=$(grep -m1 '^gpu placement' "$dir/gpu_hostless.log")
if [ -n "$line" ] && ! printf '%s\n' "$line" | grep -qE 'sent to it as the host built them.*\(0 blocks in'; then
  echo "FAIL: gpu_hostless: not every block resident and sent to the GPU as the host built it: $line"
  fail=1
fi
for name in gpu_built gpu_devgen; do
  if ! grep -qE '^build .*counted on the GPU' "$dir/$name.log" ||
     ! grep -m1 '^gpu placement' "$dir/$name.log" | grep -q 'generated into place on the GPU'; then
    echo "FAIL: $name: the rows were not built on the GPU:"
    grep -m1 -E '^build|^note' "$dir/$name.log"
    grep -m1 '^gpu placement' "$dir/$name.log"
    fail=1
  fi
done
if ! grep -qE '^matrix-free +chosen \(--matrix-free auto\)' "$dir/gpu_auto.log"; then
  echo "FAIL: gpu_auto: the default did not choose to generate the rows of a one-root run:"
  grep -m1 '^matrix-free' "$dir/gpu_auto.log"
  fail=1
fi
[ $fail -eq 0 ] && echo "passed: CPU and GPU (built on the GPU, host-less, cached, generated on the GPU, streamed, regenerated by the host, matrix-free, the default) agree"
exit $fail
