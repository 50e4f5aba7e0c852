#!/usr/bin/python3
"""The integer reference of QLinearConv / QLinearMatMul (make_refs.py's
qlinear_* functions, which KernelRefTest.QLinear holds the kernels to) against
ONNX Runtime's CPU kernels, bit for bit. Run by hand (about a minute):

    BATON_ORT_DIR=/path/to/build-ort tests/kernels/qlinear_vs_ort.py [--cases N] [--seed S]

Builds random QLinearConv and QLinearMatMul nodes with onnx.helper (1-D and
2-D, dense, grouped, depthwise, pointwise, strides, dilations, pads, uint8 and
int8 activations, int8 and uint8 weights, per-tensor and per-channel scales
and zero points, bias, power-of-two scales that make exact .5 ties, scales
that saturate at both ends), many nodes per model, and runs them on ONNX
Runtime at optimization levels 'all' (NHWC transform, prepacked weights) and
'disabled'. Each case's int64 accumulator is requantized with several float32
scale expressions; the report says which ones reproduce ORT on every case and
on how many elements the others differ (so a pass shows the test could tell
them apart). Extra "scale probe" nodes (every product of two 8-bit values,
per-channel scales picked near rounding boundaries; QLinearMatMul and
QLinearConv 1x1, 3x3 and depthwise, ORT's different kernels) give thousands
of such elements.

Exits 0 when make_refs.py's reference matches ORT on every case and level.
ORT's type support limits the dtypes: the output has x's dtype, and int8 x
takes int8 w only (the kernels and make_refs.py cover the other pairings).
"""
import argparse
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tools"))

import make_refs  # noqa: E402  (the reference under test)
from ort_ref import run_ort  # noqa: E402

import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

F = np.float32

# Candidate float32 expressions of the per-channel requantization scale.
CANDIDATES = make_refs.qlinear_scale_candidates(np)
REFERENCE = "(xs*ws)/ys"  # what make_refs.qlinear_scale computes

ONNX_TYPE = {np.dtype(np.uint8): TensorProto.UINT8, np.dtype(np.int8): TensorProto.INT8,
             np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int32): TensorProto.INT32}


def loguniform(rng, lo, hi, size=None):
    return np.exp(rng.uniform(np.log(lo), np.log(hi), size)).astype(np.float32)


def qrange(dt):
    info = np.iinfo(dt)
    return info.min, info.max


def rand_q(rng, dt, shape):
    lo, hi = qrange(dt)
    return rng.integers(lo, hi + 1, shape).astype(dt)


def pick_dtypes(rng):
    xdt = np.uint8 if rng.random() < 0.5 else np.int8
    wdt = (np.uint8 if rng.random() < 0.3 else np.int8) if xdt == np.uint8 else np.int8
    return xdt, wdt


def weight_quant(rng, wdt, m, per_channel):
    """w scale and zero point: per channel or per tensor; int8 weights are
    often symmetric (zero point 0), as quantizers make them."""
    count = m if per_channel else 1
    ws = loguniform(rng, 1e-4, 1e-1, count)
    if wdt == np.int8 and rng.random() < 0.5:
        wz = np.zeros(count, wdt)
    else:
        wz = rand_q(rng, wdt, count)
    if not per_channel:
        ws, wz = ws.reshape(()), wz.reshape(())
    return ws, wz


def output_quant(rng, acc, xs, ws, ydt):
    """y scale and zero point: a power of two for some cases (exact .5 ties),
    otherwise sized so that typical outputs span a random part of the range
    (some saturate at both ends)."""
    if rng.random() < 0.2:
        ys = F(2.0 ** -int(rng.integers(0, 12)))
    else:
        med = float(np.median(np.abs(acc))) + 1.0
        target = 2.0 ** rng.uniform(2.0, 9.0)
        ys = F(float(xs) * float(np.mean(ws)) * med / target)
    return ys, rand_q(rng, ydt, ()).reshape(())


# ------------------------------------------------------------------- cases

def conv_case(rng):
    sp = 1 if rng.random() < 0.2 else 2
    xdt, wdt = pick_dtypes(rng)
    kind = rng.choice(["dense", "dense", "group", "depthwise", "pointwise"])
    n = int(rng.integers(1, 3))
    if kind == "depthwise":
        c = int(rng.integers(1, 17))
        group, m = c, c * int(rng.integers(1, 3))
    elif kind == "group":
        group = int(rng.integers(2, 5))
        c, m = group * int(rng.integers(1, 5)), group * int(rng.integers(1, 5))
    else:
        group, c, m = 1, int(rng.integers(1, 17)), int(rng.integers(1, 17))
    if kind == "pointwise":
        kernel, dil = [1] * sp, [1] * sp
        strides = [int(rng.integers(1, 3)) for _ in range(sp)]
        pads = [0] * (2 * sp)
    else:
        kernel = [int(rng.integers(1, 6)) for _ in range(sp)]
        dil = [int(rng.integers(2, 4)) if rng.random() < 0.2 else 1 for _ in range(sp)]
        strides = [int(rng.integers(1, 4)) for _ in range(sp)]
        pads = [int(rng.integers(0, kernel[i % sp])) for i in range(2 * sp)]
    spatial = []
    for i in range(sp):
        need = max(1, (kernel[i] - 1) * dil[i] + 1 - pads[i] - pads[sp + i])
        spatial.append(int(rng.integers(need, need + 12)))
    x = rand_q(rng, xdt, (n, c, *spatial))
    w = rand_q(rng, wdt, (m, c // group, *kernel))
    xs = loguniform(rng, 1e-3, 1e-1).reshape(())
    xz = rand_q(rng, xdt, ()).reshape(())
    per_channel = rng.random() < 0.5
    ws, wz = weight_quant(rng, wdt, m, per_channel)
    ties = rng.random() < 0.2  # powers of two: requantization scales 2^-1 .. 2^-3, exact .5s
    if ties:
        xs = F(2.0 ** -int(rng.integers(3, 8)))
        ws = (F(2.0) ** -rng.integers(3, 6, ws.shape)).astype(np.float32).reshape(ws.shape)
    bias = None
    r = rng.random()
    if r < 0.45:
        bias = rng.integers(-2 ** int(rng.integers(4, 20)), 2 ** int(rng.integers(4, 20)),
                            (m,)).astype(np.int32)
    elif r < 0.5:
        bias = rng.integers(-2 ** 31, 2 ** 31, (m,)).astype(np.int32)  # wraps like ORT's int32 add
    acc = make_refs.qlinear_conv_acc(np, x, xz, w, wz, bias, strides, pads, dil, group)
    ys, yz = output_quant(rng, acc, xs, ws, xdt)
    if ties:
        ys = F(xs * F(2.0 ** -6))
    inputs = dict(x=x, xs=F(xs).reshape(()), xz=xz, w=w, ws=ws, wz=wz, ys=F(ys).reshape(()), yz=yz)
    if bias is not None:
        inputs["b"] = bias
    attrs = dict(kernel_shape=kernel, strides=strides, pads=pads, dilations=dil, group=group)
    want = make_refs.qlinear_conv_ref(np, x, xs, xz, w, ws, wz, ys, yz, bias, strides, pads, dil,
                                      group)
    return dict(op="QLinearConv", inputs=inputs, attrs=attrs, acc=acc, axis=1, m=m, want=want,
                desc=f"{kind} {sp}-D x{x.shape} {x.dtype}/{w.dtype} w{w.shape} s{strides} "
                     f"p{pads} d{dil} g{group} perch={per_channel} bias={bias is not None}")


def matmul_case(rng):
    adt, bdt = pick_dtypes(rng)
    mm, k, n = int(rng.integers(1, 21)), int(rng.integers(1, 300)), int(rng.integers(1, 41))
    if rng.random() < 0.1:
        k = int(rng.integers(300, 3000))
    batch = [[], [int(rng.integers(1, 4))], [2, int(rng.integers(1, 3))]][int(rng.integers(0, 3))]
    a = rand_q(rng, adt, (*batch, mm, k))
    b = rand_q(rng, bdt, (k, n))
    a_s = loguniform(rng, 1e-3, 1e-1).reshape(())
    az = rand_q(rng, adt, ()).reshape(())
    per_col = rng.random() < 0.5
    bs, bz = weight_quant(rng, bdt, n, per_col)
    acc = make_refs.qlinear_matmul_acc(np, a, az, b, bz, None, False)
    ys, yz = output_quant(rng, acc, a_s, bs, adt)
    want = make_refs.qlinear_matmul_ref(np, a, a_s, az, b, bs, bz, ys, yz, None, False)
    return dict(op="QLinearMatMul", inputs=dict(a=a, as_=F(a_s).reshape(()), az=az, b=b, bs=bs,
                                                bz=bz, ys=F(ys).reshape(()), yz=yz),
                acc=acc, axis=acc.ndim - 1, m=n, want=want,
                desc=f"a{a.shape} {a.dtype}/{b.dtype} b{b.shape} percol={per_col}")


PROBE_KINDS = ("matmul", "conv1x1", "conv3x3", "depthwise3x3")


def scale_probe_case(rng, kind):
    """acc = (a - az) * (b - bz) for every 8-bit a (the columns) and every
    8-bit b (the output channels), per-channel scales next to rounding
    boundaries (make_refs.qlinear_boundary_scales). `kind` picks ORT's kernel: a
    QLinearMatMul (K = 1), or a QLinearConv whose other taps hold the zero
    point: 1x1, 3x3 dense (C = 1), 3x3 depthwise (C = 256)."""
    adt, bdt = pick_dtypes(rng)
    lo, hi = qrange(adt)
    avals = np.arange(lo, hi + 1).astype(adt)
    blo, bhi = qrange(bdt)
    bvals = np.arange(blo, bhi + 1).astype(bdt)
    a_s = loguniform(rng, 1e-3, 1e-1).reshape(())
    az = rand_q(rng, adt, ()).reshape(())
    bz = np.zeros(256, bdt) if bdt == np.int8 else np.full(256, 128, bdt)
    ys = F(float(a_s) * 2.0 ** rng.uniform(-12.0, -4.0))
    yz = rand_q(rng, adt, ()).reshape(())
    vlo, vhi = lo - int(yz), hi - int(yz)
    bs = make_refs.qlinear_boundary_scales(np, rng, avals.astype(np.int64) - int(az),
                                           bvals.astype(np.int64) - bz, a_s, ys, vlo, vhi)
    desc = f"scale probe {kind} {adt.__name__}/{bdt.__name__}"
    if kind == "matmul":
        a, b = avals.reshape(256, 1), bvals.reshape(1, 256)
        acc = make_refs.qlinear_matmul_acc(np, a, az, b, bz, None, False)
        want = make_refs.qlinear_matmul_ref(np, a, a_s, az, b, bs, bz, ys, yz, None, False)
        return dict(op="QLinearMatMul", inputs=dict(a=a, as_=F(a_s).reshape(()), az=az, b=b,
                                                    bs=bs, bz=bz, ys=F(ys).reshape(()), yz=yz),
                    acc=acc, axis=1, m=256, want=want, desc=desc)
    c, group, kk = (256, 256, 3) if kind == "depthwise3x3" else (1, 1, 1 if kind == "conv1x1" else 3)
    x = np.broadcast_to(avals.reshape(1, 1, 16, 16), (1, c, 16, 16)).copy()
    w = np.broadcast_to(bz.reshape(256, 1, 1, 1), (256, 1, kk, kk)).copy()
    w[:, 0, kk // 2, kk // 2] = bvals
    strides, pads, dil = [1, 1], [kk // 2] * 4, [1, 1]
    acc = make_refs.qlinear_conv_acc(np, x, az, w, bz, None, strides, pads, dil, group)
    want = make_refs.qlinear_conv_ref(np, x, a_s, az, w, bs, bz, ys, yz, None, strides, pads, dil,
                                      group)
    attrs = dict(kernel_shape=[kk, kk], strides=strides, pads=pads, dilations=dil, group=group)
    return dict(op="QLinearConv", inputs=dict(x=x, xs=F(a_s).reshape(()), xz=az, w=w, ws=bs, wz=bz,
                                              ys=F(ys).reshape(()), yz=yz),
                attrs=attrs, acc=acc, axis=1, m=256, want=want, desc=desc)


# ------------------------------------------------------------------- ORT

def build_model(cases, path):
    """One node per case; the activation is a graph input, the rest
    initializers (as in a quantized model)."""
    nodes, graph_inputs, outputs, inits = [], [], [], []
    for i, c in enumerate(cases):
        names = []
        for key, value in c["inputs"].items():
            name = f"{key}{i}"
            names.append(name)
            if key in ("x", "a"):
                graph_inputs.append(helper.make_tensor_value_info(name, ONNX_TYPE[value.dtype],
                                                                  value.shape))
            else:
                inits.append(numpy_helper.from_array(np.asarray(value), name))
        attrs = c.get("attrs", {})
        nodes.append(helper.make_node(c["op"], names, [f"y{i}"], name=f"n{i}", **attrs))
        outputs.append(helper.make_tensor_value_info(f"y{i}", ONNX_TYPE[c["want"].dtype],
                                                     c["want"].shape))
    graph = helper.make_graph(nodes, "qlinear", graph_inputs, outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return {f"{k}{i}": v for i, c in enumerate(cases) for k, v in c["inputs"].items()
            if k in ("x", "a")}


def candidate_output(c, formula):
    ins = c["inputs"]
    if c["op"] == "QLinearConv":
        xs, ws, ys = ins["xs"], ins["ws"], ins["ys"]
    else:
        xs, ws, ys = ins["as_"], ins["bs"], ins["ys"]
    scale = np.broadcast_to(CANDIDATES[formula](xs, np.asarray(ws, np.float32).reshape(-1), ys),
                            (c["m"],))
    return make_refs.qlinear_requantize(np, c["acc"], scale, ys, ins["yz"], c["want"].dtype, None,
                                        c["axis"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=300, help="random cases per op")
    ap.add_argument("--probes", type=int, default=12, help="scale probe nodes per kind")
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--per-model", type=int, default=50)
    ap.add_argument("--levels", default="all,disabled")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    groups = {
        "QLinearConv": [conv_case(rng) for _ in range(args.cases)],
        "QLinearMatMul": [matmul_case(rng) for _ in range(args.cases)],
    }
    for kind in PROBE_KINDS:
        groups[f"scale probes, {kind}"] = [scale_probe_case(rng, kind)
                                           for _ in range(args.probes)]
    levels = args.levels.split(",")
    ok = True
    with tempfile.TemporaryDirectory(prefix="qlinear-ort-") as tmp:
        for label, cases in groups.items():
            stats = {f: [0, 0] for f in CANDIDATES}  # cases matched, elements differing
            ref_fail = 0
            elements = 0
            for start in range(0, len(cases), args.per_model):
                chunk = cases[start:start + args.per_model]
                path = os.path.join(tmp, "m.onnx")
                feeds = build_model(chunk, path)
                cand = [{f: candidate_output(c, f) for f in CANDIDATES} for c in chunk]
                for level in levels:
                    got, _ = run_ort(path, feeds, opt_level=level)
                    for i, c in enumerate(chunk):
                        y = got[f"y{i}"]
                        elements += y.size
                        if y.shape != c["want"].shape or not np.array_equal(y, c["want"]):
                            ref_fail += 1
                            if ref_fail <= 5:
                                diff = (y.astype(int) - c["want"].astype(int)) if \
                                    y.shape == c["want"].shape else None
                                print(f"  MISMATCH [{level}] {c['desc']}: "
                                      f"{'shape ' + str(y.shape) if diff is None else np.count_nonzero(diff)} "
                                      f"elements differ, max {0 if diff is None else np.abs(diff).max()}")
                        for f, out in cand[i].items():
                            d = int(np.count_nonzero(out != y))
                            stats[f][0] += d == 0
                            stats[f][1] += d
            runs = len(cases) * len(levels)
            print(f"{label}: {len(cases)} cases x {len(levels)} levels ({', '.join(levels)}), "
                  f"{elements} output elements; make_refs reference matches ORT on "
                  f"{runs - ref_fail}/{runs}")
            for f, (matched, differ) in stats.items():
                mark = "  <- make_refs.qlinear_scale" if f == REFERENCE else ""
                print(f"  scale {f:20s} matches {matched:4d}/{runs} runs, "
                      f"{differ:6d} elements differ{mark}")
            ok = ok and ref_fail == 0
    print("OK: bit-exact" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
