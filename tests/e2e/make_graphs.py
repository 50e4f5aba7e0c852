#!/usr/bin/python3
"""Writes the end-to-end test graphs (Baton graph JSON) with seeded random
weights, their inputs, and reference outputs computed by PyTorch: a source of
truth outside the code under test.

usage: make_graphs.py OUT_DIR
For every graph G: OUT_DIR/G.json, OUT_DIR/G.<input>.npy, OUT_DIR/G.ref.<output>.npy
"""
import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(1234)


def rand(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


class G:
    def __init__(self, name):
        self.name = name
        self.inputs, self.outputs, self.inits, self.nodes = [], [], [], []
        self.arrays = {}

    def input(self, name, arr):
        self.inputs.append({"name": name, "dtype": "float32", "shape": list(arr.shape)})
        self.arrays[name] = arr
        return name

    def init(self, name, arr, file=False):
        entry = {"name": name, "dtype": "float32", "shape": list(arr.shape)}
        if file:
            entry["file"] = f"{self.name}.{name}.npy"
            self.npy_files = getattr(self, "npy_files", {})
            self.npy_files[entry["file"]] = arr
        else:
            entry["data"] = [float(v) for v in arr.reshape(-1)]
        self.inits.append(entry)
        return name

    def node(self, name, op, inputs, outputs, attrs=None):
        n = {"name": name, "op": op, "inputs": inputs, "outputs": outputs}
        if attrs:
            n["attrs"] = attrs
        self.nodes.append(n)

    def write(self, out_dir, refs):
        doc = {"name": self.name, "inputs": self.inputs, "outputs": list(refs.keys()),
               "initializers": self.inits, "nodes": self.nodes}
        with open(os.path.join(out_dir, f"{self.name}.json"), "w") as f:
            json.dump(doc, f)
        for name, arr in self.arrays.items():
            np.save(os.path.join(out_dir, f"{self.name}.{name}.npy"), arr)
        for fname, arr in getattr(self, "npy_files", {}).items():
            np.save(os.path.join(out_dir, fname), arr)
        for name, arr in refs.items():
            np.save(os.path.join(out_dir, f"{self.name}.ref.{name}.npy"),
                    np.ascontiguousarray(arr.detach().numpy().astype(np.float32)))


T = torch.from_numpy


def tiny_cnn(out):
    g = G("tiny_cnn")
    x = rand(1, 3, 16, 16)
    w1, b1 = rand(8, 3, 3, 3, scale=0.3), rand(8, scale=0.1)
    wd, bd = rand(8, 1, 3, 3, scale=0.3), rand(8, scale=0.1)
    w2, b2 = rand(16, 8, 1, 1, scale=0.3), rand(16, scale=0.1)
    wf, bf = rand(10, 16, scale=0.3), rand(10, scale=0.1)
    g.input("x", x)
    g.init("w1", w1, file=True); g.init("b1", b1)
    g.init("wd", wd); g.init("bd", bd)
    g.init("w2", w2); g.init("b2", b2)
    g.init("wf", wf); g.init("bf", bf)
    g.node("conv1", "Conv", ["x", "w1", "b1"], ["c1"], {"pads": [1, 1, 1, 1]})
    g.node("relu1", "Relu", ["c1"], ["r1"])
    g.node("pool1", "MaxPool", ["r1"], ["p1"], {"kernel_shape": [2, 2], "strides": [2, 2]})
    g.node("dw", "Conv", ["p1", "wd", "bd"], ["d1"], {"pads": [1, 1, 1, 1], "group": 8})
    g.node("clip", "Clip", ["d1"], ["k1"], {"min": 0.0, "max": 6.0})
    g.node("pw", "Conv", ["k1", "w2", "b2"], ["c2"])
    g.node("sig", "Sigmoid", ["c2"], ["s2"])
    g.node("gap", "GlobalAveragePool", ["s2"], ["g"])
    g.node("flat", "Flatten", ["g"], ["f"], {"axis": 1})
    g.node("fc", "Gemm", ["f", "wf", "bf"], ["logits"], {"transB": 1})
    g.node("softmax", "Softmax", ["logits"], ["y"], {"axis": 1})
    t = F.conv2d(T(x), T(w1), T(b1), padding=1).relu()
    t = F.max_pool2d(t, 2, 2)
    t = F.conv2d(t, T(wd), T(bd), padding=1, groups=8).clamp(0, 6)
    t = torch.sigmoid(F.conv2d(t, T(w2), T(b2)))
    t = t.mean(dim=(2, 3))
    y = F.softmax(t @ T(wf).T + T(bf), dim=1)
    g.write(out, {"y": y})


def branches(out):
    g = G("branches")
    a, b = rand(1, 4, 6, 6), rand(1, 4, 1, 6)
    s = rand(4, 1, 1)
    wm = rand(36, 5, scale=0.2)
    g.input("a", a); g.input("b", b)
    g.init("s", s); g.init("wm", wm)
    g.node("add", "Add", ["a", "b"], ["t1"])
    g.node("mul", "Mul", ["t1", "s"], ["t2"])
    g.node("avg", "AveragePool", ["t2"], ["t3"],
           {"kernel_shape": [3, 3], "strides": [1, 1], "pads": [1, 1, 1, 1], "count_include_pad": 0})
    g.node("sig", "Sigmoid", ["a"], ["t4"])
    g.node("cat", "Concat", ["t3", "t4"], ["t5"], {"axis": 1})
    g.node("relu", "Relu", ["t5"], ["t6"])
    g.node("reshape_shape", "Reshape", ["t6", "shape"], ["t7"])
    g.inits.append({"name": "shape", "dtype": "int64", "shape": [2], "data": [8, 36]})
    g.node("mm", "MatMul", ["t7", "wm"], ["m"])
    t1 = T(a) + T(b)
    t2 = t1 * T(s)
    t3 = F.avg_pool2d(t2, 3, 1, 1, count_include_pad=False)
    t5 = torch.cat([t3, torch.sigmoid(T(a))], dim=1).relu()
    m = t5.reshape(8, 36) @ T(wm)
    g.write(out, {"m": m, "t3": t3})


def passthrough(out):
    # A -> B -> C -> D -> E, where E reads A, B and D (B and D run elsewhere).
    g = G("passthrough")
    x = rand(1, 4, 8, 8)
    ws = [rand(4, 4, 1, 1, scale=0.5) for _ in range(4)]
    g.input("x", x)
    for i, w in enumerate(ws):
        g.init(f"w{i}", w)
    g.node("A", "Conv", ["x", "w0"], ["a"])
    g.node("B", "Conv", ["a", "w1"], ["b"])
    g.node("C", "Relu", ["b"], ["c"])
    g.node("D", "Conv", ["c", "w2"], ["d"])
    g.node("E1", "Add", ["a", "b"], ["e1"])
    g.node("E", "Add", ["e1", "d"], ["e"])
    ta = F.conv2d(T(x), T(ws[0]))
    tb = F.conv2d(ta, T(ws[1]))
    td = F.conv2d(tb.relu(), T(ws[2]))
    g.write(out, {"e": ta + tb + td})


def residual(out):
    g = G("residual")
    x = rand(1, 8, 12, 12)
    w1, w2 = rand(8, 8, 3, 3, scale=0.2), rand(8, 8, 3, 3, scale=0.2)
    w3 = rand(16, 8, 3, 3, scale=0.2)
    g.input("x", x)
    g.init("w1", w1); g.init("w2", w2); g.init("w3", w3)
    g.node("c1", "Conv", ["x", "w1"], ["t1"], {"pads": [1, 1, 1, 1]})
    g.node("r1", "Relu", ["t1"], ["t2"])
    g.node("c2", "Conv", ["t2", "w2"], ["t3"], {"pads": [1, 1, 1, 1]})
    g.node("add", "Add", ["t3", "x"], ["t4"])
    g.node("r2", "Relu", ["t4"], ["t5"])
    g.node("c3", "Conv", ["t5", "w3"], ["t6"], {"pads": [1, 1, 1, 1], "strides": [2, 2]})
    g.node("gap", "GlobalAveragePool", ["t6"], ["t7"])
    g.node("tanh", "Tanh", ["t7"], ["y"])
    t = F.conv2d(T(x), T(w1), padding=1).relu()
    t = (F.conv2d(t, T(w2), padding=1) + T(x)).relu()
    t = F.conv2d(t, T(w3), padding=1, stride=2).mean(dim=(2, 3), keepdim=True)
    g.write(out, {"y": torch.tanh(t)})


def pipeline_topology(out):
    # Like the pipeline-executor tests: module 0 feeds modules 1 and 2, module 1
    # feeds module 2, and a second graph input enters module 1.
    g = G("pipeline_topology")
    x, z = rand(1, 4, 8, 8), rand(1, 4, 8, 8)
    w0, w1, w2 = (rand(4, 4, 3, 3, scale=0.3) for _ in range(3))
    g.input("x", x); g.input("z", z)
    g.init("w0", w0); g.init("w1", w1); g.init("w2", w2)
    g.node("m0_conv", "Conv", ["x", "w0"], ["m0"], {"pads": [1, 1, 1, 1]})
    g.node("m0_relu", "Relu", ["m0"], ["m0r"])
    g.node("m1_add", "Add", ["m0r", "z"], ["m1a"])
    g.node("m1_conv", "Conv", ["m1a", "w1"], ["m1"], {"pads": [1, 1, 1, 1]})
    g.node("m2_add", "Add", ["m0r", "m1"], ["m2a"])
    g.node("m2_conv", "Conv", ["m2a", "w2"], ["m2"], {"pads": [1, 1, 1, 1]})
    g.node("m2_sig", "Sigmoid", ["m2"], ["y"])
    m0 = F.conv2d(T(x), T(w0), padding=1).relu()
    m1 = F.conv2d(m0 + T(z), T(w1), padding=1)
    y = torch.sigmoid(F.conv2d(m0 + m1, T(w2), padding=1))
    g.write(out, {"y": y})


if __name__ == "__main__":
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(0)
    for make in (tiny_cnn, branches, passthrough, residual, pipeline_topology):
        make(out_dir)
    open(os.path.join(out_dir, "done"), "w").write("ok\n")
