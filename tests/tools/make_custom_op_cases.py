#!/usr/bin/python3
"""ONNX models with a custom op, for tests/tools/custom_op_test.cc.

custom.onnx:    x [1, 2, 3] -> com.example::MyOp (attributes of every ONNX
                kind; y = x * alpha + bias + lut[c]) -> t, static value_info
                [1, 2, 3] -> Relu -> y
noshape.onnx:   the same without t's value_info
default.onnx:   x -> Frobnicate (default domain, unknown to Baton) -> Relu -> y,
                with value_info for Frobnicate's output

usage: make_custom_op_cases.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper


def custom_model(with_value_info, domain="com.example", op="MyOp"):
    attrs = {}
    if domain:
        attrs = dict(alpha=1.5, bias=-2, mode="affine", taps=[1, 2, 3], gains=[0.5, 2.0],
                     tags=["edge", "demo"],
                     lut=helper.make_tensor("lut", TensorProto.FLOAT, [2], [0.25, -0.5]))
    node = helper.make_node(op, ["x"], ["t"], name="my_op", domain=domain, **attrs)
    relu = helper.make_node("Relu", ["t"], ["y"], name="relu")
    value_info = [helper.make_tensor_value_info("t", TensorProto.FLOAT, [1, 2, 3])]
    graph = helper.make_graph(
        [node, relu], "custom",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 3])],
        value_info=value_info if with_value_info else [])
    opsets = [helper.make_opsetid("", 13)]
    if domain:
        opsets.append(helper.make_opsetid(domain, 1))
    return helper.make_model(graph, opset_imports=opsets, producer_name="custom_op_test")


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    onnx.save(custom_model(True), os.path.join(out, "custom.onnx"))
    onnx.save(custom_model(False), os.path.join(out, "noshape.onnx"))
    onnx.save(custom_model(True, domain="", op="Frobnicate"), os.path.join(out, "default.onnx"))
    x = np.array([[[1.0, -2.0, 0.5], [4.0, 0.0, 3.0]]], dtype=np.float32)
    np.save(os.path.join(out, "x.npy"), x)
    # numpy reference: relu(x * 1.5 - 2 + lut[c]).
    lut = np.array([0.25, -0.5], dtype=np.float32).reshape(1, 2, 1)
    np.save(os.path.join(out, "expected.npy"), np.maximum(x * np.float32(1.5) - 2 + lut, 0))


if __name__ == "__main__":
    main()
