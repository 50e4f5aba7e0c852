#!/usr/bin/python3
"""The ONNX Runtime harness (tools/ort_ref.py, tools/ort/run.js) against
independent references; registered by tests/ort/tests.cmake.

  ort_test.py torch --work DIR
      ort.matches_torch: exports three small torch models with seeded random
      weights to ONNX (opset 13) and checks ONNX Runtime's outputs against
      torch's own (eager, one thread), never against ORT itself:
        convnet      Conv, depthwise Conv, hardswish, squeeze-excitation gating
                     (GlobalAveragePool, Relu, HardSigmoid, Mul), Linear
        transformer  one nn.TransformerEncoderLayer (4 heads, batch_first)
        tokens       int64 token ids in (Gather); ArgMax (int64), a bool mask,
                     int32 ids and the float logits out
      float outputs: max |ort - torch| / max |torch| < 1e-4 and max |torch|
      > 1e-3; integer and bool outputs: equal. A negative control runs the
      same comparison against torch on another input and expects it to fail.
  ort_test.py baton --tool BATON --work DIR
      ort.matches_baton: plans the convnet and the transformer with
      `baton plan MODEL -o PLAN -q`, runs them with
      `baton run PLAN --input input=x.npy --output-dir DIR`, and checks
      Baton's outputs against ONNX Runtime's (same rule). (The tokens model
      is left out: Baton's runtime has no int32 Add kernel.) Then a 3x3 net
      (winograd: Winograd-sized 3x3 layers at 28x28 and 14x14, a residual
      sum, a stride-2 layer and a 1x1 one) planned with `--winograd-weights`:
      `baton inspect --json` must show the transformed weights (a fifth Conv
      input) on exactly the three stride-1 3x3 layers, and its outputs must
      match ONNX Runtime's under every instruction set the CPU has.

  ort_test.py caps --work DIR
      ort.capped_copies: tools/ort/cap_isa.py's copies of the install (MLAS
      capped at AVX2, at SSE). Its patch on made-up bytes: the site found
      once is rewritten (two bytes), absent or twice is refused. On the real
      library: the copy differs from the install in exactly those two bytes,
      the install itself is untouched (the copy hard-links the rest), a second
      call reuses the copy, the copy's ONNX Runtime still matches torch on the
      convnet and the winograd models, and where the CPU has more than the
      cap (AVX-512 for avx2, AVX2 for sse) the winograd model's output bits
      differ from the uncapped install's (MLAS took other kernels).

All need tools/ort/install.sh to have run (tools/install_deps.sh runs it);
without it they fail with that advice.
"""
import argparse
import os
import shutil
import subprocess
import sys
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import ort_ref  # noqa: E402

TOLERANCE = 1e-4  # relative to the reference's largest magnitude
MIN_SCALE = 1e-3  # a reference this close to all-zero proves nothing


# ---- models (torch is imported lazily: ort.matches_baton's runtime) --------

def build_models():
    import torch
    import torch.nn as nn

    class SqueezeExcite(nn.Module):
        def __init__(self, c, r):
            super().__init__()
            self.reduce = nn.Conv2d(c, r, 1)
            self.expand = nn.Conv2d(r, c, 1)

        def forward(self, x):
            s = torch.mean(x, dim=(2, 3), keepdim=True)
            s = nn.functional.hardsigmoid(self.expand(torch.relu(self.reduce(s))))
            return x * s

    class ConvNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Conv2d(3, 16, 3, stride=2, padding=1)
            self.dw = nn.Conv2d(16, 16, 3, padding=1, groups=16)
            self.se = SqueezeExcite(16, 8)
            self.pw = nn.Conv2d(16, 24, 1)
            self.fc = nn.Linear(24, 10)

        def forward(self, x):
            x = nn.functional.hardswish(self.stem(x))
            x = nn.functional.hardswish(self.dw(x))
            x = self.pw(self.se(x))
            return self.fc(torch.flatten(torch.mean(x, dim=(2, 3)), 1))

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64,
                                                    dropout=0.0, batch_first=True)

        def forward(self, x):
            return self.layer(x)

    class Winograd(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(16, 32, 3, padding=1)
            self.b = nn.Conv2d(32, 32, 3, padding=1)
            self.down = nn.Conv2d(32, 48, 3, stride=2, padding=1)
            self.c = nn.Conv2d(48, 40, 3, padding=1)
            self.pw = nn.Conv2d(40, 10, 1)

        def forward(self, x):
            x = torch.relu(self.a(x))
            x = torch.relu(self.b(x) + x)
            x = self.c(torch.relu(self.down(x)))
            return torch.mean(self.pw(torch.relu(x)), dim=(2, 3))

    class Tokens(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(50, 16)
            self.head = nn.Linear(16, 10)

        def forward(self, ids):
            logits = self.head(self.embed(ids))
            return torch.argmax(logits, dim=-1), logits > 0, ids.to(torch.int32) + 1, logits

    g = torch.Generator().manual_seed(0)
    return {
        "convnet": (ConvNet, {"input": torch.randn(1, 3, 32, 32, generator=g)},
                    ["output"]),
        "transformer": (Encoder, {"input": torch.randn(1, 8, 32, generator=g)}, ["output"]),
        "winograd": (Winograd, {"input": torch.randn(1, 16, 28, 28, generator=g)}, ["output"]),
        "tokens": (Tokens, {"ids": torch.randint(0, 50, (2, 7), generator=g)},
                   ["argmax", "positive", "ids32", "logits"]),
    }


def export(name, work):
    """Exports model `name` (seeded weights) to WORK/NAME.onnx; returns the
    path, the inputs and torch's outputs ({name: ndarray})."""
    import torch
    torch.set_num_threads(1)
    cls, inputs, output_names = build_models()[name]
    torch.manual_seed(1)
    model = cls().eval()
    # Non-zero biases everywhere (torch initializes some to zero).
    with torch.no_grad():
        for pname, p in model.named_parameters():
            if pname.endswith("bias"):
                p.copy_(torch.randn(p.shape) * 0.1)
    args = tuple(inputs.values())
    with torch.no_grad():
        outs = model(*args)
    if isinstance(outs, torch.Tensor):
        outs = (outs,)
    path = os.path.join(work, name + ".onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, args, path, opset_version=13, input_names=list(inputs),
                          output_names=output_names)
    return (path, {k: v.numpy() for k, v in inputs.items()},
            {k: v.numpy() for k, v in zip(output_names, outs)})


# ---- comparison ------------------------------------------------------------

def compare(what, got, ref):
    """Returns an error message, or None when `got` matches `ref`."""
    if got.dtype != ref.dtype or got.shape != ref.shape:
        return f"{what}: {got.dtype}{list(got.shape)}, expected {ref.dtype}{list(ref.shape)}"
    if ref.dtype.kind == "f":
        scale = float(np.abs(ref).max())
        if not scale > MIN_SCALE:
            return f"{what}: the reference is (nearly) all zeros (max |y| = {scale:g})"
        err = float(np.abs(got.astype(np.float64) - ref).max()) / scale
        if not err < TOLERANCE:  # also catches NaN
            return f"{what}: max relative error {err:.2e} >= {TOLERANCE:g}"
        print(f"  {what}: max relative error {err:.1e} (scale {scale:.3g})")
        return None
    if not np.array_equal(got, ref):
        return f"{what}: {int((got != ref).sum())} of {ref.size} elements differ"
    if ref.dtype != np.bool_ and not np.any(ref):
        return f"{what}: the reference is all zeros"
    print(f"  {what}: equal ({ref.dtype}, {ref.size} elements)")
    return None


def cmd_torch(args):
    failures = []
    for name in ("convnet", "transformer", "tokens"):
        model, inputs, ref = export(name, args.work)
        got, _ = ort_ref.run_ort(model, inputs)
        print(f"{name}: ORT vs torch")
        if list(got) != list(ref):
            failures.append(f"{name}: ORT outputs {list(got)}, torch {list(ref)}")
            continue
        for out in ref:
            msg = compare(f"{name}.{out}", got[out], ref[out])
            if msg:
                failures.append(msg)
        if name == "convnet":
            # Negative control: the same check must reject ORT's output for
            # another input, or it proves nothing.
            other = {"input": inputs["input"] + np.float32(0.5)}
            wrong, _ = ort_ref.run_ort(model, other)
            if compare("control", wrong["output"], ref["output"]) is None:
                failures.append("negative control: another input's output passed the check")
            else:
                print("  negative control: another input's output is rejected, as it must be")
    return failures


def cmd_baton(args):
    failures = []
    for name in ("convnet", "transformer"):
        model, inputs, _ = export(name, args.work)
        x = os.path.join(args.work, name + "_input.npy")
        np.save(x, inputs["input"])
        plan = os.path.join(args.work, name + ".baton")
        out_dir = os.path.join(args.work, name + "_baton_out")
        for cmd in ([args.tool, "plan", model, "-o", plan, "-q"],
                    [args.tool, "run", plan, "--input", f"input={x}", "--output-dir", out_dir]):
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                failures.append(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()}")
                break
        else:
            ref, _ = ort_ref.run_ort(model, inputs)
            got = np.load(os.path.join(out_dir, "output.npy"))
            print(f"{name}: baton vs ORT")
            msg = compare(f"{name}.output", got, ref["output"])
            if msg:
                failures.append(msg)
    failures += check_winograd_weights(args)
    return failures


def check_winograd_weights(args):
    import json
    failures = []
    model, inputs, _ = export("winograd", args.work)
    x = os.path.join(args.work, "winograd_input.npy")
    np.save(x, inputs["input"])
    plan = os.path.join(args.work, "winograd.baton")
    r = subprocess.run([args.tool, "plan", model, "--winograd-weights", "-o", plan, "-q"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return [f"baton plan --winograd-weights failed: {r.stderr.strip()}"]
    r = subprocess.run([args.tool, "inspect", plan, "--json"], capture_output=True, text=True)
    if r.returncode != 0:
        return [f"baton inspect failed: {r.stderr.strip()}"]
    doc = json.loads(r.stdout)
    tensors = doc["tensors"]
    with_u = {}
    for node in doc["nodes"]:
        if node["op"] != "Conv":
            continue
        ins = node["inputs"]
        u = ins[4] if len(ins) > 4 else None
        with_u[node["name"]] = None if u is None else tensors[u]["shape"]
    want = {"/a/Conv": [16, 32, 16], "/b/Conv": [16, 32, 32], "/c/Conv": [16, 40, 48]}
    got = {k: v for k, v in with_u.items() if v is not None}
    print(f"winograd: Conv nodes with transformed weights: {got}")
    if got != want:
        failures.append(f"winograd: transformed weights on {got}, want {want} (all: {with_u})")
    ref, _ = ort_ref.run_ort(model, inputs)
    isas = ["auto", "portable"]
    with open("/proc/cpuinfo") as f:
        flags = f.read()
    if " avx2" in flags:
        isas.append("avx2")
    for isa in isas:
        out_dir = os.path.join(args.work, "winograd_out_" + isa)
        r = subprocess.run([args.tool, "run", plan, "--input", f"input={x}", "--output-dir",
                            out_dir, "--isa", isa], capture_output=True, text=True)
        if r.returncode != 0:
            failures.append(f"baton run --isa {isa} failed: {r.stderr.strip()}")
            continue
        print(f"winograd --isa {isa}: baton vs ORT")
        msg = compare(f"winograd.output ({isa})", np.load(os.path.join(out_dir, "output.npy")),
                      ref["output"])
        if msg:
            failures.append(msg)
    return failures


def cmd_caps(args):
    sys.path.insert(0, os.path.join(ROOT, "tools", "ort"))
    import cap_isa
    failures = []
    # The masks by what they mean (XCR0: bit 2 AVX, 5-7 the AVX-512 states;
    # MLAS needs bits 1 and 2 for AVX).
    masks = cap_isa.CAPS
    if masks["avx2"] & 0xE0 or masks["avx2"] & 0x6 != 0x6 or masks["sse"] & 0xE4 or \
            not masks["sse"] & 0x2:
        failures.append(f"masks {masks}: avx2 must keep SSE and AVX and clear AVX-512, "
                        "sse must keep SSE and clear AVX and AVX-512")
    site = cap_isa.SITE
    data = b"\x90" * 100 + site + b"\xc3" * 50
    for cap, imm in cap_isa.CAPS.items():
        got = cap_isa.patch(data, cap)
        diff = [i for i in range(len(data)) if got[i] != data[i]]
        at = 100 + cap_isa.MOV_OFFSET
        if diff != [at, at + 1] or got[at:at + 2] != bytes([0x24, imm]):
            failures.append(f"patch({cap}): bytes {diff} changed to {got[at:at + 2].hex()}, "
                            f"want [{at}, {at + 1}] -> 24{imm:02x}")
    for what, bad in (("absent", data.replace(site, b"\x90" * len(site))),
                      ("twice", data + site)):
        try:
            cap_isa.patch(bad, "avx2")
            failures.append(f"patch: the site {what} was not refused")
        except cap_isa.CapError as e:
            print(f"  site {what}: refused ({e})")

    src = ort_ref.ort_dir()
    lib = os.path.join(src, cap_isa.LIBRARY)
    with open(lib, "rb") as f:
        original = f.read()
    models = [export(name, args.work) for name in ("convnet", "winograd")]
    uncapped = {m: ort_ref.run_ort(m, inputs)[0]["output"] for m, inputs, _ in models}
    with open("/proc/cpuinfo") as f:
        flags = set(f.read().split())
    # A cap below what the CPU has must change MLAS's kernels, and with them
    # the winograd model's output bits (another summation order).
    below = {"avx2": "avx512f" in flags, "sse": "avx2" in flags}
    for cap in cap_isa.CAPS:
        dst = os.path.join(args.work, "ort-" + cap)
        shutil.rmtree(dst, ignore_errors=True)  # exercise the copy, not a reuse
        dst = cap_isa.capped_copy(cap, src, dst)
        copy_lib = os.path.join(dst, cap_isa.LIBRARY)
        with open(copy_lib, "rb") as f:
            copy = f.read()
        if len(copy) != len(original):
            failures.append(f"{cap}: the copy's library has {len(copy)} bytes, "
                            f"the install's {len(original)}")
            continue
        diff = np.nonzero(np.frombuffer(copy, np.uint8) !=
                          np.frombuffer(original, np.uint8))[0].tolist()
        if len(diff) != 2 or diff[1] != diff[0] + 1 or copy[diff[0]] != 0x24:
            failures.append(f"{cap}: the copy differs from the install at {diff[:8]}, "
                            "want two bytes (and $imm,%al)")
        else:
            print(f"{cap}: the copy's library differs in bytes {diff[0]:#x}-{diff[1]:#x}")
        mtime = os.stat(copy_lib).st_mtime_ns
        if cap_isa.capped_copy(cap, src, dst) != dst or os.stat(copy_lib).st_mtime_ns != mtime:
            failures.append(f"{cap}: a second call did not reuse the copy")
        for model, inputs, ref in models:
            got, _ = ort_ref.run_ort(model, inputs, root=dst)
            print(f"{os.path.basename(model)}: ORT capped at {cap} vs torch")
            msg = compare(f"{cap}: {os.path.basename(model)}", got["output"], ref["output"])
            if msg:
                failures.append(msg)
            if below[cap] and model.endswith("winograd.onnx"):
                if np.array_equal(got["output"], uncapped[model]):
                    failures.append(f"{cap}: the winograd model's output is bitwise the "
                                    "uncapped install's: the cap did not change MLAS's kernels")
                else:
                    print(f"  {cap}: output bits differ from the uncapped install's, as they must")
    with open(lib, "rb") as f:
        if f.read() != original:
            failures.append("the install's own library changed")
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("which", choices=["torch", "baton", "caps"])
    ap.add_argument("--work", required=True, help="scratch directory")
    ap.add_argument("--tool", help="the baton tool (for 'baton')")
    args = ap.parse_args()
    if args.which == "baton" and not args.tool:
        ap.error("'baton' needs --tool")
    os.makedirs(args.work, exist_ok=True)
    start = time.time()
    try:
        print(f"ONNX Runtime {ort_ref.check_installed()} (onnxruntime-node, {ort_ref.ort_dir()})")
        failures = {"torch": cmd_torch, "baton": cmd_baton, "caps": cmd_caps}[args.which](args)
    except ort_ref.OrtNotInstalled as e:
        failures = [str(e)]
    for f in failures:
        print("FAIL " + f)
    test = "ort.capped_copies" if args.which == "caps" else f"ort.matches_{args.which}"
    print(f"{test}: {'FAILED' if failures else 'passed'} "
          f"({time.time() - start:.1f} s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
