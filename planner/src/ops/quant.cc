// QuantizeLinear and DequantizeLinear (ONNX opsets 10 and 13): the
// boundaries of a QDQ model's quantized regions (issue 15, docs/operators.md).
//
//   QuantizeLinear:   y = saturate(round_half_even(x / scale) + zero_point)
//   DequantizeLinear: y = (x - zero_point) * scale
//
// Scale and zero point are per tensor (one element) or per axis (one per
// slice of input 0 along `axis`). They stay node inputs, as in ONNX: the
// kernel reads them like any other tensor. A DequantizeLinear of a constant
// (a quantized weight or an int32 bias) folds at plan time into a float32
// constant, so the ops between a DequantizeLinear and a QuantizeLinear run in
// float on dequantized values. The runtime kernels
// (runtime/src/kernels/quant.cc) follow the same arithmetic as EvalQuantize
// and EvalDequantize here, which is ONNX Runtime's: a float division by the
// scale, rounding half to even, then the zero point, then saturation.

#include <cmath>
#include <cstdint>
#include <limits>

#include "ops/families.h"
#include "ops/infer_context.h"
#include "ops/op_util.h"

namespace baton::planner {
namespace {

using internal::Values;

bool IsQuantized(DType d) { return d == DType::UInt8 || d == DType::Int8; }

// Checks scale (input 1) and zero point (input 2, optional) against input 0:
// one element (per tensor) or one per slice along `axis` (per axis).
Check CheckQuantParams(InferContext& c, DType zero_point_dtype) {
  if (const Attr* block = c.node().FindAttr("block_size");
      block != nullptr && block->kind == Attr::Kind::kInt && block->i != 0) {
    return c.Err("blocked quantization (block_size " + std::to_string(block->i) +
                 ") is not supported");
  }
  BATON_TRY(c.RequireFloat(1));
  if (c.Rank(1) > 1) return c.Err("scale " + c.Desc(1) + " must be a scalar or 1-D");
  const int64_t count = c.Rank(1) == 0 ? 1 : c.S(1)[0];
  if (c.Has(2)) {
    BATON_TRY(c.RequireDType(2, zero_point_dtype));
    if (c.S(2) != c.S(1)) {
      return c.Err("zero point " + c.Desc(2) + " must have the shape of scale " + c.Desc(1));
    }
  }
  if (count == 1) return Check();  // per tensor, as ONNX Runtime reads a 1-element vector
  BATON_ASSIGN_OR_RETURN(const int64_t axis,
                         c.Axis(c.node().GetInt("axis", 1), c.Rank(0), "axis"));
  if (c.S(0)[static_cast<size_t>(axis)] != count) {
    return c.Err("per-axis scale " + c.Desc(1) + " needs one value per index of axis " +
                 std::to_string(axis) + " of " + c.Desc(0));
  }
  return Check();
}

// ONNX data type code of opset 21's `output_dtype`.
std::optional<DType> QuantizedDType(int64_t code) {
  if (code == 2) return DType::UInt8;
  if (code == 3) return DType::Int8;
  return std::nullopt;
}

Check InferQuantize(InferContext& c) {
  BATON_TRY(c.RequireFloat(0));
  DType out = DType::UInt8;  // ONNX: uint8 when there is no zero point
  if (c.Has(2)) {
    out = c.In(2).dtype;
    if (!IsQuantized(out)) {
      return c.Err("zero point " + c.Name(2) + " is " + DTypeName(out) +
                   "; Baton quantizes to uint8 and int8");
    }
  } else if (const Attr* dtype = c.node().FindAttr("output_dtype");
             dtype != nullptr && dtype->kind == Attr::Kind::kInt && dtype->i != 0) {
    const std::optional<DType> d = QuantizedDType(dtype->i);
    if (!d) {
      return c.Err("output_dtype " + std::to_string(dtype->i) +
                   " is not supported (uint8 and int8 are)");
    }
    out = *d;
  }
  BATON_TRY(CheckQuantParams(c, out));
  c.Output(out, c.S(0));
  return Check();
}

Check InferDequantize(InferContext& c) {
  const DType in = c.In(0).dtype;
  if (!IsQuantized(in) && in != DType::Int32) {
    return c.Err("input " + c.Name(0) + " is " + DTypeName(in) +
                 "; Baton dequantizes uint8, int8 and int32");
  }
  BATON_TRY(CheckQuantParams(c, in));
  c.Output(DType::Float32, c.S(0));
  return Check();
}

// QLinearLookup (the planner's fusion of DequantizeLinear -> elementwise
// float ops -> QuantizeLinear): x uint8 or int8, a constant table of 256
// elements of the output's 8-bit dtype; y has x's shape.
Check InferLookup(InferContext& c) {
  if (!IsQuantized(c.In(0).dtype)) return c.Err("x " + c.Desc(0) + " must be uint8 or int8");
  if (!IsQuantized(c.In(1).dtype) || c.In(1).elements() != 256 || !c.In(1).is_constant) {
    return c.Err("table " + c.Desc(1) + " must be a constant of 256 uint8 or int8 values");
  }
  c.Output(c.In(1).dtype, c.S(0));
  return Check();
}

// DynamicQuantizeLinear (ONNX opset 11): x float32 -> y uint8 of x's shape,
// y_scale float32 and y_zero_point uint8 scalars (runtime/src/kernels/quant.cc
// computes them as ONNX Runtime does).
Check InferDynamicQuantize(InferContext& c) {
  BATON_TRY(c.RequireFloat(0));
  c.Output(DType::UInt8, c.S(0));
  c.Output(DType::Float32, Shape{});
  c.Output(DType::UInt8, Shape{});
  return Check();
}

// The slice of input 0 that element i belongs to, along the quantization
// axis: inner = product of the dims after the axis, count = scale elements.
struct QuantIndex {
  int64_t inner = 1;
  int64_t count = 1;
  int64_t operator()(int64_t i) const { return count == 1 ? 0 : (i / inner) % count; }
};

QuantIndex MakeQuantIndex(const Node& node, const Tensor& x, const Tensor& scale) {
  QuantIndex q;
  q.count = scale.elements();
  if (q.count == 1) return q;
  const int64_t axis = internal::NormalizeAxis(node.GetInt("axis", 1), x.shape.size());
  for (size_t d = static_cast<size_t>(axis) + 1; d < x.shape.size(); ++d) q.inner *= x.shape[d];
  return q;
}

template <typename Q>
void Quantize(const std::vector<float>& x, const std::vector<float>& scale,
              const std::vector<int64_t>& zero_point, const QuantIndex& index, Tensor* y) {
  std::vector<Q> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t k = index(static_cast<int64_t>(i));
    float r = x[i] / scale[k];
    if (std::isnan(r)) r = 0.0f;  // NaN quantizes to the zero point
    float v = std::nearbyint(r) + static_cast<float>(zero_point[k]);
    v = std::fmax(v, static_cast<float>(std::numeric_limits<Q>::min()));
    v = std::fmin(v, static_cast<float>(std::numeric_limits<Q>::max()));
    out[i] = static_cast<Q>(v);
  }
  internal::Store(out, y);
}

std::vector<int64_t> ZeroPoints(const Tensor* zero_point, int64_t count) {
  if (zero_point == nullptr) return std::vector<int64_t>(static_cast<size_t>(count), 0);
  std::vector<int64_t> out;
  internal::VisitDType(zero_point->dtype, [&](auto zero) {
    using T = decltype(zero);
    for (T v : Values<T>(*zero_point)) out.push_back(static_cast<int64_t>(v));
  });
  return out;
}

// Scale and zero point values of a QuantizeLinear/DequantizeLinear node with
// constant parameters, and the slice index of each element.
struct QuantArgs {
  QuantIndex index;
  std::vector<float> scale;
  std::vector<int64_t> zero_point;
};

Result<QuantArgs> ReadQuantArgs(const Node& node, const std::vector<const Tensor*>& inputs) {
  BATON_TRY(internal::RequireValue(inputs, 1));
  if (internal::HasInput(node, 2)) BATON_TRY(internal::RequireValue(inputs, 2));
  QuantArgs a;
  a.index = MakeQuantIndex(node, *inputs[0], *inputs[1]);
  a.scale = Values<float>(*inputs[1]);
  a.zero_point = ZeroPoints(inputs.size() > 2 ? inputs[2] : nullptr, a.index.count);
  return a;
}

Check EvalQuantize(const Node& node, const std::vector<const Tensor*>& inputs,
                   const std::vector<Tensor*>& outputs) {
  BATON_ASSIGN_OR_RETURN(const QuantArgs a, ReadQuantArgs(node, inputs));
  const std::vector<float> xs = Values<float>(*inputs[0]);
  if (outputs[0]->dtype == DType::Int8) {
    Quantize<int8_t>(xs, a.scale, a.zero_point, a.index, outputs[0]);
  } else {
    Quantize<uint8_t>(xs, a.scale, a.zero_point, a.index, outputs[0]);
  }
  return Check();
}

Check EvalDequantize(const Node& node, const std::vector<const Tensor*>& inputs,
                     const std::vector<Tensor*>& outputs) {
  BATON_ASSIGN_OR_RETURN(const QuantArgs a, ReadQuantArgs(node, inputs));
  const Tensor& x = *inputs[0];
  const QuantIndex& index = a.index;
  const std::vector<int64_t>& zp = a.zero_point;
  const std::vector<float>& s = a.scale;
  std::vector<float> out;
  internal::VisitDType(x.dtype, [&](auto zero) {
    using T = decltype(zero);
    const std::vector<T> v = Values<T>(x);
    out.resize(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      const int64_t k = index(static_cast<int64_t>(i));
      out[i] = static_cast<float>(static_cast<int64_t>(v[i]) - zp[k]) * s[k];
    }
  });
  internal::Store(out, outputs[0]);
  return Check();
}

// AxisParams: the normalized axis (any value when per tensor).
Result<LoweredParams> LowerQuantAxis(flatbuffers::FlatBufferBuilder* builder, const Graph& graph,
                                     const Node& node) {
  return internal::LowerAxis(builder, graph, node, 1, false);
}

// name, inputs min..max, outputs min..max, infer, has_kernel, kernel op,
// kernel inputs, lower, macs, eval, eval_reads_shapes_only
// clang-format off
const OpDef kOps[] = {
    {"QuantizeLinear", 2, 3, 1, 1, InferQuantize, true, schema::Op::QuantizeLinear, kAllInputs, LowerQuantAxis, nullptr, EvalQuantize, false},
    {"DequantizeLinear", 2, 3, 1, 1, InferDequantize, true, schema::Op::DequantizeLinear, kAllInputs, LowerQuantAxis, nullptr, EvalDequantize, false},
    {"DynamicQuantizeLinear", 1, 1, 3, 3, InferDynamicQuantize, true, schema::Op::DynamicQuantizeLinear, kAllInputs, nullptr, nullptr, nullptr, false},
    {"QLinearLookup", 2, 2, 1, 1, InferLookup, true, schema::Op::QLinearLookup, kAllInputs, nullptr, nullptr, nullptr, false},
};
// clang-format on

}  // namespace

const OpFamily kQuantOps = {kOps, sizeof(kOps) / sizeof(kOps[0])};

}  // namespace baton::planner
