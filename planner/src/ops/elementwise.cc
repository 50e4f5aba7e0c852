// Binary elementwise ops with numpy broadcasting.

#include <algorithm>

#include "ops/families.h"
#include "ops/infer_context.h"

namespace baton::planner {
namespace {

using internal::Shape;
using internal::ShapeString;

Check InferElementwise(InferContext& c) {
  const DType dtype = c.In(0).dtype;
  if (dtype != DType::Float32 && dtype != DType::Int64 && dtype != DType::Int32) {
    return c.Err("input " + c.Name(0) + " has unsupported dtype " + DTypeName(dtype));
  }
  if (c.In(1).dtype != dtype) {
    return c.Err("dtypes " + std::string(DTypeName(dtype)) + " and " + DTypeName(c.In(1).dtype) +
                 " of " + c.Name(0) + " and " + c.Name(1) + " differ");
  }
  Shape out;
  if (!internal::BroadcastShapes(c.S(0), c.S(1), &out)) {
    return c.Err("shapes " + ShapeString(c.S(0)) + " and " + ShapeString(c.S(1)) + " of " +
                 c.Name(0) + " and " + c.Name(1) + " are not broadcastable");
  }
  c.Output(dtype, out);
  return Check();
}

// name, inputs min..max, outputs min..max, infer, has_kernel, kernel op,
// kernel inputs, lower, macs, eval, eval_reads_shapes_only
const OpDef kOps[] = {
    {"Add", 2, 2, 1, 1, InferElementwise, true, schema::Op::Add, 2, nullptr, nullptr, nullptr, false},
    {"Sub", 2, 2, 1, 1, InferElementwise, true, schema::Op::Sub, 2, nullptr, nullptr, nullptr, false},
    {"Mul", 2, 2, 1, 1, InferElementwise, true, schema::Op::Mul, 2, nullptr, nullptr, nullptr, false},
    {"Div", 2, 2, 1, 1, InferElementwise, true, schema::Op::Div, 2, nullptr, nullptr, nullptr, false},
};

}  // namespace

const OpFamily kElementwiseOps = {kOps, sizeof(kOps) / sizeof(kOps[0])};

}  // namespace baton::planner
