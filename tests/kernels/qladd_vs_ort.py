#!/usr/bin/python3
"""make_refs.qladd_ref (the reference KernelRefTest.QLinearAdd holds the
QLinearAdd kernel to) against ONNX Runtime, bit for bit. Run by hand (about
a minute):

    BATON_ORT_DIR=/path/to/build-ort tests/kernels/qladd_vs_ort.py [--cases N] [--seed S]

Three parts, each many nodes per model:
 1. random com.microsoft QLinearAdd nodes (uint8 and int8, random shapes and
    broadcasting: same shape, scalar a or b, per channel [1, C, 1, 1] either
    way, outer products, last axis; log-uniform and power-of-two scales,
    output scales that saturate), at optimization level 'disabled' (the node
    runs as written) and 'all';
 2. "grid" nodes: every pair of 8-bit values (a [256, 256] against b of the
    same shape, [256, 1] or [1, 256] broadcasts, and the transposes), with
    scales chosen so that candidate formulas disagree (the report names the
    candidates and on how many elements each differs from ORT, so a pass
    shows the test could tell them apart);
 3. QDQ models, DequantizeLinear -> Add -> QuantizeLinear, at level 'all'
    (ORT fuses them into QLinearAdd): the same reference must match; the
    same models at level 'disabled' (float Add) are reported for
    information (they differ: the fusion is what makes them match).

Exits 0 when qladd_ref matches ORT on every element of every part.
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
OT = {np.dtype(np.uint8): TensorProto.UINT8, np.dtype(np.int8): TensorProto.INT8}
KEYS = ("a", "as", "az", "b", "bs", "bz", "cs", "cz")


def ref(c):
    return make_refs.qladd_ref(np, c["a"], c["as"], c["az"], c["b"], c["bs"], c["bz"], c["cs"],
                               c["cz"])


# Formulas that are not ORT's, to show the cases tell formulas apart.
def cand_float_sum(c):
    """(as*(a-za) + bs*(b-zb)) / cs, rounded, + zc (MLAS's portable C++)."""
    dt = c["a"].dtype
    va = F(c["as"]) * (c["a"].astype(np.int32) - int(c["az"])).astype(F)
    vb = F(c["bs"]) * (c["b"].astype(np.int32) - int(c["bz"])).astype(F)
    v = ((va + vb).astype(F) / F(c["cs"])).astype(F)
    info = np.iinfo(dt)
    return np.clip(np.rint(v).astype(np.int64) + int(c["cz"]), info.min, info.max).astype(dt)


def cand_no_fma(c):
    """ORT's expression without fused multiply-adds (MLAS's SSE2 kernel)."""
    dt = c["a"].dtype
    ra, rb = F(F(c["as"]) / F(c["cs"])), F(F(c["bs"]) / F(c["cs"]))
    fixed = F(F(int(c["cz"])) - F(F(ra * F(int(c["az"]))) + F(rb * F(int(c["bz"])))))
    a, b = np.broadcast_arrays(c["a"].astype(np.int32).astype(F), c["b"].astype(np.int32).astype(F))
    v = ((fixed + a * ra).astype(F) + (b * rb).astype(F)).astype(F)
    info = np.iinfo(dt)
    return np.clip(np.rint(v), info.min, info.max).astype(dt)


def cand_no_swap(c):
    """ORT's formula, but never exchanging a and b for a broadcast a."""
    a_dims = (1,) * (max(c["a"].ndim, c["b"].ndim) - c["a"].ndim) + c["a"].shape
    out = np.broadcast_shapes(c["a"].shape, c["b"].shape)
    # a broadcast along the innermost dimension: evaluate with a 'full' a
    if any(o > 1 for o in out) and a_dims[max(i for i, o in enumerate(out) if o > 1)] == 1:
        c = dict(c, a=np.broadcast_to(c["a"], out).copy())
    return ref(c)


CANDIDATES = {"float_sum": cand_float_sum, "no_fma": cand_no_fma, "no_swap": cand_no_swap}


def loguniform(rng, lo, hi):
    return F(np.exp(rng.uniform(np.log(lo), np.log(hi))))


def rand_case(rng, sa, sb, dt=None):
    dt = dt or (np.uint8 if rng.random() < 0.5 else np.int8)
    info = np.iinfo(dt)
    c = dict(a=rng.integers(info.min, info.max + 1, sa).astype(dt),
             b=rng.integers(info.min, info.max + 1, sb).astype(dt))
    for k in ("as", "bs", "cs"):
        c[k] = F(2.0 ** -int(rng.integers(2, 9))) if rng.random() < 0.3 else loguniform(rng, 1e-3, 1e-1)
    r = rng.random()
    if r < 0.2:
        c["cs"] = F(max(c["as"], c["bs"]) * F(2.0 ** int(rng.integers(-1, 3))))
    elif r < 0.3:
        c["cs"] = F(min(c["as"], c["bs"]) * F(2.0 ** -int(rng.integers(2, 6))))  # saturates
    for k in ("az", "bz", "cz"):
        c[k] = np.array(rng.integers(info.min, info.max + 1), dt)
    return c


SHAPES = [((17,), (17,)), ((2, 3, 4, 5), (2, 3, 4, 5)), ((2, 3, 4, 5), ()), ((), (2, 3, 4, 5)),
          ((2, 3, 4, 5), (1,)), ((1,), (3, 7)), ((2, 8, 5, 5), (1, 8, 1, 1)),
          ((1, 8, 1, 1), (2, 8, 5, 5)), ((4, 1), (1, 7)), ((3, 1, 5), (1, 4, 5)),
          ((2, 3, 6), (6,)), ((6,), (2, 3, 6)), ((1, 1), (1,)), ((5, 1), (5, 1)), ((3, 40), (3, 1))]


def random_cases(rng, n):
    cases = []
    for i in range(n):
        sa, sb = SHAPES[i % len(SHAPES)]
        if i % 5 == 4:  # a random broadcast pair
            r = int(rng.integers(1, 5))
            sa = tuple(int(rng.integers(1, 7)) for _ in range(r))
            sb = tuple(d if rng.random() < 0.5 else 1 for d in sa)[int(rng.integers(0, r)):]
            if rng.random() < 0.5:
                sa, sb = sb, sa
        cases.append(rand_case(rng, sa, sb))
    return cases


def grid_cases(rng, n):
    """Every pair of 8-bit values; kept when some candidate differs from
    qladd_ref (scales near ties)."""
    cases, tries = [], 0
    while len(cases) < n and tries < 100 * n:
        tries += 1
        dt = np.uint8 if rng.random() < 0.5 else np.int8
        info = np.iinfo(dt)
        v = np.arange(info.min, info.max + 1).astype(dt)
        full = np.tile(v, (256, 1))
        kind = tries % 5
        sa, sb = [(full, full.T.copy()), (full, v.reshape(256, 1)), (v.reshape(256, 1), full),
                  (full, v.reshape(1, 256)), (v.reshape(1, 256), full.T.copy())][kind]
        c = rand_case(rng, (), (), dt)
        c["a"], c["b"] = sa, sb
        want = ref(c)
        # a broadcast innermost (kinds 2 and 4): keep scales where the exchange shows
        cands = [cand_no_swap] if kind in (2, 4) else list(CANDIDATES.values())
        if any((f(c).reshape(want.shape) != want).any() for f in cands):
            cases.append(c)
    return cases


def qladd_model(cases, path):
    nodes, inits, ins, outs = [], [], [], []
    for i, c in enumerate(cases):
        names = [f"{k}{i}" for k in KEYS]
        for k, nm in zip(KEYS, names):
            if k in ("a", "b"):
                ins.append(helper.make_tensor_value_info(nm, OT[c[k].dtype], c[k].shape))
            else:
                inits.append(numpy_helper.from_array(np.asarray(c[k]), nm))
        nodes.append(helper.make_node("QLinearAdd", names, [f"y{i}"], domain="com.microsoft"))
        outs.append(helper.make_tensor_value_info(f"y{i}", OT[c["a"].dtype], None))
    save(nodes, inits, ins, outs, path, [("", 13), ("com.microsoft", 1)])


def qdq_model(cases, path):
    nodes, inits, ins, outs = [], [], [], []
    for i, c in enumerate(cases):
        for k in KEYS:
            if k in ("a", "b"):
                ins.append(helper.make_tensor_value_info(f"{k}{i}", OT[c[k].dtype], c[k].shape))
            else:
                inits.append(numpy_helper.from_array(np.asarray(c[k]), f"{k}{i}"))
        nodes += [
            helper.make_node("DequantizeLinear", [f"a{i}", f"as{i}", f"az{i}"], [f"fa{i}"]),
            helper.make_node("DequantizeLinear", [f"b{i}", f"bs{i}", f"bz{i}"], [f"fb{i}"]),
            helper.make_node("Add", [f"fa{i}", f"fb{i}"], [f"fy{i}"]),
            helper.make_node("QuantizeLinear", [f"fy{i}", f"cs{i}", f"cz{i}"], [f"y{i}"])]
        outs.append(helper.make_tensor_value_info(f"y{i}", OT[c["a"].dtype], None))
    save(nodes, inits, ins, outs, path, [("", 13)])


def save(nodes, inits, ins, outs, path, opsets):
    g = helper.make_graph(nodes, "qladd", ins, outs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    m.ir_version = 8
    onnx.save(m, path)


def run(cases, build, level, chunk=100):
    """ORT's outputs for `cases`, `chunk` nodes per model (run.js crashes on
    models with many hundreds of inputs)."""
    if len(cases) > chunk:
        return [y for i in range(0, len(cases), chunk)
                for y in run(cases[i:i + chunk], build, level, chunk)]
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.onnx")
        build(cases, path)
        feeds = {}
        for i, c in enumerate(cases):
            feeds[f"a{i}"], feeds[f"b{i}"] = c["a"], c["b"]
        outs, _ = run_ort(path, feeds, opt_level=level)
    return [outs[f"y{i}"] for i in range(len(cases))]


def check(title, cases, build, level, candidates):
    got = run(cases, build, level)
    elems = bad = 0
    cand_bad = {k: 0 for k in candidates}
    for i, (c, g) in enumerate(zip(cases, got)):
        want = ref(c)
        elems += g.size
        n = int(np.sum(want.reshape(g.shape) != g))
        if n and bad == 0:
            print(f"  first mismatch: case {i} a{c['a'].shape} b{c['b'].shape} {c['a'].dtype}")
        bad += n
        for k, f in candidates.items():
            cand_bad[k] += int(np.sum(f(c).reshape(g.shape) != g))
    extra = "".join(f", {k} differs on {v}" for k, v in cand_bad.items())
    print(f"{title} [{level}]: {len(cases)} nodes, {elems} elements, qladd_ref differs on "
          f"{bad}{extra}")
    return bad == 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=600)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    ok = True
    cases = random_cases(rng, args.cases)
    for level in ("disabled", "all"):
        ok &= check("random QLinearAdd", cases, qladd_model, level, CANDIDATES)
    grids = grid_cases(rng, 20)
    ok &= check("grid QLinearAdd", grids, qladd_model, "disabled", CANDIDATES)
    qdq = [c for c in cases if c["a"].size > 1 and c["b"].size > 1][:200] + grids[:6]
    ok &= check("QDQ Dequantize->Add->Quantize", qdq, qdq_model, "all", {})
    # Unfused (float Add between the QDQ nodes): differs, so 'all' did fuse.
    check("QDQ unfused (information only)", qdq, qdq_model, "disabled", {})
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
