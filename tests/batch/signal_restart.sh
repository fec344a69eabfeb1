#!/usr/bin/env bash
# A run interrupted by SIGUSR1 in mid-iteration exits 3 with a valid checkpoint; --restart from
# it converges to the energies of an uninterrupted run (1e-10 Eh) in no more products than the
# uninterrupted run plus one collapse cycle (--max-subspace products; docs/batch.md).
# usage: signal_restart.sh CISOLVE CMP_REF SHOW_RESULTS INPUT [cisolve options]
set -u
CIS=$1 CMP=$2 SHOW=$3 INPUT=$4; shift 4
. "$(dirname "$0")/common.sh"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
maxsub=24
opts=(--device cpu --tol 1e-12 --tol-residual 1e-8 --max-subspace $maxsub "$@")

"$CIS" "${opts[@]}" -o "$work/full.h5" --checkpoint "$work/full.ckpt.h5" "$INPUT" >"$work/full.log" 2>&1 \
  || fail "uninterrupted run failed: $(tail -3 "$work/full.log")"
"$SHOW" "$work/full.h5" >"$work/full.ref"
full_mv=$(matvecs_of "$work/full.h5")

"$CIS" "${opts[@]}" -o "$work/run.h5" --checkpoint "$work/ck.h5" "$INPUT" >"$work/run.log" 2>&1 &
pid=$!
wait_for '^ +3 +[0-9]+ ' "$work/run.log" 60 || { kill -9 $pid; fail "no third iteration seen"; }
kill -USR1 $pid
wait $pid; rc=$?
cat "$work/run.log" | tail -4
[ $rc -eq 3 ] || fail "interrupted run exited $rc, expected 3"
grep -q "received SIGUSR1" "$work/run.log" || fail "the report does not say why it stopped"
[ -s "$work/ck.h5" ] || fail "no checkpoint after the interruption"
[ ! -e "$work/run.h5" ] || fail "an interrupted run must not write the output"
[ -z "$(compgen -G "$work/ck.h5*.tmp")" ] || fail "a temporary checkpoint was left behind"

"$CIS" "${opts[@]}" -o "$work/run.h5" --checkpoint "$work/ck.h5" --restart "$INPUT" >"$work/restart.log" 2>&1 \
  || fail "restart failed: $(tail -3 "$work/restart.log")"
grep -q "^restart " "$work/restart.log" || fail "the restart is not reported"
"$CMP" "$work/run.h5" "$work/full.ref" 1e-10 || fail "restarted energies differ"
run_mv=$(matvecs_of "$work/run.h5")
echo "products: uninterrupted $full_mv, interrupted + restarted $run_mv (bound $((full_mv + maxsub)))"
[ "$run_mv" -le $((full_mv + maxsub)) ] || fail "restart cost more than one collapse cycle"
echo "ok"
