// Gemm: alpha * A' * B' + beta * C.

#include <algorithm>

#include "ops/families.h"
#include "ops/infer_context.h"

namespace baton::planner {
namespace {

using internal::Shape;
using internal::ShapeString;

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

// name, inputs min..max, outputs min..max, infer, has_kernel, kernel op,
// kernel inputs, lower, macs, eval, eval_reads_shapes_only
const OpDef kOps[] = {
    {"Gemm", 2, 3, 1, 1, InferGemm, true, schema::Op::Gemm, 3, nullptr, nullptr, nullptr, false},
};

}  // namespace

const OpFamily kGemmOps = {kOps, sizeof(kOps) / sizeof(kOps[0])};

}  // namespace baton::planner
