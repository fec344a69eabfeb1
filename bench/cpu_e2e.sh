#!/usr/bin/env bash
# End to end on the CPU: cisolve (CPU backend, default memory budget) and PySCF direct_spin1 on
# the same FCIDUMP, on this machine, back to back. Prints a markdown summary (device, commit,
# date, command) on stdout, to record in bench/results/e2e.csv; logs go to OUTDIR.
#
# usage: bench/cpu_e2e.sh BUILD_DIR OUTDIR [FCIDUMP] [NROOTS]
set -euo pipefail
build=$1 out=$2
input=${3:-$(dirname "$0")/data/h2o_631g_c1.fcidump}
nroots=${4:-1}
mkdir -p "$out"
threads=${OMP_NUM_THREADS:-$(nproc)}
export OMP_NUM_THREADS=$threads
commit=$(git -C "$(dirname "$0")" rev-parse HEAD 2>/dev/null || echo unknown)
cpu=$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)
mem=$(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)

/usr/bin/time -v "$build/cisolve" --device cpu --nroots "$nroots" -o "$out/cisolve.out.h5" \
  --checkpoint "$out/cisolve.ckpt.h5" "$input" >"$out/cisolve.log" 2>"$out/cisolve.time"
python3 "$(dirname "$0")/pyscf_fci.py" "$input" "$nroots" >"$out/pyscf.log" 2>&1

wall() { awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s}' "$1"; }
t_cis=$(wall "$out/cisolve.time")
rss=$(awk -F': ' '/Maximum resident/ {printf "%.2f", $2 / 1048576}' "$out/cisolve.time")
t_py=$(awk '/^pyscf_time/ {print $6}' "$out/pyscf.log")
e_cis=$(awk '$1 == "0" && NF >= 5 && $2 ~ /^-/ {print $2; exit}' "$out/cisolve.log")
e_py=$(awk '/^root 0/ {print $3}' "$out/pyscf.log")
build_s=$(sed -n 's/^build *\([0-9.]*\) s.*/\1/p' "$out/cisolve.log")
gen=$(sed -n 's/.*, \([0-9.e+]*\) elements generated/\1/p' "$out/cisolve.log")
mv_line=$(grep '^timings' "$out/cisolve.log")
mv_each=$(sed -n 's/.*matvec [0-9.]* (\([0-9.]*\) ms each).*/\1/p' <<<"$mv_line")
nmv=$(sed -n 's/.* \([0-9]*\) matrix-vector products/\1/p' "$out/cisolve.log")
placement=$(grep '^memory' "$out/cisolve.log" | sed 's/^memory *//')

cat <<EOF2
### CPU end to end: $(basename "$input"), $nroots root(s)

Machine: $cpu, $threads OpenMP threads, $mem. Commit $commit. $(date -u '+%Y-%m-%d %H:%M UTC').

Command: \`OMP_NUM_THREADS=$threads bench/cpu_e2e.sh $build $out $input $nroots\`

| | cisolve (CPU backend) | PySCF direct_spin1 |
|---|---:|---:|
| time to solution (s) | $t_cis | $t_py |
| energy (Eh) | $e_cis | $e_py |
| Hamiltonian build (s) | $build_s | — |
| matrix-vector products | $nmv, $mv_each ms each | — |
| elements generated per second per core (build) | $(awk -v g="$gen" -v t="$build_s" -v n="$threads" 'BEGIN {printf "%.3g", g / t / n}') | — |
| peak memory (GiB) | $rss | — |

Placement: $placement. Ratio cisolve / PySCF time: $(awk -v a="$t_cis" -v b="$t_py" 'BEGIN {printf "%.2f", a / b}').
EOF2
