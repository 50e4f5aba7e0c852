#!/usr/bin/python3
"""ONNX models with Baton's post-processing ops, for tests/tools/postprocess_plan_test.cc.

The data is tests/runtime_only/make_postprocess_data.py's "ssd" case (seed 2:
2 images, 48 anchors, 4 classes, top-k 6, D = 12, image 80x100, no ties),
whose reference is torchvision's own BoxCoder.decode_single and
SSD.postprocess_detections (the generator asserts they agree bit for bit).

detect.onnx:      codes [2, 48, 4], scores [2, 48, 4] -> baton::DecodeBoxes
                  (anchors: initializer [48, 4]) -> baton::NonMaxSuppression ->
                  det_boxes, det_scores, det_classes, det_count. No value_info:
                  Baton infers the outputs.
declared.onnx:    the same with value_info and graph outputs typed (agreeing).
bad_anchors.onnx: anchors [47, 4] (one fewer than the codes' anchors).
bad_decl.onnx:    det_scores declared [2, 11] (the op gives [2, 12]).
Inputs codes.npy, scores.npy; references ref_{boxes,scores,classes,count}.npy.

The directory is written once (to a temporary name, then renamed) and kept
while it is newer than this script and the generator it reuses, so the test
processes ctest starts (one per test) generate it once between them.

usage: make_postprocess_cases.py OUT_DIR
"""
import contextlib
import io
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
GENERATOR = os.path.join(HERE, "..", "runtime_only", "make_postprocess_data.py")


def model(case, anchors, declare=None):
    from onnx import TensorProto, helper, numpy_helper
    p = case["p"]
    n, a, c, d = case["n"], case["a"], case["c"], p["d"]
    decode = helper.make_node("DecodeBoxes", ["codes", "anchors"], ["boxes"], name="decode",
                              domain="baton", weights=[float(w) for w in case["weights"]],
                              clip=float(case["clip"]))
    nms = helper.make_node(
        "NonMaxSuppression", ["boxes", "scores"],
        ["det_boxes", "det_scores", "det_classes", "det_count"], name="nms", domain="baton",
        score_thresh=float(p["score_thresh"]), nms_thresh=float(p["nms_thresh"]),
        topk_candidates=int(p["topk"]), detections_per_img=int(d),
        background_class=int(p["background"]), image_size=list(p["image_size"]))
    outs = {"det_boxes": (TensorProto.FLOAT, [n, d, 4]), "det_scores": (TensorProto.FLOAT, [n, d]),
            "det_classes": (TensorProto.INT64, [n, d]), "det_count": (TensorProto.INT32, [n])}
    if declare is None:
        outputs = [helper.make_tensor_value_info(k, TensorProto.UNDEFINED, None) for k in outs]
        value_info = []
    else:
        outs.update(declare)
        outputs = [helper.make_tensor_value_info(k, t, s) for k, (t, s) in outs.items()]
        value_info = [helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [n, a, 4])]
    graph = helper.make_graph(
        [decode, nms], "postprocess",
        [helper.make_tensor_value_info("codes", TensorProto.FLOAT, [n, a, 4]),
         helper.make_tensor_value_info("scores", TensorProto.FLOAT, [n, a, c])],
        outputs, initializer=[numpy_helper.from_array(anchors, "anchors")],
        value_info=value_info)
    return helper.make_model(graph, producer_name="postprocess_plan_test",
                             opset_imports=[helper.make_opsetid("", 13),
                                            helper.make_opsetid("baton", 1)])


def up_to_date(out):
    stamp = os.path.join(out, "ref_count.npy")
    return os.path.exists(stamp) and all(
        os.path.getmtime(stamp) >= os.path.getmtime(src) for src in (__file__, GENERATOR))


def main():
    final = sys.argv[1]
    if up_to_date(final):
        return
    import numpy as np
    import onnx
    from onnx import TensorProto
    sys.dont_write_bytecode = True
    sys.path.insert(0, os.path.dirname(GENERATOR))
    import make_postprocess_data as data
    out = "%s.tmp%d" % (final, os.getpid())
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    with contextlib.redirect_stderr(io.StringIO()):
        case = data.make_case("ssd", 2, n=2, a=48, c=4,
                              p=dict(score_thresh=0.15, nms_thresh=0.5, topk=6, d=12,
                                     background=0, image_size=[80, 100]), big_codes=True)
    anchors = case["anchors"].astype(np.float32)
    n, d = case["n"], case["p"]["d"]
    onnx.save(model(case, anchors), os.path.join(out, "detect.onnx"))
    onnx.save(model(case, anchors, declare={}), os.path.join(out, "declared.onnx"))
    onnx.save(model(case, anchors[:-1]), os.path.join(out, "bad_anchors.onnx"))
    onnx.save(model(case, anchors, declare={"det_scores": (TensorProto.FLOAT, [n, d - 1])}),
              os.path.join(out, "bad_decl.onnx"))
    np.save(os.path.join(out, "codes.npy"), case["codes"].astype(np.float32))
    np.save(os.path.join(out, "scores.npy"), case["scores"].astype(np.float32))
    np.save(os.path.join(out, "ref_boxes.npy"), case["out_boxes"])
    np.save(os.path.join(out, "ref_scores.npy"), case["out_scores"])
    np.save(os.path.join(out, "ref_classes.npy"), case["out_classes"])
    np.save(os.path.join(out, "ref_count.npy"), case["out_count"])
    if up_to_date(final):  # another process was first
        shutil.rmtree(out)
        return
    shutil.rmtree(final, ignore_errors=True)
    try:
        os.rename(out, final)
    except OSError:  # another process renamed its copy in between
        shutil.rmtree(out)


if __name__ == "__main__":
    main()
