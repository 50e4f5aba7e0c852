// Unary activations.

#include <algorithm>

#include "ops/families.h"
#include "ops/infer_context.h"

namespace baton::planner {
namespace {

using internal::Shape;
using internal::ShapeString;

Check InferUnary(InferContext& c) {
  BATON_TRY(c.RequireFloat(0));
  c.SameAsInput(0);
  return Check();
}

Check InferClip(InferContext& c) {
  BATON_TRY(c.RequireFloat(0));
  for (int i = 1; i < 3; ++i) {
    if (!c.Has(i)) continue;
    BATON_TRY(c.RequireFloat(i));
    if (c.In(i).elements() != 1 || c.Rank(i) > 1) {
      return c.Err("bound " + c.Desc(i) + " must be a scalar");
    }
  }
  c.SameAsInput(0);
  return Check();
}

// name, inputs min..max, outputs min..max, infer, has_kernel, kernel op,
// kernel inputs, lower, macs, eval, eval_reads_shapes_only
const OpDef kOps[] = {
    {"Relu", 1, 1, 1, 1, InferUnary, true, schema::Op::Relu, 1, nullptr, nullptr, nullptr, false},
    {"LeakyRelu", 1, 1, 1, 1, InferUnary, true, schema::Op::LeakyRelu, 1, nullptr, nullptr, nullptr, false},
    {"Clip", 1, 3, 1, 1, InferClip, true, schema::Op::Clip, 1, nullptr, nullptr, nullptr, false},
    {"Sigmoid", 1, 1, 1, 1, InferUnary, true, schema::Op::Sigmoid, 1, nullptr, nullptr, nullptr, false},
    {"Tanh", 1, 1, 1, 1, InferUnary, true, schema::Op::Tanh, 1, nullptr, nullptr, nullptr, false},
    {"HardSigmoid", 1, 1, 1, 1, InferUnary, true, schema::Op::HardSigmoid, 1, nullptr, nullptr, nullptr, false},
    {"HardSwish", 1, 1, 1, 1, InferUnary, true, schema::Op::HardSwish, 1, nullptr, nullptr, nullptr, false},
};

}  // namespace

const OpFamily kActivationOps = {kOps, sizeof(kOps) / sizeof(kOps[0])};

}  // namespace baton::planner
