#include "baton/planner/emit/lower.h"

#include "ops/eval_host.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <limits>

namespace baton::planner {
namespace {

using flatbuffers::FlatBufferBuilder;

std::vector<int32_t> I32(const std::vector<int64_t>& v) { return {v.begin(), v.end()}; }

int64_t NormAxis(int64_t axis, size_t rank) {
  return axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
}

std::vector<int64_t> Ones(size_t n) { return std::vector<int64_t>(n, 1); }

const Tensor* ConstInput(const Graph& g, const Node& n, size_t k) {
  if (k >= n.inputs.size() || n.inputs[k] < 0) return nullptr;
  const Tensor& t = g.tensors[n.inputs[k]];
  return t.is_constant ? &t : nullptr;
}

bool HasInput(const Node& n, size_t k) { return k < n.inputs.size() && n.inputs[k] >= 0; }

const Tensor& In(const Graph& g, const Node& n, size_t k) { return g.tensors[n.inputs[k]]; }


}  // namespace

Result<schema::Op> OpFromName(const std::string& op) {
  const OpDef* def = FindOp(op);
  if (def == nullptr || !def->has_kernel) {
    return Fail("op '" + op + "' has no runtime kernel (constant-fold it or remove it)");
  }
  return def->kernel_op;
}

std::vector<int> RuntimeInputs(const Graph& g, const Node& n) {
  (void)g;
  const OpDef* def = FindOp(n.op);
  size_t keep = 1;
  if (def != nullptr && def->kernel_inputs == kAllInputs) {
    keep = n.inputs.size();
  } else if (def != nullptr) {
    keep = static_cast<size_t>(def->kernel_inputs);
  }
  std::vector<int> out(n.inputs.begin(),
                       n.inputs.begin() + static_cast<std::ptrdiff_t>(std::min(keep, n.inputs.size())));
  while (!out.empty() && out.back() < 0) out.pop_back();
  return out;
}

Result<LoweredParams> LowerParams(FlatBufferBuilder* b, const Graph& g, const Node& n) {
  LoweredParams out;
  const std::string& op = n.op;
  const std::string where = "node '" + n.name + "' (" + op + ")";
  std::unique_ptr<schema::Clamp> clamp;
  if (n.clamp) clamp = std::make_unique<schema::Clamp>(n.clamp->first, n.clamp->second);
  if (op == "Conv" || op == "MaxPool" || op == "AveragePool") {
    const Tensor& x = In(g, n, 0);
    const size_t r = x.shape.size() - 2;
    std::vector<int64_t> kernel;
    if (op == "Conv") {
      const Tensor& w = In(g, n, 1);
      kernel.assign(w.shape.begin() + 2, w.shape.end());
    } else {
      kernel = n.GetInts("kernel_shape");
    }
    if (kernel.size() != r) return Fail(where + ": kernel rank does not match the input");
    std::vector<int64_t> strides = n.GetInts("strides");
    if (strides.empty()) strides = Ones(r);
    std::vector<int64_t> dilations = n.GetInts("dilations");
    if (dilations.empty()) dilations = Ones(r);
    if (strides.size() != r || dilations.size() != r) {
      return Fail(where + ": strides/dilations rank does not match the input");
    }
    std::vector<int64_t> spatial(x.shape.begin() + 2, x.shape.end());
    auto resolved = internal::ResolvePads(n, spatial, kernel, strides, dilations);
    if (!resolved.ok()) return Fail(where + ": " + resolved.error());
    std::vector<int64_t> pads = resolved.value();
    auto k = I32(kernel), s = I32(strides), p = I32(pads), d = I32(dilations);
    if (op == "Conv") {
      out.type = schema::Params::ConvParams;
      out.offset = schema::CreateConvParamsDirect(*b, &k, &s, &p, &d,
                                                  static_cast<int32_t>(n.GetInt("group", 1)),
                                                  clamp.get()).Union();
    } else {
      out.type = schema::Params::PoolParams;
      out.offset = schema::CreatePoolParamsDirect(*b, &k, &s, &p, &d, n.GetInt("ceil_mode", 0) != 0,
                                                  n.GetInt("count_include_pad", 0) != 0).Union();
    }
  } else if (op == "Gemm") {
    out.type = schema::Params::GemmParams;
    out.offset = schema::CreateGemmParams(*b, n.GetFloat("alpha", 1.0f), n.GetFloat("beta", 1.0f),
                                          n.GetInt("transA", 0) != 0, n.GetInt("transB", 0) != 0,
                                          clamp.get()).Union();
  } else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
    out.type = schema::Params::ElementwiseParams;
    out.offset = schema::CreateElementwiseParams(*b, clamp.get()).Union();
  } else if (op == "LeakyRelu" || op == "HardSigmoid" || op == "Clip" || op == "HardSwish") {
    float alpha = n.GetFloat("alpha", op == "LeakyRelu" ? 0.01f : 0.2f);
    float beta = n.GetFloat("beta", 0.5f);
    float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
    if (op == "Clip") {
      lo = n.GetFloat("min", lo);
      hi = n.GetFloat("max", hi);
      for (size_t k = 1; k <= 2; ++k) {
        if (!HasInput(n, k)) continue;
        const Tensor* c = ConstInput(g, n, k);
        if (c == nullptr || c->FloatData().size() != 1) {
          return Fail(where + ": min/max must be constant scalars");
        }
        (k == 1 ? lo : hi) = c->FloatData()[0];
      }
    }
    out.type = schema::Params::ActivationParams;
    out.offset = schema::CreateActivationParams(*b, alpha, beta, lo, hi).Union();
  } else if (op == "Softmax" || op == "Concat" || op == "Split" || op == "Gather" || op == "Flatten") {
    const size_t rank = In(g, n, 0).shape.size();
    int64_t def = op == "Softmax" ? -1 : (op == "Flatten" ? 1 : 0);
    int64_t axis = NormAxis(n.GetInt("axis", def), rank);
    if (op != "Flatten" && (axis < 0 || axis >= static_cast<int64_t>(std::max<size_t>(rank, 1)))) {
      return Fail(where + ": axis out of range");
    }
    out.type = schema::Params::AxisParams;
    out.offset = schema::CreateAxisParams(*b, static_cast<int32_t>(axis)).Union();
  } else if (op == "ReduceMean") {
    const size_t rank = In(g, n, 0).shape.size();
    std::vector<int64_t> axes = n.GetInts("axes");
    if (HasInput(n, 1)) {
      const Tensor* c = ConstInput(g, n, 1);
      if (c == nullptr) return Fail(where + ": axes must be constant");
      axes = c->IntData();
    }
    if (axes.empty()) {
      for (size_t a = 0; a < rank; ++a) axes.push_back(static_cast<int64_t>(a));
    }
    for (int64_t& a : axes) a = NormAxis(a, rank);
    std::sort(axes.begin(), axes.end());
    auto a32 = I32(axes);
    out.type = schema::Params::ReduceParams;
    out.offset = schema::CreateReduceParamsDirect(*b, &a32, n.GetInt("keepdims", 1) != 0).Union();
  } else if (op == "BatchNormalization") {
    out.type = schema::Params::BatchNormParams;
    out.offset = schema::CreateBatchNormParams(*b, n.GetFloat("epsilon", 1e-5f)).Union();
  } else if (op == "Slice") {
    const Tensor& x = In(g, n, 0);
    auto spec = internal::ResolveSlice(n, x.shape, [&](int k) -> Result<std::vector<int64_t>> {
      const Tensor* c = ConstInput(g, n, static_cast<size_t>(k));
      if (c == nullptr) return Fail("starts/ends/axes/steps must be constant");
      return c->IntData();
    });
    if (!spec.ok()) return Fail(where + ": " + spec.error());
    const size_t rank = x.shape.size();
    std::vector<int64_t> s(rank), e(rank), st(rank), ax(rank);
    for (size_t a = 0; a < rank; ++a) {
      ax[a] = static_cast<int64_t>(a);
      s[a] = spec->start[a];
      st[a] = spec->step[a];
      e[a] = spec->start[a] + spec->step[a] * spec->count[a];
    }
    auto a32 = I32(ax);
    out.type = schema::Params::SliceParams;
    out.offset = schema::CreateSliceParamsDirect(*b, &s, &e, &a32, &st).Union();
  } else if (op == "Pad") {
    const size_t rank = In(g, n, 0).shape.size();
    std::vector<int64_t> pads = n.GetInts("pads");
    float value = n.GetFloat("value", 0.0f);
    if (HasInput(n, 1)) {
      const Tensor* c = ConstInput(g, n, 1);
      if (c == nullptr) return Fail(where + ": pads must be constant");
      pads = c->IntData();
    }
    if (HasInput(n, 2)) {
      const Tensor* c = ConstInput(g, n, 2);
      if (c == nullptr || c->FloatData().size() != 1) return Fail(where + ": constant_value must be a constant scalar");
      value = c->FloatData()[0];
    }
    if (pads.size() != 2 * rank) return Fail(where + ": pads must have 2 * rank entries");
    for (int64_t p : pads) if (p < 0) return Fail(where + ": negative pads are not supported");
    std::string mode = n.GetString("mode", "constant");
    uint8_t m = mode == "constant" ? 0 : mode == "reflect" ? 1 : mode == "edge" ? 2 : 255;
    if (m == 255) return Fail(where + ": unsupported mode '" + mode + "'");
    out.type = schema::Params::PadParams;
    out.offset = schema::CreatePadParamsDirect(*b, &pads, m, value).Union();
  } else if (op == "Transpose") {
    const size_t rank = In(g, n, 0).shape.size();
    std::vector<int64_t> perm = n.GetInts("perm");
    if (perm.empty()) for (size_t a = 0; a < rank; ++a) perm.push_back(static_cast<int64_t>(rank - 1 - a));
    if (perm.size() != rank) return Fail(where + ": perm length does not match the rank");
    auto p32 = I32(perm);
    out.type = schema::Params::TransposeParams;
    out.offset = schema::CreateTransposeParamsDirect(*b, &p32).Union();
  }
  return out;
}

}  // namespace baton::planner
