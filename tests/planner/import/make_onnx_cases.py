#!/usr/bin/python3
"""Writes tiny ONNX models for the importer's tests into OUT_DIR.

Usage: make_onnx_cases.py OUT_DIR

Each case is a file named after what it exercises; import_onnx_test.cc
documents the expected outcome of each.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(nodes, inputs, outputs, initializers=(), opset=13, name="case", value_info=()):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(initializers),
                              value_info=list(value_info))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    return m


def vi(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def f32(name, array):
    return numpy_helper.from_array(np.asarray(array, dtype=np.float32), name)


def i64(name, array):
    return numpy_helper.from_array(np.asarray(array, dtype=np.int64), name)


def cases():
    out = {}

    # Valid: unnamed nodes, initializers in typed fields (not raw_data), a
    # Constant with a tensor value, a Constant with value_ints, Identity to
    # the graph output, and an initializer that is also listed as an input.
    w = helper.make_tensor("w", TensorProto.FLOAT, [4, 3], [0.5] * 12)  # float_data
    b = helper.make_tensor("b", TensorProto.FLOAT, [4], [1.0, 2.0, 3.0, 4.0])
    shape_c = helper.make_node(
        "Constant", [], ["shape"], value=helper.make_tensor("v", TensorProto.INT64, [2], [2, 2]))
    scale_c = helper.make_node("Constant", [], ["scale"], value_ints=[1])
    nodes = [
        helper.make_node("Gemm", ["x", "w", "b"], ["g"], transB=1),
        helper.make_node("Relu", ["g"], ["r"]),
        shape_c,
        helper.make_node("Reshape", ["r", "shape"], ["s"], name="reshape"),
        scale_c,
        helper.make_node("Identity", ["s"], ["y"]),
    ]
    out["valid_small"] = model(nodes, [vi("x", [1, 3]), vi("w", [4, 3])], [vi("y", [2, 2])],
                               [w, b])

    # Unnamed nodes whose generated names would clash with an explicit one.
    nodes = [
        helper.make_node("Relu", ["x"], ["a"]),
        helper.make_node("Sigmoid", ["a"], ["b"], name="Relu_0"),
        helper.make_node("Tanh", ["b"], ["y"]),
    ]
    out["unnamed_nodes"] = model(nodes, [vi("x", [1, 4])], [vi("y", [1, 4])])

    # Errors.
    out["unsupported_op"] = model(
        [helper.make_node("Det", ["x"], ["y"], name="det1")], [vi("x", [1, 4])],
        [vi("y", [1, 4])])
    foo = helper.make_node("Foo", ["x"], ["y"], domain="com.example")
    m = model([foo], [vi("x", [1, 4])], [vi("y", [1, 4])])
    m.opset_import.append(helper.make_opsetid("com.example", 1))
    out["custom_domain"] = m

    # Issue 14: several missing ops, reported together.
    nodes = [
        helper.make_node("Hardmax", ["x"], ["a"], name="hardmax_a"),
        helper.make_node("RNN", ["a", "w", "r"], ["b"], name="rnn", hidden_size=4),
        helper.make_node("Foo", ["b"], ["c"], name="foo", domain="com.example"),
        helper.make_node("Hardmax", ["c"], ["y"], name="hardmax_b"),
    ]
    m = model(nodes, [vi("x", [1, 1, 4])], [vi("y", [1, 1, 4])],
              [f32("w", np.ones((1, 4, 4))), f32("r", np.ones((1, 4, 4)))])
    m.opset_import.append(helper.make_opsetid("com.example", 1))
    out["many_unsupported"] = m
    # Recurrent nodes (also fuzz_onnx seeds): an LSTM whose Y is omitted
    # (only Y_h is read) with its activations given as a STRINGS attribute,
    # and a bidirectional GRU.
    lstm = helper.make_node("LSTM", ["x", "w", "r"], ["", "y"], name="lstm", hidden_size=2,
                            activations=["Sigmoid", "Tanh", "Tanh"])
    out["rnn_lstm"] = model([lstm], [vi("x", [3, 1, 4])], [vi("y", [1, 1, 2])],
                            [f32("w", np.full((1, 8, 4), 0.1)), f32("r", np.full((1, 8, 2), 0.2))])
    gru = helper.make_node("GRU", ["x", "w", "r"], ["y"], name="gru", hidden_size=2,
                           direction="bidirectional", linear_before_reset=1)
    out["rnn_gru"] = model([gru], [vi("x", [3, 1, 4])], [vi("y", [3, 2, 1, 2])],
                           [f32("w", np.full((2, 6, 4), 0.1)), f32("r", np.full((2, 6, 2), 0.2))])
    # Operator-form quantized nodes (issue 15), lowered to QDQ by the importer:
    # QLinearConv with a per-channel weight and an int32 bias, QLinearMatMul,
    # com.microsoft QLinearAdd and QLinearGlobalAveragePool; and a
    # channels-last QLinearGlobalAveragePool, which stays unsupported.
    def q(name, value, dtype):
        return numpy_helper.from_array(np.asarray(value, dtype=dtype), name)
    qinits = [q("xs", 0.03, np.float32), q("xz", 120, np.uint8),
              q("w", np.arange(2 * 3 * 9).reshape(2, 3, 3, 3) % 7 - 3, np.int8),
              q("ws", [0.01, 0.02], np.float32), q("wz", [0, 0], np.int8),
              q("b", [5, -9], np.int32), q("ys", 0.05, np.float32), q("yz", 100, np.uint8),
              q("m", np.eye(4), np.int8), q("ms", 0.5, np.float32), q("mz", 0, np.int8),
              q("gs", 0.04, np.float32), q("gz", 110, np.uint8)]
    qnodes = [
        helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["c"],
                         name="qconv", pads=[1, 1, 1, 1]),
        helper.make_node("QLinearMatMul", ["c", "ys", "yz", "m", "ms", "mz", "ys", "yz"], ["mm"],
                         name="qmm"),
        helper.make_node("QLinearAdd", ["mm", "ys", "yz", "c", "ys", "yz", "ys", "yz"], ["a"],
                         name="qadd", domain="com.microsoft"),
        helper.make_node("QLinearGlobalAveragePool", ["a", "ys", "yz", "gs", "gz"], ["y"],
                         name="qgap", domain="com.microsoft")]
    m = model(qnodes, [vi("x", [1, 3, 4, 4], TensorProto.UINT8)],
              [vi("y", [1, 2, 1, 1], TensorProto.UINT8)], qinits)
    m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    out["qlinear_ops"] = m
    last = helper.make_node("QLinearGlobalAveragePool", ["a", "ys", "yz", "gs", "gz"], ["y"],
                            name="qgap_nhwc", domain="com.microsoft", channels_last=1)
    m = model(qnodes[:3] + [last], [vi("x", [1, 3, 4, 4], TensorProto.UINT8)],
              [vi("y", [1, 1, 1, 4], TensorProto.UINT8)], qinits)
    m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    out["qlinear_channels_last"] = m
    # A fold-only op whose input is a graph input.
    out["constant_of_shape_dynamic"] = model(
        [helper.make_node("ConstantOfShape", ["s"], ["y"], name="cos",
                          value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0]))],
        [vi("s", [2], TensorProto.INT64)], [vi("y", [2, 2])])

    ext = f32("w", np.ones((2, 2)))
    ext.ClearField("raw_data")
    ext.data_location = TensorProto.EXTERNAL
    entry = ext.external_data.add()
    entry.key = "location"
    entry.value = "w.bin"
    out["external_data"] = model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x", [2, 2])],
                                 [vi("y", [2, 2])], [ext])

    relu = [helper.make_node("Relu", ["x"], ["y"])]
    out["opset_9"] = model(relu, [vi("x", [1, 4])], [vi("y", [1, 4])], opset=9)
    out["opset_8"] = model(relu, [vi("x", [1, 4])], [vi("y", [1, 4])], opset=8)
    out["opset_18"] = model(relu, [vi("x", [1, 4])], [vi("y", [1, 4])], opset=18)
    out["opset_11"] = model(relu, [vi("x", [1, 4])], [vi("y", [1, 4])], opset=11)
    out["opset_17"] = model(relu, [vi("x", [1, 4])], [vi("y", [1, 4])], opset=17)

    out["dynamic_input"] = model(relu, [vi("x", ["batch", 4])], [vi("y", ["batch", 4])])

    d = numpy_helper.from_array(np.ones((1, 4), dtype=np.float64), "d")
    out["double_initializer"] = model([helper.make_node("Add", ["x", "d"], ["y"])],
                                      [vi("x", [1, 4])], [vi("y", [1, 4])], [d])

    out["shape_mismatch"] = model([helper.make_node("Add", ["x", "z"], ["y"], name="add1")],
                                  [vi("x", [1, 3]), vi("z", [1, 4])], [vi("y", None)])

    out["dangling_input"] = model([helper.make_node("Relu", ["nowhere"], ["y"], name="r")],
                                  [vi("x", [1, 4])], [vi("y", [1, 4])])

    out["dynamic_reshape"] = model(
        [helper.make_node("Reshape", ["x", "s"], ["y"], name="r")],
        [vi("x", [2, 6]), vi("s", [2], TensorProto.INT64)], [vi("y", None)])

    # Softmax before opset 13 flattens from `axis` on.
    sm = [helper.make_node("Softmax", ["x"], ["y"], name="sm")]
    out["softmax_opset11_ok"] = model(sm, [vi("x", [2, 5, 1])], [vi("y", [2, 5, 1])], opset=11)
    out["softmax_opset11_bad"] = model(sm, [vi("x", [2, 3, 4])], [vi("y", [2, 3, 4])], opset=11)

    # Shape arithmetic as exported without constant folding.
    nodes = [
        helper.make_node("Shape", ["x"], ["sh"]),
        helper.make_node("Constant", [], ["i0"], value=helper.make_tensor("c", TensorProto.INT64,
                                                                          [], [0])),
        helper.make_node("Gather", ["sh", "i0"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["n", "axes"], ["n1"]),
        helper.make_node("Concat", ["n1", "m1"], ["s"], axis=0),
        helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape"),
    ]
    out["shape_chain"] = model(nodes, [vi("x", [2, 3, 4])], [vi("y", [2, 12])],
                               [i64("axes", [0]), i64("m1", [-1])])

    # ceil_mode pool whose last window would start in the end padding: ONNX
    # 1.12 (and torch's export) declare [1,3,4,4], torch computes [1,3,3,3].
    pool = [helper.make_node("MaxPool", ["x"], ["y"], name="pool", kernel_shape=[2, 2],
                             strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1)]
    out["ceil_pool"] = model(pool, [vi("x", [1, 3, 5, 5])], [vi("y", [1, 3, 4, 4])])
    # The same as a newer exporter (ONNX >= 1.16 rules) writes it.
    out["ceil_pool_new"] = model(pool, [vi("x", [1, 3, 5, 5])], [vi("y", [1, 3, 3, 3])])

    # A declared shape that is wrong for other reasons is an error.
    out["wrong_declared_shape"] = model(relu, [vi("x", [1, 4])], [vi("y", [1, 5])])
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    for name, m in cases().items():
        onnx.save(m, os.path.join(out_dir, name + ".onnx"))
    with open(os.path.join(out_dir, "not_onnx.onnx"), "wb") as f:
        f.write(b"\x93NUMPY this is not a protobuf\xff\xff\xff")
    return 0


if __name__ == "__main__":
    sys.exit(main())
