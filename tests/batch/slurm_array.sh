#!/usr/bin/env bash
# The SLURM template as a job array, submitted to the stand-in queue (fakeq/): SLURM runs a copy
# of the script from its spool folder, in the submission folder, with SLURM_ARRAY_TASK_ID. Each
# task must run its own input (byte order of the folder; outputs of earlier runs are not inputs)
# and write beside it; a task stopped with exit code 3 requeues itself (and only it) and resumes;
# an index past the end says so and exits 1 without running anything; the template run outside
# a job counts the inputs and prints the sbatch line.
# usage: slurm_array.sh TEMPLATE CISOLVE CMP_REF DATA_DIR
set -u
TEMPLATE=$(readlink -f "$1") CIS=$(readlink -f "$2") CMP=$(readlink -f "$3") DATA=$(readlink -f "$4")
. "$(dirname "$0")/common.sh"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
fake_queue_init "$work"
recording_cisolve "$work/cisolve" "$CIS" a_h2o.fcidump
mkdir -p "$work/submit/inputs"
cd "$work/submit" || exit 1
cp "$DATA/o2_sto3g_triplet.fcidump" inputs/FCIDUMP_o2
cp "$DATA/h2o_sto3g.fcidump" inputs/a_h2o.fcidump
echo "not an input" >inputs/notes.txt

sbatch --array=0-2 -c 2 --export=ALL,INPUT_DIR=inputs,CISOLVE="$work/cisolve" "$TEMPLATE" || fail "sbatch refused the job"
run-queue 8 || queue_fail "the queue did not drain"
t0=$(job_with SLURM_ARRAY_TASK_ID=0) t1=$(job_with SLURM_ARRAY_TASK_ID=1) t2=$(job_with SLURM_ARRAY_TASK_ID=2)
[ "$(job_rcs "$t0")" = 0 ] || queue_fail "task 0 exited $(job_rcs "$t0"), expected 0"
[ "$(job_rcs "$t1")" = "3 0" ] || queue_fail "task 1: exit codes $(job_rcs "$t1"), expected 3 (stopped), then 0 after its requeue"
[ "$(job_rcs "$t2")" = 1 ] || queue_fail "task 2 (past the end): exit codes $(job_rcs "$t2"), expected 1"
[ "$(grep -c '^scontrol requeue' "$FQ/log")" = 1 ] && grep -q "^scontrol requeue $t1\$" "$FQ/log" ||
  queue_fail "expected exactly one requeue, of task 1 (job $t1): $(grep scontrol "$FQ/log")"
grep -qE "array task 2: inputs has 2 inputs \(indices 0-1\); nothing to run" "$FQ/jobs/$t2/log" ||
  queue_fail "task 2 does not say that it has no input"
[ "$(wc -l <"$FQ/cisolve.calls")" = 3 ] || queue_fail "expected 3 cisolve runs (o2; h2o stopped and resumed): $(cat "$FQ/cisolve.calls")"
grep -q -- "--restart=inputs/a_h2o.ckpt.h5 .*inputs/a_h2o.fcidump" "$FQ/cisolve.calls" || queue_fail "the requeued task did not restart"
"$CMP" inputs/FCIDUMP_o2.out.h5 "$DATA/o2_sto3g_triplet.ref" 1e-9 || queue_fail "task 0 did not solve FCIDUMP_o2"
"$CMP" inputs/a_h2o.out.h5 "$DATA/h2o_sto3g.ref" 1e-9 || queue_fail "task 1 did not solve a_h2o.fcidump"

# Outside a job, from the submission folder where outputs and checkpoints now lie.
out=$(INPUT_DIR=inputs bash "$TEMPLATE" 2>&1) || queue_fail "listing the inputs failed: $out"
echo "$out"
echo "$out" | grep -q "inputs: 2 inputs" || queue_fail "the count includes files that are not inputs"
echo "$out" | grep -qE "^ +0  inputs/FCIDUMP_o2$" && echo "$out" | grep -qE "^ +1  inputs/a_h2o.fcidump$" || queue_fail "wrong list"
echo "$out" | grep -q "sbatch --array=0-1 --export=ALL,INPUT_DIR=inputs" || queue_fail "no sbatch line"
echo "ok"
