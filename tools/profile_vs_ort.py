#!/usr/bin/python3
"""Where the CPU time goes: Baton's per-node profile against ONNX Runtime's
own profiler, per op class, on the same ONNX file (issue 17, deliverable 1).

usage: profile_vs_ort.py BATON_TOOL OUT_DIR [--models m1,m2,...] [--size S]
                         [--runs N] [--rounds R] [--top K] [--json FILE] [--isa ISA]

For each model: export it as bench_vs_torch.py does (torchvision
architectures, random weights), plan it for ports/linux/targets/cpu.json,
then, R rounds alternating the two sides:
- Baton: `baton profile --runs N` (one warm-up, N timed inferences; the
  Linux port times every node from dispatch to completion);
- ONNX Runtime: tools/ort/run.js --repeat N --profile (CPU EP, one thread,
  all graph optimizations; ORT's own per-kernel trace, `*_kernel_time`
  events of the timed runs).
Per node it keeps the median over the N runs of the best round (lowest sum),
then sums the nodes per op class. Classes come from the node's op and its
input shapes, the same rule on both sides (ORT's fused names map to theirs:
FusedConv is a Conv, ReorderInput/ReorderOutput its NCHWc layout changes):
  Conv first   a convolution with at most 4 input channels (the stem);
  Conv dw      depthwise (one input channel per group, more than one channel);
  Conv 1x1     pointwise;
  Conv kxk     any other convolution;
  layout       ORT's NCHWc reorders; Baton's Transpose and copies of layout;
  the op name  for everything else (Gemm, pools, Add, Mul, activations...).
Prints one Markdown table per model (ms per inference per class, Baton / ORT,
each side's share of its total) and the CPU flags. Both sides' totals are
sums of per-node medians, so they are a little below end-to-end latency
(bench_vs_torch.py measures that).
--nodes K also lists the K 1x1 and kxk convolutions with the largest
Baton - ORT excess, pairing the two sides' nodes by input shapes (ORT renames
fused nodes), else by shapes with channel counts rounded up to 16 (ORT's
NCHWc kernels pad them).
--isa caps both sides' kernels as bench_vs_torch.py's rows do: `baton profile
--isa ISA`, and ONNX Runtime's copy of tools/ort/cap_isa.py for avx2 (MLAS's
AVX2+FMA kernels) and portable (its SSE kernels).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import bench_vs_torch  # noqa: E402  (export, cpu_line)
import ort_ref  # noqa: E402
sys.path.insert(0, os.path.join(HERE, "ort"))
import cap_isa  # noqa: E402

DEFAULT_MODELS = bench_vs_torch.DEFAULT_MODELS


def conv_class(shapes):
    """The class of a convolution from its input shapes [x, w, ...]."""
    if len(shapes) < 2 or len(shapes[0]) < 3 or len(shapes[1]) < 3:
        return "Conv kxk"
    x, w = shapes[0], shapes[1]
    cin, per_group = x[1], w[1]
    spatial = 1
    for d in w[2:]:
        spatial *= d
    if cin <= 4:
        return "Conv first"
    if per_group == 1 and cin > 1:
        return "Conv dw"
    if spatial == 1:
        return "Conv 1x1"
    return "Conv kxk"


def op_class(op, shapes):
    if op in ("Conv", "FusedConv", "NchwcConv"):
        return conv_class(shapes)
    if op in ("ReorderInput", "ReorderOutput", "Transpose"):
        return "layout"
    if op in ("FusedGemm", "MatMul", "FusedMatMul"):
        return "Gemm"
    return op


def baton_profile(tool, plan, inputs, runs, path, isa="auto"):
    cmd = [tool, "profile", plan, "-o", path, "--runs", str(runs), "--isa", isa]
    for name, f in inputs.items():
        cmd += ["--input", "%s=%s" % (name, f)]
    subprocess.run(cmd, check=True, capture_output=True)
    with open(path) as f:
        entries = json.load(f)["entries"]
    out = {}
    for e in entries:
        shapes = [i["shape"] for i in e["inputs"] if i is not None]
        out[e["node"]] = (op_class(e["op"], shapes), e["median_s"] * 1e3, shape_key(shapes))
    return out


def ort_profile(model, inputs, runs, path, root=None):
    ort_ref.run_ort(model, {name: np.load(f) for name, f in inputs.items()}, repeat=runs,
                    profile=path, root=root)
    with open(path) as f:
        trace = json.load(f)
    times = {}
    for e in trace:
        if e.get("cat") != "Node" or not e["name"].endswith("_kernel_time"):
            continue
        a = e["args"]
        shapes = [list(s.values())[0] for s in a.get("input_type_shape", [])]
        key = e["name"][:-len("_kernel_time")]
        times.setdefault(key, (op_class(a["op_name"], shapes), shape_key(shapes), []))[2].append(
            e["dur"] / 1e3)
    out = {}
    for key, (cls, shape, durs) in times.items():
        # The first two runs are run.js's written run and its warm-up.
        timed = durs[2:] if len(durs) > 2 else durs
        out[key] = (cls, statistics.median(timed), shape)
    return out


def shape_key(shapes):
    """A node's input shapes as text ("1x64x56x56 64x64x3x3"): how --nodes pairs
    Baton's nodes with ORT's, whose fused nodes carry other names."""
    return " ".join("x".join(str(d) for d in s) for s in shapes[:2])


def padded_key(shape):
    """shape_key with the channel counts rounded up to 16: ORT's NCHWc
    convolutions pad them (squeezenet's 1000-class 1x1 runs as 1008)."""
    dims = [[int(d) for d in t.split("x")] for t in shape.split(" ")]
    if len(dims) == 2 and len(dims[0]) >= 3 and len(dims[1]) >= 3:
        up = lambda d: (d + 15) // 16 * 16
        dims[0][1] = up(dims[0][1])
        dims[1][0] = up(dims[1][0])
        if dims[1][1] == dims[0][1] or dims[1][1] > 4:  # not grouped
            dims[1][1] = up(dims[1][1])
    return " ".join("x".join(str(d) for d in t) for t in dims)


def pair_nodes(b, o, classes):
    """Baton's and ORT's nodes of the given classes paired by class and input
    shapes (else shapes with padded channel counts), in graph order within
    equal shapes: [(name, cls, shape, baton_ms, ort_ms)]."""
    exact, padded = {}, {}
    for key, (cls, ms, shape) in o.items():
        if cls in classes:
            entry = [key, ms]
            exact.setdefault((cls, shape), []).append(entry)
            padded.setdefault((cls, padded_key(shape)), []).append(entry)
    used = set()

    def take(queue):
        for entry in queue or []:
            if entry[0] not in used:
                used.add(entry[0])
                return entry[1]
        return None

    rows = []
    for name, (cls, ms, shape) in b.items():
        if cls in classes:
            rows.append([name, cls, shape, ms, take(exact.get((cls, shape)))])
    for row in rows:
        if row[4] is None:
            row[4] = take(padded.get((row[1], padded_key(row[2]))))
    return rows


def by_class(nodes):
    sums = {}
    for cls, ms, _ in nodes.values():
        sums[cls] = sums.get(cls, 0.0) + ms
    return sums


def profile_model(tool, name, out, size, runs, rounds, plan_flags=(), isa="auto", ort_root=None):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    model = os.path.join(d, name + ".onnx")
    if not os.path.exists(model):
        model = bench_vs_torch.export(name, d, size)
    plan = os.path.join(d, name + ".baton")
    subprocess.run([tool, "plan", model, "--target",
                    os.path.join(ROOT, "ports", "linux", "targets", "cpu.json"), "-o", plan, "-q"]
                   + list(plan_flags),
                   check=True, capture_output=True)
    inputs = {"input": os.path.join(d, "input.npy")}
    best_b, best_o = None, None
    for r in range(rounds):
        b = baton_profile(tool, plan, inputs, runs, os.path.join(d, "baton_profile.json"), isa)
        o = ort_profile(model, inputs, runs, os.path.join(d, "ort_trace.json"), ort_root)
        if best_b is None or sum(v[1] for v in b.values()) < sum(v[1] for v in best_b.values()):
            best_b = b
        if best_o is None or sum(v[1] for v in o.values()) < sum(v[1] for v in best_o.values()):
            best_o = o
    return best_b, best_o


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tool", help="the baton tool (build/tools/baton)")
    ap.add_argument("out", help="scratch directory (exports, plans, profiles)")
    ap.add_argument("--models", default=DEFAULT_MODELS)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--top", type=int, default=8, help="classes per model table")
    ap.add_argument("--json", help="also write the per-class sums here")
    ap.add_argument("--nodes", type=int, default=0,
                    help="also list this many convolutions (not stems or depthwise) with the "
                    "largest Baton - ORT excess, paired by input shapes")
    ap.add_argument("--no-winograd-weights", action="store_true",
                    help="plan without --winograd-weights")
    ap.add_argument("--isa", default="auto", choices=sorted(cap_isa.ISA_CAPS),
                    help="cap both sides at this instruction set (ORT: avx2 and portable only)")
    args = ap.parse_args()
    cap = cap_isa.ISA_CAPS[args.isa]
    try:
        ort_root = cap_isa.install_for_isa(args.isa)
    except (cap_isa.CapError, ort_ref.OrtNotInstalled) as e:
        sys.exit(f"--isa {args.isa}: no ONNX Runtime to compare with: {e}")
    plan_flags = [] if args.no_winograd_weights else ["--winograd-weights"]
    tool = os.path.abspath(args.tool)
    print(bench_vs_torch.cpu_line())
    print("Baton `baton profile --isa %s` (one thread per queue, cpu.json, %s) vs ONNX Runtime "
          "1.30 profiler (1 thread%s); ms per inference, sum of per-node medians, best of %d "
          "rounds of %d runs, %dx%d input\n"
          % (args.isa, " ".join(["baton plan"] + plan_flags),
             ", MLAS capped at %s" % cap.upper() if cap else "", args.rounds, args.runs,
             args.size, args.size))
    report = {}
    for name in args.models.split(","):
        nodes_b, nodes_o = profile_model(tool, name, args.out, args.size, args.runs, args.rounds,
                                         plan_flags, args.isa, ort_root)
        b, o, nb, no = by_class(nodes_b), by_class(nodes_o), len(nodes_b), len(nodes_o)
        tb, to = sum(b.values()), sum(o.values())
        report[name] = {"baton": b, "ort": o}
        print("### %s: Baton %.2f ms (%d nodes), ORT %.2f ms (%d nodes), ratio %.2f\n"
              % (name, tb, nb, to, no, tb / to))
        print("| class | Baton ms | ORT ms | Baton / ORT | Baton share | ORT share | "
              "excess ms |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        classes = sorted(set(b) | set(o), key=lambda c: -(b.get(c, 0) - o.get(c, 0)))
        shown = 0
        for c in classes:
            if shown == args.top:
                break
            bm, om = b.get(c, 0.0), o.get(c, 0.0)
            print("| %s | %.3f | %.3f | %s | %.0f%% | %.0f%% | %+.3f |"
                  % (c, bm, om, "%.2f" % (bm / om) if om > 0 else "-", 100 * bm / tb,
                     100 * om / to, bm - om))
            shown += 1
        print()
        if args.nodes > 0:
            rows = pair_nodes(nodes_b, nodes_o, ("Conv kxk", "Conv 1x1", "Conv first", "Conv dw", "MaxPool"))
            rows.sort(key=lambda r: -(r[3] - (r[4] or 0.0)))
            print("| node | class | x, w | Baton ms | ORT ms | Baton / ORT | excess ms |")
            print("|---|---|---|---:|---:|---:|---:|")
            for name, cls, shape, bm, om in rows[:args.nodes]:
                print("| %s | %s | %s | %.3f | %s | %s | %s |"
                      % (name, cls, shape, bm, "%.3f" % om if om else "-",
                         "%.2f" % (bm / om) if om else "-", "%+.3f" % (bm - om) if om else "-"))
            print()
        sys.stdout.flush()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
