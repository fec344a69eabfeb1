#!/usr/bin/env bash
# --restart refuses a checkpoint of another problem (FCIDUMP, space, Ms, nroots) and a truncated
# or corrupted one, with exit code 1 and a message; a converged checkpoint returns its results
# without a new product; a bit flip anywhere never crashes and never gives a wrong energy.
# usage: refusals.sh CISOLVE CMP_REF SHOW_RESULTS INPUT OTHER_INPUT
set -u
CIS=$1 CMP=$2 SHOW=$3 INPUT=$4 OTHER=$5
. "$(dirname "$0")/common.sh"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
opts=(--device cpu --tol 1e-12 --tol-residual 1e-8 --checkpoint-every 1)
"$CIS" "${opts[@]}" -o "$work/full.h5" --checkpoint "$work/ck.h5" "$INPUT" >"$work/full.log" 2>&1 \
  || fail "first run failed"
"$SHOW" "$work/full.h5" >"$work/full.ref"
cp "$work/ck.h5" "$work/good.h5"

expect() { # expect CODE REGEX ARGS...
  local code=$1 re=$2; shift 2
  cp "$work/good.h5" "$work/ck.h5"
  out=$("$CIS" "${opts[@]}" -o "$work/x.h5" --checkpoint "$work/ck.h5" "$@" 2>&1); rc=$?
  [ $rc -eq "$code" ] || fail "exit $rc (expected $code) for $*: $out"
  echo "$out" | grep -qiE -- "$re" || fail "message for $* does not match /$re/: $out"
  echo "ok: $* -> exit $rc, /$re/"
}
expect 1 "another problem.*integrals" --restart "$OTHER"
expect 1 "another determinant space" --restart --space cisd "$INPUT"
expect 1 "alpha and .* beta electrons" --restart --ms2 2 "$INPUT"
expect 1 "nroots 1; this run asks for 2" --restart --nroots 2 "$INPUT"
expect 1 "made with no --spin; this run has --spin 0" --restart --spin 0 "$INPUT"
expect 1 "cannot open checkpoint" --restart=/nonexistent/ck.h5 "$INPUT"
# A converged checkpoint, under the criteria it converged with: its results, no new product.
expect 0 "restart .*converged" --restart "$INPUT"
[ "$(matvecs_of "$work/x.h5")" -eq "$(matvecs_of "$work/full.h5")" ] ||
  fail "a converged checkpoint cost products"
"$CMP" "$work/x.h5" "$work/full.ref" 1e-10 >/dev/null || fail "converged restart gave other energies"

size=$(stat -c %s "$work/good.h5")
head -c $((size / 2)) "$work/good.h5" >"$work/trunc.h5"
out=$("$CIS" "${opts[@]}" -o "$work/x.h5" --checkpoint "$work/x.ckpt.h5" --restart="$work/trunc.h5" "$INPUT" 2>&1); rc=$?
[ $rc -eq 1 ] && echo "$out" | grep -qiE "truncated|corrupt" || fail "truncated checkpoint: exit $rc: $out"
echo "ok: truncated checkpoint refused"

detected=0
for frac in 5 15 25 35 45 55 65 75 85 95; do
  cp "$work/good.h5" "$work/flip.h5"
  off=$((size * frac / 100))
  byte=$(od -An -tu1 -j $off -N1 "$work/flip.h5" | tr -d ' ')
  printf "$(printf '\\%03o' $((byte ^ 16)))" | dd of="$work/flip.h5" bs=1 seek=$off conv=notrunc status=none
  rm -f "$work/x.h5"
  out=$("$CIS" "${opts[@]}" -o "$work/x.h5" --checkpoint "$work/x.ckpt.h5" --restart="$work/flip.h5" "$INPUT" 2>&1); rc=$?
  case $rc in
    0) "$CMP" "$work/x.h5" "$work/full.ref" 1e-10 >/dev/null || fail "bit flip at $off: accepted with wrong energies"
       echo "bit flip at byte $off: not in any value read; same energies" ;;
    1) echo "$out" | grep -qiE "corrupt|checksum|truncated|checkpoint" || fail "bit flip at $off: unclear message: $out"
       detected=$((detected + 1)); echo "bit flip at byte $off: refused: $(echo "$out" | grep -m1 "error")" ;;
    *) fail "bit flip at $off: exit $rc: $out" ;;
  esac
done
[ $detected -gt 0 ] || fail "no bit flip was detected"
echo "ok"
