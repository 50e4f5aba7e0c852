// Unary activations and unary float math (Sqrt, Exp, Log, Erf, Neg, Abs,
// Reciprocal, Softplus, Elu, and the fused Gelu, Mish and Swish).

#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/families.h"
#include "ops/infer_context.h"
#include "ops/op_util.h"

namespace baton::planner {
namespace {

Check InferUnary(InferContext& c) {
  BATON_TRY(c.RequireFloat(0));
  c.SameAsInput(0);
  return Check();
}

// Gelu (ONNX opset 20, or fused from the Erf pattern): the exact form only.
Check InferGelu(InferContext& c) {
  if (c.node().GetString("approximate", "none") != "none") {
    return c.Err("Gelu approximate='" + c.node().GetString("approximate", "none") +
                 "' is not supported (only 'none', the erf form)");
  }
  return InferUnary(c);
}

// Swish (ONNX opset 24, or fused from Mul(x, Sigmoid(x))): alpha 1 only
// (SiLU, what torch's nn.SiLU exports to).
Check InferSwish(InferContext& c) {
  if (c.node().GetFloat("alpha", 1.0f) != 1.0f) {
    return c.Err("Swish alpha " + std::to_string(c.node().GetFloat("alpha", 1.0f)) +
                 " is not supported (only 1, SiLU)");
  }
  return InferUnary(c);
}

Check InferClip(InferContext& c) {
  BATON_TRY(c.RequireFloat(0));
  for (int i = 1; i < 3; ++i) {
    if (!c.Has(i)) continue;
    BATON_TRY(c.RequireFloat(i));
    if (c.In(i).elements() != 1 || c.Rank(i) > 1) {
      return c.Err("bound " + c.Desc(i) + " must be a scalar");
    }
  }
  c.SameAsInput(0);
  return Check();
}

constexpr float kInf = std::numeric_limits<float>::infinity();

// Every parameterized activation carries the same ActivationParams; the
// kernel reads the fields its op uses. Unused fields keep the ONNX defaults
// (alpha 0.2 outside LeakyRelu, beta 0.5) or the node's attributes.
Result<LoweredParams> LowerActivationParams(flatbuffers::FlatBufferBuilder* b, const Node& n,
                                            float default_alpha, float lo, float hi) {
  const float alpha = n.GetFloat("alpha", default_alpha);
  const float beta = n.GetFloat("beta", 0.5f);
  LoweredParams out;
  out.type = schema::Params::ActivationParams;
  out.offset = schema::CreateActivationParams(*b, alpha, beta, lo, hi).Union();
  return out;
}

Result<LoweredParams> LowerLeakyRelu(flatbuffers::FlatBufferBuilder* b, const Graph&,
                                     const Node& n) {
  return LowerActivationParams(b, n, 0.01f, -kInf, kInf);
}

Result<LoweredParams> LowerElu(flatbuffers::FlatBufferBuilder* b, const Graph&, const Node& n) {
  return LowerActivationParams(b, n, 1.0f, -kInf, kInf);
}

Result<LoweredParams> LowerHardActivation(flatbuffers::FlatBufferBuilder* b, const Graph&,
                                          const Node& n) {
  return LowerActivationParams(b, n, 0.2f, -kInf, kInf);
}

// The bounds come from the attributes (opset < 11) or from constant scalar
// inputs 1 and 2, which become params.
Result<LoweredParams> LowerClip(flatbuffers::FlatBufferBuilder* b, const Graph& g, const Node& n) {
  float lo = n.GetFloat("min", -kInf), hi = n.GetFloat("max", kInf);
  for (int k = 1; k <= 2; ++k) {
    if (!internal::HasInput(n, k)) continue;
    const Tensor* c = internal::ConstInput(g, n, k);
    if (c == nullptr || c->FloatData().size() != 1) {
      return Fail(internal::NodeWhere(n) + ": min/max must be constant scalars");
    }
    (k == 1 ? lo : hi) = c->FloatData()[0];
  }
  return LowerActivationParams(b, n, 0.2f, lo, hi);
}

// Applies `fn` to every element of float input 0.
template <typename Fn>
Check MapFloat(const Node& node, const Tensor& x, Tensor* y, Fn fn) {
  if (x.dtype != DType::Float32) return internal::CannotEvaluate(node, x.dtype);
  std::vector<float> values = x.FloatData();
  for (float& v : values) v = fn(v);
  internal::Store(values, y);
  return Check();
}

Check EvalRelu(const Node& node, const std::vector<const Tensor*>& inputs,
               const std::vector<Tensor*>& outputs) {
  return MapFloat(node, *inputs[0], outputs[0], [](float x) { return std::max(x, 0.0f); });
}

Check EvalSigmoid(const Node& node, const std::vector<const Tensor*>& inputs,
                  const std::vector<Tensor*>& outputs) {
  return MapFloat(node, *inputs[0], outputs[0],
                  [](float x) { return 1.0f / (1.0f + std::exp(-x)); });
}

Check EvalTanh(const Node& node, const std::vector<const Tensor*>& inputs,
               const std::vector<Tensor*>& outputs) {
  return MapFloat(node, *inputs[0], outputs[0], [](float x) { return std::tanh(x); });
}

Check EvalLeakyRelu(const Node& node, const std::vector<const Tensor*>& inputs,
                    const std::vector<Tensor*>& outputs) {
  const float alpha = node.GetFloat("alpha", 0.01f);
  return MapFloat(node, *inputs[0], outputs[0],
                  [alpha](float x) { return x >= 0 ? x : x * alpha; });
}

Check EvalHardSigmoid(const Node& node, const std::vector<const Tensor*>& inputs,
                      const std::vector<Tensor*>& outputs) {
  const float alpha = node.GetFloat("alpha", 0.2f), beta = node.GetFloat("beta", 0.5f);
  return MapFloat(node, *inputs[0], outputs[0],
                  [alpha, beta](float x) { return std::clamp(alpha * x + beta, 0.0f, 1.0f); });
}

Check EvalHardSwish(const Node& node, const std::vector<const Tensor*>& inputs,
                    const std::vector<Tensor*>& outputs) {
  return MapFloat(node, *inputs[0], outputs[0],
                  [](float x) { return x * std::clamp(x / 6.0f + 0.5f, 0.0f, 1.0f); });
}

// log(1 + exp(x)) without overflow, as the kernel computes it.
float Softplus(float x) { return std::max(x, 0.0f) + std::log1p(std::exp(-std::fabs(x))); }

template <float (*kFn)(float)>
Check EvalMap(const Node& node, const std::vector<const Tensor*>& inputs,
              const std::vector<Tensor*>& outputs) {
  return MapFloat(node, *inputs[0], outputs[0], kFn);
}

float SqrtF(float x) { return std::sqrt(x); }
float ExpF(float x) { return std::exp(x); }
float LogF(float x) { return std::log(x); }
float ErfF(float x) { return std::erf(x); }
float NegF(float x) { return -x; }
float AbsF(float x) { return std::fabs(x); }
float ReciprocalF(float x) { return 1.0f / x; }
float GeluF(float x) { return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f)); }
float MishF(float x) { return x * std::tanh(Softplus(x)); }
float SwishF(float x) { return x / (1.0f + std::exp(-x)); }

Check EvalElu(const Node& node, const std::vector<const Tensor*>& inputs,
              const std::vector<Tensor*>& outputs) {
  const float alpha = node.GetFloat("alpha", 1.0f);
  return MapFloat(node, *inputs[0], outputs[0],
                  [alpha](float x) { return x > 0 ? x : alpha * std::expm1(x); });
}

// Bounds from the attributes (opset < 11) or from inputs 1 and 2.
Check EvalClip(const Node& node, const std::vector<const Tensor*>& inputs,
               const std::vector<Tensor*>& outputs) {
  const Tensor& x = *inputs[0];
  // The dtype error comes before any bound error.
  if (x.dtype != DType::Float32) return internal::CannotEvaluate(node, x.dtype);
  float lo = node.GetFloat("min", -kInf), hi = node.GetFloat("max", kInf);
  for (size_t i = 1; i < 3 && i < inputs.size(); ++i) {
    if (inputs[i] == nullptr) continue;
    std::vector<float> v = inputs[i]->FloatData();
    if (v.size() != 1) return Fail("Clip bound '" + inputs[i]->name + "' is not a float scalar");
    (i == 1 ? lo : hi) = v[0];
  }
  return MapFloat(node, x, outputs[0], [lo, hi](float v) { return std::clamp(v, lo, hi); });
}

// name, inputs min..max, outputs min..max, infer, has_kernel, kernel op,
// kernel inputs, lower, macs, eval, eval_reads_shapes_only
// clang-format off
const OpDef kOps[] = {
    {"Relu", 1, 1, 1, 1, InferUnary, true, schema::Op::Relu, 1, nullptr, nullptr, EvalRelu, false},
    {"LeakyRelu", 1, 1, 1, 1, InferUnary, true, schema::Op::LeakyRelu, 1, LowerLeakyRelu, nullptr, EvalLeakyRelu, false},
    {"Clip", 1, 3, 1, 1, InferClip, true, schema::Op::Clip, 1, LowerClip, nullptr, EvalClip, false},
    {"Sigmoid", 1, 1, 1, 1, InferUnary, true, schema::Op::Sigmoid, 1, nullptr, nullptr, EvalSigmoid, false},
    {"Tanh", 1, 1, 1, 1, InferUnary, true, schema::Op::Tanh, 1, nullptr, nullptr, EvalTanh, false},
    {"HardSigmoid", 1, 1, 1, 1, InferUnary, true, schema::Op::HardSigmoid, 1, LowerHardActivation, nullptr, EvalHardSigmoid, false},
    {"HardSwish", 1, 1, 1, 1, InferUnary, true, schema::Op::HardSwish, 1, LowerHardActivation, nullptr, EvalHardSwish, false},
    {"Sqrt", 1, 1, 1, 1, InferUnary, true, schema::Op::Sqrt, 1, nullptr, nullptr, EvalMap<SqrtF>, false},
    {"Exp", 1, 1, 1, 1, InferUnary, true, schema::Op::Exp, 1, nullptr, nullptr, EvalMap<ExpF>, false},
    {"Log", 1, 1, 1, 1, InferUnary, true, schema::Op::Log, 1, nullptr, nullptr, EvalMap<LogF>, false},
    {"Erf", 1, 1, 1, 1, InferUnary, true, schema::Op::Erf, 1, nullptr, nullptr, EvalMap<ErfF>, false},
    {"Neg", 1, 1, 1, 1, InferUnary, true, schema::Op::Neg, 1, nullptr, nullptr, EvalMap<NegF>, false},
    {"Abs", 1, 1, 1, 1, InferUnary, true, schema::Op::Abs, 1, nullptr, nullptr, EvalMap<AbsF>, false},
    {"Reciprocal", 1, 1, 1, 1, InferUnary, true, schema::Op::Reciprocal, 1, nullptr, nullptr, EvalMap<ReciprocalF>, false},
    {"Softplus", 1, 1, 1, 1, InferUnary, true, schema::Op::Softplus, 1, nullptr, nullptr, EvalMap<Softplus>, false},
    {"Elu", 1, 1, 1, 1, InferUnary, true, schema::Op::Elu, 1, LowerElu, nullptr, EvalElu, false},
    {"Gelu", 1, 1, 1, 1, InferGelu, true, schema::Op::Gelu, 1, nullptr, nullptr, EvalMap<GeluF>, false},
    {"Mish", 1, 1, 1, 1, InferUnary, true, schema::Op::Mish, 1, nullptr, nullptr, EvalMap<MishF>, false},
    {"Swish", 1, 1, 1, 1, InferSwish, true, schema::Op::Swish, 1, nullptr, nullptr, EvalMap<SwishF>, false},
};
// clang-format on

}  // namespace

const OpFamily kActivationOps = {kOps, sizeof(kOps) / sizeof(kOps[0])};

}  // namespace baton::planner
