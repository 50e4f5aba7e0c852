// LayerNormalization (over the trailing dims from `axis`) and
// InstanceNormalization (per sample and channel over the spatial dims).
// torch's decomposed LayerNorm (opsets < 17) is fused into LayerNormalization
// by the ONNX importer (import/onnx_patterns.cc); nn.GroupNorm's export
// (Reshape, InstanceNormalization, Reshape, Mul, Add) runs as written.

#include "ops/families.h"
#include "ops/infer_context.h"
#include "ops/op_util.h"

namespace baton::planner {
namespace {

Check InferLayerNorm(InferContext& c) {
  BATON_TRY(c.RequireFloat(0));
  BATON_TRY(c.RequireMinRank(0, 1));
  if (c.NumOutputs() > 1) {
    return c.Err("the optional outputs Mean and InvStdDev are not supported");
  }
  BATON_ASSIGN_OR_RETURN(int64_t axis, c.Axis(c.node().GetInt("axis", -1), c.Rank(0), "axis"));
  const Shape normalized(c.S(0).begin() + axis, c.S(0).end());
  for (int i = 1; i < 3; ++i) {
    if (!c.Has(i)) continue;
    BATON_TRY(c.RequireFloat(i));
    if (c.S(i) != normalized) {
      return c.Err((i == 1 ? "scale " : "bias ") + c.Desc(i) + " must have shape " +
                   ShapeString(normalized) + " (the dims of " + c.Desc(0) + " from axis " +
                   std::to_string(axis) + ")");
    }
  }
  if (!c.Has(1)) return c.Err("input 'Scale' is required");
  c.SameAsInput(0);
  return Check();
}

Result<LoweredParams> LowerLayerNorm(flatbuffers::FlatBufferBuilder* b, const Graph& g,
                                     const Node& n) {
  const size_t rank = internal::InputTensor(g, n, 0).shape.size();
  const int64_t axis = internal::NormalizeAxis(n.GetInt("axis", -1), rank);
  if (axis < 0 || axis >= static_cast<int64_t>(rank)) {
    return Fail(internal::NodeWhere(n) + ": axis out of range");
  }
  // BatchNormParams{epsilon}: the kernel derives the axis as rank(X) -
  // rank(Scale); Scale (an input of the lowered node, always present; the
  // fused pattern without gamma gets a ones Scale) has the normalized dims.
  LoweredParams out;
  out.type = schema::Params::BatchNormParams;
  out.offset = schema::CreateBatchNormParams(*b, n.GetFloat("epsilon", 1e-5f)).Union();
  return out;
}

Check InferInstanceNorm(InferContext& c) {
  BATON_TRY(c.RequireMinRank(0, 3));
  const int64_t channels = c.S(0)[1];
  for (int i = 0; i < 3; ++i) {
    BATON_TRY(c.RequireFloat(i));
    if (i > 0 && c.S(i) != Shape{channels}) {
      return c.Err("parameter " + c.Desc(i) + " must have shape [" + std::to_string(channels) +
                   "] to match input " + c.Desc(0));
    }
  }
  c.SameAsInput(0);
  return Check();
}

Result<LoweredParams> LowerInstanceNorm(flatbuffers::FlatBufferBuilder* b, const Graph&,
                                        const Node& n) {
  LoweredParams out;
  out.type = schema::Params::BatchNormParams;
  out.offset = schema::CreateBatchNormParams(*b, n.GetFloat("epsilon", 1e-5f)).Union();
  return out;
}

// Two passes over the input (mean, variance) and one multiply-add per output.
double NormMacs(const schema::Plan&, const schema::Node&, double out_elements) {
  return 3 * out_elements;
}

// name, inputs min..max, outputs min..max, infer, has_kernel, kernel op,
// kernel inputs, lower, macs, eval, eval_reads_shapes_only
// clang-format off
const OpDef kOps[] = {
    {"LayerNormalization", 2, 3, 1, 3, InferLayerNorm, true, schema::Op::LayerNormalization, 3, LowerLayerNorm, NormMacs, nullptr, false},
    {"InstanceNormalization", 3, 3, 1, 1, InferInstanceNorm, true, schema::Op::InstanceNormalization, 3, LowerInstanceNorm, NormMacs, nullptr, false},
};
// clang-format on

}  // namespace

const OpFamily kNormOps = {kOps, sizeof(kOps) / sizeof(kOps[0])};

}  // namespace baton::planner
