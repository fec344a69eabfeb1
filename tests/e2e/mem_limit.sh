#!/usr/bin/env bash
# usage: mem_limit.sh solve CISOLVE CMP_REF REF INPUT ROOM_MIB SECONDS [cisolve options...]
#        mem_limit.sh refuse CISOLVE - - INPUT ROOM_MIB SECONDS
#        mem_limit.sh export CISOLVE CMP_REF SHOW_RESULTS INPUT ROOM_MIB SECONDS [options...]
# Runs cisolve under `ulimit -v` (RLIMIT_AS) set to what the program maps before any work
# (libraries, OpenBLAS's threads' buffers) plus ROOM_MIB, within SECONDS.
#  solve:  plus the calling thread's OpenBLAS buffer (128 MiB) too: the default budget must fit
#          (caching less of the matrix, regenerating the rest), exit 0, the energies as REF's
#          to 1e-8 Eh. Before the default budget counted address-space limits, such a run
#          cached the whole matrix and failed for memory (exit 4) or hung in OpenBLAS. Its
#          OpenBLAS runs on one thread: two would take more than a quarter of the limit, and
#          the program starts again with OPENBLAS_NUM_THREADS=1.
#  refuse: ROOM_MIB below the buffer OpenBLAS's first call needs (OPENBLAS_NUM_THREADS=1 set,
#          so that the program cannot fit itself): exit 4 at once, saying so, where OpenBLAS
#          used to retry its allocation forever.
#  export: as solve, with --export-matrix FILE.h5, which must be written block by block within
#          the limit (the export used to gather the whole matrix first); the exported matrix,
#          solved with no limit, gives the same energies less the core energy.
set -u
mode=$1; cis=$2; cmp=$3; ref=$4; input=$5; room=$6; seconds=$7; shift 7
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$work"' EXIT
export OMP_NUM_THREADS=2 # OpenBLAS reads it too, where OPENBLAS_NUM_THREADS is unset
unset OPENBLAS_NUM_THREADS GOTO_NUM_THREADS
[ "$mode" = refuse ] && export OPENBLAS_NUM_THREADS=1

# The mapped address space while the program waits for its input on a FIFO, once it is steady.
mkfifo "$work/fifo"
"$cis" --device cpu -o /dev/null "$work/fifo" >/dev/null 2>&1 &
pid=$!
base=0 last=-1 steady=0
for _ in $(seq 100); do
  base=$(awk '/^VmSize:/ {print $2}' /proc/$pid/status 2>/dev/null || echo 0)
  if [ "$base" = "$last" ]; then steady=$((steady + 1)); else steady=0; fi
  [ $steady -ge 5 ] && break
  last=$base
  sleep 0.1
done
kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null; pid=
if [ "${base:-0}" -le 0 ]; then echo "FAIL: could not read the program's address space"; exit 1; fi
limit=$((base + room * 1024))
[ "$mode" != refuse ] && limit=$((limit + 129 * 1024))
[ "$mode" = export ] && set -- "$@" --export-matrix "$work/m.h5"
echo "address space before any work: $base KiB; running under ulimit -v $limit"

(ulimit -v $limit && exec timeout -s KILL "$seconds" "$cis" --device cpu -o "$work/out.h5" \
  --checkpoint "$work/ck.h5" "$@" "$input") > "$work/log" 2>&1
rc=$?
cat "$work/log"
if [ "$mode" = refuse ]; then
  [ $rc -eq 137 ] && { echo "FAIL: no answer within $seconds s (hung?)"; exit 1; }
  [ $rc -eq 4 ] || { echo "FAIL: exit code $rc, expected 4"; exit 1; }
  grep -q "address-space limit (ulimit -v) leaves .*OpenBLAS needs 128 MiB" "$work/log" ||
    { echo "FAIL: the message does not say what the limit leaves and OpenBLAS needs"; exit 1; }
  echo "ok: exit 4 under ulimit -v $limit, naming the limit"
  exit 0
fi
if [ $rc -ne 0 ]; then
  [ $rc -eq 137 ] && echo "FAIL: no result within $seconds s (hung?)"
  echo "FAIL: cisolve exited with $rc under ulimit -v $limit"
  exit 1
fi
if [ "$mode" = solve ]; then
  grep -q "address-space limit (ulimit -v)" "$work/log" ||
    { echo "FAIL: the budget line does not name the address-space limit"; exit 1; }
  grep -q "^device .*, 1 BLAS thread)" "$work/log" ||
    { echo "FAIL: OpenBLAS was not held to one thread"; exit 1; }
  exec "$cmp" "$work/out.h5" "$ref" 1e-8
fi

# export: the energies of the run, less its core energy, are the reference of the matrix's
grep -q "^exported .*m.h5" "$work/log" || { echo "FAIL: no export"; exit 1; }
ecore=$(awk '/^core energy/ {print $3}' "$work/log")
"$ref" "$work/out.h5" | awk -v e="$ecore" '/^#/ {next} {printf "%d %.12f\n", $1, $2 - e}' \
  > "$work/shifted.ref"
"$cis" --device cpu -o "$work/m.out.h5" --checkpoint "$work/m.ck.h5" "$work/m.h5" > "$work/m.log" 2>&1 ||
  { cat "$work/m.log"; echo "FAIL: solving the exported matrix"; exit 1; }
exec "$cmp" "$work/m.out.h5" "$work/shifted.ref" 1e-8
