#!/usr/bin/env bash
# The SLURM template on a machine without GPUs, through the stand-in queue (fakeq/): submitted with
# --gres=none and CISOLVE_DEVICE=cpu it must run cisolve --device cpu with OMP_NUM_THREADS from
# --cpus-per-task; stopped with exit code 3 it requeues itself and the requeued job resumes to the
# reference energy; a job that ends with any other exit code (0, 1 bad input, 2 not converged) is
# not requeued.
# usage: slurm_cpu.sh TEMPLATE CISOLVE CMP_REF INPUT REF
set -u
TEMPLATE=$(readlink -f "$1") CIS=$(readlink -f "$2") CMP=$(readlink -f "$3") SRC=$(readlink -f "$4") REF=$(readlink -f "$5")
. "$(dirname "$0")/common.sh"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
fake_queue_init "$work"
recording_cisolve "$work/cisolve" "$CIS" water.fcidump
mkdir -p "$work/submit"
cd "$work/submit" || exit 1
cp "$SRC" water.fcidump

sbatch --gres=none -c 3 --export=ALL,INPUT=water.fcidump,CISOLVE="$work/cisolve",CISOLVE_DEVICE=cpu "$TEMPLATE" ||
  fail "sbatch refused the job"
run-queue 4 || queue_fail "the queue did not drain"
id=$(job_with INPUT=water.fcidump)
[ "$(job_rcs "$id")" = "3 0" ] || queue_fail "exit codes $(job_rcs "$id"), expected 3 (stopped), then 0 after the requeue"
[ "$(grep -c "^scontrol requeue $id\$" "$FQ/log")" = 1 ] || queue_fail "the stopped job was not requeued exactly once"
[ "$(grep -c -- "--device cpu " "$FQ/cisolve.calls")" = 2 ] || queue_fail "CISOLVE_DEVICE=cpu did not give --device cpu"
[ "$(grep -c "^OMP_NUM_THREADS=3 " "$FQ/cisolve.calls")" = 2 ] || queue_fail "OMP_NUM_THREADS does not follow --cpus-per-task"
grep -q "CPU (OpenBLAS, 3 OpenMP threads" "$FQ/jobs/$id/log" || queue_fail "cisolve does not report 3 threads"
grep -q -- "--restart=water.ckpt.h5" "$FQ/cisolve.calls" || queue_fail "the requeued job did not restart"
"$CMP" water.out.h5 "$REF" 1e-9 || queue_fail "wrong energy after the requeue"
echo "ok: stopped (3), requeued once, resumed on the CPU with 3 threads to the reference energy"

# Not requeued: 0 (converged), 1 (no such input), 2 (not converged).
n=$(grep -c '^scontrol requeue' "$FQ/log")
sbatch -c 2 --export=ALL,INPUT=water.fcidump,OUTPUT=again.out.h5,CHECKPOINT=again.ckpt.h5,CISOLVE="$work/cisolve",CISOLVE_DEVICE=cpu "$TEMPLATE" >/dev/null
sbatch -c 2 --export=ALL,INPUT=missing.fcidump,CISOLVE="$work/cisolve",CISOLVE_DEVICE=cpu "$TEMPLATE" >/dev/null
sbatch -c 2 --export=ALL,INPUT=water.fcidump,OUTPUT=short.out.h5,CHECKPOINT=short.ckpt.h5,CISOLVE="$work/cisolve",CISOLVE_DEVICE=cpu "$TEMPLATE" --max-iter 1 >/dev/null
run-queue 6 || queue_fail "the queue did not drain"
for expect in "OUTPUT=again.out.h5 0" "INPUT=missing.fcidump 1" "OUTPUT=short.out.h5 2"; do
  id=$(job_with "${expect% *}")
  [ "$(job_rcs "$id")" = "${expect#* }" ] || queue_fail "job with ${expect% *}: exit codes $(job_rcs "$id"), expected ${expect#* } once"
done
[ "$(grep -c '^scontrol requeue' "$FQ/log")" = "$n" ] || queue_fail "a job that did not stop with exit code 3 was requeued"
echo "ok: exit codes 0, 1 and 2 are not requeued"
