#!/usr/bin/env bash
# Installs the Debian 12 packages Baton builds and tests with, then ONNX
# Runtime's Node.js binding (tools/ort/install.sh, from the npm registry; the
# ort.* tests and tools/bench_vs_torch.py use it). Installs only what is
# missing, so it is cheap to call before every build.
set -euo pipefail

PACKAGES=(
  build-essential cmake g++ clang
  clang-14 libclang-rt-14-dev  # ASan+UBSan pass, libFuzzer (tests/fuzz)
  libgtest-dev libgmock-dev libbenchmark-dev
  flatbuffers-compiler libflatbuffers-dev
  libonnx-dev libprotobuf-dev protobuf-compiler
  nlohmann-json3-dev libcli11-dev
  gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib qemu-system-arm
  g++-aarch64-linux-gnu qemu-user
  python3-torch python3-torchvision python3-onnx python3-numpy
  graphviz
  libarmnn-dev libarmnn-cpuref-backend22  # ports/linux Arm NN plugin (issue 16)
  nodejs npm  # tools/ort: ONNX Runtime as reference and benchmark peer
)

# A package that counts as present when its command is: a nodejs from another
# apt source (NodeSource) bundles npm and conflicts with Debian's npm package.
declare -A COMMAND_OF=([nodejs]=node [npm]=npm)

missing=()
for p in "${PACKAGES[@]}"; do
  if [ -n "${COMMAND_OF[$p]:-}" ] && command -v "${COMMAND_OF[$p]}" > /dev/null; then
    continue
  fi
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install_deps: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi

# onnxruntime-node into build-ort/ (or $BATON_ORT_DIR); a no-op when present.
"$(dirname "$0")/ort/install.sh"
