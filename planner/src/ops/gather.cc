// Gather along one axis.

#include <algorithm>

#include "ops/families.h"
#include "ops/infer_context.h"

namespace baton::planner {
namespace {

using internal::Shape;
using internal::ShapeString;

Check InferGather(InferContext& c) {
  BATON_TRY(c.RequireMinRank(0, 1));
  if (c.In(1).dtype != DType::Int64 && c.In(1).dtype != DType::Int32) {
    return c.Err("indices " + c.Name(1) + " must be int64 or int32, got " +
                 DTypeName(c.In(1).dtype));
  }
  auto axis = c.Axis(c.node().GetInt("axis", 0), c.Rank(0), "axis");
  if (!axis.ok()) return Fail(axis.error());
  const int64_t dim = c.S(0)[*axis];
  if (const Tensor* v = c.Value(1)) {
    for (int64_t index : v->IntData()) {
      if (index < -dim || index >= dim) {
        return c.Err("index " + std::to_string(index) + " in " + c.Name(1) +
                     " is out of range for axis " + std::to_string(*axis) + " of " + c.Desc(0));
      }
    }
  }
  Shape out(c.S(0).begin(), c.S(0).begin() + *axis);
  out.insert(out.end(), c.S(1).begin(), c.S(1).end());
  out.insert(out.end(), c.S(0).begin() + *axis + 1, c.S(0).end());
  c.Output(c.In(0).dtype, out);
  return Check();
}

// name, inputs min..max, outputs min..max, infer, has_kernel, kernel op,
// kernel inputs, lower, macs, eval, eval_reads_shapes_only
const OpDef kOps[] = {
    {"Gather", 2, 2, 1, 1, InferGather, true, schema::Op::Gather, 2, nullptr, nullptr, nullptr, false},
};

}  // namespace

const OpFamily kGatherOps = {kOps, sizeof(kOps) / sizeof(kOps[0])};

}  // namespace baton::planner
