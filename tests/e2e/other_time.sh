#!/usr/bin/env bash
# The report's "other time" line splits the timings' "other" into its parts: they must add up
# to it (to the printed rounding), and a run that writes a checkpoint every iteration must show
# time spent on checkpoints. On a GPU, the "gpu upload" line's parts must fit in its total and
# the total in the timings' upload, which is measured apart.
# usage: other_time.sh CISOLVE DEVICE FCIDUMP
set -u
cis=$1 dev=$2 fcidump=$3
dir=$(mktemp -d) && trap 'rm -rf "$dir"' EXIT
"$cis" --device "$dev" --checkpoint-every 1 -o "$dir/out.h5" --checkpoint "$dir/ck.h5" \
  "$fcidump" > "$dir/log" 2>&1 || { echo "FAIL: cisolve exited $?"; cat "$dir/log"; exit 1; }
grep -E '^(timings|other time|gpu upload)' "$dir/log"
awk '
  /^timings/ {
    for (i = 1; i <= NF; i++) if ($i == "other") other = $(i + 1) + 0
    for (i = 1; i <= NF; i++) if ($i == "upload") upload = $(i + 1) + 0
    seen_t = 1
  }
  /^gpu upload/ {
    line = $0; gsub(/[(),:]/, " ", line)
    n = split(line, f, / +/)
    gtotal = f[3] + 0
    for (i = 1; i < n; i++) {
      if (f[i] == "ELL") gell = f[i + 1] + 0
      if (f[i] == "counts") gdict = f[i + 1] + 0
      if (f[i] == "rows") grows = f[i + 1] + 0
      if (f[i] == "staging") gsplit = f[i + 1] + 0
      if (f[i] == "copies") gwait = f[i + 1] + 0
      if (f[i] == "timing") gtune = f[i + 1] + 0
      if (f[i] == "rest") grest = f[i + 1] + 0
    }
    seen_g = 1
  }
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
    if (!seen_g) { print "no gpu upload line (not a GPU run)"; exit 0 }
    if (grest < -0.0005 || gsplit + gwait > grows + 0.0015 || gtotal > upload + 0.0015 ||
        gell + gdict + grows + gtune > gtotal + 0.002) {
      printf "FAIL: gpu upload %.3f (ELL %.3f, dictionary %.3f, rows %.3f = split %.3f + wait %.3f + ..., timing %.3f, rest %.3f) against the timings upload %.3f\n", gtotal, gell, gdict, grows, gsplit, gwait, gtune, grest, upload
      exit 1
    }
    printf "ok: gpu upload %.3f s within the timings upload %.3f s, its parts within it\n", gtotal, upload
  }' "$dir/log"
