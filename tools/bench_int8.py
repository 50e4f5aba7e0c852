#!/usr/bin/python3
"""Times Baton's int8 kernels against ONNX Runtime (both one thread) on the
quantized (QDQ) models of tests/quant/make_quant_models.py, in one run on
this machine, and prints a Markdown table.

usage: bench_int8.py --baton BATON_TOOL --cases DIR [--case NAME]... [--repeat N]
                     [--rounds R] [--isas auto,avx512vnni,avx512,avx2,portable] [--work DIR]
                     [--no-torch]

DIR is make_quant_models.py's output (a directory per case with model.onnx
and input0.npy..., and manifest.json); by default the mobilenet_v2 and
resnet18 cases. Each model is planned for the single-CPU target
(`baton plan MODEL --target ports/linux/targets/cpu.json`), then, per round,
Baton (`baton run --cooperative --repeat N --isa ISA`, whole-inference
latency, one line per ISA in --isas this CPU has) and ONNX Runtime
(tools/ort/run.js: CPU execution provider, intra- and inter-op threads 1,
graph optimization 'all', on the very model.onnx Baton plans) take turns,
N timed runs each after a warm-up, so that machine noise hits both. Each
cell is the best round's median (and the best minimum) per inference in ms.

torch's own quantized model (the one the case's model.onnx was exported
from) takes its turn too, unless --no-torch: a subprocess rebuilds it with
make_quant_models.quantize_torch (same seed, so the same weights and
quantization; about 10 s per model) and times it on the case's input with
the qnnpack engine and one thread (torch.set_num_threads(1)).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import bench_vs_torch  # noqa: E402
import ort_ref  # noqa: E402

CPU_TARGET = os.path.join(ROOT, "ports", "linux", "targets", "cpu.json")
DEFAULT_CASES = ("mobilenet_v2", "resnet18")
FLAGS = ("sse4_1", "avx2", "fma", "avx512f", "avx512bw", "avx512_vnni", "avx_vnni")
DASH = "—"


def case_inputs(case_dir, manifest_case):
    return {i["name"]: os.path.join(case_dir, i["file"]) for i in manifest_case["inputs"]}


def time_baton(tool, plan, inputs, out_dir, repeat, isa):
    # "latency over N runs: median X ms, min Y ms (kernels: ISA)"
    cmd = [tool, "run", plan, "--output-dir", out_dir, "--cooperative", "--repeat", str(repeat),
           "--isa", isa]
    for name, f in inputs.items():
        cmd += ["--input", f"{name}={f}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "failed"
    m = re.search(r"median ([0-9.]+) ms, min ([0-9.]+) ms \(kernels: (\w+)\)", r.stdout)
    return (float(m.group(1)), float(m.group(2))), m.group(3)


def torch_worker(name, inp, repeat):
    """Runs in a subprocess: prints a JSON list of per-inference times in ms
    of torch's quantized `name` (make_quant_models's, qnnpack, one thread)."""
    import torch
    sys.path.insert(0, os.path.join(ROOT, "tests", "quant"))
    import make_quant_models as mqm
    torch.set_num_threads(1)
    for seed, (case, builder, shape, batch) in enumerate(mqm.torch_models()):
        if case == name:
            model, _, _ = mqm.quantize_torch(builder, shape, batch, 100 * seed)
            break
    else:
        raise SystemExit(f"{name}: not a torch case of make_quant_models.py")
    torch.backends.quantized.engine = "qnnpack"
    x = torch.from_numpy(np.load(inp))
    times = bench_vs_torch.time_module(model, x, repeat)
    print(json.dumps({"times": times, "version": torch.__version__}))


def time_torch(name, inp, repeat):
    """(per-inference times in ms, torch version), or (None, reason)."""
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--torch-worker", name, inp,
                        str(repeat)], capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "failed"
    out = json.loads(r.stdout)
    return out["times"], out["version"]


def fmt_ms(v):
    return f"{v:.3f}" if v < 1 else f"{v:.2f}" if v < 10 else f"{v:.1f}"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baton", required=True, help="the baton tool")
    ap.add_argument("--cases", required=True, help="make_quant_models.py's output directory")
    ap.add_argument("--case", action="append", default=[],
                    help=f"time this case (default: {', '.join(DEFAULT_CASES)})")
    ap.add_argument("--repeat", type=int, default=20, help="timed runs per round and side")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--isas", default="auto,avx512vnni,avx512,avx2,portable",
                    help="baton run --isa values (ones this build or CPU lacks are skipped)")
    ap.add_argument("--work", help="keep plans and outputs here (default: a temporary directory)")
    ap.add_argument("--no-torch", action="store_true",
                    help="do not time torch's quantized model (qnnpack)")
    args = ap.parse_args(argv)

    ort_version = ort_ref.check_installed()
    with open(os.path.join(args.cases, "manifest.json")) as f:
        manifest = {c["name"]: c for c in json.load(f)["cases"]}
    work = args.work or tempfile.mkdtemp(prefix="baton-bench-int8-")
    os.makedirs(work, exist_ok=True)
    rows = []
    torch_version = None
    for name in args.case or DEFAULT_CASES:
        case_dir = os.path.join(args.cases, name)
        onnx_path = os.path.join(case_dir, "model.onnx")
        inputs = case_inputs(case_dir, manifest[name])
        plan = os.path.join(work, f"{name}.baton")
        subprocess.run([args.baton, "plan", onnx_path, "--target", CPU_TARGET, "-o", plan, "-q"],
                       check=True, capture_output=True, text=True)
        feeds = {n: np.load(f) for n, f in inputs.items()}
        out = os.path.join(work, f"{name}_out")
        isas = []
        for isa in args.isas.split(","):  # keep the ones this build and CPU run
            t, used = time_baton(args.baton, plan, inputs, out, 1, isa)
            if t is None:
                print(f"{name}: --isa {isa} skipped ({used})", file=sys.stderr)
            else:
                isas.append((isa, used))
        samples = {isa: [] for isa, _ in isas}
        samples["ort"] = []
        samples["torch"] = []
        use_torch = not args.no_torch and len(inputs) == 1
        for _ in range(args.rounds):  # alternate the sides
            for isa, _ in isas:
                t, _ = time_baton(args.baton, plan, inputs, out, args.repeat, isa)
                samples[isa].append(t)
            _, t = ort_ref.run_ort(onnx_path, feeds, repeat=args.repeat)
            samples["ort"].append((statistics.median(t), min(t)))
            if use_torch:
                t, version = time_torch(name, next(iter(inputs.values())), args.repeat)
                if t is None:
                    print(f"{name}: torch not timed ({version})", file=sys.stderr)
                    use_torch = False
                else:
                    torch_version = version
                    samples["torch"].append((statistics.median(t), min(t)))

        def best(side):
            s = samples[side]
            return (min(m for m, _ in s), min(n for _, n in s)) if s else None

        ort = best("ort")
        torch_best = best("torch")
        for isa, used in isas:
            b = best(isa)
            label = f"auto ({used})" if isa == "auto" else isa
            rows.append((name, label, b, ort, torch_best))

    print(bench_vs_torch.cpu_line(FLAGS))
    print()
    print("| model | Baton ISA | Baton median / min ms | ORT median / min ms | Baton / ORT | "
          "torch qnnpack median / min ms | Baton / torch |")
    print("|---|---|---|---|---|---|---|")
    for name, label, b, o, t in rows:
        tcells = (f"{fmt_ms(t[0])} / {fmt_ms(t[1])} | {b[0] / t[0]:.2f}" if t
                  else f"{DASH} | {DASH}")
        print(f"| {name} | {label} | {fmt_ms(b[0])} / {fmt_ms(b[1])} | "
              f"{fmt_ms(o[0])} / {fmt_ms(o[1])} | {b[0] / o[0]:.2f} | {tcells} |")
    print()
    torch_note = (f"torch {torch_version} (its own quantized model, qnnpack, 1 thread)"
                  if torch_version else "torch (qnnpack) not timed")
    print(f"ONNX Runtime {ort_version} (CPU EP, 1 thread, graph optimization 'all'); "
          f"{torch_note}; {args.rounds} alternating rounds of {args.repeat} runs per side, "
          "best round's median / min per inference.")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--torch-worker":
        torch_worker(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        sys.exit(0)
    sys.exit(main(sys.argv[1:]))
