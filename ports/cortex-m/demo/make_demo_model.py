#!/usr/bin/env python3
"""Writes the bundled demo graph (tiny_cnn.json) and, with --input, its input.

The graph: x[1,3,8,8] -> Conv(4x3x3x3, pads 1) -> Relu -> MaxPool(2x2)
-> Flatten -> Gemm(10x64, transB) -> Softmax -> y[1,10]. Weights are a fixed
formula (no RNG) so the file is reproducible; rerun only to change the model:

  make_demo_model.py --graph tiny_cnn.json
  make_demo_model.py --input x.npy           # build time
"""
import argparse
import json
import math
import sys


def values(count, scale, phase):
    # Deterministic, sign-varying, rounded to 4 decimals (exact in JSON).
    return [round(scale * math.sin(0.7 * i + phase), 4) for i in range(count)]


def graph():
    return {
        "name": "tiny_cnn",
        "inputs": [{"name": "x", "dtype": "float32", "shape": [1, 3, 8, 8]}],
        "outputs": ["y"],
        "initializers": [
            {"name": "w1", "dtype": "float32", "shape": [4, 3, 3, 3], "data": values(108, 0.5, 0.1)},
            {"name": "b1", "dtype": "float32", "shape": [4], "data": values(4, 0.1, 0.2)},
            {"name": "w2", "dtype": "float32", "shape": [10, 64], "data": values(640, 0.3, 0.3)},
            {"name": "b2", "dtype": "float32", "shape": [10], "data": values(10, 0.1, 0.4)},
        ],
        "nodes": [
            {"name": "conv1", "op": "Conv", "inputs": ["x", "w1", "b1"], "outputs": ["c1"],
             "attrs": {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}},
            {"name": "relu1", "op": "Relu", "inputs": ["c1"], "outputs": ["r1"]},
            {"name": "pool1", "op": "MaxPool", "inputs": ["r1"], "outputs": ["p1"],
             "attrs": {"kernel_shape": [2, 2], "strides": [2, 2]}},
            {"name": "flat", "op": "Flatten", "inputs": ["p1"], "outputs": ["f1"],
             "attrs": {"axis": 1}},
            {"name": "fc", "op": "Gemm", "inputs": ["f1", "w2", "b2"], "outputs": ["g1"],
             "attrs": {"transB": 1}},
            {"name": "softmax", "op": "Softmax", "inputs": ["g1"], "outputs": ["y"],
             "attrs": {"axis": 1}},
        ],
    }


def dumps(g):
    # One line per input, initializer and node: readable and diffable.
    def items(key):
        return ",\n".join("  " + json.dumps(v) for v in g[key])
    return ('{"name": %s,\n "inputs": [\n%s],\n "outputs": %s,\n "initializers": [\n%s],\n'
            ' "nodes": [\n%s]}' % (json.dumps(g["name"]), items("inputs"), json.dumps(g["outputs"]),
                                   items("initializers"), items("nodes")))


def write_input(path):
    import numpy as np
    x = np.array(values(192, 1.0, 0.0), dtype=np.float32).reshape(1, 3, 8, 8)
    np.save(path, x)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--graph", help="write the graph JSON here")
    parser.add_argument("--input", help="write the input x as .npy here")
    args = parser.parse_args()
    if not args.graph and not args.input:
        parser.error("nothing to do: give --graph and/or --input")
    if args.graph:
        with open(args.graph, "w") as f:
            f.write(dumps(graph()) + "\n")
    if args.input:
        write_input(args.input)
    return 0


if __name__ == "__main__":
    sys.exit(main())
