#!/usr/bin/env bash
# usage: dry_run_gpu.sh CISOLVE INPUT [OPTIONS...]
#
# The GPU plan of --dry-run against the placement the run reports with the same options: the
# resident Expansion blocks (within two blocks, or 5% of them: the plan takes every block as
# the mean block), the columns' bits, coded values or plain, the build's pool (blocks sent to
# the GPU as they are built), whether the blocks that are not resident are generated on the GPU
# and whether the run chose the layout the plan named (SELL-32 is
# decided at upload on its padding: the plan names it a candidate, and the run must use SELL-32
# or the hybrid layout the plan names beside it). First, --matrix-free auto's choice: the plan and
# the run must choose alike, and a run that chose it must generate its rows on the GPU (nothing
# placed: the checks above do not apply). Exit 77 (skipped) when no GPU is usable.
set -u
cis=$1 in=$2
shift 2
dir=$(mktemp -d) && trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; cat "$dir/dry.log" "$dir/run.log"; exit 1; }
(cd "$dir" && "$cis" --device gpu --max-iter 2 --dry-run "$@" "$in") >"$dir/dry.log" 2>&1 ||
  fail "dry run exited $?"
if ! grep -q '^device *GPU' "$dir/dry.log"; then
  echo "SKIPPED: no usable CUDA device"
  exit 77
fi
"$cis" --device gpu --max-iter 2 -o /dev/null --checkpoint "$dir/ck.h5" "$@" "$in" >"$dir/run.log" 2>&1
rc=$?
[ $rc -eq 0 ] || [ $rc -eq 2 ] || fail "run exited $rc"

pm=$(grep -m1 -oE '^matrix-free +(not )?chosen' "$dir/dry.log")
rm=$(grep -m1 -oE '^matrix-free +(not )?chosen' "$dir/run.log")
[ "$pm" = "$rm" ] || fail "--matrix-free auto: plan '$pm', run '$rm'"
if grep -qE '^matrix-free +chosen' <<<"$pm"; then
  grep -q '^gpu matrix-free' "$dir/run.log" || fail "matrix-free chosen, but the run did not say so"
  echo "ok: --matrix-free auto chose it in the plan and the run, rows generated on the GPU"
  exit 0
fi

# (the run reports its placement after the upload and again with the results: the first)
dp=$(grep -m1 '^gpu placement' "$dir/dry.log") rp=$(grep -m1 '^gpu placement' "$dir/run.log")
dl=$(grep -m1 '^gpu layout *hybrid' "$dir/dry.log")
read -r pr pb < <(sed -nE 's/.*every Expansion block resident \(([0-9]+)\).*/\1 \1/p;
                             s/.* ([0-9]+) of ([0-9]+) Expansion blocks resident.*/\1 \2/p' <<<"$dp")
read -r rr rb < <(sed -nE 's/.*[ (]([0-9]+) of ([0-9]+) (Expansion )?blocks.*/\1 \2/p' <<<"$rp")
[ -n "${pr:-}" ] && [ -n "${rr:-}" ] && [ "$pb" = "$rb" ] || fail "blocks: plan '$dp', run '$rp'"
awk -v p="$pr" -v r="$rr" -v b="$rb" 'BEGIN { d = p - r; if (d < 0) d = -d;
  t = 0.05 * b; if (t < 2) t = 2; exit !(d <= t) }' || fail "resident blocks: plan $pr, run $rr of $rb"
echo "ok: resident blocks: plan $pr, run $rr of $rb"

pcoded=$(grep -c 'coded values:' <<<"$dl")
rcoded=$(grep -m1 -c '^gpu coded values' "$dir/run.log")
[ "$pcoded" = "$rcoded" ] || fail "coded values: plan $pcoded, run $rcoded"
ppool=$(grep -c 'as the build generates them' <<<"$dp") rpool=$(grep -c 'as the host built them' <<<"$rp")
[ "$ppool" = "$rpool" ] || fail "the build's pool: plan $ppool, run $rpool"
pgen=$(grep -c 'generated on the GPU in every product' <<<"$dp")
rgen=$(grep -c 'generated on the GPU in every product' <<<"$rp")
[ "$pgen" = "$rgen" ] || fail "blocks generated on the GPU: plan $pgen, run $rgen"
echo "ok: coded values $pcoded/$rcoded, the build's pool $ppool/$rpool, generated on the GPU $pgen/$rgen"

if grep -q 'SELL-32' <<<"$rp"; then
  grep -q '^gpu layout *SELL-32' "$dir/dry.log" || fail "the run used SELL-32, the plan did not name it"
  echo "ok: SELL-32, a candidate in the plan"
else
  pe=$(sed -nE 's/.*Reference ELL.* with ([0-9]+)-bit columns;.*/\1/p' <<<"$dl")
  pc=$(sed -nE 's/.*Expansion CSR with ([0-9]+)-bit columns.*/\1/p' <<<"$dl")
  re=$(sed -nE 's/.*resident \(([0-9]+)-bit columns.*/\1/p' <<<"$rp")
  rc2=$(sed -nE 's/.*cached on the GPU \(([0-9]+)-bit columns.*/\1/p' <<<"$rp")
  [ "$pe/$pc" = "$re/$rc2" ] || fail "column bits: plan $pe/$pc, run $re/$rc2"
  ptiled=$(grep -c 'in tiles of' <<<"$dl") rtiled=$(grep -c 'in tiles of' <<<"$rp")
  [ "$ptiled" = "$rtiled" ] || fail "column tiles: plan $ptiled, run $rtiled"
  echo "ok: hybrid layout, ELL/CSR columns $pe/$pc bits, tiles $ptiled"
fi
