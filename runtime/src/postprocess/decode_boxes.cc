// baton::DecodeBoxes: torchvision's BoxCoder.decode_single, operation for
// operation in float32 (the library is built with -ffp-contract=off, so no
// multiply-add is fused where torchvision rounds twice).

#include <math.h>

#include "postprocess_internal.h"

namespace baton::postprocess {
namespace {

Status Load(const KernelCall& call, DecodeBoxesAttrs* out) {
  CustomAttributes attrs;
  BATON_RETURN_IF_ERROR(CustomAttributes::Load(*call.node, &attrs));
  const char* problem = ReadDecodeBoxesAttrs(attrs, out);
  return problem ? Status(StatusCode::kInvalidArgument, problem) : Status::Ok();
}

}  // namespace

Status DecodeBoxesPrepare(const KernelCall& call) {
  DecodeBoxesAttrs attrs;
  BATON_RETURN_IF_ERROR(Load(call, &attrs));
  if (call.num_inputs != 2 || call.num_outputs != 1 || !call.inputs[0].present() ||
      !call.inputs[1].present()) {
    return BATON_ERROR(kInvalidArgument,
                       "baton::DecodeBoxes takes rel_codes and anchors, "
                       "gives boxes");
  }
  const PostprocessTensorSpec in[2] = {SpecOf(call.inputs[0]), SpecOf(call.inputs[1])};
  PostprocessTensorSpec out;
  const char* problem = InferDecodeBoxes(attrs, in, 2, &out);
  if (problem != nullptr) return Status(StatusCode::kInvalidArgument, problem);
  if (!Matches(call.outputs[0], out)) {
    return BATON_ERROR(kInvalidArgument, "baton::DecodeBoxes: boxes must be float32 [N, A, 4]");
  }
  return Status::Ok();
}

Status DecodeBoxesEval(const KernelCall& call) {
  DecodeBoxesAttrs attrs;
  BATON_RETURN_IF_ERROR(Load(call, &attrs));
  const TensorArg& codes_arg = call.inputs[0];
  const TensorArg& anchors_arg = call.inputs[1];
  const uint32_t n = static_cast<uint32_t>(codes_arg.dim(0));
  const uint32_t a = static_cast<uint32_t>(codes_arg.dim(1));
  // Anchors [N, A, 4] advance per image; [A, 4] and [1, A, 4] do not.
  const bool per_image = anchors_arg.rank() == 3 && anchors_arg.dim(0) != 1;
  const float wx = attrs.weights[0], wy = attrs.weights[1];
  const float ww = attrs.weights[2], wh = attrs.weights[3];
  const float clip = attrs.clip;
  for (uint32_t i = 0; i < n; ++i) {
    const float* codes = codes_arg.f32() + static_cast<size_t>(i) * a * 4;
    const float* anchors = anchors_arg.f32() + (per_image ? static_cast<size_t>(i) * a * 4 : 0);
    float* boxes = call.outputs[0].f32() + static_cast<size_t>(i) * a * 4;
    for (uint32_t k = 0; k < a; ++k) {
      const float* r = anchors + 4 * k;
      const float* d = codes + 4 * k;
      const float width = r[2] - r[0];
      const float height = r[3] - r[1];
      const float ctr_x = r[0] + 0.5f * width;
      const float ctr_y = r[1] + 0.5f * height;
      const float dx = d[0] / wx;
      const float dy = d[1] / wy;
      float dw = d[2] / ww;
      float dh = d[3] / wh;
      // torch.clamp(max=clip): NaN stays NaN.
      if (dw > clip) dw = clip;
      if (dh > clip) dh = clip;
      const float pred_ctr_x = dx * width + ctr_x;
      const float pred_ctr_y = dy * height + ctr_y;
      const float half_w = 0.5f * (expf(dw) * width);
      const float half_h = 0.5f * (expf(dh) * height);
      // In place (boxes over rel_codes) is safe: element k is read before written.
      float* b = boxes + 4 * k;
      b[0] = pred_ctr_x - half_w;
      b[1] = pred_ctr_y - half_h;
      b[2] = pred_ctr_x + half_w;
      b[3] = pred_ctr_y + half_h;
    }
  }
  return Status::Ok();
}

}  // namespace baton::postprocess
