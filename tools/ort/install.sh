#!/usr/bin/env bash
# Installs ONNX Runtime's Node.js binding (onnxruntime-node, the exact version
# pinned in tools/ort/package.json) for tools/ort/run.js and tools/ort_ref.py.
#
#   tools/ort/install.sh            installs into $ROOT/build-ort
#   BATON_ORT_DIR=DIR tools/ort/install.sh   installs into DIR
#
# Idempotent: when DIR already holds the pinned version it only says where.
# The package's own install script is not run (--ignore-scripts): it fetches
# GPU execution providers from a host outside the npm registry; the CPU
# library (libonnxruntime.so.1) is inside the npm package itself.
# Needs node and npm (Debian: nodejs npm; tools/install_deps.sh installs them
# and then calls this script).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
DIR=${BATON_ORT_DIR:-$ROOT/build-ort}

for cmd in node npm; do
  if ! command -v "$cmd" > /dev/null; then
    echo "tools/ort/install.sh: '$cmd' not found; install Debian's nodejs and npm" \
         "(tools/install_deps.sh does)" >&2
    exit 1
  fi
done

# The one place the version is pinned.
VERSION=$(node -p "require('$HERE/package.json').dependencies['onnxruntime-node']")

installed_version() {
  node -p "require('$DIR/node_modules/onnxruntime-node/package.json').version" 2> /dev/null || true
}

if [ "$(installed_version)" = "$VERSION" ]; then
  echo "onnxruntime-node $VERSION is installed in $DIR"
  exit 0
fi

echo "tools/ort/install.sh: installing onnxruntime-node $VERSION into $DIR"
mkdir -p "$DIR"
cp "$HERE/package.json" "$DIR/package.json"
(cd "$DIR" && npm install --ignore-scripts --no-audit --no-fund --save-exact --loglevel=error \
  "onnxruntime-node@$VERSION")

# Load it once: proves the binding and libonnxruntime.so.1 are usable here.
got=$(cd "$DIR" && node -e "process.stdout.write(require('onnxruntime-node').env.versions.node)")
if [ "$got" != "$VERSION" ]; then
  echo "tools/ort/install.sh: loaded onnxruntime-node '$got', expected $VERSION" >&2
  exit 1
fi
echo "onnxruntime-node $VERSION is installed in $DIR"
