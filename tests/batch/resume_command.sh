#!/usr/bin/env bash
# A run stopped by SIGUSR1 prints the command that resumes it; run as printed (by a shell, from
# the folder it names), it restarts from the checkpoint and ends with the energies of an
# uninterrupted run. Paths with a space and a quote check the quoting; the resumed run, stopped
# in turn, prints a command whose --restart reads the checkpoint it wrote (not the one it was
# given with --restart=FILE).
# usage: resume_command.sh CISOLVE CMP_REF SHOW_RESULTS INPUT
set -u
CIS=$(realpath "$1") CMP=$(realpath "$2") SHOW=$(realpath "$3") INPUT=$(realpath "$4")
. "$(dirname "$0")/common.sh"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
opts=(--device cpu --tol 1e-12 --tol-residual 1e-8)
sub="run's dir"
mkdir "$work/$sub"
cd "$work" || fail "no scratch folder"
"$CIS" "${opts[@]}" -o full.h5 --checkpoint full.ckpt.h5 "$INPUT" >full.log 2>&1 ||
  fail "uninterrupted run failed: $(tail -3 full.log)"
"$SHOW" full.h5 >full.ref

# stop_at LOG ITER CMD...: run CMD in the background, SIGUSR1 once LOG shows iteration ITER.
stop_at() {
  local log=$1 it=$2; shift 2
  "$@" >"$log" 2>&1 &
  local pid=$!
  wait_for "^ +$it +[0-9]+ " "$log" 60 || { kill -9 $pid; fail "no iteration $it: $(tail -3 "$log")"; }
  kill -USR1 $pid
  wait $pid; local rc=$?
  tail -3 "$log"
  [ $rc -eq 3 ] || fail "stopped run exited $rc, expected 3"
}
# The command a log says resumes the run.
resume_of() { sed -n 's/^to resume  *//p' "$1"; }

stop_at run1.log 3 "$CIS" "${opts[@]}" -o "$sub/out.h5" --checkpoint "$sub/ck.h5" "$INPUT"
cmd=$(resume_of run1.log)
[ -n "$cmd" ] || fail "no command to resume"
grep -qF -- "--restart" <<<"$cmd" || fail "the command does not restart: $cmd"
# The resumed run, itself resumed from another checkpoint name and stopped in turn (its first
# iteration is the checkpoint's, judged again).
it=$(sed -n 's/^stopped .*at iteration \([0-9]*\)$/\1/p' run1.log)
cp "$sub/ck.h5" "$sub/given.ckpt.h5"
stop_at run2.log $((it + 1)) "$CIS" "${opts[@]}" -o "$sub/out.h5" --checkpoint "$sub/ck2.h5" \
  --restart="$sub/given.ckpt.h5" "$INPUT"
rm "$sub/given.ckpt.h5"
cmd2=$(resume_of run2.log)
grep -q "restart=" <<<"$cmd2" && fail "the command keeps --restart=FILE: $cmd2"
cd / && (cd "$work" && bash -c "$cmd2") >"$work/resumed.log" 2>&1; rc=$?
cd "$work"
tail -3 resumed.log
[ $rc -eq 0 ] || fail "the printed command exited $rc: $cmd2"
grep -q "^restart .*ck2.h5" resumed.log || fail "the printed command did not resume from ck2.h5"
"$CMP" "$sub/out.h5" full.ref 1e-10 || fail "the resumed run's energies differ"
echo "ok"
