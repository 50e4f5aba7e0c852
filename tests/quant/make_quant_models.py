#!/usr/bin/python3
"""int8 QDQ ONNX models and their references, for tools/quant_check.py.

Usage: make_quant_models.py OUT_DIR

Writes OUT_DIR/<case>/model.onnx, input<k>.npy (one per graph input) and,
per graph output k:
  ort_out<k>.npy        ONNX Runtime (CPU EP, one thread), graph optimization
                        level 'all': its QDQ fusions run integer kernels
                        (QLinearConv, QLinearAdd, ...);
  ort_noopt_out<k>.npy  ONNX Runtime at level 'disabled': every
                        DequantizeLinear, float op and QuantizeLinear runs as
                        written (float-simulated quantization);
  torch_out<k>.npy      torch's own quantized model (qnnpack), torch cases;
  ref_out<k>.npy        this script's float64 simulation of the QDQ graph
                        (numpy quantize/dequantize around torch's float ops),
                        onnx.helper cases;
and OUT_DIR/manifest.json: {"script_sha256", "opset", "torch",
"onnxruntime", "spread_samples", "seconds", "cases": [{"name", "source"
(torch or onnx.helper), "ops" ({op type: count}), "inputs": [{"name",
"file", "dtype", "shape"}], "outputs": [{"name", "dtype", "shape", "ort",
"ort_noopt", "torch" or "ref" (file names), "lsb" (the scale of the
DequantizeLinear that writes the output, a list when per-axis; 1 for an
integer output written by QuantizeLinear), "lsb_axis" (null or the per-axis
scale's axis, non-negative), "zero_point", "agreement" and "spread" (the
references against each other as {"<a>_vs_<b>": {"max_lsb", "equal",
"equal_mean"}}, on the case's input and over spread_samples inputs: the
largest |difference| in LSBs and the lowest and mean per-input share of
elements equal)}], torch cases also "biases_rerounded" and "seconds", the
four MLPerf-Tiny-shaped ones "float_model" (model_float.onnx: the float
model they were quantized from, same weights)}]}.

Two kinds of cases:
  - torch models, quantized post-training in eager mode with the qnnpack
    engine (per-tensor uint8 activations, HistogramObserver; per-tensor
    symmetric int8 weights) after calibration on seeded random batches, and
    exported by torch.onnx at opset 13 (torch 1.13 writes QDQ):
    torchvision's quantizable mobilenet_v2 and resnet18 at 224x224, and four
    MLPerf-Tiny-shaped nets (DS-CNN keyword spotting, MobileNet-v1 0.25 for
    visual wake words, ResNet-8 on CIFAR shapes, the anomaly-detection FC
    autoencoder). Weights are seeded random; the batch norms' running
    statistics are first re-estimated on random data so that activations
    neither vanish nor explode (torchvision's init gives a mobilenet_v2
    whose float output is ~1e-9). The exported int32 biases are re-rounded
    the way torch's kernels round them (round_biases: torch 1.13 exports
    them truncated);
  - small QDQ graphs built with onnx.helper for what torch does not write:
    per-channel int8 Conv and depthwise Conv weights (DequantizeLinear axis
    0) with int32 per-channel biases, int8 activations with non-zero zero
    points, int8 weights with a non-zero zero point (MatMul), a broadcasting
    QDQ Add with two graph inputs, QuantizeLinear/DequantizeLinear without
    a zero-point input (uint8; its uint8 tensor is also a graph output),
    per-axis QuantizeLinear/DequantizeLinear on axis 1 and on axis -2, with
    inputs on exact rounding ties and beyond the saturation limits; and
    ONNX Runtime's dynamic quantization of a 2-layer MLP
    (DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul -> Add, whose
    int32 and uint8 tensors are graph outputs too), and a ConvInteger.
Needs ONNX Runtime (tools/ort/install.sh; $BATON_ORT_DIR). Deterministic;
skips all work when OUT_DIR/manifest.json was written by this exact script;
concurrent runs wait on OUT_DIR.lock. About 30 s on 2 busy cores.
"""

import collections
import copy
import fcntl
import hashlib
import io
import json
import os
import shutil
import sys
import time
import warnings

import numpy as np
import onnx
from onnx import helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import ort_ref  # noqa: E402
import quant_check  # noqa: E402  (output LSBs and the LSB comparison)

OPSET = 13
CALIBRATION_BATCHES = 3
SPREAD_SAMPLES = 16  # inputs over which the references' agreement is measured
# Cases also written as model_float.onnx: the float model before quantization
# (same seeded weights and batch norms), for the firmware size comparison of
# tests/cross (the MLPerf-Tiny-shaped ones; mobilenet_v2/resnet18 are large).
FLOAT_MODELS = ("ds_cnn_kws", "mobilenet_v1_025_vww", "resnet8_cifar", "fc_autoencoder")


def script_hash():
    with open(os.path.abspath(__file__), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


# ---- torch models -----------------------------------------------------------

def torch_models():
    """(name, builder, input shape, calibration batch size); builders are
    called after torch.manual_seed, so weights are seeded."""
    import torch
    import torch.nn as nn
    import torchvision
    from torch.ao.quantization import DeQuantStub, QuantStub, fuse_modules

    def conv_bn_relu(cin, cout, k, stride=1, padding=0, groups=1):
        return nn.Sequential(nn.Conv2d(cin, cout, k, stride, padding, groups=groups, bias=False),
                             nn.BatchNorm2d(cout), nn.ReLU())

    def fuse_cbr(module):
        for m in module.modules():
            if isinstance(m, nn.Sequential) and len(m) == 3 and isinstance(m[0], nn.Conv2d):
                fuse_modules(m, ["0", "1", "2"], inplace=True)

    class DsCnn(nn.Module):
        """MLPerf Tiny keyword spotting: 49x10 MFCCs, a 10x4 stride-2 conv to
        64 channels, 4 depthwise-separable blocks, average pool, 12 classes.
        TF's 'same' padding of the 10x4 stride-2 conv is asymmetric (3/4
        rows); symmetric padding (5, 1) gives the same 25x5 output."""

        def __init__(self):
            super().__init__()
            self.quant, self.dequant = QuantStub(), DeQuantStub()
            self.stem = conv_bn_relu(1, 64, (10, 4), 2, (5, 1))
            blocks = []
            for _ in range(4):
                blocks += [conv_bn_relu(64, 64, 3, 1, 1, groups=64), conv_bn_relu(64, 64, 1)]
            self.blocks = nn.Sequential(*blocks)
            self.pool = nn.AvgPool2d((25, 5))
            self.fc = nn.Linear(64, 12)

        def forward(self, x):
            x = self.pool(self.blocks(self.stem(self.quant(x))))
            return self.dequant(self.fc(torch.flatten(x, 1)))

        def fuse_model(self):
            fuse_cbr(self)

    class MobileNetV1(nn.Module):
        """MLPerf Tiny visual wake words: MobileNet-v1 alpha 0.25, 96x96, 2 classes."""

        def __init__(self, alpha=0.25, classes=2):
            super().__init__()
            c = lambda n: int(n * alpha)  # noqa: E731
            self.quant, self.dequant = QuantStub(), DeQuantStub()
            layers = [conv_bn_relu(3, c(32), 3, 2, 1)]
            cin = c(32)
            for cout, stride in [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2),
                                 (512, 1), (512, 1), (512, 1), (512, 1), (512, 1), (1024, 2),
                                 (1024, 1)]:
                layers += [conv_bn_relu(cin, cin, 3, stride, 1, groups=cin),
                           conv_bn_relu(cin, c(cout), 1)]
                cin = c(cout)
            self.features = nn.Sequential(*layers)
            self.pool = nn.AvgPool2d(3)
            self.fc = nn.Linear(cin, classes)

        def forward(self, x):
            x = self.pool(self.features(self.quant(x)))
            return self.dequant(self.fc(torch.flatten(x, 1)))

        def fuse_model(self):
            fuse_cbr(self)

    class ResBlock(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.a = conv_bn_relu(cin, cout, 3, stride, 1)
            self.b = nn.Sequential(nn.Conv2d(cout, cout, 3, 1, 1, bias=False),
                                   nn.BatchNorm2d(cout))
            self.short = None
            if stride != 1 or cin != cout:
                self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                           nn.BatchNorm2d(cout))
            self.add = nn.quantized.FloatFunctional()

        def forward(self, x):
            s = x if self.short is None else self.short(x)
            return self.add.add_relu(self.b(self.a(x)), s)

    class ResNet8(nn.Module):
        """MLPerf Tiny image classification: ResNet-8 on 32x32x3, 16/32/64
        channels in 3 residual stacks, 10 classes."""

        def __init__(self):
            super().__init__()
            self.quant, self.dequant = QuantStub(), DeQuantStub()
            self.stem = conv_bn_relu(3, 16, 3, 1, 1)
            self.stacks = nn.Sequential(ResBlock(16, 16, 1), ResBlock(16, 32, 2),
                                        ResBlock(32, 64, 2))
            self.pool = nn.AvgPool2d(8)
            self.fc = nn.Linear(64, 10)

        def forward(self, x):
            x = self.pool(self.stacks(self.stem(self.quant(x))))
            return self.dequant(self.fc(torch.flatten(x, 1)))

        def fuse_model(self):
            fuse_cbr(self)
            for m in self.modules():
                if isinstance(m, ResBlock):
                    fuse_modules(m.b, ["0", "1"], inplace=True)
                    if m.short is not None:
                        fuse_modules(m.short, ["0", "1"], inplace=True)

    class AutoEncoder(nn.Module):
        """MLPerf Tiny anomaly detection: 640-128-128-128-128-8-128-128-128-128-640,
        ReLU after every layer but the last. No batch norms (eager mode cannot
        fuse Linear+BatchNorm1d+ReLU). Linear and ReLU stay unfused: torch
        1.13 cannot export the fused quantized::linear_relu
        (UnsupportedOperatorError), so each Linear has its own output scale
        and the ReLU runs on the quantized tensor."""

        def __init__(self):
            super().__init__()
            self.quant, self.dequant = QuantStub(), DeQuantStub()
            dims = [640, 128, 128, 128, 128, 8, 128, 128, 128, 128]
            layers = []
            for a, b in zip(dims, dims[1:]):
                layers += [nn.Linear(a, b), nn.ReLU()]
            self.body = nn.Sequential(*layers)
            self.out = nn.Linear(128, 640)

        def forward(self, x):
            return self.dequant(self.out(self.body(self.quant(x))))

        def fuse_model(self):
            pass

    tv = torchvision.models.quantization
    return [
        ("mobilenet_v2", lambda: tv.mobilenet_v2(weights=None, quantize=False), (1, 3, 224, 224),
         2),
        ("resnet18", lambda: tv.resnet18(weights=None, quantize=False), (1, 3, 224, 224), 2),
        ("ds_cnn_kws", DsCnn, (1, 1, 49, 10), 16),
        ("mobilenet_v1_025_vww", MobileNetV1, (1, 3, 96, 96), 8),
        ("resnet8_cifar", ResNet8, (1, 3, 32, 32), 16),
        ("fc_autoencoder", AutoEncoder, (1, 640), 32),
    ]


def quantize_torch(builder, shape, batch, seed):
    """Seeded random weights, batch norms re-estimated, fused, calibrated on
    CALIBRATION_BATCHES random batches, converted (qnnpack).
    Returns (quantized module, input, the float module it was quantized
    from: same weights, batch norms unfused)."""
    import torch
    torch.backends.quantized.engine = "qnnpack"
    torch.manual_seed(seed)
    model = builder()
    gen = torch.Generator().manual_seed(seed + 1)
    data = lambda n: torch.randn((n,) + tuple(shape[1:]), generator=gen)  # noqa: E731
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    with torch.no_grad():
        for bn in bns:
            bn.reset_running_stats()
            bn.momentum = None  # cumulative average over the batches below
            # Random affine parameters so that not every channel looks alike.
            bn.weight.uniform_(0.5, 1.5, generator=gen)
            bn.bias.normal_(0.0, 0.2, generator=gen)
        if bns:
            model.train()
            model(data(max(batch, 2)))
    model.eval()
    float_model = copy.deepcopy(model)
    model.fuse_model()
    model.qconfig = torch.ao.quantization.get_default_qconfig("qnnpack")
    torch.ao.quantization.prepare(model, inplace=True)
    with torch.no_grad():
        for _ in range(CALIBRATION_BATCHES):
            model(data(batch))
    with warnings.catch_warnings():
        # torchvision's mobilenet_v2 has a skip_add (and its observer) in every
        # block, used only by the blocks with a residual.
        warnings.filterwarnings("ignore", "must run observer before calling calculate_qparams")
        torch.ao.quantization.convert(model, inplace=True)
    return model, data(shape[0]), float_model


def torch_case(name, builder, shape, batch, seed):
    """(model bytes, [inputs], [torch outputs], biases re-rounded,
    ([SPREAD_SAMPLES inputs], [torch outputs]) batched along axis 0,
    float model bytes or None)."""
    import torch
    model, x, float_model = quantize_torch(builder, shape, batch, seed)
    layers = []  # quantized Conv/Linear modules in execution order, with their input

    def record(module, inputs, output):
        layers.append((module, inputs[0]))

    hooks = [m.register_forward_hook(record) for m in model.modules()
             if isinstance(m, (torch.nn.quantized.Conv2d, torch.nn.quantized.Linear))]
    with torch.no_grad():
        y = model(x)
    for h in hooks:
        h.remove()
    # More inputs, the case's own first, for the references' spread.
    gen = torch.Generator().manual_seed(seed + 2)
    xs = torch.cat([x, torch.randn((SPREAD_SAMPLES - 1,) + tuple(shape[1:]), generator=gen)])
    with torch.no_grad():
        ys = model(xs)
    assert torch.equal(ys[:1], y), "torch's batched output differs from its batch-1 output"
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, x, buf, opset_version=OPSET, input_names=["x"],
                          output_names=["y"])
    onnx_model = onnx.load_from_string(buf.getvalue())
    fixed = round_biases(onnx_model, layers)
    float_bytes = None
    if name in FLOAT_MODELS:
        buf = io.BytesIO()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(float_model, x, buf, opset_version=OPSET, input_names=["x"],
                              output_names=["y"])
        float_bytes = buf.getvalue()
    return onnx_model.SerializeToString(), [x.numpy()], [y.numpy()], fixed, \
        ([xs.numpy()], [ys.numpy()]), float_bytes


def round_biases(model, layers):
    """torch 1.13 exports a quantized Conv/Linear's bias as
    Cast<int32>(bias / (input scale * weight scale)), which truncates toward
    zero (torch.onnx.symbolic_helper.requantize_bias_helper), while torch's
    own kernels round it to nearest even: the exported model is then not the
    model torch ran, and their outputs drift apart by several LSBs over a
    deep net. This rewrites each exported int32 bias with torch's rounding.
    `layers`: (module, its quantized input) in execution order, matched to
    the graph's Conv/Gemm nodes in order, checked by their int8 weights.
    Returns how many bias values changed."""
    import torch
    producer = {o: n for n in model.graph.node for o in n.output}

    def constant(name):
        node = producer[name]
        assert node.op_type == "Constant", f"{name} comes from a {node.op_type}, not a Constant"
        return node

    nodes = [n for n in model.graph.node if n.op_type in ("Conv", "Gemm")]
    assert len(nodes) == len(layers), f"{len(nodes)} Conv/Gemm nodes, {len(layers)} torch layers"
    changed = 0
    for node, (module, x) in zip(nodes, layers):
        w = module.weight()
        w_dq = producer[node.input[1]]
        w_onnx = numpy_helper.to_array(constant(w_dq.input[0]).attribute[0].t)
        assert np.array_equal(w_onnx, w.int_repr().numpy()), f"node {node.name}: weights differ"
        assert w.qscheme() == torch.per_tensor_affine, f"node {node.name}: per-channel weights"
        b = module.bias()
        if b is None or len(node.input) < 3:
            continue
        b_const = constant(producer[node.input[2]].input[0])
        old = numpy_helper.to_array(b_const.attribute[0].t)
        new = torch.round(b.detach().double() / (x.q_scale() * w.q_scale())).numpy()
        new = new.astype(np.int32).reshape(old.shape)
        assert np.abs(new.astype(np.int64) - old).max() <= 1, f"node {node.name}: bias"
        changed += int(np.count_nonzero(new != old))
        b_const.attribute[0].t.CopyFrom(numpy_helper.from_array(new, b_const.attribute[0].t.name))
    return changed


# ---- onnx.helper QDQ graphs and their float64 simulation ----------------------

INT_RANGE = {np.uint8: (0, 255), np.int8: (-128, 127), np.int32: (-2**31, 2**31 - 1)}


def axis_shape(rank, axis, n):
    """The shape that broadcasts a per-axis vector of n along `axis`."""
    s = [1] * rank
    s[axis] = n
    return s


def quantize(x, scale, zp, dtype, axis=1):
    """ONNX QuantizeLinear: saturate(round_half_even(x / scale) + zp), the
    division in float32 as ONNX Runtime does it."""
    x = np.asarray(x, np.float32)
    scale = np.asarray(scale, np.float32)
    zp = np.asarray(zp)
    if scale.size > 1:
        scale = scale.reshape(axis_shape(x.ndim, axis, scale.size))
        zp = zp.reshape(scale.shape)
    lo, hi = INT_RANGE[dtype]
    return np.clip(np.rint(x / scale) + zp.astype(np.float64), lo, hi).astype(dtype)


def dequantize(q, scale, zp, axis=1):
    scale = np.asarray(scale, np.float32)
    zp = np.asarray(zp)
    if scale.size > 1:
        scale = scale.reshape(axis_shape(q.ndim, axis, scale.size))
        zp = zp.reshape(scale.shape)
    return ((q.astype(np.int64) - zp.astype(np.int64)) * scale).astype(np.float32)


def range_params(lo, hi, dtype):
    """Asymmetric scale and zero point covering [lo, hi] (and 0)."""
    qlo, qhi = INT_RANGE[dtype]
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    scale = np.float32((hi - lo) / (qhi - qlo))
    zp = int(np.clip(round(qlo - lo / scale), qlo, qhi))
    return scale, dtype(zp)


class GraphBuilder:
    """A QDQ graph under construction: initializers, nodes, inputs and outputs."""

    def __init__(self):
        self.nodes, self.inits, self.inputs, self.outputs = [], [], [], []
        self.count = collections.Counter()

    def const(self, name, value):
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def node(self, op, inputs, **attrs):
        self.count[op] += 1
        out = f"{op.lower()}{self.count[op]}"
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def next_name(self, op):
        return f"{op.lower()}{self.count[op] + 1}"

    def q(self, x, scale, zp=None, axis=None):
        n = self.next_name("QuantizeLinear")
        args = [x, self.const(f"{n}_scale", scale)]
        if zp is not None:
            args.append(self.const(f"{n}_zero_point", zp))
        return self.node("QuantizeLinear", args, **({} if axis is None else {"axis": axis}))

    def dq(self, q, scale, zp=None, axis=None):
        n = self.next_name("DequantizeLinear")
        args = [q, self.const(f"{n}_scale", scale)]
        if zp is not None:
            args.append(self.const(f"{n}_zero_point", zp))
        return self.node("DequantizeLinear", args, **({} if axis is None else {"axis": axis}))

    def qdq(self, x, scale, zp, axis=None):
        return self.dq(self.q(x, scale, zp, axis), scale, zp, axis)

    def add_input(self, name, value):
        self.inputs.append(helper.make_tensor_value_info(
            name, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[value.dtype], value.shape))
        return name

    def rename_output(self, tensor, name, shape):
        """Makes the node that writes `tensor` write graph output `name`."""
        for n in self.nodes:
            for k, o in enumerate(n.output):
                if o == tensor:
                    n.output[k] = name
        dtype = np.float32
        for n in self.nodes:
            if name in n.output and n.op_type == "QuantizeLinear":
                zp = [i for i in self.inits if len(n.input) > 2 and i.name == n.input[2]]
                dtype = numpy_helper.to_array(zp[0]).dtype if zp else np.uint8
        self.outputs.append(helper.make_tensor_value_info(
            name, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)], shape))

    def model(self):
        graph = helper.make_graph(self.nodes, "qdq", self.inputs, self.outputs,
                                  initializer=self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
        m.ir_version = 7
        onnx.checker.check_model(m, full_check=True)
        return m


def conv_weights(rng, cout, cin_per_group, k, x_scale):
    """Per-output-channel int8 weights (symmetric), their scales, an int32 bias
    at scale x_scale * w_scale[c] (the bias quantization QLinearConv needs)."""
    w = rng.standard_normal((cout, cin_per_group, k, k)).astype(np.float32)
    w *= rng.uniform(0.05, 1.0, (cout, 1, 1, 1)).astype(np.float32)  # channel ranges differ
    w_scale = (np.abs(w).reshape(cout, -1).max(1) / 127).astype(np.float32)
    wq = quantize(w, w_scale, np.zeros(cout, np.int8), np.int8, axis=0)
    b_scale = (np.float32(x_scale) * w_scale).astype(np.float32)
    bq = np.round(rng.standard_normal(cout) * 0.3 / b_scale).astype(np.int32)
    return wq, w_scale, bq, b_scale


def conv_case(rng, name, x_dtype, x_shape, cout, k, group, stride, relu):
    """x -> Q/DQ -> Conv(DQ(int8 per-channel W), DQ(int32 per-channel B)) [-> Relu]
    -> Q/DQ -> y."""
    import torch
    x = (rng.standard_normal(x_shape) * 1.5).astype(np.float32)
    xs, xzp = range_params(-3.0, 4.0, x_dtype)
    cin = x_shape[1]
    wq, ws, bq, bs = conv_weights(rng, cout, cin // group, k, xs)
    zeros8, zeros32 = np.zeros(cout, np.int8), np.zeros(cout, np.int32)

    def conv_float(xf):
        w = dequantize(wq, ws, zeros8, axis=0).astype(np.float64)
        b = dequantize(bq, bs, zeros32, axis=0).astype(np.float64)
        y = torch.nn.functional.conv2d(torch.from_numpy(xf.astype(np.float64)),
                                       torch.from_numpy(w), torch.from_numpy(b), stride, k // 2,
                                       groups=group).numpy()
        return np.maximum(y, 0) if relu else y

    xd = dequantize(quantize(x, xs, xzp, x_dtype), xs, xzp)
    yf = conv_float(xd)
    ys, yzp = range_params(yf.min(), yf.max() * 0.9, x_dtype)  # a few saturate
    ref = dequantize(quantize(yf, ys, yzp, x_dtype), ys, yzp)

    g = GraphBuilder()
    t = g.qdq(g.add_input("x", x), xs, xzp)
    w = g.dq(g.const("w", wq), ws, zeros8, axis=0)
    b = g.dq(g.const("b", bq), bs, zeros32, axis=0)
    t = g.node("Conv", [t, w, b], kernel_shape=[k, k], strides=[stride, stride],
               pads=[k // 2] * 4, group=group)
    if relu:
        t = g.node("Relu", [t])
    g.rename_output(g.qdq(t, ys, yzp), "y", ref.shape)
    return name, g.model(), [x], [ref]


def matmul_case(rng):
    """int8 activations, zero points -7 (in) and computed (out), int8 per-tensor
    weights with a non-zero zero point."""
    import torch
    x = rng.standard_normal((2, 5, 16)).astype(np.float32)
    xs, xzp = np.float32(0.025), np.int8(-7)
    w = rng.standard_normal((16, 12)).astype(np.float32) * 0.3
    ws, wzp = np.float32(np.abs(w).max() / 120), np.int8(3)
    wq = quantize(w, ws, wzp, np.int8)
    xd = dequantize(quantize(x, xs, xzp, np.int8), xs, xzp).astype(np.float64)
    yf = torch.from_numpy(xd).matmul(torch.from_numpy(
        dequantize(wq, ws, wzp).astype(np.float64))).numpy()
    ys, yzp = range_params(yf.min(), yf.max(), np.int8)
    ref = dequantize(quantize(yf, ys, yzp, np.int8), ys, yzp)
    g = GraphBuilder()
    t = g.qdq(g.add_input("x", x), xs, xzp)
    t = g.node("MatMul", [t, g.dq(g.const("w", wq), ws, wzp)])
    g.rename_output(g.qdq(t, ys, yzp), "y", ref.shape)
    return "matmul_int8_act", g.model(), [x], [ref]


def add_case(rng):
    """Two uint8 inputs of different scales, b [8,1,1] broadcast against
    a [1,8,6,6]."""
    a = (rng.standard_normal((1, 8, 6, 6)) * 2).astype(np.float32)
    b = rng.standard_normal((8, 1, 1)).astype(np.float32)
    as_, azp = range_params(-5, 5, np.uint8)
    bs, bzp = range_params(-2, 3, np.uint8)
    ad = dequantize(quantize(a, as_, azp, np.uint8), as_, azp).astype(np.float64)
    bd = dequantize(quantize(b, bs, bzp, np.uint8), bs, bzp).astype(np.float64)
    yf = ad + bd
    ys, yzp = range_params(yf.min(), yf.max(), np.uint8)
    ref = dequantize(quantize(yf, ys, yzp, np.uint8), ys, yzp)
    g = GraphBuilder()
    t = g.node("Add", [g.qdq(g.add_input("a", a), as_, azp), g.qdq(g.add_input("b", b), bs, bzp)])
    g.rename_output(g.qdq(t, ys, yzp), "y", ref.shape)
    return "add_broadcast_uint8", g.model(), [a, b], [ref]


def on_grid(rng, shape, scale, zp, dtype, axis=1):
    """Floats at q - zp + f LSBs, q over and beyond the type's range, f a tie
    (+-0.5) for a third of them and uniform in (-0.5, 0.5) otherwise; scales
    are powers of two so every value is exact in float32."""
    lo, hi = INT_RANGE[dtype]
    q = rng.integers(lo - 20, hi + 21, shape)
    f = np.where(rng.random(shape) < 1 / 3, rng.choice([-0.5, 0.5], shape),
                 rng.uniform(-0.45, 0.45, shape))
    scale = np.asarray(scale, np.float32)
    zp = np.asarray(zp, np.float64)
    if scale.size > 1:
        scale = scale.reshape(axis_shape(len(shape), axis, scale.size))
        zp = zp.reshape(scale.shape)
    return ((q - zp + f) * scale).astype(np.float32)


def no_zero_point_case(rng):
    """QuantizeLinear and DequantizeLinear without a zero-point input (uint8,
    zero point 0): negative inputs saturate to 0. Outputs the uint8 tensor
    itself and its dequantized value."""
    s = np.float32(0.0625)
    x = on_grid(rng, (3, 7), s, 0, np.uint8)
    # Ties around 0 (-0.5 and 0.5 LSB round to 0, 1.5 to 2, 2.5 to 2), both
    # saturation limits, and far beyond them.
    x.flat[:8] = np.array([-0.5, 0.5, 1.5, 2.5, -3, 255.5, 256, 1e6], np.float32) * s
    q = quantize(x, s, np.uint8(0), np.uint8)
    g = GraphBuilder()
    t = g.q(g.add_input("x", x), s)
    g.rename_output(t, "q", x.shape)
    g.rename_output(g.dq("q", s), "y", x.shape)
    return "quantize_no_zero_point", g.model(), [x], [q, dequantize(q, s, np.uint8(0))]


def per_axis_case(rng):
    """Per-axis QuantizeLinear/DequantizeLinear pairs: uint8 on axis 1 and
    int8 on axis -2 of a [2,6,4,5] tensor, both from the same input."""
    shape = (2, 6, 4, 5)
    s1 = (2.0 ** -rng.integers(2, 7, 6)).astype(np.float32)
    z1 = rng.integers(0, 256, 6).astype(np.uint8)
    s2 = (2.0 ** -rng.integers(2, 7, 4)).astype(np.float32)
    z2 = rng.integers(-30, 31, 4).astype(np.int8)
    x = on_grid(rng, shape, s1, z1, np.uint8, axis=1)
    # A quarter of the elements on axis -2's grid instead, for ties there.
    x = np.where(rng.random(shape) < 0.25, on_grid(rng, shape, s2, z2, np.int8, axis=2), x)
    y1 = dequantize(quantize(x, s1, z1, np.uint8, axis=1), s1, z1, axis=1)
    y2 = dequantize(quantize(x, s2, z2, np.int8, axis=2), s2, z2, axis=2)
    g = GraphBuilder()
    xin = g.add_input("x", x)
    g.rename_output(g.qdq(xin, s1, z1, axis=1), "y_axis1", shape)
    g.rename_output(g.qdq(xin, s2, z2, axis=-2), "y_axis_m2", shape)
    return "qdq_per_axis", g.model(), [x], [y1, y2]


def avg_pool_ref(x, k, stride, pads, ceil, include_pad):
    """ONNX AveragePool (2-D, no dilation) in float64: windows clipped to
    the input, divided by the taps in input + pads or in the input."""
    n, c, h, w = x.shape
    def out_size(i, kk, s, pb, pe):
        span = i + pb + pe - kk
        o = (-(-span // s) if ceil else span // s) + 1
        return o - 1 if ceil and (o - 1) * s >= i + pb else o
    oh, ow = out_size(h, k[0], stride[0], pads[0], pads[2]), out_size(w, k[1], stride[1], pads[1], pads[3])
    y = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            y0, x0 = i * stride[0] - pads[0], j * stride[1] - pads[1]
            y1, x1 = y0 + k[0], x0 + k[1]
            win = x[:, :, max(y0, 0):min(y1, h), max(x0, 0):min(x1, w)]
            cnt = ((min(y1, h + pads[2]) - max(y0, -pads[0])) * (min(x1, w + pads[3]) - max(x0, -pads[1]))
                   if include_pad else win.shape[2] * win.shape[3])
            y[:, :, i, j] = win.sum(axis=(2, 3)) / cnt
    return y


def pool_case(rng):
    """The pools ONNX Runtime runs as integer kernels (QLinearAveragePool,
    QLinearGlobalAveragePool) and a Flatten between equal
    QuantizeLinear/DequantizeLinear pairs (dropped): 2x2 and 3x2 windows
    with pads, ceil_mode and count_include_pad on and off on uint8 with an
    odd zero point, input and output sharing a scale so that averages land
    on ties; a global pool on int8. The reference is ONNX's unfused
    semantics (the zero point added after rounding), so it differs from
    ONNX Runtime's fused kernels at ties."""
    s = np.float32(0.0625)
    zu, zi = np.uint8(131), np.int8(-37)
    x = on_grid(rng, (1, 5, 9, 11), s, zu, np.uint8)
    xu_f = dequantize(quantize(x, s, zu, np.uint8), s, zu).astype(np.float64)
    xi_f = dequantize(quantize(x, s, zi, np.int8), s, zi).astype(np.float64)
    g = GraphBuilder()
    xin = g.add_input("x", x)
    xu = g.qdq(xin, s, zu)
    refs = []
    for name, k, st, pads, ceil, incl, zo in (("avg_excl", (2, 2), (2, 2), (0, 0, 0, 1), 1, 0, zu),
                                              ("avg_incl", (3, 2), (2, 3), (1, 1, 0, 1), 0, 1,
                                               np.uint8(130))):
        yf = avg_pool_ref(xu_f, k, st, pads, ceil, incl)
        refs.append(dequantize(quantize(yf, s, zo, np.uint8), s, zo))
        t = g.node("AveragePool", [xu], kernel_shape=list(k), strides=list(st), pads=list(pads),
                   ceil_mode=ceil, count_include_pad=incl)
        g.rename_output(g.qdq(t, s, zo), name, yf.shape)
    gs, gz = np.float32(0.03125), np.int8(-36)
    yf = xi_f.mean(axis=(2, 3), keepdims=True)
    refs.append(dequantize(quantize(yf, gs, gz, np.int8), gs, gz))
    t = g.node("GlobalAveragePool", [g.qdq(xin, s, zi)])
    g.rename_output(g.qdq(t, gs, gz), "gap", yf.shape)
    refs.append(xu_f.reshape(1, -1).astype(np.float32))
    t = g.node("Flatten", [xu])
    g.rename_output(g.qdq(t, s, zu), "flat", refs[-1].shape)
    return "pool_uint8_int8", g.model(), [x], refs


def mul_case(rng):
    """A squeeze-excitation product as MobileNetV3 has it: uint8 a [1,8,6,6]
    times uint8 b [1,8,1,1], power-of-two scales so that products land on
    ties (ONNX Runtime fuses the group into QLinearMul, which multiplies the
    integers and applies one combined scale; the unfused graph rounds the
    float product, hence the float64 reference differs at ties)."""
    sa, sb, sc = np.float32(0.0625), np.float32(0.03125), np.float32(0.125)
    za, zb, zc = np.uint8(121), np.uint8(0), np.uint8(7)
    a = on_grid(rng, (1, 8, 6, 6), sa, za, np.uint8)
    b = (rng.integers(0, 33, (1, 8, 1, 1)) * sb).astype(np.float32)
    ad = dequantize(quantize(a, sa, za, np.uint8), sa, za).astype(np.float64)
    bd = dequantize(quantize(b, sb, zb, np.uint8), sb, zb).astype(np.float64)
    ref = dequantize(quantize(ad * bd, sc, zc, np.uint8), sc, zc)
    g = GraphBuilder()
    t = g.node("Mul", [g.qdq(g.add_input("a", a), sa, za), g.qdq(g.add_input("b", b), sb, zb)])
    g.rename_output(g.qdq(t, sc, zc), "y", ref.shape)
    return "mul_se_uint8", g.model(), [a, b], [ref]


def max_pool_ref(x, k, stride, pad):
    """ONNX MaxPool (square window, symmetric pads, no dilation) in float64."""
    n, c, h, w = x.shape
    xp = np.full((n, c, h + 2 * pad, w + 2 * pad), -np.inf)
    xp[:, :, pad:pad + h, pad:pad + w] = x
    oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    y = np.empty((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            y[:, :, i, j] = xp[:, :, i * stride:i * stride + k, j * stride:j * stride + k].max(axis=(2, 3))
    return y


def lookup_case(rng):
    """Integer ops without arithmetic of their own: MaxPool, GlobalMaxPool,
    Pad, nearest Resize and Slice between equal QuantizeLinear/
    DequantizeLinear pairs (uint8 and int8), and
    elementwise float functions between a DequantizeLinear and a
    QuantizeLinear (Sigmoid, Tanh, LeakyRelu, HardSwish as torch exports it:
    Mul(x, HardSigmoid(x))), which Baton runs as 256-entry tables; then a
    Concat of operands with three different scales requantized to the
    output's. The reference is float64 numpy."""
    s, zu, zi = np.float32(0.05), np.uint8(120), np.int8(-9)
    x = on_grid(rng, (1, 6, 9, 11), s, zu, np.uint8)
    xu_f = dequantize(quantize(x, s, zu, np.uint8), s, zu).astype(np.float64)
    xi_f = dequantize(quantize(x, s, zi, np.int8), s, zi).astype(np.float64)
    g = GraphBuilder()
    xin = g.add_input("x", x)
    xu, xi = g.qdq(xin, s, zu), g.qdq(xin, s, zi, None)
    refs = []

    def out(t, name, yf, scale, zp, dtype):
        refs.append(dequantize(quantize(yf.astype(np.float32), scale, zp, dtype), scale, zp))
        g.rename_output(g.qdq(t, scale, zp), name, yf.shape)

    out(g.node("MaxPool", [xu], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        "maxpool", max_pool_ref(xu_f, 3, 2, 1), s, zu, np.uint8)
    out(g.node("GlobalMaxPool", [xi]), "gmaxpool", xi_f.max(axis=(2, 3), keepdims=True),
        s, zi, np.int8)
    sig_s, sig_z = np.float32(1 / 256), np.uint8(0)
    sig = g.node("Sigmoid", [xu])
    out(sig, "sigmoid", 1 / (1 + np.exp(-xu_f)), sig_s, sig_z, np.uint8)
    tanh_s, tanh_z = np.float32(1 / 128), np.int8(0)
    out(g.node("Tanh", [xi]), "tanh", np.tanh(xi_f), tanh_s, tanh_z, np.int8)
    lr_s, lr_z = range_params(-0.1 * 6.0, 6.75, np.uint8)
    lrelu = g.node("LeakyRelu", [xu], alpha=0.1)
    out(lrelu, "leakyrelu", np.where(xu_f > 0, xu_f, 0.1 * xu_f), lr_s, lr_z, np.uint8)
    hs_s, hs_z = range_params(-0.375, 6.75, np.int8)
    hsig = g.node("HardSigmoid", [xi], alpha=1 / 6, beta=0.5)
    hsw = g.node("Mul", [xi, hsig])
    out(hsw, "hardswish", xi_f * np.clip(xi_f / 6 + 0.5, 0, 1), hs_s, hs_z, np.int8)
    # Concat: x (scale s), the sigmoid (1/256) and the LeakyRelu, into a
    # fourth scale.
    sig_f = dequantize(quantize((1 / (1 + np.exp(-xu_f))).astype(np.float32), sig_s, sig_z,
                                np.uint8), sig_s, sig_z).astype(np.float64)
    lr_f = dequantize(quantize(np.where(xu_f > 0, xu_f, 0.1 * xu_f).astype(np.float32), lr_s,
                               lr_z, np.uint8), lr_s, lr_z).astype(np.float64)
    # Pad (a constant fill off the grid: quantized like the float graph), a
    # nearest Resize and a Slice between equal quantizations.
    pads = g.const("pad_pads", np.array([0, 0, 1, 2, 0, 0, 2, 1], np.int64))
    pad_fill = g.const("pad_fill", np.array(0.33, np.float32))
    padded = np.pad(xu_f, ((0, 0), (0, 0), (1, 2), (2, 1)), constant_values=np.float32(0.33))
    out(g.node("Pad", [xu, pads, pad_fill], mode="constant"), "pad", padded, s, zu, np.uint8)
    scales = g.const("resize_scales", np.array([1, 1, 2, 2], np.float32))
    out(g.node("Resize", [xi, "", scales], mode="nearest",
               coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
        "resize", xi_f.repeat(2, axis=2).repeat(2, axis=3), s, zi, np.int8)
    out(g.node("Slice", [xu, g.const("sl_starts", np.array([1, 2], np.int64)),
                         g.const("sl_ends", np.array([8, 11], np.int64)),
                         g.const("sl_axes", np.array([2, 3], np.int64)),
                         g.const("sl_steps", np.array([3, 2], np.int64))]),
        "slice", xu_f[:, :, 1:8:3, 2:11:2], s, zu, np.uint8)
    cat_s, cat_z = range_params(-0.6, 7.0, np.uint8)
    cat = g.node("Concat", [xu, g.qdq(sig, sig_s, sig_z), g.qdq(lrelu, lr_s, lr_z)], axis=1)
    out(cat, "concat", np.concatenate([xu_f, sig_f, lr_f], axis=1), cat_s, cat_z, np.uint8)
    return "lookup_concat_maxpool", g.model(), [x], refs


def softmax_case(rng):
    """DequantizeLinear -> Softmax -> QuantizeLinear, which ONNX Runtime fuses
    into com.microsoft's QLinearSoftmax and Baton into its QLinearSoftmax
    (the same table and float arithmetic): uint8 over the last axis with the
    usual 1/256 output scale (one-hot rows saturate at 255), int8 over a
    middle axis with zero point -128 (saturating at 127) and uint8 over the
    first axis, both with output scales whose 1 / scale is not an integer in
    float (ORT floors it, so its fused and unfused outputs differ). The
    reference is float64 numpy (the float softmax, quantized)."""
    s = np.float32(0.125)
    x = on_grid(rng, (2, 5, 4, 12), s, np.uint8(128), np.uint8)
    x[:, :, 0] = np.float32(-16.0)  # rows of one large and many tiny: saturate
    x[:, :, 0, 3] = np.float32(15.875)
    g = GraphBuilder()
    xin = g.add_input("x", x)
    refs = []

    def softmax(v, axis):
        e = np.exp(v - v.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)

    for name, dtype, zp, axis, ys, yz in (
            ("softmax_last_u8", np.uint8, np.uint8(128), -1, np.float32(1 / 256), np.uint8(0)),
            ("softmax_axis1_i8", np.int8, np.int8(0), 1, np.float32(1 / 255), np.int8(-128)),
            ("softmax_axis0_u8", np.uint8, np.uint8(128), 0, np.float32(1 / 250), np.uint8(3))):
        xf = dequantize(quantize(x, s, zp, dtype), s, zp).astype(np.float64)
        yf = softmax(xf, axis)
        refs.append(dequantize(quantize(yf.astype(np.float32), ys, yz, dtype), ys, yz))
        sm = g.node("Softmax", [g.qdq(xin, s, zp)], axis=axis)
        g.rename_output(g.qdq(sm, ys, yz), name, yf.shape)
    return "softmax_uint8_int8", g.model(), [x], refs


def dynquant_ref(x, w, wz, w_scale, bias):
    """One layer of ONNX Runtime's dynamic quantization in numpy float32:
    DynamicQuantizeLinear (its arithmetic), MatMulInteger, Cast, Mul by
    x_scale * w_scale, Add bias. Returns (xq, x_zero_point, acc, y)."""
    f32 = np.float32
    lo, hi = min(f32(x.min()), f32(0)), max(f32(x.max()), f32(0))
    scale = f32(1) if hi == lo else f32(hi - lo) / f32(255)
    zp = np.rint(np.clip(f32(0) - lo / scale, f32(0), f32(255)))
    xq = np.clip(np.rint(x / scale) + zp, 0, 255).astype(np.uint8)
    acc = np.matmul(xq.astype(np.int64) - int(zp), w.astype(np.int64) - wz.astype(np.int64))
    y = acc.astype(np.int32).astype(f32) * (scale * f32(w_scale)) + bias
    return xq, np.uint8(zp), acc.astype(np.int32), y.astype(f32)


def dynquant_mlp_case(rng):
    """ONNX Runtime's dynamic quantization (quantize_dynamic, as for
    transformers) of a 2-layer MLP: DynamicQuantizeLinear -> MatMulInteger
    (int8 weights, zero point 0; then uint8 weights with per-column zero
    points) -> Cast -> Mul(x_scale * w_scale) -> Add(bias) [-> Relu]. The
    first layer's uint8 activations, zero point and int32 product are graph
    outputs (ORT runs it unfused); the second layer ORT may fuse
    (MatMulIntegerToFloat); its float result leaves through a QuantizeLinear
    so that it compares in LSBs."""
    f32 = np.float32
    x = (rng.standard_normal((2, 5, 16)) * 1.5).astype(f32)
    w1 = rng.integers(-127, 128, (16, 12)).astype(np.int8)
    w1z, w1s = np.int8(0), f32(0.004)
    b1 = (rng.standard_normal(12) * 0.2).astype(f32)
    w2 = rng.integers(0, 256, (12, 6)).astype(np.uint8)
    w2z = rng.integers(100, 156, 6).astype(np.uint8)
    w2s = f32(0.003)
    b2 = (rng.standard_normal(6) * 0.1).astype(f32)
    q1, z1, acc1, h1 = dynquant_ref(x, w1, w1z, w1s, b1)
    _, _, _, y = dynquant_ref(np.maximum(h1, f32(0)), w2, w2z, w2s, b2)
    ys, yz = range_params(y.min(), y.max(), np.uint8)
    yq = quantize(y, ys, yz, np.uint8)

    g = GraphBuilder()
    t = g.add_input("x", x)

    def layer(t, w, wz, ws, b, k, outs=None):
        outs = outs or [f"q{k}", f"s{k}", f"z{k}"]
        g.nodes.append(helper.make_node("DynamicQuantizeLinear", [t], outs, name=f"dql{k}"))
        acc = outs[0] + "_acc" if k > 1 else "acc1"
        g.nodes.append(helper.make_node(
            "MatMulInteger", [outs[0], g.const(f"w{k}", w), outs[2], g.const(f"w{k}_zp", wz)],
            [acc], name=f"mmint{k}"))
        t = g.node("Cast", [acc], to=onnx.TensorProto.FLOAT)
        t = g.node("Mul", [t, g.node("Mul", [outs[1], g.const(f"w{k}_scale", ws)])])
        return g.node("Add", [t, g.const(f"b{k}", b)])

    t = g.node("Relu", [layer(t, w1, w1z, w1s, b1, 1)])
    t = layer(t, w2, w2z, w2s, b2, 2)
    g.rename_output(g.q(t, ys, yz), "y", yq.shape)
    for name, dtype, shape in (("q1", onnx.TensorProto.UINT8, q1.shape),
                               ("z1", onnx.TensorProto.UINT8, []),
                               ("acc1", onnx.TensorProto.INT32, acc1.shape)):
        g.outputs.append(helper.make_tensor_value_info(name, dtype, shape))
    return "dynquant_mlp", g.model(), [x], [yq, q1, z1, acc1]


def conv_integer_case(rng):
    """ONNX ConvInteger as dynamically quantized CNNs have it: uint8 x and w
    with zero points, pads 1 and stride 2; the int32 output is compared
    exactly."""
    import torch
    x = rng.integers(0, 256, (1, 3, 9, 8)).astype(np.uint8)
    w = rng.integers(0, 256, (4, 3, 3, 3)).astype(np.uint8)
    xz, wz = np.uint8(131), np.uint8(120)
    xv = torch.from_numpy(x.astype(np.float64) - float(xz))
    wv = torch.from_numpy(w.astype(np.float64) - float(wz))
    ref = np.rint(torch.nn.functional.conv2d(xv, wv, None, 2, 1).numpy()).astype(np.int32)
    g = GraphBuilder()
    g.add_input("x", x)
    g.nodes.append(helper.make_node(
        "ConvInteger", ["x", g.const("w", w), g.const("x_zero_point", xz),
                        g.const("w_zero_point", wz)], ["y"], name="convint",
        kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
    g.outputs.append(helper.make_tensor_value_info("y", onnx.TensorProto.INT32, ref.shape))
    return "conv_integer_uint8", g.model(), [x], [ref]


def helper_cases(rng):
    """(name, model, [inputs], [reference outputs])."""
    return [
        conv_case(rng, "conv_per_channel_uint8", np.uint8, (1, 4, 10, 10), 8, 3, 1, 1, True),
        conv_case(rng, "dwconv_per_channel_int8", np.int8, (1, 6, 9, 9), 6, 3, 6, 2, False),
        matmul_case(rng),
        add_case(rng),
        no_zero_point_case(rng),
        per_axis_case(rng),
        pool_case(rng),
        mul_case(rng),
        lookup_case(rng),
        dynquant_mlp_case(rng),
        conv_integer_case(rng),
        softmax_case(rng),  # last: the earlier cases keep their random inputs
    ]


# ---- output LSBs, op types, ORT ----------------------------------------------

def const_value(model, name):
    """An initializer's or a Constant node's value, or None."""
    for i in model.graph.initializer:
        if i.name == name:
            return numpy_helper.to_array(i)
    for n in model.graph.node:
        if n.op_type == "Constant" and n.output[0] == name:
            for a in n.attribute:
                if a.name == "value":
                    return numpy_helper.to_array(a.t)
    return None


def output_quantization(model, name, rank):
    """{lsb, lsb_axis, zero_point} of graph output `name`: the scale of the
    DequantizeLinear that writes it (lsb_axis: its axis, non-negative, when
    the scale is per-axis), or lsb 1 for an output written by
    QuantizeLinear; None otherwise."""
    node = next((n for n in model.graph.node if name in n.output), None)
    if node is None:
        return None
    if node.op_type == "QuantizeLinear":
        return {"lsb": 1.0, "lsb_axis": None, "zero_point": None}
    if node.op_type != "DequantizeLinear":
        return None
    scale = const_value(model, node.input[1])
    zp = const_value(model, node.input[2]) if len(node.input) > 2 and node.input[2] else None
    axis = next((a.i for a in node.attribute if a.name == "axis"), 1)
    if scale.size == 1:
        return {"lsb": float(scale.reshape(())), "lsb_axis": None,
                "zero_point": None if zp is None else int(zp.reshape(()))}
    return {"lsb": scale.astype(float).tolist(), "lsb_axis": axis % rank,
            "zero_point": None if zp is None else zp.astype(int).tolist()}


def op_types(model):
    return dict(sorted(collections.Counter(n.op_type for n in model.graph.node).items()))


# ---- main ---------------------------------------------------------------------

def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.split("\n\n")[1])
    out_dir = sys.argv[1]
    # ctest may run several users of the cases at once: one generates while
    # the others wait on the lock, then find the cases written and return.
    os.makedirs(os.path.dirname(os.path.abspath(out_dir)), exist_ok=True)
    with open(out_dir + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            return generate(out_dir)
        except ort_ref.OrtNotInstalled as e:
            sys.exit(f"make_quant_models.py: {e}")


def input_names(model):
    inits = {t.name for t in model.graph.initializer}
    return [i.name for i in model.graph.input if i.name not in inits]


def run_both(path, feeds):
    """ORT's outputs at levels 'all' and 'disabled', as lists in output order."""
    a, _ = ort_ref.run_ort(path, feeds, opt_level="all")
    b, _ = ort_ref.run_ort(path, feeds, opt_level="disabled")
    return list(a.values()), list(b.values())


def batched(model, path):
    """`model` with a free leading dimension on its inputs and outputs, saved
    to `path` (torch's exports reshape with Flatten, so the graph holds)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    del m.graph.value_info[:]
    for v in list(m.graph.input) + list(m.graph.output):
        v.type.tensor_type.shape.dim[0].dim_param = "batch"
    onnx.save(m, path)
    return path


def spread(outs, refs, samples):
    """The references against each other, per output: {"<a>_vs_<b>":
    {max_lsb over all samples, equal: the lowest per-sample share of equal
    elements, equal_mean}}. refs: {kind: [arrays, one per output]}, each
    array's axis 0 the samples when samples > 1."""
    pairs = [("ort", "ort_noopt"), ("ort", "torch"), ("ort_noopt", "torch"), ("ort", "ref"),
             ("ort_noopt", "ref")]
    result = []
    for k, out in enumerate(outs):
        row = {"samples": samples}
        for a, b in pairs:
            if a not in refs or b not in refs:
                continue
            x, y = refs[a][k], refs[b][k]
            rows = [quant_check.lsb_stats(x[i:i + 1], y[i:i + 1], out) for i in range(samples)] \
                if samples > 1 else [quant_check.lsb_stats(x, y, out)]
            row[f"{a}_vs_{b}"] = {"max_lsb": max(r["max_lsb"] for r in rows),
                                  "equal": min(r["equal"] for r in rows),
                                  "equal_mean": float(np.mean([r["equal"] for r in rows]))}
        result.append(row)
    return result


def save_case(tmp, name, source, model, inputs, refs, ref_kind, batch=None):
    """Writes one case: the model, its inputs, ORT's outputs at both levels,
    and `refs` (torch's or this script's outputs) as <ref_kind>_out<k>.npy.
    batch: ([inputs], [ref outputs]) with SPREAD_SAMPLES along axis 0, over
    which ORT's and the reference's agreement is measured (else over the
    case's own input). Returns its manifest entry."""
    d = os.path.join(tmp, name)
    os.makedirs(d)
    path = os.path.join(d, "model.onnx")
    onnx.save(model, path)
    feeds = dict(zip(input_names(model), inputs))
    ort_all, ort_noopt = run_both(path, feeds)
    entry = {"name": name, "source": source, "ops": op_types(model), "inputs": [],
             "outputs": []}
    for k, (n, v) in enumerate(feeds.items()):
        np.save(os.path.join(d, f"input{k}.npy"), np.ascontiguousarray(v))
        entry["inputs"].append({"name": n, "file": f"input{k}.npy", "dtype": str(v.dtype),
                                "shape": list(v.shape)})
    for k, o in enumerate(model.graph.output):
        a, b = ort_all[k], ort_noopt[k]
        out = {"name": o.name, "dtype": str(a.dtype), "shape": list(a.shape),
               "ort": f"ort_out{k}.npy", "ort_noopt": f"ort_noopt_out{k}.npy",
               ref_kind: f"{ref_kind}_out{k}.npy"}
        np.save(os.path.join(d, out["ort"]), a)
        np.save(os.path.join(d, out["ort_noopt"]), b)
        np.save(os.path.join(d, out[ref_kind]), refs[k].astype(a.dtype))
        out.update(output_quantization(model, o.name, a.ndim) or {"lsb": None, "lsb_axis": None})
        entry["outputs"].append(out)
    outs = entry["outputs"]
    single = spread(outs, {"ort": ort_all, "ort_noopt": ort_noopt, ref_kind: refs}, 1)
    if batch is None:
        many = single
    else:
        bpath = batched(model, os.path.join(tmp, "batched.onnx"))
        b_all, b_noopt = run_both(bpath, dict(zip(input_names(model), batch[0])))
        os.remove(bpath)
        many = spread(outs, {"ort": b_all, "ort_noopt": b_noopt, ref_kind: batch[1]},
                      SPREAD_SAMPLES)
    for out, one, all_ in zip(outs, single, many):
        out["agreement"] = one
        out["spread"] = all_
    return entry


def generate(out_dir):
    digest = script_hash()
    try:
        with open(os.path.join(out_dir, "manifest.json")) as f:
            if json.load(f).get("script_sha256") == digest:
                return 0
    except (OSError, ValueError):
        pass
    start = time.time()
    ort_version = ort_ref.check_installed()
    import torch
    tmp = out_dir + ".tmp%d" % os.getpid()
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    torch.set_num_threads(1)  # as fast as 2 on 2 busy cores
    cases = []
    for seed, (name, builder, shape, batch) in enumerate(torch_models()):
        t0 = time.time()
        model_bytes, inputs, outputs, fixed, many, float_bytes = torch_case(
            name, builder, shape, batch, 100 * seed)
        cases.append(save_case(tmp, name, "torch", onnx.load_from_string(model_bytes), inputs,
                               outputs, "torch", many))
        cases[-1]["biases_rerounded"] = fixed
        if float_bytes is not None:
            with open(os.path.join(tmp, name, "model_float.onnx"), "wb") as f:
                f.write(float_bytes)
            cases[-1]["float_model"] = "model_float.onnx"
        cases[-1]["seconds"] = round(time.time() - t0, 1)
    rng = np.random.default_rng(15)
    for name, model, inputs, outputs in helper_cases(rng):
        cases.append(save_case(tmp, name, "onnx.helper", model, inputs, outputs, "ref"))
    manifest = {
        "script_sha256": digest,
        "opset": OPSET,
        "torch": torch.__version__,
        "onnxruntime": ort_version,
        "spread_samples": SPREAD_SAMPLES,
        "seconds": round(time.time() - start, 1),
        "cases": cases,
    }
    with open(os.path.join(tmp, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    shutil.rmtree(out_dir, ignore_errors=True)
    os.rename(tmp, out_dir)
    print_agreement(manifest)
    return 0


def print_agreement(manifest):
    """The references against each other: max |diff| in LSBs / % equal, on
    the case's input and over SPREAD_SAMPLES inputs (worst max, mean %)."""
    print(f"{len(manifest['cases'])} cases in {manifest['seconds']} s "
          f"(torch {manifest['torch']}, ONNX Runtime {manifest['onnxruntime']}); "
          "cells: max |diff| in LSBs / % equal elements")
    print(f"{'case/output':33} {'ORT-all vs torch|ref':>21} {'ORT-all vs ORT-off':>19}  "
          f"over {manifest['spread_samples']} inputs: {'vs torch|ref':>14} {'vs ORT-off':>14}")

    def cell(row, a, b, key="equal"):
        s = row.get(f"{a}_vs_{b}")
        return "-" if s is None else f"{s['max_lsb']:g} / {100 * s[key]:.1f}%"

    for c in manifest["cases"]:
        for out in c["outputs"]:
            one, many = out["agreement"], out["spread"]
            ref = "torch" if "torch" in out else "ref"
            print(f"{c['name'] + '/' + out['name']:33} {cell(one, 'ort', ref):>21} "
                  f"{cell(one, 'ort', 'ort_noopt'):>19}  {'':14}"
                  f"{cell(many, 'ort', ref, 'equal_mean'):>14} "
                  f"{cell(many, 'ort', 'ort_noopt', 'equal_mean'):>14}")


if __name__ == "__main__":
    sys.exit(main())
