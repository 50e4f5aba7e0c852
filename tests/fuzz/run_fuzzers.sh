#!/usr/bin/env bash
# Runs every libFuzzer target of a BATON_FUZZ=ON build for a bounded time
# (docs/fuzzing.md). Fails when any target crashes, leaks, times out or
# reports a sanitizer error; the input that did it is left in
# BUILD/fuzz/artifacts/<target>/ and its libFuzzer log in BUILD/fuzz/logs/.
#
# usage: run_fuzzers.sh BUILD SECONDS [PARALLEL [TARGET...]]
#   SECONDS   -max_total_time of each target
#   PARALLEL  targets run at once (default 1); each is one process
# Each run starts from a copy of the seeds (BUILD/fuzz/seeds/<target>) and
# the committed regressions (tests/fuzz/regressions/<target>), so the seed
# folders stay as the build made them. FUZZ_SEED (default 1) fixes libFuzzer's
# seed, so that a CI run explores the same inputs first every time. The last line per target gives
# libFuzzer's figures: executions, coverage (cov: edges, ft: features).
set -euo pipefail
BUILD=$(realpath "$1")
SECONDS_EACH=$2
PARALLEL=${3:-1}
shift $(( $# < 3 ? $# : 3 ))
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
  TARGETS=(fuzz_plan fuzz_plan_checked fuzz_onnx fuzz_graph_json fuzz_target_json fuzz_npy)
fi
FUZZ=$BUILD/fuzz
mkdir -p "$FUZZ/logs" "$FUZZ/corpus" "$FUZZ/artifacts"

run_one() {
  local t=$1
  local corpus=$FUZZ/corpus/$t art=$FUZZ/artifacts/$t/ log=$FUZZ/logs/$t.log
  rm -rf "$corpus" "$art"
  mkdir -p "$corpus" "$art"
  local dirs=("$FUZZ/seeds/$t")
  [ -d "$ROOT/tests/fuzz/regressions/$t" ] && dirs+=("$ROOT/tests/fuzz/regressions/$t")
  # Memory-hungry targets (ONNX shape inference) get libFuzzer's default
  # 2 GB RSS limit; -timeout catches inputs that hang the runtime.
  if ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
      "$FUZZ/bin/$t" -max_total_time="$SECONDS_EACH" -timeout=25 -seed="${FUZZ_SEED:-1}" \
      -print_final_stats=1 -artifact_prefix="$art" "$corpus" "${dirs[@]}" > "$log" 2>&1; then
    echo "fuzz: $t: ok: $(grep -E '^#[0-9]+' "$log" | tail -1 | cut -c1-100)"
    grep -E '^stat::number_of_executed_units' "$log" | sed "s/^/fuzz: $t: /" || true
  else
    echo "fuzz: $t: FAILED (log $log, inputs in $art):"
    grep -E 'ERROR|==[0-9]+==|runtime error|deadly signal|timeout' "$log" | head -20
    return 1
  fi
}
export -f run_one
export FUZZ ROOT SECONDS_EACH

status=0
printf '%s\n' "${TARGETS[@]}" | xargs -P "$PARALLEL" -I{} bash -c 'run_one "$@"' _ {} || status=1
exit $status
