// Transpose by a permutation; DepthToSpace and SpaceToDepth (transposes of a
// 6-d view of an NCHW tensor).

#include <algorithm>

#include "ops/families.h"
#include "ops/infer_context.h"
#include "ops/op_util.h"

namespace baton::planner {
namespace {

Check InferTranspose(InferContext& c) {
  const size_t rank = c.Rank(0);
  std::vector<int64_t> perm = c.node().GetInts("perm");
  if (c.node().FindAttr("perm") == nullptr) {
    for (size_t d = rank; d-- > 0;) perm.push_back(static_cast<int64_t>(d));
  }
  std::vector<bool> used(rank, false);
  bool ok = perm.size() == rank;
  for (size_t d = 0; ok && d < perm.size(); ++d) {
    ok = perm[d] >= 0 && perm[d] < static_cast<int64_t>(rank) && !used[perm[d]];
    if (ok) used[perm[d]] = true;
  }
  if (!ok) return c.Err("perm " + ShapeString(perm) + " is not a permutation for " + c.Desc(0));
  Shape out;
  for (int64_t p : perm) out.push_back(c.S(0)[p]);
  c.Output(c.In(0).dtype, out);
  return Check();
}

Result<LoweredParams> LowerTranspose(flatbuffers::FlatBufferBuilder* b, const Graph& g,
                                     const Node& n) {
  const size_t rank = internal::InputTensor(g, n, 0).shape.size();
  std::vector<int64_t> perm = n.GetInts("perm");
  if (perm.empty()) {
    for (size_t a = 0; a < rank; ++a) perm.push_back(static_cast<int64_t>(rank - 1 - a));
  }
  if (perm.size() != rank) {
    return Fail(internal::NodeWhere(n) + ": perm length does not match the rank");
  }
  const std::vector<int32_t> p32 = internal::I32(perm);
  LoweredParams out;
  out.type = schema::Params::TransposeParams;
  out.offset = schema::CreateTransposeParamsDirect(*b, &p32).Union();
  return out;
}

Check EvalTranspose(const Node& node, const std::vector<const Tensor*>& inputs,
                    const std::vector<Tensor*>& outputs) {
  const Tensor& x = *inputs[0];
  const Shape in_strides = internal::Strides(x.shape);
  Shape strides(x.shape.size());
  std::vector<int64_t> perm = node.GetInts("perm");
  if (perm.empty()) {
    for (size_t d = x.shape.size(); d-- > 0;) perm.push_back(static_cast<int64_t>(d));
  }
  for (size_t d = 0; d < perm.size(); ++d) strides[d] = in_strides[perm[d]];
  internal::CopyStrided(x, strides, /*base=*/0, outputs[0]);
  return Check();
}

// DepthToSpace: [N, C, H, W] -> [N, C/b^2, H*b, W*b]; SpaceToDepth the inverse.
Check InferDepthSpace(InferContext& c) {
  const bool to_space = c.node().op == "DepthToSpace";
  if (c.Rank(0) != 4) return c.Err("input " + c.Desc(0) + " must be 4-d (NCHW)");
  const int64_t b = c.node().GetInt("blocksize", 0);
  if (b <= 0) return c.Err("attribute 'blocksize' must be positive");
  const std::string mode = c.node().GetString("mode", "DCR");
  if (mode != "DCR" && (mode != "CRD" || !to_space)) {
    return c.Err("mode '" + mode + "' is not supported (DCR" + (to_space ? ", CRD" : "") + ")");
  }
  const Shape& x = c.S(0);
  if (to_space) {
    if (x[1] % (b * b) != 0) {
      return c.Err("channels of " + c.Desc(0) + " are not a multiple of blocksize^2");
    }
    c.Output(c.In(0).dtype, {x[0], x[1] / (b * b), x[2] * b, x[3] * b});
  } else {
    if (x[2] % b != 0 || x[3] % b != 0) {
      return c.Err("height and width of " + c.Desc(0) + " are not multiples of blocksize");
    }
    c.Output(c.In(0).dtype, {x[0], x[1] * b * b, x[2] / b, x[3] / b});
  }
  return Check();
}

Result<LoweredParams> LowerDepthSpace(flatbuffers::FlatBufferBuilder* b, const Graph&,
                                      const Node& n) {
  // AxisParams{axis}: 1 for DepthToSpace mode CRD, 0 otherwise (DCR, and
  // always for SpaceToDepth). The kernel derives blocksize from the shapes.
  LoweredParams out;
  const bool crd = n.op == "DepthToSpace" && n.GetString("mode", "DCR") == "CRD";
  out.type = schema::Params::AxisParams;
  out.offset = schema::CreateAxisParams(*b, crd ? 1 : 0).Union();
  return out;
}

// name, inputs min..max, outputs min..max, infer, has_kernel, kernel op,
// kernel inputs, lower, macs, eval, eval_reads_shapes_only
// clang-format off
const OpDef kOps[] = {
    {"Transpose", 1, 1, 1, 1, InferTranspose, true, schema::Op::Transpose, 1, LowerTranspose, nullptr, EvalTranspose, false},
    {"DepthToSpace", 1, 1, 1, 1, InferDepthSpace, true, schema::Op::DepthToSpace, 1, LowerDepthSpace, nullptr, nullptr, false},
    {"SpaceToDepth", 1, 1, 1, 1, InferDepthSpace, true, schema::Op::SpaceToDepth, 1, LowerDepthSpace, nullptr, nullptr, false},
};
// clang-format on

}  // namespace

const OpFamily kTransposeOps = {kOps, sizeof(kOps) / sizeof(kOps[0])};

}  // namespace baton::planner
