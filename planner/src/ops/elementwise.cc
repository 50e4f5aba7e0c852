// Binary elementwise ops with numpy broadcasting: Add, Sub, Mul, Div, Max,
// Min (float32, int32, int64 on the host; float32 kernels), Pow (float32
// base; float32 exponent, or an int32/int64 scalar one), PRelu (the slope
// broadcasts to x).

#include <algorithm>
#include <cmath>
#include <memory>
#include <type_traits>

#include "ops/families.h"
#include "ops/infer_context.h"
#include "ops/op_util.h"

namespace baton::planner {
namespace {

Check InferElementwise(InferContext& c) {
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

Check InferPow(InferContext& c) {
  BATON_TRY(c.RequireFloat(0));
  const DType e = c.In(1).dtype;
  if (e != DType::Float32 && !((e == DType::Int64 || e == DType::Int32) && c.In(1).elements() == 1)) {
    return c.Err("exponent " + c.Desc(1) + " must be float32, or an int32/int64 scalar (is " +
                 DTypeName(e) + ")");
  }
  Shape out;
  if (!internal::BroadcastShapes(c.S(0), c.S(1), &out)) {
    return c.Err("shapes " + ShapeString(c.S(0)) + " and " + ShapeString(c.S(1)) + " of " +
                 c.Name(0) + " and " + c.Name(1) + " are not broadcastable");
  }
  c.Output(DType::Float32, out);
  return Check();
}

// QLinearAdd and QLinearMul (com.microsoft's; runtime/src/kernels/qlinear.cc): a, a_scale,
// a_zero_point, b, b_scale, b_zero_point, c_scale, [c_zero_point]. a and b
// uint8 or int8 of one dtype, scales float32 of one element, zero points of
// one element and the dtype of their tensor; the output has c_zero_point's
// dtype (uint8 when it is absent) and the broadcast shape.
Check InferQLinearAdd(InferContext& c) {
  const auto quantized = [](DType d) { return d == DType::UInt8 || d == DType::Int8; };
  for (int i : {0, 3}) {
    if (!c.Has(i)) return c.Err("input " + std::to_string(i) + " is missing");
  }
  if (!quantized(c.In(0).dtype)) {
    return c.Err("a " + c.Desc(0) + " must be uint8 or int8");
  }
  BATON_TRY(c.RequireDType(3, c.In(0).dtype));
  for (int i : {1, 4, 6}) {
    if (!c.Has(i)) return c.Err("scale input " + std::to_string(i) + " is missing");
    BATON_TRY(c.RequireFloat(i));
    if (c.Rank(i) > 1 || c.In(i).elements() != 1) {
      return c.Err("scale " + c.Desc(i) + " must have one element");
    }
  }
  for (int i : {2, 5, 7}) {
    if (!c.Has(i)) {
      if (i == 7) continue;
      return c.Err("zero point input " + std::to_string(i) + " is missing");
    }
    BATON_TRY(c.RequireDType(i, c.In(0).dtype));
    if (c.Rank(i) > 1 || c.In(i).elements() != 1) {
      return c.Err("zero point " + c.Desc(i) + " must have one element");
    }
  }
  Shape out;
  if (!internal::BroadcastShapes(c.S(0), c.S(3), &out)) {
    return c.Err("shapes " + ShapeString(c.S(0)) + " and " + ShapeString(c.S(3)) + " of " +
                 c.Name(0) + " and " + c.Name(3) + " are not broadcastable");
  }
  c.Output(c.Has(7) ? c.In(7).dtype : DType::UInt8, out);
  return Check();
}

// The slope broadcasts to x (ONNX's unidirectional broadcast).
Check InferPRelu(InferContext& c) {
  BATON_TRY(c.RequireFloat(0));
  BATON_TRY(c.RequireFloat(1));
  Shape out;
  if (!internal::BroadcastShapes(c.S(0), c.S(1), &out) || out != c.S(0)) {
    return c.Err("slope " + c.Desc(1) + " does not broadcast to " + c.Desc(0));
  }
  c.SameAsInput(0);
  return Check();
}

Result<LoweredParams> LowerElementwise(flatbuffers::FlatBufferBuilder* b, const Graph&,
                                       const Node& n) {
  const std::unique_ptr<schema::Clamp> clamp = internal::FusedClamp(n);
  LoweredParams out;
  out.type = schema::Params::ElementwiseParams;
  out.offset = schema::CreateElementwiseParams(*b, clamp.get()).Union();
  return out;
}

// The host arithmetic of each op; Div flags integer division by zero.
struct AddFn {
  template <typename T>
  T operator()(T x, T y, bool*) const {
    return x + y;
  }
};
struct SubFn {
  template <typename T>
  T operator()(T x, T y, bool*) const {
    return x - y;
  }
};
struct MulFn {
  template <typename T>
  T operator()(T x, T y, bool*) const {
    return x * y;
  }
};
struct DivFn {
  template <typename T>
  T operator()(T x, T y, bool* div_by_zero) const {
    if constexpr (std::is_integral_v<T>) {
      if (y == 0) {
        *div_by_zero = true;
        return 0;
      }
    }
    return x / y;
  }
};

// Max and Min propagate NaN, as the kernels do.
struct MaxFn {
  template <typename T>
  T operator()(T x, T y, bool*) const {
    return (x > y || x != x) ? x : y;
  }
};
struct MinFn {
  template <typename T>
  T operator()(T x, T y, bool*) const {
    return (x < y || x != x) ? x : y;
  }
};
struct PReluFn {
  template <typename T>
  T operator()(T x, T slope, bool*) const {
    return x < 0 ? x * slope : x;
  }
};

template <typename T, typename Fn>
Check Binary(const Tensor& a, const Tensor& b, Tensor* out) {
  const std::vector<T> va = internal::Values<T>(a), vb = internal::Values<T>(b);
  std::vector<T> result(static_cast<size_t>(out->elements()));
  const Shape sa = internal::BroadcastStrides(a.shape, out->shape);
  const Shape sb = internal::BroadcastStrides(b.shape, out->shape);
  bool div_by_zero = false;
  internal::ForEachIndex(out->shape, sa, sb, [&](int64_t i, int64_t ia, int64_t ib) {
    result[i] = Fn()(va[ia], vb[ib], &div_by_zero);
  });
  if (div_by_zero) return Fail("integer division by zero in '" + b.name + "'");
  internal::Store(result, out);
  return Check();
}

template <typename Fn>
Check EvalBinary(const Node& node, const std::vector<const Tensor*>& inputs,
                 const std::vector<Tensor*>& outputs) {
  if (inputs.size() < 2 || inputs[1] == nullptr) return Fail("missing second operand");
  const Tensor& a = *inputs[0];
  const Tensor& b = *inputs[1];
  if (b.dtype != a.dtype) return Fail("operands have different dtypes");
  if (b.data.size() != b.bytes()) return Fail("value of '" + b.name + "' is incomplete");
  switch (a.dtype) {
    case DType::Float32:
      return Binary<float, Fn>(a, b, outputs[0]);
    case DType::Int32:
      return Binary<int32_t, Fn>(a, b, outputs[0]);
    case DType::Int64:
      return Binary<int64_t, Fn>(a, b, outputs[0]);
    case DType::UInt8:
    case DType::Int8:
    case DType::Bool:
      break;
  }
  return internal::CannotEvaluate(node, a.dtype);
}

// Float PRelu only (the kernel's dtype).
Check EvalPRelu(const Node& node, const std::vector<const Tensor*>& inputs,
                const std::vector<Tensor*>& outputs) {
  if (inputs[0]->dtype != DType::Float32) return internal::CannotEvaluate(node, inputs[0]->dtype);
  return EvalBinary<PReluFn>(node, inputs, outputs);
}

// A float base; a float exponent, or an integer scalar one.
Check EvalPow(const Node& node, const std::vector<const Tensor*>& inputs,
              const std::vector<Tensor*>& outputs) {
  if (inputs.size() < 2 || inputs[1] == nullptr) return Fail("missing exponent");
  const Tensor& x = *inputs[0];
  const Tensor& e = *inputs[1];
  if (x.dtype != DType::Float32) return internal::CannotEvaluate(node, x.dtype);
  if (e.data.size() != e.bytes()) return Fail("value of '" + e.name + "' is incomplete");
  std::vector<float> ev;
  if (e.dtype == DType::Float32) {
    ev = e.FloatData();
  } else if (e.dtype == DType::Int64 || e.dtype == DType::Int32) {
    for (int64_t v : e.IntData()) ev.push_back(static_cast<float>(v));
  } else {
    return internal::CannotEvaluate(node, e.dtype);
  }
  const std::vector<float> xv = x.FloatData();
  std::vector<float> result(static_cast<size_t>(outputs[0]->elements()));
  const Shape sa = internal::BroadcastStrides(x.shape, outputs[0]->shape);
  const Shape sb = internal::BroadcastStrides(e.shape, outputs[0]->shape);
  internal::ForEachIndex(outputs[0]->shape, sa, sb, [&](int64_t i, int64_t ia, int64_t ib) {
    result[i] = std::pow(xv[ia], ev[ib]);
  });
  internal::Store(result, outputs[0]);
  return Check();
}

// name, inputs min..max, outputs min..max, infer, has_kernel, kernel op,
// kernel inputs, lower, macs, eval, eval_reads_shapes_only
// clang-format off
const OpDef kOps[] = {
    {"Add", 2, 2, 1, 1, InferElementwise, true, schema::Op::Add, 2, LowerElementwise, nullptr, EvalBinary<AddFn>, false},
    {"Sub", 2, 2, 1, 1, InferElementwise, true, schema::Op::Sub, 2, LowerElementwise, nullptr, EvalBinary<SubFn>, false},
    {"Mul", 2, 2, 1, 1, InferElementwise, true, schema::Op::Mul, 2, LowerElementwise, nullptr, EvalBinary<MulFn>, false},
    {"Div", 2, 2, 1, 1, InferElementwise, true, schema::Op::Div, 2, LowerElementwise, nullptr, EvalBinary<DivFn>, false},
    {"Pow", 2, 2, 1, 1, InferPow, true, schema::Op::Pow, 2, nullptr, nullptr, EvalPow, false},
    {"Max", 2, 2, 1, 1, InferElementwise, true, schema::Op::Max, 2, nullptr, nullptr, EvalBinary<MaxFn>, false},
    {"Min", 2, 2, 1, 1, InferElementwise, true, schema::Op::Min, 2, nullptr, nullptr, EvalBinary<MinFn>, false},
    {"PRelu", 2, 2, 1, 1, InferPRelu, true, schema::Op::PRelu, 2, nullptr, nullptr, EvalPRelu, false},
    {"QLinearAdd", 7, 8, 1, 1, InferQLinearAdd, true, schema::Op::QLinearAdd, kAllInputs, LowerElementwise, nullptr, nullptr, false},
    {"QLinearMul", 7, 8, 1, 1, InferQLinearAdd, true, schema::Op::QLinearMul, kAllInputs, LowerElementwise, nullptr, nullptr, false},
};
// clang-format on

}  // namespace

const OpFamily kElementwiseOps = {kOps, sizeof(kOps) / sizeof(kOps[0])};

}  // namespace baton::planner
