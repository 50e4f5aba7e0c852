#!/usr/bin/python3
"""The detection example end to end (ctest example.detection).

  1. export_ssdlite.py: torchvision's ssdlite320_mobilenet_v3_large (random
     weights) up to its raw head outputs + Softmax + baton::DecodeBoxes +
     baton::NonMaxSuppression -> ssdlite_detect.onnx, image.npy, and
     torchvision's own postprocess_detections result ref_{boxes,scores,labels}.npy
     (skipped when WORK_DIR already holds outputs newer than the script);
  2. baton plan for ports/linux/targets/soc4.json: the network (backbone and
     head) on the accelerators npu0 and gpu0, the post-processing on cpu0 in
     a later pipeline stage (--split decode), 2 inferences in flight; prints
     the pipeline, the arenas and the predicted speed from the report, and
     checks the placement and NonMaxSuppression's planned workspace;
  3. baton run, 4 inferences of the image through the pipeline;
  4. every inference's detections against torchvision's: count equal, labels
     equal, boxes within 1e-3, scores within 1e-4 (see `compare`);
  5. the check can fail: the same model with nms_thresh 0.45 instead of
     torchvision's 0.55, planned and run, must not pass it.

usage: run_example.py BATON WORK_DIR
"""
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
TARGET = os.path.join(SOURCE, "ports", "linux", "targets", "soc4.json")
INFERENCES = 4
BOX_TOL, SCORE_TOL = 1e-3, 1e-4

# The network on the accelerators: convolutions on the NPU, what the NPU does
# not run (hard-swish, which the importer fuses from HardSigmoid and Mul,
# squeeze-excite products, the head's transposes and concatenations, softmax)
# on the GPU. Reshapes (views) and the
# post-processing (CPU kernels) stay on the fallback cpu0.
RULES = ["Conv=npu0", "Add=npu0", "GlobalAveragePool=npu0",
         "HardSwish=gpu0", "HardSigmoid=gpu0", "Mul=gpu0", "Transpose=gpu0", "Concat=gpu0",
         "Softmax=gpu0"]


def run(cmd, expect_ok=True, quiet=False):
    print("$", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if not quiet or r.returncode != 0:
        print(r.stdout, end="")
    if (r.returncode == 0) != expect_ok:
        sys.exit("FAILED: exit code %d" % r.returncode)
    return r.stdout


def export(work):
    outputs = ["ssdlite_detect.onnx", "image.npy", "ref_boxes.npy", "ref_scores.npy",
               "ref_labels.npy"]
    script = os.path.join(HERE, "export_ssdlite.py")
    paths = [os.path.join(work, o) for o in outputs]
    if all(os.path.exists(p) and os.path.getmtime(p) >= os.path.getmtime(script) for p in paths):
        print("export: reusing the files in", work)
        return
    run([sys.executable, "-W", "ignore", script, "--out", work])


def plan(baton, model, out, report, extra=()):
    cmd = [baton, "plan", model, "--target", TARGET]
    for r in RULES:
        cmd += ["--assign", r]
    cmd += ["--split", "decode", "--in-flight", "2", "-o", out, "--report", report]
    return run(cmd + list(extra), quiet=True)


def describe(baton, plan_path, report_path):
    """The pipeline, the arenas and the predicted speed."""
    info = json.loads(run([baton, "inspect", plan_path, "--json"], quiet=True))
    report = json.load(open(report_path))
    queues = [q["name"] for q in info["queues"]]
    stages = {}
    for n in info["nodes"]:
        per_queue = stages.setdefault(n["stage"], {})
        per_queue.setdefault(queues[n["queue"]] if isinstance(n["queue"], int) else n["queue"],
                             []).append(n["op"])
    print("pipeline: %d stages, %d inferences in flight" %
          (report["stages"], info["inferences_in_flight"]))
    for s in sorted(stages):
        parts = []
        for q, ops in sorted(stages[s].items()):
            kinds = sorted(set(ops))
            parts.append("%s: %d nodes (%s)" % (q, len(ops), ", ".join(kinds[:6]) +
                                                (", ..." if len(kinds) > 6 else "")))
        print("  stage %d: %s" % (s, "; ".join(parts)))
    for name, d in report["domains"].items():
        print("  arena %-9s %9d B (lower bound %d, capacity %d)" %
              (name, d["arena_bytes"], d["lower_bound_bytes"], d["capacity_bytes"]))
    summary = report["summary"]
    print("  predicted: %.1f inferences/s, latency %.2f ms, bottleneck %s" %
          (summary["throughput_per_s"], summary["latency_s"] * 1e3, summary["bottleneck_queue"]))
    for q, load in sorted(summary["queues"].items()):
        print("    %-5s busy %.3f ms per inference, utilization %.2f" %
              (q, load["busy_s_per_inference"] * 1e3, load["utilization"]))
    return info, stages


def compare(got, ref):
    """Baton's detections (static maximum: boxes [D, 4], scores [D], classes
    [D], count) against torchvision's lists. Returns (ok, message).

    Count and labels must be equal, boxes within BOX_TOL and scores within
    SCORE_TOL. Baton's convolutions differ from torch's by ~1e-6, which can
    swap two detections whose scores are that close, or exchange which of two
    near-tied candidates makes the cut at D: row i first matches torchvision's
    row i; a row that does not matches an unused torchvision row of the same
    label within the tolerances; a row left over may only be a near-tie at
    the cut (both scores within SCORE_TOL of torchvision's last score)."""
    boxes, scores, classes, count = got
    rb, rs, rl = ref
    n = int(count)
    if n != len(rs):
        return False, "count %d, torchvision %d" % (n, len(rs))
    if np.any(classes[n:] != 0) or np.any(scores[n:] != 0) or np.any(boxes[n:] != 0):
        return False, "rows past the count are not zero"

    def close(i, j):
        return (classes[i] == rl[j] and abs(scores[i] - rs[j]) <= SCORE_TOL and
                np.max(np.abs(boxes[i] - rb[j])) <= BOX_TOL)

    used = np.zeros(n, bool)
    exact = [i for i in range(n) if close(i, i)]
    used[exact] = True
    left = [i for i in range(n) if not used[i]]
    moved = 0
    for i in list(left):
        for j in range(n):
            if not used[j] and close(i, j):
                used[j] = True
                left.remove(i)
                moved += 1
                break
    cut = float(rs[-1]) if n else 0.0
    for i in left:
        if abs(scores[i] - cut) > SCORE_TOL:
            return False, ("detection %d (class %d, score %.6f, box %s) matches none of "
                           "torchvision's" % (i, classes[i], scores[i], np.round(boxes[i], 3)))
    unmatched = [j for j in range(n) if not used[j]]
    if any(abs(rs[j] - cut) > SCORE_TOL for j in unmatched):
        return False, "torchvision's detections %s have no match" % unmatched[:5]
    dbox = max((np.max(np.abs(boxes[i] - rb[i])) for i in exact), default=0.0)
    dscore = max((abs(scores[i] - rs[i]) for i in exact), default=0.0)
    return True, ("%d detections: %d match torchvision's row for row, %d in another order "
                  "(near-tied scores), %d near-ties exchanged at the cut; max |box diff| %.2g, "
                  "max |score diff| %.2g" % (n, len(exact), moved, len(left), dbox, dscore))


def load_run(out_dir, index=None):
    d = out_dir if index is None else os.path.join(out_dir, str(index))
    load = lambda name: np.load(os.path.join(d, name + ".npy"))  # noqa: E731
    return (load("det_boxes")[0], load("det_scores")[0], load("det_classes")[0],
            load("det_count")[0])


def with_nms_thresh(model, out, value):
    import onnx
    proto = onnx.load(model)
    for node in proto.graph.node:
        if node.op_type == "NonMaxSuppression":
            for a in node.attribute:
                if a.name == "nms_thresh":
                    a.f = value
    onnx.save(proto, out)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    baton, work = sys.argv[1], os.path.abspath(sys.argv[2])
    os.makedirs(work, exist_ok=True)
    start = time.time()
    export(work)
    model = os.path.join(work, "ssdlite_detect.onnx")
    plan_path, report_path = os.path.join(work, "ssdlite.baton"), os.path.join(work, "report.json")
    plan(baton, model, plan_path, report_path)
    info, stages = describe(baton, plan_path, report_path)

    # The pipeline is real: accelerators in the first stage, the CPU's
    # post-processing in a later one.
    by_op = {n["op"]: n for n in info["nodes"]}
    queue_name = lambda n: (info["queues"][n["queue"]]["name"]  # noqa: E731
                            if isinstance(n["queue"], int) else n["queue"])
    for op in ("baton::DecodeBoxes", "baton::NonMaxSuppression"):
        assert queue_name(by_op[op]) == "cpu0", by_op[op]
        assert by_op[op]["stage"] >= 1, by_op[op]
    # NonMaxSuppression's planned workspace, by hand (docs/operators.md):
    # C' = 90 object classes, K = 300 candidates: (90 * 300) * 8 + 90 * 4.
    workspace = [info["tensors"][w]["bytes"] for w in by_op["baton::NonMaxSuppression"]["workspace"]]
    assert workspace == [90 * 300 * 8 + 90 * 4], workspace
    conv_queues = {queue_name(n) for n in info["nodes"] if n["op"] == "Conv"}
    assert conv_queues == {"npu0"}, conv_queues
    assert min(stages) == 0 and any(q in stages[0] for q in ("npu0", "gpu0")), stages

    out_dir = os.path.join(work, "baton_run")
    run([baton, "run", plan_path, "--input", "image=" + os.path.join(work, "image.npy"),
         "--output-dir", out_dir, "--inferences", str(INFERENCES)])
    ref = tuple(np.load(os.path.join(work, "ref_%s.npy" % k)) for k in ("boxes", "scores",
                                                                           "labels"))
    for i in range(INFERENCES):
        ok, message = compare(load_run(out_dir, i), ref)
        print("inference %d: %s" % (i, message))
        if not ok:
            sys.exit("FAILED: Baton's detections differ from torchvision's")

    # A wrong nms_thresh must fail the check.
    wrong = os.path.join(work, "wrong_nms.onnx")
    with_nms_thresh(model, wrong, 0.45)
    wrong_plan = os.path.join(work, "wrong_nms.baton")
    plan(baton, wrong, wrong_plan, os.path.join(work, "wrong_report.json"))
    wrong_dir = os.path.join(work, "wrong_run")
    run([baton, "run", wrong_plan, "--input", "image=" + os.path.join(work, "image.npy"),
         "--output-dir", wrong_dir], quiet=True)
    ok, message = compare(load_run(wrong_dir), ref)
    print("nms_thresh 0.45 (torchvision: 0.55): %s" % message)
    if ok:
        sys.exit("FAILED: the check accepts detections made with the wrong nms_thresh")
    print("OK (%.1f s)" % (time.time() - start))


if __name__ == "__main__":
    main()
