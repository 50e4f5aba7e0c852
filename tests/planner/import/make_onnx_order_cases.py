"""ONNX models whose node lists are not a plannable graph (issue 13): a
cycle, nodes out of topological order, no graph outputs; and one whose
unknown op and fold-only ops on non-constant inputs must be named in one
error (issue 14); and com.microsoft QLinearSoftmax nodes (issue 15), added
after the corpus was fixed. Kept out of make_onnx_cases.py, whose cases the
plan corpus (tools/plan_corpus.sh) plans.

usage: make_onnx_order_cases.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, "case", inputs, outputs, initializer=list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    return m


def vi(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def cases():
    out = {}
    # a reads b, b reads a: a cycle, not a dangling name.
    out["cycle"] = model([helper.make_node("Add", ["x", "b"], ["a"], name="na"),
                          helper.make_node("Relu", ["a"], ["b"], name="nb")],
                         [vi("x", [1, 4])], [vi("b", [1, 4])])
    # The same kind of chain without a cycle, listed consumer first.
    out["out_of_order"] = model([helper.make_node("Relu", ["a"], ["y"], name="second"),
                                 helper.make_node("Relu", ["x"], ["a"], name="first")],
                                [vi("x", [1, 4])], [vi("y", [1, 4])])
    # A valid model that computes nothing anyone reads.
    out["no_outputs"] = model([helper.make_node("Relu", ["x"], ["y"], name="r")],
                              [vi("x", [1, 4])], [])
    # Issue 14: an unknown op (Hardmax) and fold-only ops whose inputs are not
    # constant (two Range, a ConstantOfShape of a graph input, a Floor of the
    # unknown op's output) in one error; the ConstantOfShape of Shape(x), x
    # of static shape, folds and is not named.
    i64 = TensorProto.INT64
    zero = helper.make_tensor("z", i64, [], [0])
    one = helper.make_tensor("o", i64, [], [1])
    out["unsupported_and_fold_only"] = model(
        [helper.make_node("Hardmax", ["x"], ["a"], name="hm"),
         helper.make_node("Constant", [], ["zero"], value=zero),
         helper.make_node("Constant", [], ["one"], value=one),
         helper.make_node("Range", ["zero", "n", "one"], ["r1"], name="range1"),
         helper.make_node("Range", ["n", "zero", "one"], ["r2"], name="range2"),
         helper.make_node("ConstantOfShape", ["s"], ["c1"], name="cos"),
         helper.make_node("Shape", ["x"], ["sh"], name="shape"),
         helper.make_node("ConstantOfShape", ["sh"], ["c2"], name="cos_static"),
         helper.make_node("Floor", ["a"], ["f"], name="floor1")],
        [vi("x", [1, 4]), vi("n", [], i64), vi("s", [2], i64)],
        [vi("r1", None, i64), vi("r2", None, i64), vi("c1", None), vi("c2", [1, 4]),
         vi("f", [1, 4])])
    # com.microsoft QLinearSoftmax as ONNX Runtime writes it (opset 13's
    # single axis; axis 1 of 3 here), and its opset-12 form over a middle axis
    # (coerce to 2-D), which stays unsupported.
    inits = [numpy_helper.from_array(np.asarray(v, dtype=t), n) for n, v, t in (
        ("xs", 0.1, np.float32), ("xz", 128, np.uint8), ("ys", 1 / 256, np.float32),
        ("yz", 0, np.uint8))]
    for key, opset in (("qlinear_softmax", 13), ("qlinear_softmax_opset12", 12)):
        m = model([helper.make_node("QLinearSoftmax", ["x", "xs", "xz", "ys", "yz"], ["y"],
                                    name="qsoftmax", domain="com.microsoft", axis=1,
                                    opset=opset)],
                  [vi("x", [2, 3, 4], TensorProto.UINT8)], [vi("y", [2, 3, 4], TensorProto.UINT8)],
                  inits)
        m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
        out[key] = m
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    os.makedirs(sys.argv[1], exist_ok=True)
    for name, m in cases().items():
        onnx.save(m, os.path.join(sys.argv[1], name + ".onnx"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
