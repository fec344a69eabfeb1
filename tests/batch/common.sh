# Shared by the batch tests: fail with a message; wait for a line in a log.
fail() { echo "FAIL: $*"; exit 1; }
# wait_for REGEX FILE SECONDS: until FILE has a line matching REGEX (extended grep).
wait_for() {
  local i
  for ((i = 0; i < $3 * 100; i++)); do
    grep -qE -- "$1" "$2" 2>/dev/null && return 0
    sleep 0.01
  done
  return 1
}
# matvecs of an output, from show_results.
matvecs_of() { "$SHOW" "$1" | awk '/^# matvecs/ {print $3}'; }

# The stand-in queue (fakeq/: sbatch, scontrol, qsub, qstat, run-queue) first on PATH, its state
# in $1/queue ($FQ); no queue variable of the calling environment leaks into the jobs.
fake_queue_init() {
  unset ${!SLURM_@} ${!PBS_@} OMP_NUM_THREADS NCPUS INPUT INPUT_DIR OUTPUT CHECKPOINT CISOLVE \
    CISOLVE_DEVICE WALLTIME CISOLVE_JOB_SCRIPT CISOLVE_RESUBMITS CISOLVE_MAX_RESUBMITS
  local fq_bin
  fq_bin=$(cd "$(dirname "${BASH_SOURCE[0]}")/fakeq" && pwd)
  export FAKE_QUEUE=$1/queue PATH="$fq_bin:$PATH" FAKE_QUEUE_PATH="$fq_bin:/usr/local/bin:/usr/bin:/bin"
  FQ=$FAKE_QUEUE
  mkdir -p "$FQ"
}
# recording_cisolve PATH REAL [STOP_ONCE]: a cisolve at PATH that appends its OMP_NUM_THREADS and
# arguments to $FQ/cisolve.calls and runs REAL; the first run on an input whose name ends in
# STOP_ONCE also gets --walltime 0:31, less than the safety margin: it stops at the first
# iteration with a checkpoint and exit code 3, as a job that reached its walltime does.
recording_cisolve() {
  cat >"$1" <<EOS
#!/bin/bash
echo "OMP_NUM_THREADS=\${OMP_NUM_THREADS-unset} \$*" >>$(printf %q "$FQ/cisolve.calls")
extra=()
stop=$(printf %q "${3:-}")
if [ -n "\$stop" ] && [[ "\${!#}" == *"\$stop" ]] && [ ! -e $(printf %q "$FQ/stopped")."\${stop//\//_}" ]; then
  touch $(printf %q "$FQ/stopped")."\${stop//\//_}"
  extra=(--walltime 0:31)
fi
exec $(printf %q "$2") "\$@" "\${extra[@]}"
EOS
  chmod +x "$1"
}
# job_with NAME=VALUE: the queue's job (one array task) whose variables include NAME=VALUE.
job_with() { grep -lF -- "\"$1\"" "$FQ"/jobs/*/job.sh | head -1 | xargs -r dirname | xargs -r basename; }
# queue_fail MESSAGE: what the queue was asked and each job's output, then fail.
queue_fail() {
  local d
  echo "--- queue: commands"; cat "$FQ/log"
  [ -e "$FQ/cisolve.calls" ] && { echo "--- cisolve runs"; cat "$FQ/cisolve.calls"; }
  for d in "$FQ"/jobs/*; do
    echo "--- job ${d##*/}: exit codes $(job_rcs "${d##*/}")"; cat "$d/log"
  done
  fail "$@"
}
# job_rcs ID: the exit codes of the job's runs, in order, on one line.
job_rcs() { tr '\n' ' ' <"$FQ/jobs/$1/rcs" | sed 's/ $//'; }
