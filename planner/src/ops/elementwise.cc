// Binary elementwise ops with numpy broadcasting.

#include <algorithm>
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

// name, inputs min..max, outputs min..max, infer, has_kernel, kernel op,
// kernel inputs, lower, macs, eval, eval_reads_shapes_only
// clang-format off
const OpDef kOps[] = {
    {"Add", 2, 2, 1, 1, InferElementwise, true, schema::Op::Add, 2, LowerElementwise, nullptr, EvalBinary<AddFn>, false},
    {"Sub", 2, 2, 1, 1, InferElementwise, true, schema::Op::Sub, 2, LowerElementwise, nullptr, EvalBinary<SubFn>, false},
    {"Mul", 2, 2, 1, 1, InferElementwise, true, schema::Op::Mul, 2, LowerElementwise, nullptr, EvalBinary<MulFn>, false},
    {"Div", 2, 2, 1, 1, InferElementwise, true, schema::Op::Div, 2, LowerElementwise, nullptr, EvalBinary<DivFn>, false},
};
// clang-format on

}  // namespace

const OpFamily kElementwiseOps = {kOps, sizeof(kOps) / sizeof(kOps[0])};

}  // namespace baton::planner
