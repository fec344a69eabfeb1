#!/usr/bin/env bash
# A restart from a converged checkpoint is judged by the criteria of the restarted run: under
# tighter --tol / --tol-residual it iterates until they hold and ends with the energies of an
# uninterrupted tight run; its output agrees with itself (flags, residuals, criteria). Under the
# criteria it converged with, it costs no product. --check-roots runs after it as after any
# solve.
# usage: restart_tighter.sh CISOLVE CMP_REF SHOW_RESULTS CHECK_OUTPUT INPUT [cisolve options]
set -u
CIS=$1 CMP=$2 SHOW=$3 CHECK=$4 INPUT=$5; shift 5
. "$(dirname "$0")/common.sh"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
opts=(--device cpu "$@")
loose=(--tol 1e-2 --tol-residual 1e-2)
tight=(--tol 1e-12 --tol-residual 1e-9)

"$CIS" "${opts[@]}" "${tight[@]}" -o "$work/full.h5" --checkpoint "$work/full.ckpt.h5" "$INPUT" \
  >"$work/full.log" 2>&1 || fail "uninterrupted run failed: $(tail -3 "$work/full.log")"
"$SHOW" "$work/full.h5" >"$work/full.ref"
"$CIS" "${opts[@]}" "${loose[@]}" --checkpoint-every 1 -o "$work/loose.h5" --checkpoint "$work/ck.h5" \
  "$INPUT" >"$work/loose.log" 2>&1 || fail "loose run failed: $(tail -3 "$work/loose.log")"
loose_mv=$(matvecs_of "$work/loose.h5")
cp "$work/ck.h5" "$work/converged.ckpt.h5"

# Tighter criteria: iterate on.
"$CIS" "${opts[@]}" "${tight[@]}" -o "$work/run.h5" --checkpoint "$work/ck.h5" --restart "$INPUT" \
  >"$work/run.log" 2>&1; rc=$?
grep -E "^restart|^converged|NOT CONVERGED" "$work/run.log"
[ $rc -eq 0 ] || fail "restart exited $rc: $(tail -3 "$work/run.log")"
grep -q "^restart .*converged" "$work/run.log" || fail "not a restart from a converged checkpoint"
"$CHECK" "$work/run.h5" 1e-9 || fail "the output contradicts itself or misses --tol-residual 1e-9"
"$CMP" "$work/run.h5" "$work/full.ref" 1e-10 || fail "energies differ from the uninterrupted run"
run_mv=$(matvecs_of "$work/run.h5")
echo "products: loose run $loose_mv, restarted under tighter criteria $run_mv"
[ "$run_mv" -gt "$loose_mv" ] || fail "the restart did no product"

# The same criteria: no product.
cp "$work/converged.ckpt.h5" "$work/ck.h5"
"$CIS" "${opts[@]}" "${loose[@]}" -o "$work/same.h5" --checkpoint "$work/ck.h5" --restart "$INPUT" \
  >"$work/same.log" 2>&1 || fail "restart under the same criteria failed"
"$CHECK" "$work/same.h5" >/dev/null || fail "the output contradicts itself"
[ "$(matvecs_of "$work/same.h5")" -eq "$loose_mv" ] || fail "a restart under the same criteria did products"

# --check-roots after a converged restart.
cp "$work/converged.ckpt.h5" "$work/ck.h5"
"$CIS" "${opts[@]}" "${loose[@]}" --check-roots -o "$work/chk.h5" --checkpoint "$work/ck.h5" --restart \
  "$INPUT" >"$work/chk.log" 2>&1 || fail "restart with --check-roots failed: $(tail -3 "$work/chk.log")"
grep -q "^root check" "$work/chk.log" || fail "--check-roots did not run after the restart"
echo "ok"
