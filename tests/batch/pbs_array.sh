#!/usr/bin/env bash
# The PBS template as a job array, through the stand-in queue (fakeq/), with PBS Pro's -J
# (PBS_ARRAY_INDEX, NCPUS from ncpus=) and Torque's -t (PBS_ARRAYID, PBS_NUM_PPN from ppn=): each
# subjob runs its own input (byte order; outputs and checkpoints of earlier runs are not inputs)
# with OMP_NUM_THREADS from the allocation; an index past the end says so and exits 1; a subjob
# stopped with exit code 3 submits its input again as a single job (not the array), which
# resumes; the template run outside a job counts the inputs and prints the qsub line.
# usage: pbs_array.sh TEMPLATE CISOLVE CMP_REF DATA_DIR
set -u
TEMPLATE=$(readlink -f "$1") CIS=$(readlink -f "$2") CMP=$(readlink -f "$3") DATA=$(readlink -f "$4")
. "$(dirname "$0")/common.sh"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
fake_queue_init "$work"
recording_cisolve "$work/cisolve" "$CIS" pro/a_h2o.fcidump
mkdir -p "$work/submit/pro" "$work/submit/torque"
cd "$work/submit" || exit 1
for d in pro torque; do
  cp "$DATA/o2_sto3g_triplet.fcidump" $d/FCIDUMP_o2
  cp "$DATA/h2o_sto3g.fcidump" $d/a_h2o.fcidump
  touch $d/old.out.h5 $d/old.ckpt.h5 $d/b.out.h5.tmp   # left by earlier runs: not inputs
done

out=$(INPUT_DIR=pro bash "$TEMPLATE" 2>&1) || fail "listing the inputs failed: $out"
echo "$out"
echo "$out" | grep -q "pro: 2 inputs" || fail "the count includes files that are not inputs"
echo "$out" | grep -qE "^ +0  pro/FCIDUMP_o2$" && echo "$out" | grep -qE "^ +1  pro/a_h2o.fcidump$" || fail "wrong list"
echo "$out" | grep -q "qsub -J 0-1 -v INPUT_DIR=pro " || fail "no qsub line"

qsub -J 0-2 -l select=1:ncpus=3 -v INPUT_DIR=pro,CISOLVE="$work/cisolve" "$TEMPLATE" >/dev/null || fail "qsub refused -J"
qsub -t 0-1 -l nodes=1:ppn=2 -v INPUT_DIR=torque,CISOLVE="$work/cisolve" "$TEMPLATE" >/dev/null || fail "qsub refused -t"
run-queue 8 || queue_fail "the queue did not drain"
rcs_of() { job_rcs "$(job_with "PBS_JOBID=$1")"; }
[ "$(rcs_of '100[0].fake')" = 0 ] || queue_fail "PBS Pro index 0 exited $(rcs_of '100[0].fake')"
[ "$(rcs_of '100[1].fake')" = 3 ] || queue_fail "PBS Pro index 1 exited $(rcs_of '100[1].fake'), expected 3 (stopped)"
[ "$(rcs_of '100[2].fake')" = 1 ] || queue_fail "PBS Pro index 2 (past the end) exited $(rcs_of '100[2].fake'), expected 1"
grep -qE "array index 2: pro has 2 inputs \(indices 0-1\); nothing to run" "$FQ/jobs/$(job_with 'PBS_JOBID=100[2].fake')/log" ||
  queue_fail "index 2 does not say that it has no input"
[ "$(rcs_of '104[0].fake')" = 0 ] && [ "$(rcs_of '104[1].fake')" = 0 ] || queue_fail "the Torque array failed"
again=$(grep '^qsub' "$FQ/log" | sed -n 3p)
[[ $again =~ INPUT=pro/a_h2o.fcidump,OUTPUT=pro/a_h2o.out.h5,CHECKPOINT=pro/a_h2o.ckpt.h5 ]] && [[ ! $again =~ -J|INPUT_DIR ]] ||
  queue_fail "index 1 should submit its input again as a single job: $again"
[ "$(grep -c '^qsub' "$FQ/log")" = 3 ] || queue_fail "expected one resubmission"
[ "$(job_rcs "$(job_with INPUT=pro/a_h2o.fcidump)")" = 0 ] || queue_fail "the resubmitted job failed"
[ "$(grep -c '^OMP_NUM_THREADS=3 .*pro/' "$FQ/cisolve.calls")" = 3 ] || queue_fail "OMP_NUM_THREADS does not follow ncpus"
[ "$(grep -c '^OMP_NUM_THREADS=2 .*torque/' "$FQ/cisolve.calls")" = 2 ] || queue_fail "OMP_NUM_THREADS does not follow ppn"
for d in pro torque; do
  "$CMP" $d/FCIDUMP_o2.out.h5 "$DATA/o2_sto3g_triplet.ref" 1e-9 || queue_fail "$d index 0 did not solve FCIDUMP_o2"
  "$CMP" $d/a_h2o.out.h5 "$DATA/h2o_sto3g.ref" 1e-9 || queue_fail "$d index 1 did not solve a_h2o.fcidump"
done
echo "ok"
