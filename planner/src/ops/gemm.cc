// Gemm: alpha * A' * B' + beta * C.

#include <algorithm>
#include <memory>

#include "ops/families.h"
#include "ops/infer_context.h"
#include "ops/op_util.h"

namespace baton::planner {
namespace {

Check InferGemm(InferContext& c) {
  for (int i = 0; i < c.NumInputs(); ++i) {
    if (c.Has(i)) BATON_TRY(c.RequireFloat(i));
  }
  if (c.Rank(0) != 2 || c.Rank(1) != 2) {
    return c.Err("inputs " + c.Desc(0) + " and " + c.Desc(1) + " must be 2-D");
  }
  const bool ta = c.node().GetInt("transA", 0) != 0;
  const bool tb = c.node().GetInt("transB", 0) != 0;
  const int64_t m = c.S(0)[ta ? 1 : 0], ka = c.S(0)[ta ? 0 : 1];
  const int64_t kb = c.S(1)[tb ? 1 : 0], n = c.S(1)[tb ? 0 : 1];
  if (ka != kb) {
    return c.Err("inner dimensions of " + c.Desc(0) + " and " + c.Desc(1) +
                 " differ (transA=" + std::to_string(ta) + ", transB=" + std::to_string(tb) + ")");
  }
  const Shape out = {m, n};
  if (c.Has(2)) {
    Shape b;
    if (!internal::BroadcastShapes(c.S(2), out, &b) || b != out) {
      return c.Err("bias " + c.Desc(2) + " does not broadcast to " + ShapeString(out));
    }
  }
  c.Output(DType::Float32, out);
  return Check();
}

Result<LoweredParams> LowerGemm(flatbuffers::FlatBufferBuilder* b, const Graph&, const Node& n) {
  const std::unique_ptr<schema::Clamp> clamp = internal::FusedClamp(n);
  LoweredParams out;
  out.type = schema::Params::GemmParams;
  out.offset = schema::CreateGemmParams(*b, n.GetFloat("alpha", 1.0f), n.GetFloat("beta", 1.0f),
                                        n.GetInt("transA", 0) != 0, n.GetInt("transB", 0) != 0,
                                        clamp.get(), internal::FusedActivationOf(n),
                                        n.activation_alpha, n.activation_beta)
                   .Union();
  return out;
}

// Output elements (M * N) * K, K read from A (transposed when trans_a).
double GemmMacs(const schema::Plan& plan, const schema::Node& node, double out_elements) {
  const schema::Tensor* a = internal::PlanInput(plan, node, 0);
  const schema::GemmParams* p = node.params_as_GemmParams();
  const double k =
      p != nullptr && p->trans_a() ? internal::PlanDim(a, 0) : internal::PlanDim(a, -1);
  return out_elements * k;
}

// name, inputs min..max, outputs min..max, infer, has_kernel, kernel op,
// kernel inputs, lower, macs, eval, eval_reads_shapes_only
// clang-format off
const OpDef kOps[] = {
    {"Gemm", 2, 3, 1, 1, InferGemm, true, schema::Op::Gemm, 3, LowerGemm, GemmMacs, nullptr, false},
};
// clang-format on

}  // namespace

const OpFamily kGemmOps = {kOps, sizeof(kOps) / sizeof(kOps[0])};

}  // namespace baton::planner
