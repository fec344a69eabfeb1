#!/usr/bin/env bash
# Runs scripts/slurm/cisolve.sbatch as SLURM would, with a stand-in `scontrol`: the queue's
# SIGUSR1 (--signal=B:USR1@...) reaches the job shell in mid-run; the job must exit 3 with a
# checkpoint and requeue itself; the requeued job must resume with --restart and end with the
# energies of an uninterrupted run.
# usage: slurm_fake.sh CISOLVE CMP_REF SHOW_RESULTS SBATCH_SCRIPT INPUT
set -u
CIS=$1 CMP=$2 SHOW=$3 SCRIPT=$4 INPUT=$5
. "$(dirname "$0")/common.sh"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin"
cat >"$work/bin/scontrol" <<'EOS'
#!/bin/sh
echo "scontrol $*" >>"$FAKE_QUEUE_LOG"
EOS
chmod +x "$work/bin/scontrol"
export PATH="$work/bin:$PATH" FAKE_QUEUE_LOG="$work/queue.log" CISOLVE="$CIS" INPUT="$INPUT"
export OUTPUT="$work/job.out.h5" CHECKPOINT="$work/job.ckpt.h5" SLURM_JOB_ID=4242 SLURM_CPUS_PER_TASK=2
extra=(--device cpu --tol 1e-12 --tol-residual 1e-8)

"$CIS" "${extra[@]}" -o "$work/full.h5" --checkpoint "$work/full.ckpt.h5" "$INPUT" >/dev/null 2>&1 || fail "reference run failed"
"$SHOW" "$work/full.h5" >"$work/full.ref"

# First allocation: the queue signals the batch shell after the third iteration.
SLURM_RESTART_COUNT=0 bash "$SCRIPT" "${extra[@]}" >"$work/job1.log" 2>&1 &
job=$!
wait_for '^ +3 +[0-9]+ ' "$work/job1.log" 60 || { kill -9 $job; fail "job never iterated: $(cat "$work/job1.log")"; }
kill -USR1 $job
wait $job; rc=$?
cat "$work/job1.log" | tail -5
[ $rc -eq 3 ] || fail "job exited $rc, expected 3"
grep -q "^scontrol requeue 4242$" "$work/queue.log" || fail "the job did not requeue itself"
[ -s "$CHECKPOINT" ] || fail "no checkpoint"
[ ! -e "$OUTPUT" ] || fail "interrupted job wrote an output"

# The requeued job: same script, same environment.
SLURM_RESTART_COUNT=1 bash "$SCRIPT" "${extra[@]}" >"$work/job2.log" 2>&1; rc=$?
tail -3 "$work/job2.log"
[ $rc -eq 0 ] || fail "requeued job exited $rc: $(tail -5 "$work/job2.log")"
grep -q "^restart " "$work/job2.log" || fail "requeued job did not restart from the checkpoint"
[ "$(grep -c requeue "$work/queue.log")" -eq 1 ] || fail "requeued more than once"
"$CMP" "$OUTPUT" "$work/full.ref" 1e-10 || fail "final energies differ from the uninterrupted run"
echo "ok"
