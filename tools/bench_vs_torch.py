#!/usr/bin/python3
"""Times Baton's single-thread CPU plan and PyTorch (torch.set_num_threads(1))
on the same torchvision models, in one run on this machine, and prints a
Markdown table.

usage: bench_vs_torch.py BATON_TOOL OUT_DIR [--models m1,m2,...] [--repeat N] [--size S]
                         [--isas auto,avx2,portable]

For each model: export with tools/export_torchvision.py (random weights),
plan for the single-CPU target, check the output against torch, then time
both sides alternately (so machine noise hits both) and report the median and
minimum latency per inference in ms.

Each entry of --isas is one row per model, and caps both sides at the same
instruction set: Baton through `baton run --isa`, torch (in a subprocess)
through its own dispatch controls, ATEN_CPU_CAPABILITY and oneDNN's
DNNL_MAX_CPU_ISA. "auto" leaves both at their defaults (what a user gets);
"portable" is Baton's baseline copy (SSE2 on x86-64) against torch limited to
SSE4.1.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

# Environment that caps torch at the instruction set of a `baton run --isa`.
TORCH_ISA_ENV = {
    "auto": {},
    "avx512": {"ATEN_CPU_CAPABILITY": "avx512", "DNNL_MAX_CPU_ISA": "AVX512_CORE",
               "ONEDNN_MAX_CPU_ISA": "AVX512_CORE"},
    "avx2": {"ATEN_CPU_CAPABILITY": "avx2", "DNNL_MAX_CPU_ISA": "AVX2",
             "ONEDNN_MAX_CPU_ISA": "AVX2"},
    "portable": {"ATEN_CPU_CAPABILITY": "default", "DNNL_MAX_CPU_ISA": "SSE41",
                 "ONEDNN_MAX_CPU_ISA": "SSE41"},
}


def torch_worker(name, inp, repeat):
    """Runs in a subprocess (so the ISA caps apply from the start): prints
    a JSON list of per-inference times in ms."""
    import time
    import torch
    import torchvision
    torch.set_num_threads(1)
    model = getattr(torchvision.models, name)(weights=None).eval()
    x = torch.from_numpy(np.load(inp))
    times = []
    with torch.no_grad():
        model(x)  # warm-up
        for _ in range(repeat):
            t0 = time.perf_counter()
            model(x)
            times.append((time.perf_counter() - t0) * 1e3)
    print(json.dumps({"times": times, "version": torch.__version__}))


def time_torch(name, inp, repeat, isa):
    env = dict(os.environ, **TORCH_ISA_ENV[isa])
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--torch-worker", name, inp,
                        str(repeat)], check=True, capture_output=True, text=True, env=env)
    out = json.loads(r.stdout)
    return out["times"], out["version"]


def time_baton(tool, plan, inp, out_dir, repeat, isa):
    # baton run --repeat prints
    # "latency over N runs: median X ms, min Y ms (kernels: ISA)".
    r = subprocess.run([tool, "run", plan, "--input", f"input={inp}", "--output-dir", out_dir,
                        "--cooperative", "--repeat", str(repeat), "--isa", isa],
                       check=True, capture_output=True, text=True)
    m = re.search(r"median ([0-9.]+) ms, min ([0-9.]+) ms \(kernels: (\w+)\)", r.stdout)
    return float(m.group(1)), float(m.group(2)), m.group(3)


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--torch-worker":
        torch_worker(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("tool")
    ap.add_argument("out")
    ap.add_argument("--models", default="mobilenet_v2,resnet18,squeezenet1_1")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--isas", default="auto,avx2,portable")
    args = ap.parse_args()
    isas = args.isas.split(",")
    for isa in isas:
        if isa not in TORCH_ISA_ENV:
            ap.error(f"unknown ISA {isa}; one of {', '.join(TORCH_ISA_ENV)}")
    os.makedirs(args.out, exist_ok=True)
    rows = []
    version = "?"
    for name in args.models.split(","):
        d = os.path.join(args.out, name)
        subprocess.run([sys.executable, os.path.join(HERE, "export_torchvision.py"), name, d,
                        "--size", str(args.size)], check=True, capture_output=True)
        plan = os.path.join(d, "cpu.baton")
        subprocess.run([args.tool, "plan", os.path.join(d, f"{name}.onnx"), "-o", plan, "-q"],
                       check=True)
        inp = os.path.join(d, "input.npy")
        ref = np.load(os.path.join(d, "output.npy"))
        for isa in isas:
            # Correctness first, with these kernels (skipped where the build or
            # CPU does not have them).
            out = os.path.join(d, "out_" + isa)
            r = subprocess.run([args.tool, "run", plan, "--input", f"input={inp}", "--output-dir",
                                out, "--cooperative", "--isa", isa], capture_output=True, text=True)
            if r.returncode != 0:
                if "not available" in r.stderr:
                    print(f"skipping {isa}: {r.stderr.strip()}", file=sys.stderr)
                    continue
                sys.exit(r.stderr)
            got = np.load(os.path.join(out, "output.npy"))
            err = float(np.abs(got - ref).max() / np.abs(ref).max())
            t_med, t_min, b_med, b_min = [], [], [], []
            used = isa
            for _ in range(3):  # alternate sides
                t, version = time_torch(name, inp, args.repeat, isa)
                t_med.append(statistics.median(t))
                t_min.append(min(t))
                bm, bn, used = time_baton(args.tool, plan, inp, out, args.repeat, isa)
                b_med.append(bm)
                b_min.append(bn)
            label = f"auto ({used})" if isa == "auto" else isa
            rows.append((name, label, min(b_med), min(b_min), min(t_med), min(t_min), err))
    print("| model | ISA (both sides) | baton median / min ms | torch median / min ms "
          "| baton/torch (median) | max rel. error |")
    print("|---|---|---|---|---|---|")
    for name, label, bm, bn, tm, tn, err in rows:
        print(f"| {name} | {label} | {bm:.1f} / {bn:.1f} | {tm:.1f} / {tn:.1f} | {bm / tm:.2f} "
              f"| {err:.1e} |")
    print(f"\n(torch {version}, 1 thread; baton --cooperative, 1 thread; "
          f"input 1x3x{args.size}x{args.size}; {args.repeat} runs x 3 rounds, alternating, "
          f"best round shown)")


if __name__ == "__main__":
    main()
