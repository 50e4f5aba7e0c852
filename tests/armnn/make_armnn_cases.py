#!/usr/bin/python3
"""ONNX regions for the Arm NN plugin tests (tests/armnn/armnn_plugin_test.cc)
and their reference outputs from ONNX Runtime (tools/ort_ref.py).

    make_armnn_cases.py OUT_DIR

writes OUT_DIR/<case>/model.onnx, meta.txt ("input NAME DIMS..." and
"output NAME DIMS..." lines, in graph order), in_<i>.bin and out_<i>.bin
(raw little-endian float32). Cases:
  conv_relu_pool    Conv(pads, bias) + Relu + MaxPool; initializers listed
                    as graph inputs too (opset 11); out_pre_0.bin is the
                    output for relu(x)
  dw_clip_add       depthwise Conv (dilated) + Clip(0, 6) + Add of a second input
                    (opset 13)
  dw_mult_avgpool   depthwise Conv with multiplier 2, stride 2, SAME_UPPER +
                    AveragePool(count_include_pad) (opset 13)
  gemm_softmax      Gemm(transB, alpha, beta) + Softmax(axis 1) (opset 11);
                    a symbolic batch dimension
  concat_outputs    Concat of two inputs' activations; an intermediate is
                    also a region output, outputs in another order (opset 13)
  mul_gap_reshape   Mul with broadcasting (constant [C,1,1] and an input
                    [1,C,1,1]), Sigmoid, GlobalAveragePool, Flatten, MatMul,
                    LeakyRelu, Tanh, Reshape, Sub, Div (opset 12)
  pool_softmax      AveragePool(pads, count_include_pad 0), Softmax(axis 1 of
                    4-D, opset 11), GlobalMaxPool, Conv(SAME_LOWER, stride),
                    Identity; three outputs
  bn_hardswish      BatchNormalization (inference) + HardSwish (opset 14)
  torch_mobile      a MobileNet-like block from torch.onnx.export (opset 13)
  unsupported       Conv + Erf (named erf1): the plugin must refuse it
  unsupported_group         Conv with group 2 of 4 channels (refused)
  unsupported_softmax_axis  opset-13 Softmax over axis 1 of 4-D (refused)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
from ort_ref import run_ort  # noqa: E402

rng = np.random.default_rng(16)


def f32(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def init(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def model(nodes, inputs, outputs, inits, opset, inits_as_inputs=False):
    graph_inputs = [vi(n, s) for n, s in inputs]
    if inits_as_inputs:
        graph_inputs += [helper.make_tensor_value_info(
            t.name, t.data_type, list(t.dims)) for t in inits]
    g = helper.make_graph(nodes, "region", graph_inputs, [vi(n, s) for n, s in outputs], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    onnx.checker.check_model(m)
    return m


def torch_model():
    """A MobileNet-like block as torch.onnx.export writes it (Constant nodes,
    Clip with min/max inputs, Flatten, Gemm): conv, ReLU6, depthwise conv,
    global average pool, linear, softmax."""
    import io

    import torch

    torch.manual_seed(16)
    net = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU6(),
        torch.nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=8), torch.nn.Hardtanh(-1.0, 2.0),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(8, 5),
        torch.nn.Softmax(dim=1)).eval()
    buf = io.BytesIO()
    torch.onnx.export(net, torch.zeros(1, 3, 8, 8), buf, input_names=["x"], output_names=["y"],
                      opset_version=13)
    return onnx.load_from_string(buf.getvalue())


def cases():
    out = {}
    # (a)
    out["conv_relu_pool"] = (model(
        [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["r"], name="relu"),
         helper.make_node("MaxPool", ["r"], ["y"], name="pool", kernel_shape=[2, 2], strides=[2, 2])],
        [("x", [1, 3, 8, 8])], [("y", [1, 4, 4, 4])],
        [init("w", f32(4, 3, 3, 3, scale=0.3)), init("b", f32(4))], 11, inits_as_inputs=True),
        {"x": f32(1, 3, 8, 8)})
    # (b)
    out["dw_clip_add"] = (model(
        [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="dw", group=4, pads=[2, 2, 2, 2],
                          dilations=[2, 2]),
         helper.make_node("Clip", ["c", "lo", "hi"], ["k"], name="clip"),
         helper.make_node("Add", ["k", "z"], ["y"], name="add")],
        [("x", [1, 4, 8, 8]), ("z", [1, 4, 8, 8])], [("y", [1, 4, 8, 8])],
        [init("w", f32(4, 1, 3, 3)), init("b", f32(4)),
         init("lo", np.float32(0)), init("hi", np.float32(6))], 13),
        {"x": f32(1, 4, 8, 8, scale=3), "z": f32(1, 4, 8, 8)})
    out["dw_mult_avgpool"] = (model(
        [helper.make_node("Conv", ["x", "w"], ["c"], name="dw2", group=2, strides=[2, 2],
                          auto_pad="SAME_UPPER"),
         helper.make_node("AveragePool", ["c"], ["y"], name="avg", kernel_shape=[3, 3],
                          pads=[1, 1, 1, 1], count_include_pad=1)],
        [("x", [1, 2, 7, 7])], [("y", [1, 4, 4, 4])],
        [init("w", f32(4, 1, 3, 3))], 13),
        {"x": f32(1, 2, 7, 7)})
    # (c)
    out["gemm_softmax"] = (model(
        [helper.make_node("Gemm", ["x", "w", "b"], ["g"], name="fc", transB=1, alpha=0.5, beta=2.0),
         helper.make_node("Softmax", ["g"], ["y"], name="softmax", axis=1)],
        [("x", ["batch", 16])], [("y", ["batch", 10])],
        [init("w", f32(10, 16)), init("b", f32(10))], 11),
        {"x": f32(2, 16)})
    # (d)
    out["concat_outputs"] = (model(
        [helper.make_node("Relu", ["x"], ["a"], name="relu"),
         helper.make_node("Sigmoid", ["z"], ["s"], name="sig"),
         helper.make_node("Concat", ["a", "s"], ["c"], name="concat", axis=-3),
         helper.make_node("MaxPool", ["c"], ["y"], name="pool", kernel_shape=[3, 3],
                          strides=[2, 2], ceil_mode=1)],
        [("x", [1, 2, 6, 6]), ("z", [1, 3, 6, 6])], [("y", [1, 5, 3, 3]), ("a", [1, 2, 6, 6])],
        [], 13),
        {"x": f32(1, 2, 6, 6), "z": f32(1, 3, 6, 6)})
    # (e)
    out["mul_gap_reshape"] = (model(
        [helper.make_node("Mul", ["x", "scale"], ["m"], name="mul_const"),
         helper.make_node("Mul", ["m", "gate"], ["m2"], name="mul_input"),
         helper.make_node("Sigmoid", ["m2"], ["s"], name="sig"),
         helper.make_node("GlobalAveragePool", ["s"], ["p"], name="gap"),
         helper.make_node("Flatten", ["p"], ["f"], name="flat"),
         helper.make_node("MatMul", ["f", "w"], ["mm"], name="matmul"),
         helper.make_node("LeakyRelu", ["mm"], ["l"], name="leaky", alpha=0.2),
         helper.make_node("Tanh", ["l"], ["t"], name="tanh"),
         helper.make_node("Sub", ["t", "off"], ["u"], name="sub"),
         helper.make_node("Div", ["u", "den"], ["d"], name="div"),
         helper.make_node("Reshape", ["d", "shape"], ["y"], name="reshape")],
        [("x", [1, 4, 5, 5]), ("gate", [1, 4, 1, 1])], [("y", [2, 3])],
        [init("scale", f32(4, 1, 1)), init("w", f32(4, 6)), init("off", f32(6)),
         init("den", np.float32(1.5)), init("shape", np.array([2, -1], dtype=np.int64))], 12),
        {"x": f32(1, 4, 5, 5), "gate": f32(1, 4, 1, 1)})
    out["pool_softmax"] = (model(
        [helper.make_node("AveragePool", ["x"], ["a"], name="avg", kernel_shape=[3, 3],
                          strides=[2, 2], pads=[1, 1, 1, 1]),
         helper.make_node("Softmax", ["a"], ["y"], name="softmax", axis=1),
         helper.make_node("GlobalMaxPool", ["a"], ["g"], name="gmp"),
         helper.make_node("Conv", ["x", "w"], ["c"], name="conv_same", auto_pad="SAME_LOWER",
                          strides=[2, 2]),
         helper.make_node("Identity", ["c"], ["i"], name="ident")],
        [("x", [1, 2, 7, 7])], [("y", [1, 2, 4, 4]), ("g", [1, 2, 1, 1]), ("i", [1, 3, 4, 4])],
        [init("w", f32(3, 2, 3, 3))], 11),
        {"x": f32(1, 2, 7, 7)})
    out["bn_hardswish"] = (model(
        [helper.make_node("BatchNormalization", ["x", "s", "b", "mean", "var"], ["n"], name="bn",
                          epsilon=1e-3),
         helper.make_node("HardSwish", ["n"], ["y"], name="hswish")],
        [("x", [1, 3, 5, 5])], [("y", [1, 3, 5, 5])],
        [init("s", f32(3)), init("b", f32(3)), init("mean", f32(3)),
         init("var", np.abs(f32(3)) + 0.5)], 14),
        {"x": f32(1, 3, 5, 5, scale=3)})
    out["torch_mobile"] = (torch_model(), None)
    out["unsupported"] = (model(
        [helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
         helper.make_node("Erf", ["c"], ["y"], name="erf1")],
        [("x", [1, 1, 4, 4])], [("y", [1, 1, 2, 2])], [init("w", f32(1, 1, 3, 3))], 13),
        {"x": f32(1, 1, 4, 4)})
    out["unsupported_group"] = (model(
        [helper.make_node("Conv", ["x", "w"], ["y"], name="grouped", group=2)],
        [("x", [1, 4, 4, 4])], [("y", [1, 4, 2, 2])], [init("w", f32(4, 2, 3, 3))], 13),
        {"x": f32(1, 4, 4, 4)})
    out["unsupported_softmax_axis"] = (model(
        [helper.make_node("Softmax", ["x"], ["y"], name="sm_axis1", axis=1)],
        [("x", [1, 4, 2, 2])], [("y", [1, 4, 2, 2])], [], 13),
        {"x": f32(1, 4, 2, 2)})
    return out


def main():
    root = sys.argv[1]
    all_cases = cases()
    for name, (m, feeds) in all_cases.items():
        if feeds is None:  # torch_mobile: one input x
            feeds = {"x": f32(1, 3, 8, 8)}
        d = os.path.join(root, name)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "model.onnx")
        onnx.save(m, path)
        lines = []
        inits = {t.name for t in m.graph.initializer}
        k = 0
        for i in m.graph.input:
            if i.name in inits:
                continue
            feeds[i.name].tofile(os.path.join(d, f"in_{k}.bin"))
            lines.append("input %s %s" % (i.name, " ".join(str(v) for v in feeds[i.name].shape)))
            k += 1
        if name.startswith("unsupported"):  # no reference: prepare must refuse them
            results = [np.zeros([d.dim_value for d in o.type.tensor_type.shape.dim], np.float32)
                       for o in m.graph.output]
        else:
            outputs, _ = run_ort(path, feeds)
            results = list(outputs.values())
        for k, (o, r) in enumerate(zip(m.graph.output, results)):
            r = np.ascontiguousarray(r, dtype=np.float32)
            r.tofile(os.path.join(d, f"out_{k}.bin"))
            lines.append("output %s %s" % (o.name, " ".join(str(v) for v in r.shape)))
        if name == "conv_relu_pool":  # the region behind a cpu-queue Relu
            pre, _ = run_ort(path, {"x": np.maximum(feeds["x"], 0)})
            list(pre.values())[0].astype(np.float32).tofile(os.path.join(d, "out_pre_0.bin"))
        with open(os.path.join(d, "meta.txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
    print(f"wrote {len(all_cases)} cases to {root}")


if __name__ == "__main__":
    main()
