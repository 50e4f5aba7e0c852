"""ONNX models whose node lists are not a plannable graph (issue 13): a
cycle, nodes out of topological order, no graph outputs. Kept out of
make_onnx_cases.py, whose cases the plan corpus (tools/plan_corpus.sh) plans.

usage: make_onnx_order_cases.py OUT_DIR
"""
import os
import sys

import onnx
from onnx import TensorProto, helper


def model(nodes, inputs, outputs):
    graph = helper.make_graph(nodes, "case", inputs, outputs)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    return m


def vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


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
