#!/usr/bin/python3
"""Intra-op scaling (issue 17): Baton with a CPU device of 1 and N threads
against ONNX Runtime with intraOpNumThreads 1 and N, in one run, alternating,
and prints a Markdown table.

usage: bench_threads.py BATON_TOOL OUT_DIR [--models m1,m2,...] [--threads N]
                        [--repeat R] [--rounds K] [--size S]

For each model: export it (tools/bench_vs_torch.py's export: torchvision,
random weights), plan the ONNX file for ports/linux/targets/cpu.json and for
a copy of it with "threads": N, check that the N-thread plan's output is
bitwise the 1-thread plan's and both match torch, then time, K rounds of R
runs each (after a warm-up), in the order Baton 1, Baton N, ORT 1, ORT N per
round. Each cell is the best round's median latency in ms.

- Baton: `baton run --repeat R` (threaded Linux port: the CPU queue's thread
  plus N - 1 pool workers); kernels at the machine's default ISA.
- ONNX Runtime: tools/ort/run.js --threads (CPU EP, intraOpNumThreads,
  inter-op 1, sequential, all graph optimizations), the same ONNX file.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_vs_torch as bvt  # noqa: E402
import ort_ref  # noqa: E402

ROOT = os.path.dirname(HERE)


def time_baton(tool, plan, inp, out_dir, repeat):
    r = subprocess.run([tool, "run", plan, "--input", f"input={inp}", "--output-dir", out_dir,
                        "--repeat", str(repeat)], check=True, capture_output=True, text=True)
    import re
    m = re.search(r"median ([0-9.]+) ms, min ([0-9.]+) ms \(kernels: (\w+)\)", r.stdout)
    return float(m.group(1)), m.group(3)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tool")
    ap.add_argument("out")
    ap.add_argument("--models", default="mobilenet_v2,resnet18")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--no-winograd-weights", action="store_true",
                    help="plan without --winograd-weights")
    args = ap.parse_args()
    ort_version = ort_ref.check_installed()
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(ROOT, "ports/linux/targets/cpu.json")) as f:
        target = json.load(f)
    target["name"] = f"cpu_{args.threads}threads"
    target["devices"][0]["threads"] = args.threads
    target_n = os.path.join(args.out, f"cpu_{args.threads}threads.json")
    with open(target_n, "w") as f:
        json.dump(target, f)
    n = args.threads
    rows = []
    isa = "?"
    for name in args.models.split(","):
        d = os.path.join(args.out, name)
        print(f"== {name}", file=sys.stderr, flush=True)
        onnx_path = bvt.export(name, d, args.size)
        inp = os.path.join(d, "input.npy")
        ref = np.load(os.path.join(d, "output.npy"))
        plans = {1: os.path.join(d, "cpu1.baton"), n: os.path.join(d, f"cpu{n}.baton")}
        outs = {}
        for t, plan in plans.items():
            tgt = ["--target", target_n] if t > 1 else []
            flags = [] if args.no_winograd_weights else ["--winograd-weights"]
            subprocess.run([args.tool, "plan", onnx_path, "-o", plan, "-q"] + tgt + flags,
                           check=True)
            out = os.path.join(d, f"out{t}")
            subprocess.run([args.tool, "run", plan, "--input", f"input={inp}", "--output-dir",
                            out], check=True, capture_output=True)
            outs[t] = np.load(os.path.join(out, "output.npy"))
        same = outs[1].tobytes() == outs[n].tobytes()
        err = float(np.max(np.abs(outs[n] - ref)) / np.max(np.abs(ref)))
        samples = {("baton", 1): [], ("baton", n): [], ("ort", 1): [], ("ort", n): []}
        for _ in range(args.rounds):
            for t in (1, n):
                m, isa = time_baton(args.tool, plans[t], inp, os.path.join(d, f"out{t}"),
                                    args.repeat)
                samples[("baton", t)].append(m)
            for t in (1, n):
                _, times = ort_ref.run_ort(onnx_path, {"input": np.load(inp)},
                                           repeat=args.repeat, threads=t)
                samples[("ort", t)].append(statistics.median(times))
        best = {k: min(v) for k, v in samples.items()}
        rows.append((name, best, same, err))
    print(bvt.cpu_line())
    print()
    print(f"| model | Baton 1 thread ms | Baton {n} threads ms | Baton speed-up "
          f"| ORT 1 thread ms | ORT {n} threads ms | ORT speed-up | Baton/ORT at 1 "
          f"| Baton/ORT at {n} | {n} threads bitwise = 1 | rel. err. vs torch |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, b, same, err in rows:
        print(f"| {name} | {b[('baton', 1)]:.2f} | {b[('baton', n)]:.2f} "
              f"| {b[('baton', 1)] / b[('baton', n)]:.2f} | {b[('ort', 1)]:.2f} "
              f"| {b[('ort', n)]:.2f} | {b[('ort', 1)] / b[('ort', n)]:.2f} "
              f"| {b[('baton', 1)] / b[('ort', 1)]:.2f} | {b[('baton', n)] / b[('ort', n)]:.2f} "
              f"| {'yes' if same else 'NO'} | {err:.1e} |")
    print(f"\n(Baton kernels: {isa}; ONNX Runtime {ort_version}, CPU EP, intraOpNumThreads 1 "
          f"and {n}, inter-op 1, sequential; input 1x3x{args.size}x{args.size}; best of "
          f"{args.rounds} rounds of {args.repeat}-run medians, alternating)")


if __name__ == "__main__":
    main()
