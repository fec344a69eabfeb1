#!/usr/bin/env bash
# usage: check_irrep_all.sh CISOLVE CMP_REF REFS CASE MS2 FCIDUMP [cisolve options...]
# One run of cisolve --irrep all --nroots 2 --ms2 MS2 on FCIDUMP (in the current directory):
# exit 0, one output per irrep of REFS' lines "CASE MS2 IRREP DIM E0 [E1]" (PySCF
# direct_spin1_symm, make_irrep_refs.py) with its energies to 1e-8 Eh, the same irreps in the
# final table, and no output for an irrep REFS does not list.
set -u
cis=$1; cmp=$2; refs=$3; case=$4; ms2=$5; input=$6; shift 6
rm -f all.*.out.h5 all.*.ckpt.h5
"$cis" --irrep all --ms2 "$ms2" --nroots 2 -o all.out.h5 --checkpoint all.ckpt.h5 "$@" "$input" \
  > all.log 2>&1
rc=$?
if [ $rc -ne 0 ]; then echo "FAIL: cisolve --irrep all exited $rc"; tail -20 all.log; exit 1; fi
n=0
while read -r c m g dim e0 e1; do
  [ "$c" = "$case" ] && [ "$m" = "$ms2" ] || continue
  { echo "# $case MS2=$ms2 irrep $g"; echo "0 $e0"; [ -n "${e1:-}" ] && echo "1 $e1"; } > all_$g.ref
  "$cmp" "all.irrep$g.out.h5" "all_$g.ref" 1e-8 || { echo "FAIL: irrep $g"; exit 1; }
  grep -qE "(\($g\)|^irrep $g) +0 +-?[0-9]" all.log || { echo "FAIL: irrep $g not in the table"; exit 1; }
  n=$((n + 1))
done < "$refs"
outs=$(ls all.irrep*.out.h5 | wc -l)
[ $n -gt 0 ] && [ "$outs" -eq $n ] || { echo "FAIL: $outs outputs for $n irreps"; exit 1; }
echo "ok: --irrep all gave the $n irreps of $case at MS2=$ms2 with PySCF's energies"
