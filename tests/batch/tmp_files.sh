#!/usr/bin/env bash
# Temporary files (docs/output-format.md): every writer (output.h5, checkpoints, exported
# matrices) writes under a fresh, exclusively created name and renames it.
#   planted     symbolic links planted at the old fixed names FILE.tmp are never followed: the
#               files they point to keep their content, and the links stay
#   concurrent  four runs writing the same --output and --checkpoint at once (a checkpoint at
#               every iteration) all succeed; the output holds the right energies and the
#               checkpoint restarts
#   size_limit  a write beyond `ulimit -f` fails with exit 1 and a message, no temporary file
#               left (not a death by SIGXFSZ)
#   signal      SIGHUP while a checkpoint is being written (the process held still by SIGSTOP
#               with its temporary file on disk) ends the program without leaving the file
# No case leaves a temporary file behind.
# usage: tmp_files.sh CISOLVE CMP_REF SHOW_RESULTS CASE INPUT [cisolve options]
set -u
CIS=$1 CMP=$2 SHOW=$3 CASE=$4 INPUT=$5; shift 5
. "$(dirname "$0")/common.sh"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
opts=(--device cpu --tol 1e-12 --tol-residual 1e-8 "$@")
# temporaries NAME...: the temporary files of the files NAME in $work (old and new names)
temporaries() { local n; for n in "$@"; do compgen -G "$work/$n*.tmp"; done; }

reference() {
  "$CIS" "${opts[@]}" -o "$work/full.h5" --checkpoint "$work/full.ckpt.h5" "$INPUT" >"$work/full.log" 2>&1 ||
    fail "uninterrupted run failed: $(tail -3 "$work/full.log")"
  "$SHOW" "$work/full.h5" >"$work/full.ref"
}

case $CASE in
planted)
  reference
  echo "victim" >"$work/victim"
  for n in out.h5 ck.h5 m.mtx m.h5; do ln -s victim "$work/$n.tmp"; done
  "$CIS" "${opts[@]}" --checkpoint-every 1 -o "$work/out.h5" --checkpoint "$work/ck.h5" \
    --export-matrix "$work/m.mtx" "$INPUT" >"$work/run.log" 2>&1 || fail "run failed: $(tail -3 "$work/run.log")"
  "$CIS" "${opts[@]}" -o /dev/null --checkpoint "$work/ck.h5" --export-matrix "$work/m.h5" "$INPUT" \
    >"$work/run2.log" 2>&1 || fail "run with an .h5 export failed: $(tail -3 "$work/run2.log")"
  echo "victim" | cmp -s - "$work/victim" || fail "a writer followed a link planted at a FILE.tmp name"
  for n in out.h5 ck.h5 m.mtx m.h5; do
    [ "$(readlink "$work/$n.tmp")" = victim ] || fail "the link planted at $n.tmp was replaced"
    [ -f "$work/$n" ] && [ ! -L "$work/$n" ] || fail "$n was not written"
    rm "$work/$n.tmp"
  done
  "$CMP" "$work/out.h5" "$work/full.ref" 1e-10 || fail "wrong energies"
  ;;
concurrent)
  reference
  pids=()
  for i in 1 2 3 4; do
    "$CIS" "${opts[@]}" --threads 1 --checkpoint-every 1 -o "$work/out.h5" --checkpoint "$work/ck.h5" \
      "$INPUT" >"$work/run$i.log" 2>&1 &
    pids+=($!)
  done
  for i in 1 2 3 4; do
    wait "${pids[$((i - 1))]}"; rc=$?
    [ $rc -eq 0 ] || fail "run $i of 4 exited $rc: $(grep error "$work/run$i.log")"
  done
  echo "4 concurrent runs: all exited 0"
  "$CMP" "$work/out.h5" "$work/full.ref" 1e-10 || fail "the output left by the concurrent runs is wrong"
  "$CIS" "${opts[@]}" -o "$work/again.h5" --checkpoint "$work/ck.h5" --restart "$INPUT" \
    >"$work/restart.log" 2>&1 || fail "the checkpoint left by the concurrent runs does not restart"
  "$CMP" "$work/again.h5" "$work/full.ref" 1e-10 || fail "restart from their checkpoint: wrong energies"
  ;;
size_limit)
  (ulimit -f 20; exec "$CIS" "${opts[@]}" -o "$work/out.h5" --checkpoint "$work/ck.h5" "$INPUT") \
    >"$work/run.log" 2>&1; rc=$?
  tail -2 "$work/run.log"
  [ $rc -eq 1 ] || fail "a write beyond the file size limit: exit $rc, expected 1"
  grep -q "^cisolve: error: .*out.h5" "$work/run.log" || fail "the message does not name the output"
  [ ! -e "$work/out.h5" ] || fail "an output was published"
  ;;
signal)
  landed=0
  for ((attempt = 1; attempt <= 10 && !landed; attempt++)); do
    rm -f "$work"/ck.h5*
    "$CIS" "${opts[@]}" --checkpoint-every 1 -o "$work/out.h5" --checkpoint "$work/ck.h5" "$INPUT" \
      >"$work/run.log" 2>&1 &
    pid=$!
    while kill -0 $pid 2>/dev/null; do
      [ -n "$(temporaries ck.h5)" ] || continue
      kill -STOP $pid
      if [ -n "$(temporaries ck.h5)" ]; then
        landed=1
        kill -HUP $pid
      fi
      kill -CONT $pid
      ((landed)) && break
    done
    wait $pid; rc=$?
  done
  ((landed)) || fail "no checkpoint write caught in 10 runs"
  echo "SIGHUP during a checkpoint write (attempt $((attempt - 1))): exit $rc"
  [ $rc -eq 129 ] || fail "SIGHUP: exit $rc, expected death by SIGHUP (129)"
  ;;
*) fail "unknown case $CASE" ;;
esac
left=$(temporaries out.h5 ck.h5 m.mtx m.h5)
[ -z "$left" ] || fail "temporary files left: $left"
echo "ok"
