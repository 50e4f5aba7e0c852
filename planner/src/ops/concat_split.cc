// Concat and Split along one axis.

#include <algorithm>

#include "ops/families.h"
#include "ops/infer_context.h"

namespace baton::planner {
namespace {

using internal::Shape;
using internal::ShapeString;

Check InferConcat(InferContext& c) {
  if (c.node().FindAttr("axis") == nullptr) return c.Err("attribute 'axis' is required");
  for (int i = 0; i < c.NumInputs(); ++i) {
    if (!c.Has(i)) return c.Err("input " + std::to_string(i) + " is absent");
  }
  auto axis = c.Axis(c.node().GetInt("axis", 0), c.Rank(0), "axis");
  if (!axis.ok()) return Fail(axis.error());
  Shape out = c.S(0);
  for (int i = 1; i < c.NumInputs(); ++i) {
    if (c.In(i).dtype != c.In(0).dtype) {
      return c.Err("dtypes of " + c.Name(0) + " and " + c.Name(i) + " differ");
    }
    bool ok = c.Rank(i) == out.size();
    for (size_t d = 0; ok && d < out.size(); ++d) {
      if (static_cast<int64_t>(d) != *axis && c.S(i)[d] != out[d]) ok = false;
    }
    if (!ok) {
      return c.Err("cannot concatenate " + c.Desc(0) + " and " + c.Desc(i) + " on axis " +
                   std::to_string(*axis));
    }
    out[*axis] += c.S(i)[*axis];
  }
  c.Output(c.In(0).dtype, out);
  return Check();
}

Check InferSplit(InferContext& c) {
  BATON_TRY(c.RequireMinRank(0, 1));
  auto axis = c.Axis(c.node().GetInt("axis", 0), c.Rank(0), "axis");
  if (!axis.ok()) return Fail(axis.error());
  const int64_t dim = c.S(0)[*axis];
  const int64_t n = c.NumOutputs();
  std::vector<int64_t> split = c.node().GetInts("split");
  if (c.Has(1)) {
    BATON_ASSIGN_OR_RETURN(split, c.Ints(1, "split"));
  }
  if (split.empty()) {
    if (c.node().FindAttr("num_outputs") != nullptr) {
      // Opset 18: equal chunks of ceil(dim / n), the last one smaller.
      const int64_t chunk = (dim + n - 1) / n;
      for (int64_t i = 0; i < n; ++i) split.push_back(std::min(chunk, dim - i * chunk));
    } else {
      if (dim % n != 0) {
        return c.Err("cannot split dim " + std::to_string(dim) + " of " + c.Desc(0) + " into " +
                     std::to_string(n) + " equal parts");
      }
      split.assign(n, dim / n);
    }
  }
  if (static_cast<int64_t>(split.size()) != n) {
    return c.Err("split has " + std::to_string(split.size()) + " sizes but the node has " +
                 std::to_string(n) + " outputs");
  }
  int64_t sum = 0;
  for (int64_t s : split) {
    if (s < 0) return c.Err("split sizes must not be negative");
    sum += s;
  }
  if (sum != dim) {
    return c.Err("split sizes " + ShapeString(split) + " do not add up to dim " +
                 std::to_string(dim) + " of " + c.Desc(0));
  }
  for (int64_t s : split) {
    Shape out = c.S(0);
    out[*axis] = s;
    c.Output(c.In(0).dtype, out);
  }
  return Check();
}

// name, inputs min..max, outputs min..max, infer, has_kernel, kernel op,
// kernel inputs, lower, macs, eval, eval_reads_shapes_only
const OpDef kOps[] = {
    {"Concat", 1, kUnbounded, 1, 1, InferConcat, true, schema::Op::Concat, kAllInputs, nullptr, nullptr, nullptr, false},
    {"Split", 1, 2, 1, kUnbounded, InferSplit, true, schema::Op::Split, 1, nullptr, nullptr, nullptr, false},
};

}  // namespace

const OpFamily kConcatSplitOps = {kOps, sizeof(kOps) / sizeof(kOps[0])};

}  // namespace baton::planner
