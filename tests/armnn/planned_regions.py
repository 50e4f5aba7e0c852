#!/usr/bin/python3
"""Planner + Arm NN end to end (issue 16): regions the planner forms run on
the Arm NN plugin inside pipelined plans, with correct outputs.

For each model of tests/planner/passes/region_models.py (passthrough: the
seed's A -> B -> C -> D -> E with B and D on Arm NN and E reading A, B and
D; multi: one region with several inputs and outputs; cycle: a merge that
would make a cycle), plans it for ports/linux/targets/armnn_soc.json with
the region nodes pinned to an Arm NN device (`npu`, sharing DDR, and `gpu`,
its own memory with copies), pipelined (--split, 3 in flight), runs 4
inferences with `baton run` (which registers the Arm NN plugin), and
compares every output with ONNX Runtime on the original model and with the
all-CPU plan. Also checks that the plan has the expected __subgraph nodes
(baton inspect --json).

Usage: planned_regions.py BATON WORK_DIR
"""
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.join(ROOT, "tests", "planner", "passes"))
from ort_ref import run_ort  # noqa: E402
import region_models  # noqa: E402

TARGET = os.path.join(ROOT, "ports", "linux", "targets", "armnn_soc.json")
INFERENCES = 4

# model -> (node name rules onto the Arm NN device, --split, expected regions,
# devices). multi runs on npu only: gpu's op list has no Clip or Swish, so
# conv2 and swish would fall back to the CPU and split the region.
CASES = {
    "passthrough": (["@B", "@D"], "C", 2, ("npu", "gpu")),
    "multi": (["@conv1", "@relu1", "@mul", "@sig", "@swish", "@cat", "@conv2", "@clip2"],
              "tail1", 1, ("npu",)),
    "cycle": (["@A", "@C", "@D"], "B", 2, ("npu", "gpu")),
}


def sh(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        sys.exit("FAIL: %s\n%s" % (" ".join(cmd), r.stdout))
    return r.stdout


def run_plan(baton, plan, inputs, out_dir):
    args = [baton, "run", plan, "--output-dir", out_dir, "--inferences", str(INFERENCES)]
    for name, path in inputs.items():
        args += ["--input", "%s=%s" % (name, path)]
    sh(args)
    return out_dir


def main(argv):
    baton, work = argv
    os.makedirs(work, exist_ok=True)
    region_models.make(work)
    failures = 0
    rng = np.random.default_rng(7)
    for name, (pins, split, want_regions, devices) in CASES.items():
        model = os.path.join(work, name + ".onnx")
        import onnx
        proto = onnx.load(model)
        feeds, files = {}, {}
        for i in proto.graph.input:
            shape = [d.dim_value for d in i.type.tensor_type.shape.dim]
            feeds[i.name] = rng.standard_normal(shape).astype(np.float32)
            files[i.name] = os.path.join(work, "%s_%s.npy" % (name, i.name))
            np.save(files[i.name], feeds[i.name])
        ref, _ = run_ort(model, feeds, opt_level="disabled")
        cpu_plan = os.path.join(work, name + "_cpu.baton")
        sh([baton, "plan", model, "-o", cpu_plan])
        cpu_out = run_plan(baton, cpu_plan, files, os.path.join(work, name + "_cpu_out"))
        for device in devices:
            plan = os.path.join(work, "%s_%s.baton" % (name, device))
            cmd = [baton, "plan", model, "--target", TARGET, "-o", plan, "--split", split,
                   "--in-flight", "3"]
            for pin in pins:
                cmd += ["--assign", "%s=%s" % (pin, device)]
            sh(cmd)
            info = json.loads(sh([baton, "inspect", plan, "--json"]))
            regions = [n for n in info["nodes"] if n["op"] == "__subgraph"]
            stages = sorted({n["stage"] for n in info["nodes"]})
            if len(regions) != want_regions or len(stages) < 2:
                print("FAIL %s/%s: %d regions (want %d), stages %s" %
                      (name, device, len(regions), want_regions, stages))
                failures += 1
                continue
            out = run_plan(baton, plan, files, os.path.join(work, "%s_%s_out" % (name, device)))
            worst = 0.0
            for k in range(INFERENCES):
                for oname, want in ref.items():
                    got = np.load(os.path.join(out, str(k), oname + ".npy"))
                    native = np.load(os.path.join(cpu_out, str(k), oname + ".npy"))
                    err = max(float(np.max(np.abs(got - want))),
                              float(np.max(np.abs(got - native))))
                    worst = max(worst, err / max(1.0, float(np.max(np.abs(want)))))
            ok = worst <= 1e-4
            failures += not ok
            print("%s %s/%s: %d regions (%s), %d stages, %d in flight, max rel err %.2e "
                  "against ONNX Runtime and the all-CPU plan" %
                  ("ok  " if ok else "FAIL", name, device, len(regions),
                   ", ".join("%s: %d nodes" % (r["name"], len(r["region"]["nodes"])) for r in regions),
                   len(stages), info.get("inferences_in_flight", 3), worst))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
