// Shape arithmetic torch exports around shapes and masks: ConstantOfShape,
// Range, Ceil, Floor and ReduceProd, which Baton evaluates only at plan time
// (no kernel: the simplifier rejects them when an input is not constant),
// and Cast and Expand, which also run as kernels.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "ops/families.h"
#include "ops/infer_context.h"
#include "ops/op_util.h"

namespace baton::planner {
namespace {

using internal::Values;

// ONNX TensorProto.DataType codes Baton holds.
std::optional<DType> OnnxDType(int64_t code) {
  switch (code) {
    case 1:
      return DType::Float32;
    case 2:
      return DType::UInt8;
    case 3:
      return DType::Int8;
    case 6:
      return DType::Int32;
    case 7:
      return DType::Int64;
    case 9:
      return DType::Bool;
    default:
      return std::nullopt;
  }
}

// The message of a fold-only op whose parameter input has no value.
Error NotConstant(const InferContext& c, int i) {
  return c.Err("its input " + c.Name(i) + " is not constant; Baton folds " + c.node().op +
               " only at plan time");
}

// Output shapes that ConstantOfShape, Range and Expand build from a model's
// numbers must fit the planner's size arithmetic.
Check CheckFits(const InferContext& c, const Shape& shape) {
  if (!ShapeFits(shape)) {
    return c.Err("output shape " + ShapeString(shape) + " is too large (2^63 bytes or more)");
  }
  return Check();
}

// ---- Cast ----

// ONNX Cast: to bool, x != 0; float to integer truncates toward zero,
// saturating at the target's range (NaN gives 0); between integers, two's
// complement wrap-around as numpy's astype. The runtime's Cast kernel
// (runtime/src/kernels/cast_expand.cc) implements the same rules.
template <typename To, typename From>
To CastValue(From v, bool to_bool) {
  if (to_bool) return static_cast<To>(v != 0 ? 1 : 0);
  if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    if (std::isnan(v)) return 0;
    const double d = static_cast<double>(v);
    if (d <= static_cast<double>(std::numeric_limits<To>::min())) {
      return std::numeric_limits<To>::min();
    }
    if (d >= static_cast<double>(std::numeric_limits<To>::max())) {
      return std::numeric_limits<To>::max();
    }
    return static_cast<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

Check InferCast(InferContext& c) {
  const Attr* to = c.node().FindAttr("to");
  if (to == nullptr || to->kind != Attr::Kind::kInt) return c.Err("needs an int attribute 'to'");
  const std::optional<DType> dtype = OnnxDType(to->i);
  if (!dtype) {
    return c.Err("Cast to ONNX data type " + std::to_string(to->i) +
                 " is not supported (float, uint8, int8, int32, int64, bool are)");
  }
  c.Output(*dtype, c.S(0));
  return Check();
}

Check EvalCast(const Node& node, const std::vector<const Tensor*>& inputs,
               const std::vector<Tensor*>& outputs) {
  const Tensor& x = *inputs[0];
  Tensor* y = outputs[0];
  const bool to_bool = y->dtype == DType::Bool;
  bool ok = internal::VisitDType(x.dtype, [&](auto from) {
    using From = decltype(from);
    const std::vector<From> v = Values<From>(x);
    internal::VisitDType(y->dtype, [&](auto to) {
      using To = decltype(to);
      std::vector<To> out(v.size());
      for (size_t i = 0; i < v.size(); ++i) out[i] = CastValue<To>(v[i], to_bool);
      internal::Store(out, y);
    });
  });
  if (!ok) return internal::CannotEvaluate(node, x.dtype);
  return Check();
}

// ---- Ceil, Floor ----

Check InferRounding(InferContext& c) {
  BATON_TRY(c.RequireFloat(0));
  c.SameAsInput(0);
  return Check();
}

template <bool kCeil>
Check EvalRounding(const Node&, const std::vector<const Tensor*>& inputs,
                   const std::vector<Tensor*>& outputs) {
  std::vector<float> v = Values<float>(*inputs[0]);
  for (float& x : v) x = kCeil ? std::ceil(x) : std::floor(x);
  internal::Store(v, outputs[0]);
  return Check();
}

// ---- ConstantOfShape ----
// The importer turns the ONNX `value` tensor attribute into `value` (an int
// or float attribute) and `value_dtype` (a dtype name); absent: float32 0.

Result<DType> ConstantOfShapeDType(const Node& node) {
  const Attr* value = node.FindAttr("value");
  DType dtype = value != nullptr && value->kind == Attr::Kind::kInt ? DType::Int64 : DType::Float32;
  if (const Attr* name = node.FindAttr("value_dtype")) {
    std::optional<DType> parsed = ParseDType(name->s);
    if (!parsed) return Fail("unknown value_dtype '" + name->s + "'");
    dtype = *parsed;
  }
  return dtype;
}

Check InferConstantOfShape(InferContext& c) {
  if (c.Value(0) == nullptr) return NotConstant(c, 0);
  BATON_ASSIGN_OR_RETURN(Shape shape, c.Ints(0, "shape"));
  for (int64_t d : shape) {
    if (d < 0) return c.Err("shape " + ShapeString(shape) + " has a negative dim");
  }
  BATON_TRY(CheckFits(c, shape));
  auto dtype = ConstantOfShapeDType(c.node());
  if (!dtype.ok()) return c.Err(dtype.error());
  c.Output(*dtype, shape);
  return Check();
}

Check EvalConstantOfShape(const Node& node, const std::vector<const Tensor*>&,
                          const std::vector<Tensor*>& outputs) {
  Tensor* y = outputs[0];
  const Attr* value = node.FindAttr("value");
  const double v = value == nullptr                    ? 0.0
                   : value->kind == Attr::Kind::kFloat ? static_cast<double>(value->f)
                                                       : static_cast<double>(value->i);
  const int64_t iv = value != nullptr && value->kind == Attr::Kind::kInt ? value->i : 0;
  internal::VisitDType(y->dtype, [&](auto zero) {
    using T = decltype(zero);
    T fill;
    if constexpr (std::is_floating_point_v<T>) {
      fill = static_cast<T>(v);
    } else {
      fill = y->dtype == DType::Bool                               ? static_cast<T>(v != 0.0)
             : value != nullptr && value->kind == Attr::Kind::kInt ? static_cast<T>(iv)
                                                                   : CastValue<T>(v, false);
    }
    internal::Store(std::vector<T>(static_cast<size_t>(y->elements()), fill), y);
  });
  return Check();
}

// ---- Range ----

// Elements of Range(start, limit, delta): max(ceil((limit - start) / delta), 0).
Result<int64_t> RangeCount(const Tensor& start, const Tensor& limit, const Tensor& delta) {
  long double s = 0, l = 0, d = 0;
  internal::VisitDType(start.dtype, [&](auto zero) {
    using T = decltype(zero);
    s = static_cast<long double>(Values<T>(start)[0]);
    l = static_cast<long double>(Values<T>(limit)[0]);
    d = static_cast<long double>(Values<T>(delta)[0]);
  });
  if (d == 0) return Fail("delta is 0");
  const long double count = std::ceil((l - s) / d);
  if (!std::isfinite(count)) return Fail("start, limit or delta is not finite");
  // Bounded by the 2^63-byte shape limit before the conversion to int64.
  if (count > static_cast<long double>(std::numeric_limits<int64_t>::max() / 8)) {
    return Fail("Range of " + std::to_string(static_cast<double>(count)) +
                " elements is too large");
  }
  return count <= 0 ? int64_t{0} : static_cast<int64_t>(count);
}

Check SameDTypes(const InferContext& c) {
  for (int i = 1; i < c.NumInputs(); ++i) {
    if (c.In(i).dtype != c.In(0).dtype) {
      return c.Err("dtypes of " + c.Name(0) + " and " + c.Name(i) + " differ");
    }
  }
  return Check();
}

Check InferRange(InferContext& c) {
  for (int i = 0; i < 3; ++i) {
    if (c.Value(i) == nullptr) return NotConstant(c, i);
    if (c.In(i).elements() != 1) return c.Err("input " + c.Desc(i) + " must be a scalar");
  }
  BATON_TRY(SameDTypes(c));
  const DType dtype = c.In(0).dtype;
  if (dtype != DType::Float32 && dtype != DType::Int32 && dtype != DType::Int64) {
    return c.Err(std::string("Range on ") + DTypeName(dtype) + " is not supported");
  }
  auto count = RangeCount(*c.Value(0), *c.Value(1), *c.Value(2));
  if (!count.ok()) return c.Err(count.error());
  c.Output(dtype, {*count});
  return Check();
}

Check EvalRange(const Node&, const std::vector<const Tensor*>& inputs,
                const std::vector<Tensor*>& outputs) {
  BATON_TRY(internal::RequireValue(inputs, 1));
  BATON_TRY(internal::RequireValue(inputs, 2));
  Tensor* y = outputs[0];
  internal::VisitDType(y->dtype, [&](auto zero) {
    using T = decltype(zero);
    const T start = Values<T>(*inputs[0])[0];
    const T delta = Values<T>(*inputs[2])[0];
    std::vector<T> out(static_cast<size_t>(y->elements()));
    // ONNX: output[i] = start + i * delta, in T (wrapping cannot occur: the
    // count keeps every value between start and limit).
    for (size_t i = 0; i < out.size(); ++i) {
      out[i] = static_cast<T>(start + static_cast<T>(i) * delta);
    }
    internal::Store(out, y);
  });
  return Check();
}

// ---- ReduceProd ----

Result<std::vector<bool>> ReducedAxes(const InferContext& c, size_t rank,
                                      const std::vector<int64_t>& axes_in) {
  std::vector<bool> reduced(rank, axes_in.empty());
  for (int64_t a : axes_in) {
    auto axis = c.Axis(a, rank, "axis");
    if (!axis.ok()) return Fail(axis.error());
    if (reduced[*axis]) return c.Err("axis " + std::to_string(a) + " is repeated");
    reduced[*axis] = true;
  }
  return reduced;
}

Check InferReduceProd(InferContext& c) {
  const DType dtype = c.In(0).dtype;
  if (dtype != DType::Float32 && dtype != DType::Int32 && dtype != DType::Int64) {
    return c.Err(std::string("ReduceProd on ") + DTypeName(dtype) + " is not supported");
  }
  std::vector<int64_t> axes = c.node().GetInts("axes");
  if (c.Has(1)) {
    BATON_ASSIGN_OR_RETURN(axes, c.Ints(1, "axes"));
  }
  const size_t rank = c.Rank(0);
  if (axes.empty() && c.node().GetInt("noop_with_empty_axes", 0) != 0) {
    c.SameAsInput(0);
    return Check();
  }
  BATON_ASSIGN_OR_RETURN(std::vector<bool> reduced, ReducedAxes(c, rank, axes));
  const bool keepdims = c.node().GetInt("keepdims", 1) != 0;
  Shape out;
  for (size_t d = 0; d < rank; ++d) {
    if (!reduced[d]) {
      out.push_back(c.S(0)[d]);
    } else if (keepdims) {
      out.push_back(1);
    }
  }
  c.Output(dtype, out);
  return Check();
}

Check EvalReduceProd(const Node& node, const std::vector<const Tensor*>& inputs,
                     const std::vector<Tensor*>& outputs) {
  const Tensor& x = *inputs[0];
  Tensor* y = outputs[0];
  if (x.elements() == y->elements()) {  // nothing reduced (or only size-1 dims)
    y->data = x.data;
    return Check();
  }
  // Which input dims are reduced: those whose size differs from the output's
  // when keepdims, else those missing from it; recomputed from the axes.
  std::vector<int64_t> axes = node.GetInts("axes");
  if (internal::HasInput(node, 1)) {
    BATON_TRY(internal::RequireValue(inputs, 1));
    axes = inputs[1]->IntData();
  }
  const size_t rank = x.shape.size();
  std::vector<bool> reduced(rank, axes.empty());
  for (int64_t a : axes) reduced[static_cast<size_t>(internal::NormalizeAxis(a, rank))] = true;
  // Output strides over the input's dims (0 along reduced dims).
  Shape kept;
  for (size_t d = 0; d < rank; ++d) kept.push_back(reduced[d] ? 1 : x.shape[d]);
  const Shape out_strides = internal::BroadcastStrides(kept, x.shape);
  bool ok = internal::VisitDType(x.dtype, [&](auto zero) {
    using T = decltype(zero);
    const std::vector<T> v = Values<T>(x);
    std::vector<T> out(static_cast<size_t>(y->elements()), static_cast<T>(1));
    internal::ForEachIndex(x.shape, out_strides, out_strides,
                           [&](int64_t i, int64_t o, int64_t) { out[o] = out[o] * v[i]; });
    internal::Store(out, y);
  });
  if (!ok) return internal::CannotEvaluate(node, x.dtype);
  return Check();
}

// ---- Expand ----

Check InferExpand(InferContext& c) {
  if (c.Value(1) == nullptr) {
    return c.Err("shape input " + c.Name(1) +
                 " is not constant (dynamic shapes are not supported)");
  }
  BATON_ASSIGN_OR_RETURN(Shape shape, c.Ints(1, "shape"));
  for (int64_t d : shape) {
    if (d < 0) return c.Err("shape " + ShapeString(shape) + " has a negative dim");
  }
  Shape out;
  if (!internal::BroadcastShapes(c.S(0), shape, &out)) {
    return c.Err("cannot expand " + c.Desc(0) + " to " + ShapeString(shape));
  }
  BATON_TRY(CheckFits(c, out));
  c.Output(c.In(0).dtype, out);
  return Check();
}

Check EvalExpand(const Node&, const std::vector<const Tensor*>& inputs,
                 const std::vector<Tensor*>& outputs) {
  const Tensor& x = *inputs[0];
  Tensor* y = outputs[0];
  const Shape strides = internal::BroadcastStrides(x.shape, y->shape);
  internal::CopyStrided(x, strides, 0, y);
  return Check();
}

// ---- Mod (fold-only) ----

// swin_t's window padding: (window - W % window) % window on shapes.
Check InferMod(InferContext& c) {
  if (c.In(0).dtype != c.In(1).dtype) {
    return c.Err("dtypes of " + c.Name(0) + " and " + c.Name(1) + " differ");
  }
  if (c.In(0).dtype == DType::Bool) return c.Err("input " + c.Name(0) + " must be numeric");
  Shape out;
  if (!internal::BroadcastShapes(c.S(0), c.S(1), &out)) {
    return c.Err("shapes " + ShapeString(c.S(0)) + " and " + ShapeString(c.S(1)) +
                 " are not broadcastable");
  }
  c.Output(c.In(0).dtype, out);
  return Check();
}

// fmod=1: the remainder has the dividend's sign (C fmod, %); fmod=0: the
// divisor's (Python, numpy.mod). Integer division by 0 is an error.
template <typename T>
Check ModValues(const Tensor& a, const Tensor& b, bool fmod, Tensor* y) {
  const std::vector<T> va = Values<T>(a), vb = Values<T>(b);
  std::vector<T> out(static_cast<size_t>(y->elements()));
  bool zero = false;
  internal::ForEachIndex(y->shape, internal::BroadcastStrides(a.shape, y->shape),
                         internal::BroadcastStrides(b.shape, y->shape),
                         [&](int64_t i, int64_t ia, int64_t ib) {
                           const T x = va[ia], d = vb[ib];
                           T r;
                           if constexpr (std::is_floating_point_v<T>) {
                             r = std::fmod(x, d);
                             if (!fmod && r != 0 && ((r < 0) != (d < 0))) r += d;
                           } else {
                             if (d == 0) {
                               zero = true;
                               return;
                             }
                             r = static_cast<T>(x % d);
                             if (!fmod && r != 0 && ((r < 0) != (d < 0))) r = static_cast<T>(r + d);
                           }
                           out[static_cast<size_t>(i)] = r;
                         });
  if (zero) return Fail("integer Mod by zero");
  internal::Store(out, y);
  return Check();
}

Check EvalMod(const Node& node, const std::vector<const Tensor*>& inputs,
              const std::vector<Tensor*>& outputs) {
  BATON_TRY(internal::RequireValue(inputs, 1));
  const bool fmod = node.GetInt("fmod", 0) != 0;
  Check result;
  const bool ok = internal::VisitDType(inputs[0]->dtype, [&](auto zero) {
    using T = decltype(zero);
    result = ModValues<T>(*inputs[0], *inputs[1], fmod, outputs[0]);
  });
  if (!ok) return internal::CannotEvaluate(node, inputs[0]->dtype);
  return result;
}

// ---- ScatterND (fold-only) ----

// swin_t's shifted-window attention mask: slices of a zero tensor set to
// constants. reduction must be "none".
Check InferScatterND(InferContext& c) {
  BATON_TRY(c.RequireDType(1, DType::Int64));
  if (c.node().GetString("reduction", "none") != "none") {
    return c.Err("reduction '" + c.node().GetString("reduction", "") + "' is not supported");
  }
  if (c.In(2).dtype != c.In(0).dtype) {
    return c.Err("dtypes of " + c.Name(0) + " and " + c.Name(2) + " differ");
  }
  const Shape& data = c.S(0);
  const Shape& indices = c.S(1);
  if (indices.empty() || indices.back() < 1 || indices.back() > static_cast<int64_t>(data.size())) {
    return c.Err("indices " + c.Desc(1) + " do not index " + c.Desc(0));
  }
  Shape updates(indices.begin(), indices.end() - 1);
  updates.insert(updates.end(), data.begin() + indices.back(), data.end());
  if (c.S(2) != updates) {
    return c.Err("updates " + c.Desc(2) + " should have shape " + ShapeString(updates));
  }
  c.SameAsInput(0);
  return Check();
}

Check EvalScatterND(const Node& node, const std::vector<const Tensor*>& inputs,
                    const std::vector<Tensor*>& outputs) {
  BATON_TRY(internal::RequireValue(inputs, 1));
  BATON_TRY(internal::RequireValue(inputs, 2));
  const Tensor& data = *inputs[0];
  const Tensor& updates = *inputs[2];
  const std::vector<int64_t> idx = Values<int64_t>(*inputs[1]);
  const size_t k = static_cast<size_t>(inputs[1]->shape.back());
  const size_t elem = DTypeBytes(data.dtype);
  int64_t slice = 1;
  for (size_t d = k; d < data.shape.size(); ++d) slice *= data.shape[d];
  const Shape strides = internal::Strides(data.shape);
  Tensor* y = outputs[0];
  y->data = data.data;
  const size_t count = k == 0 ? 0 : idx.size() / k;
  for (size_t n = 0; n < count; ++n) {
    int64_t offset = 0;
    for (size_t d = 0; d < k; ++d) {
      int64_t i = idx[n * k + d];
      if (i < 0) i += data.shape[d];
      if (i < 0 || i >= data.shape[d]) {
        return Fail("ScatterND index " + std::to_string(idx[n * k + d]) + " is out of range for dim " +
                    std::to_string(d) + " of size " + std::to_string(data.shape[d]));
      }
      offset += i * strides[d];
    }
    std::memcpy(y->data.data() + static_cast<size_t>(offset) * elem,
                updates.data.data() + n * static_cast<size_t>(slice) * elem,
                static_cast<size_t>(slice) * elem);
  }
  (void)node;
  return Check();
}

// name, inputs min..max, outputs min..max, infer, has_kernel, kernel op,
// kernel inputs, lower, macs, eval, eval_reads_shapes_only
// clang-format off
const OpDef kOps[] = {
    {"ConstantOfShape", 1, 1, 1, 1, InferConstantOfShape, false, schema::Op::Copy, 1, nullptr, nullptr, EvalConstantOfShape, false},
    {"Range", 3, 3, 1, 1, InferRange, false, schema::Op::Copy, 3, nullptr, nullptr, EvalRange, false},
    {"Ceil", 1, 1, 1, 1, InferRounding, false, schema::Op::Copy, 1, nullptr, nullptr, EvalRounding<true>, false},
    {"Floor", 1, 1, 1, 1, InferRounding, false, schema::Op::Copy, 1, nullptr, nullptr, EvalRounding<false>, false},
    {"ReduceProd", 1, 2, 1, 1, InferReduceProd, false, schema::Op::Copy, 1, nullptr, nullptr, EvalReduceProd, false},
    {"Mod", 2, 2, 1, 1, InferMod, false, schema::Op::Copy, 2, nullptr, nullptr, EvalMod, false},
    {"ScatterND", 3, 3, 1, 1, InferScatterND, false, schema::Op::Copy, 3, nullptr, nullptr, EvalScatterND, false},
    {"Cast", 1, 1, 1, 1, InferCast, true, schema::Op::Cast, 1, nullptr, nullptr, EvalCast, false},
    {"Expand", 2, 2, 1, 1, InferExpand, true, schema::Op::Expand, 1, nullptr, nullptr, EvalExpand, false},
};
// clang-format on

}  // namespace

const OpFamily kShapeMathOps = {kOps, sizeof(kOps) / sizeof(kOps[0])};

}  // namespace baton::planner
