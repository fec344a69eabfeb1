#!/usr/bin/env bash
# usage: budget_too_small.sh CISOLVE FCIDUMP [OPTIONS...]
#
# A GPU budget too small for the resident Reference-region block must stop cisolve with exit
# code 4 and a message naming the smallest budget that works; that budget must then work (all
# Expansion blocks streamed), and one byte less must not. Exit 77 (skipped) when no GPU is
# usable.
set -u
cis=$1 in=$2
shift 2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

run() { # budget, options... -> sets rc, out
  local b=$1
  shift
  out=$("$cis" --device gpu --gpu-mem "$b" --output "$dir/out.h5" "$@" "$in" 2>&1)
  rc=$?
}
run 1M "$@"
if printf '%s' "$out" | grep -qiE "no usable CUDA device|is not usable"; then
  echo "SKIPPED: no usable CUDA device"
  exit 77
fi
re='GPU memory budget .* is too small: .*give a budget of at least ([0-9]+) bytes'
if [ $rc -ne 4 ] || ! printf '%s' "$out" | grep -qE "$re"; then
  printf 'FAIL: --gpu-mem 1M: exit %s (expected 4), output:\n%s\n' "$rc" "$out"
  exit 1
fi
need=$(printf '%s' "$out" | sed -nE "s/.*$re.*/\1/p" | head -1)
echo "ok: --gpu-mem 1M: exit 4, smallest budget named: $need bytes"

run $((need - 1)) "$@"
if [ $rc -ne 4 ] || ! printf '%s' "$out" | grep -qE "at least $need bytes"; then
  printf 'FAIL: --gpu-mem %s: exit %s (expected 4 naming %s), output:\n%s\n' \
    $((need - 1)) "$rc" "$need" "$out"
  exit 1
fi
echo "ok: --gpu-mem $((need - 1)): exit 4"

run "$need" "$@"
if [ $rc -ne 0 ]; then
  printf 'FAIL: --gpu-mem %s (the budget named): exit %s, output:\n%s\n' "$need" "$rc" "$out"
  exit 1
fi
echo "ok: --gpu-mem $need: exit 0"
printf '%s\n' "$out" | grep -E '^gpu (placement|products)' || true
