#pragma once
// Ready-made post-processing ops for detection models: SSD box decoding and
// per-class non-maximum suppression with static maxima, as custom ops
// ("domain::op", schema CustomParams) run on the CPU. Library
// baton_postprocess (links baton_custom); docs/operators.md "Post-processing
// ops" is the user-facing contract.
//
//   "baton::DecodeBoxes"        rel_codes [N, A, 4], anchors [A, 4]
//                               -> boxes [N, A, 4]
//     torchvision's BoxCoder.decode_single: attributes weights (Floats, 4;
//     default SSD's 10, 10, 5, 5) and clip (Float; default log(1000 / 16)).
//   "baton::NonMaxSuppression"  boxes [N, A, 4], scores [N, A, C]
//                               -> boxes [N, D, 4] float32, scores [N, D]
//                                  float32, classes [N, D] int64,
//                                  count [N] int32
//     torchvision SSD's postprocess_detections after the decoding (clip to the
//     image, per class: score > score_thresh, top topk_candidates; batched
//     NMS; first detections_per_img = D). Attributes score_thresh,
//     nms_thresh (Float), topk_candidates, detections_per_img (Int) are
//     required; background_class (Int, default 0; -1 for none) and
//     image_size (Ints [H, W]; absent: no clipping) are optional. Rows past
//     count are zero (TFLite's detection post-process convention).
//
// Usage (an application or port):
//   BATON_RETURN_IF_ERROR(RegisterReferenceKernels(&registry));
//   BATON_RETURN_IF_ERROR(RegisterPostprocessKernels(&registry));
// The planner sizes the NonMaxSuppression workspace with
// PostprocessWorkspaceBytes and knows the output shapes from
// InferDecodeBoxes / InferNonMaxSuppression (the same rules the kernels'
// prepare applies). No heap, no exceptions; kernels are reentrant.

#include <stddef.h>
#include <stdint.h>

#include "baton/config.h"
#include "baton/kernels.h"
#include "baton/status.h"

namespace baton {

inline constexpr char kDecodeBoxesOp[] = "baton::DecodeBoxes";
inline constexpr char kNonMaxSuppressionOp[] = "baton::NonMaxSuppression";

// Registers both ops on DeviceKind::Cpu (KernelRegistry::RegisterCustom: two
// of its kMaxCustomKernels entries). ResourceExhausted when the table is full.
Status RegisterPostprocessKernels(KernelRegistry* registry);

// Workspace bytes the node's kernel needs (TensorArg::data unused): 0 for
// DecodeBoxes and for nodes that are not post-processing ops or whose
// attributes or shapes are invalid (prepare reports those); for
// NonMaxSuppression (C' * K) * 8 + C' * 4 bytes, K = min(topk_candidates,
// A), C' = classes other than the background. The planner plans it as the
// node's single workspace tensor, at least 4-byte aligned.
size_t PostprocessWorkspaceBytes(const KernelCall& call);

// ---------------------------------------------------------------------------
// The shape rules, shared by the kernels' prepare and the planner. Each
// returns null when the inputs and attributes are valid (and fills the
// outputs), or a static message naming the op and what is wrong.

struct PostprocessTensorSpec {
  DType dtype = DType::Float32;
  uint32_t rank = 0;
  int64_t dims[kMaxRank] = {};
};

struct DecodeBoxesAttrs {
  float weights[4] = {10.0f, 10.0f, 5.0f, 5.0f};  // wx, wy, ww, wh
  float clip = 4.135166556742356f;                // log(1000 / 16)
};

struct NonMaxSuppressionAttrs {
  float score_thresh = 0.0f;       // a candidate needs score > score_thresh
  float nms_thresh = 0.0f;         // IoU > nms_thresh suppresses
  int64_t topk_candidates = 0;     // per class, before NMS; >= 1
  int64_t detections_per_img = 0;  // D, the static maximum; >= 1
  int64_t background_class = 0;    // skipped class; -1: none
  int64_t image_height = 0;        // both > 0: clip boxes to [0, W] x [0, H]
  int64_t image_width = 0;         // both 0: no clipping
};

// inputs: rel_codes, anchors. out: 1 spec.
const char* InferDecodeBoxes(const DecodeBoxesAttrs& attrs, const PostprocessTensorSpec* inputs,
                             uint32_t num_inputs, PostprocessTensorSpec* out);

// inputs: boxes, scores. out: 4 specs (boxes, scores, classes, count);
// out_workspace_bytes: what PostprocessWorkspaceBytes reports.
const char* InferNonMaxSuppression(const NonMaxSuppressionAttrs& attrs,
                                   const PostprocessTensorSpec* inputs, uint32_t num_inputs,
                                   PostprocessTensorSpec* out, size_t* out_workspace_bytes);

}  // namespace baton
