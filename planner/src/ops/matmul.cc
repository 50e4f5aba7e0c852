// MatMul with numpy batch broadcasting.

#include <algorithm>

#include "ops/families.h"
#include "ops/infer_context.h"
#include "ops/op_util.h"

namespace baton::planner {
namespace {

Check InferMatMul(InferContext& c) {
  BATON_TRY(c.RequireFloat(0));
  BATON_TRY(c.RequireFloat(1));
  BATON_TRY(c.RequireMinRank(0, 1));
  BATON_TRY(c.RequireMinRank(1, 1));
  Shape a = c.S(0), b = c.S(1);
  const bool a_vec = a.size() == 1, b_vec = b.size() == 1;
  if (a_vec) a.insert(a.begin(), 1);
  if (b_vec) b.push_back(1);
  if (a[a.size() - 1] != b[b.size() - 2]) {
    return c.Err("inner dimensions of " + c.Desc(0) + " and " + c.Desc(1) + " differ");
  }
  Shape batch;
  if (!internal::BroadcastShapes(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2),
                                 &batch)) {
    return c.Err("batch dimensions of " + c.Desc(0) + " and " + c.Desc(1) +
                 " are not broadcastable");
  }
  if (!a_vec) batch.push_back(a[a.size() - 2]);
  if (!b_vec) batch.push_back(b.back());
  c.Output(DType::Float32, batch);
  return Check();
}

// Output elements (batch * M * N) * K, K the last dim of A.
double MatMulMacs(const schema::Plan& plan, const schema::Node& node, double out_elements) {
  return out_elements * internal::PlanDim(internal::PlanInput(plan, node, 0), -1);
}

// name, inputs min..max, outputs min..max, infer, has_kernel, kernel op,
// kernel inputs, lower, macs, eval, eval_reads_shapes_only
// clang-format off
const OpDef kOps[] = {
    {"MatMul", 2, 2, 1, 1, InferMatMul, true, schema::Op::MatMul, 2, nullptr, MatMulMacs, nullptr, false},
};
// clang-format on

}  // namespace

const OpFamily kMatmulOps = {kOps, sizeof(kOps) / sizeof(kOps[0])};

}  // namespace baton::planner
