#!/usr/bin/env python3
"""Exports torchvision's ssdlite320_mobilenet_v3_large for Baton's detection example.

The ONNX model is the network up to its raw head outputs (backbone and head:
no GeneralizedRCNNTransform, no torchvision post-processing), a Softmax over
the class logits, and then Baton's two post-processing custom ops
(docs/operators.md, "Post-processing ops"):

  image [1, 3, 320, 320] -> backbone -> head -> bbox_regression [1, A, 4]
                                              -> cls_logits [1, A, 91] -> Softmax -> scores
  baton::DecodeBoxes(bbox_regression, anchors) -> boxes [1, A, 4]
  baton::NonMaxSuppression(boxes, scores) -> det_boxes [1, D, 4], det_scores [1, D],
                                             det_classes [1, D], det_count [1]

The anchors (torchvision's DefaultBoxGenerator for a 320x320 image) are a
constant of the model. The weights are random (no downloads): to keep the
activations from vanishing, the batch norms are re-estimated on random images
and the classification head is scaled so that scores spread out. The reference
is torchvision's own SSD.postprocess_detections on the same head outputs,
written beside the model as .npy files.

Usage: export_ssdlite.py --out DIR [--seed N]
Writes DIR/ssdlite_detect.onnx, DIR/image.npy, DIR/ref_{boxes,scores,labels}.npy.
"""
import argparse
import math
import os

import numpy as np
import onnx
import torch
import torchvision
from onnx import TensorProto, helper, numpy_helper
from torchvision.models.detection.image_list import ImageList

SIZE = 320


class Head(torch.nn.Module):
    """Backbone + head: the raw box regressions and the class scores."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        features = list(self.model.backbone(x).values())
        head = self.model.head(features)
        return head["bbox_regression"], torch.softmax(head["cls_logits"], -1)


def build_model(seed):
    torch.manual_seed(seed)
    model = torchvision.models.detection.ssdlite320_mobilenet_v3_large(
        weights=None, weights_backbone=None, num_classes=91)
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.reset_running_stats()
            m.momentum = None  # cumulative average over the calibration batches
            torch.nn.init.uniform_(m.weight, 0.5, 1.5)
            torch.nn.init.uniform_(m.bias, -0.2, 0.2)
    model.train()
    with torch.no_grad():
        for _ in range(4):
            model.backbone(torch.rand(4, 3, SIZE, SIZE) * 2 - 1)
        for conv in model.head.classification_head.module_list.modules():
            if isinstance(conv, torch.nn.Conv2d):
                conv.weight.mul_(8.0)
    return model.eval()


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(1)

    model = build_model(args.seed)
    head = Head(model)
    gen = torch.Generator().manual_seed(args.seed + 1)
    image = torch.rand(1, 3, SIZE, SIZE, generator=gen) * 2 - 1

    # The reference: torchvision's post-processing of the raw head outputs.
    with torch.no_grad():
        features = list(model.backbone(image).values())
        raw = model.head(features)
        anchors = model.anchor_generator(ImageList(image, [(SIZE, SIZE)]), features)[0]
        detections = model.postprocess_detections(raw, [anchors], [(SIZE, SIZE)])[0]
    np.save(os.path.join(args.out, "image.npy"), image.numpy())
    np.save(os.path.join(args.out, "ref_boxes.npy"), detections["boxes"].numpy())
    np.save(os.path.join(args.out, "ref_scores.npy"), detections["scores"].numpy())
    np.save(os.path.join(args.out, "ref_labels.npy"), detections["labels"].numpy())

    head_path = os.path.join(args.out, "head.onnx")
    torch.onnx.export(head, image, head_path, opset_version=13, input_names=["image"],
                      output_names=["bbox_regression", "scores"])
    proto = onnx.load(head_path)
    graph = proto.graph
    num_anchors = int(anchors.shape[0])
    per_image = int(model.detections_per_img)
    graph.initializer.append(numpy_helper.from_array(anchors.numpy().astype(np.float32), "anchors"))
    graph.node.append(helper.make_node(
        "DecodeBoxes", ["bbox_regression", "anchors"], ["boxes"], name="decode", domain="baton",
        weights=[float(w) for w in model.box_coder.weights],
        clip=float(model.box_coder.bbox_xform_clip)))
    graph.node.append(helper.make_node(
        "NonMaxSuppression", ["boxes", "scores"],
        ["det_boxes", "det_scores", "det_classes", "det_count"], name="nms", domain="baton",
        score_thresh=float(model.score_thresh), nms_thresh=float(model.nms_thresh),
        topk_candidates=int(model.topk_candidates), detections_per_img=per_image,
        background_class=0, image_size=[SIZE, SIZE]))
    del graph.output[:]
    graph.output.extend([
        helper.make_tensor_value_info("det_boxes", TensorProto.FLOAT, [1, per_image, 4]),
        helper.make_tensor_value_info("det_scores", TensorProto.FLOAT, [1, per_image]),
        helper.make_tensor_value_info("det_classes", TensorProto.INT64, [1, per_image]),
        helper.make_tensor_value_info("det_count", TensorProto.INT32, [1]),
    ])
    graph.value_info.append(
        helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [1, num_anchors, 4]))
    proto.opset_import.append(helper.make_opsetid("baton", 1))
    onnx.save(proto, os.path.join(args.out, "ssdlite_detect.onnx"))
    os.remove(head_path)
    print("ssdlite_detect.onnx: %d anchors, %d detections (reference), clip %.6f" %
          (num_anchors, len(detections["scores"]), math.log(1000.0 / 16)))


if __name__ == "__main__":
    main()
