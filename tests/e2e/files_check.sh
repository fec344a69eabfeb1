#!/usr/bin/env bash
# The files of a run are checked before any work (docs/usage.md, "Files"): each case must exit 1
# with a message naming the path(s), before the Hamiltonian is built (no "build" line in the
# report), and leave every file as it was.
#   same_as_input  --output, --checkpoint, --export-matrix or --molden naming the input: the same path, a
#                  symbolic link to it, a hard link to it
#   same_as_other  two files to be written naming the same file (also through a link), or the
#                  output naming the checkpoint --restart reads
#   locations      a folder that does not exist (output, checkpoint, exported matrix, Molden
#                  file), an exported matrix name of no known format, a --restart file that is
#                  not there, --molden on an input without orbitals
#   restart_other  a --restart checkpoint of another problem (refused before the build)
#   file_options   an input.h5 whose /options name the output file
# usage: files_check.sh CISOLVE CASE INPUT [OTHER_INPUT | INPUT_WITH_OPTIONS]
set -u
CIS=$(realpath "$1") CASE=$2 INPUT=$(realpath "$3") OTHER=${4:+$(realpath "$4")}
fail() { echo "FAIL: $*"; exit 1; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work" || fail "no scratch folder"
cp "$INPUT" in.fcidump
cp in.fcidump in.orig
ln -s in.fcidump sym
ln in.fcidump hard
ln in.fcidump hard.mtx
opts=(--device cpu)

# refused REGEX ARGS...: exit 1, the message matches, no build, the input as it was.
refused() {
  local re=$1; shift
  out=$("$CIS" "${opts[@]}" "$@" 2>&1); rc=$?
  [ $rc -eq 1 ] || fail "exit $rc (expected 1) for $*: $(tail -2 <<<"$out")"
  grep -qiE -- "$re" <<<"$out" || fail "message for $* does not match /$re/: $out"
  grep -qE "^(build|nonzeros) " <<<"$out" && fail "$*: refused only after the build: $out"
  cmp -s in.fcidump in.orig || fail "$*: the input changed"
  echo "ok: $* -> $(grep -m1 error <<<"$out")"
}

case $CASE in
same_as_input)
  refused "output in.fcidump and the input in.fcidump are the same file" -o in.fcidump in.fcidump
  refused "output sym and the input in.fcidump are the same file" -o sym in.fcidump
  refused "output hard and the input in.fcidump are the same file" -o hard in.fcidump
  refused "checkpoint sym and the input in.fcidump are the same file" -o x.h5 --checkpoint sym in.fcidump
  refused "exported matrix hard.mtx and the input in.fcidump are the same file" \
    -o x.h5 --export-matrix hard.mtx in.fcidump
  refused "Molden file hard and the input in.fcidump are the same file" -o x.h5 --molden=hard in.fcidump
  [ -L sym ] || fail "the link was replaced"
  ;;
same_as_other)
  refused "checkpoint x.h5 and the output x.h5 are the same file" -o x.h5 --checkpoint x.h5 in.fcidump
  touch y.h5 && ln -s y.h5 y-link.h5
  refused "checkpoint y-link.h5 and the output y.h5 are the same file" -o y.h5 --checkpoint y-link.h5 in.fcidump
  mkdir sub
  refused "exported matrix sub/../z.h5 and the output z.h5 are the same file" \
    -o z.h5 --export-matrix sub/../z.h5 in.fcidump
  refused "Molden file x.h5 and the output x.h5 are the same file" -o x.h5 --molden=x.h5 in.fcidump
  refused "Molden file w.ckpt.h5 and the checkpoint w.ckpt.h5 are the same file" \
    -o w.out.h5 --molden=w.ckpt.h5 in.fcidump
  "$CIS" "${opts[@]}" --checkpoint-every 1 -o first.h5 --checkpoint ck.h5 in.fcidump >/dev/null 2>&1 ||
    fail "first run failed"
  cp ck.h5 ck.orig
  refused "output ck.h5 and the checkpoint to restart from ck.h5 are the same file" \
    -o ck.h5 --checkpoint ck2.h5 --restart=ck.h5 in.fcidump
  cmp -s ck.h5 ck.orig || fail "the checkpoint to restart from changed"
  ;;
locations)
  refused "output nodir/x.h5: its folder nodir does not exist" -o nodir/x.h5 in.fcidump
  refused "checkpoint nodir/ck.h5: its folder nodir does not exist" -o x.h5 --checkpoint nodir/ck.h5 in.fcidump
  refused "exported matrix nodir/m.mtx: its folder nodir does not exist" \
    -o x.h5 --export-matrix nodir/m.mtx in.fcidump
  refused "cannot tell the matrix format of m.txt" -o x.h5 --export-matrix m.txt in.fcidump
  refused "cannot open checkpoint nothere.h5" -o x.h5 --restart=nothere.h5 in.fcidump
  refused "Molden file nodir/x.molden: its folder nodir does not exist" \
    -o x.h5 --molden=nodir/x.molden in.fcidump
  refused "--molden: .*in.fcidump carries no orbitals" -o x.h5 --molden in.fcidump
  [ ! -e x.molden ] || fail "a Molden file was written"
  [ ! -e x.h5 ] || fail "an output was written"
  ;;
restart_other)
  "$CIS" "${opts[@]}" --checkpoint-every 1 -o other.h5 --checkpoint other.ckpt.h5 "$OTHER" >/dev/null 2>&1 ||
    fail "run on $OTHER failed"
  refused "checkpoint other.ckpt.h5 belongs to another problem" -o x.h5 --restart=other.ckpt.h5 in.fcidump
  ;;
file_options)
  echo "victim" >victim.out.h5
  refused "/options/output: file paths come from the command line only" "$OTHER"
  echo "victim" | cmp -s - victim.out.h5 || fail "the file named by the input's /options was written"
  ;;
*) fail "unknown case $CASE" ;;
esac
echo "ok"
