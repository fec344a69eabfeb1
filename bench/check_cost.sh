#!/usr/bin/env bash
# The products the lowest-state check costs (docs/solvers.md, "The lowest states": the counts
# there come from it): H2O/6-31G FCI and CISDT, 1 and 8 roots, with this
# build's cisolve and with another (an older commit, without the check), back to back on one
# machine; the first run is the process's cold start. Run from the repository root.
# usage: bench/check_cost.sh NEW_CISOLVE OLD_CISOLVE [DEVICE]   (DEVICE: gpu (default) or cpu)
set -u
NEW=$1 OLD=$2 DEV=${3:-gpu}
FCI=bench/data/h2o_631g_c1.fcidump CISDT=tests/data/h2o_631g_cisdt.fcidump
run() { # LABEL CISOLVE ARGS...: its products, the check's line and the wall clock
  local label=$1 bin=$2 s e; shift 2
  s=$(date +%s.%N)
  "$bin" --device "$DEV" -o /dev/null "$@" > /tmp/check_cost.log 2>&1
  e=$(date +%s.%N)
  printf '%-14s %s | %s | wall %.2f s\n' "$label" \
    "$(grep -o 'converged after.*' /tmp/check_cost.log)" \
    "$(grep -o 'no lower state ([0-9]* products)\|MISSED STATE.*' /tmp/check_cost.log)" \
    "$(awk "BEGIN {print $e - $s}")"
}
run "new FCI cold" "$NEW" "$FCI"
run "new FCI warm" "$NEW" "$FCI"
for k in 1 8; do
  for which in old new; do
    bin=$NEW; [ $which = old ] && bin=$OLD
    run "$which FCI $k" "$bin" --nroots $k "$FCI"
    run "$which CISDT $k" "$bin" --space cisdt --nroots $k "$CISDT"
  done
done
