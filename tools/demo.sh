#!/usr/bin/env bash
# The main job: build Baton, export a real model (torchvision mobilenet_v2,
# random weights), let the planner place it on the CPU, GPU, NPU and DSP of
# ports/linux/targets/soc4.json by itself (`baton plan --auto`: devices,
# pipeline stages and inferences in flight), print the pipeline configuration
# and the arenas, run it on the Linux port (threads per queue, simulated
# accelerators) against PyTorch's output, then simulate its throughput against
# the bound and against the best single device, and write a Gantt SVG.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${BUILD:-$ROOT/build}
OUT=$BUILD/demo
MODEL=${MODEL:-mobilenet_v2}
TARGET=$ROOT/ports/linux/targets/soc4.json

tools/install_deps.sh
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build "$BUILD" -j"$(nproc)" --target baton
BATON=$BUILD/tools/baton
mkdir -p "$OUT"

if [ ! -f "$OUT/$MODEL.onnx" ]; then
  echo "== exporting torchvision $MODEL (random weights) =="
  /usr/bin/python3 tools/export_torchvision.py "$MODEL" "$OUT"
fi

echo
echo "== plan: $MODEL on soc4, placed automatically (baton plan --auto) =="
"$BATON" plan "$OUT/$MODEL.onnx" --target "$TARGET" --auto \
  -o "$OUT/$MODEL.soc4.baton" --header "$OUT/$MODEL.soc4.h" --report "$OUT/$MODEL.soc4.report.json" \
  --dot "$OUT/$MODEL.soc4.dot"

echo
echo "== pipeline configuration, queues and arenas (baton inspect) =="
# Everything but the per-queue programs (`baton inspect` prints those too).
"$BATON" inspect "$OUT/$MODEL.soc4.baton" | \
  awk '/^Queues/{skip=1} /^Arenas/{skip=0} /^  constants/{skip=1} !skip'

echo
echo "== run on the Linux port: 8 inferences through the async pipeline API =="
"$BATON" run "$OUT/$MODEL.soc4.baton" --input "input=$OUT/input.npy" --inferences 8 --output-dir "$OUT/run"
/usr/bin/python3 - "$OUT" <<'PY'
import glob, sys
import numpy as np
out = sys.argv[1]
ref = np.load(f"{out}/output.npy")
worst = max(float(np.abs(np.load(f) - ref).max() / np.abs(ref).max())
            for f in glob.glob(f"{out}/run/*/output.npy"))
print(f"max relative error against PyTorch over 8 inferences: {worst:.2e}")
PY

echo
echo "== simulate 100 inferences on soc4's cost model =="
"$BATON" sim "$OUT/$MODEL.soc4.baton" --target "$TARGET" --inferences 100 --gantt "$OUT/$MODEL.gantt.svg" \
  --json > "$OUT/sim.json"
/usr/bin/python3 - "$OUT" "$OUT/$MODEL.soc4.report.json" <<'PY'
import json, sys
out, report = sys.argv[1], json.load(open(sys.argv[2]))["auto"]
s = json.load(open(f"{out}/sim.json"))
print(f"pipelined on soc4: {s['throughput_per_s']:.1f} inferences/s "
      f"(bound {s['bound_throughput_per_s']:.1f}/s, {100 * s['throughput_per_s'] / s['bound_throughput_per_s']:.1f}% of it)")
print(f"best single device: {report['best_single_device']} at "
      f"{report['best_single_throughput_per_s']:.1f} inferences/s "
      f"(its own best depth, D={report['best_single_in_flight']})")
print(f"speed-up over the best single device: "
      f"{s['throughput_per_s'] / report['best_single_throughput_per_s']:.2f}x")
for q, u in s["utilization"].items():
    print(f"  {q:6s} utilization {100 * u:5.1f}%")
PY
echo "Gantt chart: $OUT/$MODEL.gantt.svg"
