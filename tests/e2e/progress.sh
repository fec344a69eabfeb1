#!/usr/bin/env bash
# Progress of the Hamiltonian build in a log (stdout not a terminal): with the interval forced
# small (CISOLVE_PROGRESS_INTERVAL), progress lines with the rows done, the rate and the time
# left; with --quiet, none; with the default interval, none for a build of well under its 10 s.
# usage: progress.sh CISOLVE DEVICE FCIDUMP SMALL_FCIDUMP
set -u
cis=$1 dev=$2 input=$3 small=$4
dir=$(mktemp -d) && trap 'rm -rf "$dir"' EXIT
# (the matrix stored: on a GPU the default may generate the rows in every product, no build)
run() { (cd "$dir" && "$cis" --device "$dev" --matrix-free=off --max-iter 1 -o /dev/null "$@") 2>&1; }
fail() { echo "FAIL: $*"; exit 1; }

out=$(CISOLVE_PROGRESS_INTERVAL=0.001 run "$input")
line='^progress +Hamiltonian build: [0-9.]+% \([0-9]+ of [0-9]+ rows\) in [0-9.]+ (s|min|h), [0-9.e+]+ rows/s, about [0-9.]+ (s|min|h) left$'
n=$(grep -cE "$line" <<<"$out")
[ "$n" -ge 1 ] || fail "no progress line in the log: $out"
grep -q $'\r' <<<"$out" && fail "a carriage return in a log"
echo "ok: $n progress lines, e.g. $(grep -m1 -E "$line" <<<"$out")"

out=$(CISOLVE_PROGRESS_INTERVAL=0 run --quiet "$input")
grep -q progress <<<"$out" && fail "progress with --quiet: $out"
echo "ok: none with --quiet"

out=$(run "$small")
grep -q '^progress' <<<"$out" && fail "progress for a short build with the default interval: $out"
echo "ok: none for a short build with the default interval"
exit 0
