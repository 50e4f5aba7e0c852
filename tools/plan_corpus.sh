#!/usr/bin/env bash
# Plans a fixed corpus (every end-to-end test graph, the valid ONNX import
# cases and five torchvision models) on every bundled target with several
# rule sets, and prints one line per plan: "<sha256>  <case>". Two builds that
# print the same lines write byte-identical plans for the whole corpus.
#
# usage: plan_corpus.sh BATON WORK_DIR
#   BATON     the baton tool to test
#   WORK_DIR  scratch folder; models and graphs are generated there once and
#             reused on later runs (delete it to regenerate)
#
# tests/golden/plan_sha256.txt holds the lines of the last intended change of
# plan bytes; the CTest `planner.plans_unchanged` compares against it. After a
# change that is meant to alter plans, regenerate it with
#   tools/plan_corpus.sh build/tools/baton /tmp/corpus > tests/golden/plan_sha256.txt
# and say why in the commit.
set -euo pipefail
BATON=$(realpath "$1")
WORK=$2
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TARGETS=$ROOT/ports/linux/targets
PY=/usr/bin/python3
mkdir -p "$WORK/graphs" "$WORK/onnx" "$WORK/models" "$WORK/plans" "$WORK/targets"
cp "$TARGETS"/*.json "$WORK/targets/"
# Relative paths from here on, so that messages do not depend on WORK_DIR.
cd "$WORK"
WORK=.

# Inputs, generated once (all seeded).
if [ ! -f "$WORK/graphs/.done" ]; then
  "$PY" "$ROOT/tests/e2e/make_graphs.py" "$WORK/graphs" > /dev/null
  touch "$WORK/graphs/.done"
fi
if [ ! -f "$WORK/onnx/.done" ]; then
  "$PY" "$ROOT/tests/planner/import/make_onnx_cases.py" "$WORK/onnx" > /dev/null
  touch "$WORK/onnx/.done"
fi
MODELS=(mobilenet_v2 resnet18 squeezenet1_1 mobilenet_v3_small googlenet)
for m in "${MODELS[@]}"; do
  if [ ! -f "$WORK/models/$m/$m.onnx" ]; then
    "$PY" "$ROOT/tools/export_torchvision.py" "$m" "$WORK/models/$m" --size 64 > /dev/null 2>&1
  fi
done

# Rule sets: name|target|arguments.
RULESETS=(
  "cpu|cpu.json|"
  "cpu_d2|cpu.json|--in-flight 2"
  "soc4_plain|soc4.json|"
  "soc4_demo|soc4.json|--assign Conv=npu0 --assign Add=npu0 --assign GlobalAveragePool=gpu0 --assign Gemm=dsp0 --in-flight 3"
  "soc4_gpu|soc4.json|--assign Conv=gpu0 --assign Relu=gpu0 --assign Clip=gpu0 --assign Gemm=dsp0 --in-flight 2"
  "twin_npu_f32|twin_npu_f32.json|--assign Conv=npu0 --assign Conv#1=npu1 --assign Conv#3=npu1 --assign Gemm=npu1 --in-flight 2"
  "imx8mp_f32|imx8mp_f32.json|--assign Conv=vip8000 --assign Add=gc7000ul --assign Gemm=hifi4 --assign Softmax=hifi4 --in-flight 2"
)

plan_one() {  # case-name model-file
  local name=$1 model=$2
  for rs in "${RULESETS[@]}"; do
    IFS='|' read -r rname target args <<< "$rs"
    local out="$WORK/plans/$name.$rname.baton"
    rm -f "$out"
    # shellcheck disable=SC2086
    if "$BATON" plan "$model" --target "targets/$target" $args -o "$out" -q \
        > /dev/null 2> "$WORK/plans/$name.$rname.err"; then
      echo "$(sha256sum < "$out" | cut -d' ' -f1)  $name.$rname"
    else
      # A rejected plan is part of the corpus too: its message must not change.
      echo "$(sha256sum < "$WORK/plans/$name.$rname.err" | cut -d' ' -f1)  $name.$rname (error)"
    fi
  done
}

for g in "$WORK"/graphs/*.json; do plan_one "graph.$(basename "$g" .json)" "$g"; done
for o in "$WORK"/onnx/*.onnx; do plan_one "onnx.$(basename "$o" .onnx)" "$o"; done
for m in "${MODELS[@]}"; do plan_one "model.$m" "$WORK/models/$m/$m.onnx"; done
