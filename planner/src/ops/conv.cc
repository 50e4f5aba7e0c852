// Conv: N-d convolution with groups (depthwise when group == channels).
// ConvTranspose: its transpose (1-d and 2-d), lowered to ConvParams whose
// pads already account for output_padding, output_shape and auto_pad.

#include <algorithm>
#include <memory>

#include "ops/families.h"
#include "ops/infer_context.h"
#include "ops/op_util.h"

namespace baton::planner {
namespace {

// The output shape of a convolution of input `xi` with weight `wi` (Conv:
// 0 and 1; QLinearConv: 0 and 3), checking ranks, groups and the window.
Result<Shape> ConvOutputShape(InferContext& c, int xi, int wi) {
  BATON_TRY(c.RequireMinRank(xi, 3));
  const Shape& x = c.S(xi);
  const Shape& w = c.S(wi);
  const size_t r = x.size() - 2;
  if (w.size() != x.size()) {
    return c.Err("weight " + c.Desc(wi) + " does not match the rank of input " + c.Desc(xi));
  }
  const int64_t group = c.node().GetInt("group", 1);
  if (group <= 0) return c.Err("attribute 'group' must be positive");
  if (x[1] != w[1] * group || w[0] % group != 0) {
    return c.Err("input " + c.Desc(xi) + " has " + std::to_string(x[1]) + " channels but weight " +
                 c.Desc(wi) + " with group " + std::to_string(group) + " expects " +
                 std::to_string(w[1] * group));
  }
  const Shape kernel(w.begin() + 2, w.end());
  if (c.node().FindAttr("kernel_shape") != nullptr && c.node().GetInts("kernel_shape") != kernel) {
    return c.Err("attribute 'kernel_shape' " + ShapeString(c.node().GetInts("kernel_shape")) +
                 " disagrees with weight " + c.Desc(wi));
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
      return c.Err("kernel " + ShapeString(kernel) + " is larger than padded input " + c.Desc(xi));
    }
    out.push_back(span / strides[i] + 1);
  }
  return out;
}

// A bias input `bi` of shape [M], M the weight's output channels.
Check CheckConvBias(InferContext& c, int bi, int wi, DType dtype) {
  if (!c.Has(bi)) return Check();
  BATON_TRY(c.RequireDType(bi, dtype));
  if (c.S(bi) != Shape{c.S(wi)[0]}) {
    return c.Err("bias " + c.Desc(bi) + " must have shape [" + std::to_string(c.S(wi)[0]) + "]");
  }
  return Check();
}

// Input 3 is Baton's fused residual Add (`sum`, docs/operators.md): float32
// of the output's shape. Input 4 is U, the weights transformed for Winograd
// (passes/winograd_weights.h): float32 [16, M, C] of a 3x3 kernel.
Check InferConv(InferContext& c) {
  BATON_TRY(c.RequireFloat(0));
  BATON_TRY(c.RequireFloat(1));
  BATON_ASSIGN_OR_RETURN(Shape out, ConvOutputShape(c, 0, 1));
  BATON_TRY(CheckConvBias(c, 2, 1, DType::Float32));
  if (c.Has(3)) {
    BATON_TRY(c.RequireDType(3, DType::Float32));
    if (c.S(3) != out) {
      return c.Err("sum " + c.Desc(3) + " must have the output's shape " + ShapeString(out));
    }
  }
  if (c.Has(4)) {
    BATON_TRY(c.RequireDType(4, DType::Float32));
    const Shape& w = c.S(1);
    if (w.size() != 4 || w[2] != 3 || w[3] != 3 || c.S(4) != Shape{16, w[0], w[1]}) {
      return c.Err("Winograd weights " + c.Desc(4) + " need 3x3 weights and shape [16, M, C]");
    }
    const Node& n = c.node();
    if (n.GetInt("group", 1) != 1 || AttrOr(n, "strides", 2, 1) != Shape{1, 1} ||
        AttrOr(n, "dilations", 2, 1) != Shape{1, 1}) {
      return c.Err("Winograd weights " + c.Desc(4) +
                   " need a stride-1, undilated, ungrouped Conv");
    }
  }
  c.Output(DType::Float32, out);
  return Check();
}

// QLinearConv (the planner's fusion of DequantizeLinear -> Conv [-> Relu/Clip]
// -> QuantizeLinear, docs/operators.md): ONNX's inputs x, x_scale,
// x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B; the
// output has y_zero_point's dtype.
Check InferQLinearConv(InferContext& c) {
  BATON_TRY(CheckQLinearInputs(c, 0, 3, 6));
  BATON_ASSIGN_OR_RETURN(Shape out, ConvOutputShape(c, 0, 3));
  const int64_t m = c.S(3)[0];
  if (c.In(4).elements() != 1 && c.S(4) != Shape{m}) {
    return c.Err("w_scale " + c.Desc(4) + " must have 1 or " + std::to_string(m) + " elements");
  }
  BATON_TRY(CheckConvBias(c, 8, 3, DType::Int32));
  c.Output(c.In(7).dtype, out);
  return Check();
}

// ConvInteger (ONNX; runtime/src/kernels/qinteger.cc): x and w uint8 or
// int8, optional x_zero_point (1 element, x's dtype) and w_zero_point (1 or M
// elements, w's dtype); int32 output.
Check InferConvInteger(InferContext& c) {
  for (int i : {0, 1}) {
    const DType d = c.In(i).dtype;
    if (d != DType::UInt8 && d != DType::Int8) {
      return c.Err(c.Desc(i) + " is " + DTypeName(d) + "; ConvInteger takes uint8 or int8");
    }
  }
  BATON_ASSIGN_OR_RETURN(Shape out, ConvOutputShape(c, 0, 1));
  if (out.size() > 4) return c.Err("input " + c.Desc(0) + ": ConvInteger is 1-D or 2-D");
  const int64_t m = c.S(1)[0];
  for (int i : {2, 3}) {
    if (!c.Has(i)) continue;
    BATON_TRY(c.RequireDType(i, c.In(i - 2).dtype));
    if (c.In(i).elements() != 1 && (i == 2 || c.S(i) != Shape{m})) {
      return c.Err("zero point " + c.Desc(i) + " must have 1 element" +
                   (i == 2 ? std::string() : " or " + std::to_string(m)));
    }
  }
  c.Output(DType::Int32, out);
  return Check();
}

Result<LoweredParams> LowerConv(flatbuffers::FlatBufferBuilder* b, const Graph& g, const Node& n) {
  const Tensor& w = internal::InputTensor(g, n, n.op == "QLinearConv" ? 3 : 1);
  BATON_ASSIGN_OR_RETURN(internal::Window win,
                         internal::LowerWindow(g, n, Shape(w.shape.begin() + 2, w.shape.end())));
  const std::unique_ptr<schema::Clamp> clamp = internal::FusedClamp(n);
  LoweredParams out;
  out.type = schema::Params::ConvParams;
  out.offset = schema::CreateConvParamsDirect(
                   *b, &win.kernel, &win.strides, &win.pads, &win.dilations,
                   static_cast<int32_t>(n.GetInt("group", 1)), clamp.get(),
                   internal::FusedActivationOf(n), n.activation_alpha, n.activation_beta)
                   .Union();
  return out;
}

// Output elements * (Cin / group) * kernel area; the kernel comes from the
// params, or from the weight's spatial dims in plans that carry none.
double ConvMacs(const schema::Plan& plan, const schema::Node& node, double out_elements) {
  const schema::Tensor* x = internal::PlanInput(plan, node, 0);
  const schema::Tensor* w = internal::PlanInput(plan, node, 1);
  const schema::ConvParams* p = node.params_as_ConvParams();
  const double group = p != nullptr && p->group() > 0 ? p->group() : 1;
  double area = 1;
  if (p != nullptr && p->kernel() != nullptr && p->kernel()->size() > 0) {
    for (int32_t k : *p->kernel()) area *= k;
  } else if (w != nullptr && w->shape() != nullptr) {
    for (uint32_t d = 2; d < w->shape()->size(); ++d) {
      area *= static_cast<double>(w->shape()->Get(d));
    }
  }
  return out_elements * (internal::PlanDim(x, 1) / group) * area;
}

// ConvTranspose's geometry: per spatial dim the begin and end pads such that
// out = (in - 1) * stride + dilation * (kernel - 1) + 1 - begin - end + extra
// with extra >= 0 (output_padding), and the output shape.
struct TransposedGeom {
  Shape kernel, strides, dilations, pads, out;
};

Result<TransposedGeom> ResolveConvTranspose(const Node& node, const Shape& x, const Shape& w) {
  const size_t r = x.size() - 2;
  TransposedGeom g;
  g.kernel.assign(w.begin() + 2, w.end());
  g.strides = AttrOr(node, "strides", r, 1);
  g.dilations = AttrOr(node, "dilations", r, 1);
  const Shape opad = AttrOr(node, "output_padding", r, 0);
  Shape pads = node.GetInts("pads");
  if (pads.empty()) pads.assign(2 * r, 0);
  if (g.strides.size() != r || g.dilations.size() != r || opad.size() != r ||
      pads.size() != 2 * r) {
    return Fail("strides, dilations, output_padding or pads do not match the input rank");
  }
  for (size_t i = 0; i < r; ++i) {
    if (g.strides[i] <= 0 || g.dilations[i] <= 0 || opad[i] < 0 || pads[i] < 0 || pads[i + r] < 0) {
      return Fail("strides and dilations must be positive, pads and output_padding >= 0");
    }
  }
  const std::string auto_pad = node.GetString("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER" &&
      auto_pad != "VALID") {
    return Fail("auto_pad '" + auto_pad + "' is not supported");
  }
  const Shape output_shape = node.GetInts("output_shape");
  if (!output_shape.empty() && output_shape.size() != r && output_shape.size() != r + 2) {
    return Fail("output_shape must list the spatial dims");
  }
  g.pads.assign(2 * r, 0);
  for (size_t i = 0; i < r; ++i) {
    const int64_t full = (x[2 + i] - 1) * g.strides[i] + g.dilations[i] * (g.kernel[i] - 1) + 1;
    int64_t out = full + opad[i] - pads[i] - pads[i + r];
    int64_t begin = pads[i];
    if (!output_shape.empty() || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out = output_shape.empty() ? x[2 + i] * g.strides[i]
                                 : output_shape[output_shape.size() - r + i];
      const int64_t total = full + opad[i] - out;
      // ONNX: SAME_UPPER puts the larger half at the end.
      begin = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    } else if (auto_pad == "VALID") {
      out = full + opad[i];
      begin = 0;
    }
    if (out <= 0) return Fail("the output would be empty");
    if (begin < 0) return Fail("output_shape is larger than the input and kernel reach");
    // The end pad is what the full output loses at its end; output_padding
    // (a negative end pad) shows only in the output shape, which the kernel
    // reads: the plan carries max(0, end).
    g.pads[i] = begin;
    g.pads[i + r] = std::max<int64_t>(0, full - begin - out);
    g.out.push_back(out);
  }
  return g;
}

Check InferConvTranspose(InferContext& c) {
  BATON_TRY(c.RequireFloat(0));
  BATON_TRY(c.RequireFloat(1));
  BATON_TRY(c.RequireMinRank(0, 3));
  const Shape& x = c.S(0);
  const Shape& w = c.S(1);
  if (x.size() > 4) return c.Err("only 1-d and 2-d ConvTranspose are supported");
  if (w.size() != x.size()) {
    return c.Err("weight " + c.Desc(1) + " does not match the rank of input " + c.Desc(0));
  }
  const int64_t group = c.node().GetInt("group", 1);
  if (group <= 0) return c.Err("attribute 'group' must be positive");
  if (x[1] != w[0] || w[0] % group != 0) {
    return c.Err("input " + c.Desc(0) + " has " + std::to_string(x[1]) + " channels but weight " +
                 c.Desc(1) + " (group " + std::to_string(group) + ") expects " +
                 std::to_string(w[0]));
  }
  const int64_t m = w[1] * group;
  if (c.Has(2)) {
    BATON_TRY(c.RequireFloat(2));
    if (c.S(2) != Shape{m}) {
      return c.Err("bias " + c.Desc(2) + " must have shape [" + std::to_string(m) + "]");
    }
  }
  const Shape kernel(w.begin() + 2, w.end());
  if (c.node().FindAttr("kernel_shape") != nullptr && c.node().GetInts("kernel_shape") != kernel) {
    return c.Err("attribute 'kernel_shape' " + ShapeString(c.node().GetInts("kernel_shape")) +
                 " disagrees with weight " + c.Desc(1));
  }
  auto g = ResolveConvTranspose(c.node(), x, w);
  if (!g.ok()) return c.Err(g.error());
  Shape out = {x[0], m};
  out.insert(out.end(), g->out.begin(), g->out.end());
  c.Output(DType::Float32, out);
  return Check();
}

Result<LoweredParams> LowerConvTranspose(flatbuffers::FlatBufferBuilder* b, const Graph& g,
                                         const Node& n) {
  const Tensor& x = internal::InputTensor(g, n, 0);
  const Tensor& w = internal::InputTensor(g, n, 1);
  auto geom = ResolveConvTranspose(n, x.shape, w.shape);
  if (!geom.ok()) return Fail(internal::NodeWhere(n) + ": " + geom.error());
  const std::vector<int32_t> kernel = internal::I32(geom->kernel);
  const std::vector<int32_t> strides = internal::I32(geom->strides);
  const std::vector<int32_t> pads = internal::I32(geom->pads);
  const std::vector<int32_t> dilations = internal::I32(geom->dilations);
  LoweredParams out;
  out.type = schema::Params::ConvParams;
  out.offset = schema::CreateConvParamsDirect(*b, &kernel, &strides, &pads, &dilations,
                                              static_cast<int32_t>(n.GetInt("group", 1)),
                                              internal::FusedClamp(n).get())
                   .Union();
  return out;
}

// Input elements * (M / group) * kernel area: every input pixel scatters
// into a kernel window of each output channel of its group.
double ConvTransposeMacs(const schema::Plan& plan, const schema::Node& node, double) {
  const schema::Tensor* x = internal::PlanInput(plan, node, 0);
  const schema::Tensor* w = internal::PlanInput(plan, node, 1);
  double in = 1, per = 1;
  if (x != nullptr && x->shape() != nullptr) {
    for (int64_t d : *x->shape()) in *= static_cast<double>(d);
  }
  if (w != nullptr && w->shape() != nullptr) {
    for (uint32_t d = 1; d < w->shape()->size(); ++d)
      per *= static_cast<double>(w->shape()->Get(d));
  }
  return in * per;
}

// name, inputs min..max, outputs min..max, infer, has_kernel, kernel op,
// kernel inputs, lower, macs, eval, eval_reads_shapes_only
// clang-format off
const OpDef kOps[] = {
    {"Conv", 2, 5, 1, 1, InferConv, true, schema::Op::Conv, 5, LowerConv, ConvMacs, nullptr, false},
    {"ConvInteger", 2, 4, 1, 1, InferConvInteger, true, schema::Op::ConvInteger, kAllInputs, LowerConv, ConvMacs, nullptr, false},
    {"QLinearConv", 8, 9, 1, 1, InferQLinearConv, true, schema::Op::QLinearConv, kAllInputs, LowerConv, ConvMacs, nullptr, false},
    {"ConvTranspose", 2, 3, 1, 1, InferConvTranspose, true, schema::Op::ConvTranspose, 3, LowerConvTranspose, ConvTransposeMacs, nullptr, false},
};
// clang-format on

}  // namespace

const OpFamily kConvOps = {kOps, sizeof(kOps) / sizeof(kOps[0])};

}  // namespace baton::planner
