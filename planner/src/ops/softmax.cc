// Softmax along one axis.

#include <algorithm>

#include "ops/families.h"
#include "ops/infer_context.h"
#include "ops/op_util.h"

namespace baton::planner {
namespace {

Check InferSoftmax(InferContext& c) {
  BATON_TRY(c.RequireFloat(0));
  BATON_TRY(c.RequireMinRank(0, 1));
  auto axis = c.Axis(c.node().GetInt("axis", -1), c.Rank(0), "axis");
  if (!axis.ok()) return Fail(axis.error());
  c.SameAsInput(0);
  return Check();
}

Result<LoweredParams> LowerSoftmax(flatbuffers::FlatBufferBuilder* b, const Graph& g,
                                   const Node& n) {
  return internal::LowerAxis(b, g, n, /*default_axis=*/-1, /*check_range=*/true);
}

// name, inputs min..max, outputs min..max, infer, has_kernel, kernel op,
// kernel inputs, lower, macs, eval, eval_reads_shapes_only
// clang-format off
const OpDef kOps[] = {
    {"Softmax", 1, 1, 1, 1, InferSoftmax, true, schema::Op::Softmax, 1, LowerSoftmax, nullptr, nullptr, false},
};
// clang-format on

}  // namespace

const OpFamily kSoftmaxOps = {kOps, sizeof(kOps) / sizeof(kOps[0])};

}  // namespace baton::planner
