#!/usr/bin/env bash
# Our products in two builds, back to back on one device: every kernel of ours that both builds'
# spmv_bench time (the single-vector kernel, the multi-vector kernel at k = 4 and 8, each layout
# the benchmark uploads), per vector, on the paper's 32K matrix, the 1M-row matrix, H2O/6-31G
# CISDT and FCI. Each case runs the old build, the new, the old and the new again; each build's
# time is the lower of its two runs (the benchmark's own figures are medians of many products).
# Prints, per case, the mean and worst new/old ratio and the plain "ours" rows, and writes
# OUT/compare.csv (case,kernel,old_ms,new_ms,new_over_old) and the benchmark's output, all runs,
# to OUT/compare.log. CASES (default "paper 1M cisdt fci") picks cases.
# usage: bench/compare_products.sh OLD_BUILD NEW_BUILD   (build folders holding bench/spmv_bench)
set -u
old=$1 new=$2 out=${OUT:-bench-out}
mkdir -p "$out"
cases=(
  "paper|"
  "1M|--rows 1048576 --ref-cols 104857 --reps 20"
  "cisdt|--fcidump tests/data/h2o_631g_cisdt.fcidump --level 3"
  "fci|--fcidump bench/data/h2o_631g_c1.fcidump --reps 10"
)
# ms per vector of a row of the benchmark's table: | name | format | MB | median | per vector |
per_vector() { awk -F'|' -v want="$2" '{ n = $2; gsub(/^ +| +$/, "", n); if (n == want) { print $6 + 0; exit } }' "$1"; }
echo "case,kernel,old_ms,new_ms,new_over_old" > "$out/compare.csv"
want=" ${CASES:-paper 1M cisdt fci} "
: > "$out/compare.log"
for c in "${cases[@]}"; do
  name=${c%%|*} args=${c#*|}
  case $want in *" $name "*) ;; *) continue ;; esac
  for run in 1 2; do
    for b in old new; do
      eval dir=\$$b
      # shellcheck disable=SC2086
      t0=$(date +%s)
      timeout 240 "$dir/bench/spmv_bench" $args --md "$out/$name.$b.$run.md" > "$out/run.log" 2>&1
      rc=$?
      { echo "=== $name $b run $run: exit $rc, $(( $(date +%s) - t0 )) s"; cat "$out/run.log"; } >> "$out/compare.log"
      [ $rc = 0 ] || echo "$name $b run $run: exit $rc" >&2
    done
  done
  # every row of ours that both builds timed: the lower of each build's two runs
  for f in "$out/$name".*.md; do
    awk -F'|' -v f="${f##*/}" '{ n = $2; gsub(/^ +| +$/, "", n); if (n ~ /^ours/ && $6 + 0 > 0) print f "|" n "|" $6 + 0 }' "$f"
  done | awk -F'|' -v c="$name" '
    { split($1, p, "."); b = p[2]; k = $2; v = $3
      if (!((b, k) in best) || v < best[b, k]) best[b, k] = v; names[k] = 1 }
    END { for (k in names) if ((("old", k) in best) && (("new", k) in best))
            printf "%s,\"%s\",%g,%g,%.3f\n", c, k, best["old", k], best["new", k],
                   best["new", k] / best["old", k] }' | sort > "$out/rows.csv"
  cat "$out/rows.csv" >> "$out/compare.csv"
  awk -F, -v c="$name" '{ r = $NF + 0; if (r > m) m = r; s += r; n++ }
    END { if (n) printf "%-6s %d kernels timed by both builds: new/old mean %.3f, worst %.3f\n", c, n, s / n, m;
          else printf "%-6s no kernel timed by both builds\n", c }' "$out/rows.csv"
  grep -E '^[^,]*,"ours(, multi-vector k=8, one pass)?",' "$out/rows.csv" || true
  mkdir -p "$out/md" && mv "$out/$name".*.md "$out/md/" 2>/dev/null
done
rm -f "$out/run.log" "$out/rows.csv"
