#!/usr/bin/python3
"""Writes a large, realistic ONNX graph for the planner's run-time benchmark.

The graph has two image inputs (a full-resolution one and a half-resolution
side input), a stem, then stages of blocks cycling through
  - inverted residual blocks (1x1 expand, depthwise 3x3, 1x1 project, Add),
  - inception blocks (four branches: 1x1; 1x1 then 3x3; 3x3 max-pool then
    1x1; 3x3 average-pool then 1x1; Concat then a 1x1 back to the width),
  - squeeze-excite blocks (GlobalAveragePool, 1x1 reduce, Relu, 1x1 expand,
    Sigmoid, Mul),
with a stride-2 downsampling between stages, and a classifier head
(GlobalAveragePool, Flatten, Gemm, Softmax) after every stage: one graph
output per stage. The side input joins at the second stage (Add).
Relu follows convolutions (the simplifier fuses it), so the node count that
matters is the one after import; this script prints the count before fusion
and without the fused Relus, which is what `baton plan` plans.

Weights are seeded random (numpy), small: channel widths stay 16..48 and the
resolution shrinks to a floor, so a 5,000-node graph stays a few MB.

usage: make_big_graph.py OUT.onnx --nodes N [--seed S] [--size H]
"""

import argparse
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Builder:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.count = [], [], 0
        self.planned = 0  # nodes after the simplifier fuses Relu into Conv

    def name(self, prefix):
        self.count += 1
        return f"{prefix}{self.count}"

    def weight(self, *shape):
        w = (self.rng.standard_normal(shape) * (1.0 / np.sqrt(np.prod(shape[1:])))).astype(np.float32)
        n = self.name("w")
        self.inits.append(numpy_helper.from_array(w, n))
        return n

    def op(self, op, inputs, **attrs):
        out = self.name("t")
        self.nodes.append(helper.make_node(op, inputs, [out], name=self.name(op.lower()), **attrs))
        if op != "Relu" or not self.nodes[-2].op_type == "Conv":
            self.planned += 1
        return out

    def conv(self, x, cin, cout, k=1, stride=1, group=1, relu=True):
        w = self.weight(cout, cin // group, k, k)
        b = self.weight(cout)
        y = self.op("Conv", [x, w, b], kernel_shape=[k, k], strides=[stride, stride],
                    pads=[k // 2] * 4, group=group)
        return self.op("Relu", [y]) if relu else y


def residual(b, x, c):
    e = b.conv(x, c, 2 * c)
    e = b.conv(e, 2 * c, 2 * c, k=3, group=2 * c)
    p = b.conv(e, 2 * c, c, relu=False)
    return b.op("Add", [x, p])


def inception(b, x, c):
    q = c // 4
    b1 = b.conv(x, c, q)
    b2 = b.conv(b.conv(x, c, q), q, q, k=3)
    b3 = b.conv(b.op("MaxPool", [x], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1]), c, q)
    b4 = b.conv(b.op("AveragePool", [x], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1]),
                c, q)
    cat = b.op("Concat", [b1, b2, b3, b4], axis=1)
    return b.conv(cat, 4 * q, c)


def squeeze_excite(b, x, c):
    s = b.op("GlobalAveragePool", [x])
    s = b.conv(s, c, max(4, c // 4))
    s = b.conv(s, max(4, c // 4), c, relu=False)
    s = b.op("Sigmoid", [s])
    return b.op("Mul", [x, s])


def head(b, x, c, classes=10):
    g = b.op("GlobalAveragePool", [x])
    f = b.op("Flatten", [g], axis=1)
    w = b.weight(classes, c)
    bias = b.weight(classes)
    y = b.op("Gemm", [f, w, bias], transB=1)
    return b.op("Softmax", [y], axis=1)


def build(nodes, seed, size):
    b = Builder(seed)
    x = "image"
    side = "side"
    h = b.conv(x, 3, 16, k=3, stride=2)
    c, res = 16, size // 2
    widths = [16, 24, 32, 40, 48]
    blocks = [residual, inception, residual, squeeze_excite]
    outputs = []
    # Enough stages for the size: each stage holds about a fifth of the nodes
    # (at least one block), and the resolution stops halving at 7.
    per_stage = max(1, (nodes - 40) // (len(widths) * 9))
    stage = 0
    while b.planned < nodes - 8:
        if stage == 1:
            s = b.conv(side, 3, c, k=3)
            h = b.op("Add", [h, s])
        for k in range(per_stage):
            if b.planned >= nodes - 8:
                break
            h = blocks[k % len(blocks)](b, h, c)
        outputs.append(head(b, h, c))
        stage += 1
        nc = widths[min(stage, len(widths) - 1)]
        stride = 2 if res > 7 else 1
        h = b.conv(h, c, nc, k=3, stride=stride)
        c, res = nc, (res + stride - 1) // stride
    outputs.append(head(b, h, c))
    graph = helper.make_graph(
        b.nodes, f"big{nodes}",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, size, size]),
         helper.make_tensor_value_info("side", TensorProto.FLOAT, [1, 3, size // 4, size // 4])],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, [1, 10]) for o in outputs],
        b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    return model, b.planned


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--nodes", type=int, required=True, help="nodes after Relu fusion (about)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--size", type=int, default=64, help="input resolution (default 64)")
    a = ap.parse_args()
    model, planned = build(a.nodes, a.seed, a.size)
    onnx.save(model, a.out)
    print(f"{a.out}: {len(model.graph.node)} ONNX nodes, about {planned} after Relu fusion, "
          f"{len(model.graph.output)} outputs", file=sys.stderr)


if __name__ == "__main__":
    main()
