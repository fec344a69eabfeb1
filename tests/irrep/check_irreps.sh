#!/usr/bin/env bash
# usage: check_irreps.sh CISOLVE CMP_REF REFS CASE MS2 FCIDUMP [cisolve options...]
# For every line "CASE MS2 IRREP DIM E0 [E1]" of REFS (make_irrep_refs.py: PySCF
# direct_spin1_symm), runs cisolve --irrep IRREP --ms2 MS2 on FCIDUMP in the current directory
# and requires: exit 0, the space's determinant count DIM, and the energies to 1e-8 Eh (cmp_ref).
set -u
cis=$1; cmp=$2; refs=$3; case=$4; ms2=$5; input=$6; shift 6
n=0
while read -r c m g dim e0 e1; do
  [ "$c" = "$case" ] && [ "$m" = "$ms2" ] || continue
  roots=1; [ -n "${e1:-}" ] && roots=2
  tag="${case}_${ms2}_${g}"
  { echo "# $case MS2=$ms2 irrep $g"; echo "0 $e0"; [ $roots = 2 ] && echo "1 $e1"; } > "$tag.ref"
  rm -f "$tag.out.h5"
  "$cis" --irrep "$g" --ms2 "$ms2" --nroots $roots -o "$tag.out.h5" --checkpoint "$tag.ckpt.h5" \
    "$@" "$input" > "$tag.log" 2>&1
  rc=$?
  if [ $rc -ne 0 ]; then echo "FAIL: irrep $g: cisolve exited $rc"; cat "$tag.log"; exit 1; fi
  if ! grep -q "^space  *[A-Za-z]*, $dim determinants" "$tag.log"; then
    echo "FAIL: irrep $g: expected $dim determinants (PySCF)"; grep "^space" "$tag.log"; exit 1
  fi
  "$cmp" "$tag.out.h5" "$tag.ref" 1e-8 || { echo "FAIL: irrep $g energies"; exit 1; }
  n=$((n + 1))
done < "$refs"
[ $n -gt 0 ] || { echo "FAIL: no reference line for $case MS2=$ms2 in $refs"; exit 1; }
echo "ok: $n irreps of $case at MS2=$ms2 equal PySCF's energies and dimensions"
