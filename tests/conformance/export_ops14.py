#!/usr/bin/python3
"""Exports a small torch module made of issue 14's elementwise, activation
and reduction ops to ONNX, with torch's outputs as references.

Usage: export_ops14.py OUT_DIR --opset N

Writes OUT_DIR/ops14.onnx, OUT_DIR/input.npy (seeded [1,8,6,6] float32) and
OUT_DIR/output<k>.npy for each of the module's outputs (torch, float32,
single-threaded): a float tensor through GELU, Mish, Softplus, ELU, PReLU,
maximum/minimum, log_softmax, sum and amax; argmax (int64); topk values and
indices (int64); and a sqrt/pow/exp/log/abs/neg/reciprocal/erf/amin chain.
(torch's repeat exports Expand/ConstantOfShape, another engineer's ops.)

Also writes OUT_DIR/graph.onnx, built with onnx.helper at the same opset,
for the ops whose ONNX signature changes between opsets 11, 13 and 17:
ReduceSum (axes attribute at 11, input from 13), TopK (k input, smallest),
plus Tile, ReduceL2, ArgMin (keepdims=0), Pow with an int64 exponent,
Max/Min with broadcasting, Neg; numpy references in graph_input.npy and
graph_output<k>.npy.
"""

import argparse
import os

import numpy as np
import torch
import torch.nn.functional as F


class Ops14(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.gelu = torch.nn.GELU()
        self.mish = torch.nn.Mish()
        self.prelu = torch.nn.PReLU(8)
        self.elu = torch.nn.ELU(alpha=0.7)
        self.softplus = torch.nn.Softplus()
        with torch.no_grad():
            self.prelu.weight.copy_(torch.linspace(-0.5, 0.5, 8))

    def forward(self, x):
        a = self.gelu(self.conv(x))
        b = self.mish(x) + self.softplus(x) - self.elu(x)
        c = self.prelu(x - 0.2)
        m = torch.maximum(a, b) - torch.minimum(b, c)
        ls = F.log_softmax(m, dim=1)
        s = torch.sum(ls, dim=(2, 3), keepdim=True) * 0.01 + torch.amax(m, dim=1, keepdim=True)
        main = ls + s
        idx = torch.argmax(m, dim=1)
        top_v, top_i = torch.topk(m.flatten(2), 5, dim=2)
        y = torch.abs(x) + 0.5
        chain = (torch.sqrt(y) + torch.pow(y, 2.0) + torch.exp(-y) + torch.log(y)
                 - torch.reciprocal(y) + torch.erf(-x) + torch.amin(y, dim=3, keepdim=True))
        return main, idx, top_v, top_i, chain


def onnx_graph(out_dir, opset):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3, 5)).astype(np.float32)
    b = rng.standard_normal((3, 1)).astype(np.float32)
    inits = [numpy_helper.from_array(b, "b"),
             numpy_helper.from_array(np.array([1, 2, 1], np.int64), "reps"),
             numpy_helper.from_array(np.array([2], np.int64), "k"),
             numpy_helper.from_array(np.array(2, np.int64), "two")]
    nodes = [helper.make_node("Max", ["x", "b"], ["mx"]),
             helper.make_node("Min", ["mx", "x"], ["mn"]),
             helper.make_node("Pow", ["mn", "two"], ["pw"]),
             helper.make_node("Neg", ["pw"], ["ng"])]
    if opset >= 13:
        inits.append(numpy_helper.from_array(np.array([-1], np.int64), "axes"))
        nodes.append(helper.make_node("ReduceSum", ["ng", "axes"], ["rs"], keepdims=1))
    else:
        nodes.append(helper.make_node("ReduceSum", ["ng"], ["rs"], axes=[-1], keepdims=1))
    nodes += [helper.make_node("Tile", ["rs", "reps"], ["out0"]),
              helper.make_node("TopK", ["x", "k"], ["out1", "out2"], axis=1, largest=0),
              helper.make_node("ReduceL2", ["x"], ["out3"], axes=[0, 2], keepdims=0),
              helper.make_node("ArgMin", ["x"], ["out4"], axis=-1, keepdims=0)]
    f, i = TensorProto.FLOAT, TensorProto.INT64
    outs = [helper.make_tensor_value_info("out0", f, [2, 6, 1]),
            helper.make_tensor_value_info("out1", f, [2, 2, 5]),
            helper.make_tensor_value_info("out2", i, [2, 2, 5]),
            helper.make_tensor_value_info("out3", f, [3]),
            helper.make_tensor_value_info("out4", i, [2, 3])]
    graph = helper.make_graph(nodes, "ops14_graph", [helper.make_tensor_value_info("x", f, [2, 3, 5])],
                              outs, initializer=inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(out_dir, "graph.onnx"))
    xd = x.astype(np.float64)
    ng = -np.minimum(np.maximum(xd, b), xd) ** 2
    order = np.argsort(x, axis=1, kind="stable")[:, :2]
    refs = [np.tile(ng.sum(axis=-1, keepdims=True), (1, 2, 1)),
            np.take_along_axis(xd, order, axis=1), order.astype(np.int64),
            np.sqrt((xd * xd).sum(axis=(0, 2))), np.argmin(x, axis=-1).astype(np.int64)]
    np.save(os.path.join(out_dir, "graph_input.npy"), x)
    for k, r in enumerate(refs):
        r = r.astype(np.float32) if r.dtype == np.float64 else r
        np.save(os.path.join(out_dir, f"graph_output{k}.npy"), r)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("--opset", type=int, default=13)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = Ops14().eval()
    x = torch.randn(1, 8, 6, 6, generator=torch.Generator().manual_seed(1))
    os.makedirs(args.out_dir, exist_ok=True)
    with torch.no_grad():
        outputs = model(x)
        torch.onnx.export(model, (x,), os.path.join(args.out_dir, "ops14.onnx"),
                          opset_version=args.opset, input_names=["x"],
                          output_names=[f"out{k}" for k in range(len(outputs))])
    np.save(os.path.join(args.out_dir, "input.npy"), x.numpy())
    for k, o in enumerate(outputs):
        np.save(os.path.join(args.out_dir, f"output{k}.npy"), o.numpy())
    onnx_graph(args.out_dir, args.opset)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
