#pragma once
// Planner-internal helpers shared by shape inference and the simplifier:
// ONNX parameter resolution (auto_pad, Slice) and a small host evaluator that
// computes constant values (shape arithmetic, data movement, elementwise ops)
// without depending on the runtime's kernels. Host only; may allocate.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "baton/planner/graph.h"

namespace baton::planner::internal {

using Shape = std::vector<int64_t>;

// "[1,3,8,8]".
std::string ShapeString(const Shape& shape);

// Numpy/ONNX multidirectional broadcast of two shapes; false if incompatible.
bool BroadcastShapes(const Shape& a, const Shape& b, Shape* out_shape);

// Explicit spatial pads (begin..., end...) of a Conv or pool node for the
// given input spatial dims, honouring auto_pad (NOTSET, SAME_UPPER,
// SAME_LOWER, VALID). Errors are messages without the node prefix.
Result<std::vector<int64_t>> ResolvePads(const Node& node, const Shape& input_spatial,
                                         const Shape& kernel, const Shape& strides,
                                         const Shape& dilations);

// Returns the int64 values of a present input (a constant or a propagated
// value), or an error message naming it.
using ConstInts = std::function<Result<std::vector<int64_t>>(int input)>;

// True if node input `i` exists (present and not -1).
bool HasInput(const Node& node, int i);

// A Slice resolved against its input shape: for every dim of the input, the
// first index, the step and the number of elements taken.
struct SliceSpec {
  std::vector<int64_t> start, step, count;
};
// Reads starts/ends/axes/steps from inputs 1-4 (opset >= 10) or from the
// attributes (older opsets) and clamps them with ONNX semantics.
Result<SliceSpec> ResolveSlice(const Node& node, const Shape& input_shape, const ConstInts& ints);

// True for the ops EvaluateNode implements.
bool CanEvaluate(const std::string& op);

// Computes the data of every output of `node`. `inputs[i]` is the value of
// input i (nullptr when absent); Shape only needs the input's shape. The
// outputs already carry their inferred dtype and shape; their `data` is
// filled. Errors are messages without the node prefix.
Check EvaluateNode(const Node& node, const std::vector<const Tensor*>& inputs,
                   const std::vector<Tensor*>& outputs);

}  // namespace baton::planner::internal
