// Comparisons and boolean logic with numpy broadcasting: Equal, Greater,
// Less (any numeric dtype in, bool out), Not, And (bool), and Where (a bool
// condition selecting between two tensors of one dtype). They fold shape
// arithmetic (masks, `-1` substitution in Expand/Reshape shapes) and run as
// kernels when an input is not constant.

#include <algorithm>

#include "ops/families.h"
#include "ops/infer_context.h"
#include "ops/op_util.h"

namespace baton::planner {
namespace {

using internal::BroadcastStrides;
using internal::ForEachIndex;
using internal::Values;

bool IsNumeric(DType d) { return d != DType::Bool; }

Check BroadcastOutput(InferContext& c, int a, int b, Shape* out) {
  if (!internal::BroadcastShapes(c.S(a), c.S(b), out)) {
    return c.Err("shapes " + ShapeString(c.S(a)) + " and " + ShapeString(c.S(b)) + " of " +
                 c.Name(a) + " and " + c.Name(b) + " are not broadcastable");
  }
  return Check();
}

Check SameDType(InferContext& c, int a, int b) {
  if (c.In(a).dtype != c.In(b).dtype) {
    return c.Err(std::string("dtypes ") + DTypeName(c.In(a).dtype) + " and " +
                 DTypeName(c.In(b).dtype) + " of " + c.Name(a) + " and " + c.Name(b) + " differ");
  }
  return Check();
}

// Equal takes any dtype; Greater and Less numeric ones.
template <bool kAllowBool>
Check InferCompare(InferContext& c) {
  BATON_TRY(SameDType(c, 0, 1));
  if (!kAllowBool && !IsNumeric(c.In(0).dtype)) {
    return c.Err("input " + c.Name(0) + " must be numeric, got bool");
  }
  Shape out;
  BATON_TRY(BroadcastOutput(c, 0, 1, &out));
  c.Output(DType::Bool, out);
  return Check();
}

Check InferNot(InferContext& c) {
  BATON_TRY(c.RequireDType(0, DType::Bool));
  c.SameAsInput(0);
  return Check();
}

Check InferAnd(InferContext& c) {
  BATON_TRY(c.RequireDType(0, DType::Bool));
  BATON_TRY(c.RequireDType(1, DType::Bool));
  Shape out;
  BATON_TRY(BroadcastOutput(c, 0, 1, &out));
  c.Output(DType::Bool, out);
  return Check();
}

Check InferWhere(InferContext& c) {
  BATON_TRY(c.RequireDType(0, DType::Bool));
  BATON_TRY(SameDType(c, 1, 2));
  Shape xy, out;
  BATON_TRY(BroadcastOutput(c, 1, 2, &xy));
  if (!internal::BroadcastShapes(c.S(0), xy, &out)) {
    return c.Err("condition " + c.Desc(0) + " does not broadcast with " + ShapeString(xy));
  }
  c.Output(c.In(1).dtype, out);
  return Check();
}

struct EqualFn {
  template <typename T>
  bool operator()(T a, T b) const {
    return a == b;
  }
};
struct GreaterFn {
  template <typename T>
  bool operator()(T a, T b) const {
    return a > b;
  }
};
struct LessFn {
  template <typename T>
  bool operator()(T a, T b) const {
    return a < b;
  }
};
struct AndFn {
  template <typename T>
  bool operator()(T a, T b) const {
    return a != 0 && b != 0;
  }
};

// out[i] = Fn(a[i'], b[i'']) as bool, broadcasting a and b.
template <typename Fn>
Check EvalBoolBinary(const Node& node, const std::vector<const Tensor*>& inputs,
                     const std::vector<Tensor*>& outputs) {
  BATON_TRY(internal::RequireValue(inputs, 1));
  const Tensor& a = *inputs[0];
  const Tensor& b = *inputs[1];
  if (a.dtype != b.dtype) return Fail("operands have different dtypes");
  Tensor* y = outputs[0];
  std::vector<uint8_t> result(static_cast<size_t>(y->elements()));
  const bool known = internal::VisitDType(a.dtype, [&](auto zero) {
    using T = decltype(zero);
    const std::vector<T> va = Values<T>(a), vb = Values<T>(b);
    ForEachIndex(y->shape, BroadcastStrides(a.shape, y->shape), BroadcastStrides(b.shape, y->shape),
                 [&](int64_t i, int64_t ia, int64_t ib) { result[i] = Fn()(va[ia], vb[ib]); });
  });
  if (!known) return internal::CannotEvaluate(node, a.dtype);
  internal::Store(result, y);
  return Check();
}

Check EvalNot(const Node&, const std::vector<const Tensor*>& inputs,
              const std::vector<Tensor*>& outputs) {
  std::vector<uint8_t> v = Values<uint8_t>(*inputs[0]);
  for (uint8_t& x : v) x = x == 0 ? 1 : 0;
  internal::Store(v, outputs[0]);
  return Check();
}

Check EvalWhere(const Node&, const std::vector<const Tensor*>& inputs,
                const std::vector<Tensor*>& outputs) {
  BATON_TRY(internal::RequireValue(inputs, 1));
  BATON_TRY(internal::RequireValue(inputs, 2));
  const Tensor& cond = *inputs[0];
  const Tensor& x = *inputs[1];
  const Tensor& y = *inputs[2];
  Tensor* out = outputs[0];
  const size_t esize = DTypeBytes(x.dtype);
  // The condition's element for every output element, then the selection.
  std::vector<uint8_t> take_x(static_cast<size_t>(out->elements()));
  const Shape sc = BroadcastStrides(cond.shape, out->shape);
  ForEachIndex(out->shape, sc, sc, [&](int64_t i, int64_t ic, int64_t) {
    take_x[i] = cond.data[static_cast<size_t>(ic)] != 0;
  });
  out->data.resize(out->bytes());
  ForEachIndex(out->shape, BroadcastStrides(x.shape, out->shape),
               BroadcastStrides(y.shape, out->shape), [&](int64_t i, int64_t ix, int64_t iy) {
                 if (take_x[i]) {
                   internal::CopyElems(x.data.data(), ix, out->data.data(), i, 1, esize);
                 } else {
                   internal::CopyElems(y.data.data(), iy, out->data.data(), i, 1, esize);
                 }
               });
  return Check();
}

// name, inputs min..max, outputs min..max, infer, has_kernel, kernel op,
// kernel inputs, lower, macs, eval, eval_reads_shapes_only
// clang-format off
const OpDef kOps[] = {
    {"Equal", 2, 2, 1, 1, InferCompare<true>, true, schema::Op::Equal, 2, nullptr, nullptr, EvalBoolBinary<EqualFn>, false},
    {"Greater", 2, 2, 1, 1, InferCompare<false>, true, schema::Op::Greater, 2, nullptr, nullptr, EvalBoolBinary<GreaterFn>, false},
    {"Less", 2, 2, 1, 1, InferCompare<false>, true, schema::Op::Less, 2, nullptr, nullptr, EvalBoolBinary<LessFn>, false},
    {"Not", 1, 1, 1, 1, InferNot, true, schema::Op::Not, 1, nullptr, nullptr, EvalNot, false},
    {"And", 2, 2, 1, 1, InferAnd, true, schema::Op::And, 2, nullptr, nullptr, EvalBoolBinary<AndFn>, false},
    {"Where", 3, 3, 1, 1, InferWhere, true, schema::Op::Where, 3, nullptr, nullptr, EvalWhere, false},
};
// clang-format on

}  // namespace

const OpFamily kLogicOps = {kOps, sizeof(kOps) / sizeof(kOps[0])};

}  // namespace baton::planner
