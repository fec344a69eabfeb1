#!/usr/bin/env bash
# --dry-run against the real run with the same options: the plan's determinant count equals the
# run's; its nonzero count equals the run's where the plan says it counted them (an explicit
# matrix, a space of at most 16384 determinants) and is within TOL percent of it where it
# estimated them; it writes nothing (it runs in an empty directory, where the default output
# and checkpoint would go) and builds nothing (with a progress line forced for every block, a
# build prints progress lines: the dry run must print none).
# usage: dry_run.sh CISOLVE TOL INPUT [cisolve options...]
set -u
cis=$1 tol=$2 input=$3
shift 3
dir=$(mktemp -d) && trap 'rm -rf "$dir"' EXIT
mkdir "$dir/dry" "$dir/run"
fail() { echo "FAIL: $*"; cat "$dir"/*.log; exit 1; }

(cd "$dir/dry" && CISOLVE_PROGRESS_INTERVAL=0 "$cis" --dry-run "$@" "$input") >"$dir/dry.log" 2>&1 ||
  fail "the dry run exited $?"
[ -z "$(ls -A "$dir/dry")" ] || fail "the dry run wrote $(ls -A "$dir/dry")"
grep -q '^progress' "$dir/dry.log" && fail "the dry run printed build progress"
grep -q '^dry run' "$dir/dry.log" || fail "no plan printed"

(cd "$dir/run" && "$cis" --max-iter 1 -o /dev/null "$@" "$input") >"$dir/run.log" 2>&1
rc=$?
[ $rc -eq 0 ] || [ $rc -eq 2 ] || fail "the real run exited $rc"

# determinants: "space  FCI, N determinants" / "space  explicit matrix, n = N"; the run's report
# says "space ..., N determinants" or "problem  explicit symmetric matrix, n = N"
ndry=$(sed -nE 's/^space .*(, | n = )([0-9]+)( determinants)?$/\2/p' "$dir/dry.log")
nrun=$(sed -nE 's/^space .*, ([0-9]+) determinants$/\1/p; s/^problem .*, n = ([0-9]+),.*/\1/p' "$dir/run.log")
[ -n "$ndry" ] && [ "$ndry" = "$nrun" ] || fail "determinants: plan '$ndry', run '$nrun'"

# nonzeros: "nonzeros  [about ]X (...)"
zdry=$(sed -nE 's/^nonzeros +(about )?([0-9.e+]+) .*/\2/p' "$dir/dry.log")
zrun=$(sed -nE 's/^nonzeros +([0-9]+) .*/\1/p' "$dir/run.log")
[ -n "$zdry" ] && [ -n "$zrun" ] || fail "no nonzeros line"
if grep -qE '^nonzeros .*counted' "$dir/dry.log"; then
  [ "$zdry" = "$zrun" ] || fail "nonzeros counted: plan $zdry, run $zrun"
  echo "ok: $ndry determinants, $zdry nonzeros counted, as the run's; nothing written or built"
else
  awk -v d="$zdry" -v r="$zrun" -v t="$tol" 'BEGIN {
        e = 100 * (d - r) / r; if (e < 0) e = -e
        printf "nonzeros estimated %.6g, run %d: %.3f%% off (tolerance %s%%)\n", d, r, e, t
        exit !(e <= t) }' || fail "the estimate is off by more than $tol%"
  echo "ok: $ndry determinants as the run's; nothing written or built"
fi
