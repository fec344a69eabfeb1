#!/usr/bin/env bash
# The PBS template for one input, through the stand-in queue (fakeq/): PBS starts the job in the
# home folder with only the -v variables and feeds it the script on standard input (Torque; PBS
# Pro runs a spool copy), so the script cannot find itself by $0. Stopped with exit code 3, the job
# must submit itself again, with the options of the first submission (resources, walltime) and the
# same input, and the new job resume to the reference energy; CISOLVE_DEVICE=cpu gives --device
# cpu, ncpus gives OMP_NUM_THREADS, the walltime comes from the job; any other exit code, or the
# limit CISOLVE_MAX_RESUBMITS, means no resubmission.
# usage: pbs_resubmit.sh TEMPLATE CISOLVE CMP_REF INPUT REF
set -u
TEMPLATE=$(readlink -f "$1") CIS=$(readlink -f "$2") CMP=$(readlink -f "$3") SRC=$(readlink -f "$4") REF=$(readlink -f "$5")
. "$(dirname "$0")/common.sh"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
fake_queue_init "$work"
recording_cisolve "$work/cisolve" "$CIS" water.fcidump
mkdir -p "$work/submit/scripts"
cd "$work/submit" || exit 1
cp "$SRC" water.fcidump
cp "$TEMPLATE" scripts/cisolve.pbs     # submitted by a relative path, as users do

qsub -l select=1:ncpus=3 -l walltime=01:00:00 -v INPUT=water.fcidump,CISOLVE="$work/cisolve",CISOLVE_DEVICE=cpu \
  scripts/cisolve.pbs || fail "qsub refused the job"
run-queue 4 || queue_fail "the queue did not drain"
first=$(job_with PBS_JOBID=100.fake)
[ "$(job_rcs "$first")" = 3 ] || queue_fail "the first job exited $(job_rcs "$first"), expected 3"
[ "$(grep -c '^qsub' "$FQ/log")" = 2 ] || queue_fail "the stopped job did not submit itself again (once)"
again=$(grep '^qsub' "$FQ/log" | sed -n 2p)
for want in "-l select=1:ncpus=3 -l walltime=01:00:00" "INPUT=water.fcidump" "CISOLVE=$work/cisolve" \
  "CISOLVE_DEVICE=cpu" " $work/submit/scripts/cisolve.pbs\$"; do
  [[ $again =~ $want ]] || queue_fail "the resubmission lacks '$want': $again"
done
second=$(job_with PBS_JOBID=101.fake)
[ "$(job_rcs "$second")" = 0 ] || queue_fail "the resubmitted job exited $(job_rcs "$second"), expected 0"
[ "$(grep -c -- "--device cpu --walltime 01:00:00 " "$FQ/cisolve.calls")" = 2 ] ||
  queue_fail "expected --device cpu and the job's walltime in both runs"
[ "$(grep -c "^OMP_NUM_THREADS=3 " "$FQ/cisolve.calls")" = 2 ] || queue_fail "OMP_NUM_THREADS does not follow ncpus"
grep -q -- "--restart=water.ckpt.h5" "$FQ/cisolve.calls" || queue_fail "the resubmitted job did not restart"
"$CMP" water.out.h5 "$REF" 1e-9 || queue_fail "wrong energy after the resubmission"
echo "ok: stopped (3), submitted itself again with the same options, resumed to the reference energy"

# No resubmission: exit 0, exit 1 (no such input), exit 3 beyond CISOLVE_MAX_RESUBMITS.
n=$(grep -c '^qsub' "$FQ/log")
qsub -v INPUT=water.fcidump,OUTPUT=again.out.h5,CHECKPOINT=again.ckpt.h5,CISOLVE="$work/cisolve" scripts/cisolve.pbs >/dev/null
qsub -v INPUT=missing.fcidump,CISOLVE="$work/cisolve" scripts/cisolve.pbs >/dev/null
cp water.fcidump limit_water.fcidump
recording_cisolve "$work/cisolve" "$CIS" limit_water.fcidump
qsub -v INPUT=limit_water.fcidump,CISOLVE="$work/cisolve",CISOLVE_MAX_RESUBMITS=0 scripts/cisolve.pbs >/dev/null
run-queue 5 || queue_fail "the queue did not drain"
for expect in "OUTPUT=again.out.h5 0" "INPUT=missing.fcidump 1" "INPUT=limit_water.fcidump 3"; do
  id=$(job_with "${expect% *}")
  [ "$(job_rcs "$id")" = "${expect#* }" ] || queue_fail "job with ${expect% *}: exit codes $(job_rcs "$id"), expected ${expect#* } once"
done
[ "$(grep -c '^qsub' "$FQ/log")" = $((n + 3)) ] || queue_fail "a job resubmitted itself"
grep -q "resubmitted 0 times already (CISOLVE_MAX_RESUBMITS); not again" "$FQ/jobs/$(job_with INPUT=limit_water.fcidump)/log" ||
  queue_fail "the limit is not reported"
echo "ok: exit codes 0 and 1, and 3 beyond the limit, are not resubmitted"
