#!/usr/bin/env bash
# usage: run_case.sh CISOLVE CMP_REF REF.ref NAME -- CISOLVE_ARGS...
# Runs cisolve (NAME.out.h5, NAME.log in the current directory), requires exit code 0, compares
# the energies with REF.ref to 1e-8 Eh (cmp_ref) and, where REF.ref says "# ndet N", requires the
# report's space to hold N determinants.
set -u
cisolve=$1; cmp=$2; ref=$3; name=$4; shift 4
[ "${1:-}" = "--" ] && shift
rm -f "$name.out.h5" "$name.ckpt.h5"
"$cisolve" --output "$name.out.h5" --checkpoint "$name.ckpt.h5" "$@" > "$name.log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then echo "FAIL: cisolve exited with $rc"; cat "$name.log"; exit 1; fi
grep -E '^(space|reference region|orbitals|frozen core) ' "$name.log"
ndet=$(sed -n 's/^# ndet \([0-9]*\)$/\1/p' "$ref")
if [ -n "$ndet" ] && ! grep -qE "^space .*, $ndet determinants$" "$name.log"; then
  echo "FAIL: the space does not hold the reference's $ndet determinants"
  exit 1
fi
exec "$cmp" "$name.out.h5" "$ref" 1e-8
