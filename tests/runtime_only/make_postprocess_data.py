#!/usr/bin/python3
"""Writes postprocess_data.h: inputs and torchvision's outputs for the
baton::DecodeBoxes and baton::NonMaxSuppression tests (postprocess_test.cc).

    /usr/bin/python3 tests/runtime_only/make_postprocess_data.py \
        tests/runtime_only/postprocess_data.h

The header is committed (the runtime-only tests also run in cross builds,
where no Python runs beside them); rerun this after changing a case. Needs
torch and torchvision (tested with torch 1.13, torchvision 0.14).

References, all torchvision's own code:
  - decoded boxes: BoxCoder(weights, clip).decode_single, per image, as SSD.
  - detections: SSD.postprocess_detections itself (the real method on a
    stand-in `self`, F.softmax made the identity so the kernel's softmaxed
    scores go in bit for bit), for the cases it can express (background
    class 0, boxes clipped to the image). Every case also goes through
    `reference`, the same steps on torchvision's primitives (clip_boxes_to_image,
    batched_nms) with the two generalizations the op has (background class,
    optional clipping) and one determinization: per-class top-k by a stable
    sort (ties: lower anchor first) where torch.topk leaves tie order open.
    Where both apply and no scores tie, they must agree bit for bit; the test
    data is `reference`'s.
The generator refuses cases where an IoU between two candidates of a class
lies within 1e-4 of nms_thresh: torchvision's batched_nms shifts each class's
boxes by a class offset before computing IoU, which rounds differently from
the unshifted IoU the kernel computes (docs/operators.md).
"""

import math
import sys
import types

import numpy as np
import torch
import torchvision
from torchvision.models.detection import _utils as det_utils
from torchvision.models.detection import ssd as ssd_module
from torchvision.ops import boxes as box_ops

LOG_CLIP = math.log(1000.0 / 16)


def decode(codes, anchors, weights, clip):
    coder = det_utils.BoxCoder(weights=weights, bbox_xform_clip=clip)
    return torch.stack([coder.decode_single(codes[i], anchors) for i in range(codes.shape[0])])


stats = {"candidates": 0, "suppressed": 0}


def reference(boxes, scores, p):
    """postprocess_detections after decode_single, generalized (see above)."""
    out = []
    num_classes = scores.shape[-1]
    for n in range(boxes.shape[0]):
        b = boxes[n]
        if p["image_size"]:
            b = box_ops.clip_boxes_to_image(b, tuple(p["image_size"]))
        image_boxes, image_scores, image_labels = [], [], []
        for label in range(num_classes):
            if label == p["background"]:
                continue
            score = scores[n, :, label]
            keep = score > p["score_thresh"]
            score = score[keep]
            box = b[keep]
            k = min(p["topk"], score.numel())
            score, idxs = score.sort(descending=True, stable=True)
            score, idxs = score[:k], idxs[:k]
            image_boxes.append(box[idxs])
            image_scores.append(score)
            image_labels.append(torch.full_like(score, label, dtype=torch.int64))
        image_boxes = torch.cat(image_boxes)
        image_scores = torch.cat(image_scores)
        image_labels = torch.cat(image_labels)
        check_margin(image_boxes, image_labels, p["nms_thresh"])
        assert image_boxes.numel() <= 4000, "keep batched_nms on its stable path"
        keep = box_ops.batched_nms(image_boxes, image_scores, image_labels, p["nms_thresh"])
        stats["candidates"] += image_scores.numel()
        stats["suppressed"] += image_scores.numel() - keep.numel()
        keep = keep[: p["d"]]
        out.append((image_boxes[keep], image_scores[keep], image_labels[keep]))
    return out


def torchvision_ssd(codes, anchors, scores, p):
    """The real SSD.postprocess_detections with softmax made the identity."""
    stand_in = types.SimpleNamespace(
        box_coder=det_utils.BoxCoder(weights=(10.0, 10.0, 5.0, 5.0)),
        score_thresh=p["score_thresh"], nms_thresh=p["nms_thresh"],
        detections_per_img=p["d"], topk_candidates=p["topk"])
    softmax = ssd_module.F.softmax
    ssd_module.F.softmax = lambda x, dim: x
    try:
        dets = ssd_module.SSD.postprocess_detections(
            stand_in, {"bbox_regression": codes, "cls_logits": scores},
            [anchors] * codes.shape[0], [tuple(p["image_size"])] * codes.shape[0])
    finally:
        ssd_module.F.softmax = softmax
    return [(d["boxes"], d["scores"], d["labels"]) for d in dets]


def check_margin(boxes, labels, thresh):
    b = boxes.double()
    for i in range(b.shape[0]):
        for j in range(i + 1, b.shape[0]):
            if labels[i] != labels[j]:
                continue
            iou = box_ops.box_iou(b[i:i + 1], b[j:j + 1]).item()
            # NaN (two empty boxes) suppresses nothing, on both sides.
            assert not abs(iou - thresh) <= 1e-4, f"IoU {iou} too close to nms_thresh {thresh}"


def make_case(name, seed, n, a, c, p, ties=False, dead_class=None, big_codes=False):
    g = torch.Generator().manual_seed(seed)
    h, w = p["image_size"] or (96, 128)
    # Anchors over (and past) the image, so decoded boxes cross its edges:
    # every other one scattered, the rest in 5 clusters of similar boxes (so
    # NMS has overlaps on both sides of nms_thresh to judge).
    ctr = torch.rand(a, 2, generator=g) * torch.tensor([w + 20.0, h + 20.0]) - 10.0
    size = torch.rand(a, 2, generator=g) * 50.0 + 8.0
    cluster = torch.arange(a) % 10 // 2
    clustered = torch.arange(a) % 2 == 0
    jitter = torch.randn(a, 4, generator=g)
    ctr[clustered] = ctr[cluster[clustered]] + jitter[clustered, :2] * 3.0
    size[clustered] = size[cluster[clustered]] * (1.0 + 0.1 * jitter[clustered, 2:])
    anchors = torch.cat([ctr - size / 2, ctr + size / 2], dim=1).float()
    codes = torch.randn(n, a, 4, generator=g) * 0.7
    if big_codes:  # past the exp clip
        codes[:, ::5, 2] = 40.0
        codes[:, ::7, 3] = 35.0
    logits = torch.randn(n, a, c, generator=g) * 1.5
    # A cluster is one object: its anchors score high on one class.
    for i in clustered.nonzero().flatten().tolist():
        logits[:, i, 1 + int(cluster[i]) % (c - 1)] += 2.5
    scores = torch.softmax(logits, dim=-1)
    if ties:
        # Equal scores within a class (some at the top-k boundary) and
        # across classes of one anchor.
        for i in range(n):
            for cls in range(1, c):
                col = scores[i, :, cls]
                top = col.argsort(descending=True)
                col[top[p["topk"]]] = col[top[p["topk"] - 1]]
                col[top[3]] = col[top[1]]
                col[top[6]] = col[top[5]]
            scores[i, 5, 2] = scores[i, 5, 1]
            scores[i, 9, :] = scores[i, 9, 1]
    if dead_class is not None:
        scores[:, :, dead_class] = p["score_thresh"]  # not strictly above: no candidate
    weights, clip = p.get("weights", (10.0, 10.0, 5.0, 5.0)), p.get("clip", LOG_CLIP)
    boxes = decode(codes, anchors, weights, clip)
    ref = reference(boxes, scores, p)
    if p["image_size"] and p["background"] == 0 and weights == (10.0, 10.0, 5.0, 5.0) \
            and clip == LOG_CLIP:
        real = torchvision_ssd(codes, anchors, scores, p)
        for (rb, rs, rl), (tb, ts, tl) in zip(ref, real):
            if ties:  # same detections, perhaps in another order among ties
                assert torch.equal(rs.sort().values, ts.sort().values), name
            else:
                assert torch.equal(rb, tb) and torch.equal(rs, ts) and torch.equal(rl, tl), name
        print(f"{name}: torchvision's postprocess_detections agrees", file=sys.stderr)
    d = p["d"]
    out_boxes = np.zeros((n, d, 4), np.float32)
    out_scores = np.zeros((n, d), np.float32)
    out_classes = np.zeros((n, d), np.int64)
    out_count = np.zeros((n,), np.int32)
    for i, (rb, rs, rl) in enumerate(ref):
        k = rs.numel()
        out_boxes[i, :k] = rb.numpy()
        out_scores[i, :k] = rs.numpy()
        out_classes[i, :k] = rl.numpy()
        out_count[i] = k
    print(f"{name}: counts {out_count.tolist()} of D={d}; {stats['candidates']} candidates, "
          f"{stats['suppressed']} suppressed by NMS", file=sys.stderr)
    stats.update(candidates=0, suppressed=0)
    return dict(name=name, n=n, a=a, c=c, p=p, weights=weights, clip=clip,
                codes=codes.numpy(), anchors=anchors.numpy(), decoded=boxes.numpy(),
                scores=scores.numpy(), out_boxes=out_boxes, out_scores=out_scores,
                out_classes=out_classes, out_count=out_count)


def hexfloat(x):
    """A C float literal that reads back as x exactly."""
    if not np.isfinite(x):
        assert not np.isnan(x)
        return "INFINITY" if x > 0 else "-INFINITY"
    mantissa, exponent = float(x).hex().split("p")
    return mantissa.rstrip("0").rstrip(".") + "p" + exponent + "f"


def floats(v):
    return ", ".join(hexfloat(x) for x in np.asarray(v, np.float32).ravel())


def ints(v):
    return ", ".join(str(int(x)) for x in np.asarray(v).ravel())


def emit(cases, path):
    lines = ["// Generated by make_postprocess_data.py (torch " + torch.__version__ +
             ", torchvision " + torchvision.__version__ + "); do not edit.",
             "#pragma once", "", "#include <math.h>", "#include <stdint.h>", "",
             "namespace baton::testing::postprocess_data {", ""]
    for k in cases:
        s = k["name"]
        for field in ("codes", "anchors", "decoded", "scores", "out_boxes", "out_scores"):
            lines.append(f"const float k_{s}_{field}[] = {{{floats(k[field])}}};")
        lines.append(f"const int64_t k_{s}_out_classes[] = {{{ints(k['out_classes'])}}};")
        lines.append(f"const int32_t k_{s}_out_count[] = {{{ints(k['out_count'])}}};")
        lines.append("")
    lines.append("struct Case {")
    lines.append("  const char* name;")
    lines.append("  int64_t n, a, c;")
    lines.append("  float weights[4];")
    lines.append("  float clip;")
    lines.append("  float score_thresh, nms_thresh;")
    lines.append("  int64_t topk, d, background, height, width;  // height = width = 0: no clipping")
    lines.append("  const float *codes, *anchors, *decoded, *scores, *out_boxes, *out_scores;")
    lines.append("  const int64_t* out_classes;")
    lines.append("  const int32_t* out_count;")
    lines.append("};")
    lines.append("")
    lines.append("const Case kCases[] = {")
    for k in cases:
        s, p = k["name"], k["p"]
        hh, ww = p["image_size"] or (0, 0)
        lines.append(
            f'    {{"{s}", {k["n"]}, {k["a"]}, {k["c"]}, {{{floats(k["weights"])}}}, '
            f'{floats([k["clip"]])}, {floats([p["score_thresh"]])}, {floats([p["nms_thresh"]])}, '
            f'{p["topk"]}, {p["d"]}, {p["background"]}, {hh}, {ww}, k_{s}_codes, k_{s}_anchors, '
            f'k_{s}_decoded, k_{s}_scores, k_{s}_out_boxes, k_{s}_out_scores, k_{s}_out_classes, '
            f'k_{s}_out_count}},')
    lines.append("};")
    lines.append("")
    lines.append("}  // namespace baton::testing::postprocess_data")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    torch.set_num_threads(1)
    cases = [
        # SSD's setting on a small problem: ties (also at the top-k boundary
        # and across classes), a class with no score above the threshold,
        # more candidates than D, boxes crossing the image edge.
        make_case("ties", 1, n=2, a=64, c=5,
                  p=dict(score_thresh=0.2, nms_thresh=0.45, topk=10, d=8, background=0,
                         image_size=[96, 128]), ties=True, dead_class=3),
        # No ties: torchvision's own postprocess_detections must agree bit
        # for bit; top-k cuts every class.
        make_case("ssd", 2, n=2, a=48, c=4,
                  p=dict(score_thresh=0.15, nms_thresh=0.5, topk=6, d=12, background=0,
                         image_size=[80, 100]), big_codes=True),
        # No background class, no clipping, other weights and exp clip,
        # fewer detections than D (zero rows), top-k above A, a class whose
        # scores all equal score_thresh (not above it: no candidate).
        make_case("plain", 3, n=1, a=40, c=3,
                  p=dict(score_thresh=0.45, nms_thresh=0.3, topk=400, d=40, background=-1,
                         image_size=None, weights=(1.0, 2.0, 0.5, 4.0), clip=1.5),
                  big_codes=True, dead_class=1),
    ]
    emit(cases, sys.argv[1])


if __name__ == "__main__":
    main()
