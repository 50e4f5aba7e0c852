// BatchNormalization in inference mode (the simplifier folds most of them).

#include <algorithm>

#include "ops/families.h"
#include "ops/infer_context.h"

namespace baton::planner {
namespace {

Check InferBatchNorm(InferContext& c) {
  BATON_TRY(c.RequireMinRank(0, 2));
  const int64_t channels = c.S(0)[1];
  for (int i = 0; i < 5; ++i) {
    BATON_TRY(c.RequireFloat(i));
    if (i > 0 && c.S(i) != Shape{channels}) {
      return c.Err("parameter " + c.Desc(i) + " must have shape [" + std::to_string(channels) +
                   "] to match input " + c.Desc(0));
    }
  }
  if (c.node().GetInt("training_mode", 0) != 0) {
    return c.Err("training_mode is not supported");
  }
  c.SameAsInput(0);
  return Check();
}

Result<LoweredParams> LowerBatchNorm(flatbuffers::FlatBufferBuilder* b, const Graph&,
                                     const Node& n) {
  LoweredParams out;
  out.type = schema::Params::BatchNormParams;
  out.offset = schema::CreateBatchNormParams(*b, n.GetFloat("epsilon", 1e-5f)).Union();
  return out;
}

// name, inputs min..max, outputs min..max, infer, has_kernel, kernel op,
// kernel inputs, lower, macs, eval, eval_reads_shapes_only
// clang-format off
const OpDef kOps[] = {
    {"BatchNormalization", 5, 5, 1, 1, InferBatchNorm, true, schema::Op::BatchNormalization, 5, LowerBatchNorm, nullptr, nullptr, false},
};
// clang-format on

}  // namespace

const OpFamily kBatchnormOps = {kOps, sizeof(kOps) / sizeof(kOps[0])};

}  // namespace baton::planner
