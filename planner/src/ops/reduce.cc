// Reductions: ReduceMean, ReduceSum, ReduceMax, ReduceMin, ReduceL2 (axes
// from the attribute, or from input 1 as ReduceSum has it from opset 13),
// ArgMax/ArgMin (one axis, int64 output) and TopK (a constant k).

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <type_traits>

#include "ops/families.h"
#include "ops/infer_context.h"
#include "ops/op_util.h"

namespace baton::planner {
namespace {

// The reduced axes of a Reduce* node over an input of rank `rank`, non-negative
// and sorted; `axes` is the attribute or input 1's value. Empty axes mean all
// axes (noop_with_empty_axes is handled by the caller).
Result<std::vector<int64_t>> NormalizedAxes(std::vector<int64_t> axes, size_t rank) {
  if (axes.empty()) {
    axes.resize(rank);
    std::iota(axes.begin(), axes.end(), int64_t{0});
    return axes;
  }
  const int64_t r = static_cast<int64_t>(rank);
  std::vector<bool> seen(rank, false);
  for (int64_t& a : axes) {
    if (a < -r || a >= r) {
      return Fail("axis " + std::to_string(a) + " is out of range for rank " +
                  std::to_string(rank));
    }
    const int64_t n = a < 0 ? a + r : a;
    if (seen[n]) return Fail("axis " + std::to_string(a) + " is repeated");
    seen[n] = true;
    a = n;
  }
  std::sort(axes.begin(), axes.end());
  return axes;
}

// The reduced shape: reduced dims dropped, or kept as 1.
Shape ReducedShape(const Shape& in, const std::vector<int64_t>& axes, bool keepdims) {
  Shape out;
  for (size_t d = 0; d < in.size(); ++d) {
    const bool reduced = std::find(axes.begin(), axes.end(), static_cast<int64_t>(d)) != axes.end();
    if (!reduced) {
      out.push_back(in[d]);
    } else if (keepdims) {
      out.push_back(1);
    }
  }
  return out;
}

// ReduceMax and ReduceMin also take integers (shape arithmetic folds them).
bool AcceptsIntegers(const Node& n) { return n.op == "ReduceMax" || n.op == "ReduceMin"; }

Check InferReduce(InferContext& c) {
  const DType dtype = c.In(0).dtype;
  const bool integer = dtype == DType::Int64 || dtype == DType::Int32;
  if (!(integer && AcceptsIntegers(c.node()))) BATON_TRY(c.RequireFloat(0));
  std::vector<int64_t> axes = c.node().GetInts("axes");
  if (c.Has(1)) {
    BATON_ASSIGN_OR_RETURN(axes, c.Ints(1, "axes"));
  }
  const bool keepdims = c.node().GetInt("keepdims", 1) != 0;
  if (axes.empty() && c.node().GetInt("noop_with_empty_axes", 0) != 0) {
    c.SameAsInput(0);
    return Check();
  }
  auto normalized = NormalizedAxes(axes, c.Rank(0));
  if (!normalized.ok()) return c.Err(normalized.error());
  c.Output(dtype, ReducedShape(c.S(0), *normalized, keepdims));
  return Check();
}

// The axes of a Reduce* node from the attribute or constant input 1.
Result<std::vector<int64_t>> ReduceAxesOf(const Node& n, const Tensor* axes_input, size_t rank) {
  std::vector<int64_t> axes = n.GetInts("axes");
  if (axes_input != nullptr) axes = axes_input->IntData();
  return NormalizedAxes(axes, rank);
}

Result<LoweredParams> ReduceParams(flatbuffers::FlatBufferBuilder* b,
                                   const std::vector<int64_t>& axes, bool keepdims) {
  const std::vector<int32_t> a32 = internal::I32(axes);
  LoweredParams out;
  out.type = schema::Params::ReduceParams;
  out.offset = schema::CreateReduceParamsDirect(*b, &a32, keepdims).Union();
  return out;
}

// The plan lists the reduced axes explicitly, non-negative and sorted.
Result<LoweredParams> LowerReduce(flatbuffers::FlatBufferBuilder* b, const Graph& g,
                                  const Node& n) {
  const size_t rank = internal::InputTensor(g, n, 0).shape.size();
  const Tensor* axes_input = nullptr;
  if (internal::HasInput(n, 1)) {
    axes_input = internal::ConstInput(g, n, 1);
    if (axes_input == nullptr) return Fail(internal::NodeWhere(n) + ": axes must be constant");
  }
  auto axes = ReduceAxesOf(n, axes_input, rank);
  if (!axes.ok()) return Fail(internal::NodeWhere(n) + ": " + axes.error());
  return ReduceParams(b, *axes, n.GetInt("keepdims", 1) != 0);
}

// How each reduction starts, accumulates and finishes (in double).
enum class Kind { kSum, kMean, kMax, kMin, kL2 };

Kind KindOf(const std::string& op) {
  if (op == "ReduceSum") return Kind::kSum;
  if (op == "ReduceMax") return Kind::kMax;
  if (op == "ReduceMin") return Kind::kMin;
  if (op == "ReduceL2") return Kind::kL2;
  return Kind::kMean;
}

// Calls fn(in_index, out_index) for every input element, where out_index is
// the element of the reduced output it contributes to.
template <typename Fn>
void ForEachReduced(const Shape& in, const std::vector<int64_t>& axes, Fn fn) {
  Shape kept(in);
  for (int64_t a : axes) kept[a] = 1;
  const Shape strides = internal::BroadcastStrides(kept, in);
  internal::ForEachIndex(in, strides, strides, [&](int64_t i, int64_t o, int64_t) { fn(i, o); });
}

template <typename T>
void ReduceValues(Kind kind, const Tensor& x, const std::vector<int64_t>& axes, Tensor* y) {
  const std::vector<T> v = internal::Values<T>(x);
  const size_t n = static_cast<size_t>(y->elements());
  std::vector<T> out(n);
  if constexpr (std::is_integral_v<T>) {
    std::vector<bool> seen(n, false);
    ForEachReduced(x.shape, axes, [&](int64_t i, int64_t o) {
      const T e = v[i];
      if (!seen[o] || (kind == Kind::kMax ? e > out[o] : e < out[o])) out[o] = e;
      seen[o] = true;
    });
  } else {
    const double init = kind == Kind::kMax   ? -std::numeric_limits<double>::infinity()
                        : kind == Kind::kMin ? std::numeric_limits<double>::infinity()
                                             : 0.0;
    std::vector<double> acc(n, init);
    int64_t count = 1;
    for (int64_t a : axes) count *= x.shape[a];
    ForEachReduced(x.shape, axes, [&](int64_t i, int64_t o) {
      const double e = static_cast<double>(v[i]);
      double& s = acc[o];
      switch (kind) {
        case Kind::kSum:
        case Kind::kMean:
          s += e;
          break;
        case Kind::kL2:
          s += e * e;
          break;
        case Kind::kMax:
          s = (e > s || e != e) ? e : s;
          break;
        case Kind::kMin:
          s = (e < s || e != e) ? e : s;
          break;
      }
    });
    for (size_t o = 0; o < n; ++o) {
      double r = acc[o];
      if (kind == Kind::kMean) r = count > 0 ? r / static_cast<double>(count) : 0.0;
      if (kind == Kind::kL2) r = std::sqrt(r);
      out[o] = static_cast<T>(r);
    }
  }
  internal::Store(out, y);
}

Check EvalReduce(const Node& node, const std::vector<const Tensor*>& inputs,
                 const std::vector<Tensor*>& outputs) {
  const Tensor& x = *inputs[0];
  const Tensor* axes_input = inputs.size() > 1 ? inputs[1] : nullptr;
  std::vector<int64_t> raw = node.GetInts("axes");
  if (axes_input != nullptr) raw = axes_input->IntData();
  if (raw.empty() && node.GetInt("noop_with_empty_axes", 0) != 0) {
    outputs[0]->data = x.data;
    return Check();
  }
  BATON_ASSIGN_OR_RETURN(std::vector<int64_t> axes, NormalizedAxes(raw, x.shape.size()));
  const Kind kind = KindOf(node.op);
  switch (x.dtype) {
    case DType::Float32:
      ReduceValues<float>(kind, x, axes, outputs[0]);
      return Check();
    case DType::Int64:
    case DType::Int32:
      if (kind != Kind::kMax && kind != Kind::kMin) break;
      if (x.dtype == DType::Int64) {
        ReduceValues<int64_t>(kind, x, axes, outputs[0]);
      } else {
        ReduceValues<int32_t>(kind, x, axes, outputs[0]);
      }
      return Check();
    default:
      break;
  }
  return internal::CannotEvaluate(node, x.dtype);
}

// ---- ArgMax / ArgMin ----

Check InferArg(InferContext& c) {
  BATON_TRY(c.RequireFloat(0));
  BATON_TRY(c.RequireMinRank(0, 1));
  if (c.node().GetInt("select_last_index", 0) != 0) {
    return c.Err("select_last_index=1 is not supported");
  }
  BATON_ASSIGN_OR_RETURN(int64_t axis, c.Axis(c.node().GetInt("axis", 0), c.Rank(0), "axis"));
  if (c.S(0)[axis] == 0) return c.Err("cannot take " + c.node().op + " over an empty axis");
  c.Output(DType::Int64, ReducedShape(c.S(0), {axis}, c.node().GetInt("keepdims", 1) != 0));
  return Check();
}

Result<LoweredParams> LowerArg(flatbuffers::FlatBufferBuilder* b, const Graph& g, const Node& n) {
  const size_t rank = internal::InputTensor(g, n, 0).shape.size();
  return ReduceParams(b, {internal::NormalizeAxis(n.GetInt("axis", 0), rank)},
                      n.GetInt("keepdims", 1) != 0);
}

// The position of the first extreme along `axis` for each outer/inner pair
// (the first NaN wins, as in torch and the kernel).
Check EvalArg(const Node& node, const std::vector<const Tensor*>& inputs,
              const std::vector<Tensor*>& outputs) {
  const Tensor& x = *inputs[0];
  if (x.dtype != DType::Float32) return internal::CannotEvaluate(node, x.dtype);
  const bool is_max = node.op == "ArgMax";
  const int64_t axis = internal::NormalizeAxis(node.GetInt("axis", 0), x.shape.size());
  const std::vector<float> v = x.FloatData();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.shape[d];
  for (size_t d = axis + 1; d < x.shape.size(); ++d) inner *= x.shape[d];
  const int64_t len = x.shape[axis];
  std::vector<int64_t> out(static_cast<size_t>(outer * inner));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      int64_t at = 0;
      for (int64_t a = 1; a < len; ++a) {
        const float best = v[(o * len + at) * inner + i];
        const float e = v[(o * len + a) * inner + i];
        if (best != best) break;
        if ((is_max ? e > best : e < best) || e != e) at = a;
      }
      out[o * inner + i] = at;
    }
  }
  internal::Store(out, outputs[0]);
  return Check();
}

// ---- TopK ----

// k from input 1 (opset >= 10) or the attribute (opset 1-9).
Result<int64_t> TopKOf(const Node& node, const Tensor* k_input) {
  if (k_input == nullptr) {
    if (node.FindAttr("k") == nullptr) return Fail("TopK needs k");
    return node.GetInt("k", 0);
  }
  const std::vector<int64_t> k = k_input->IntData();
  if (k.size() != 1) return Fail("TopK's k must hold one value");
  return k[0];
}

Check InferTopK(InferContext& c) {
  BATON_TRY(c.RequireFloat(0));
  BATON_TRY(c.RequireMinRank(0, 1));
  const Tensor* k_input = nullptr;
  if (c.Has(1)) {
    k_input = c.Value(1);
    if (k_input == nullptr) {
      return c.Err("k " + c.Name(1) + " is not a constant (only a constant k is supported)");
    }
    if (k_input->dtype != DType::Int64 && k_input->dtype != DType::Int32) {
      return c.Err("k " + c.Name(1) + " must be int64");
    }
  }
  auto k = TopKOf(c.node(), k_input);
  if (!k.ok()) return c.Err(k.error());
  BATON_ASSIGN_OR_RETURN(int64_t axis, c.Axis(c.node().GetInt("axis", -1), c.Rank(0), "axis"));
  if (*k < 0 || *k > c.S(0)[axis]) {
    return c.Err("k = " + std::to_string(*k) + " is outside [0, " + std::to_string(c.S(0)[axis]) +
                 "] for " + c.Desc(0));
  }
  Shape out = c.S(0);
  out[axis] = *k;
  c.Output(DType::Float32, out);
  c.Output(DType::Int64, out);
  return Check();
}

// The plan's TopK selects the largest k along AxisParams.axis; the
// simplifier rewrites largest=0 as Neg, TopK, Neg (LowerSmallestTopK).
Result<LoweredParams> LowerTopK(flatbuffers::FlatBufferBuilder* b, const Graph& g, const Node& n) {
  if (n.GetInt("largest", 1) == 0) {
    return Fail(internal::NodeWhere(n) + ": TopK largest=0 must be rewritten before emission");
  }
  return internal::LowerAxis(b, g, n, /*default_axis=*/-1, /*check_range=*/true);
}

// Sorted by value (descending for largest), equal values in index order.
Check EvalTopK(const Node& node, const std::vector<const Tensor*>& inputs,
               const std::vector<Tensor*>& outputs) {
  const Tensor& x = *inputs[0];
  if (x.dtype != DType::Float32) return internal::CannotEvaluate(node, x.dtype);
  if (outputs.size() < 2 || outputs[1] == nullptr) return Fail("TopK needs both outputs");
  const int64_t axis = internal::NormalizeAxis(node.GetInt("axis", -1), x.shape.size());
  const bool largest = node.GetInt("largest", 1) != 0;
  const int64_t k = outputs[0]->shape[axis];
  const std::vector<float> v = x.FloatData();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.shape[d];
  for (size_t d = axis + 1; d < x.shape.size(); ++d) inner *= x.shape[d];
  const int64_t len = x.shape[axis];
  std::vector<float> values(static_cast<size_t>(outer * k * inner));
  std::vector<int64_t> indices(values.size());
  std::vector<int64_t> order(static_cast<size_t>(len));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t a) { return v[(o * len + a) * inner + i]; };
      std::iota(order.begin(), order.end(), int64_t{0});
      std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) {
        return largest ? at(p) > at(q) : at(p) < at(q);
      });
      for (int64_t j = 0; j < k; ++j) {
        values[(o * k + j) * inner + i] = at(order[j]);
        indices[(o * k + j) * inner + i] = order[j];
      }
    }
  }
  internal::Store(values, outputs[0]);
  internal::Store(indices, outputs[1]);
  return Check();
}

// name, inputs min..max, outputs min..max, infer, has_kernel, kernel op,
// kernel inputs, lower, macs, eval, eval_reads_shapes_only
// clang-format off
const OpDef kOps[] = {
    {"ReduceMean", 1, 2, 1, 1, InferReduce, true, schema::Op::ReduceMean, 1, LowerReduce, nullptr, EvalReduce, false},
    {"ReduceSum", 1, 2, 1, 1, InferReduce, true, schema::Op::ReduceSum, 1, LowerReduce, nullptr, EvalReduce, false},
    {"ReduceMax", 1, 2, 1, 1, InferReduce, true, schema::Op::ReduceMax, 1, LowerReduce, nullptr, EvalReduce, false},
    {"ReduceMin", 1, 2, 1, 1, InferReduce, true, schema::Op::ReduceMin, 1, LowerReduce, nullptr, EvalReduce, false},
    {"ReduceL2", 1, 2, 1, 1, InferReduce, true, schema::Op::ReduceL2, 1, LowerReduce, nullptr, EvalReduce, false},
    {"ArgMax", 1, 1, 1, 1, InferArg, true, schema::Op::ArgMax, 1, LowerArg, nullptr, EvalArg, false},
    {"ArgMin", 1, 1, 1, 1, InferArg, true, schema::Op::ArgMin, 1, LowerArg, nullptr, EvalArg, false},
    {"TopK", 1, 2, 2, 2, InferTopK, true, schema::Op::TopK, 1, LowerTopK, nullptr, EvalTopK, false},
};
// clang-format on

}  // namespace

const OpFamily kReduceOps = {kOps, sizeof(kOps) / sizeof(kOps[0])};

}  // namespace baton::planner
