#!/usr/bin/python3
"""ONNX Runtime (CPU, one thread) as a reference and benchmark peer, from Python.

Runs tools/ort/run.js under Node with the onnxruntime-node package that
tools/ort/install.sh installs (in $BATON_ORT_DIR, default <repo>/build-ort).
Needs only numpy on the Python side, so it works with Debian's python3.

As a module:
    from ort_ref import run_ort
    outputs, times = run_ort("model.onnx", {"input": x}, repeat=10)
    # outputs: {output name: ndarray}, in the model's output order;
    # times: per-inference ms of `repeat` runs after one warm-up ([] if 0)
    outputs, _ = run_ort("model.onnx", {"input": x}, opt_level="disabled")
    # ORT's graph optimizations off: a QDQ model runs as written
    # (DequantizeLinear, float op, QuantizeLinear), not fused into QLinear*

As a command:
    ort_ref.py MODEL.onnx OUT_DIR [--input NAME=FILE.npy]... [--repeat N]
               [--profile FILE.json] [--opt-level disabled|basic|extended|all]
which is run.js's command line (it prints the output names, shapes and, with
--repeat, the median and minimum latency).
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RUN_JS = os.path.join(HERE, "ort", "run.js")


class OrtNotInstalled(RuntimeError):
    pass


def ort_dir():
    """Where tools/ort/install.sh puts onnxruntime-node."""
    return os.path.abspath(os.environ.get("BATON_ORT_DIR") or os.path.join(ROOT, "build-ort"))


def pinned_version():
    with open(os.path.join(HERE, "ort", "package.json")) as f:
        return json.load(f)["dependencies"]["onnxruntime-node"]


def check_installed():
    """Returns the installed onnxruntime-node version; raises OrtNotInstalled
    (saying how to install it) when node or the pinned version is missing."""
    hint = "run tools/ort/install.sh (tools/install_deps.sh does)"
    if shutil.which("node") is None:
        raise OrtNotInstalled(f"ONNX Runtime harness: 'node' is not on PATH; {hint}")
    d = ort_dir()
    pkg = os.path.join(d, "node_modules", "onnxruntime-node", "package.json")
    if not os.path.exists(pkg):
        raise OrtNotInstalled(f"ONNX Runtime harness: onnxruntime-node is not installed in {d}; "
                              f"{hint}")
    with open(pkg) as f:
        version = json.load(f)["version"]
    want = pinned_version()
    if version != want:
        raise OrtNotInstalled(f"ONNX Runtime harness: {d} holds onnxruntime-node {version}, "
                              f"tools/ort/package.json pins {want}; {hint}")
    return version


def _npy_name(name):
    # run.js's file name for an output (safeName).
    return "".join(c if (c.isalnum() and c.isascii()) or c in "._-" else "_" for c in name)


OPT_LEVELS = ("disabled", "basic", "extended", "all")


def run_ort(model, inputs, repeat=0, profile=None, opt_level="all", threads=1, root=None):
    """Runs `model` once on ONNX Runtime (CPU EP, intra-op threads `threads`
    (default 1), inter-op threads 1,
    sequential, graph optimization level `opt_level`, one of OPT_LEVELS) with
    `inputs` ({name: ndarray}).

    Returns (outputs, times): outputs {name: ndarray} in the model's output
    order; times the per-inference ms of `repeat` timed runs after one
    warm-up ([] when repeat is 0). `profile`: a path to copy ORT's profiler
    trace (JSON) to. `root`: the install to use instead of ort_dir() (a
    capped copy from tools/ort/cap_isa.py). Raises OrtNotInstalled, or
    RuntimeError with run.js's message when ORT rejects the model or the
    inputs."""
    if opt_level not in OPT_LEVELS:
        raise ValueError(f"opt_level must be one of {', '.join(OPT_LEVELS)}, not {opt_level!r}")
    check_installed()
    with tempfile.TemporaryDirectory(prefix="baton-ort-") as tmp:
        cmd = ["node", RUN_JS, os.path.abspath(model), os.path.join(tmp, "out")]
        for i, (name, value) in enumerate(inputs.items()):
            f = os.path.join(tmp, f"in{i}.npy")
            np.save(f, np.ascontiguousarray(value))
            cmd += ["--input", f"{name}={f}"]
        if repeat:
            cmd += ["--repeat", str(int(repeat))]
        if profile:
            cmd += ["--profile", os.path.abspath(profile)]
        if opt_level != "all":
            cmd += ["--opt-level", opt_level]
        if threads != 1:
            cmd += ["--threads", str(int(threads))]
        env = dict(os.environ, BATON_ORT_DIR=os.path.abspath(root) if root else ort_dir())
        r = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if r.returncode != 0:
            raise RuntimeError(r.stderr.strip() or f"run.js exited with {r.returncode}")
        times = json.loads(r.stdout.strip().splitlines()[-1])["times"] if repeat else []
        out_dir = os.path.join(tmp, "out")
        names = output_names(model)
        if names is None:  # no onnx package: run.js's file names, sorted
            names = sorted(f[:-4] for f in os.listdir(out_dir) if f.endswith(".npy"))
        outputs = {n: np.load(os.path.join(out_dir, _npy_name(n) + ".npy")) for n in names}
        return outputs, times


def output_names(model):
    """The graph's output names in order, or None without the onnx package."""
    try:
        import onnx
    except ImportError:
        return None
    m = onnx.load(model, load_external_data=False)
    return [o.name for o in m.graph.output]


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("out_dir")
    ap.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy")
    ap.add_argument("--repeat", type=int, default=0)
    ap.add_argument("--profile", metavar="FILE.json")
    ap.add_argument("--opt-level", choices=OPT_LEVELS, default="all")
    args = ap.parse_args(argv)
    inputs = {}
    for spec in args.input:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            ap.error(f"--input wants NAME=FILE.npy, got '{spec}'")
        if not os.path.exists(path):
            ap.error(f"--input {name}: {path} does not exist")
        inputs[name] = np.load(path)
    if not os.path.exists(args.model):
        ap.error(f"model {args.model} does not exist")
    try:
        outputs, times = run_ort(args.model, inputs, args.repeat, args.profile, args.opt_level)
    except (OrtNotInstalled, RuntimeError) as e:
        sys.exit(str(e))
    os.makedirs(args.out_dir, exist_ok=True)
    for name, value in outputs.items():
        np.save(os.path.join(args.out_dir, _npy_name(name) + ".npy"), value)
        print(f"{name}: {value.dtype} {list(value.shape)}")
    if times:
        print(f"ONNX Runtime {check_installed()}, 1 thread: {len(times)} runs, "
              f"median {statistics.median(times):.3f} ms, min {min(times):.3f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
