#!/usr/bin/env bash
# Line and branch coverage of the runtime (loader, executor, kernels) reached
# by the plan fuzzers' corpora (docs/fuzzing.md). Builds fuzz_plan and
# fuzz_plan_checked with clang's source-based coverage in BUILD (default
# build-cov), replays each corpus once (-runs=0) and prints llvm-cov's report
# for runtime/src.
#
# usage: tools/fuzz_coverage.sh CORPUS_ROOT [BUILD]
#   CORPUS_ROOT  a folder with one sub-folder per target (fuzz_plan/,
#                fuzz_plan_checked/), e.g. build-asan/fuzz/corpus after
#                tests/fuzz/run_fuzzers.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CORPUS=$(realpath "$1")
BUILD=${2:-$ROOT/build-cov}
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
  -DBATON_FUZZ=ON -DBATON_COVERAGE=ON > /dev/null
cmake --build "$BUILD" -j"$(nproc)" --target fuzz_plan fuzz_plan_checked > /dev/null
PROF=$BUILD/coverage
rm -rf "$PROF" && mkdir -p "$PROF"
for t in fuzz_plan fuzz_plan_checked; do
  [ -d "$CORPUS/$t" ] || { echo "fuzz_coverage: no corpus $CORPUS/$t" >&2; exit 1; }
  n=$(find "$CORPUS/$t" -type f | wc -l)
  LLVM_PROFILE_FILE="$PROF/$t.profraw" "$BUILD/fuzz/bin/$t" -runs=0 "$CORPUS/$t" \
    > "$PROF/$t.log" 2>&1
  llvm-profdata-14 merge -sparse "$PROF/$t.profraw" -o "$PROF/$t.profdata"
  echo "== $t: $n corpus inputs =="
  llvm-cov-14 report "$BUILD/fuzz/bin/$t" -instr-profile="$PROF/$t.profdata" \
    "$ROOT/runtime/src" | sed "s#$ROOT/##"
done
