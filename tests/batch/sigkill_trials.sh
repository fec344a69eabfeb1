#!/usr/bin/env bash
# SIGKILL at random moments (a checkpoint every iteration, so some kills land in the middle of a
# write): every trial must leave either no checkpoint or one that restarts to the energies of an
# uninterrupted run.
# usage: sigkill_trials.sh CISOLVE CMP_REF SHOW_RESULTS TRIALS INPUT [cisolve options]
set -u
CIS=$1 CMP=$2 SHOW=$3 TRIALS=$4 INPUT=$5; shift 5
. "$(dirname "$0")/common.sh"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
opts=(--device cpu --tol 1e-12 --tol-residual 1e-8 --checkpoint-every 1 "$@")

"$CIS" "${opts[@]}" -o "$work/full.h5" --checkpoint "$work/full.ckpt.h5" "$INPUT" >"$work/full.log" 2>&1 \
  || fail "uninterrupted run failed"
"$SHOW" "$work/full.h5" >"$work/full.ref"
niter=$("$SHOW" "$work/full.h5" | awk '/^# iterations/ {print $3}')
# a temporary checkpoint is on disk (a write has begun and not been renamed)
tmp_ck() { compgen -G "$work/ck.h5.*.tmp" >/dev/null; }
RANDOM=20261122
none=0 valid=0 during_write=0
for ((t = 1; t <= TRIALS; t++)); do
  rm -f "$work"/ck.h5* "$work/run.h5" "$work/run.log"
  # Odd trials: a random moment after a random iteration. Even trials: the instant a checkpoint
  # write has begun (its temporary file exists), so that the kill lands inside the write.
  it=$((1 + RANDOM % (niter > 1 ? niter - 1 : 1)))
  "$CIS" "${opts[@]}" -o "$work/run.h5" --checkpoint "$work/ck.h5" "$INPUT" >"$work/run.log" 2>&1 &
  pid=$!
  wait_for "^ +$it +[0-9]+ " "$work/run.log" 120 || true
  if ((t % 2)); then
    when="$(awk -v r=$RANDOM 'BEGIN {printf "%.3f", 0.15 * r / 32767}')s after iteration $it"
    sleep "${when%%s*}"
  else
    when="inside the checkpoint write after iteration $it"
    for ((s = 0; s < 200000; s++)); do tmp_ck && break; kill -0 $pid 2>/dev/null || break; done
  fi
  kill -9 $pid 2>/dev/null
  wait $pid 2>/dev/null
  tmp_ck && during_write=$((during_write + 1))
  if [ ! -e "$work/ck.h5" ]; then
    none=$((none + 1))
    echo "trial $t: killed $when: no checkpoint"
    continue
  fi
  rm -f "$work/run.h5"
  "$CIS" "${opts[@]}" -o "$work/run.h5" --checkpoint "$work/ck.h5" --restart "$INPUT" >"$work/restart.log" 2>&1 \
    || fail "trial $t (killed $when): restart failed: $(tail -2 "$work/restart.log")"
  "$CMP" "$work/run.h5" "$work/full.ref" 1e-10 >/dev/null || fail "trial $t: restarted energies differ"
  valid=$((valid + 1))
  echo "trial $t: killed $when: checkpoint valid, restart converged to the same energies"
done
echo "$TRIALS trials: $valid valid checkpoints restarted correctly, $none without checkpoint," \
     "$during_write killed while a temporary checkpoint was on disk"
[ $valid -gt 0 ] || fail "no trial left a checkpoint: the kill times are too early to test anything"
[ $during_write -gt 0 ] || fail "no kill landed inside a checkpoint write"
echo "ok"
