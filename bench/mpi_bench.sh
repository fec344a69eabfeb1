#!/usr/bin/env bash
# Several GPUs: one input on 1, 2, ... ranks (one GPU each) back to back on one machine, each rank
# count run twice (the first right after the previous count: "cold" only for the very first
# process on a fresh machine; docs/BENCHMARKS.md says which), with the host's cores shared out
# (mpirun --bind-to none, --threads cores/ranks); COLD=1: the first run is the first process on a
# freshly started machine. Appends one CSV row per run to OUT.csv.
# ONCE=1: one run per rank count (large cases); RUN_TIMEOUT: seconds a run may take; LOGDIR: keep
# each run's report there; DEVICE=cpu: CPU ranks (the host's cores shared out the same way, each
# rank bound to its own cores and its OpenMP threads to them: mpirun --map-by slot:PE=T
# --bind-to core, OMP_PROC_BIND=close, OMP_PLACES=cores; BIND=none leaves them unbound).
# usage: COMMIT=abc1234 bench/mpi_bench.sh CISOLVE OUT.csv "CASE NAME" INPUT RANKS... [-- cisolve options]
set -u
cis=$1 out=$2 name=$3 input=$4; shift 4
ranks=(); while [ $# -gt 0 ] && [ "$1" != "--" ]; do ranks+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
cores=$(nproc)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case $gpu in *H200*) dev=H200 ;; *H100*) dev=H100 ;; *) dev=$gpu ;; esac
[ -s "$out" ] || echo "device,host,commit,date,command,case,ranks,start,threads,gather,ndet,nnz,energy,iterations,total_s,build_s,upload_s,product_ms,gather_ms" >"$out"
log=$(mktemp); trap 'rm -f "$log"' EXIT
first=1
for np in "${ranks[@]}"; do
  starts=(first repeat); [ "${ONCE:-0}" = 1 ] && starts=(first)
  for start in "${starts[@]}"; do
    t=$((cores / np))
    bind=(--bind-to none)
    if [ "${DEVICE:-gpu}" = cpu ] && [ "${BIND:-cores}" = cores ]; then
      bind=(--map-by "slot:PE=$t" --bind-to core -x OMP_PROC_BIND=close -x OMP_PLACES=cores)
    fi
    timeout "${RUN_TIMEOUT:-86400}" mpirun "${bind[@]}" -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE -np "$np" "$cis" --device "${DEVICE:-gpu}" \
      --threads "$t" -o /dev/null "$@" "$input" >"$log" 2>&1
    rc=$?
    [ -n "${LOGDIR:-}" ] && cp "$log" "$LOGDIR/$(printf %s "$name" | tr -c 'A-Za-z0-9' _)np${np}_$start.log"
    [ $rc -eq 0 ] || { echo "$name, $np ranks: exit $rc"; tail -5 "$log"; continue; }
    label=$start; [ $first = 1 ] && [ "${COLD:-0}" = 1 ] && label=cold; first=0
    awk -v dev="$dev" -v host="$gpu" -v commit="${COMMIT:-unknown}" -v date="$(date -u '+%Y-%m-%d %H:%M UTC')" \
        -v cmd="${DEVICE:+DEVICE=$DEVICE }${BIND:+BIND=$BIND }bench/mpi_bench.sh cisolve OUT.csv '$name' $input ${ranks[*]}${*:+ -- $*}" \
        -v name="$name" -v np="$np" -v start="$label" -v t="$t" '
      /space +[A-Za-z].*determinants$/ { for (i = 1; i <= NF; i++) if ($(i+1) ~ /^determinants/) ndet = $i }
      /^nonzeros / && !nnz { nnz = ($2 == "about") ? $3 : $2 }
      /^ranks / { for (i = 1; i <= NF; i++) if ($i == "of") { nnz = $(i+1) } }
      /^gather / { g = $2; how = ($0 ~ /NCCL/) ? "NCCL" : ($0 ~ /through the host/ ? "host" : "MPI") }
      /^converged after/ { it = $3 }
      /^root +total energy/ { getline; e = $2 }
      /^timings / { tot = $3; b = $6; sub(",", "", b); u = $8; sub(",", "", u); m = $10; pm = $11; sub(/\(/, "", pm) }
      END {
        if (np == 1) { how = "-"; g = 0 }
        printf "%s,%s,%s,%s,%s,%s,%d,%s,%d,%s,%s,%s,%s,%s,%s,%s,%s,%s,%.3f\n", dev, host, commit, date,
          "\"" cmd "\"", "\"" name "\"", np, start, t, how, ndet, nnz, e, it, tot, b, u, pm, (it > 0 ? 1000 * g / it : 0)
      }' "$log" | tee -a "$out"
  done
done
