#!/usr/bin/python3
"""ONNX models for the foreign-runtime region tests (regions_test.cc), and
the ONNX Runtime check of the regions the planner serializes.

    region_models.py make OUT_DIR
        writes passthrough.onnx, multi.onnx and cycle.onnx (see below).
    region_models.py check MODEL.onnx REGION.onnx...
        runs MODEL on ONNX Runtime (seeded random inputs, graph optimizations
        off) with every intermediate value exposed as an output; then runs
        each REGION model on the values of its graph inputs taken from that
        run, and compares its outputs with the same-named values of the full
        run. Prints one line per region; exits 0 when all match, 1 when one
        does not, 77 when ONNX Runtime is not installed (the test fails then too,
        saying so).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, shape_inference

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tools"))

OPSET = 13


def conv_w(rng, o, i, k=1, scale=0.5):
    return (rng.standard_normal((o, i, k, k)) * scale).astype(np.float32)


def save(path, nodes, inputs, outputs, inits):
    graph = helper.make_graph(
        nodes, os.path.splitext(os.path.basename(path))[0],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs],
        [numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


def passthrough(out, rng):
    # The seed's A -> B -> C -> D -> E, E reading A, B and D.
    inits = {f"w{i}": conv_w(rng, 4, 4) for i in range(3)}
    nodes = [
        helper.make_node("Conv", ["x", "w0"], ["a"], name="A"),
        helper.make_node("Conv", ["a", "w1"], ["b"], name="B"),
        helper.make_node("Relu", ["b"], ["c"], name="C"),
        helper.make_node("Conv", ["c", "w2"], ["d"], name="D"),
        helper.make_node("Add", ["a", "b"], ["e1"], name="E1"),
        helper.make_node("Add", ["e1", "d"], ["e"], name="E"),
    ]
    save(os.path.join(out, "passthrough.onnx"), nodes, [("x", [1, 4, 8, 8])], [("e", [1, 4, 8, 8])],
         inits)


def multi(out, rng):
    # One region with several inputs (a passthrough value c0, the graph input
    # s) and outputs (r1, m, cat, y), with what the simplifier fuses: Relu and
    # Clip into the Convs, Mul(m, Sigmoid(m)) into Swish. `pre`, `tail1` and
    # `tail2` stay on the CPU.
    inits = {"w0": conv_w(rng, 4, 4), "w1": conv_w(rng, 4, 4, 3, 0.3),
             "b1": rng.standard_normal(4).astype(np.float32),
             "w2": conv_w(rng, 6, 8, 1, 0.5),
             "lo": np.array(0.0, np.float32), "hi": np.array(0.5, np.float32)}
    nodes = [
        helper.make_node("Conv", ["x", "w0"], ["c0"], name="pre"),
        helper.make_node("Conv", ["c0", "w1", "b1"], ["t1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["t1"], ["r1"], name="relu1"),
        helper.make_node("Mul", ["r1", "s"], ["m"], name="mul"),
        helper.make_node("Sigmoid", ["m"], ["g"], name="sig"),
        helper.make_node("Mul", ["m", "g"], ["sw"], name="swish"),
        helper.make_node("Concat", ["sw", "c0"], ["cat"], name="cat", axis=1),
        helper.make_node("Conv", ["cat", "w2"], ["t2"], name="conv2"),
        helper.make_node("Clip", ["t2", "lo", "hi"], ["y"], name="clip2"),
        helper.make_node("Sub", ["r1", "c0"], ["u"], name="tail1"),
        helper.make_node("Neg", ["m"], ["v"], name="tail2"),
    ]
    save(os.path.join(out, "multi.onnx"), nodes, [("x", [1, 4, 6, 6]), ("s", [1, 4, 6, 6])],
         [("y", [1, 6, 6, 6]), ("u", [1, 4, 6, 6]), ("v", [1, 4, 6, 6]), ("cat", [1, 8, 6, 6])],
         inits)


def cycle(out, rng):
    # A (npu) -> B (cpu) -> C (npu) with A -> C too: merging A and C would
    # make a cycle through B. C -> D (npu) merges.
    inits = {"w0": conv_w(rng, 4, 4)}
    nodes = [
        helper.make_node("Conv", ["x", "w0"], ["a"], name="A"),
        helper.make_node("Neg", ["a"], ["b"], name="B"),
        helper.make_node("Add", ["a", "b"], ["c"], name="C"),
        helper.make_node("Sigmoid", ["c"], ["d"], name="D"),
        helper.make_node("Mul", ["d", "a"], ["y"], name="Y"),
    ]
    save(os.path.join(out, "cycle.onnx"), nodes, [("x", [1, 4, 5, 5])], [("y", [1, 4, 5, 5])], inits)


def make(out):
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(16)
    passthrough(out, rng)
    multi(out, rng)
    cycle(out, rng)


def elem_np(elem_type):
    return {TensorProto.FLOAT: np.float32, TensorProto.INT64: np.int64, TensorProto.INT32: np.int32,
            TensorProto.UINT8: np.uint8, TensorProto.INT8: np.int8, TensorProto.BOOL: np.bool_}[elem_type]


def check(model_path, regions):
    from ort_ref import OrtNotInstalled, run_ort
    import tempfile
    model = shape_inference.infer_shapes(onnx.load(model_path))
    known = {o.name for o in model.graph.output}
    for vi in model.graph.value_info:
        if vi.name not in known:
            model.graph.output.append(vi)
            known.add(vi.name)
    rng = np.random.default_rng(1)
    feeds = {}
    for i in model.graph.input:
        shape = [d.dim_value for d in i.type.tensor_type.shape.dim]
        feeds[i.name] = rng.standard_normal(shape).astype(elem_np(i.type.tensor_type.elem_type))
    with tempfile.TemporaryDirectory(prefix="baton-regions-") as tmp:
        full = os.path.join(tmp, "full.onnx")
        onnx.save(model, full)
        try:
            values, _ = run_ort(full, feeds, opt_level="disabled")
        except OrtNotInstalled as e:
            print(e)
            return 77
    values.update(feeds)
    ok = True
    for path in regions:
        region = onnx.load(path)
        onnx.checker.check_model(region)
        ins = {i.name: values[i.name] for i in region.graph.input}
        got, _ = run_ort(path, ins, opt_level="disabled")
        names = [o.name for o in region.graph.output]
        worst = 0.0
        for name in names:
            ref = values[name]
            diff = float(np.max(np.abs(got[name] - ref))) if ref.size else 0.0
            worst = max(worst, diff / (float(np.max(np.abs(ref))) + 1e-6))
        good = worst <= 1e-5 and len(names) > 0
        ok = ok and good
        print(f"{os.path.basename(path)}: inputs {list(ins)} outputs {names} "
              f"nodes {len(region.graph.node)} max rel err {worst:.2e} {'ok' if good else 'MISMATCH'}")
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "make":
        make(sys.argv[2])
    elif len(sys.argv) >= 4 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2], sys.argv[3:]))
    else:
        sys.exit(__doc__)
