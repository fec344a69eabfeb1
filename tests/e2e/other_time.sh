#!/usr/bin/env bash
# The report's "other time" line splits the timings' "other" into its parts: they must add up
# to it (to the printed rounding), and a run that writes a checkpoint every iteration must show
# time spent on checkpoints.
# usage: other_time.sh CISOLVE DEVICE FCIDUMP
set -u
cis=$1 dev=$2 fcidump=$3
dir=$(mktemp -d) && trap 'rm -rf "$dir"' EXIT
"$cis" --device "$dev" --checkpoint-every 1 -o "$dir/out.h5" --checkpoint "$dir/ck.h5" \
  "$fcidump" > "$dir/log" 2>&1 || { echo "FAIL: cisolve exited $?"; cat "$dir/log"; exit 1; }
grep -E '^(timings|other time)' "$dir/log"
awk '
  /^timings/ { for (i = 1; i <= NF; i++) if ($i == "other") other = $(i + 1) + 0; seen_t = 1 }
  /^other time/ {
    line = $0; sub(/\([^)]*\)/, "", line)
    n = split(line, f, /[ ,]+/)
    for (i = 1; i < n; i++) if (f[i + 1] ~ /^[0-9]+\.[0-9]+$/) { sum += f[i + 1]; parts++ }
    for (i = 1; i < n; i++) if (f[i] == "checkpoints") ckpt = f[i + 1] + 0
    seen_o = 1
  }
  END {
    if (!seen_t || !seen_o) { print "FAIL: no timings or other time line"; exit 1 }
    if (parts != 6) { print "FAIL: " parts " parts in the other time line, expected 6"; exit 1 }
    d = sum - other; if (d < 0) d = -d
    if (d > 0.0035 + 1e-9) { printf "FAIL: parts add up to %.3f, other is %.3f\n", sum, other; exit 1 }
    if (ckpt <= 0) { print "FAIL: checkpoints every iteration but no checkpoint time"; exit 1 }
    printf "ok: the 6 parts add up to %.3f (other %.3f); checkpoints %.3f s\n", sum, other, ckpt
  }' "$dir/log"
