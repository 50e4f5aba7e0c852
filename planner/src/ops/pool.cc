// Windowed and global pooling.

#include <algorithm>

#include "ops/families.h"
#include "ops/infer_context.h"
#include "ops/op_util.h"

namespace baton::planner {
namespace {

// The output shape of a windowed pool over input 0 (any dtype).
Result<Shape> PoolShape(InferContext& c) {
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
  return out;
}

// The max pools take float32, uint8 and int8 (the maximum commutes with
// quantization; the output has the input's dtype); the others float32.
Check RequirePoolDType(InferContext& c) {
  const DType d = c.In(0).dtype;
  const bool max = c.node().op == "MaxPool" || c.node().op == "GlobalMaxPool";
  if (max && (d == DType::UInt8 || d == DType::Int8)) return Check();
  return c.RequireFloat(0);
}

Check InferPool(InferContext& c) {
  BATON_TRY(RequirePoolDType(c));
  BATON_ASSIGN_OR_RETURN(Shape out, PoolShape(c));
  c.Output(c.In(0).dtype, out);
  return Check();
}

// QLinearAveragePool / QLinearGlobalAveragePool (the planner's fusion of
// DequantizeLinear -> AveragePool / GlobalAveragePool -> QuantizeLinear):
// x, x_scale, x_zero_point, y_scale, y_zero_point, one-element scales and
// zero points of x's 8-bit dtype; the output has x's dtype.
Check CheckQLinearPoolInputs(InferContext& c) {
  const DType t = c.In(0).dtype;
  if (t != DType::UInt8 && t != DType::Int8) return c.Err("x " + c.Desc(0) + " must be uint8 or int8");
  for (int i = 1; i < 5; ++i) {
    if (!c.Has(i)) return c.Err("input " + std::to_string(i) + " is missing");
    BATON_TRY(i == 1 || i == 3 ? c.RequireFloat(i) : c.RequireDType(i, t));
    if (c.Rank(i) > 1 || c.In(i).elements() != 1) {
      return c.Err(c.Desc(i) + " must have one element");
    }
  }
  return Check();
}

Check InferQLinearAveragePool(InferContext& c) {
  BATON_TRY(CheckQLinearPoolInputs(c));
  if (c.Rank(0) != 3 && c.Rank(0) != 4) return c.Err("expects an NCL or NCHW input");
  BATON_ASSIGN_OR_RETURN(Shape out, PoolShape(c));
  c.Output(c.In(0).dtype, out);
  return Check();
}

Check InferQLinearGlobalAveragePool(InferContext& c) {
  BATON_TRY(CheckQLinearPoolInputs(c));
  BATON_TRY(c.RequireMinRank(0, 3));
  Shape out = c.S(0);
  std::fill(out.begin() + 2, out.end(), 1);
  c.Output(c.In(0).dtype, out);
  return Check();
}

// MaxPool and AveragePool share PoolParams.
Result<LoweredParams> LowerPool(flatbuffers::FlatBufferBuilder* b, const Graph& g, const Node& n) {
  BATON_ASSIGN_OR_RETURN(internal::Window win,
                         internal::LowerWindow(g, n, n.GetInts("kernel_shape")));
  LoweredParams out;
  out.type = schema::Params::PoolParams;
  out.offset = schema::CreatePoolParamsDirect(*b, &win.kernel, &win.strides, &win.pads,
                                              &win.dilations, n.GetInt("ceil_mode", 0) != 0,
                                              n.GetInt("count_include_pad", 0) != 0)
                   .Union();
  return out;
}

Check InferGlobalPool(InferContext& c) {
  BATON_TRY(RequirePoolDType(c));
  BATON_TRY(c.RequireMinRank(0, 3));
  Shape out = c.S(0);
  std::fill(out.begin() + 2, out.end(), 1);
  c.Output(c.In(0).dtype, out);
  return Check();
}

// name, inputs min..max, outputs min..max, infer, has_kernel, kernel op,
// kernel inputs, lower, macs, eval, eval_reads_shapes_only
// clang-format off
const OpDef kOps[] = {
    {"MaxPool", 1, 1, 1, 1, InferPool, true, schema::Op::MaxPool, 1, LowerPool, nullptr, nullptr, false},
    {"AveragePool", 1, 1, 1, 1, InferPool, true, schema::Op::AveragePool, 1, LowerPool, nullptr, nullptr, false},
    {"GlobalAveragePool", 1, 1, 1, 1, InferGlobalPool, true, schema::Op::GlobalAveragePool, 1, nullptr, nullptr, nullptr, false},
    {"GlobalMaxPool", 1, 1, 1, 1, InferGlobalPool, true, schema::Op::GlobalMaxPool, 1, nullptr, nullptr, nullptr, false},
    {"QLinearAveragePool", 5, 5, 1, 1, InferQLinearAveragePool, true, schema::Op::QLinearAveragePool, kAllInputs, LowerPool, nullptr, nullptr, false},
    {"QLinearGlobalAveragePool", 5, 5, 1, 1, InferQLinearGlobalAveragePool, true, schema::Op::QLinearGlobalAveragePool, kAllInputs, nullptr, nullptr, nullptr, false},
};
// clang-format on

}  // namespace

const OpFamily kPoolOps = {kOps, sizeof(kOps) / sizeof(kOps[0])};

}  // namespace baton::planner
