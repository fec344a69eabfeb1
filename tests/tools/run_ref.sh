#!/usr/bin/env bash
# usage: run_ref.sh CISOLVE CMP_REF REF.ref OUT.h5 TOL -- CISOLVE_ARGS...
# Runs cisolve (writing OUT.h5), requires exit code 0, then compares the energies in OUT.h5
# with the reference file (tests/data/*.ref) to TOL Eh.
set -u
cisolve=$1; cmp=$2; ref=$3; out=$4; tol=$5; shift 5
[ "${1:-}" = "--" ] && shift
rm -f "$out"
"$cisolve" --output "$out" "$@"
rc=$?
if [ $rc -ne 0 ]; then echo "FAIL: cisolve exited with $rc"; exit 1; fi
exec "$cmp" "$out" "$ref" "$tol"
