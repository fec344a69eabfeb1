#!/usr/bin/env bash
# One GPU-machine session for the acceptance runs and benchmarks of docs/BENCHMARKS.md:
#   part 1: GPU tests (ctest -L gpu), compute-sanitizer, SpMV benchmarks (run_ci_device.sh
#           check), the checkpoint/restart and spin tests with --device gpu;
#   part 3: the row generator from 1 to 16 threads, streamed products (H2O/6-31G FCI);
#   part 2: end to end, H2O/6-31G FCI: cisolve on the GPU and PySCF on the host's cores,
#           1 and 8 roots, back to back.
# Run from the repository root with BUILD (a CUDA build) and .device/libs.tgz (device-bundle.sh)
# and, for part 2, .whl/pyscf_slim.tgz; logs under OUT.
#
# usage: bench/device_session.sh 1|2|3 COMMIT
set -u
part=$1 commit=${2:-unknown}
build=${BUILD:-build-gpu2}
out=${OUT:-bench-out}
mkdir -p "$out"
. "$(dirname "$0")/device_libs.sh"
cis=$build/cisolve cmp=$build/tests/tools/cmp_ref show=$build/tests/tools/show_results
fci=bench/data/h2o_631g_c1.fcidump
log=$out/part$part.log
say() { echo "$@" | tee -a "$log"; }
say "$(date -u '+%F %T UTC') commit $commit, $(nvidia-smi --query-gpu=name --format=csv,noheader), $(nproc) cores"

if [ "$part" = 1 ]; then
  bash bench/run_ci_device.sh check "$commit" >/dev/null 2>&1
  grep -E "exit|ERROR SUMMARY|passed|failed" "$out/check.log" | tee -a "$log"
  # Spin targeting on the GPU: N2/STO-3G singlets and the O2 triplet from the Ms=0 space.
  timeout 60 "$cis" --device gpu --spin 0 --nroots 3 -o /tmp/n2.h5 tests/data/n2_sto3g_singlets.fcidump \
    >"$out/gpu_n2.log" 2>&1 && "$cmp" /tmp/n2.h5 tests/data/n2_sto3g_singlets.ref 1e-8 | tee -a "$log"
  timeout 60 "$cis" --device gpu --spin 1 -o /tmp/o2.h5 tests/data/o2_sto3g_ms0.fcidump \
    >"$out/gpu_o2.log" 2>&1 && "$cmp" /tmp/o2.h5 tests/data/o2_sto3g_triplet.ref 1e-8 | tee -a "$log"
fi

if [ "$part" = 3 ]; then
  # Checkpoint, SIGUSR1 and restart on the GPU backend (same script as the CPU test); a tiny
  # --gpu-mem streams every Expansion block so that an iteration lasts long enough to be signalled.
  timeout 150 bash tests/batch/signal_restart.sh "$cis" "$cmp" "$show" \
    tests/data/oh_631g_doublet.fcidump --device gpu --gpu-mem 24M --mem 2M >"$out/gpu_restart.log" 2>&1
  say "signal_restart on the GPU: exit $? ($(grep -E '^products' "$out/gpu_restart.log"))"
  # The row generator, 1 to 16 threads.
  timeout 200 "$build/bench/rowgen_bench" "$fci" --threads 1,2,4,8,16 --build >"$out/rowgen.md" 2>&1
  say "rowgen_bench exit $?"; tail -12 "$out/rowgen.md" | tee -a "$log"
  # Streamed products (parts timed) and streaming vs cached time to solution.
  bash bench/run_ci_device.sh stream "$commit" >/dev/null 2>&1
  grep -vE "^\s*$" "$out/stream.log" | tail -20 | tee -a "$log"
  timeout 120 "$cis" --device gpu --threads 16 --mem 100G -o /tmp/cached.h5 "$fci" >"$out/gpu_cached_1.log" 2>&1
  say "cached: $(grep -E '^timings' "$out/gpu_cached_1.log")"
fi

if [ "$part" = 2 ]; then
  THREADS=16 bash bench/run_ci_device.sh e2e "$commit" >/dev/null 2>&1
  cat "$out/e2e.log" | tee -a "$log"
  THREADS=16 bash bench/run_ci_device.sh cpu 100 >/dev/null 2>&1
  cat "$out/cpu.log" | tee -a "$log"
  for k in 1 8; do grep -E "^(build|timings|gpu )" "$out/gpu_$k.log" | tee -a "$log"; done
fi
