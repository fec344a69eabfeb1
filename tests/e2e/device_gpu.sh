#!/usr/bin/env bash
# --device gpu demands a GPU: where none is usable (no NVIDIA driver, or a build without CUDA)
# cisolve must exit 4 with a message saying why; where one is, it must run on it and say which.
# usage: device_gpu.sh CISOLVE INPUT
set -u
cis=$1 input=$2
out=$("$cis" --device gpu -o /dev/null "$input" 2>&1); rc=$?
if nvidia-smi -L >/dev/null 2>&1 && [ "$rc" -ne 4 ]; then
  [ $rc -eq 0 ] && grep -q "^device *GPU" <<<"$out" || { echo "FAIL: exit $rc with a GPU present: $out"; exit 1; }
  echo "ok: ran on $(grep '^device' <<<"$out")"
  exit 0
fi
[ $rc -eq 4 ] || { echo "FAIL: exit $rc, expected 4 without a usable GPU: $out"; exit 1; }
grep -qiE "error: .*(CUDA|GPU)" <<<"$out" || { echo "FAIL: no reason given: $out"; exit 1; }
echo "ok: exit 4: $(grep -i error <<<"$out")"
