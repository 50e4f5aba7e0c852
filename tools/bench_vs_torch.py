#!/usr/bin/python3
"""Times Baton's single-thread CPU plan and PyTorch (torch.set_num_threads(1))
on the same torchvision models, in one run on this machine, and prints a
Markdown table.

usage: bench_vs_torch.py BATON_TOOL OUT_DIR [--models m1,m2,...] [--repeat N] [--size S]

For each model: export with tools/export_torchvision.py (random weights),
plan for the single-CPU target, check the output against torch, then time
both sides alternately (so machine noise hits both) and report the median and
minimum latency per inference in ms.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np
import torch
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))


def time_torch(model, x, repeat):
    times = []
    with torch.no_grad():
        model(x)  # warm-up
        for _ in range(repeat):
            t0 = time.perf_counter()
            model(x)
            times.append((time.perf_counter() - t0) * 1e3)
    return times


def time_baton(tool, plan, inp, out_dir, repeat):
    # baton run --repeat prints "latency over N runs: median X ms, min Y ms".
    r = subprocess.run([tool, "run", plan, "--input", f"input={inp}", "--output-dir", out_dir,
                        "--cooperative", "--repeat", str(repeat)],
                       check=True, capture_output=True, text=True)
    m = re.search(r"median ([0-9.]+) ms, min ([0-9.]+) ms", r.stdout)
    return float(m.group(1)), float(m.group(2))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tool")
    ap.add_argument("out")
    ap.add_argument("--models", default="mobilenet_v2,resnet18,squeezenet1_1")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--size", type=int, default=224)
    args = ap.parse_args()
    torch.set_num_threads(1)
    os.makedirs(args.out, exist_ok=True)
    rows = []
    for name in args.models.split(","):
        d = os.path.join(args.out, name)
        subprocess.run([sys.executable, os.path.join(HERE, "export_torchvision.py"), name, d,
                        "--size", str(args.size)], check=True, capture_output=True)
        plan = os.path.join(d, "cpu.baton")
        subprocess.run([args.tool, "plan", os.path.join(d, f"{name}.onnx"), "-o", plan, "-q"], check=True)
        inp = os.path.join(d, "input.npy")
        # Correctness first.
        subprocess.run([args.tool, "run", plan, "--input", f"input={inp}", "--output-dir",
                        os.path.join(d, "out"), "--cooperative"], check=True, capture_output=True)
        ref = np.load(os.path.join(d, "output.npy"))
        got = np.load(os.path.join(d, "out", "output.npy"))
        err = float(np.abs(got - ref).max() / np.abs(ref).max())
        # The same architecture in torch (weights do not change the cost).
        model = getattr(torchvision.models, name)(weights=None).eval()
        x = torch.from_numpy(np.load(inp))
        t_med, t_min, b_med, b_min = [], [], [], []
        for _ in range(3):  # alternate sides
            t = time_torch(model, x, args.repeat)
            t_med.append(statistics.median(t))
            t_min.append(min(t))
            bm, bn = time_baton(args.tool, plan, inp, os.path.join(d, "out"), args.repeat)
            b_med.append(bm)
            b_min.append(bn)
        rows.append((name, min(b_med), min(b_min), min(t_med), min(t_min), err))
    print(f"| model | baton median ms | baton min ms | torch median ms | torch min ms | baton/torch (median) | max rel. error |")
    print("|---|---|---|---|---|---|---|")
    for name, bm, bn, tm, tn, err in rows:
        print(f"| {name} | {bm:.1f} | {bn:.1f} | {tm:.1f} | {tn:.1f} | {bm / tm:.2f} | {err:.1e} |")
    print(f"\n(torch {torch.__version__}, 1 thread; baton --cooperative, 1 thread; "
          f"input 1x3x{args.size}x{args.size}; {args.repeat} runs x 3 rounds, best round shown)")


if __name__ == "__main__":
    main()
