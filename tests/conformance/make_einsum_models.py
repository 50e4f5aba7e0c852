#!/usr/bin/python3
"""Writes ONNX Einsum models with numpy.einsum references into OUT_DIR.

Usage: make_einsum_models.py OUT_DIR

Each case OUT_DIR/<name>_opset<N>/ holds model.onnx (one Einsum node whose
operands are graph inputs, opsets 12, 13 and 17), input0.npy, input1.npy (two
operands) and output.npy, numpy.einsum's result in float64 rounded to
float32. OUT_DIR/cases.txt lists the case directories. OUT_DIR/errors/ holds
models Baton must reject, and OUT_DIR/errors.txt lists "<file> <substring the
error must contain>".
"""

import fcntl
import hashlib
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

# (name, equation, operand shapes)
CASES = [
    ("attn_scores", "bhid,bhjd->bhij", [(2, 3, 5, 4), (2, 3, 6, 4)]),
    ("attn_values", "bhij,bhjd->bhid", [(2, 3, 5, 6), (2, 3, 6, 4)]),
    ("batched_matmul", "bij,bjk->bik", [(3, 4, 5), (3, 5, 2)]),
    ("ellipsis_matmul", "...ij,...jk->...ik", [(2, 3, 4, 5), (2, 3, 5, 6)]),
    ("ellipsis_broadcast", "...ij,...jk->...ik", [(2, 1, 4, 5), (3, 5, 6)]),
    ("shared_weight", "bid,jd->bij", [(2, 5, 4), (7, 4)]),
    ("transpose", "ij->ji", [(3, 5)]),
    ("reduce", "bij->bi", [(2, 3, 4)]),
    ("reduce_all", "ij->", [(3, 4)]),
    ("implicit_matmul", "ij,jk", [(3, 4), (4, 5)]),
    ("implicit_transpose", "ba", [(3, 4)]),
    ("implicit_ellipsis", "...ij,...jk", [(2, 3, 4), (2, 4, 5)]),
    ("outer", "i,j->ij", [(4,), (5,)]),
    ("elementwise_broadcast", "bij,j->bij", [(2, 3, 4), (4,)]),
    ("hadamard_transposed", "ij,ji->ij", [(3, 4), (4, 3)]),
    ("dot", "i,i->", [(6,), (6,)]),
    ("sum_then_contract", "bijk,bkl->bil", [(2, 3, 4, 5), (2, 5, 6)]),
    ("summed_only_in_one", "ij,kl->ik", [(3, 4), (5, 6)]),
    ("out_of_order", "bhwc,bhkc->bkhw", [(1, 2, 3, 4), (1, 2, 5, 4)]),
    # maxvit_t's relative-position attention and swin's both look like these:
    ("maxvit_like", "bhnd,bhmd->bhnm", [(1, 2, 16, 8), (1, 2, 16, 8)]),
    ("uppercase", "bIJ,bJK->bIK", [(2, 3, 4), (2, 4, 5)]),
    ("spaces", "b i j , b j k -> b i k", [(2, 3, 4), (2, 4, 5)]),
]

ERRORS = [
    ("diagonal", "ii->i", [(3, 3)], "repeats within term"),
    ("trace", "bii->b", [(2, 3, 3)], "diagonals and traces are not supported"),
    ("three_operands", "ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)], "has 3 operands; Baton supports 1 or 2"),
    ("rank_mismatch", "ijk->i", [(2, 3)], "has 3 labels but its operand has rank 2"),
]


def einsum_model(equation, shapes, opset, node_name="einsum0"):
    inputs = [helper.make_tensor_value_info("x%d" % k, TensorProto.FLOAT, list(s))
              for k, s in enumerate(shapes)]
    node = helper.make_node("Einsum", [i.name for i in inputs], ["y"], equation=equation,
                            name=node_name)
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    graph = helper.make_graph([node], "einsum", inputs, [out])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    return m


def main():
    out_dir = sys.argv[1]
    # The Einsum tests run in parallel (ctest -j), each calling this script:
    # one writes the cases while the others wait on the lock, then find them
    # written by this exact script (the .hash file) and touch nothing.
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        with open(os.path.abspath(__file__), "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        stamp = os.path.join(out_dir, ".hash")
        if os.path.exists(stamp) and open(stamp).read() == digest:
            return
        if os.path.exists(stamp):
            os.remove(stamp)
        write_cases(out_dir)
        with open(stamp, "w") as f:
            f.write(digest)


def write_cases(out_dir):
    os.makedirs(os.path.join(out_dir, "errors"), exist_ok=True)
    rng = np.random.default_rng(14)
    names = []
    for name, equation, shapes in CASES:
        xs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
        y = np.einsum(equation.replace(" ", ""), *[x.astype(np.float64) for x in xs])
        y = np.asarray(y, dtype=np.float32)
        for opset in (12, 13, 17):
            case = "%s_opset%d" % (name, opset)
            d = os.path.join(out_dir, case)
            os.makedirs(d, exist_ok=True)
            onnx.save(einsum_model(equation, shapes, opset), os.path.join(d, "model.onnx"))
            for k, x in enumerate(xs):
                np.save(os.path.join(d, "input%d.npy" % k), x)
            np.save(os.path.join(d, "output.npy"), y)
            names.append(case)
    with open(os.path.join(out_dir, "cases.txt"), "w") as f:
        f.write("\n".join(names) + "\n")
    lines = []
    for name, equation, shapes, message in ERRORS:
        path = os.path.join(out_dir, "errors", name + ".onnx")
        onnx.save(einsum_model(equation, shapes, 13, node_name="bad_" + name), path)
        lines.append("%s %s" % (path, message))
    with open(os.path.join(out_dir, "errors.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
