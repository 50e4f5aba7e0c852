// Registration, workspace sizes and attribute reading of the post-processing
// ops (baton/postprocess.h).

#include "baton/postprocess.h"

#include "postprocess_internal.h"

namespace baton {
namespace postprocess {
namespace {

// A loop rather than strcmp: GCC's -Wstringop-overread misjudges strcmp on
// FlatBuffers strings (as in registry.cc).
bool SameName(const char* a, const char* b) {
  while (*a != 0 && *a == *b) ++a, ++b;
  return *a == *b;
}

// Unknown attribute names are errors: a misspelt optional attribute would
// otherwise fall back to its default silently.
bool AllKnown(const CustomAttributes& attrs, const char* const* known, uint32_t num_known) {
  for (uint32_t i = 0; i < attrs.size(); ++i) {
    const char* name = attrs.Get(i)->name()->c_str();
    bool found = false;
    for (uint32_t k = 0; k < num_known && !found; ++k) found = SameName(name, known[k]);
    if (!found) return false;
  }
  return true;
}

// Reads attribute `name` when present; false when present with another kind.
bool OptionalFloat(const CustomAttributes& attrs, const char* name, float* out) {
  return attrs.Find(name) == nullptr || attrs.Float(name, out);
}

bool OptionalInt(const CustomAttributes& attrs, const char* name, int64_t* out) {
  return attrs.Find(name) == nullptr || attrs.Int(name, out);
}

}  // namespace

const char* ReadDecodeBoxesAttrs(const CustomAttributes& attrs, DecodeBoxesAttrs* out) {
  static const char* const kKnown[] = {"clip", "weights"};
  if (!AllKnown(attrs, kKnown, 2)) {
    return BATON_MSG("baton::DecodeBoxes: unknown attribute (known: weights, clip)");
  }
  *out = DecodeBoxesAttrs();
  if (attrs.Find("weights") != nullptr && attrs.Floats("weights", out->weights, 4) != 4) {
    return BATON_MSG("baton::DecodeBoxes: weights must be Floats of 4 values");
  }
  if (!OptionalFloat(attrs, "clip", &out->clip)) {
    return BATON_MSG("baton::DecodeBoxes: clip must be a Float");
  }
  return nullptr;
}

const char* ReadNonMaxSuppressionAttrs(const CustomAttributes& attrs, NonMaxSuppressionAttrs* out) {
  static const char* const kKnown[] = {"background_class", "detections_per_img", "image_size",
                                       "nms_thresh",       "score_thresh",       "topk_candidates"};
  if (!AllKnown(attrs, kKnown, 6)) {
    return BATON_MSG(
        "baton::NonMaxSuppression: unknown attribute (known: score_thresh, "
        "nms_thresh, topk_candidates, detections_per_img, background_class, "
        "image_size)");
  }
  *out = NonMaxSuppressionAttrs();
  if (!attrs.Float("score_thresh", &out->score_thresh) ||
      !attrs.Float("nms_thresh", &out->nms_thresh)) {
    return BATON_MSG(
        "baton::NonMaxSuppression: needs Float attributes score_thresh and nms_thresh");
  }
  if (!attrs.Int("topk_candidates", &out->topk_candidates) ||
      !attrs.Int("detections_per_img", &out->detections_per_img)) {
    return BATON_MSG(
        "baton::NonMaxSuppression: needs Int attributes topk_candidates and "
        "detections_per_img");
  }
  if (!OptionalInt(attrs, "background_class", &out->background_class)) {
    return BATON_MSG("baton::NonMaxSuppression: background_class must be an Int");
  }
  if (attrs.Find("image_size") != nullptr) {
    int64_t hw[2] = {};
    if (attrs.Ints("image_size", hw, 2) != 2 || hw[0] < 1 || hw[1] < 1) {
      return BATON_MSG("baton::NonMaxSuppression: image_size must be Ints [H, W], both >= 1");
    }
    out->image_height = hw[0];
    out->image_width = hw[1];
  }
  return nullptr;
}

PostprocessTensorSpec SpecOf(const TensorArg& arg) {
  PostprocessTensorSpec s;
  s.dtype = arg.dtype();
  s.rank = arg.rank() <= kMaxRank ? arg.rank() : kMaxRank + 1;  // > kMaxRank: no op takes it
  for (uint32_t d = 0; d < arg.rank() && d < kMaxRank; ++d) s.dims[d] = arg.dim(d);
  return s;
}

bool Matches(const TensorArg& arg, const PostprocessTensorSpec& spec) {
  if (!arg.present() || arg.dtype() != spec.dtype || arg.rank() != spec.rank) return false;
  for (uint32_t d = 0; d < spec.rank; ++d) {
    if (arg.dim(d) != spec.dims[d]) return false;
  }
  return true;
}

}  // namespace postprocess

Status RegisterPostprocessKernels(KernelRegistry* registry) {
  using namespace postprocess;  // NOLINT
  BATON_RETURN_IF_ERROR(registry->RegisterCustom(kDecodeBoxesOp, DeviceKind::Cpu,
                                                 {DecodeBoxesPrepare, DecodeBoxesEval}));
  return registry->RegisterCustom(kNonMaxSuppressionOp, DeviceKind::Cpu,
                                  {NonMaxSuppressionPrepare, NonMaxSuppressionEval});
}

size_t PostprocessWorkspaceBytes(const KernelCall& call) {
  const schema::CustomParams* params = call.node->params_as_CustomParams();
  if (params == nullptr || !postprocess::SameName(params->name()->c_str(), kNonMaxSuppressionOp) ||
      call.num_inputs != 2 || !call.inputs[0].present() || !call.inputs[1].present()) {
    return 0;
  }
  CustomAttributes attrs;
  NonMaxSuppressionAttrs nms;
  if (!CustomAttributes::Load(*call.node, &attrs).ok() ||
      postprocess::ReadNonMaxSuppressionAttrs(attrs, &nms) != nullptr) {
    return 0;
  }
  const PostprocessTensorSpec in[2] = {postprocess::SpecOf(call.inputs[0]),
                                       postprocess::SpecOf(call.inputs[1])};
  PostprocessTensorSpec out[4];
  size_t bytes = 0;
  return InferNonMaxSuppression(nms, in, 2, out, &bytes) == nullptr ? bytes : 0;
}

}  // namespace baton
