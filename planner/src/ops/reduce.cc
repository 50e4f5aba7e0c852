// Reductions.

#include <algorithm>

#include "ops/families.h"
#include "ops/infer_context.h"
#include "ops/op_util.h"

namespace baton::planner {
namespace {

Check InferReduceMean(InferContext& c) {
  BATON_TRY(c.RequireFloat(0));
  std::vector<int64_t> axes = c.node().GetInts("axes");
  if (c.Has(1)) {
    BATON_ASSIGN_OR_RETURN(axes, c.Ints(1, "axes"));
  }
  const size_t rank = c.Rank(0);
  const bool keepdims = c.node().GetInt("keepdims", 1) != 0;
  if (axes.empty()) {
    if (c.node().GetInt("noop_with_empty_axes", 0) != 0) {
      c.SameAsInput(0);
      return Check();
    }
    for (size_t d = 0; d < rank; ++d) axes.push_back(static_cast<int64_t>(d));
  }
  std::vector<bool> reduced(rank, false);
  for (int64_t a : axes) {
    auto axis = c.Axis(a, rank, "axis");
    if (!axis.ok()) return Fail(axis.error());
    if (reduced[*axis]) return c.Err("axis " + std::to_string(a) + " is repeated");
    reduced[*axis] = true;
  }
  Shape out;
  for (size_t d = 0; d < rank; ++d) {
    if (!reduced[d]) {
      out.push_back(c.S(0)[d]);
    } else if (keepdims) {
      out.push_back(1);
    }
  }
  c.Output(DType::Float32, out);
  return Check();
}

// The plan lists the reduced axes explicitly, non-negative and sorted.
Result<LoweredParams> LowerReduceMean(flatbuffers::FlatBufferBuilder* b, const Graph& g,
                                      const Node& n) {
  const size_t rank = internal::InputTensor(g, n, 0).shape.size();
  std::vector<int64_t> axes = n.GetInts("axes");
  if (internal::HasInput(n, 1)) {
    const Tensor* c = internal::ConstInput(g, n, 1);
    if (c == nullptr) return Fail(internal::NodeWhere(n) + ": axes must be constant");
    axes = c->IntData();
  }
  if (axes.empty()) {
    for (size_t a = 0; a < rank; ++a) axes.push_back(static_cast<int64_t>(a));
  }
  for (int64_t& a : axes) a = internal::NormalizeAxis(a, rank);
  std::sort(axes.begin(), axes.end());
  const std::vector<int32_t> a32 = internal::I32(axes);
  LoweredParams out;
  out.type = schema::Params::ReduceParams;
  out.offset = schema::CreateReduceParamsDirect(*b, &a32, n.GetInt("keepdims", 1) != 0).Union();
  return out;
}

// name, inputs min..max, outputs min..max, infer, has_kernel, kernel op,
// kernel inputs, lower, macs, eval, eval_reads_shapes_only
// clang-format off
const OpDef kOps[] = {
    {"ReduceMean", 1, 2, 1, 1, InferReduceMean, true, schema::Op::ReduceMean, 1, LowerReduceMean, nullptr, nullptr, false},
};
// clang-format on

}  // namespace

const OpFamily kReduceOps = {kOps, sizeof(kOps) / sizeof(kOps[0])};

}  // namespace baton::planner
