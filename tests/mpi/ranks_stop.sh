#!/usr/bin/env bash
# Batch life on several ranks:
#  1. SIGUSR1 sent to one rank alone (not rank 0) in mid-run: every rank stops at the same
#     iteration, the job exits 3, one checkpoint is written and no output;
#  2. --restart from it on another number of ranks (and on one process) converges to the
#     energies of an uninterrupted single-process run (1e-10 Eh);
#  3. a rank killed with SIGKILL ends the whole job with a non-zero code within 60 s.
# usage: ranks_stop.sh MPIRUN CISOLVE CMP_REF SHOW_RESULTS INPUT [cisolve options]
set -u
MPIRUN=$1 CIS=$2 CMP=$3 SHOW=$4 INPUT=$5; shift 5
. "$(dirname "$0")/common.sh"
work=$(mktemp -d); trap 'rm -rf "$work"; [ -n "${job:-}" ] && kill -9 $job 2>/dev/null' EXIT
opts=(--device cpu --threads 1 --tol 1e-12 --tol-residual 1e-8 "$@")

"$CIS" "${opts[@]}" -o "$work/full.h5" --checkpoint "$work/full.ckpt.h5" "$INPUT" >"$work/full.log" 2>&1 \
  || fail "uninterrupted run failed: $(tail -3 "$work/full.log")"
"$SHOW" "$work/full.h5" >"$work/full.ref"

# 1. a signal to rank 1 alone
mpi 3 "$CIS" "${opts[@]}" -o "$work/run.h5" --checkpoint "$work/ck.h5" "$INPUT" >"$work/run.log" 2>&1 &
job=$!
wait_for '^ +3 +[0-9]+ ' "$work/run.log" 60 || fail "no third iteration seen: $(tail -3 "$work/run.log")"
r1=$(rank_pid "$work/run.h5" 1) || fail "rank 1's process not found"
kill -USR1 "$r1"
wait $job; rc=$?; job=
tail -4 "$work/run.log"
[ $rc -eq 3 ] || fail "the interrupted job exited $rc, expected 3"
grep -q "another rank of the run was asked to stop" "$work/run.log" || fail "rank 0's report does not say why it stopped"
[ -s "$work/ck.h5" ] || fail "no checkpoint after the interruption"
[ ! -e "$work/run.h5" ] || fail "an interrupted run must not write the output"

# 2. resumed on 2 ranks, and the same checkpoint on one process
cp "$work/ck.h5" "$work/ck1.h5"
mpi 2 "$CIS" "${opts[@]}" -o "$work/run.h5" --checkpoint "$work/ck.h5" --restart "$INPUT" >"$work/restart.log" 2>&1 \
  || fail "restart on 2 ranks failed: $(tail -3 "$work/restart.log")"
grep -q "^restart " "$work/restart.log" || fail "the restart is not reported"
"$CMP" "$work/run.h5" "$work/full.ref" 1e-10 || fail "restarted energies (2 ranks) differ"
"$CIS" "${opts[@]}" -o "$work/run1.h5" --checkpoint "$work/ck1.h5" --restart "$INPUT" >"$work/restart1.log" 2>&1 \
  || fail "restart on one process failed: $(tail -3 "$work/restart1.log")"
"$CMP" "$work/run1.h5" "$work/full.ref" 1e-10 || fail "restarted energies (one process) differ"

# 3. a rank killed
mpi 3 "$CIS" "${opts[@]}" -o "$work/kill.h5" --checkpoint "$work/kill.ckpt.h5" "$INPUT" >"$work/kill.log" 2>&1 &
job=$!
wait_for '^ +2 +[0-9]+ ' "$work/kill.log" 60 || fail "no second iteration seen: $(tail -3 "$work/kill.log")"
r2=$(rank_pid "$work/kill.h5" 2) || fail "rank 2's process not found"
t0=$SECONDS
kill -9 "$r2"
for ((i = 0; i < 600; i++)); do kill -0 $job 2>/dev/null || break; sleep 0.1; done
kill -0 $job 2>/dev/null && fail "the job still runs 60 s after a rank was killed"
wait $job; rc=$?; job=
echo "killed rank: the job exited $rc after $((SECONDS - t0)) s"
[ $rc -ne 0 ] || fail "the job exited 0 after a rank was killed"
[ ! -e "$work/kill.h5" ] || fail "a job with a killed rank wrote the output"
echo "ok"
