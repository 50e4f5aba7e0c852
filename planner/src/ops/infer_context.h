#pragma once
// What an op's shape inference sees of one node: its inputs' dtypes, shapes
// and known values (constants, or small integer values propagated from
// constants), helpers that produce messages naming the node and tensor, and
// the output specs it records. Internal to the planner's ops/ and import/.

#include <cstdint>
#include <string>
#include <vector>

#include "baton/planner/graph.h"
#include "ops/eval_host.h"

namespace baton::planner {

// Every op family file speaks of shapes.
using internal::Shape;
using internal::ShapeString;

struct OutSpec {
  DType dtype = DType::Float32;
  internal::Shape shape;
};

class InferContext {
 public:
  using Shape = internal::Shape;

  InferContext(const Graph& graph, const Node& node, const std::vector<const Tensor*>& values)
      : graph_(graph), node_(node), values_(values) {}

  const Node& node() const { return node_; }
  Error Err(const std::string& message) const {
    return Fail("node '" + node_.name + "': " + message);
  }
  bool Has(int i) const { return internal::HasInput(node_, i); }
  const Tensor& In(int i) const { return graph_.tensors[node_.inputs[i]]; }
  const Shape& S(int i) const { return In(i).shape; }
  size_t Rank(int i) const { return In(i).shape.size(); }
  std::string Name(int i) const { return "'" + In(i).name + "'"; }
  std::string Desc(int i) const { return Name(i) + " " + internal::ShapeString(S(i)); }
  int NumInputs() const { return static_cast<int>(node_.inputs.size()); }
  int NumOutputs() const { return static_cast<int>(node_.outputs.size()); }

  // The value of input i: a constant, or a value propagated from constants.
  const Tensor* Value(int i) const { return Has(i) ? values_[node_.inputs[i]] : nullptr; }

  // Integer values of parameter input i (Reshape's shape, Slice's starts...).
  Result<std::vector<int64_t>> Ints(int i, const std::string& role) const;

  Check RequireDType(int i, DType dtype) const;
  Check RequireFloat(int i) const { return RequireDType(i, DType::Float32); }
  Check RequireMinRank(int i, size_t rank) const;
  // Normalizes a possibly negative axis into [0, rank).
  Result<int64_t> Axis(int64_t axis, size_t rank, const std::string& what) const;

  void Output(DType dtype, Shape shape) { out.push_back(OutSpec{dtype, std::move(shape)}); }
  void SameAsInput(int i) { Output(In(i).dtype, S(i)); }

  std::vector<OutSpec> out;

 private:
  const Graph& graph_;
  const Node& node_;
  const std::vector<const Tensor*>& values_;
};

// Attribute `key` of `node`, or n copies of `fallback` when absent.
internal::Shape AttrOr(const Node& node, const char* key, size_t n, int64_t fallback);

// The quantized operands of QLinearConv and QLinearMatMul: input `x` (uint8
// or int8) with a one-element float32 scale and zero point of its dtype at
// x + 1 and x + 2; weight `w` (int8 or uint8) with a float32 scale and a zero
// point of its dtype and the scale's element count at w + 1 and w + 2 (the
// caller checks that count); output scale (one element) and zero point (uint8
// or int8: the output dtype) at `y` and y + 1.
Check CheckQLinearInputs(InferContext& c, int x, int w, int y);

// Checks a per-spatial-dim attribute: right length, all positive.
Check CheckSpatial(const InferContext& c, const char* key, const internal::Shape& v, size_t n);

}  // namespace baton::planner
