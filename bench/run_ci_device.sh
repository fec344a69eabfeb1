#!/usr/bin/env bash
# GPU sessions for the CI-matrix benchmarks and the placement tests (docs/BENCHMARKS.md).
# Run from the repository root with a CUDA build in BUILD (default build-gpu2; for the `e2e`
# and `cpu` phases the binaries may instead sit in .device/bin) and, where the GPU machine lacks
# them, the host libraries packed by device-bundle.sh in .device/libs.tgz; `e2e` needs PySCF
# unpacked from .whl/pyscf_slim.tgz. Output under OUT.
#
# usage: bench/run_ci_device.sh check COMMIT   GPU tests (ctest -L gpu), compute-sanitizer on
#                                              the streamed path, SpMV on the paper's matrix, on
#                                              H2O/6-31G CISDT and on H2O/6-31G FCI
#        bench/run_ci_device.sh e2e            cisolve --device gpu (its default placement: no
#                                              host copy when the GPU holds the matrix) and
#                                              PySCF, 1 and 8 roots
#        bench/run_ci_device.sh cpu [MAXIT8]   cisolve --device cpu, 1 root; 8 roots capped at
#                                              MAXIT8 iterations (default 4)
#        bench/run_ci_device.sh stream COMMIT  SpMV on H2O FCI and CISDT with the symmetric half
#                                              and streamed products; cisolve --device gpu with
#                                              --gpu-mem 4G (most of the matrix streamed)
set -u
phase=${1:?phase}
commit=${2:-unknown}
build=${BUILD:-build-gpu2}
out=${OUT:-bench-out}
threads=${THREADS:-16}
fci=bench/data/h2o_631g_c1.fcidump
mkdir -p "$out"
. "$(dirname "$0")/device_libs.sh"
bin=$build
[ -x "$bin/cisolve" ] || bin=.device/bin
cis=$bin/cisolve
cmp=$bin/tests/tools/cmp_ref
[ -x "$cmp" ] || cmp=$bin/cmp_ref
log=$out/$phase.log
say() { echo "$@" | tee -a "$log"; }

case $phase in
check)
  nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm,clocks.mem --format=csv \
    | tee -a "$log"
  say "host: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB"
  # ctest's files name the build folder by its path on the build machine.
  src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
  if [ -n "$src" ] && [ "$src" != "$PWD" ] && [ ! -e "$src" ]; then
    mkdir -p "$(dirname "$src")" && ln -s "$PWD" "$src"
  fi
  (cd "$src/$build" && timeout 420 ctest -L gpu --output-on-failure) >> "$log" 2>&1
  say "ctest -L gpu exit $?"
  CISOLVE_GPU_TEST_SMALL=1 timeout 150 compute-sanitizer --tool memcheck \
    "$build/tests/gpu/test_gpu" > "$out/sanitizer.log" 2>&1
  say "compute-sanitizer memcheck test_gpu exit $?"
  timeout 150 compute-sanitizer --tool memcheck "$cis" --device gpu --threads 4 --gpu-mem 24M \
    --mem 2M --space cisdt --output /tmp/san.h5 tests/data/h2o_631g_cisdt.fcidump \
    >> "$out/sanitizer.log" 2>&1
  say "compute-sanitizer memcheck cisolve (streamed, regenerated) exit $?"
  grep -E "ERROR SUMMARY|FAIL|passed|gpu placement" "$out/sanitizer.log" | tee -a "$log"
  timeout 60 "$build/bench/spmv_bench" --commit "$commit" --md "$out/bench_paper.md" >> "$log" 2>&1
  say "spmv_bench (paper's matrix) exit $?"
  timeout 90 "$build/bench/spmv_bench" --fcidump tests/data/h2o_631g_cisdt.fcidump --level 3 \
    --commit "$commit" --md "$out/bench_cisdt.md" >> "$log" 2>&1
  say "spmv_bench (H2O CISDT) exit $?"
  OMP_NUM_THREADS=$threads timeout 420 "$build/bench/spmv_bench" --fcidump "$fci" --reps 20 \
    --commit "$commit" --md "$out/bench_fci.md" >> "$log" 2>&1
  say "spmv_bench (H2O FCI) exit $?"
  ;;
e2e)
  # PySCF 2.14.0 from its wheel, less the DFT/PBC libraries that FCI does not load
  # (.whl/pyscf_slim.tgz); numpy and scipy are the machine's.
  mkdir -p /tmp/site && tar xzf .whl/pyscf_slim.tgz -C /tmp/site && export PYTHONPATH=/tmp/site
  for k in 1 8; do
    t0=$(date +%s.%N)
    "$cis" --device gpu --threads "$threads" --nroots $k \
      --output /tmp/gpu_$k.h5 "$fci" > "$out/gpu_$k.log" 2>&1
    rc=$?
    say "cisolve --device gpu --nroots $k exit $rc, $(awk "BEGIN {print $(date +%s.%N) - $t0}") s wall"
    grep -E "^(space|nonzeros|memory|build|device|gpu |timings|other time|peak)" \
      "$out/gpu_$k.log" | tee -a "$log"
    "$cmp" /tmp/gpu_$k.h5 bench/data/h2o_631g_c1.ref 1e-8 | tee -a "$log"
    OMP_NUM_THREADS=$threads PYTHONUNBUFFERED=1 timeout 300 python3 bench/pyscf_fci.py "$fci" $k \
      > "$out/pyscf_$k.log" 2>&1
    say "pyscf --nroots $k exit $?"
    tail -n $((k + 2)) "$out/pyscf_$k.log" | tee -a "$log"
  done
  ;;
cpu)
  for k in 1 8; do
    extra=""
    [ $k -gt 1 ] && extra="--max-iter ${2:-4}"
    t0=$(date +%s.%N)
    "$cis" --device cpu --threads "$threads" --mem 100G --nroots $k $extra \
      --output /tmp/cpu_$k.h5 "$fci" > "$out/cpu_$k.log" 2>&1
    rc=$?
    say "cisolve --device cpu --nroots $k $extra exit $rc, $(awk "BEGIN {print $(date +%s.%N) - $t0}") s wall"
    grep -E "^(space|nonzeros|memory|build|device|timings|other time|peak)|after" "$out/cpu_$k.log" \
      | tee -a "$log"
  done
  ;;
stream)
  OMP_NUM_THREADS=$threads timeout 300 "$build/bench/spmv_bench" --fcidump "$fci" --reps 20 \
    --stream 1 --commit "$commit" --md "$out/bench_fci_stream.md" >> "$log" 2>&1
  say "spmv_bench (H2O FCI, streamed) exit $?"
  OMP_NUM_THREADS=$threads timeout 90 "$build/bench/spmv_bench" --fcidump \
    tests/data/h2o_631g_cisdt.fcidump --level 3 --stream 1 --commit "$commit" \
    --md "$out/bench_cisdt_stream.md" >> "$log" 2>&1
  say "spmv_bench (H2O CISDT, streamed) exit $?"
  for k in 1 8; do
    t0=$(date +%s.%N)
    timeout 150 "$cis" --device gpu --threads "$threads" --mem 100G --gpu-mem 4G --nroots $k \
      --output /tmp/gpus_$k.h5 "$fci" > "$out/gpu_stream_$k.log" 2>&1
    rc=$?
    say "cisolve --device gpu --gpu-mem 4G --nroots $k exit $rc, $(awk "BEGIN {print $(date +%s.%N) - $t0}") s wall"
    grep -E "^(memory|build|gpu |timings|other time|peak)|after" "$out/gpu_stream_$k.log" | tee -a "$log"
    "$cmp" /tmp/gpus_$k.h5 bench/data/h2o_631g_c1.ref 1e-8 | tee -a "$log"
  done
  ;;
*)
  echo "unknown phase $phase"
  exit 2
  ;;
esac
