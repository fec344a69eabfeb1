#!/usr/bin/env bash
# A signal (SIGTERM, SIGUSR1) while the input is being read: exit 3, which the batch templates
# requeue on, saying that there was nothing to checkpoint yet, and no output or checkpoint
# written; the command printed is the one that was run.
#
# The input comes through a named pipe, so that cisolve waits inside the read for as long as the
# test wants. cisolve opens its input twice (a look at the first bytes for the format, then the
# reader): the test holds the pipe open throughout, and writes one copy of a small FCIDUMP
# (smaller than one read) for each open, the next only once cisolve has read the last one (its
# byte count in /proc/PID/io).
# usage: signal_read.sh CISOLVE SIGNAL
set -u
CIS=$(realpath "$1") SIG=$2
. "$(dirname "$0")/common.sh"
work=$(mktemp -d) pid=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$work"' EXIT
cd "$work" || fail "no scratch folder"
# A two-orbital FCIDUMP (the integrals of tests/io/make_fixtures.py's bad inputs, complete).
printf '%s\n' " &FCI NORB=2,NELEC=2,MS2=0," "  ORBSYM=1,1," "  ISYM=1," " &END" \
  " 0.65 1 1 1 1" " 0.18 2 1 1 1" " 0.66 2 2 1 1" " 0.18 2 1 2 1" " 0.69 2 2 2 2" \
  " -1.25 1 1 0 0" " 0.05 2 1 0 0" " -0.47 2 2 0 0" " 0.71 0 0 0 0" >h2.fcidump
size=$(stat -c %s h2.fcidump)
mkfifo in.fcidump
# Opened for reading and writing, the pipe never blocks cisolve's opens, and stays while it
# closes and opens it again.
exec 3<>in.fcidump
"$CIS" --device cpu -o out.h5 --checkpoint ck.h5 in.fcidump >run.log 2>&1 3>&- &
pid=$!
# (the started shell holds the pipe too, as fd 3, until it has become cisolve)
holds_pipe() {
  [ "$(readlink /proc/$pid/exe 2>/dev/null)" = "$CIS" ] &&
    ls -l /proc/$pid/fd 2>/dev/null | grep -qF -- "$work/in.fcidump"
}
bytes_read() { awk '/^rchar:/ {print $2}' /proc/$pid/io 2>/dev/null || echo 0; }
# wait_read N: until cisolve has read N more bytes than at r0 (or has ended)
wait_read() {
  local i
  for ((i = 0; i < 1000; i++)); do
    [ "$(bytes_read)" -ge $((r0 + $1)) ] 2>/dev/null && return 0
    kill -0 $pid 2>/dev/null || return 1
    sleep 0.01
  done
  return 1
}
opened=0
for ((i = 0; i < 1000; i++)); do holds_pipe && { opened=1; break; }; sleep 0.01; done
[ $opened = 1 ] || fail "cisolve does not read its input"
r0=$(bytes_read)
kill -"$SIG" $pid
sleep 0.2
kill -0 $pid 2>/dev/null || { wait $pid; rc=$?; pid=; fail "SIG$SIG during the read ended cisolve with exit $rc"; }
cat h2.fcidump >&3
wait_read $size || fail "cisolve did not read the first copy"
cat h2.fcidump >&3
wait_read $((2 * size)) || fail "cisolve did not read the second copy"
exec 3>&-
wait $pid; rc=$?
pid=
tail -3 run.log
[ $rc -eq 3 ] || fail "SIG$SIG while reading: exit $rc, expected 3"
grep -q "received SIG$SIG while reading the input.*nothing to checkpoint yet" run.log ||
  fail "the report does not say that it stopped while reading, with nothing to checkpoint"
grep -qE "^to resume +.*cisolve --device cpu -o out.h5 --checkpoint ck.h5 in.fcidump" run.log ||
  fail "the command that runs it again is not printed"
[ ! -e out.h5 ] && [ ! -e ck.h5 ] || fail "a run stopped while reading wrote a file"
# The same input from a plain file runs to the end (the pipe fed the whole of it).
"$CIS" --device cpu -o out.h5 --checkpoint ck.h5 h2.fcidump >full.log 2>&1 ||
  fail "the input itself does not run: $(tail -2 full.log)"
echo "ok"
