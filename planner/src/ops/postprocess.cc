// The post-processing ops' output specs (baton/planner/ops/postprocess.h):
// planner attributes -> the runtime's attribute structs -> the runtime's
// shape rule.

#include "baton/planner/ops/postprocess.h"

#include "baton/postprocess.h"

namespace baton::planner {
namespace {

using Attrs = std::map<std::string, Attr>;

// The kinds the kernels accept (CustomAttributes reads them by kind: a
// planner Int would arrive as an Int where a Float is needed).
Check CheckKinds(const Attrs& attrs, const std::map<std::string, Attr::Kind>& known) {
  for (const auto& [name, attr] : attrs) {
    auto it = known.find(name);
    if (it == known.end()) {
      std::string names;
      for (const auto& k : known) names += (names.empty() ? "" : ", ") + k.first;
      return Fail("unknown attribute '" + name + "' (known: " + names + ")");
    }
    if (attr.kind != it->second) {
      // Attr::Kind's order.
      static const char* const kKinds[] = {"Int",    "Float",   "Ints",  "Floats",
                                           "String", "Strings", "Tensor"};
      static_assert(sizeof(kKinds) / sizeof(kKinds[0]) ==
                        static_cast<size_t>(Attr::Kind::kTensor) + 1,
                    "one name per Attr::Kind");
      return Fail("attribute '" + name + "' must be " + kKinds[static_cast<int>(it->second)] +
                  ", not " + kKinds[static_cast<int>(attr.kind)]);
    }
  }
  return {};
}

Check ReadDecodeBoxes(const Attrs& attrs, DecodeBoxesAttrs* out) {
  BATON_TRY(CheckKinds(attrs, {{"weights", Attr::Kind::kFloats}, {"clip", Attr::Kind::kFloat}}));
  if (auto it = attrs.find("weights"); it != attrs.end()) {
    if (it->second.floats.size() != 4) return Fail("weights must be Floats of 4 values");
    for (int i = 0; i < 4; ++i) out->weights[i] = it->second.floats[i];
  }
  if (auto it = attrs.find("clip"); it != attrs.end()) out->clip = it->second.f;
  return {};
}

Check ReadNonMaxSuppression(const Attrs& attrs, NonMaxSuppressionAttrs* out) {
  BATON_TRY(CheckKinds(attrs, {{"score_thresh", Attr::Kind::kFloat},
                               {"nms_thresh", Attr::Kind::kFloat},
                               {"topk_candidates", Attr::Kind::kInt},
                               {"detections_per_img", Attr::Kind::kInt},
                               {"background_class", Attr::Kind::kInt},
                               {"image_size", Attr::Kind::kInts}}));
  for (const char* required :
       {"score_thresh", "nms_thresh", "topk_candidates", "detections_per_img"}) {
    if (attrs.count(required) == 0) return Fail(std::string("needs attribute '") + required + "'");
  }
  out->score_thresh = attrs.at("score_thresh").f;
  out->nms_thresh = attrs.at("nms_thresh").f;
  out->topk_candidates = attrs.at("topk_candidates").i;
  out->detections_per_img = attrs.at("detections_per_img").i;
  if (auto it = attrs.find("background_class"); it != attrs.end()) {
    out->background_class = it->second.i;
  }
  if (auto it = attrs.find("image_size"); it != attrs.end()) {
    const std::vector<int64_t>& hw = it->second.ints;
    if (hw.size() != 2 || hw[0] < 1 || hw[1] < 1) {
      return Fail("image_size must be Ints [H, W], both >= 1");
    }
    out->image_height = hw[0];
    out->image_width = hw[1];
  }
  return {};
}

Result<PostprocessTensorSpec> ToRuntime(const TensorSpec& spec, size_t i) {
  if (spec.shape.size() > kMaxRank) {
    return Fail("input " + std::to_string(i) + " has rank above BATON_MAX_RANK");
  }
  PostprocessTensorSpec s;
  s.dtype = spec.dtype;
  s.rank = static_cast<uint32_t>(spec.shape.size());
  for (size_t d = 0; d < spec.shape.size(); ++d) s.dims[d] = spec.shape[d];
  return s;
}

TensorSpec FromRuntime(const PostprocessTensorSpec& s) {
  return TensorSpec{s.dtype, std::vector<int64_t>(s.dims, s.dims + s.rank)};
}

Result<std::vector<TensorSpec>> Infer(const std::string& op, const std::vector<TensorSpec>& inputs,
                                      const Attrs& attrs) {
  std::vector<PostprocessTensorSpec> in;
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto s = ToRuntime(inputs[i], i);
    if (!s.ok()) return Fail(op + ": " + s.error());
    in.push_back(*s);
  }
  PostprocessTensorSpec out[4];
  const char* problem = nullptr;
  size_t outputs = 0;
  if (op == kDecodeBoxesOp) {
    DecodeBoxesAttrs a;
    if (Check c = ReadDecodeBoxes(attrs, &a); !c.ok()) return Fail(op + ": " + c.error());
    problem = InferDecodeBoxes(a, in.data(), static_cast<uint32_t>(in.size()), out);
    outputs = 1;
  } else {
    NonMaxSuppressionAttrs a;
    if (Check c = ReadNonMaxSuppression(attrs, &a); !c.ok()) return Fail(op + ": " + c.error());
    size_t workspace = 0;
    problem =
        InferNonMaxSuppression(a, in.data(), static_cast<uint32_t>(in.size()), out, &workspace);
    outputs = 4;
  }
  // The runtime's messages start with the op's name.
  if (problem != nullptr) return Fail(problem);
  std::vector<TensorSpec> specs;
  for (size_t i = 0; i < outputs; ++i) specs.push_back(FromRuntime(out[i]));
  return specs;
}

}  // namespace

bool IsPostprocessOp(const std::string& op) {
  return op == kDecodeBoxesOp || op == kNonMaxSuppressionOp;
}

Result<std::vector<TensorSpec>> InferPostprocessOutputs(const std::string& node_name,
                                                        const std::string& op,
                                                        const std::vector<TensorSpec>& inputs,
                                                        const std::map<std::string, Attr>& attrs) {
  const std::string prefix = "node '" + node_name + "': ";
  if (!IsPostprocessOp(op)) return Fail(prefix + "'" + op + "' is not a post-processing op");
  auto specs = Infer(op, inputs, attrs);
  if (!specs.ok()) return Fail(prefix + specs.error());
  return specs;
}

}  // namespace baton::planner
