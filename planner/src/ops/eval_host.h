#pragma once
// Planner-internal helpers shared by shape inference, the simplifier and the
// op families: ONNX parameter resolution (auto_pad, Slice) and a small host
// evaluator that computes constant values (shape arithmetic, data movement,
// elementwise ops) without depending on the runtime's kernels. The ops'
// EvalFns (OpDef::eval) do the work; EvaluateNode dispatches to them and the
// element helpers at the end of this header serve them all. Host only; may
// allocate.

#include <cstdint>
#include <cstring>
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

// `axis` counted from the front when negative (not range checked).
int64_t NormalizeAxis(int64_t axis, size_t rank);

// A Slice resolved against its input shape: for every dim of the input, the
// first index, the step and the number of elements taken.
struct SliceSpec {
  std::vector<int64_t> start, step, count;
};
// Reads starts/ends/axes/steps from inputs 1-4 (opset >= 10) or from the
// attributes (older opsets) and clamps them with ONNX semantics.
Result<SliceSpec> ResolveSlice(const Node& node, const Shape& input_shape, const ConstInts& ints);

// True for the ops EvaluateNode implements (those whose OpDef has eval).
bool CanEvaluate(const std::string& op);

// Computes the data of every output of `node`. `inputs[i]` is the value of
// input i (nullptr when absent); Shape only needs the input's shape. The
// outputs already carry their inferred dtype and shape; their `data` is
// filled. Checks that input 0 and output 0 exist and that input 0's value
// is complete (unless the op reads shapes only), then calls OpDef::eval.
// Errors are messages without the node prefix.
Check EvaluateNode(const Node& node, const std::vector<const Tensor*>& inputs,
                   const std::vector<Tensor*>& outputs);

// ---- Element helpers for the ops' EvalFns ----

// Row-major strides, in elements.
Shape Strides(const Shape& shape);

// Strides of `in` broadcast against `out` (right-aligned; 0 on broadcast dims).
Shape BroadcastStrides(const Shape& in, const Shape& out);

// Calls fn(out_index, a_offset, b_offset) for every element of `shape` in
// row-major order, where the offsets advance by the given per-dim strides.
template <typename Fn>
void ForEachIndex(const Shape& shape, const Shape& a_strides, const Shape& b_strides, Fn fn) {
  int64_t total = 1;
  for (int64_t d : shape) total *= d;
  if (total == 0) return;
  std::vector<int64_t> counter(shape.size(), 0);
  int64_t a = 0, b = 0;
  for (int64_t i = 0; i < total; ++i) {
    fn(i, a, b);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++counter[d] < shape[d]) {
        a += a_strides[d];
        b += b_strides[d];
        break;
      }
      a -= a_strides[d] * (shape[d] - 1);
      b -= b_strides[d] * (shape[d] - 1);
      counter[d] = 0;
    }
  }
}

// The data of `t` as values of type T.
template <typename T>
std::vector<T> Values(const Tensor& t) {
  std::vector<T> out(t.data.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), t.data.data(), out.size() * sizeof(T));
  return out;
}

// Replaces the data of `t` by `values`.
template <typename T>
void Store(const std::vector<T>& values, Tensor* t) {
  t->data.resize(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(t->data.data(), values.data(), t->data.size());
}

// Copies `elements` elements of `esize` bytes each.
void CopyElems(const uint8_t* src, int64_t src_index, uint8_t* dst, int64_t dst_index,
               int64_t elements, size_t esize);

// Fills `y` (of its own shape) with the elements of `x` at
// base + sum(index[d] * strides[d]): Slice and Transpose are such views.
void CopyStrided(const Tensor& x, const Shape& strides, int64_t base, Tensor* y);

// Calls fn(T{}) with the C++ type that holds one element of `dtype` (Bool:
// uint8_t, 0 or 1) and returns true; false for an unknown dtype.
template <typename Fn>
bool VisitDType(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::Float32:
      fn(float{});
      return true;
    case DType::Int32:
      fn(int32_t{});
      return true;
    case DType::Int64:
      fn(int64_t{});
      return true;
    case DType::UInt8:
      fn(uint8_t{});
      return true;
    case DType::Int8:
      fn(int8_t{});
      return true;
    case DType::Bool:
      fn(uint8_t{});
      return true;
  }
  return false;
}

// Checks that input `i` is present with complete data; the message names it.
Check RequireValue(const std::vector<const Tensor*>& inputs, size_t i);

// "cannot evaluate <op> on <dtype>".
Error CannotEvaluate(const Node& node, DType dtype);

}  // namespace baton::planner::internal
