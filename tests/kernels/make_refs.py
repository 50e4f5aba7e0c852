#!/usr/bin/env python3
"""Reference cases for baton_kernels_tests, computed with numpy and torch.

Usage: make_refs.py OUT_DIR

Writes OUT_DIR/manifest.json and one .npy file per input and output:

  {"hash": "<sha256 of this script>",
   "cases": [{"name": "conv_3x3_bias", "op": "Conv",
              "inputs": ["conv_3x3_bias.in0.npy", null, ...],   # null: absent input
              "outputs": ["conv_3x3_bias.out0.npy"],
              "params": {"type": "ConvParams", "kernel": [3, 3], ...} | null,
              "rtol": 1e-6}]}   # optional: also |got - want| <= rtol * |want| + 1e-30

params mirror the tables of schema/plan.fbs, already normalized the way the
planner normalizes them. References are computed in float64 and stored as
float32. The generator is deterministic and skips all work when OUT_DIR
already holds a manifest from this exact script (several test processes may
start it at once; the output directory is swapped in atomically).
"""

import ctypes
import ctypes.util
import hashlib
import json
import math
import os
import shutil
import sys


def script_hash():
    with open(os.path.abspath(__file__), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def up_to_date(out_dir, digest):
    try:
        with open(os.path.join(out_dir, "manifest.json")) as f:
            return json.load(f).get("hash") == digest
    except (OSError, ValueError):
        return False


# ---------------------------------------------- QLinearConv, QLinearMatMul
# The integer reference of the int8 kernels, written from the ONNX definition
# and ONNX Runtime's requantization (MlasRequantizeOutput); module level so
# that tests/kernels/qlinear_vs_ort.py checks this same code against ONNX
# Runtime bit for bit. Inputs are numpy arrays; accumulation is in int64.

def qlinear_scale(np, in_scale, w_scale, y_scale):
    """Requantization scale per output channel, in float32 as ONNX Runtime
    computes it: (in_scale * w_scale) / y_scale (qlinear_vs_ort.py checks
    the alternatives)."""
    f = np.float32
    return (f(in_scale) * np.asarray(w_scale, np.float32).reshape(-1)) / f(y_scale)


def qlinear_wrap_i32(np, v):
    """int32 two's complement wrap-around of int64 values (the bias add)."""
    return (np.asarray(v, np.int64) + 2**31) % 2**32 - 2**31


def qlinear_conv_acc(np, x, xz, w, wz, bias, strides, pads, dilations, group):
    """sum((x - xz) * (w - wz)) + bias as int64, [N, M, *out]; the padding
    holds x's zero point, i.e. contributes 0."""
    sp = x.ndim - 2
    xi = x.astype(np.int64) - np.int64(np.asarray(xz).reshape(()))
    m = w.shape[0]
    wi = w.astype(np.int64) - np.asarray(wz, np.int64).reshape((-1,) + (1,) * (w.ndim - 1))
    xp = np.pad(xi, [(0, 0), (0, 0)] + [(pads[i], pads[sp + i]) for i in range(sp)])
    kernel = w.shape[2:]
    out = [(xp.shape[2 + i] - dilations[i] * (kernel[i] - 1) - 1) // strides[i] + 1
           for i in range(sp)]
    n, c = x.shape[:2]
    cg, mg = c // group, m // group
    acc = np.zeros((n, m) + tuple(out), np.int64)
    for taps in np.ndindex(*kernel):
        sl = tuple(slice(taps[i] * dilations[i],
                         taps[i] * dilations[i] + (out[i] - 1) * strides[i] + 1, strides[i])
                   for i in range(sp))
        patch = xp[(slice(None), slice(None)) + sl]
        for g in range(group):
            wg = wi[(slice(g * mg, (g + 1) * mg), slice(None)) + tuple(taps)]  # [mg, cg]
            acc[:, g * mg:(g + 1) * mg] += np.einsum("nc...,mc->nm...",
                                                     patch[:, g * cg:(g + 1) * cg], wg)
    if bias is not None:
        acc = qlinear_wrap_i32(np, acc + bias.astype(np.int64).reshape((1, -1) + (1,) * sp))
    return acc


def qlinear_matmul_acc(np, a, az, b, bz, bias, trans_b):
    """sum_k (a - az) * (b - bz[col]) + bias[col] as int64, [..., M, N]."""
    ai = a.astype(np.int64) - np.int64(np.asarray(az).reshape(()))
    bm = b.T if trans_b else b
    bi = bm.astype(np.int64) - np.asarray(bz, np.int64).reshape(1, -1)
    acc = ai @ bi
    if bias is not None:
        acc = qlinear_wrap_i32(np, acc + bias.astype(np.int64))
    return acc


def qlinear_requantize(np, acc, scale, y_scale, y_zero_point, ydtype, clamp, axis):
    """MlasRequantizeOutput: v = float32(acc) * scale[channel along `axis`],
    clamped to [qmin - yz, qmax - yz] (NaN to the low end, as SSE's maxps),
    tightened by a fused clamp {min, max} given in real units (min / y_scale,
    max / y_scale, each kept inside that range; NaN: no bound), rounded half to
    even, plus yz."""
    f = np.float32
    info = np.iinfo(ydtype)
    yz = int(np.asarray(y_zero_point).reshape(()))
    lo, hi = f(info.min - yz), f(info.max - yz)
    if clamp is not None:
        with np.errstate(all="ignore"):
            clo, chi = f(clamp[0]) / f(y_scale), f(clamp[1]) / f(y_scale)
        def bound(v, fallback):
            if np.isnan(v):
                return fallback
            v = v if v > lo else lo
            return v if v < hi else hi
        lo, hi = bound(clo, lo), bound(chi, hi)
    shape = [1] * acc.ndim
    shape[axis] = -1
    with np.errstate(all="ignore"):
        v = acc.astype(np.float32) * np.asarray(scale, np.float32).reshape(shape)
    v = np.where(v > lo, v, lo)
    v = np.where(v < hi, v, hi)
    return (np.rint(v).astype(np.int64) + yz).astype(ydtype)


def qlinear_conv_ref(np, x, xs, xz, w, ws, wz, ys, yz, bias, strides, pads, dilations, group,
                     clamp=None):
    acc = qlinear_conv_acc(np, x, xz, w, wz, bias, strides, pads, dilations, group)
    scale = np.broadcast_to(qlinear_scale(np, xs, ws, ys), (w.shape[0],))
    return qlinear_requantize(np, acc, scale, ys, yz, np.asarray(yz).dtype, clamp, 1)


def qlinear_matmul_ref(np, a, a_s, az, b, bs, bz, ys, yz, bias, trans_b, clamp=None):
    acc = qlinear_matmul_acc(np, a, az, b, bz, bias, trans_b)
    n = b.shape[0] if trans_b else b.shape[1]
    scale = np.broadcast_to(qlinear_scale(np, a_s, bs, ys), (n,))
    return qlinear_requantize(np, acc, scale, ys, yz, np.asarray(yz).dtype, clamp, acc.ndim - 1)


def qladd_fma32(np, x, y, z):
    """float32 fma(x, y, z), correctly rounded, for integer-valued x (|x| <
    2^9) or x * y otherwise exact in float64: the product and z are exact in
    float64, TwoSum gives the sum's rounding error, and rounding the sum to
    odd (the odd one of the two float64 neighbours of the exact value) before
    rounding to float32 avoids double rounding."""
    x, y, z = (np.asarray(v, np.float64) for v in (x, y, z))
    p = x * y
    s = p + z
    bp = s - z
    e = (p - bp) + (z - (s - bp))
    nb = np.nextafter(s, np.where(e > 0, np.inf, -np.inf))
    odd = (s.view(np.int64) & 1) == 1
    s = np.where((e != 0) & ~odd, nb, s)
    return s.astype(np.float32)


def qladd_ref(np, a, a_scale, a_zero, b, b_scale, b_zero, c_scale, c_zero=None, clamp=None):
    """com.microsoft QLinearAdd as ONNX Runtime 1.30 computes it on x86-64
    (MLAS's AVX2 kernel; tests/kernels/qlinear_vs_ort.py checks it bit for
    bit), all in float32:
        ra = a_scale / c_scale, rb = b_scale / c_scale
        fixed = float(zc) - fma(ra, float(za), rb * float(zb))
        c = saturate(round_half_even(fma(a, ra, fma(b, rb, fixed))))
    with a and b exchanged when ORT's broadcast loop takes a as the scalar
    operand (a broadcast along the innermost output dimension of size > 1, or
    a one-element output). `clamp` {min, max} (real units; Baton's fused
    activation) narrows the range [qmin, qmax] of the value to zc + [min /
    c_scale, max / c_scale] before rounding (a NaN bound is none)."""
    f = np.float32
    a, b = np.asarray(a), np.asarray(b)
    dt = a.dtype
    zc = 0 if c_zero is None else int(np.asarray(c_zero).reshape(()))
    za, zb = int(np.asarray(a_zero).reshape(())), int(np.asarray(b_zero).reshape(()))
    out_shape = np.broadcast_shapes(a.shape, b.shape)
    r = len(out_shape)
    a_dims = (1,) * (r - a.ndim) + a.shape
    swap = True
    for d in reversed(range(r)):
        if out_shape[d] > 1:
            swap = a_dims[d] == 1
            break
    sa, sb = f(a_scale), f(b_scale)
    if swap:
        a, b, sa, sb, za, zb = b, a, sb, sa, zb, za
    ra, rb = f(sa / f(c_scale)), f(sb / f(c_scale))
    fixed = f(f(zc) - qladd_fma32(np, ra, f(za), f(rb * f(zb))))
    av = np.broadcast_to(a.astype(np.int32).astype(f), out_shape)
    bv = np.broadcast_to(b.astype(np.int32).astype(f), out_shape)
    v = qladd_fma32(np, av, ra, qladd_fma32(np, bv, rb, fixed))
    info = np.iinfo(dt)
    lo, hi = f(info.min), f(info.max)
    if clamp is not None:
        rlo, rhi = f(info.min - zc), f(info.max - zc)
        def bound(x, fallback):
            if np.isnan(x):
                return fallback
            x = x if x > rlo else rlo
            return x if x < rhi else rhi
        with np.errstate(all="ignore"):
            clo, chi = f(clamp[0]) / f(c_scale), f(clamp[1]) / f(c_scale)
        lo, hi = f(bound(clo, rlo) + f(zc)), f(bound(chi, rhi) + f(zc))
    v = np.where(v > lo, v, lo)
    v = np.where(v < hi, v, hi)
    return np.rint(v).astype(np.int64).astype(dt)


def qlinear_scale_candidates(np):
    """Float32 expressions of the requantization scale (in_scale, w_scales,
    y_scale) -> scales: ONNX Runtime's (qlinear_scale) first."""
    f = np.float32
    return {
        "(xs*ws)/ys": lambda xs, ws, ys: (f(xs) * ws) / f(ys),
        "xs*(ws/ys)": lambda xs, ws, ys: f(xs) * (ws / f(ys)),
        "(xs/ys)*ws": lambda xs, ws, ys: (f(xs) / f(ys)) * ws,
        "(xs*ws)*(1/ys)": lambda xs, ws, ys: (f(xs) * ws) * (f(1.0) / f(ys)),
        "f32(f64 xs*ws/ys)": lambda xs, ws, ys: (np.float64(xs) * ws.astype(np.float64)
                                                 / np.float64(ys)).astype(np.float32),
    }


def qlinear_boundary_scales(np, rng, da, db, in_scale, y_scale, vlo, vhi):
    """One w scale per channel c (accumulators da * db[c], da and db the
    zero-point-shifted 8-bit values) such that the candidate scale expressions
    round some acc * scale to different sides of a .5 boundary: from the
    scale that puts one acc exactly on k + 0.5, the float32 neighbour (within
    200 ulps) on which the most candidates disagree with ONNX Runtime's. Tests
    built on them tell the expressions apart."""
    f = np.float32
    cands = qlinear_scale_candidates(np)
    ref = next(iter(cands))
    steps = np.arange(-200, 201).astype(np.int32)
    out = np.empty(len(db), np.float32)
    for c, dbc in enumerate(db):
        accs = da.astype(np.int64) * int(dbc)
        accs = accs[np.abs(accs) >= 16]
        if accs.size == 0:
            out[c] = f(rng.uniform(1e-3, 1e-1))
            continue
        acc0 = int(rng.choice(accs))
        k = int(rng.integers(vlo + 1, vhi - 1))  # v = k + 0.5 inside the range
        ws0 = abs(f((k + 0.5) / acc0 * float(y_scale) / float(in_scale))) + f(1e-30)
        ws = (ws0.view(np.int32) + steps).view(np.float32)
        outs = {n: np.rint(np.clip(f(acc0) * fn(in_scale, ws, y_scale), vlo, vhi))
                for n, fn in cands.items()}
        disagree = sum((outs[n] != outs[ref]).astype(int) for n in cands)
        out[c] = ws[int(np.argmax(disagree))]
    return out

def build_cases(np, torch):
    F = torch.nn.functional
    rng = np.random.default_rng(20240611)
    cases = []

    def rand(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    def f64(a):
        return torch.from_numpy(np.asarray(a, dtype=np.float64))

    def add(name, op, inputs, outputs, params=None, rtol=None):
        cases.append(dict(name=name, op=op, inputs=inputs, outputs=outputs, params=params,
                          rtol=rtol))

    # ---------------------------------------------------------------- Conv
    def conv(name, n, c, spatial, m, kernel, strides=None, pads=None, dilations=None,
             group=1, bias=True, clamp=None):
        sp = len(spatial)
        strides = strides or [1] * sp
        pads = pads or [0] * (2 * sp)
        dilations = dilations or [1] * sp
        x = rand(n, c, *spatial)
        w = rand(m, c // group, *kernel, scale=1.0 / np.sqrt(c // group * np.prod(kernel)))
        b = rand(m) if bias else None
        if sp == 2:
            xp = F.pad(f64(x), (pads[1], pads[3], pads[0], pads[2]))
            y = F.conv2d(xp, f64(w), None if b is None else f64(b), strides, 0, dilations, group)
        else:
            xp = F.pad(f64(x), (pads[0], pads[1]))
            y = F.conv1d(xp, f64(w), None if b is None else f64(b), strides, 0, dilations, group)
        if clamp is not None:
            y = torch.clamp(y, clamp[0], clamp[1])
        params = dict(type="ConvParams", kernel=list(kernel), strides=strides, pads=pads,
                      dilations=dilations, group=group)
        if clamp is not None:
            params["clamp"] = clamp
        add(name, "Conv", [x, w, b] if bias else [x, w], [y.numpy()], params)

    conv("conv_3x3_p1_bias", 1, 3, (10, 12), 8, (3, 3), pads=[1, 1, 1, 1])
    conv("conv_3x3_s2_asym_pads", 2, 5, (11, 9), 7, (3, 3), strides=[2, 2], pads=[1, 0, 2, 1])
    conv("conv_3x3_dil2_nobias", 1, 4, (13, 14), 6, (3, 3), pads=[2, 2, 2, 2],
         dilations=[2, 2], bias=False)
    conv("conv_5x3_s_2_1", 1, 3, (12, 10), 5, (5, 3), strides=[2, 1], pads=[2, 1, 2, 1])
    conv("conv_group2", 1, 4, (9, 9), 6, (3, 3), pads=[1, 1, 1, 1], group=2)
    conv("conv_group4_1x1", 2, 8, (5, 6), 12, (1, 1), group=4)
    conv("conv_7x7_s2_stem", 1, 3, (32, 30), 16, (7, 7), strides=[2, 2], pads=[3, 3, 3, 3],
         clamp=[0.0, float(np.finfo(np.float32).max)])  # relu as a clamp; JSON has no inf
    conv("conv_wide_k", 1, 64, (20, 20), 70, (3, 3), pads=[1, 1, 1, 1])  # K=576: 3 k blocks
    conv("conv_many_m", 1, 16, (8, 8), 300, (3, 3), pads=[1, 1, 1, 1])   # M blocks
    conv("conv_wide_n", 1, 8, (40, 41), 9, (3, 3), pads=[1, 1, 1, 1])    # N > nc block
    conv("conv_relu6", 1, 6, (7, 7), 10, (3, 3), strides=[2, 2], pads=[1, 1, 1, 1],
         clamp=[0.0, 6.0])
    conv("conv_1x1", 1, 20, (7, 9), 13, (1, 1), clamp=[-0.5, 0.5])
    conv("conv_1x1_batch", 3, 33, (5, 5), 17, (1, 1), bias=False)
    conv("conv_1x1_big", 1, 300, (30, 40), 40, (1, 1))                   # k and n blocks
    # Just past every tile shape (portable 6x12, AVX2 4x24, AVX-512 12x32):
    # partial tiles at the bottom and right in both drivers.
    conv("conv_1x1_tile_edges", 1, 19, (5, 13), 25, (1, 1), clamp=[-0.3, 0.4])
    conv("conv_3x3_tile_edges", 1, 7, (5, 7), 13, (3, 3), pads=[1, 1, 1, 1])
    conv("conv_1x1_s2", 1, 16, (9, 9), 24, (1, 1), strides=[2, 2])
    conv("conv_1x1_pad", 1, 5, (4, 4), 6, (1, 1), pads=[1, 0, 0, 1])
    # Winograd F(2x2, 3x3) path (3x3 stride 1, >= 64 channels, >= 64 2x2 tiles):
    # odd output sizes (partial tiles), asymmetric pads, batch, tile blocks
    # that start mid-row.
    conv("wino_asym_pads_relu6_batch", 2, 64, (21, 20), 64, (3, 3), pads=[1, 0, 1, 1],
         clamp=[0.0, 6.0])  # OH 21, OW 19: 11x10 tiles, blocks of 55 (2nd starts mid-row)
    conv("wino_odd_nobias", 1, 72, (17, 21), 65, (3, 3), pads=[1, 1, 1, 1], bias=False)
    conv("conv_1d", 2, 4, (20,), 6, (3,), strides=[2], pads=[1, 2])
    conv("conv_1d_dil", 1, 3, (17,), 5, (4,), dilations=[3], pads=[0, 3], bias=False)
    conv("conv_kernel_larger_than_input", 1, 2, (2, 3), 3, (3, 3), pads=[1, 1, 1, 1])
    # depthwise (group == C), with M == C or a multiple of C
    conv("dw_3x3_s1", 1, 8, (13, 11), 8, (3, 3), pads=[1, 1, 1, 1], group=8, clamp=[0.0, 6.0])
    conv("dw_3x3_s2", 2, 6, (16, 16), 6, (3, 3), strides=[2, 2], pads=[1, 1, 1, 1], group=6)
    conv("dw_3x3_s2_same_pads", 1, 5, (15, 14), 5, (3, 3), strides=[2, 2], pads=[0, 0, 1, 1],
         group=5)
    conv("dw_3x3_nopad_nobias", 1, 4, (9, 10), 4, (3, 3), group=4, bias=False)
    conv("dw_3x3_tiny", 1, 3, (2, 2), 3, (3, 3), pads=[1, 1, 1, 1], group=3)
    conv("dw_3x3_dil2", 1, 4, (12, 12), 4, (3, 3), pads=[2, 2, 2, 2], dilations=[2, 2], group=4)
    conv("dw_mult2_5x5_s2", 1, 4, (14, 13), 8, (5, 5), strides=[2, 2], pads=[2, 2, 2, 2],
         group=4)
    conv("dw_3x3_s3", 1, 3, (10, 10), 3, (3, 3), strides=[3, 3], pads=[1, 1, 1, 1], group=3)
    conv("dw_1d", 1, 4, (15,), 4, (3,), pads=[1, 1], group=4)
    # The phase-plane path's shapes: MobileNet/EfficientNet 3x3 and 5x5 at
    # stride 1 and 2, planes of several row blocks, 7x7 (ConvNeXt), 5x5
    # dilated, asymmetric pads, 4x4 (no row kernel), stride 2 on odd sizes.
    conv("dw_3x3_s1_big", 1, 3, (57, 61), 3, (3, 3), pads=[1, 1, 1, 1], group=3)
    conv("dw_3x3_s2_big", 1, 3, (58, 63), 3, (3, 3), strides=[2, 2], pads=[0, 0, 1, 1],
         group=3, clamp=[0.0, 6.0])
    conv("dw_5x5_s1", 1, 6, (14, 14), 6, (5, 5), pads=[2, 2, 2, 2], group=6)
    conv("dw_5x5_s1_7x7", 2, 5, (7, 7), 5, (5, 5), pads=[2, 2, 2, 2], group=5)
    conv("dw_5x5_s2_odd", 1, 4, (29, 27), 4, (5, 5), strides=[2, 2], pads=[2, 2, 2, 2], group=4)
    conv("dw_7x7_s1", 1, 4, (15, 17), 4, (7, 7), pads=[3, 3, 3, 3], group=4)
    conv("dw_7x7_s2_asym", 1, 3, (16, 15), 3, (7, 7), strides=[2, 2], pads=[3, 2, 2, 3],
         group=3, bias=False)
    conv("dw_5x5_dil2", 1, 3, (13, 12), 3, (5, 5), pads=[4, 4, 4, 4], dilations=[2, 2], group=3)
    conv("dw_4x4_s2", 1, 3, (12, 12), 3, (4, 4), strides=[2, 2], pads=[1, 1, 1, 1], group=3)
    conv("dw_3x3_s1x2", 1, 3, (9, 12), 3, (3, 3), strides=[1, 2], pads=[1, 1, 1, 1], group=3)

    # ---------------------------------------------------------------- Gemm
    def gemm(name, m, n, k, trans_a=False, trans_b=False, c_shape=None, alpha=1.0, beta=1.0,
             clamp=None):
        a = rand(k, m) if trans_a else rand(m, k)
        b = rand(n, k) if trans_b else rand(k, n)
        at = f64(a).T if trans_a else f64(a)
        bt = f64(b).T if trans_b else f64(b)
        y = alpha * (at @ bt)
        inputs = [a, b]
        if c_shape is not None:
            c = rand(*c_shape)
            y = y + beta * f64(c)
            inputs.append(c)
        if clamp is not None:
            y = torch.clamp(y, clamp[0], clamp[1])
        params = dict(type="GemmParams", alpha=alpha, beta=beta, trans_a=trans_a, trans_b=trans_b)
        if clamp is not None:
            params["clamp"] = clamp
        add(name, "Gemm", inputs, [y.numpy()], params)

    gemm("gemm_classifier", 1, 1000, 512, trans_b=True, c_shape=(1000,))
    gemm("gemm_small", 5, 7, 3)
    gemm("gemm_ta_colC", 17, 33, 300, trans_a=True, c_shape=(17, 1), alpha=0.5, beta=2.0)
    gemm("gemm_ta_tb_scalarC", 64, 130, 257, trans_a=True, trans_b=True, c_shape=())
    gemm("gemm_C11", 3, 4, 5, c_shape=(1, 1), beta=-1.0)
    gemm("gemm_wide_n", 130, 1030, 40, c_shape=(1, 1030))
    gemm("gemm_big_mk", 300, 20, 600, trans_b=True, c_shape=(300, 20))
    gemm("gemm_clamp", 8, 9, 10, c_shape=(9,), clamp=[-0.5, 0.5])
    gemm("gemm_k1", 6, 10, 1)
    gemm("gemm_tile_edges", 25, 70, 33, c_shape=(70,), clamp=[-2.0, 2.0])
    gemm("gemm_beta0", 4, 4, 4, c_shape=(4, 4), beta=0.0)
    gemm("gemm_row_alpha_clamp", 1, 37, 20, c_shape=(1, 37), alpha=0.5, beta=2.0,
         clamp=[-1.0, 1.0])                                        # m == 1: matrix-vector
    gemm("gemm_row_ta_tb", 1, 9, 30, trans_a=True, trans_b=True, c_shape=(1, 1))

    # -------------------------------------------------------------- MatMul
    def matmul(name, sa, sb):
        a = rand(*sa)
        b = rand(*sb)
        y = np.matmul(a.astype(np.float64), b.astype(np.float64))
        add(name, "MatMul", [a, b], [np.asarray(y)])

    matmul("matmul_2d", (3, 4), (4, 5))
    matmul("matmul_batch_fold", (2, 3, 4, 5), (5, 6))
    matmul("matmul_batch_bcast", (2, 1, 4, 5), (3, 5, 6))
    matmul("matmul_a_bcast", (1, 7, 8), (2, 8, 9))
    matmul("matmul_vec_mat", (5,), (5, 3))
    matmul("matmul_mat_vec", (2, 4, 5), (5,))
    matmul("matmul_vec_vec", (5,), (5,))
    matmul("matmul_big", (2, 70, 300), (300, 50))
    matmul("matmul_batch_b_only", (4, 6), (3, 6, 5))

    # ------------------------------------------------- Add Sub Mul Div
    def binary(name, op, sa, sb, clamp=None, with_params=True):
        a = rand(*sa)
        b = rand(*sb)
        if op == "Div":
            b = (np.sign(b) + (b == 0)) * (0.5 + np.abs(b)).astype(np.float32)
            b = b.astype(np.float32)
        fa, fb = a.astype(np.float64), b.astype(np.float64)
        y = {"Add": fa + fb, "Sub": fa - fb, "Mul": fa * fb, "Div": fa / fb}[op]
        if clamp is not None:
            y = np.clip(y, clamp[0], clamp[1])
        params = None
        if with_params:
            params = dict(type="ElementwiseParams")
            if clamp is not None:
                params["clamp"] = clamp
        add(name, op, [a, b], [np.asarray(y)], params)

    for op in ("Add", "Sub", "Mul", "Div"):
        lo = op.lower()
        binary(f"{lo}_same", op, (2, 3, 4, 5), (2, 3, 4, 5))
        binary(f"{lo}_last_dim", op, (2, 3, 4, 5), (5,), with_params=False)
        binary(f"{lo}_channel", op, (2, 3, 4, 5), (3, 1, 1))
        binary(f"{lo}_both_ways", op, (1, 3, 1, 5), (2, 1, 4, 1))
        binary(f"{lo}_scalar_lhs", op, (), (3, 4))
        binary(f"{lo}_scalar_rhs", op, (3, 4), (1,))
        binary(f"{lo}_middle", op, (2, 1, 6), (2, 5, 6))
    binary("add_relu6", "Add", (2, 8, 3, 3), (2, 8, 3, 3), clamp=[0.0, 6.0])
    binary("mul_se_clamp", "Mul", (1, 16, 5, 5), (1, 16, 1, 1), clamp=[-1.0, 1.0])
    binary("add_rank6", "Add", (2, 1, 3, 1, 2, 3), (1, 2, 1, 2, 2, 1))

    # ---------------------------------------------------------- activations
    xa = rand(2, 3, 7, 5, scale=3.0)
    xa.flat[:4] = [100.0, -100.0, 0.0, -0.0]
    fx = f64(xa)
    add("relu", "Relu", [xa], [torch.relu(fx).numpy()])
    add("leaky_relu", "LeakyRelu", [xa], [F.leaky_relu(fx, 0.1).numpy()],
        dict(type="ActivationParams", alpha=0.1))
    add("clip", "Clip", [xa], [torch.clamp(fx, -1.0, 2.0).numpy()],
        dict(type="ActivationParams", min=-1.0, max=2.0))
    add("sigmoid", "Sigmoid", [xa], [torch.sigmoid(fx).numpy()])
    add("tanh", "Tanh", [xa], [torch.tanh(fx).numpy()])
    add("hard_sigmoid", "HardSigmoid", [xa], [torch.clamp(0.2 * fx + 0.5, 0, 1).numpy()],
        dict(type="ActivationParams", alpha=0.2, beta=0.5))
    add("hard_swish", "HardSwish", [xa], [F.hardswish(fx).numpy()])

    for axis, shape in ((1, (2, 5, 3, 4)), (3, (2, 3, 4, 6)), (0, (4, 3)), (0, (7,))):
        x = rand(*shape, scale=4.0)
        x.flat[0] = 1000.0  # stability: exp must not overflow
        add(f"softmax_axis{axis}_r{len(shape)}", "Softmax", [x],
            [torch.softmax(f64(x), axis).numpy()], dict(type="AxisParams", axis=axis))

    # --------------------------------------------------------------- pools
    def pool_np(x, kind, kernel, strides, pads, dilations, ceil_mode, include_pad):
        """Independent numpy reference (float64)."""
        x = x.astype(np.float64)
        sp = x.ndim - 2
        out = []
        for i in range(sp):
            n, k, s, d = x.shape[2 + i], kernel[i], strides[i], dilations[i]
            span = n + pads[i] + pads[sp + i] - d * (k - 1) - 1
            o = (-(-span // s) if ceil_mode else span // s) + 1
            if ceil_mode and (o - 1) * s >= n + pads[i]:
                o -= 1
            out.append(o)
        y = np.zeros(x.shape[:2] + tuple(out))
        for idx in np.ndindex(*out):
            sub = x
            padcount = 1
            for i in range(sp):
                start = idx[i] * strides[i] - pads[i]
                pos = [start + t * dilations[i] for t in range(kernel[i])]
                valid = [p for p in pos if 0 <= p < x.shape[2 + i]]
                padcount *= len([p for p in pos if -pads[i] <= p < x.shape[2 + i] + pads[sp + i]])
                sub = np.take(sub, valid, axis=2 + i)
            axes = tuple(range(2, 2 + sp))
            if kind == "MaxPool":
                y[(slice(None), slice(None)) + idx] = sub.max(axis=axes)
            else:
                cnt = padcount if include_pad else int(np.prod(sub.shape[2:]))
                y[(slice(None), slice(None)) + idx] = sub.sum(axis=axes) / cnt
        return y

    def pool(name, kind, shape, kernel, strides=None, pads=None, dilations=None, ceil_mode=False,
             include_pad=False, check_torch=True):
        sp = len(shape) - 2
        strides = strides or [1] * sp
        pads = pads or [0] * (2 * sp)
        dilations = dilations or [1] * sp
        x = rand(*shape)
        y = pool_np(x, kind, kernel, strides, pads, dilations, ceil_mode, include_pad)
        if check_torch:  # cross-check the numpy reference where torch applies
            fx = f64(x)
            p = pads[:sp]
            assert pads[:sp] == pads[sp:]
            if kind == "MaxPool":
                fn = F.max_pool2d if sp == 2 else F.max_pool1d
                t = fn(fx, kernel, strides, p, dilations, ceil_mode)
            else:
                assert dilations == [1] * sp
                fn = F.avg_pool2d if sp == 2 else F.avg_pool1d
                t = fn(fx, kernel, strides, p, ceil_mode, include_pad)
            assert t.shape == y.shape and np.allclose(t.numpy(), y), name
        params = dict(type="PoolParams", kernel=kernel, strides=strides, pads=pads,
                      dilations=dilations, ceil_mode=ceil_mode, count_include_pad=include_pad)
        add(name, kind, [x], [y], params)

    pool("maxpool_3x3_s2_p1", "MaxPool", (1, 4, 15, 15), [3, 3], [2, 2], [1, 1, 1, 1])
    pool("maxpool_2x2_ceil", "MaxPool", (1, 3, 7, 7), [2, 2], [2, 2], ceil_mode=True)
    pool("maxpool_3x3_s2_ceil", "MaxPool", (2, 2, 8, 8), [3, 3], [2, 2], ceil_mode=True)
    pool("maxpool_ceil_pad", "MaxPool", (1, 2, 8, 8), [3, 3], [2, 2], [1, 1, 1, 1],
         ceil_mode=True)
    pool("maxpool_dil2", "MaxPool", (1, 2, 9, 9), [3, 3], [1, 1], [1, 1, 1, 1], [2, 2])
    pool("maxpool_asym_pads", "MaxPool", (1, 2, 8, 9), [3, 2], [2, 1], [0, 1, 1, 0],
         check_torch=False)
    pool("maxpool_1d", "MaxPool", (2, 3, 11), [3], [2], [1, 1])
    # 3-wide stride-1 windows (googlenet's inception pools) and rows no wider
    # than the window: the kernel's whole-window pass and its edge passes.
    pool("maxpool_3x3_s1_p1", "MaxPool", (1, 3, 9, 11), [3, 3], [1, 1], [1, 1, 1, 1])
    pool("maxpool_3x3_s1_narrow", "MaxPool", (1, 2, 5, 3), [3, 3], [1, 1])
    pool("maxpool_3x3_s1_p1_tiny", "MaxPool", (1, 2, 2, 2), [3, 3], [1, 1], [1, 1, 1, 1])
    pool("maxpool_3x3_s2_p1_odd", "MaxPool", (1, 2, 6, 13), [3, 3], [2, 2], [1, 1, 1, 1],
         ceil_mode=True)
    pool("avgpool_3x3_s1_p1_excl", "AveragePool", (1, 3, 9, 11), [3, 3], [1, 1], [1, 1, 1, 1])
    pool("avgpool_3x3_s2_p1_excl", "AveragePool", (1, 4, 15, 15), [3, 3], [2, 2], [1, 1, 1, 1])
    pool("avgpool_3x3_s2_p1_incl", "AveragePool", (1, 4, 15, 15), [3, 3], [2, 2], [1, 1, 1, 1],
         include_pad=True)
    pool("avgpool_ceil_pad_incl", "AveragePool", (1, 2, 8, 8), [3, 3], [2, 2], [1, 1, 1, 1],
         ceil_mode=True, include_pad=True)
    pool("avgpool_ceil_pad_excl", "AveragePool", (1, 2, 8, 8), [3, 3], [2, 2], [1, 1, 1, 1],
         ceil_mode=True, include_pad=False)
    pool("avgpool_2x2_ceil", "AveragePool", (1, 3, 7, 7), [2, 2], [2, 2], ceil_mode=True)
    pool("avgpool_ceil_nopad_incl", "AveragePool", (1, 2, 10, 10), [3, 3], [2, 2],
         ceil_mode=True, include_pad=True)
    pool("avgpool_dil2", "AveragePool", (1, 2, 10, 10), [3, 3], [1, 1], [2, 2, 2, 2], [2, 2],
         include_pad=True, check_torch=False)
    pool("avgpool_asym_incl", "AveragePool", (1, 2, 9, 8), [3, 3], [2, 2], [0, 1, 2, 1],
         include_pad=True, check_torch=False)
    pool("avgpool_1d", "AveragePool", (2, 3, 12), [4], [3], [1, 1], include_pad=False)

    for name, kind, shape in (("gap", "GlobalAveragePool", (2, 8, 7, 7)),
                              ("gap_1d", "GlobalAveragePool", (2, 3, 10)),
                              ("gap_big", "GlobalAveragePool", (1, 4, 13, 17)),
                              ("gmp", "GlobalMaxPool", (2, 8, 5, 3))):
        x = rand(*shape)
        axes = tuple(range(2, len(shape)))
        fx = x.astype(np.float64)
        y = fx.mean(axis=axes, keepdims=True) if kind == "GlobalAveragePool" \
            else fx.max(axis=axes, keepdims=True)
        add(name, kind, [x], [y])

    # ----------------------------------------------------------- ReduceMean
    for name, shape, axes, keep in (("reduce_hw_keep", (2, 3, 4, 5), [2, 3], True),
                                    ("reduce_c", (2, 3, 4, 5), [1], False),
                                    ("reduce_0_2", (2, 3, 4, 5), [0, 2], True),
                                    ("reduce_last", (3, 4, 6), [2], False),
                                    ("reduce_all", (3, 4, 5), [], False)):
        x = rand(*shape)
        y = x.astype(np.float64).mean(axis=tuple(axes) if axes else None, keepdims=keep)
        add(name, "ReduceMean", [x], [np.asarray(y)],
            dict(type="ReduceParams", axes=axes, keepdims=keep))

    # ------------------------------------ unary float math and activations
    xu = rand(2, 3, 7, 5, scale=3.0)
    xu.flat[:4] = [30.0, -30.0, 0.0, -0.0]
    fu = f64(xu)
    xp = (np.abs(rand(3, 4, 9)) + 1e-3).astype(np.float32)  # positive: Sqrt, Log
    fp = f64(xp)
    add("sqrt", "Sqrt", [xp], [torch.sqrt(fp).numpy()])
    add("exp", "Exp", [xu], [torch.exp(fu).numpy()])
    add("log", "Log", [xp], [torch.log(fp).numpy()])
    add("erf", "Erf", [xu], [torch.erf(fu).numpy()], rtol=1e-6)
    xe = np.linspace(-4.0, 4.0, 801, dtype=np.float32)  # dense: erf to ~1e-6 relative
    add("erf_dense", "Erf", [xe], [torch.erf(f64(xe)).numpy()], rtol=1e-6)
    add("neg", "Neg", [xu], [(-fu).numpy()])
    add("abs", "Abs", [xu], [torch.abs(fu).numpy()])
    xr = (np.sign(xu) + (xu == 0)) * (0.25 + np.abs(xu))
    add("reciprocal", "Reciprocal", [xr.astype(np.float32)],
        [(1.0 / f64(xr.astype(np.float32))).numpy()])
    add("softplus", "Softplus", [xu], [F.softplus(fu).numpy()])
    add("elu", "Elu", [xu], [F.elu(fu, 1.0).numpy()], dict(type="ActivationParams", alpha=1.0))
    add("elu_alpha", "Elu", [xu], [F.elu(fu, 0.3).numpy()], dict(type="ActivationParams", alpha=0.3))
    add("gelu", "Gelu", [xu], [F.gelu(fu).numpy()])
    add("mish", "Mish", [xu], [F.mish(fu).numpy()])
    add("swish", "Swish", [xu], [F.silu(fu).numpy()])

    # ---------------------------------------------- Pow Max Min PRelu
    def binary_np(name, op, a, b, y, params=None):
        add(name, op, [a, b], [np.asarray(y)], params)

    base = (np.abs(rand(2, 3, 4)) + 0.1).astype(np.float32)
    for name, e in (("pow_sq", np.array(2.0, np.float32)), ("pow_sqrt", np.array([0.5], np.float32)),
                    ("pow_scalar3", np.array(3.0, np.float32)),
                    ("pow_int64_scalar", np.array(2, np.int64)),
                    ("pow_bcast", rand(3, 1, scale=2.0))):
        y = torch.pow(f64(base), f64(e.astype(np.float64))).numpy()
        binary_np(name, "Pow", base, e, y)
    xs = rand(2, 3, 4)
    binary_np("pow_neg_base_sq", "Pow", xs, np.array(2.0, np.float32), f64(xs).pow(2).numpy())
    for op, fn in (("Max", torch.maximum), ("Min", torch.minimum)):
        lo = op.lower()
        for tag, sa, sb in (("same", (2, 3, 4), (2, 3, 4)), ("bcast", (2, 1, 4), (3, 1)),
                            ("scalar", (2, 3), ())):
            a, b = rand(*sa), rand(*sb)
            binary_np(f"{lo}_{tag}", op, a, b, fn(f64(a), f64(b)).numpy())
    xpr = rand(2, 4, 3, 3)
    for name, slope in (("prelu_channel", rand(4, 1, 1)), ("prelu_single", rand(1)),
                        ("prelu_full", rand(2, 4, 3, 3))):
        y = torch.where(f64(xpr) < 0, f64(xpr) * f64(slope), f64(xpr)).numpy()
        if slope.shape == (4, 1, 1):  # cross-check with torch's PReLU
            assert np.allclose(F.prelu(f64(xpr), f64(slope.reshape(4))).numpy(), y)
        binary_np(name, "PRelu", xpr, slope, y)

    # ------------------------------------------------------------------ Tile
    xt = rand(2, 3)
    add("tile_2d", "Tile", [xt], [np.tile(xt, (2, 3))])
    xt3 = rand(1, 2, 3)
    add("tile_3d_inner1", "Tile", [xt3], [np.tile(xt3, (3, 2, 1))])
    xti = np.arange(6, dtype=np.int64).reshape(3, 2)
    add("tile_int64", "Tile", [xti], [np.tile(xti, (1, 2))])

    # -------------------------------------------- ReduceSum/Max/Min/L2
    for op, fn in (("ReduceSum", np.sum), ("ReduceMax", np.max), ("ReduceMin", np.min),
                   ("ReduceL2", lambda v, axis, keepdims: np.sqrt(np.sum(v * v, axis=axis,
                                                                         keepdims=keepdims)))):
        lo = op.lower()
        for tag, shape, axes, keep in (("hw_keep", (2, 3, 4, 5), [2, 3], True),
                                       ("c", (2, 3, 4, 5), [1], False),
                                       ("0_2", (2, 3, 4, 5), [0, 2], True),
                                       ("last", (3, 4, 6), [2], False),
                                       ("all", (3, 4, 5), [], False)):
            x = rand(*shape)
            y = fn(x.astype(np.float64), axis=tuple(axes) if axes else None, keepdims=keep)
            add(f"{lo}_{tag}", op, [x], [np.asarray(y)],
                dict(type="ReduceParams", axes=axes, keepdims=keep))
    xa4 = rand(2, 3, 4)
    assert np.allclose(torch.amax(f64(xa4), dim=(0, 2)).numpy(), xa4.max(axis=(0, 2)))

    # --------------------------------------------------------- ArgMax/ArgMin
    xg = rand(3, 5, 4)
    xg[0, 1, 0] = xg[0, 3, 0] = 10.0   # ties: the first index wins
    xg[1, 2, 1] = xg[1, 4, 1] = -10.0
    for op, fn in (("ArgMax", torch.argmax), ("ArgMin", torch.argmin)):
        for axis, keep in ((1, True), (2, False), (0, True)):
            y = fn(f64(xg), dim=axis, keepdim=keep).numpy().astype(np.int64)
            assert np.array_equal(y, (np.argmax if op == "ArgMax" else np.argmin)(
                xg, axis=axis, keepdims=keep))
            add(f"{op.lower()}_axis{axis}_{'keep' if keep else 'drop'}", op, [xg], [y],
                dict(type="ReduceParams", axes=[axis], keepdims=keep))

    # ------------------------------------------------------------ LogSoftmax
    for axis, shape in ((1, (2, 5, 3, 4)), (3, (2, 3, 4, 6)), (0, (7,))):
        x = rand(*shape, scale=4.0)
        x.flat[0] = 1000.0
        add(f"log_softmax_axis{axis}_r{len(shape)}", "LogSoftmax", [x],
            [torch.log_softmax(f64(x), axis).numpy()], dict(type="AxisParams", axis=axis))

    # ------------------------------------------------------------------ TopK
    def topk_np(x, k, axis, largest):
        """Independent reference: a stable sort keeps equal values in index order."""
        order = np.argsort(-x if largest else x, axis=axis, kind="stable")
        idx = np.take(order, np.arange(k), axis=axis)
        return np.take_along_axis(x, idx, axis=axis), idx.astype(np.int64)

    xk = rand(3, 8, 4)
    xk[0, 2, 0] = xk[0, 5, 0] = xk[0, 6, 0] = 5.0  # ties
    xk[1, :, 1] = 0.5
    # The plan's TopK is largest-first (the planner rewrites largest=0).
    for tag, k, axis, largest in (("largest_axis1", 3, 1, True), ("axis1_k4", 4, 1, True),
                                  ("last_axis", 2, 2, True), ("all", 8, 1, True),
                                  ("axis0", 1, 0, True)):
        v, i = topk_np(xk, k, axis, largest)
        tv, _ = torch.topk(f64(xk), k, dim=axis, largest=largest, sorted=True)
        assert np.allclose(tv.numpy(), v)
        add(f"topk_{tag}", "TopK", [xk], [v, i],
            dict(type="AxisParams", axis=axis))

    # ---------------------------------------------------- BatchNormalization
    for name, shape in (("bn_4d", (2, 6, 5, 4)), ("bn_2d", (4, 6))):
        c = shape[1]
        x, s, b, mean = rand(*shape), rand(c), rand(c), rand(c)
        var = (np.abs(rand(c)) + 0.1).astype(np.float32)
        y = F.batch_norm(f64(x), f64(mean), f64(var), f64(s), f64(b), False, 0.0, 1e-3)
        add(name, "BatchNormalization", [x, s, b, mean, var], [y.numpy()],
            dict(type="BatchNormParams", epsilon=1e-3))

    # -------------------------------------------------------- ConvTranspose
    # ConvParams as the planner lowers them: the end pads less output_padding
    # (not below 0); the output shape carries output_padding.
    def conv_t(name, x_shape, m, kernel, strides, pads, opad, dilations, group, bias):
        sp = len(kernel)
        x = rand(*x_shape)
        w = rand(x_shape[1], m // group, *kernel, scale=0.5)
        b = rand(m) if bias else None
        fn = F.conv_transpose2d if sp == 2 else F.conv_transpose1d
        y = fn(f64(x), f64(w), None if b is None else f64(b), strides, pads[:sp], opad, group,
               dilations)
        lowered = pads[:sp] + [max(0, pads[sp + i] - opad[i]) for i in range(sp)]
        params = dict(type="ConvParams", kernel=list(kernel), strides=strides, pads=lowered,
                      dilations=dilations, group=group)
        add(name, "ConvTranspose", [x, w, b] if bias else [x, w], [y.numpy()], params)

    conv_t("convt_s2_p1_opad1", (2, 4, 5, 7), 6, (3, 3), [2, 2], [1, 1, 1, 1], [1, 1], [1, 1], 1,
           True)
    conv_t("convt_groups_dil", (1, 4, 6, 5), 6, (3, 2), [2, 1], [1, 0, 1, 0], [0, 0], [1, 2], 2,
           False)
    conv_t("convt_1d", (1, 3, 9), 5, (4,), [2], [1, 1], [0], [1], 1, True)
    conv_t("convt_row_blocks", (1, 64, 24, 24), 64, (4, 4), [2, 2], [1, 1, 1, 1], [0, 0], [1, 1],
           1, True)

    # ------------------------------------------------------------- Resize
    # (The *Params names below are op-level; reference_test.cc lowers them to
    # PoolParams / AxisParams / BatchNormParams as the planner does.)
    x = rand(2, 3, 5, 6)
    y = F.interpolate(f64(x), scale_factor=2, mode="nearest")
    add("resize_nearest_x2", "Resize", [x], [y.numpy()],
        dict(type="ResizeParams", mode=0, y0=[o // 2 for o in range(10)],
             x0=[o // 2 for o in range(12)]))

    def align_corners_table(n_in, n_out):
        lo, hi, wt = [], [], []
        for o in range(n_out):
            src = o * (n_in - 1) / (n_out - 1)
            i = int(np.floor(src))
            lo.append(i)
            hi.append(min(i + 1, n_in - 1))
            wt.append(src - i)
        return lo, hi, wt

    y = F.interpolate(f64(x), size=(9, 4), mode="bilinear", align_corners=True)
    y0, y1, wy = align_corners_table(5, 9)
    x0, x1, wx = align_corners_table(6, 4)
    add("resize_bilinear_ac", "Resize", [x], [y.numpy()],
        dict(type="ResizeParams", mode=1, y0=y0, y1=y1, wy=wy, x0=x0, x1=x1, wx=wx))

    # ------------------------------------------------ DepthToSpace / SpaceToDepth
    x = rand(2, 12, 3, 4)
    add("depth_to_space_crd", "DepthToSpace", [x], [F.pixel_shuffle(f64(x), 2).numpy()],
        dict(type="DepthSpaceParams", blocksize=2, crd=True))
    dcr = np.reshape(np.transpose(np.reshape(x, (2, 2, 2, 3, 3, 4)), (0, 3, 4, 1, 5, 2)),
                     (2, 3, 6, 8))
    add("depth_to_space_dcr", "DepthToSpace", [x], [dcr],
        dict(type="DepthSpaceParams", blocksize=2, crd=False))
    x = rand(1, 3, 6, 9)
    s2d = np.reshape(np.transpose(np.reshape(x, (1, 3, 2, 3, 3, 3)), (0, 3, 5, 1, 2, 4)),
                     (1, 27, 2, 3))
    add("space_to_depth", "SpaceToDepth", [x], [s2d],
        dict(type="DepthSpaceParams", blocksize=3, crd=False))

    # ------------------------------------------ LayerNorm / InstanceNorm
    for name, shape, axis, bias in (("layernorm_last", (2, 5, 37), 2, True),
                                    ("layernorm_2d_nobias", (2, 3, 4, 6), 2, False)):
        x = rand(*shape, scale=3.0) + 1.5
        norm = shape[axis:]
        s, b = rand(*norm), rand(*norm)
        y = F.layer_norm(f64(x), norm, f64(s), f64(b) if bias else None, 1e-5)
        add(name, "LayerNormalization", [x, s, b] if bias else [x, s], [y.numpy()],
            dict(type="LayerNormParams", axis=axis, epsilon=1e-5))
    x = rand(2, 4, 5, 6, scale=2.0) - 1.0
    s, b = rand(4), rand(4)
    y = F.instance_norm(f64(x), weight=f64(s), bias=f64(b), eps=1e-3)
    add("instancenorm", "InstanceNormalization", [x, s, b], [y.numpy()],
        dict(type="BatchNormParams", epsilon=1e-3))

    # ------------------------------------------------------- LSTM / GRU
    # torch's nn.LSTM / nn.GRU with the weights in ONNX's gate order (torch:
    # LSTM i f g o, GRU r z n; ONNX: LSTM i o f c, GRU z r h).
    def rnn_case(name, lstm, t_len, batch, inp, hidden, bidir, state):
        mod = (torch.nn.LSTM if lstm else torch.nn.GRU)(inp, hidden, bidirectional=bidir).double()
        dirs = 2 if bidir else 1
        order = [0, 3, 1, 2] if lstm else [1, 0, 2]
        w, r, b = [], [], []
        with torch.no_grad():
            for p in mod.parameters():
                p.copy_(f64(rand(*p.shape, scale=0.5)))
        for d in range(dirs):
            sfx = "_reverse" if d else ""

            def reorder(t):
                return np.concatenate([np.split(t.detach().numpy(), len(order))[k] for k in order])
            w.append(reorder(getattr(mod, "weight_ih_l0" + sfx)))
            r.append(reorder(getattr(mod, "weight_hh_l0" + sfx)))
            b.append(np.concatenate([reorder(getattr(mod, "bias_ih_l0" + sfx)),
                                     reorder(getattr(mod, "bias_hh_l0" + sfx))]))
        x = rand(t_len, batch, inp)
        h0 = rand(dirs, batch, hidden) if state else None
        c0 = rand(dirs, batch, hidden) if state and lstm else None
        with torch.no_grad():
            if not state:
                y, hn = mod(f64(x))
            elif lstm:
                y, hn = mod(f64(x), (f64(h0), f64(c0)))
            else:
                y, hn = mod(f64(x), f64(h0))
        y = y.numpy().reshape(t_len, batch, dirs, hidden).transpose(0, 2, 1, 3)
        states = [hn[0].numpy(), hn[1].numpy()] if lstm else [hn.numpy()]
        f32 = [np.asarray(a, np.float32) for a in (w, r, b)]
        inputs = [x] + f32 + [None, h0] + ([c0] if lstm else [])
        while inputs[-1] is None:
            inputs.pop()
        add(name, "LSTM" if lstm else "GRU", inputs, [y] + states,
            dict(type="AxisParams", axis=(2 if bidir else 0) + (0 if lstm else 4)))

    rnn_case("lstm_bidir_state", True, 5, 2, 3, 4, True, True)
    rnn_case("lstm_forward", True, 7, 1, 6, 5, False, False)
    rnn_case("gru_bidir_state", False, 5, 2, 3, 4, True, True)
    rnn_case("gru_forward", False, 6, 3, 2, 8, False, False)

    # ------------------------------------------------------- Concat / Split
    parts = [rand(2, 3, 4), rand(2, 1, 4), rand(2, 5, 4)]
    add("concat_axis1", "Concat", parts, [np.concatenate(parts, 1)], dict(type="AxisParams", axis=1))
    parts = [rand(1, 3), rand(4, 3)]
    add("concat_axis0", "Concat", parts, [np.concatenate(parts, 0)], dict(type="AxisParams", axis=0))
    parts = [rand(2, 3, 2), rand(2, 3, 5)]
    add("concat_last", "Concat", parts, [np.concatenate(parts, 2)], dict(type="AxisParams", axis=2))
    parts = [rng.integers(-9, 9, (2, 2)).astype(np.int64), rng.integers(-9, 9, (2, 3)).astype(np.int64)]
    add("concat_int64", "Concat", parts, [np.concatenate(parts, 1)], dict(type="AxisParams", axis=1))
    x = rand(2, 9, 4)
    add("split_axis1", "Split", [x], list(np.split(x, [2, 5], axis=1)), dict(type="AxisParams", axis=1))
    x = rand(3, 2, 6)
    add("split_last", "Split", [x], list(np.split(x, [1], axis=2)), dict(type="AxisParams", axis=2))
    x = rng.integers(0, 255, (4, 6)).astype(np.uint8)
    add("split_uint8", "Split", [x], list(np.split(x, [3], axis=1)), dict(type="AxisParams", axis=1))

    # ---------------------------------------------------------------- Slice
    def slice_case(name, x, starts, ends, steps):
        index = []
        for d in range(x.ndim):
            st, en, sp = starts[d], ends[d], steps[d]
            cnt = max(0, -(-(en - st) // sp)) if sp > 0 else max(0, -(-(st - en) // -sp))
            index.append(st + sp * np.arange(cnt))
        y = x[np.ix_(*index)]
        add(name, "Slice", [x], [y], dict(type="SliceParams", starts=starts, ends=ends,
                                          axes=list(range(x.ndim)), steps=steps))

    x = rand(4, 6, 8)
    slice_case("slice_neg_step", x, [1, 0, 7], [4, 6, -1], [2, 1, -2])
    slice_case("slice_middle_rev", x, [0, 5, 1], [4, -1, 7], [1, -1, 3])
    slice_case("slice_contiguous", x, [1, 2, 0], [3, 5, 8], [1, 1, 1])
    slice_case("slice_empty", x, [0, 0, 3], [4, 6, 3], [1, 1, 1])
    slice_case("slice_int64", rng.integers(0, 100, (5, 7)).astype(np.int64), [4, 1], [-1, 7],
               [-1, 2])

    # ------------------------------------------------------------------ Pad
    def pad_case(name, x, pads, mode, value=0.0):
        r = x.ndim
        width = [(pads[d], pads[r + d]) for d in range(r)]
        mode_name = ["constant", "reflect", "edge"][mode]
        if mode == 0:
            y = np.pad(x, width, mode="constant", constant_values=np.array(value).astype(x.dtype))
        else:
            y = np.pad(x, width, mode=mode_name)
        add(name, "Pad", [x], [y], dict(type="PadParams", pads=pads, mode=mode, value=value))

    x = rand(2, 3, 4, 5)
    pad_case("pad_constant", x, [0, 0, 1, 2, 0, 1, 2, 1], 0, 1.5)
    pad_case("pad_reflect", x, [0, 1, 2, 3, 0, 0, 1, 2], 1)
    pad_case("pad_edge", x, [1, 0, 3, 2, 0, 2, 0, 4], 2)
    pad_case("pad_reflect_2d", rand(3, 4), [2, 3, 2, 3], 1)
    pad_case("pad_constant_int32", rng.integers(-5, 5, (3, 4)).astype(np.int32), [1, 0, 0, 2], 0,
             7.0)
    pad_case("pad_zero_pads", rand(2, 3), [0, 0, 0, 0], 0)

    # ------------------------------------------------------------ Transpose
    for name, x, perm in (("transpose_nhwc", rand(2, 3, 4, 5), [0, 2, 3, 1]),
                          ("transpose_mixed", rand(2, 3, 4, 5), [3, 1, 0, 2]),
                          ("transpose_2d", rand(7, 9), [1, 0]),
                          ("transpose_identity", rand(3, 4), [0, 1]),
                          ("transpose_int64", rng.integers(0, 9, (2, 3, 4)).astype(np.int64),
                           [2, 0, 1]),
                          ("transpose_unit_dims", rand(1, 5, 1, 3), [2, 3, 0, 1])):
        add(name, "Transpose", [x], [np.transpose(x, perm)], dict(type="TransposeParams", perm=perm))

    # --------------------------------------------------------------- Gather
    data = rand(5, 4, 3)
    idx = np.array([[0, -1], [2, 4]], dtype=np.int64)
    add("gather_axis0_i64", "Gather", [data, idx], [np.take(data, idx % 5, axis=0)],
        dict(type="AxisParams", axis=0))
    idx = np.array([3, -4, 0], dtype=np.int32)
    add("gather_axis1_i32", "Gather", [data, idx], [np.take(data, idx % 4, axis=1)],
        dict(type="AxisParams", axis=1))
    idx = np.array(2, dtype=np.int64)
    add("gather_scalar_axis2", "Gather", [data, idx], [np.take(data, 2, axis=2)],
        dict(type="AxisParams", axis=2))
    data_i = rng.integers(0, 50, (6, 2)).astype(np.int64)
    idx = np.array([5, 0, -6], dtype=np.int64)
    add("gather_int64_data", "Gather", [data_i, idx], [np.take(data_i, idx % 6, axis=0)],
        dict(type="AxisParams", axis=0))

    # ------------------------------------------------------ byte-copy ops
    x = rand(2, 3, 4)
    add("reshape", "Reshape", [x, np.array([6, 4], dtype=np.int64)], [x.reshape(6, 4)])
    add("flatten", "Flatten", [x], [x.reshape(2, 12)], dict(type="AxisParams", axis=1))
    add("squeeze", "Squeeze", [x[:, :1]], [x[:, 0]])
    add("unsqueeze", "Unsqueeze", [x], [x[:, None]])
    add("identity", "Identity", [x], [x.copy()])
    add("copy", "Copy", [x], [x.copy()])
    xi = rng.integers(0, 9, (3, 5)).astype(np.int32)
    add("identity_int32", "Identity", [xi], [xi.copy()])

    # ----------------------------- comparisons, logic, Where, Cast, Expand
    a = rand(2, 3, 4)
    b = rand(3, 1)
    b[0, 0] = a[0, 0, 0]  # an equal pair
    for op, fn in (("Equal", np.equal), ("Greater", np.greater), ("Less", np.less)):
        add(f"{op.lower()}_f32_broadcast", op, [a, b], [fn(a, b)])
    ai = rng.integers(-3, 3, (4, 5)).astype(np.int64)
    bi = rng.integers(-3, 3, (5,)).astype(np.int64)
    add("equal_i64", "Equal", [ai, bi], [np.equal(ai, bi)])
    add("greater_i32", "Greater", [ai.astype(np.int32), bi.astype(np.int32)], [ai > bi])
    add("less_i64_scalar", "Less", [ai, np.array(0, dtype=np.int64)], [ai < 0])
    m = rng.integers(0, 2, (3, 4)).astype(bool)
    n = rng.integers(0, 2, (4,)).astype(bool)
    add("equal_bool", "Equal", [m, n], [np.equal(m, n)])
    add("not", "Not", [m], [np.logical_not(m)])
    add("and_broadcast", "And", [m, n], [np.logical_and(m, n)])
    cond = rng.integers(0, 2, (2, 1, 4)).astype(bool)
    x = rand(3, 4)
    y = rand(2, 3, 1)
    add("where_f32_broadcast", "Where", [cond, x, y], [np.where(cond, x, y)])
    xi = rng.integers(-9, 9, (4,)).astype(np.int64)
    add("where_i64_scalar", "Where", [cond, xi, np.array(-1, dtype=np.int64)],
        [np.where(cond, xi, -1)])
    # Cast: float to integers truncates toward zero and saturates (NaN -> 0),
    # integers wrap, anything to bool is x != 0.
    f = np.array([[0.0, -0.0, 1.9, -1.9], [2.5e9, -2.5e9, 300.7, -200.2],
                  [np.nan, 7.0, 0.4, -129.0]], dtype=np.float32)
    def sat(v, t):
        info = np.iinfo(t)
        return np.clip(np.nan_to_num(np.trunc(v.astype(np.float64)), nan=0.0), info.min,
                       info.max).astype(t)
    add("cast_f32_i32", "Cast", [f], [sat(f, np.int32)])
    add("cast_f32_i64", "Cast", [f], [sat(f, np.int64)])
    add("cast_f32_u8", "Cast", [f], [sat(f, np.uint8)])
    add("cast_f32_i8", "Cast", [f], [sat(f, np.int8)])
    add("cast_f32_bool", "Cast", [f], [f != 0])
    wide = np.array([0, 1, -1, 300, -300, 2**40 + 5], dtype=np.int64)
    add("cast_i64_i32", "Cast", [wide], [wide.astype(np.int32)])
    add("cast_i64_u8", "Cast", [wide], [wide.astype(np.uint8)])
    add("cast_i64_f32", "Cast", [wide], [wide.astype(np.float32)])
    add("cast_i64_bool", "Cast", [wide], [wide != 0])
    add("cast_bool_f32", "Cast", [m], [m.astype(np.float32)])
    add("cast_bool_i64", "Cast", [m], [m.astype(np.int64)])
    add("cast_i32_f32", "Cast", [ai.astype(np.int32)], [ai.astype(np.float32)])
    add("cast_u8_i8", "Cast", [np.array([0, 127, 128, 255], dtype=np.uint8)],
        [np.array([0, 127, 128, 255], dtype=np.uint8).astype(np.int8)])
    x = rand(3, 1)
    add("expand_f32", "Expand", [x], [np.broadcast_to(x, (2, 3, 4)).copy()])
    add("expand_bool", "Expand", [n], [np.broadcast_to(n, (3, 4)).copy()])
    add("expand_i64_same", "Expand", [xi], [xi.copy()])

    # ------------------------------------- QuantizeLinear, DequantizeLinear
    # ONNX: y = saturate(rint(x / scale) + zero_point), rint rounding half to
    # even, in float32 as ONNX Runtime computes it; NaN quantizes to the zero
    # point (Baton's rule; ONNX leaves it undefined).
    def quantize(x, scale, zp, axis, qtype):
        shape = [1] * x.ndim
        if scale.size > 1:
            shape[axis] = scale.size
        s = scale.reshape(shape).astype(np.float32)
        z = (zp if zp is not None else np.zeros_like(scale, dtype=np.int64)).reshape(shape)
        r = np.nan_to_num(x.astype(np.float32) / s, nan=0.0, posinf=1e9, neginf=-1e9)
        info = np.iinfo(qtype)
        return np.clip(np.rint(r).astype(np.float64) + z.astype(np.float64), info.min,
                       info.max).astype(qtype)

    def dequantize(x, scale, zp, axis):
        shape = [1] * x.ndim
        if scale.size > 1:
            shape[axis] = scale.size
        z = (zp.astype(np.int64) if zp is not None else np.zeros(scale.shape, np.int64))
        diff = x.astype(np.int64) - z.reshape(shape)
        return diff.astype(np.float32) * scale.reshape(shape).astype(np.float32)

    ties = np.array([[0.25, 0.75, -0.25, -0.75, 1.25, 0.0],
                     [300.0, -300.0, 1e30, -1e30, np.nan, 63.4]], dtype=np.float32)
    s = np.array(0.5, dtype=np.float32)
    for qt, zv in ((np.uint8, 128), (np.int8, -3)):
        zp = np.array(zv, dtype=qt)
        add(f"quantize_{np.dtype(qt).name}_tensor_ties", "QuantizeLinear", [ties, s, zp],
            [quantize(ties, s, zp, 0, qt)])
    add("quantize_no_zero_point", "QuantizeLinear", [ties, s], [quantize(ties, s, None, 0, np.uint8)])
    xq = rand(2, 3, 4, scale=3.0)
    s3 = np.array([0.02, 0.05, 0.011], dtype=np.float32)
    z3 = np.array([-5, 0, 17], dtype=np.int8)
    add("quantize_i8_axis1", "QuantizeLinear", [xq, s3, z3], [quantize(xq, s3, z3, 1, np.int8)],
        dict(type="AxisParams", axis=1))
    s4 = np.array([0.1, 0.02, 0.3, 0.07], dtype=np.float32)
    z4 = np.array([0, 10, 250, 128], dtype=np.uint8)
    add("quantize_u8_last_axis", "QuantizeLinear", [xq, s4, z4], [quantize(xq, s4, z4, 2, np.uint8)],
        dict(type="AxisParams", axis=2))
    u8 = rng.integers(0, 256, (2, 3, 4)).astype(np.uint8)
    add("dequantize_u8_tensor", "DequantizeLinear", [u8, np.array(0.037, np.float32),
                                                      np.array(131, np.uint8)],
        [dequantize(u8, np.array(0.037, np.float32), np.array(131, np.uint8), 0)])
    w8 = rng.integers(-128, 128, (4, 3, 3, 3)).astype(np.int8)
    sw = np.array([0.01, 0.002, 0.3, 0.05], dtype=np.float32)
    add("dequantize_i8_axis0", "DequantizeLinear", [w8, sw, np.zeros(4, np.int8)],
        [dequantize(w8, sw, np.zeros(4, np.int8), 0)], dict(type="AxisParams", axis=0))
    b32 = rng.integers(-2**20, 2**20, (4,)).astype(np.int32)
    add("dequantize_i32_bias", "DequantizeLinear", [b32, sw], [dequantize(b32, sw, None, 0)],
        dict(type="AxisParams", axis=0))
    extremes = np.array([-2**31, 2**31 - 1, 0, -5], dtype=np.int32)
    zx = np.array(7, np.int32)
    add("dequantize_i32_extremes", "DequantizeLinear", [extremes, np.array(0.5, np.float32), zx],
        [((extremes.astype(np.int64) - 7).astype(np.float64) * 0.5).astype(np.float32)])
    add("dequantize_i8_no_zero_point", "DequantizeLinear", [w8, np.array(0.25, np.float32)],
        [dequantize(w8, np.array(0.25, np.float32), None, 0)])

    # ------------------------------------------ QLinearConv, QLinearMatMul
    # The integer reference above (qlinear_*), which qlinear_vs_ort.py checks
    # against ONNX Runtime. y_scale defaults to one that puts typical outputs
    # `spread` LSBs from the zero point; ties=True makes the requantization
    # scale a power of two (1/2 or 1/4), so many v are exactly k + 0.5.
    relu = [0.0, float(np.finfo(np.float32).max)]  # clamp {0, +inf}; JSON has no inf

    def q8(dt, shape):
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max + 1, shape).astype(dt)

    def near(dt, zero, shape):  # within 4 of the zero point(s): small accumulators
        info = np.iinfo(dt)
        z = np.asarray(zero, np.int64).reshape((-1,) + (1,) * (len(shape) - 1)) \
            if np.ndim(zero) else np.int64(zero)
        return np.clip(z + rng.integers(-4, 5, shape), info.min, info.max).astype(dt)

    def w_quant(wdt, m, per_channel, zero):
        ws = (rng.uniform(0.002, 0.02, m) if per_channel else rng.uniform(0.002, 0.02, ()))
        ws = np.asarray(ws, np.float32)
        if zero == "random":
            wz = q8(wdt, (m,) if per_channel else ())
        else:
            wz = np.full((m,) if per_channel else (), zero, wdt)
        return ws, wz

    def y_scale_for(acc, xs, ws, spread):
        med = float(np.median(np.abs(acc))) + 1.0
        return np.float32(float(xs) * float(np.mean(ws)) * med / spread)

    def qconv(name, n, c, spatial, m, kernel, strides=None, pads=None, dilations=None, group=1,
              xdt=np.uint8, wdt=np.int8, ydt=None, per_channel=False, wzero=0, bias=True,
              clamp=None, spread=40.0, ties=False, bias_range=2**14, ys=None, yz=None,
              clamp_lsb=None, bias_values=None):
        sp = len(spatial)
        strides = strides or [1] * sp
        pads = pads or [0] * (2 * sp)
        dilations = dilations or [1] * sp
        ydt = ydt or xdt
        x = q8(xdt, (n, c, *spatial))
        w = q8(wdt, (m, c // group, *kernel))
        xs = np.float32(0.05 if not ties else 0.0625)
        xz = q8(xdt, ())
        ws, wz = w_quant(wdt, m, per_channel, wzero)
        if ties:
            ws = np.full(ws.shape, 0.125, np.float32)
            x, w = near(xdt, xz, x.shape), near(wdt, wz, w.shape)
        b = rng.integers(-bias_range, bias_range, (m,)).astype(np.int32) if bias else None
        if bias_values is not None:
            b = np.array(bias_values, np.int64).astype(np.int32)
        acc = qlinear_conv_acc(np, x, xz, w, wz, b, strides, pads, dilations, group)
        if ys is None:
            ys = (np.float32(xs * np.float32(0.125) * 2) if ties
                  else y_scale_for(acc, xs, ws, spread))
        ys = np.float32(ys)
        yz = q8(ydt, ()) if yz is None else np.asarray(yz, ydt)
        if clamp_lsb is not None:  # a fused clamp that binds inside the output range
            clamp = [float(clamp_lsb[0] * ys), float(clamp_lsb[1] * ys)]
        y = qlinear_conv_ref(np, x, xs, xz, w, ws, wz, ys, yz, b, strides, pads, dilations,
                             group, clamp)
        params = dict(type="ConvParams", kernel=list(kernel), strides=strides, pads=pads,
                      dilations=dilations, group=group)
        if clamp is not None:
            params["clamp"] = clamp
        inputs = [x, xs, xz, w, ws, wz, ys, yz] + ([b] if bias else [])
        add(name, "QLinearConv", inputs, [y], params)

    qconv("qconv_u8x_s8w_tensor", 1, 5, (9, 10), 7, (3, 3), pads=[1, 1, 1, 1])
    qconv("qconv_s8x_perchannel_wz", 2, 6, (11, 9), 8, (3, 3), strides=[2, 2], pads=[1, 0, 2, 1],
          xdt=np.int8, per_channel=True, wzero="random", bias=False)
    qconv("qconv_u8x_u8w_wz", 1, 4, (7, 8), 5, (3, 2), pads=[1, 1, 0, 1], wdt=np.uint8,
          per_channel=True, wzero="random")
    qconv("qconv_s8x_u8w_u8y", 1, 3, (6, 7), 4, (2, 3), xdt=np.int8, wdt=np.uint8, ydt=np.uint8,
          wzero="random")                                         # dtype pairs ORT lacks
    qconv("qconv_u8x_s8y", 1, 3, (6, 6), 4, (3, 3), pads=[1, 1, 1, 1], ydt=np.int8)
    qconv("qconv_dw_s2_pads", 1, 8, (13, 12), 8, (3, 3), strides=[2, 2], pads=[1, 1, 1, 1],
          group=8, per_channel=True, wzero="random")
    qconv("qconv_dw_s2_s8", 2, 5, (10, 11), 5, (3, 3), strides=[2, 2], pads=[0, 0, 1, 1],
          group=5, xdt=np.int8, per_channel=True)
    qconv("qconv_dw_mult2_5x5_dil2", 1, 3, (14, 13), 6, (5, 5), pads=[4, 4, 4, 4],
          dilations=[2, 2], group=3, per_channel=True, wzero="random", clamp=[0.0, 6.0],
          ys=0.04, yz=10)
    qconv("qconv_dw_wide_chunks", 1, 2, (3, 150), 2, (3, 3), pads=[1, 1, 1, 1], group=2)
    qconv("qconv_dw_wide_s2", 1, 2, (4, 301), 2, (1, 5), strides=[1, 2], pads=[0, 2, 0, 2],
          group=2, xdt=np.int8)
    qconv("qconv_dw_1d", 1, 4, (30,), 4, (3,), strides=[2], pads=[1, 1], group=4,
          per_channel=True)
    qconv("qconv_dil2", 1, 4, (13, 14), 6, (3, 3), pads=[2, 2, 2, 2], dilations=[2, 2],
          xdt=np.int8, per_channel=True, wzero="random")
    qconv("qconv_group2", 1, 4, (9, 9), 6, (3, 3), pads=[1, 1, 1, 1], group=2, per_channel=True)
    qconv("qconv_group3_s8", 2, 6, (7, 8), 9, (2, 2), strides=[2, 1], group=3, xdt=np.int8,
          wzero="random", bias=False)
    qconv("qconv_1d", 2, 4, (20,), 6, (3,), strides=[2], pads=[1, 2])
    qconv("qconv_1d_dil_s8", 1, 3, (17,), 5, (4,), dilations=[3], pads=[0, 3], xdt=np.int8,
          per_channel=True, wzero="random", bias=False)
    qconv("qconv_1x1_batch", 3, 16, (5, 5), 12, (1, 1), bias=False, per_channel=True)
    qconv("qconv_relu", 1, 6, (8, 8), 10, (3, 3), pads=[1, 1, 1, 1], clamp=relu, yz=40)
    qconv("qconv_relu_s8", 1, 6, (8, 8), 10, (3, 3), pads=[1, 1, 1, 1], xdt=np.int8, clamp=relu,
          yz=-100)
    qconv("qconv_relu6_tighter", 1, 6, (7, 7), 10, (3, 3), strides=[2, 2], pads=[1, 1, 1, 1],
          xdt=np.int8, clamp=[0.0, 6.0], ys=0.05, yz=-100)        # 6 / 0.05 = 120 LSBs < 227
    qconv("qconv_clamp_both", 1, 5, (6, 6), 7, (3, 3), pads=[1, 1, 1, 1], clamp_lsb=[-30.5, 45.3],
          yz=128)
    qconv("qconv_saturate", 1, 8, (6, 6), 8, (3, 3), pads=[1, 1, 1, 1], spread=2000.0)
    qconv("qconv_saturate_s8", 1, 8, (6, 6), 8, (3, 3), xdt=np.int8, spread=3000.0,
          per_channel=True, wzero="random")
    qconv("qconv_ties", 1, 3, (6, 7), 4, (2, 2), bias=False, ties=True, yz=128)
    qconv("qconv_ties_s8_bias", 1, 3, (6, 7), 4, (1, 3), xdt=np.int8, ties=True, yz=0,
          bias_range=9, pads=[0, 1, 0, 1], per_channel=True, wzero="random")
    qconv("qconv_bias_wraps", 1, 3, (5, 5), 4, (3, 3), spread=1e6,   # int32 add wraps, as ORT's
          bias_values=[2**31 - 1, -2**31, 2**31 - 3000, -2**31 + 3000])
    qconv("qconv_k576_blocks", 1, 64, (19, 21), 20, (3, 3), pads=[1, 1, 1, 1],
          per_channel=True)                                       # 399 columns: 8 blocks, tails
    qconv("qconv_k1152_dot", 1, 128, (5, 6), 6, (3, 3), pads=[1, 1, 1, 1],
          per_channel=True)                      # K too large for the pair blocks: the dot path
    qconv("qconv_dw_bands", 1, 2, (120, 150), 2, (3, 3), pads=[1, 1, 1, 1], group=2,
          per_channel=True)                      # more rows than one band holds
    qconv("qconv_kernel_larger_than_input", 1, 2, (2, 3), 3, (3, 3), pads=[1, 1, 1, 1])
    # The VNNI path (int8 weights): K % 4 != 0 (a tail quad), column sums for
    # weight zero points, output rows longer than its 256-byte runs.
    qconv("qconv_1x1_k7_runs", 1, 7, (20, 30), 9, (1, 1), per_channel=True, wzero="random")
    qconv("qconv_wide_rows_s8", 1, 5, (3, 300), 6, (3, 3), pads=[1, 1, 1, 1], xdt=np.int8,
          per_channel=True)
    qconv("qconv_s2_wide_wz", 1, 3, (4, 601), 5, (3, 3), strides=[2, 2], pads=[1, 1, 1, 1],
          wzero=-3)

    def qmatmul(name, a_shape, n, trans_b=False, adt=np.uint8, bdt=np.int8, ydt=None,
                per_col=False, bzero=0, bias=False, clamp=None, spread=40.0, ties=False,
                with_params=True, clamp_lsb=None):
        k = a_shape[-1]
        ydt = ydt or adt
        a = q8(adt, a_shape)
        b = q8(bdt, (n, k) if trans_b else (k, n))
        a_s = np.float32(0.03 if not ties else 0.25)
        az = q8(adt, ())
        bs, bz = w_quant(bdt, n, per_col, bzero)
        if ties:
            bs = np.full(bs.shape, 0.5, np.float32)
            a, b = near(adt, az, a.shape), near(bdt, bz if trans_b else np.int64(0), b.shape)
            if not trans_b:
                b = np.clip(b.astype(np.int64) + np.asarray(bz, np.int64), np.iinfo(bdt).min,
                            np.iinfo(bdt).max).astype(bdt)
        bb = rng.integers(-2**14, 2**14, (n,)).astype(np.int32) if bias else None
        acc = qlinear_matmul_acc(np, a, az, b, bz, bb, trans_b)
        ys = np.float32(0.5) if ties else y_scale_for(acc, a_s, bs, spread)
        yz = q8(ydt, ())
        if clamp_lsb is not None:
            clamp = [float(clamp_lsb[0] * ys), float(clamp_lsb[1] * ys)]
        y = qlinear_matmul_ref(np, a, a_s, az, b, bs, bz, ys, yz, bb, trans_b, clamp)
        params = None
        if with_params:
            params = dict(type="GemmParams", alpha=1.0, beta=1.0, trans_a=False, trans_b=trans_b)
            if clamp is not None:
                params["clamp"] = clamp
        inputs = [a, a_s, az, b, bs, bz, ys, yz] + ([bb] if bias else [])
        add(name, "QLinearMatMul", inputs, [y], params)

    qmatmul("qmatmul_percol_scale", (5, 40), 9, per_col=True)
    qmatmul("qmatmul_trans_b_bias_relu", (6, 33), 10, trans_b=True, adt=np.int8, per_col=True,
            bzero="random", bias=True, clamp=relu)
    qmatmul("qmatmul_batch", (2, 3, 7, 30), 11, per_col=True, bzero="random", bdt=np.uint8)
    qmatmul("qmatmul_no_params", (4, 17), 6, with_params=False, adt=np.int8)
    qmatmul("qmatmul_blocks", (100, 700), 130, per_col=True, bias=True)  # 2 packed, 3 row blocks
    qmatmul("qmatmul_blocks_trans_b", (100, 700), 130, trans_b=True, adt=np.int8, ydt=np.uint8)
    qmatmul("qmatmul_vector", (50,), 7, trans_b=True, bias=True)
    qmatmul("qmatmul_ties", (9, 3), 12, ties=True)
    qmatmul("qmatmul_relu6", (5, 20), 8, clamp=[0.0, 6.0], spread=300.0, per_col=True)
    qmatmul("qmatmul_clamp_lsb", (6, 40), 9, clamp_lsb=[-20.5, 33.5], adt=np.int8, per_col=True,
            bzero="random")
    # Per-channel scales next to rounding boundaries (qlinear_boundary_scales):
    # every product of two 8-bit values, so that only ONNX Runtime's float
    # expression of the scale reproduces these outputs.
    def boundary_case(name, kind, adt, bdt):
        ainfo, binfo = np.iinfo(adt), np.iinfo(bdt)
        avals = np.arange(ainfo.min, ainfo.max + 1).astype(adt)
        bvals = np.arange(binfo.min, binfo.max + 1).astype(bdt)
        a_s, ys = np.float32(0.0123), np.float32(0.0123 * 2.0 ** -9)
        az, yz = q8(adt, ()), q8(adt, ())
        bz = np.full(256, 0 if bdt == np.int8 else 128, bdt)
        bs = qlinear_boundary_scales(np, rng, avals.astype(np.int64) - int(az),
                                     bvals.astype(np.int64) - bz, a_s, ys,
                                     ainfo.min - int(yz), ainfo.max - int(yz))
        if kind == "matmul":
            a, b = avals.reshape(256, 1), bvals.reshape(1, 256)
            y = qlinear_matmul_ref(np, a, a_s, az, b, bs, bz, ys, yz, None, False)
            params = dict(type="GemmParams", alpha=1.0, beta=1.0, trans_a=False, trans_b=False)
            add(name, "QLinearMatMul", [a, a_s, az, b, bs, bz, ys, yz], [y], params)
            return
        c, kk = (256, 3) if kind == "depthwise" else (1, 1)
        x = np.broadcast_to(avals.reshape(1, 1, 16, 16), (1, c, 16, 16)).copy()
        w = np.broadcast_to(bz.reshape(256, 1, 1, 1), (256, 1, kk, kk)).copy()
        w[:, 0, kk // 2, kk // 2] = bvals  # other taps hold the zero point
        pads = [kk // 2] * 4
        y = qlinear_conv_ref(np, x, a_s, az, w, bs, bz, ys, yz, None, [1, 1], pads, [1, 1], c)
        add(name, "QLinearConv", [x, a_s, az, w, bs, bz, ys, yz], [y],
            dict(type="ConvParams", kernel=[kk, kk], strides=[1, 1], pads=pads,
                 dilations=[1, 1], group=c))

    boundary_case("qconv_scale_boundaries_1x1", "conv", np.uint8, np.int8)
    boundary_case("qconv_scale_boundaries_dw", "depthwise", np.int8, np.int8)
    boundary_case("qmatmul_scale_boundaries", "matmul", np.uint8, np.uint8)

    # Random small shapes, dtypes and quantization parameters (the same kinds
    # qlinear_vs_ort.py checks against ONNX Runtime).
    for i in range(24):
        sp = 1 if i % 5 == 4 else 2
        kind = ("dense", "group", "depthwise", "pointwise")[i % 4]
        if kind == "depthwise":
            c = int(rng.integers(1, 9))
            group, m = c, c * int(rng.integers(1, 3))
        elif kind == "group":
            group = int(rng.integers(2, 4))
            c, m = group * int(rng.integers(1, 4)), group * int(rng.integers(1, 4))
        else:
            group, c, m = 1, int(rng.integers(1, 12)), int(rng.integers(1, 12))
        kernel = [1 if kind == "pointwise" else int(rng.integers(1, 6)) for _ in range(sp)]
        dil = [int(rng.integers(1, 3)) for _ in range(sp)]
        strides = [int(rng.integers(1, 4)) for _ in range(sp)]
        pads = [int(rng.integers(0, kernel[j % sp])) for j in range(2 * sp)]
        spatial = []
        for j in range(sp):
            need = max(1, (kernel[j] - 1) * dil[j] + 1 - pads[j] - pads[sp + j])
            spatial.append(int(rng.integers(need, need + 9)))
        xdt = (np.uint8, np.int8)[int(rng.integers(0, 2))]
        wdt = (np.uint8, np.int8)[int(rng.integers(0, 2))]
        ydt = (np.uint8, np.int8)[int(rng.integers(0, 2))]
        qconv(f"qconv_random_{i}", int(rng.integers(1, 3)), c, tuple(spatial), m, tuple(kernel),
              strides=strides, pads=pads, dilations=dil, group=group, xdt=xdt, wdt=wdt, ydt=ydt,
              per_channel=bool(rng.integers(0, 2)), wzero=("random", 0)[int(rng.integers(0, 2))],
              bias=bool(rng.integers(0, 2)), spread=float(2.0 ** rng.uniform(2, 9)),
              clamp=(None, relu, [0.0, 6.0])[int(rng.integers(0, 3))])
    for i in range(12):
        batch = [(), (int(rng.integers(1, 4)),), (2, int(rng.integers(1, 3)))][i % 3]
        qmatmul(f"qmatmul_random_{i}", (*batch, int(rng.integers(1, 20)), int(rng.integers(1, 90))),
                int(rng.integers(1, 30)), trans_b=bool(rng.integers(0, 2)),
                adt=(np.uint8, np.int8)[int(rng.integers(0, 2))],
                bdt=(np.uint8, np.int8)[int(rng.integers(0, 2))],
                ydt=(np.uint8, np.int8)[int(rng.integers(0, 2))], per_col=bool(rng.integers(0, 2)),
                bzero=("random", 0)[int(rng.integers(0, 2))], bias=bool(rng.integers(0, 2)),
                spread=float(2.0 ** rng.uniform(2, 9)))

    # ---------------------------------------------------------- QLinearAdd
    # qladd_ref (ONNX Runtime's arithmetic, checked by qlinear_vs_ort.py):
    # both dtypes, broadcasting (scalar, per channel, both ways, outer
    # product), saturation, exact .5 ties (power-of-two scales over every
    # pair of 8-bit values), fused clamps, no c_zero_point.
    def qadd(name, sa, sb, dt=np.uint8, scales=None, zeros=None, clamp=None, a=None, b=None,
             no_c_zero=False):
        a = q8(dt, sa) if a is None else a
        b = q8(dt, sb) if b is None else b
        if scales is None:
            scales = [float(2.0 ** rng.uniform(-9, -3)) for _ in range(3)]
        a_s, b_s, c_s = (np.float32(v) for v in scales)
        az, bz, cz = ((q8(dt, ()) for _ in range(3)) if zeros is None
                      else (np.asarray(v, dt) for v in zeros))
        if no_c_zero:
            cz = None
        y = qladd_ref(np, a, a_s, az, b, b_s, bz, c_s, cz, clamp)
        params = dict(type="ElementwiseParams", clamp=clamp) if clamp is not None else None
        inputs = [a, a_s, az, b, b_s, bz, c_s] + ([] if no_c_zero else [cz])
        add(name, "QLinearAdd", inputs, [y], params)

    for dt, tag in ((np.uint8, "u8"), (np.int8, "i8")):
        info = np.iinfo(dt)
        vals = np.arange(info.min, info.max + 1).astype(dt)
        qadd(f"qadd_{tag}_same_shape", (2, 3, 5, 7), (2, 3, 5, 7), dt)
        qadd(f"qadd_{tag}_scalar_b", (2, 3, 4, 5), (), dt)
        qadd(f"qadd_{tag}_scalar_a", (1,), (2, 3, 4, 5), dt)
        qadd(f"qadd_{tag}_per_channel_b", (2, 8, 5, 5), (1, 8, 1, 1), dt)
        qadd(f"qadd_{tag}_per_channel_a", (1, 8, 1, 1), (2, 8, 5, 5), dt)
        qadd(f"qadd_{tag}_outer", (3, 1, 5), (1, 4, 1), dt)
        qadd(f"qadd_{tag}_last_axis", (2, 3, 6), (6,), dt)
        qadd(f"qadd_{tag}_one_element", (1, 1), (1,), dt)
        qadd(f"qadd_{tag}_saturate", (4, 33), (4, 33), dt, scales=[0.05, 0.07, 0.001])
        # every pair of values, power-of-two scales: exact .5 ties both ways
        grid_a = np.tile(vals, (256, 1))
        grid_b = vals.reshape(256, 1)
        qadd(f"qadd_{tag}_ties_grid", None, None, dt, scales=[2.0 ** -6, 2.0 ** -5, 2.0 ** -3],
             a=grid_a, b=np.tile(grid_b, (1, 256)))
        qadd(f"qadd_{tag}_ties_rows", None, None, dt, scales=[2.0 ** -5, 2.0 ** -6, 2.0 ** -4],
             a=grid_a, b=grid_b)
        qadd(f"qadd_{tag}_ties_cols", None, None, dt, scales=[2.0 ** -4, 2.0 ** -7, 2.0 ** -5],
             a=grid_b, b=grid_a)
        qadd(f"qadd_{tag}_random_scales_grid", None, None, dt,
             scales=[0.0123, 0.0371, 0.0419], a=grid_a, b=np.tile(grid_b, (1, 256)))
        qadd(f"qadd_{tag}_relu", (2, 4, 6, 6), (2, 4, 6, 6), dt, clamp=relu)
        qadd(f"qadd_{tag}_clip6", (2, 4, 6, 6), (1, 4, 1, 1), dt, clamp=[0.0, 6.0],
             scales=[0.03, 0.05, 0.04])
        qadd(f"qadd_{tag}_clamp_binds", (3, 40), (3, 40), dt, clamp=[-0.3, 0.45],
             scales=[0.01, 0.02, 0.005])
    qadd("qadd_u8_no_c_zero_point", (3, 17), (17,), np.uint8, no_c_zero=True)
    # a broadcast along the innermost dimension: ORT exchanges a and b, which
    # changes results; scales picked so that the exchange shows.
    for dt, tag in ((np.uint8, "u8"), (np.int8, "i8")):
        info = np.iinfo(dt)
        vals = np.arange(info.min, info.max + 1).astype(dt)
        ga, gb = vals.reshape(256, 1), np.tile(vals, (256, 1))
        for _ in range(400):
            sc = [np.float32(2.0 ** rng.uniform(-9, -3)) for _ in range(3)]
            zs = [q8(dt, ()) for _ in range(3)]
            y = qladd_ref(np, ga, sc[0], zs[0], gb, sc[1], zs[1], sc[2], zs[2])
            unswapped = qladd_ref(np, np.broadcast_to(ga, gb.shape).copy(), sc[0], zs[0], gb,
                                  sc[1], zs[1], sc[2], zs[2])
            if (y != unswapped).any():
                break
        assert (y != unswapped).any(), "no scales where the exchange shows"
        add(f"qadd_{tag}_exchange_shows", "QLinearAdd", [ga, sc[0], zs[0], gb, sc[1], zs[1],
                                                          sc[2], zs[2]], [y])
    for i in range(8):
        dt = (np.uint8, np.int8)[i % 2]
        r = int(rng.integers(1, 5))
        sa = tuple(int(rng.integers(1, 6)) for _ in range(r))
        sb = tuple(d if rng.random() < 0.5 else 1 for d in sa)
        if i % 4 == 3:
            sa, sb = sb, sa
        qadd(f"qadd_random_{i}", sa, sb, dt,
             scales=[float(2.0 ** rng.uniform(-10, -2)) for _ in range(3)],
             clamp=(None, relu)[int(rng.integers(0, 2))])

    # ------------------------------------- QLinearAveragePool / GlobalAveragePool
    # ONNX Runtime 1.30's fused kernels (contrib_ops qlinear_pool.cc and MLAS
    # qlgavgpool.cpp), in float32 step by step: windows dequantize, sum in
    # row order, divide by the count, then round(avg / y_scale + y_zero);
    # the whole unpadded plane (and the global op) sums integers and
    # requantizes with x_scale / (y_scale * size). Scales shared by x and y
    # put averages of 2 or 4 taps on .5 ties.
    f32 = np.float32

    def qpool_global_ref(x, xs, xz, ys, yz, dt):
        info = np.iinfo(dt)
        size = int(np.prod(x.shape[2:]))
        acc = x.reshape(x.shape[0], x.shape[1], -1).astype(np.int64).sum(-1) - int(xz) * size
        scale = f32(xs) / (f32(ys) * f32(size))
        v = acc.astype(f32) * scale
        v = np.minimum(np.maximum(v, f32(info.min - int(yz))), f32(info.max - int(yz)))
        return (np.rint(v).astype(np.int64) + int(yz)).astype(dt).reshape(
            x.shape[:2] + (1,) * (x.ndim - 2))

    def qpool_window_ref(x, xs, xz, ys, yz, dt, kernel, strides, pads, ceil, incl):
        info = np.iinfo(dt)
        x4 = x if x.ndim == 4 else x[:, :, None, :]
        k = kernel if len(kernel) == 2 else [1] + kernel
        st = strides if len(strides) == 2 else [1] + strides
        pd = pads if len(pads) == 4 else [0, pads[0], 0, pads[1]]
        n, c, h, w = x4.shape
        if k == [h, w] and not any(pd):
            return qpool_global_ref(x, xs, xz, ys, yz, dt)
        plane = f32(xs) * (x4.astype(np.int32) - int(xz)).astype(f32)

        def out_size(i, kk, s_, pb, pe):
            span = i + pb + pe - kk
            o = (-(-span // s_) if ceil else span // s_) + 1
            return o - 1 if ceil and (o - 1) * s_ >= i + pb else o
        oh, ow = out_size(h, k[0], st[0], pd[0], pd[2]), out_size(w, k[1], st[1], pd[1], pd[3])
        y = np.zeros((n, c, oh, ow), dt)
        for i in range(oh):
            y0 = i * st[0] - pd[0]
            y1, y0 = min(y0 + k[0], h), max(y0, 0)
            for j in range(ow):
                x0 = j * st[1] - pd[1]
                x1, x0 = min(x0 + k[1], w), max(x0, 0)
                acc = np.zeros((n, c), f32)
                for a in range(y0, y1):
                    for b in range(x0, x1):
                        acc = (acc + plane[:, :, a, b]).astype(f32)
                cnt = k[0] * k[1] if incl else max(y1 - y0, 0) * max(x1 - x0, 0)
                v = (acc / f32(cnt)).astype(f32) / f32(ys) + f32(int(yz))
                v = np.minimum(np.maximum(v.astype(f32), f32(info.min)), f32(info.max))
                y[:, :, i, j] = np.rint(v).astype(np.int64).astype(dt)
        return y if x.ndim == 4 else y[:, :, 0, :]

    def qpool(name, shape, dt, kernel=None, strides=None, pads=None, ceil=False, incl=False,
              same_scale=True):
        x = q8(dt, shape)
        xs = f32(2.0 ** rng.uniform(-8, -3))
        ys = xs if same_scale else f32(2.0 ** rng.uniform(-8, -3) * 1.37)
        xz, yz = q8(dt, ()), q8(dt, ())
        if kernel is None:
            y = qpool_global_ref(x, xs, xz, ys, yz, dt)
            add(name, "QLinearGlobalAveragePool", [x, xs, xz, ys, yz], [y])
            return
        sp = len(kernel)
        strides = strides or [1] * sp
        pads = pads or [0] * (2 * sp)
        y = qpool_window_ref(x, xs, xz, ys, yz, dt, kernel, strides, pads, ceil, incl)
        params = dict(type="PoolParams", kernel=kernel, strides=strides, pads=pads,
                      dilations=[1] * sp, ceil_mode=ceil, count_include_pad=incl)
        add(name, "QLinearAveragePool", [x, xs, xz, ys, yz], [y], params)

    # ---------------------------------------------------------- QLinearMul
    # ONNX Runtime 1.30 (MLAS's x86 QLinearMul): the exact integer product
    # times (a_scale * b_scale) / c_scale in float32, plus c's zero point in
    # float32, then rounded half to even and saturated (the zero point
    # before rounding: tests/quant's mul_se_uint8 case against ORT shows it).
    # Power-of-two scales put products on .5 ties.
    def qmul_ref(a, a_s, az, b, b_s, bz, c_s, cz, dt):
        info = np.iinfo(dt)
        prod = (a.astype(np.int64) - int(az)) * (b.astype(np.int64) - int(bz))
        ratio = (f32(a_s) * f32(b_s)) / f32(c_s)
        v = (prod.astype(f32) * ratio).astype(f32) + f32(int(cz))
        v = np.minimum(np.maximum(v, f32(info.min)), f32(info.max))
        return np.rint(v).astype(np.int64).astype(dt)

    def qmul(name, sa, sb, dt, pow2=True):
        a, b = q8(dt, sa), q8(dt, sb)
        if pow2:
            scales = [f32(2.0 ** int(rng.integers(-8, -3))) for _ in range(3)]
        else:
            scales = [f32(2.0 ** rng.uniform(-9, -3)) for _ in range(3)]
        az, bz, cz = (q8(dt, ()) for _ in range(3))
        y = qmul_ref(a, scales[0], az, b, scales[1], bz, scales[2], cz, dt)
        add(name, "QLinearMul", [a, scales[0], az, b, scales[1], bz, scales[2], cz], [y])

    for dt, tag in ((np.uint8, "u8"), (np.int8, "i8")):
        qmul(f"qmul_{tag}_same_shape_ties", (2, 3, 5, 7), (2, 3, 5, 7), dt)
        qmul(f"qmul_{tag}_se_broadcast", (1, 8, 5, 5), (1, 8, 1, 1), dt)
        qmul(f"qmul_{tag}_scalar_a", (), (2, 3, 4), dt, pow2=False)
        qmul(f"qmul_{tag}_outer", (4, 1), (1, 6), dt, pow2=False)

    # ------------------------------------------------------- MatMulInteger
    # ONNX: y = sum_k (a - a_zero[m]) * (b - b_zero[n]) in int32, exact; a
    # and b each uint8 or int8, zero points absent, per tensor, per row of a
    # or per column of b.
    def mmint(name, a_shape, n, adt, bdt, zeros="tensor", extreme=False):
        k, m = a_shape[-1], a_shape[-2]
        a, b = q8(adt, a_shape), q8(bdt, (k, n))
        if zeros == "none":
            az, bz = np.zeros((), adt), np.zeros((), bdt)
            inputs = [a, b]
        else:
            az = q8(adt, (m,) if zeros == "axis" else ())
            bz = q8(bdt, (n,) if zeros == "axis" else ())
            inputs = [a, b, az, bz]
        if extreme:  # every term at the largest magnitude, 255 * 255
            a[...] = np.iinfo(adt).max
            az[...] = np.iinfo(adt).min
            b[...] = np.iinfo(bdt).min
            bz[...] = np.iinfo(bdt).max
        av = a.astype(np.int64) - (az.astype(np.int64)[:, None] if az.ndim else int(az))
        bv = b.astype(np.int64) - bz.astype(np.int64)
        y = np.matmul(av, bv)
        assert np.abs(y).max() < 2**31
        add(name, "MatMulInteger", inputs, [y.astype(np.int32)])

    mmint("mmint_u8_u8_tensor_zero", (2, 5, 17), 6, np.uint8, np.uint8)
    mmint("mmint_i8_u8_axis_zero", (3, 4, 9), 7, np.int8, np.uint8, zeros="axis")
    mmint("mmint_u8_i8_no_zero", (6, 33), 5, np.uint8, np.int8, zeros="none")
    mmint("mmint_i8_i8_axis_zero", (1, 2, 8, 40), 3, np.int8, np.int8, zeros="axis")
    mmint("mmint_u8_i8_extreme", (2, 3, 300), 4, np.uint8, np.int8, extreme=True)

    # --------------------------------------------------------- ConvInteger
    # ONNX: y = sum over taps inside the input of (x - xz) * (w - wz[m]), int32
    # (a padded tap is the zero point, so adds 0); torch's float64 conv of the
    # zero-point-shifted integers is exact.
    def convint(name, xshape, m, kernel, xdt, wdt, strides=None, pads=None, dilations=None,
                group=1, wz_axis=False, zeros=True):
        sp = len(kernel)
        strides = strides or [1] * sp
        pads = pads or [0] * (2 * sp)
        dilations = dilations or [1] * sp
        x, w = q8(xdt, xshape), q8(wdt, (m, xshape[1] // group, *kernel))
        xz = q8(xdt, ()) if zeros else np.zeros((), xdt)
        wz = q8(wdt, (m,) if wz_axis else ()) if zeros else np.zeros((), wdt)
        xv = f64(x.astype(np.int64) - int(xz))
        wv = f64(w.astype(np.int64) - wz.astype(np.int64).reshape((-1,) + (1,) * (sp + 1)))
        if sp == 2:
            xp = F.pad(xv, (pads[1], pads[3], pads[0], pads[2]))
            y = F.conv2d(xp, wv, None, strides, 0, dilations, group)
        else:
            xp = F.pad(xv, (pads[0], pads[1]))
            y = F.conv1d(xp, wv, None, strides, 0, dilations, group)
        params = dict(type="ConvParams", kernel=list(kernel), strides=strides, pads=pads,
                      dilations=dilations, group=group)
        inputs = [x, w, xz, wz] if zeros else [x, w]
        add(name, "ConvInteger", inputs, [np.rint(y.numpy()).astype(np.int32)], params)

    convint("convint_u8_i8_3x3_p1", (2, 3, 7, 8), 4, (3, 3), np.uint8, np.int8,
            pads=[1, 1, 1, 1], wz_axis=True)
    convint("convint_i8_u8_s2_dil_asym", (1, 4, 9, 10), 6, (3, 2), np.int8, np.uint8,
            strides=[2, 1], pads=[0, 1, 2, 1], dilations=[2, 1], group=2)
    convint("convint_u8_u8_depthwise", (1, 5, 6, 6), 5, (3, 3), np.uint8, np.uint8,
            pads=[1, 1, 1, 1], group=5, wz_axis=True)
    convint("convint_i8_i8_1d_no_zero", (2, 3, 12), 2, (4,), np.int8, np.int8, strides=[2],
            pads=[2, 1], zeros=False)

    # ------------------------------------------------ DynamicQuantizeLinear
    # ONNX Runtime 1.30 (GetQuantizationParameter, MlasQuantizeLinear): the
    # range includes 0; scale = (hi - lo) / 255 (1 when hi == lo), zero
    # point = round_half_even(clamp(0 - lo / scale, 0, 255)), then y =
    # saturate(round_half_even(x / scale) + zero point), all in float32.
    def dql(name, x):
        x = np.asarray(x, f32)
        lo = min(f32(x.min()) if x.size else f32(0), f32(0))
        hi = max(f32(x.max()) if x.size else f32(0), f32(0))
        scale = f32(1) if hi == lo else f32(hi - lo) / f32(255)
        zp = np.rint(np.clip(f32(0) - lo / scale, f32(0), f32(255))).astype(np.uint8)
        y = np.clip(np.rint(x / scale) + f32(int(zp)), 0, 255).astype(np.uint8)
        add(name, "DynamicQuantizeLinear", [x], [y, np.asarray(scale, f32), np.asarray(zp)])

    dql("dql_normal", rand(2, 3, 17, scale=3.0))
    dql("dql_positive", np.abs(rand(4, 9)) + f32(0.5))
    dql("dql_negative", -np.abs(rand(31)) - f32(0.25))
    dql("dql_zeros", np.zeros((3, 4), f32))
    # 255 / 254 steps of 1/256: x / scale lands on many .5 ties.
    dql("dql_ties", (np.arange(-100, 156) / f32(256)).astype(f32).reshape(4, 64))

    for dt, tag in ((np.uint8, "u8"), (np.int8, "i8")):
        qpool(f"qavgpool_{tag}_2x2_s2_ties", (2, 3, 8, 9), dt, [2, 2], [2, 2])
        qpool(f"qavgpool_{tag}_3x3_p1_excl", (1, 4, 7, 7), dt, [3, 3], [2, 2], [1, 1, 1, 1],
              same_scale=False)
        qpool(f"qavgpool_{tag}_3x2_incl_asym", (1, 2, 9, 11), dt, [3, 2], [2, 3], [1, 1, 0, 1],
              incl=True)
        qpool(f"qavgpool_{tag}_ceil", (1, 2, 9, 11), dt, [2, 2], [2, 2], [0, 0, 0, 1], ceil=True)
        qpool(f"qavgpool_{tag}_1d", (2, 3, 10), dt, [2], [2], [1, 0])
        qpool(f"qavgpool_{tag}_whole_plane", (1, 5, 6, 6), dt, [6, 6], [1, 1])
        qpool(f"qgap_{tag}_ties", (2, 6, 4, 4), dt)
        qpool(f"qgap_{tag}_scaled", (1, 7, 5, 3), dt, same_scale=False)
        qpool(f"qgap_{tag}_1d", (1, 3, 10), dt)

    # ------------------------------------------- QLinearLookup, 8-bit MaxPool
    # QLinearLookup: y = table[x - lowest(x's dtype)], the table of y's dtype.
    for xdt, ydt, tag in ((np.uint8, np.uint8, "u8_u8"), (np.int8, np.int8, "i8_i8"),
                          (np.uint8, np.int8, "u8_i8"), (np.int8, np.uint8, "i8_u8")):
        x = q8(xdt, (2, 3, 5, 7))
        table = q8(ydt, (256,))
        y = table[x.astype(np.int64) - int(np.iinfo(xdt).min)]
        add(f"qlookup_{tag}", "QLinearLookup", [x, table], [y])
    # ------------------------------------------------------- QLinearSoftmax
    # ONNX Runtime's com.microsoft QLinearSoftmax (qlinear_softmax.cc): the
    # planner's table e[d] = float(exp((shift - d) * xs)), shift * xs =
    # max(0, logf(float(FLT_MAX / len)) - 5) (the C library's float log, as
    # ONNX Runtime calls it; numpy's float32 log differs for some lengths),
    # for d = max - x; then in float32: sum of e[max - x] in axis order,
    # y = saturate(round_half_even(e[max - x] * floor(1 / ys) / sum) + yz).
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    libm.logf.restype = ctypes.c_float
    libm.logf.argtypes = [ctypes.c_float]

    def qsoftmax_table(xs, n):
        quotient = float(np.float32(np.finfo(f32).max) / f32(n))
        shift = max(0.0, float(libm.logf(quotient)) - 5.0) / float(xs)
        return np.array([math.exp((-d + shift) * float(xs)) for d in range(256)], f32)

    def qsoftmax(name, x, xs, ys, yz, axis, table_fn=None):
        dt = x.dtype
        info = np.iinfo(dt)
        xm = np.moveaxis(x.astype(np.int64), axis, -1)
        table = (table_fn or qsoftmax_table)(xs, xm.shape[-1])
        e = table[xm.max(-1, keepdims=True) - xm]
        total = np.cumsum(e, axis=-1, dtype=f32)[..., -1:]  # sequential float32 sum
        scale = f32(math.floor(f32(1.0) / f32(ys)))
        r = (e * scale) / total
        assert r.dtype == f32 and np.isfinite(r).all()
        y = np.minimum(np.rint(r).astype(np.int64) + int(yz), info.max).astype(dt)
        y = np.moveaxis(y, -1, axis)
        if table_fn is None:
            add(name, "QLinearSoftmax",
                [x, f32(xs), np.asarray(q8(dt, ()), dt), f32(ys), np.asarray(yz, dt), table],
                [y], dict(type="AxisParams", axis=axis))
        return r, y

    for dt, tag in ((np.uint8, "u8"), (np.int8, "i8")):
        info = np.iinfo(dt)
        # Last axis; a third of the rows one-hot (saturates: 256 / 256 + the
        # lowest zero point is past the top).
        x = q8(dt, (3, 6, 16))
        x[:, ::3] = info.min
        x[:, ::3, 5] = info.max
        qsoftmax(f"qsoftmax_{tag}_last_saturate", x, f32(0.08), f32(1 / 256), info.min, 2)
        # A middle axis (strided), a middle zero point, a small x scale.
        qsoftmax(f"qsoftmax_{tag}_axis1", q8(dt, (2, 7, 3, 5)), f32(0.011), f32(1 / 255),
                 (int(info.min) + int(info.max) + 1) // 2, 1)
        # The first axis, a large x scale (nearly one-hot rows), length 1 rows.
        qsoftmax(f"qsoftmax_{tag}_axis0", q8(dt, (9, 4, 3)), f32(1.7), f32(0.01), info.min + 3, 0)
        qsoftmax(f"qsoftmax_{tag}_len1", q8(dt, (5, 1)), f32(0.1), f32(1 / 64), info.min, 1)
        # Exact .5 ties, rounding down and up: rows of 2 and 4 equal values
        # give floor(1 / ys) / n (ys = 1 / 255 would give floor 254: 1 / ys
        # is 254.99998 in float).
        for n, inv in ((2, 257), (2, 259), (4, 254), (4, 258)):
            x = np.repeat(q8(dt, (6, 1)), n, axis=1)
            r, _ = qsoftmax(f"qsoftmax_{tag}_ties_{n}_{inv}", x, f32(0.05), f32(1 / inv),
                            info.min, 1)
            assert (r - np.floor(r) == 0.5).all()
    # Rows of 3 at x scale 0.7855 and y scale 0.004, where a table built with
    # a double log (not ONNX Runtime's logf) changes some outputs by 1.
    x = q8(np.uint8, (400, 3))
    _, y = qsoftmax("qsoftmax_u8_logf", x, f32(0.7855246), f32(0.004), 0, 1)

    def double_log_table(xs, n):
        shift = max(0.0, math.log(float(f32(np.finfo(f32).max) / f32(n))) - 5.0) / float(xs)
        return np.array([math.exp((-d + shift) * float(xs)) for d in range(256)], f32)

    _, y_double = qsoftmax("", x, f32(0.7855246), f32(0.004), 0, 1, double_log_table)
    assert (y != y_double).any()
    # MaxPool and GlobalMaxPool on uint8/int8: the maximum over the taps inside
    # the input (padding never wins, even over int8 values below zero).
    for dt, tag in ((np.uint8, "u8"), (np.int8, "i8")):
        for name, shape, kernel, strides, pads, ceil in (
                ("3x3_s2_p1", (1, 4, 15, 15), [3, 3], [2, 2], [1, 1, 1, 1], False),
                ("ceil_pad", (1, 2, 8, 8), [3, 3], [2, 2], [1, 1, 1, 1], True),
                ("1d", (2, 3, 11), [3], [2], [1, 1], False)):
            x = q8(dt, shape)
            if dt == np.int8:
                x[0, 0] = np.minimum(x[0, 0], -1)  # an all-negative plane
            sp = len(kernel)
            y = pool_np(x.astype(np.float64), "MaxPool", kernel, strides, pads, [1] * sp, ceil,
                        False).astype(dt)
            params = dict(type="PoolParams", kernel=kernel, strides=strides, pads=pads,
                          dilations=[1] * sp, ceil_mode=ceil, count_include_pad=False)
            add(f"maxpool_{tag}_{name}", "MaxPool", [x], [y], params)
        x = q8(dt, (2, 5, 4, 3))
        if dt == np.int8:
            x[1, 2] = np.minimum(x[1, 2], -1)
        add(f"gmp_{tag}", "GlobalMaxPool", [x], [x.max(axis=(2, 3), keepdims=True)])
    return cases


def write(cases, out_dir, digest, np):
    manifest = {"hash": digest, "cases": []}
    for case in cases:
        name = case["name"]
        entry = {"name": name, "op": case["op"], "inputs": [], "outputs": [],
                 "params": case["params"]}
        if case.get("rtol") is not None:
            entry["rtol"] = case["rtol"]
        for i, a in enumerate(case["inputs"]):
            if a is None:
                entry["inputs"].append(None)
                continue
            fn = f"{name}.in{i}.npy"
            np.save(os.path.join(out_dir, fn), np.array(a, order="C"))  # 0-d stays 0-d
            entry["inputs"].append(fn)
        for i, a in enumerate(case["outputs"]):
            a = np.asarray(a)
            if a.dtype == np.float64:
                a = a.astype(np.float32)
            fn = f"{name}.out{i}.npy"
            np.save(os.path.join(out_dir, fn), np.array(a, order="C"))  # 0-d stays 0-d
            entry["outputs"].append(fn)
        manifest["cases"].append(entry)
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, allow_nan=False)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out_dir = os.path.abspath(sys.argv[1])
    digest = script_hash()
    if up_to_date(out_dir, digest):
        return 0
    import numpy as np  # noqa: deferred so an up-to-date run is instant
    import torch
    torch.set_num_threads(1)
    tmp = f"{out_dir}.tmp.{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    write(build_cases(np, torch), tmp, digest, np)
    old = f"{out_dir}.old.{os.getpid()}"
    if os.path.exists(out_dir):
        try:
            os.rename(out_dir, old)
        except OSError:
            pass
    try:
        os.rename(tmp, out_dir)
    except OSError:
        # Another process won the race; its output is identical.
        shutil.rmtree(tmp, ignore_errors=True)
        if not up_to_date(out_dir, digest):
            raise
    shutil.rmtree(old, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
