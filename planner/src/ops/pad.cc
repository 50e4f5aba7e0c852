// Pad: constant, reflect and edge modes.

#include <algorithm>

#include "ops/families.h"
#include "ops/infer_context.h"
#include "ops/op_util.h"

namespace baton::planner {
namespace {

Check InferPad(InferContext& c) {
  const std::string mode = c.node().GetString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge") {
    return c.Err("unsupported pad mode '" + mode + "'");
  }
  std::vector<int64_t> pads = c.node().GetInts("pads");
  if (c.Has(1)) {
    BATON_ASSIGN_OR_RETURN(pads, c.Ints(1, "pads"));
  }
  const size_t rank = c.Rank(0);
  std::vector<int64_t> axes;
  if (c.Has(3)) {
    BATON_ASSIGN_OR_RETURN(axes, c.Ints(3, "axes"));
  } else {
    for (size_t d = 0; d < rank; ++d) axes.push_back(static_cast<int64_t>(d));
  }
  if (pads.size() != 2 * axes.size()) {
    return c.Err("pads has " + std::to_string(pads.size()) + " values, expected " +
                 std::to_string(2 * axes.size()) + " for input " + c.Desc(0));
  }
  if (c.Has(2)) {
    if (c.In(2).dtype != c.In(0).dtype || c.In(2).elements() != 1) {
      return c.Err("constant_value " + c.Desc(2) + " must be a scalar of the input's dtype");
    }
  }
  Shape out = c.S(0);
  for (size_t i = 0; i < axes.size(); ++i) {
    auto axis = c.Axis(axes[i], rank, "axis");
    if (!axis.ok()) return Fail(axis.error());
    out[*axis] += pads[i] + pads[i + axes.size()];
    if (out[*axis] < 0)
      return c.Err("pads " + ShapeString(pads) + " crop " + c.Desc(0) + " below zero");
  }
  c.Output(c.In(0).dtype, out);
  return Check();
}

// Constant pads and fill value become params; the kernel takes begin and
// end pads for every dim.
Result<LoweredParams> LowerPad(flatbuffers::FlatBufferBuilder* b, const Graph& g, const Node& n) {
  const std::string where = internal::NodeWhere(n);
  const size_t rank = internal::InputTensor(g, n, 0).shape.size();
  std::vector<int64_t> pads = n.GetInts("pads");
  float value = n.GetFloat("value", 0.0f);
  if (internal::HasInput(n, 1)) {
    const Tensor* c = internal::ConstInput(g, n, 1);
    if (c == nullptr) return Fail(where + ": pads must be constant");
    pads = c->IntData();
  }
  if (internal::HasInput(n, 2)) {
    const Tensor* c = internal::ConstInput(g, n, 2);
    if (c == nullptr || c->elements() != 1 || c->data.size() != c->bytes()) {
      return Fail(where + ": constant_value must be a constant scalar");
    }
    internal::VisitDType(c->dtype, [&](auto v) {
      value = static_cast<float>(internal::Values<decltype(v)>(*c)[0]);
    });
  }
  if (pads.size() != 2 * rank) return Fail(where + ": pads must have 2 * rank entries");
  for (int64_t p : pads) {
    if (p < 0) return Fail(where + ": negative pads are not supported");
  }
  const std::string mode = n.GetString("mode", "constant");
  const uint8_t m = mode == "constant" ? 0 : mode == "reflect" ? 1 : mode == "edge" ? 2 : 255;
  if (m == 255) return Fail(where + ": unsupported mode '" + mode + "'");
  LoweredParams out;
  out.type = schema::Params::PadParams;
  out.offset = schema::CreatePadParamsDirect(*b, &pads, m, value).Union();
  return out;
}

// name, inputs min..max, outputs min..max, infer, has_kernel, kernel op,
// kernel inputs, lower, macs, eval, eval_reads_shapes_only
// clang-format off
const OpDef kOps[] = {
    {"Pad", 1, 4, 1, 1, InferPad, true, schema::Op::Pad, 1, LowerPad, nullptr, nullptr, false},
};
// clang-format on

}  // namespace

const OpFamily kPadOps = {kOps, sizeof(kOps) / sizeof(kOps[0])};

}  // namespace baton::planner
