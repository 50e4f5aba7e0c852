// Ops that move bytes unchanged: Baton's __copy, Identity, and the reshapes.

#include <algorithm>
#include <cstdint>

#include "ops/families.h"
#include "ops/infer_context.h"
#include "ops/op_util.h"

namespace baton::planner {
namespace {

Check InferReshape(InferContext& c) {
  BATON_ASSIGN_OR_RETURN(std::vector<int64_t> shape, c.Ints(1, "shape"));
  const bool allowzero = c.node().GetInt("allowzero", 0) != 0;
  int infer = -1;
  int64_t known = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0 && !allowzero) {
      if (d >= c.Rank(0)) {
        return c.Err("shape " + ShapeString(shape) + " copies dim " + std::to_string(d) +
                     " which input " + c.Desc(0) + " does not have");
      }
      shape[d] = c.S(0)[d];
    }
    if (shape[d] == -1) {
      if (infer >= 0) return c.Err("shape " + ShapeString(shape) + " has more than one -1");
      infer = static_cast<int>(d);
    } else if (shape[d] < 0) {
      return c.Err("shape " + ShapeString(shape) + " has a negative dim");
    } else {
      // A product past int64 cannot equal the input's element count.
      if (shape[d] != 0 && known > INT64_MAX / shape[d]) {
        return c.Err("shape " + ShapeString(shape) + " has more elements than int64 can count");
      }
      known *= shape[d];
    }
  }
  const int64_t total = c.In(0).elements();
  if (infer >= 0) {
    if (known == 0 || total % known != 0) {
      return c.Err("cannot reshape " + c.Desc(0) + " to " + ShapeString(shape));
    }
    shape[infer] = total / known;
  } else if (known != total) {
    return c.Err("cannot reshape " + c.Desc(0) + " (" + std::to_string(total) + " elements) to " +
                 ShapeString(shape));
  }
  c.Output(c.In(0).dtype, shape);
  return Check();
}

Check InferFlatten(InferContext& c) {
  const int64_t rank = static_cast<int64_t>(c.Rank(0));
  int64_t axis = c.node().GetInt("axis", 1);
  if (axis < -rank || axis > rank) {
    return c.Err("axis " + std::to_string(axis) + " is out of range for " + c.Desc(0));
  }
  if (axis < 0) axis += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) (d < axis ? outer : inner) *= c.S(0)[d];
  c.Output(c.In(0).dtype, {outer, inner});
  return Check();
}

Check InferSqueeze(InferContext& c) {
  std::vector<int64_t> axes = c.node().GetInts("axes");
  if (c.Has(1)) {
    BATON_ASSIGN_OR_RETURN(axes, c.Ints(1, "axes"));
  }
  const size_t rank = c.Rank(0);
  std::vector<bool> drop(rank, false);
  if (axes.empty()) {
    for (size_t d = 0; d < rank; ++d) drop[d] = c.S(0)[d] == 1;
  }
  for (int64_t a : axes) {
    auto axis = c.Axis(a, rank, "axis");
    if (!axis.ok()) return Fail(axis.error());
    if (c.S(0)[*axis] != 1) {
      return c.Err("cannot squeeze axis " + std::to_string(a) + " of " + c.Desc(0) +
                   ": its size is not 1");
    }
    drop[*axis] = true;
  }
  Shape out;
  for (size_t d = 0; d < rank; ++d) {
    if (!drop[d]) out.push_back(c.S(0)[d]);
  }
  c.Output(c.In(0).dtype, out);
  return Check();
}

Check InferUnsqueeze(InferContext& c) {
  std::vector<int64_t> axes = c.node().GetInts("axes");
  if (c.Has(1)) {
    BATON_ASSIGN_OR_RETURN(axes, c.Ints(1, "axes"));
  }
  if (axes.empty()) return c.Err("needs axes");
  const size_t rank = c.Rank(0) + axes.size();
  std::vector<bool> inserted(rank, false);
  for (int64_t a : axes) {
    auto axis = c.Axis(a, rank, "axis");
    if (!axis.ok()) return Fail(axis.error());
    if (inserted[*axis]) return c.Err("axis " + std::to_string(a) + " is repeated");
    inserted[*axis] = true;
  }
  Shape out;
  size_t next = 0;
  for (size_t d = 0; d < rank; ++d) out.push_back(inserted[d] ? 1 : c.S(0)[next++]);
  c.Output(c.In(0).dtype, out);
  return Check();
}

Check InferIdentity(InferContext& c) {
  c.SameAsInput(0);
  return Check();
}

// Flatten's axis may equal the rank (an [n, 1] result), so it is not
// range checked like the other axis params.
Result<LoweredParams> LowerFlatten(flatbuffers::FlatBufferBuilder* b, const Graph& g,
                                   const Node& n) {
  return internal::LowerAxis(b, g, n, /*default_axis=*/1, /*check_range=*/false);
}

// The bytes are unchanged; only the (already inferred) shape differs.
Check EvalCopy(const Node&, const std::vector<const Tensor*>& inputs,
               const std::vector<Tensor*>& outputs) {
  outputs[0]->data = inputs[0]->data;
  return Check();
}

// A copy moves bytes and computes nothing; its cost is the link's.
double CopyMacs(const schema::Plan&, const schema::Node&, double) { return 0; }

// name, inputs min..max, outputs min..max, infer, has_kernel, kernel op,
// kernel inputs, lower, macs, eval, eval_reads_shapes_only
// clang-format off
const OpDef kOps[] = {
    {"Reshape", 2, 2, 1, 1, InferReshape, true, schema::Op::Reshape, 1, nullptr, nullptr, EvalCopy, false},
    {"Flatten", 1, 1, 1, 1, InferFlatten, true, schema::Op::Flatten, 1, LowerFlatten, nullptr, EvalCopy, false},
    {"Squeeze", 1, 2, 1, 1, InferSqueeze, true, schema::Op::Squeeze, 1, nullptr, nullptr, EvalCopy, false},
    {"Unsqueeze", 1, 2, 1, 1, InferUnsqueeze, true, schema::Op::Unsqueeze, 1, nullptr, nullptr, EvalCopy, false},
    {"Identity", 1, 1, 1, 1, InferIdentity, true, schema::Op::Identity, 1, nullptr, nullptr, EvalCopy, false},
    {"__copy", 1, 1, 1, 1, InferIdentity, true, schema::Op::Copy, 1, nullptr, CopyMacs, EvalCopy, false},
};
// clang-format on

}  // namespace

const OpFamily kCopyOps = {kOps, sizeof(kOps) / sizeof(kOps[0])};

}  // namespace baton::planner
