// The shape rules of the post-processing ops (baton/postprocess.h), shared by
// the kernels' prepare and the planner, so both sides agree on the output
// shapes and the workspace by construction.

#include <stdint.h>

#include "baton/postprocess.h"

namespace baton {
namespace {

// Dims the kernels index with 32-bit arithmetic (Cortex-M) stay below this.
constexpr int64_t kMaxDim = INT32_MAX;

bool IsNan(float v) { return v != v; }

bool IsFinite(float v) { return !IsNan(v) && v - v == 0.0f; }

PostprocessTensorSpec Spec(DType dtype, uint32_t rank, const int64_t* dims) {
  PostprocessTensorSpec s;
  s.dtype = dtype;
  s.rank = rank;
  for (uint32_t d = 0; d < rank; ++d) s.dims[d] = dims[d];
  return s;
}

bool DimsInRange(const PostprocessTensorSpec& s) {
  for (uint32_t d = 0; d < s.rank; ++d) {
    if (s.dims[d] < 0 || s.dims[d] > kMaxDim) return false;
  }
  return true;
}

}  // namespace

const char* InferDecodeBoxes(const DecodeBoxesAttrs& attrs, const PostprocessTensorSpec* inputs,
                             uint32_t num_inputs, PostprocessTensorSpec* out) {
  if (num_inputs != 2) return BATON_MSG("baton::DecodeBoxes takes rel_codes and anchors");
  const PostprocessTensorSpec& codes = inputs[0];
  const PostprocessTensorSpec& anchors = inputs[1];
  if (codes.dtype != DType::Float32 || anchors.dtype != DType::Float32) {
    return BATON_MSG("baton::DecodeBoxes: rel_codes and anchors must be float32");
  }
  if (codes.rank != 3 || codes.dims[2] != 4 || !DimsInRange(codes)) {
    return BATON_MSG("baton::DecodeBoxes: rel_codes must be [N, A, 4]");
  }
  // [A, 4] shared by the batch, or [1, A, 4], or [N, A, 4] per image.
  const bool shared = anchors.rank == 2 || (anchors.rank == 3 && anchors.dims[0] == 1);
  const bool per_image = anchors.rank == 3 && anchors.dims[0] == codes.dims[0];
  if ((!shared && !per_image) || anchors.dims[anchors.rank - 2] != codes.dims[1] ||
      anchors.dims[anchors.rank - 1] != 4) {
    return BATON_MSG(
        "baton::DecodeBoxes: anchors must be [A, 4] (or [1 or N, A, 4]) "
        "with rel_codes' A");
  }
  for (float w : attrs.weights) {
    if (!IsFinite(w) || w == 0.0f) {
      return BATON_MSG("baton::DecodeBoxes: weights must be 4 finite non-zero values");
    }
  }
  if (IsNan(attrs.clip)) return BATON_MSG("baton::DecodeBoxes: clip is NaN");
  *out = Spec(DType::Float32, 3, codes.dims);
  return nullptr;
}

const char* InferNonMaxSuppression(const NonMaxSuppressionAttrs& attrs,
                                   const PostprocessTensorSpec* inputs, uint32_t num_inputs,
                                   PostprocessTensorSpec* out, size_t* out_workspace_bytes) {
  if (num_inputs != 2) return BATON_MSG("baton::NonMaxSuppression takes boxes and scores");
  const PostprocessTensorSpec& boxes = inputs[0];
  const PostprocessTensorSpec& scores = inputs[1];
  if (boxes.dtype != DType::Float32 || scores.dtype != DType::Float32) {
    return BATON_MSG("baton::NonMaxSuppression: boxes and scores must be float32");
  }
  if (boxes.rank != 3 || boxes.dims[2] != 4 || !DimsInRange(boxes)) {
    return BATON_MSG("baton::NonMaxSuppression: boxes must be [N, A, 4]");
  }
  if (scores.rank != 3 || scores.dims[0] != boxes.dims[0] || scores.dims[1] != boxes.dims[1] ||
      scores.dims[2] < 1 || !DimsInRange(scores)) {
    return BATON_MSG("baton::NonMaxSuppression: scores must be [N, A, C] with boxes' N and A");
  }
  const int64_t n = boxes.dims[0], a = boxes.dims[1], c = scores.dims[2];
  if (IsNan(attrs.score_thresh) || IsNan(attrs.nms_thresh)) {
    return BATON_MSG("baton::NonMaxSuppression: score_thresh and nms_thresh must not be NaN");
  }
  if (attrs.topk_candidates < 1) {
    return BATON_MSG("baton::NonMaxSuppression: topk_candidates must be >= 1");
  }
  if (attrs.detections_per_img < 1 || attrs.detections_per_img > kMaxDim) {
    return BATON_MSG("baton::NonMaxSuppression: detections_per_img must be in [1, 2^31)");
  }
  if (attrs.background_class < -1 || attrs.background_class >= c) {
    return BATON_MSG("baton::NonMaxSuppression: background_class must be -1 or a class of scores");
  }
  const bool clip = attrs.image_height != 0 || attrs.image_width != 0;
  if (clip && (attrs.image_height < 1 || attrs.image_width < 1 ||
               attrs.image_height > (int64_t{1} << 24) || attrs.image_width > (int64_t{1} << 24))) {
    return BATON_MSG("baton::NonMaxSuppression: image_size must be two ints [H, W] in [1, 2^24]");
  }
  // Candidates are keyed class * A + anchor in 32 bits.
  if (c * a > int64_t{UINT32_MAX}) {
    return BATON_MSG("baton::NonMaxSuppression: classes x anchors exceeds 2^32");
  }
  const int64_t classes = attrs.background_class >= 0 ? c - 1 : c;
  const int64_t k = attrs.topk_candidates < a ? attrs.topk_candidates : a;
  // Candidate {score, key} pairs, then one count per class.
  const uint64_t bytes =
      static_cast<uint64_t>(classes * k) * 8u + static_cast<uint64_t>(classes) * 4u;
  if (bytes > uint64_t{INT32_MAX}) {
    return BATON_MSG("baton::NonMaxSuppression: workspace exceeds 2^31 bytes");
  }
  const int64_t d = attrs.detections_per_img;
  const int64_t box_dims[3] = {n, d, 4};
  out[0] = Spec(DType::Float32, 3, box_dims);
  out[1] = Spec(DType::Float32, 2, box_dims);
  out[2] = Spec(DType::Int64, 2, box_dims);
  out[3] = Spec(DType::Int32, 1, box_dims);
  *out_workspace_bytes = static_cast<size_t>(bytes);
  return nullptr;
}

}  // namespace baton
