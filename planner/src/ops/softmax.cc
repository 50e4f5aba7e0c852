// Softmax and LogSoftmax along one axis (opset < 13 models get an explicit
// axis at import, import_onnx.cc), and QLinearSoftmax, the planner's fusion
// of DequantizeLinear -> Softmax -> QuantizeLinear (simplify.cc).

#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/families.h"
#include "ops/infer_context.h"
#include "ops/op_util.h"

namespace baton::planner {
namespace {

Check InferSoftmax(InferContext& c) {
  BATON_TRY(c.RequireFloat(0));
  BATON_TRY(c.RequireMinRank(0, 1));
  auto axis = c.Axis(c.node().GetInt("axis", -1), c.Rank(0), "axis");
  if (!axis.ok()) return Fail(axis.error());
  c.SameAsInput(0);
  return Check();
}

Result<LoweredParams> LowerSoftmax(flatbuffers::FlatBufferBuilder* b, const Graph& g,
                                   const Node& n) {
  return internal::LowerAxis(b, g, n, /*default_axis=*/-1, /*check_range=*/true);
}

// QLinearSoftmax (com.microsoft's, ONNX Runtime's arithmetic; the kernel is
// runtime/src/kernels/quant.cc): x uint8 or int8, x_scale, x_zero_point,
// y_scale, y_zero_point of one element each (scales float32, zero points x's
// dtype), then the constant float32 [256] table of exponentials the planner
// builds from x_scale and the axis length (FuseQLinearSoftmax). y has x's
// dtype and shape; one axis (opset 13's form).
Check InferQLinearSoftmax(InferContext& c) {
  const DType t = c.In(0).dtype;
  if (t != DType::UInt8 && t != DType::Int8) {
    return c.Err("x " + c.Desc(0) + " must be uint8 or int8");
  }
  BATON_TRY(c.RequireMinRank(0, 1));
  for (int i = 1; i < 6; ++i) {
    if (!c.Has(i)) return c.Err("input " + std::to_string(i) + " is missing");
  }
  for (int i = 1; i < 5; ++i) {
    BATON_TRY(i == 1 || i == 3 ? c.RequireFloat(i) : c.RequireDType(i, t));
    if (c.Rank(i) > 1 || c.In(i).elements() != 1) {
      return c.Err(c.Desc(i) + " must have one element");
    }
  }
  BATON_TRY(c.RequireFloat(5));
  if (c.In(5).elements() != 256 || !c.In(5).is_constant) {
    return c.Err("table " + c.Desc(5) + " must be a constant of 256 float32 values");
  }
  auto axis = c.Axis(c.node().GetInt("axis", -1), c.Rank(0), "axis");
  if (!axis.ok()) return Fail(axis.error());
  c.Output(t, c.S(0));
  return Check();
}

// log(softmax(x)) = x - max - log(sum(exp(x - max))), in double.
Check EvalLogSoftmax(const Node& node, const std::vector<const Tensor*>& inputs,
                     const std::vector<Tensor*>& outputs) {
  const Tensor& x = *inputs[0];
  if (x.dtype != DType::Float32) return internal::CannotEvaluate(node, x.dtype);
  const int64_t axis = internal::NormalizeAxis(node.GetInt("axis", -1), x.shape.size());
  const std::vector<float> v = x.FloatData();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.shape[d];
  for (size_t d = axis + 1; d < x.shape.size(); ++d) inner *= x.shape[d];
  const int64_t len = x.shape[axis];
  std::vector<float> out(v.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t a) { return (o * len + a) * inner + i; };
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t a = 0; a < len; ++a) mx = std::max(mx, static_cast<double>(v[at(a)]));
      double sum = 0.0;
      for (int64_t a = 0; a < len; ++a) sum += std::exp(static_cast<double>(v[at(a)]) - mx);
      const double shift = mx + std::log(sum);
      for (int64_t a = 0; a < len; ++a) {
        out[at(a)] = static_cast<float>(static_cast<double>(v[at(a)]) - shift);
      }
    }
  }
  internal::Store(out, outputs[0]);
  return Check();
}

// name, inputs min..max, outputs min..max, infer, has_kernel, kernel op,
// kernel inputs, lower, macs, eval, eval_reads_shapes_only
// clang-format off
const OpDef kOps[] = {
    {"Softmax", 1, 1, 1, 1, InferSoftmax, true, schema::Op::Softmax, 1, LowerSoftmax, nullptr, nullptr, false},
    {"LogSoftmax", 1, 1, 1, 1, InferSoftmax, true, schema::Op::LogSoftmax, 1, LowerSoftmax, nullptr, EvalLogSoftmax, false},
    {"QLinearSoftmax", 6, 6, 1, 1, InferQLinearSoftmax, true, schema::Op::QLinearSoftmax, kAllInputs, LowerSoftmax, nullptr, nullptr, false},
};
// clang-format on

}  // namespace

const OpFamily kSoftmaxOps = {kOps, sizeof(kOps) / sizeof(kOps[0])};

}  // namespace baton::planner
