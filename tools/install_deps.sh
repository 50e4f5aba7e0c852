#!/usr/bin/env bash
# Installs the Debian 12 packages Baton builds and tests with. Installs only
# what is missing, so it is cheap to call before every build.
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
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "install_deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
