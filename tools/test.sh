#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine (what CI runs):
# installs what is missing, builds with -Werror, runs every CTest test (unit,
# end-to-end, conformance against PyTorch, the packer benchmark set, the
# Cortex-M and aarch64 cross builds under QEMU, the no-heap and code-size
# checks), then the pipelined stress test and the intra-node thread tests again under ThreadSanitizer, then
# the host tests again under AddressSanitizer + UndefinedBehaviorSanitizer
# (clang-14), then each libFuzzer target (tests/fuzz) for FUZZ_SECONDS
# (default 30) seconds; docs/fuzzing.md says what the sanitized pass skips
# and why. SANITIZE=0 leaves out the sanitized pass and the fuzzing (a
# quicker local run). Each phase's wall and CPU time is printed at the end:
# CI's budget is 40 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${BUILD:-$ROOT/build-ci}
JOBS=${JOBS:-$(nproc)}
FUZZ_SECONDS=${FUZZ_SECONDS:-30}
SANITIZE=${SANITIZE:-1}

# Per-phase wall and CPU time (user+sys of everything the phase ran), printed
# as each phase ends and as a table at the end: CI's budget is 40 minutes on
# 2 cores, and CPU time is the number that does not depend on the machine's load.
TIMES_FILE=$(mktemp)
PHASE="" PHASE_WALL=0 PHASE_CPU=0 PHASE_TABLE=""
# `times` must run in this shell (not in a $(...) subshell, whose children
# are its own), so cpu_now leaves its answer in CPU_NOW.
cpu_now() {
  times > "$TIMES_FILE"
  CPU_NOW=$(awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/);
                           printf "%.0f", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$TIMES_FILE")
}
phase() {
  local wall cpu
  wall=$(date +%s)
  cpu_now
  cpu=$CPU_NOW
  if [ -n "$PHASE" ]; then
    local line
    line=$(printf '%-44s %6ss wall %6ss CPU' "$PHASE" $((wall - PHASE_WALL)) $((cpu - PHASE_CPU)))
    echo "-- $line"
    PHASE_TABLE+="$line"$'\n'
  fi
  PHASE=$1 PHASE_WALL=$wall PHASE_CPU=$cpu
  [ -n "$PHASE" ] && echo "== $PHASE =="
  return 0
}
START_WALL=$(date +%s)

phase "install dependencies"
tools/install_deps.sh

phase "build (Release, -Werror)"
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DBATON_WERROR=ON
cmake --build "$BUILD" -j"$JOBS"

phase "ctest (Release)"
ctest --test-dir "$BUILD" -j"$JOBS" --output-on-failure --timeout 1500

phase "ThreadSanitizer: build, Executor.*, Parallel.*"
# The sanitized builds keep line tables only (-g1, clang's -gline-tables-only):
# reports still name file and line, and the builds are about a tenth faster.
cmake -S . -B "$BUILD-tsan" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBATON_SANITIZE=thread \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DBATON_WERROR=ON > /dev/null
cmake --build "$BUILD-tsan" -j"$JOBS" --target baton_runtime_tests baton_runtime_only_tests
TSAN_OPTIONS="halt_on_error=1" "$BUILD-tsan/tests/baton_runtime_tests" \
  --gtest_filter='Executor.*' --gtest_brief=1
# Intra-node threads (issue 17): the Linux WorkerPool and every split kernel.
TSAN_OPTIONS="halt_on_error=1" "$BUILD-tsan/tests/baton_runtime_only_tests" \
  --gtest_filter='Parallel.*' --gtest_brief=1
echo "tsan: passed"

finish() {
  phase ""
  cpu_now
  rm -f "$TIMES_FILE"
  echo "== time per phase (total $(( $(date +%s) - START_WALL ))s wall, ${CPU_NOW}s CPU) =="
  printf '%s' "$PHASE_TABLE"
}
if [ "$SANITIZE" != 1 ]; then
  echo "(SANITIZE=0: no ASan+UBSan pass, no fuzzing)"
  finish
  exit 0
fi
# CI's budget is 40 minutes on 2 cores; the sanitized build, ctest and
# fuzzing take about 16-18 of them there (2026-11-26: 1059 s wall, 34
# CPU-minutes, on a loaded machine). On a
# machine so slow that the passes above already took SANITIZE_BY_MIN
# minutes, they are skipped with a loud note instead of running CI past its
# budget; SANITIZE_BY_MIN=0 never skips.
SANITIZE_BY_MIN=${SANITIZE_BY_MIN:-21}
elapsed_min=$(( ($(date +%s) - START_WALL) / 60 ))
if [ "$SANITIZE_BY_MIN" != 0 ] && [ "$elapsed_min" -ge "$SANITIZE_BY_MIN" ]; then
  echo "!! ASan+UBSan pass and fuzzing SKIPPED: the Release and TSan passes took" \
       "${elapsed_min} min (>= SANITIZE_BY_MIN=${SANITIZE_BY_MIN}); CI's budget is 40 min"
  finish
  exit 0
fi

phase "ASan+UBSan: build (clang-14)"
# One build serves both: BATON_FUZZ=ON adds libFuzzer's coverage
# instrumentation and the targets in tests/fuzz. Benchmarks are not built
# under sanitizers. Skipped here, each having run above in Release:
#   cross.*                the cross builds' tests (other compilers, QEMU);
#   plans_unchanged        compares plan bytes of gcc's Release planner;
#   Pack.*InSeconds, the MiniMalloc time limits: assert speed, which the
#                          sanitizers divide by 2-10;
#   *Heavy.*, Torchvision/ whole torchvision models (vit_b_16, convnext,
#                          swin, ...): the same importer, planner and kernel
#                          code the small conformance and unit tests run,
#                          on inputs that would take this pass past CI's
#                          budget (docs/fuzzing.md).
#   BigGraph.*             --auto on 500 nodes (63 s sanitized); the search
#                          runs sanitized in the smaller --auto tests.
#   ort.matches_torch      ONNX Runtime against torch: runs no Baton code.
#   example.detection      ssdlite320 end to end (a minute of torch export, then
#                          the same kernels, planner and post-processing code the
#                          unit tests and PostprocessPlan.* run sanitized).
cmake -S . -B "$BUILD-asan" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG" \
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
  -DBATON_SANITIZE=address,undefined -DBATON_FUZZ=ON -DBATON_WERROR=ON > /dev/null
cmake --build "$BUILD-asan" -j"$JOBS"
phase "ASan+UBSan: ctest"
# The generated inputs are the Release pass's: make_quant_models.py (torch and
# ONNX Runtime, a minute of python that runs no Baton code) and make_refs.py
# keep a directory whose recorded script hash matches, so these copies make
# the sanitized pass skip regenerating them.
for generated in quant_models tests/kernels/refs; do
  if [ -d "$BUILD/$generated" ]; then
    rm -rf "${BUILD:?}-asan/$generated"
    mkdir -p "$(dirname "$BUILD-asan/$generated")"
    cp -r "$BUILD/$generated" "$BUILD-asan/$generated"
  fi
done
ASAN_OPTIONS="abort_on_error=1:detect_leaks=1" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
  ctest --test-dir "$BUILD-asan" -j"$JOBS" --output-on-failure --timeout 1500 \
  -E '^cross[.]|Heavy[.]|^Torchvision/|^BigGraph[.]|^planner[.]plans_unchanged$|^ort[.]matches_torch$|^example[.]detection$|^Pack[.]TenThousandBuffersInSeconds$|^Challenging/MiniMalloc[.]'
echo "asan+ubsan: passed"

phase "fuzzing: each target ${FUZZ_SECONDS}s"
tests/fuzz/run_fuzzers.sh "$BUILD-asan" "$FUZZ_SECONDS" "$JOBS"
echo "fuzz: passed"
finish
