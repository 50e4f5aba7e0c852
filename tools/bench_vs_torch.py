#!/usr/bin/python3
"""Times Baton's single-thread CPU plan, ONNX Runtime and PyTorch (all one
thread) on the same models, in one run on this machine, and prints a
Markdown table.

usage: bench_vs_torch.py BATON_TOOL OUT_DIR [--models m1,m2,...] [--repeat N] [--size S]
                         [--isas auto,avx2,portable] [--no-torch] [--no-ort]
                         [--docs docs/performance.md]

For each model: export it (torchvision architectures with
tools/export_torchvision.py, random weights; the models in EXTRA_MODELS
below with their own builder), plan the ONNX file for the single-CPU target,
check Baton's and ONNX Runtime's outputs against torch's, then time the
three alternately (3 rounds of N runs after a warm-up; so machine noise
hits all of them) and report the best round's median and minimum latency
per inference in ms.

- Baton: `baton run --cooperative --repeat N --isa ISA` (one thread).
- ONNX Runtime: tools/ort/run.js (onnxruntime-node as pinned by
  tools/ort/package.json, installed by tools/ort/install.sh), on the very
  ONNX file Baton plans; CPU execution provider, intra- and inter-op threads
  1, sequential, all graph optimizations.
- torch: a subprocess with torch.set_num_threads(1), the same architecture
  and the same weights as the exported file (eager mode, no_grad).

Each entry of --isas is one row per model, and caps Baton and torch at the
same instruction set: Baton through `baton run --isa`, torch through its own
dispatch controls, ATEN_CPU_CAPABILITY and oneDNN's DNNL_MAX_CPU_ISA. "auto"
leaves both at their defaults (what a user gets); "portable" is Baton's
baseline copy (SSE2 on x86-64) against torch limited to SSE4.1. ONNX Runtime
has no instruction-set cap a user can set (its MLAS kernels choose by CPUID
and XCR0), so the "avx2" and "portable" rows run a copy of it whose MLAS sees
no AVX-512 state (its AVX2+FMA kernels) or no AVX state (its SSE kernels),
made by tools/ort/cap_isa.py: ONNX Runtime as on a machine without AVX-512 or
AVX. "auto", "avx512" and "avx512vnni" rows run the install as it is.

A model Baton cannot plan or run still gets a row: its Baton cells say
"unsupported" with the first line of the error, and the others are measured.

--docs FILE also writes the table, the CPU line (model and flags) and the
command into FILE between its "bench_vs_torch.py --docs" marker lines
(docs/performance.md has them), leaving the rest of FILE as it was; without
exactly one pair of markers it writes nothing and says so.
"""
import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# The 8 models of the performance issue.
DEFAULT_MODELS = ("mobilenet_v2,resnet18,squeezenet1_1,mnasnet0_5,efficientnet_b0,"
                  "shufflenet_v2_x0_5,mobilenet_v3_small,googlenet")
ROUNDS = 3
DASH = "—"

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


# ---- models that are not torchvision architectures -------------------------
# EXTRA_MODELS maps a name to a function returning (torch module in eval mode,
# example input tensor), built deterministically (torch.manual_seed(0)) so the
# export and the torch timing worker get the same weights. The graph's input
# is named "input" and its output "output". To add a model, add a builder.

def build_kws_lstm():
    """Keyword spotting: 2-layer LSTM (hidden 64) over 49 frames of 40 MFCCs,
    the last step's state into 12 classes."""
    import torch
    import torch.nn as nn

    class KwsLstm(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(input_size=40, hidden_size=64, num_layers=2, batch_first=True)
            self.fc = nn.Linear(64, 12)

        def forward(self, x):
            y, _ = self.lstm(x)
            return self.fc(y[:, -1, :])

    torch.manual_seed(0)
    return KwsLstm().eval(), torch.randn(1, 49, 40, generator=torch.Generator().manual_seed(0))


EXTRA_MODELS = {
    "kws_lstm": build_kws_lstm,
}


def build_torch_model(name, size):
    """(module, input tensor) for `name`, with the weights and input that
    export() writes (torchvision: export_torchvision.py's seed-0 recipe)."""
    import torch
    if name in EXTRA_MODELS:
        return EXTRA_MODELS[name]()
    import export_torchvision as ex
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(0)
    model = ex.build_model(name)
    ex.randomize_batchnorm(model, generator)
    ex.reinit_zero_linears(model, 0)
    model.eval()
    x = torch.randn(1, 3, size, size, generator=generator, dtype=torch.float32)
    return model, x


def export(name, out_dir, size):
    """Writes out_dir/<name>.onnx, input.npy and output.npy (torch's output);
    returns the ONNX path."""
    onnx_path = os.path.join(out_dir, f"{name}.onnx")
    if name not in EXTRA_MODELS:
        subprocess.run([sys.executable, os.path.join(HERE, "export_torchvision.py"), name,
                        out_dir, "--size", str(size)], check=True, capture_output=True)
        return onnx_path
    import warnings
    import torch
    torch.set_num_threads(1)
    model, x = build_torch_model(name, size)
    with torch.no_grad():
        y = model(x)
    os.makedirs(out_dir, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (x,), onnx_path, opset_version=13,
                          input_names=["input"], output_names=["output"])
    np.save(os.path.join(out_dir, "input.npy"), x.numpy().astype(np.float32))
    np.save(os.path.join(out_dir, "output.npy"), y.numpy().astype(np.float32))
    return onnx_path


# ---- the three sides --------------------------------------------------------

def torch_worker(name, inp, repeat, size):
    """Runs in a subprocess (so the ISA caps apply from the start): prints
    a JSON list of per-inference times in ms."""
    import torch
    torch.set_num_threads(1)
    model, _ = build_torch_model(name, size)
    x = torch.from_numpy(np.load(inp))
    print(json.dumps({"times": time_module(model, x, repeat), "version": torch.__version__}))


def time_module(model, x, repeat):
    """Per-inference times in ms of `repeat` runs of torch module `model` on
    x, after one warm-up run (also bench_int8.py's torch column)."""
    import time
    import torch
    times = []
    with torch.no_grad():
        model(x)  # warm-up
        for _ in range(repeat):
            t0 = time.perf_counter()
            model(x)
            times.append((time.perf_counter() - t0) * 1e3)
    return times


def time_torch(name, inp, repeat, isa, size):
    env = dict(os.environ, **TORCH_ISA_ENV[isa])
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--torch-worker", name, inp,
                        str(repeat), str(size)], check=True, capture_output=True, text=True,
                       env=env)
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


def rel_err(got, ref):
    return float(np.abs(got.astype(np.float64) - ref).max() / np.abs(ref).max())


def first_line(text):
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[0] if lines else "no message"


def cpu_line(wanted=("avx2", "avx512f", "avx512_vnni", "fma", "sse4_1")):
    """Model name and whether the CPU has each of the `wanted` flags."""
    model, flags = "?", set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "model name" and model == "?":
                    model = value.strip()
                elif key == "flags" and not flags:
                    flags = set(value.split())
    except OSError:
        pass
    return (f"CPU: {model}, {os.cpu_count()} logical CPUs; flags: " +
            ", ".join(f"{w} {'yes' if w in flags else 'no'}" for w in wanted))


# ---- main -------------------------------------------------------------------

def fmt_ms(v):
    return f"{v:.3f}" if v < 1 else f"{v:.2f}" if v < 10 else f"{v:.1f}"


def fmt_pair(med_min):
    if isinstance(med_min, tuple):
        return f"{fmt_ms(med_min[0])} / {fmt_ms(med_min[1])}"
    return med_min


def ratio(a, b):
    return f"{a[0] / b[0]:.2f}" if isinstance(a, tuple) and isinstance(b, tuple) else DASH


# --docs FILE replaces what lies between these two lines of FILE (docs/performance.md
# has them) with the table, the CPU line and the command; the rest of FILE is kept
# byte for byte.
DOCS_BEGIN = "<!-- bench_vs_torch.py --docs: begin -->"
DOCS_END = "<!-- bench_vs_torch.py --docs: end -->"


def replace_docs_block(text, block):
    """`text` with the lines between DOCS_BEGIN and DOCS_END replaced by `block`.
    ValueError unless each marker occurs exactly once, the begin marker first."""
    if text.count(DOCS_BEGIN) != 1 or text.count(DOCS_END) != 1:
        raise ValueError(f"expected exactly one '{DOCS_BEGIN}' and one '{DOCS_END}' line")
    begin = text.index(DOCS_BEGIN) + len(DOCS_BEGIN)
    end = text.index(DOCS_END)
    if end < begin:
        raise ValueError(f"'{DOCS_END}' comes before '{DOCS_BEGIN}'")
    return text[:begin] + "\n" + block.rstrip("\n") + "\n" + text[end:]


def write_docs_block(path, block):
    """Replaces `path`'s block (replace_docs_block) through a temporary file in
    the same folder, renamed over it: `path` is either as it was or whole.
    OSError or ValueError leave it untouched and no temporary file behind."""
    with open(path, encoding="utf-8") as f:
        text = replace_docs_block(f.read(), block)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)),
                               prefix=os.path.basename(path) + ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, os.stat(path).st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "--torch-worker":
        torch_worker(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
        return
    ap = argparse.ArgumentParser(
        description="Baton vs ONNX Runtime vs torch, one thread, one Markdown table.")
    ap.add_argument("tool", help="the baton tool (build/tools/baton)")
    ap.add_argument("out", help="scratch directory (exports, plans, outputs)")
    ap.add_argument("--models", default=DEFAULT_MODELS,
                    help="comma-separated torchvision names or " + ", ".join(EXTRA_MODELS))
    ap.add_argument("--repeat", type=int, default=20, help="timed runs per round and side")
    ap.add_argument("--size", type=int, default=224, help="torchvision input height and width")
    ap.add_argument("--isas", default="auto,avx2,portable")
    ap.add_argument("--no-torch", action="store_true",
                    help="do not time torch (errors are still against torch's output)")
    ap.add_argument("--no-ort", action="store_true", help="leave ONNX Runtime out")
    ap.add_argument("--docs", metavar="FILE",
                    help="also write the table, with the CPU's flags and this command, "
                         "between FILE's bench_vs_torch.py markers (docs/performance.md)")
    ap.add_argument("--no-winograd-weights", action="store_true",
                    help="plan without --winograd-weights (ONNX Runtime transforms its weights "
                    "once, at session creation; the option is Baton's way to do the same)")
    args = ap.parse_args()
    if args.docs:
        # Before the minutes of timing: a file without its markers fails now.
        try:
            with open(args.docs, encoding="utf-8") as f:
                replace_docs_block(f.read(), "")
        except (OSError, ValueError) as e:
            sys.exit(f"--docs {args.docs}: {e}")
    plan_flags = [] if args.no_winograd_weights else ["--winograd-weights"]
    isas = args.isas.split(",")
    for isa in isas:
        if isa not in TORCH_ISA_ENV:
            ap.error(f"unknown ISA {isa}; one of {', '.join(TORCH_ISA_ENV)}")
    ort_version = None
    ort_roots = {}  # ISA row -> the ONNX Runtime install it runs (absent: none)
    if not args.no_ort:
        import ort_ref
        try:
            ort_version = ort_ref.check_installed()
        except ort_ref.OrtNotInstalled as e:
            sys.exit(f"{e}\n(or pass --no-ort)")
        sys.path.insert(0, os.path.join(HERE, "ort"))
        import cap_isa
        for isa in isas:
            try:
                ort_roots[isa] = cap_isa.install_for_isa(isa)
            except (cap_isa.CapError, ort_ref.OrtNotInstalled) as e:
                print(f"no ONNX Runtime in the {isa} row: {e}", file=sys.stderr)
    os.makedirs(args.out, exist_ok=True)
    rows = []
    torch_version = "?"
    for name in args.models.split(","):
        d = os.path.join(args.out, name)
        print(f"== {name}", file=sys.stderr, flush=True)
        onnx_path = export(name, d, args.size)
        inp = os.path.join(d, "input.npy")
        ref = np.load(os.path.join(d, "output.npy"))

        plan = os.path.join(d, "cpu.baton")
        baton_error = None
        r = subprocess.run([args.tool, "plan", onnx_path, "-o", plan, "-q"] + plan_flags,
                           capture_output=True, text=True)
        if r.returncode != 0:
            baton_error = f"unsupported ({first_line(r.stderr + r.stdout)})"

        # ONNX Runtime: correctness once per install, on the file Baton plans.
        ort_checks = {}  # install -> (error cell, failure or None)
        for root in sorted(set(ort_roots.values())):
            try:
                got, _ = ort_ref.run_ort(onnx_path, {"input": np.load(inp)}, root=root)
                ort_checks[root] = (f"{rel_err(next(iter(got.values())), ref):.1e}", None)
            except RuntimeError as e:
                ort_checks[root] = (DASH, f"failed ({first_line(str(e))})")

        for isa in isas:
            baton_err, used = DASH, isa
            row_baton_error = baton_error
            out = os.path.join(d, "out_" + isa)
            if not row_baton_error:
                # Correctness first, with these kernels (skipped where the build
                # or CPU does not have them).
                r = subprocess.run([args.tool, "run", plan, "--input", f"input={inp}",
                                    "--output-dir", out, "--cooperative", "--isa", isa],
                                   capture_output=True, text=True)
                if r.returncode != 0 and "not available" in r.stderr:
                    print(f"skipping {isa}: {r.stderr.strip()}", file=sys.stderr)
                    continue
                if r.returncode != 0:
                    row_baton_error = f"unsupported ({first_line(r.stderr)})"
                else:
                    baton_err = f"{rel_err(np.load(os.path.join(out, 'output.npy')), ref):.1e}"
            ort_root = ort_roots.get(isa)
            ort_err, ort_error = ort_checks[ort_root] if ort_root else (DASH, None)
            with_ort = ort_root and not ort_error
            samples = {"baton": [], "ort": [], "torch": []}
            for _ in range(ROUNDS):  # alternate the sides
                if not args.no_torch:
                    t, torch_version = time_torch(name, inp, args.repeat, isa, args.size)
                    samples["torch"].append((statistics.median(t), min(t)))
                if not row_baton_error:
                    bm, bn, used = time_baton(args.tool, plan, inp, out, args.repeat, isa)
                    samples["baton"].append((bm, bn))
                if with_ort:
                    _, t = ort_ref.run_ort(onnx_path, {"input": np.load(inp)}, repeat=args.repeat,
                                           root=ort_root)
                    samples["ort"].append((statistics.median(t), min(t)))

            def best(side):
                s = samples[side]
                return (min(m for m, _ in s), min(n for _, n in s)) if s else DASH

            baton = row_baton_error or best("baton")
            ort = (ort_error or best("ort")) if ort_root else DASH
            torch_t = best("torch")
            label = f"auto ({used})" if isa == "auto" and not row_baton_error else isa
            rows.append((name, label, baton, ort, torch_t, baton_err, ort_err))

    out = [cpu_line(), ""]
    out.append("| model | ISA | baton median / min ms | ORT median / min ms "
               "| torch median / min ms | baton/ORT | baton/torch "
               "| max rel. err. baton vs torch | max rel. err. ORT vs torch |")
    out.append("|---|---|---|---|---|---|---|---|---|")
    for name, label, baton, ort, torch_t, b_err, o_err in rows:
        out.append(f"| {name} | {label} | {fmt_pair(baton)} | {fmt_pair(ort)} "
                   f"| {fmt_pair(torch_t)} | {ratio(baton, ort)} | {ratio(baton, torch_t)} "
                   f"| {b_err} | {o_err} |")
    sizes = f"torchvision input 1x3x{args.size}x{args.size}"
    if any(n in EXTRA_MODELS for n in args.models.split(",")):
        sizes += "; " + ", ".join(f"{n}: its own input" for n in args.models.split(",")
                                  if n in EXTRA_MODELS)
    torch_note = "torch not timed" if args.no_torch else f"torch {torch_version}, 1 thread"
    ort_note = ("ONNX Runtime not run" if not ort_version else
                f"ONNX Runtime {ort_version} (onnxruntime-node, CPU EP, intra/inter-op threads 1, "
                "sequential, all graph optimizations), on the same ONNX file"
                + "".join(f"; in the {isa} row its MLAS capped at "
                          f"{cap_isa.ISA_CAPS[isa].upper()} (tools/ort/cap_isa.py)"
                          for isa in isas if cap_isa.ISA_CAPS.get(isa) and isa in ort_roots))
    plan_note = " ".join(["baton plan"] + plan_flags)
    out.append("")
    out.append(f"({torch_note}; {plan_note}, baton run --cooperative, 1 thread; {ort_note}; "
               f"{sizes}; {args.repeat} runs x {ROUNDS} rounds after a warm-up, alternating, "
               "the best round's median and min shown; errors are max |y - torch| / max |torch|)")
    print("\n".join(out))
    if args.docs:
        command = " ".join(["tools/bench_vs_torch.py"] + [shlex.quote(a) for a in sys.argv[1:]])
        block = (f"Generated {time.strftime('%Y-%m-%d')} by `{command}`:\n\n" + "\n".join(out))
        try:
            write_docs_block(args.docs, block)
        except (OSError, ValueError) as e:
            sys.exit(f"--docs {args.docs}: {e}; the table is printed above, nothing was written")
        print(f"wrote the table into {args.docs}", file=sys.stderr)


if __name__ == "__main__":
    main()
