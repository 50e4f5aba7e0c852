#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine: installs what is
# missing, builds with -Werror, runs every CTest test (unit, end-to-end,
# conformance against PyTorch, the packer benchmark set, the Cortex-M and
# aarch64 cross builds under QEMU, the no-heap and code-size checks), then
# the pipelined stress test again under ThreadSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${BUILD:-$ROOT/build-ci}
JOBS=${JOBS:-$(nproc)}

tools/install_deps.sh

echo "== build (Release, -Werror) =="
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DBATON_WERROR=ON
cmake --build "$BUILD" -j"$JOBS"

echo "== ctest =="
ctest --test-dir "$BUILD" -j"$JOBS" --output-on-failure --timeout 1500

echo "== ThreadSanitizer: runtime, Linux port and the pipelined stress test =="
cmake -S . -B "$BUILD-tsan" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBATON_SANITIZE=thread \
  -DBATON_WERROR=ON > /dev/null
cmake --build "$BUILD-tsan" -j"$JOBS" --target baton_runtime_tests
TSAN_OPTIONS="halt_on_error=1" "$BUILD-tsan/tests/baton_runtime_tests" \
  --gtest_filter='Executor.*' --gtest_brief=1
echo "tsan: passed"
