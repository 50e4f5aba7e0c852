#include "baton/planner/shapes.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <set>

#include "eval_host.h"

namespace baton::planner {
namespace {

using internal::HasInput;
using internal::Shape;
using internal::ShapeString;

// Small integer tensors (shape arithmetic) are evaluated while inferring so
// that Reshape/Slice/... can read shapes computed by Shape -> Gather -> ...
// chains, like ONNX's data propagation. Larger values are left to the
// simplifier's constant folding.
constexpr int64_t kMaxPropagatedElements = 1 << 16;

struct OutSpec {
  DType dtype = DType::Float32;
  Shape shape;
};

// Inference context of one node.
class Ctx {
 public:
  Ctx(const Graph& graph, const Node& node, const std::vector<const Tensor*>& values)
      : graph_(graph), node_(node), values_(values) {}

  const Node& node() const { return node_; }
  Error Err(const std::string& message) const {
    return Fail("node '" + node_.name + "': " + message);
  }
  bool Has(int i) const { return HasInput(node_, i); }
  const Tensor& In(int i) const { return graph_.tensors[node_.inputs[i]]; }
  const Shape& S(int i) const { return In(i).shape; }
  size_t Rank(int i) const { return In(i).shape.size(); }
  std::string Name(int i) const { return "'" + In(i).name + "'"; }
  std::string Desc(int i) const { return Name(i) + " " + ShapeString(S(i)); }
  int NumInputs() const { return static_cast<int>(node_.inputs.size()); }
  int NumOutputs() const { return static_cast<int>(node_.outputs.size()); }

  // The value of input i: a constant, or a value propagated from constants.
  const Tensor* Value(int i) const { return Has(i) ? values_[node_.inputs[i]] : nullptr; }

  // Integer values of parameter input i (Reshape's shape, Slice's starts...).
  Result<std::vector<int64_t>> Ints(int i, const std::string& role) const {
    const Tensor* v = Value(i);
    if (v == nullptr) {
      return Err(role + " input " + Name(i) +
                 " is not a constant (dynamic shapes are not supported)");
    }
    if (v->dtype != DType::Int64 && v->dtype != DType::Int32) {
      return Err(role + " input " + Name(i) + " must be int64, got " + DTypeName(v->dtype));
    }
    if (v->shape.size() > 1) {
      return Err(role + " input " + Name(i) + " must be 1-D, got " + ShapeString(v->shape));
    }
    return v->IntData();
  }

  Check RequireDType(int i, DType dtype) const {
    if (In(i).dtype != dtype) {
      return Err("input " + Name(i) + " must be " + DTypeName(dtype) + ", got " +
                 DTypeName(In(i).dtype));
    }
    return Check();
  }
  Check RequireFloat(int i) const { return RequireDType(i, DType::Float32); }
  Check RequireMinRank(int i, size_t rank) const {
    if (Rank(i) < rank) {
      return Err("input " + Desc(i) + " has rank " + std::to_string(Rank(i)) + ", " + node_.op +
                 " needs rank >= " + std::to_string(rank));
    }
    return Check();
  }
  // Normalizes a possibly negative axis into [0, rank).
  Result<int64_t> Axis(int64_t axis, size_t rank, const std::string& what) const {
    int64_t r = static_cast<int64_t>(rank);
    if (axis < -r || axis >= r) {
      return Err(what + " " + std::to_string(axis) + " is out of range for rank " +
                 std::to_string(rank));
    }
    return axis < 0 ? axis + r : axis;
  }

  void Output(DType dtype, Shape shape) { out.push_back(OutSpec{dtype, std::move(shape)}); }
  void SameAsInput(int i) { Output(In(i).dtype, S(i)); }

  std::vector<OutSpec> out;

 private:
  const Graph& graph_;
  const Node& node_;
  const std::vector<const Tensor*>& values_;
};

Shape AttrOr(const Node& node, const char* key, size_t n, int64_t fallback) {
  Shape v = node.GetInts(key);
  if (node.FindAttr(key) == nullptr) v.assign(n, fallback);
  return v;
}

// Checks a per-spatial-dim attribute: right length, all positive.
Check CheckSpatial(const Ctx& c, const char* key, const Shape& v, size_t n) {
  if (v.size() != n) {
    return c.Err("attribute '" + std::string(key) + "' has " + std::to_string(v.size()) +
                 " values, expected " + std::to_string(n));
  }
  for (int64_t x : v) {
    if (x <= 0) return c.Err("attribute '" + std::string(key) + "' must be positive");
  }
  return Check();
}

Check InferConv(Ctx& c) {
  BATON_TRY(c.RequireFloat(0));
  BATON_TRY(c.RequireFloat(1));
  BATON_TRY(c.RequireMinRank(0, 3));
  const Shape& x = c.S(0);
  const Shape& w = c.S(1);
  const size_t r = x.size() - 2;
  if (w.size() != x.size()) {
    return c.Err("weight " + c.Desc(1) + " does not match the rank of input " + c.Desc(0));
  }
  const int64_t group = c.node().GetInt("group", 1);
  if (group <= 0) return c.Err("attribute 'group' must be positive");
  if (x[1] != w[1] * group || w[0] % group != 0) {
    return c.Err("input " + c.Desc(0) + " has " + std::to_string(x[1]) + " channels but weight " +
                 c.Desc(1) + " with group " + std::to_string(group) + " expects " +
                 std::to_string(w[1] * group));
  }
  if (c.Has(2)) {
    BATON_TRY(c.RequireFloat(2));
    if (c.S(2) != Shape{w[0]}) {
      return c.Err("bias " + c.Desc(2) + " must have shape [" + std::to_string(w[0]) + "]");
    }
  }
  const Shape kernel(w.begin() + 2, w.end());
  if (c.node().FindAttr("kernel_shape") != nullptr && c.node().GetInts("kernel_shape") != kernel) {
    return c.Err("attribute 'kernel_shape' " + ShapeString(c.node().GetInts("kernel_shape")) +
                 " disagrees with weight " + c.Desc(1));
  }
  const Shape strides = AttrOr(c.node(), "strides", r, 1);
  const Shape dilations = AttrOr(c.node(), "dilations", r, 1);
  BATON_TRY(CheckSpatial(c, "strides", strides, r));
  BATON_TRY(CheckSpatial(c, "dilations", dilations, r));
  const Shape spatial(x.begin() + 2, x.end());
  auto pads = internal::ResolvePads(c.node(), spatial, kernel, strides, dilations);
  if (!pads.ok()) return c.Err(pads.error());
  Shape out = {x[0], w[0]};
  for (size_t i = 0; i < r; ++i) {
    int64_t span = spatial[i] + (*pads)[i] + (*pads)[i + r] - dilations[i] * (kernel[i] - 1) - 1;
    if (span < 0) {
      return c.Err("kernel " + ShapeString(kernel) + " is larger than padded input " + c.Desc(0));
    }
    out.push_back(span / strides[i] + 1);
  }
  c.Output(DType::Float32, out);
  return Check();
}

Check InferPool(Ctx& c) {
  BATON_TRY(c.RequireFloat(0));
  BATON_TRY(c.RequireMinRank(0, 3));
  const Shape& x = c.S(0);
  const size_t r = x.size() - 2;
  if (c.node().FindAttr("kernel_shape") == nullptr) {
    return c.Err("attribute 'kernel_shape' is required");
  }
  const Shape kernel = c.node().GetInts("kernel_shape");
  const Shape strides = AttrOr(c.node(), "strides", r, 1);
  const Shape dilations = AttrOr(c.node(), "dilations", r, 1);
  BATON_TRY(CheckSpatial(c, "kernel_shape", kernel, r));
  BATON_TRY(CheckSpatial(c, "strides", strides, r));
  BATON_TRY(CheckSpatial(c, "dilations", dilations, r));
  const bool ceil_mode = c.node().GetInt("ceil_mode", 0) != 0;
  const Shape spatial(x.begin() + 2, x.end());
  auto pads = internal::ResolvePads(c.node(), spatial, kernel, strides, dilations);
  if (!pads.ok()) return c.Err(pads.error());
  Shape out = {x[0], x[1]};
  for (size_t i = 0; i < r; ++i) {
    int64_t span = spatial[i] + (*pads)[i] + (*pads)[i + r] - dilations[i] * (kernel[i] - 1) - 1;
    if (span < 0) {
      return c.Err("kernel " + ShapeString(kernel) + " is larger than padded input " + c.Desc(0));
    }
    int64_t n = (ceil_mode ? (span + strides[i] - 1) / strides[i] : span / strides[i]) + 1;
    // With ceil_mode the last window must start inside the input or the
    // begin padding (PyTorch and onnxruntime semantics).
    if (ceil_mode && (n - 1) * strides[i] >= spatial[i] + (*pads)[i]) --n;
    out.push_back(n);
  }
  c.Output(DType::Float32, out);
  return Check();
}

Check InferGlobalPool(Ctx& c) {
  BATON_TRY(c.RequireFloat(0));
  BATON_TRY(c.RequireMinRank(0, 3));
  Shape out = c.S(0);
  std::fill(out.begin() + 2, out.end(), 1);
  c.Output(DType::Float32, out);
  return Check();
}

Check InferGemm(Ctx& c) {
  for (int i = 0; i < c.NumInputs(); ++i) {
    if (c.Has(i)) BATON_TRY(c.RequireFloat(i));
  }
  if (c.Rank(0) != 2 || c.Rank(1) != 2) {
    return c.Err("inputs " + c.Desc(0) + " and " + c.Desc(1) + " must be 2-D");
  }
  const bool ta = c.node().GetInt("transA", 0) != 0;
  const bool tb = c.node().GetInt("transB", 0) != 0;
  const int64_t m = c.S(0)[ta ? 1 : 0], ka = c.S(0)[ta ? 0 : 1];
  const int64_t kb = c.S(1)[tb ? 1 : 0], n = c.S(1)[tb ? 0 : 1];
  if (ka != kb) {
    return c.Err("inner dimensions of " + c.Desc(0) + " and " + c.Desc(1) +
                 " differ (transA=" + std::to_string(ta) + ", transB=" + std::to_string(tb) + ")");
  }
  const Shape out = {m, n};
  if (c.Has(2)) {
    Shape b;
    if (!internal::BroadcastShapes(c.S(2), out, &b) || b != out) {
      return c.Err("bias " + c.Desc(2) + " does not broadcast to " + ShapeString(out));
    }
  }
  c.Output(DType::Float32, out);
  return Check();
}

Check InferMatMul(Ctx& c) {
  BATON_TRY(c.RequireFloat(0));
  BATON_TRY(c.RequireFloat(1));
  BATON_TRY(c.RequireMinRank(0, 1));
  BATON_TRY(c.RequireMinRank(1, 1));
  Shape a = c.S(0), b = c.S(1);
  const bool a_vec = a.size() == 1, b_vec = b.size() == 1;
  if (a_vec) a.insert(a.begin(), 1);
  if (b_vec) b.push_back(1);
  if (a[a.size() - 1] != b[b.size() - 2]) {
    return c.Err("inner dimensions of " + c.Desc(0) + " and " + c.Desc(1) + " differ");
  }
  Shape batch;
  if (!internal::BroadcastShapes(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2),
                                 &batch)) {
    return c.Err("batch dimensions of " + c.Desc(0) + " and " + c.Desc(1) +
                 " are not broadcastable");
  }
  if (!a_vec) batch.push_back(a[a.size() - 2]);
  if (!b_vec) batch.push_back(b.back());
  c.Output(DType::Float32, batch);
  return Check();
}

Check InferElementwise(Ctx& c) {
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

Check InferUnary(Ctx& c) {
  BATON_TRY(c.RequireFloat(0));
  c.SameAsInput(0);
  return Check();
}

Check InferClip(Ctx& c) {
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

Check InferSoftmax(Ctx& c) {
  BATON_TRY(c.RequireFloat(0));
  BATON_TRY(c.RequireMinRank(0, 1));
  auto axis = c.Axis(c.node().GetInt("axis", -1), c.Rank(0), "axis");
  if (!axis.ok()) return Fail(axis.error());
  c.SameAsInput(0);
  return Check();
}

Check InferReduceMean(Ctx& c) {
  BATON_TRY(c.RequireFloat(0));
  std::vector<int64_t> axes = c.node().GetInts("axes");
  if (c.Has(1)) {
    BATON_ASSIGN_OR_RETURN(axes, c.Ints(1, "axes"));
  }
  const size_t rank = c.Rank(0);
  const bool keepdims = c.node().GetInt("keepdims", 1) != 0;
  if (axes.empty()) {
    if (c.node().GetInt("noop_with_empty_axes", 0) != 0) {
      c.SameAsInput(0);
      return Check();
    }
    for (size_t d = 0; d < rank; ++d) axes.push_back(static_cast<int64_t>(d));
  }
  std::vector<bool> reduced(rank, false);
  for (int64_t a : axes) {
    auto axis = c.Axis(a, rank, "axis");
    if (!axis.ok()) return Fail(axis.error());
    if (reduced[*axis]) return c.Err("axis " + std::to_string(a) + " is repeated");
    reduced[*axis] = true;
  }
  Shape out;
  for (size_t d = 0; d < rank; ++d) {
    if (!reduced[d]) {
      out.push_back(c.S(0)[d]);
    } else if (keepdims) {
      out.push_back(1);
    }
  }
  c.Output(DType::Float32, out);
  return Check();
}

Check InferBatchNorm(Ctx& c) {
  BATON_TRY(c.RequireMinRank(0, 2));
  const int64_t channels = c.S(0)[1];
  for (int i = 0; i < 5; ++i) {
    BATON_TRY(c.RequireFloat(i));
    if (i > 0 && c.S(i) != Shape{channels}) {
      return c.Err("parameter " + c.Desc(i) + " must have shape [" + std::to_string(channels) +
                   "] to match input " + c.Desc(0));
    }
  }
  if (c.node().GetInt("training_mode", 0) != 0) {
    return c.Err("training_mode is not supported");
  }
  c.SameAsInput(0);
  return Check();
}

Check InferConcat(Ctx& c) {
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

Check InferSplit(Ctx& c) {
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

Check InferSlice(Ctx& c) {
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

Check InferPad(Ctx& c) {
  const std::string mode = c.node().GetString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge") {
    return c.Err("unsupported pad mode '" + mode + "'");
  }
  std::vector<int64_t> pads = c.node().GetInts("pads");
  if (c.Has(1)) {
    BATON_ASSIGN_OR_RETURN(pads, c.Ints(1, "pads"));
  }
  const size_t rank = c.Rank(0);
  std::vector<int64_t> axes;
  if (c.Has(3)) {
    BATON_ASSIGN_OR_RETURN(axes, c.Ints(3, "axes"));
  } else {
    for (size_t d = 0; d < rank; ++d) axes.push_back(static_cast<int64_t>(d));
  }
  if (pads.size() != 2 * axes.size()) {
    return c.Err("pads has " + std::to_string(pads.size()) + " values, expected " +
                 std::to_string(2 * axes.size()) + " for input " + c.Desc(0));
  }
  if (c.Has(2)) {
    if (c.In(2).dtype != c.In(0).dtype || c.In(2).elements() != 1) {
      return c.Err("constant_value " + c.Desc(2) + " must be a scalar of the input's dtype");
    }
  }
  Shape out = c.S(0);
  for (size_t i = 0; i < axes.size(); ++i) {
    auto axis = c.Axis(axes[i], rank, "axis");
    if (!axis.ok()) return Fail(axis.error());
    out[*axis] += pads[i] + pads[i + axes.size()];
    if (out[*axis] < 0)
      return c.Err("pads " + ShapeString(pads) + " crop " + c.Desc(0) + " below zero");
  }
  c.Output(c.In(0).dtype, out);
  return Check();
}

Check InferTranspose(Ctx& c) {
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

Check InferReshape(Ctx& c) {
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

Check InferFlatten(Ctx& c) {
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

Check InferSqueeze(Ctx& c) {
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

Check InferUnsqueeze(Ctx& c) {
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

Check InferGather(Ctx& c) {
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

Check InferShape(Ctx& c) {
  const int64_t rank = static_cast<int64_t>(c.Rank(0));
  int64_t start = c.node().GetInt("start", 0), end = c.node().GetInt("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  c.Output(DType::Int64, {end - start});
  return Check();
}

Check InferIdentity(Ctx& c) {
  c.SameAsInput(0);
  return Check();
}

Check InferDropout(Ctx& c) {
  c.SameAsInput(0);
  // The optional mask is boolean in ONNX; Baton has no bool, uint8 holds it.
  if (c.NumOutputs() > 1) c.Output(DType::UInt8, c.S(0));
  return Check();
}

// The value of a Constant node from its value_* attribute.
Check InferConstant(Ctx& c, Tensor* out_value) {
  const Node& node = c.node();
  const Attr* a = nullptr;
  for (const char* key : {"value_float", "value_floats", "value_int", "value_ints"}) {
    if (const Attr* found = node.FindAttr(key)) {
      if (a != nullptr) return c.Err("has more than one value attribute");
      a = found;
    }
  }
  if (a == nullptr) {
    if (out_value->is_constant && out_value->shape_known) {
      c.Output(out_value->dtype, out_value->shape);  // filled by the importer
      return Check();
    }
    return c.Err("Constant needs value_float, value_floats, value_int or value_ints");
  }
  out_value->data.clear();
  auto put = [&](const void* p, size_t n) {
    const uint8_t* b = static_cast<const uint8_t*>(p);
    out_value->data.insert(out_value->data.end(), b, b + n);
  };
  switch (a->kind) {
    case Attr::Kind::kFloat:
      c.Output(DType::Float32, {});
      put(&a->f, sizeof(float));
      break;
    case Attr::Kind::kFloats:
      c.Output(DType::Float32, {static_cast<int64_t>(a->floats.size())});
      put(a->floats.data(), a->floats.size() * sizeof(float));
      break;
    case Attr::Kind::kInt:
      c.Output(DType::Int64, {});
      put(&a->i, sizeof(int64_t));
      break;
    case Attr::Kind::kInts:
      c.Output(DType::Int64, {static_cast<int64_t>(a->ints.size())});
      put(a->ints.data(), a->ints.size() * sizeof(int64_t));
      break;
    case Attr::Kind::kString:
      return c.Err("string constants are not supported");
  }
  out_value->is_constant = true;
  return Check();
}

using InferFn = Check (*)(Ctx&);

struct OpRule {
  const char* op;
  int min_inputs, max_inputs;  // -1: unbounded
  int min_outputs, max_outputs;
  InferFn fn;
};

const OpRule kRules[] = {
    {"Conv", 2, 3, 1, 1, InferConv},
    {"Gemm", 2, 3, 1, 1, InferGemm},
    {"MatMul", 2, 2, 1, 1, InferMatMul},
    {"Add", 2, 2, 1, 1, InferElementwise},
    {"Sub", 2, 2, 1, 1, InferElementwise},
    {"Mul", 2, 2, 1, 1, InferElementwise},
    {"Div", 2, 2, 1, 1, InferElementwise},
    {"Relu", 1, 1, 1, 1, InferUnary},
    {"LeakyRelu", 1, 1, 1, 1, InferUnary},
    {"Clip", 1, 3, 1, 1, InferClip},
    {"Sigmoid", 1, 1, 1, 1, InferUnary},
    {"Tanh", 1, 1, 1, 1, InferUnary},
    {"HardSigmoid", 1, 1, 1, 1, InferUnary},
    {"HardSwish", 1, 1, 1, 1, InferUnary},
    {"Softmax", 1, 1, 1, 1, InferSoftmax},
    {"MaxPool", 1, 1, 1, 1, InferPool},
    {"AveragePool", 1, 1, 1, 1, InferPool},
    {"GlobalAveragePool", 1, 1, 1, 1, InferGlobalPool},
    {"GlobalMaxPool", 1, 1, 1, 1, InferGlobalPool},
    {"ReduceMean", 1, 2, 1, 1, InferReduceMean},
    {"BatchNormalization", 5, 5, 1, 1, InferBatchNorm},
    {"Concat", 1, -1, 1, 1, InferConcat},
    {"Split", 1, 2, 1, -1, InferSplit},
    {"Slice", 1, 5, 1, 1, InferSlice},
    {"Pad", 1, 4, 1, 1, InferPad},
    {"Transpose", 1, 1, 1, 1, InferTranspose},
    {"Reshape", 2, 2, 1, 1, InferReshape},
    {"Flatten", 1, 1, 1, 1, InferFlatten},
    {"Squeeze", 1, 2, 1, 1, InferSqueeze},
    {"Unsqueeze", 1, 2, 1, 1, InferUnsqueeze},
    {"Gather", 2, 2, 1, 1, InferGather},
    {"Shape", 1, 1, 1, 1, InferShape},
    {"Constant", 0, 0, 1, 1, nullptr},
    {"Identity", 1, 1, 1, 1, InferIdentity},
    {"Dropout", 1, 3, 1, 2, InferDropout},
    {"__copy", 1, 1, 1, 1, InferIdentity},
};

const OpRule* FindRule(const std::string& op) {
  for (const OpRule& rule : kRules) {
    if (op == rule.op) return &rule;
  }
  return nullptr;
}

std::string Count(int n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

Check CheckArity(const Node& node, const OpRule& rule) {
  const int n_in = static_cast<int>(node.inputs.size());
  const int n_out = static_cast<int>(node.outputs.size());
  auto fail = [&](int n, const char* what, int lo, int hi) {
    std::string expected = hi < 0     ? "at least " + std::to_string(lo)
                           : lo == hi ? std::to_string(lo)
                                      : std::to_string(lo) + " to " + std::to_string(hi);
    return Fail("node '" + node.name + "': " + node.op + " has " + Count(n, what) + ", expected " +
                expected);
  };
  if (n_in < rule.min_inputs || (rule.max_inputs >= 0 && n_in > rule.max_inputs)) {
    return fail(n_in, "input", rule.min_inputs, rule.max_inputs);
  }
  if (n_out < rule.min_outputs || (rule.max_outputs >= 0 && n_out > rule.max_outputs)) {
    return fail(n_out, "output", rule.min_outputs, rule.max_outputs);
  }
  for (int i = 0; i < rule.min_inputs; ++i) {
    if (node.inputs[i] < 0) {
      return Fail("node '" + node.name + "': required input " + std::to_string(i) + " is absent");
    }
  }
  return Check();
}

}  // namespace

Check InferShapes(Graph* graph) {
  BATON_ASSIGN_OR_RETURN(std::vector<int> order, graph->TopologicalOrder());
  std::vector<Tensor>& tensors = graph->tensors;
  for (int t : graph->inputs) {
    if (t < 0 || static_cast<size_t>(t) >= tensors.size()) return Fail("bad graph input index");
    if (!tensors[t].shape_known) return Fail("graph input '" + tensors[t].name + "' has no shape");
  }
  // Known values: constants, and small integer values propagated below.
  std::vector<std::unique_ptr<Tensor>> propagated(tensors.size());
  std::vector<const Tensor*> values(tensors.size(), nullptr);
  const std::vector<int> producer = graph->Producers();
  for (size_t t = 0; t < tensors.size(); ++t) {
    const Tensor& tensor = tensors[t];
    for (int64_t d : tensor.shape) {
      if (tensor.shape_known && d < 0) {
        return Fail("tensor '" + tensor.name + "' has a negative dim in " +
                    ShapeString(tensor.shape));
      }
    }
    if (!tensor.is_constant || producer[t] >= 0) continue;
    if (!tensor.shape_known) return Fail("constant '" + tensor.name + "' has no shape");
    if (tensor.data.size() != tensor.bytes()) {
      return Fail("constant '" + tensor.name + "' has " + std::to_string(tensor.data.size()) +
                  " bytes of data but " + DTypeName(tensor.dtype) + " " +
                  ShapeString(tensor.shape) + " needs " + std::to_string(tensor.bytes()));
    }
    values[t] = &tensor;
  }

  for (int n : order) {
    const Node& node = graph->nodes[n];
    const OpRule* rule = FindRule(node.op);
    if (rule == nullptr) return Fail("node '" + node.name + "': unsupported op '" + node.op + "'");
    BATON_TRY(CheckArity(node, *rule));
    for (int t : node.inputs) {
      if (t >= 0 && !tensors[t].shape_known) {
        return Fail("node '" + node.name + "': input '" + tensors[t].name + "' has unknown shape");
      }
    }
    Ctx c(*graph, node, values);
    if (rule->fn != nullptr) {
      BATON_TRY(rule->fn(c));
    } else {
      // Constant: the value lands in the output tensor itself.
      Tensor& out = tensors[node.outputs[0]];
      BATON_TRY(InferConstant(c, &out));
      if (out.shape_known && out.shape != c.out[0].shape) {
        return Fail("node '" + node.name + "': value shape " + ShapeString(c.out[0].shape) +
                    " disagrees with declared shape " + ShapeString(out.shape) + " of '" +
                    out.name + "'");
      }
      out.shape = c.out[0].shape;
      out.dtype = c.out[0].dtype;
      out.shape_known = true;
      values[node.outputs[0]] = &out;
      continue;
    }
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      Tensor& out = tensors[node.outputs[i]];
      const OutSpec& spec = c.out[i];
      if (out.shape_known && (out.shape != spec.shape || out.dtype != spec.dtype)) {
        return Fail("node '" + node.name + "': inferred " + DTypeName(spec.dtype) + " " +
                    ShapeString(spec.shape) + " for '" + out.name + "' but it is declared " +
                    DTypeName(out.dtype) + " " + ShapeString(out.shape));
      }
      out.shape = spec.shape;
      out.dtype = spec.dtype;
      out.shape_known = true;
    }

    // Propagate small integer values (shape arithmetic).
    if (!internal::CanEvaluate(node.op)) continue;
    bool eligible = true;
    std::vector<const Tensor*> in_values;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const int t = node.inputs[i];
      const Tensor* v = t < 0 ? nullptr : values[t];
      if (t >= 0 && v == nullptr) {
        if (node.op == "Shape") {
          v = &tensors[t];  // Shape reads only the shape.
        } else {
          eligible = false;
        }
      }
      in_values.push_back(v);
    }
    std::vector<Tensor*> out_values;
    for (int t : node.outputs) {
      const Tensor& out = tensors[t];
      if ((out.dtype != DType::Int64 && out.dtype != DType::Int32) ||
          out.elements() > kMaxPropagatedElements) {
        eligible = false;
      }
    }
    if (!eligible) continue;
    for (int t : node.outputs) {
      propagated[t] = std::make_unique<Tensor>();
      Tensor& v = *propagated[t];
      v.name = tensors[t].name;
      v.dtype = tensors[t].dtype;
      v.shape = tensors[t].shape;
      v.shape_known = true;
      v.is_constant = true;
      out_values.push_back(&v);
    }
    Check evaluated = internal::EvaluateNode(node, in_values, out_values);
    if (!evaluated.ok()) return Fail("node '" + node.name + "': " + evaluated.error());
    for (int t : node.outputs) values[t] = propagated[t].get();
  }
  return Check();
}

}  // namespace baton::planner
