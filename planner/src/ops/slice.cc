// Slice with constant starts, ends, axes and steps.

#include <algorithm>

#include "ops/families.h"
#include "ops/infer_context.h"

namespace baton::planner {
namespace {

using internal::Shape;
using internal::ShapeString;

Check InferSlice(InferContext& c) {
  static const char* const kRoles[] = {"data", "starts", "ends", "axes", "steps"};
  auto spec = internal::ResolveSlice(c.node(), c.S(0),
                                     [&](int i) { return c.Ints(i, kRoles[std::min(i, 4)]); });
  if (!spec.ok()) {
    // Errors from Ints already carry the node prefix.
    if (spec.error().rfind("node '", 0) == 0) return Fail(spec.error());
    return c.Err(spec.error());
  }
  c.Output(c.In(0).dtype, spec->count);
  return Check();
}

// name, inputs min..max, outputs min..max, infer, has_kernel, kernel op,
// kernel inputs, lower, macs, eval, eval_reads_shapes_only
const OpDef kOps[] = {
    {"Slice", 1, 5, 1, 1, InferSlice, true, schema::Op::Slice, 1, nullptr, nullptr, nullptr, false},
};

}  // namespace

const OpFamily kSliceOps = {kOps, sizeof(kOps) / sizeof(kOps[0])};

}  // namespace baton::planner
