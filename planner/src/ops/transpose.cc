// Transpose by a permutation.

#include <algorithm>

#include "ops/families.h"
#include "ops/infer_context.h"

namespace baton::planner {
namespace {

using internal::Shape;
using internal::ShapeString;

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

// name, inputs min..max, outputs min..max, infer, has_kernel, kernel op,
// kernel inputs, lower, macs, eval, eval_reads_shapes_only
const OpDef kOps[] = {
    {"Transpose", 1, 1, 1, 1, InferTranspose, true, schema::Op::Transpose, 1, nullptr, nullptr, nullptr, false},
};

}  // namespace

const OpFamily kTransposeOps = {kOps, sizeof(kOps) / sizeof(kOps[0])};

}  // namespace baton::planner
