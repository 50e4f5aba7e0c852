// Conv: N-d convolution with groups (depthwise when group == channels).

#include <algorithm>
#include <memory>

#include "ops/families.h"
#include "ops/infer_context.h"
#include "ops/op_util.h"

namespace baton::planner {
namespace {

Check InferConv(InferContext& c) {
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

Result<LoweredParams> LowerConv(flatbuffers::FlatBufferBuilder* b, const Graph& g, const Node& n) {
  const Tensor& w = internal::InputTensor(g, n, 1);
  BATON_ASSIGN_OR_RETURN(internal::Window win,
                         internal::LowerWindow(g, n, Shape(w.shape.begin() + 2, w.shape.end())));
  const std::unique_ptr<schema::Clamp> clamp = internal::FusedClamp(n);
  LoweredParams out;
  out.type = schema::Params::ConvParams;
  out.offset =
      schema::CreateConvParamsDirect(*b, &win.kernel, &win.strides, &win.pads, &win.dilations,
                                     static_cast<int32_t>(n.GetInt("group", 1)), clamp.get())
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

// name, inputs min..max, outputs min..max, infer, has_kernel, kernel op,
// kernel inputs, lower, macs, eval, eval_reads_shapes_only
// clang-format off
const OpDef kOps[] = {
    {"Conv", 2, 3, 1, 1, InferConv, true, schema::Op::Conv, 3, LowerConv, ConvMacs, nullptr, false},
};
// clang-format on

}  // namespace

const OpFamily kConvOps = {kOps, sizeof(kOps) / sizeof(kOps[0])};

}  // namespace baton::planner
