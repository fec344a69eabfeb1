#!/usr/bin/env bash
# One GPU session: the GPU test, the test under compute-sanitizer (memcheck, initcheck), and
# the SpMV benchmark on the paper's matrix and on the 1M-row matrix. Run from the repository
# root with a CUDA build in BUILD (default build-gpu) and, where the GPU machine lacks them, the
# host libraries packed by device-bundle.sh in .device/libs.tgz. Logs and the benchmark's
# markdown go to OUT (default ./bench-out).
# usage: bench/run_device.sh COMMIT
set -u
commit=${1:-unknown}
build=${BUILD:-build-gpu}
out=${OUT:-bench-out}
mkdir -p "$out"
. "$(dirname "$0")/device_libs.sh"
nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm,clocks.mem --format=csv \
  | tee "$out/smi.txt"

"$build/tests/gpu/test_gpu" > "$out/test_gpu.log" 2>&1
echo "test_gpu exit $?"; grep -E "FAIL|passed|SKIPPED|sub-warps" "$out/test_gpu.log"

"$build/bench/spmv_bench" --commit "$commit" --md "$out/bench_paper.md" \
  > "$out/bench_paper.log" 2>&1
echo "spmv_bench (paper matrix) exit $?"; cat "$out/bench_paper.log"

"$build/bench/spmv_bench" --rows 1048576 --ref-cols 104857 --reps 20 --commit "$commit" \
  --md "$out/bench_large.md" > "$out/bench_large.log" 2>&1
echo "spmv_bench (1M rows) exit $?"; cat "$out/bench_large.log"

for tool in memcheck initcheck; do
  CISOLVE_GPU_TEST_SMALL=1 timeout 150 compute-sanitizer --tool "$tool" \
    "$build/tests/gpu/test_gpu" > "$out/sanitizer_$tool.log" 2>&1
  echo "compute-sanitizer $tool exit $?"; grep -E "ERROR SUMMARY|FAIL|passed" "$out/sanitizer_$tool.log"
done
