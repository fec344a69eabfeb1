#!/usr/bin/env bash
# `cmake --install BUILD --prefix DIR` (README) gives DIR/bin/cisolve and the batch templates in
# DIR/share/cisolve/; the installed SLURM template, submitted to the stand-in queue (fakeq/) from
# another folder with DIR/bin on PATH and no CISOLVE, finds and runs the installed cisolve; with
# a CISOLVE that does not exist it says what to do and exits 1 (not requeued).
# usage: installed.sh CMAKE BUILD_DIR CMP_REF INPUT REF
set -u
CMAKE=$1 BUILD=$(readlink -f "$2") CMP=$(readlink -f "$3") SRC=$(readlink -f "$4") REF=$(readlink -f "$5")
. "$(dirname "$0")/common.sh"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
fake_queue_init "$work"
prefix=$work/prefix
"$CMAKE" --install "$BUILD" --prefix "$prefix" || fail "cmake --install failed"
for f in bin/cisolve share/cisolve/slurm/cisolve.sbatch share/cisolve/pbs/cisolve.pbs; do
  [ -x "$prefix/$f" ] || fail "cmake --install did not install $f"
done
"$prefix/bin/cisolve" --version || fail "the installed cisolve does not run"

export PATH="$prefix/bin:$PATH"
[ "$(command -v cisolve)" = "$prefix/bin/cisolve" ] || fail "another cisolve is first on PATH"
mkdir -p "$work/submit"
cd "$work/submit" || exit 1
cp "$SRC" water.fcidump
sbatch -c 2 --export=ALL,INPUT=water.fcidump "$prefix/share/cisolve/slurm/cisolve.sbatch" || fail "sbatch refused the job"
sbatch -c 2 --export=ALL,INPUT=water.fcidump,OUTPUT=x.out.h5,CISOLVE=/nonexistent/cisolve "$prefix/share/cisolve/slurm/cisolve.sbatch" >/dev/null
run-queue 3 || queue_fail "the queue did not drain"
[ "$(job_rcs 100)" = 0 ] || queue_fail "the installed template exited $(job_rcs 100)"
"$CMP" water.out.h5 "$REF" 1e-9 || queue_fail "wrong energy"
[ "$(job_rcs 101)" = 1 ] || queue_fail "a job without cisolve exited $(job_rcs 101), expected 1"
grep -q "cannot run '/nonexistent/cisolve': put cisolve on PATH" "$FQ/jobs/101/log" || queue_fail "no clear message without cisolve"
grep -q "^scontrol" "$FQ/log" && queue_fail "a job was requeued"
echo "ok"
