# Shared by the stand-in queue commands (sbatch, scontrol, qsub, qstat, run-queue): the queue's
# state lives under $FAKE_QUEUE:
#   log           one line per command the queue was asked to run ("sbatch ARGS", "qsub ARGS", ...)
#   next          the next job number
#   jobs/ID/      one job (one array task): job.sh (its description, bash assignments), script (the
#                 copy taken at submission, as real queues take it), state (pending|running|done),
#                 rcs (exit codes of its runs), log (its output), requeue (asked while running)
set -u
: "${FAKE_QUEUE:?FAKE_QUEUE is not set}"
mkdir -p "$FAKE_QUEUE/jobs"

fq_log() { echo "$*" >>"$FAKE_QUEUE/log"; }

# fq_next_id: a new job number.
fq_next_id() {
  local n=100
  [ -f "$FAKE_QUEUE/next" ] && n=$(cat "$FAKE_QUEUE/next")
  echo $((n + 1)) >"$FAKE_QUEUE/next"
  echo "$n"
}

# fq_add_job ID SCRIPT [NAME...]: a pending job whose description is the current values of sched,
# workdir, export_all, job_env (NAME=VALUE words), script_args and the variables NAME..., with a
# copy of SCRIPT.
fq_add_job() {
  local d=$FAKE_QUEUE/jobs/$1 src=$2
  shift 2
  mkdir -p "$d"
  cp "$src" "$d/script"
  declare -p sched workdir export_all job_env script_args "$@" >"$d/job.sh"
  echo pending >"$d/state"
  : >"$d/rcs"
}

# fq_array_indices SPEC: the indices of an array spec (0-3, 1,4,7, 0-8:2; a %N limit is ignored).
fq_array_indices() {
  local part a b step
  for part in $(echo "${1%%%*}" | tr , ' '); do
    step=1
    case $part in *:*) step=${part#*:}; part=${part%%:*} ;; esac
    case $part in *-*) a=${part%-*}; b=${part#*-} ;; *) a=$part; b=$part ;; esac
    seq "$a" "$step" "$b"
  done
}
