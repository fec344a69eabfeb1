#!/usr/bin/env bash
# The same problem on one process and on NP ranks: the energies agree to 1e-10 Eh, and with a
# reference (tests/data/*.ref, from PySCF) to 1e-8 Eh; the report says how the rows, and the
# solver's vectors with them, were split.
# usage: ranks.sh MPIRUN CISOLVE CMP_REF SHOW_RESULTS NP REF|- INPUT [cisolve options]
# RANKS_OPTS: options for the NP ranks alone, after the others (on a GPU machine:
# RANKS_OPTS="--device gpu --threads 8", each rank on a GPU against one CPU process).
set -u
MPIRUN=$1 CIS=$2 CMP=$3 SHOW=$4 NP=$5 REF=$6 INPUT=$7; shift 7
. "$(dirname "$0")/common.sh"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
opts=(--device cpu --threads 1 "$@")
"$CIS" "${opts[@]}" -o "$work/one.h5" --checkpoint "$work/one.ckpt.h5" "$INPUT" >"$work/one.log" 2>&1 \
  || fail "one process: $(tail -3 "$work/one.log")"
"$SHOW" "$work/one.h5" >"$work/one.ref"
mpi "$NP" "$CIS" "${opts[@]}" ${RANKS_OPTS:-} -o "$work/np.h5" --checkpoint "$work/np.ckpt.h5" "$INPUT" >"$work/np.log" 2>&1 \
  || fail "$NP ranks exited $?: $(tail -5 "$work/np.log")"
grep -E "^ranks +$NP, rows of H and of the solver's vectors split by nonzeros" "$work/np.log" || fail "the report does not give the ranks"
grep -qE "^ +split by rows over the ranks: rank 0 holds" "$work/np.log" ||
  fail "the report does not say that the solver's vectors are split by rows"
grep -qE "^ranks' times +build [0-9.]+-[0-9.]+ s, upload .* of the $NP ranks\)" "$work/np.log" ||
  fail "the report does not give the ranks' times"
[ "$(grep -c '^results ' "$work/np.log")" -eq 1 ] || fail "not one report (rank 0's)"
"$CMP" "$work/np.h5" "$work/one.ref" 1e-10 || fail "$NP ranks differ from one process"
if [ "$REF" != "-" ]; then "$CMP" "$work/np.h5" "$REF" 1e-8 || fail "$NP ranks differ from the reference"; fi
echo "ok"
