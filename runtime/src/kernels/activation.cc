// Pointwise activations and unary math: Relu, LeakyRelu, Clip, Sigmoid, Tanh,
// HardSigmoid, HardSwish, Sqrt, Exp, Log, Erf, Neg, Abs, Reciprocal, Softplus,
// Elu, Gelu (exact, erf form), Mish, Swish. Output shape equals input shape; the
// output may alias the input. Each op is one flat loop over the elements
// (vectorized by the compiler where it has no libm call; Sigmoid, Tanh and
// Swish go through the ISA dispatch).

#include <math.h>

#include "gemm_core.h"
#include "kernel_family.h"
#include "kernel_math.h"
#include "kernel_util.h"

namespace baton {
namespace kernels {
namespace {

// y[i] = f(x[i]). Element i reads only x[i] before writing y[i], and a plan
// never gives a kernel partly overlapping tensors (docs/formats.md), so the
// loop carries no dependence: ivdep spares GCC's run-time aliasing check.
template <typename F>
Status Map(const KernelCall& call, F f) {
  const float* x = call.inputs[0].f32();
  float* y = call.outputs[0].f32();
  const int64_t n = call.outputs[0].elements();
  BATON_IVDEP
  for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
  return Status::Ok();
}

float Clamp01(float v) {
  v = v < 0.0f ? 0.0f : v;
  return v > 1.0f ? 1.0f : v;
}

Status UnaryPrepare(const KernelCall& call) {
  BATON_RETURN_IF_ERROR(CheckArity(call, 1, 1, 1));
  BATON_RETURN_IF_ERROR(CheckAllF32(call));
  BATON_KCHECK(call.inputs[0].elements() == call.outputs[0].elements(),
               "activation output size must equal input size");
  return Status::Ok();
}

Status ActivationPrepare(const KernelCall& call) {
  BATON_RETURN_IF_ERROR(UnaryPrepare(call));
  BATON_KCHECK(call.node->params_as_ActivationParams() != nullptr,
               "activation needs ActivationParams");
  return Status::Ok();
}

Status ReluEval(const KernelCall& call) {
  return Map(call, [](float v) { return v > 0.0f ? v : 0.0f; });
}

Status LeakyReluEval(const KernelCall& call) {
  const float alpha = call.node->params_as_ActivationParams()->alpha();
  return Map(call, [alpha](float v) { return v >= 0.0f ? v : alpha * v; });
}

Status ClipEval(const KernelCall& call) {
  const schema::ActivationParams* p = call.node->params_as_ActivationParams();
  const float lo = p->min();
  const float hi = p->max();
  return Map(call, [lo, hi](float v) {
    v = v < lo ? lo : v;
    return v > hi ? hi : v;
  });
}

// Sigmoid, Tanh and Swish (x * sigmoid(x), SiLU; fused from Mul(x,
// Sigmoid(x))) use kernel_math.h's branch-free forms (about 2e-7 relative
// error) through the run-time ISA dispatch (gemm/gemm_isa.inc): at the CPU's
// vector width, where libm's expf and tanhf are one call per element.
Status MapUnaryEval(const KernelCall& call, UnaryFn fn) {
  MapUnary(fn, call.inputs[0].f32(), call.outputs[0].f32(), call.outputs[0].elements());
  return Status::Ok();
}

Status SigmoidEval(const KernelCall& call) { return MapUnaryEval(call, kUnarySigmoid); }
Status TanhEval(const KernelCall& call) { return MapUnaryEval(call, kUnaryTanh); }
Status SwishEval(const KernelCall& call) { return MapUnaryEval(call, kUnarySwish); }

Status HardSigmoidEval(const KernelCall& call) {
  const schema::ActivationParams* p = call.node->params_as_ActivationParams();
  const float alpha = p->alpha();
  const float beta = p->beta();
  return Map(call, [alpha, beta](float v) { return Clamp01(alpha * v + beta); });
}

Status HardSwishEval(const KernelCall& call) {
  return Map(call, [](float v) { return v * Clamp01(v * (1.0f / 6.0f) + 0.5f); });
}

Status SqrtEval(const KernelCall& call) {
  return Map(call, [](float v) { return sqrtf(v); });
}

Status ExpEval(const KernelCall& call) {
  return Map(call, [](float v) { return expf(v); });
}

Status LogEval(const KernelCall& call) {
  return Map(call, [](float v) { return logf(v); });
}

Status ErfEval(const KernelCall& call) {
  return Map(call, [](float v) { return erff(v); });
}

Status NegEval(const KernelCall& call) {
  return Map(call, [](float v) { return -v; });
}

Status AbsEval(const KernelCall& call) {
  return Map(call, [](float v) { return fabsf(v); });
}

Status ReciprocalEval(const KernelCall& call) {
  return Map(call, [](float v) { return 1.0f / v; });
}

// log(1 + exp(v)) without overflow: max(v, 0) + log1p(exp(-|v|)).
inline float Softplus(float v) { return (v > 0.0f ? v : 0.0f) + log1pf(expf(-fabsf(v))); }

Status SoftplusEval(const KernelCall& call) {
  return Map(call, [](float v) { return Softplus(v); });
}

Status EluEval(const KernelCall& call) {
  const float alpha = call.node->params_as_ActivationParams()->alpha();
  return Map(call, [alpha](float v) { return v > 0.0f ? v : alpha * expm1f(v); });
}

// The exact GELU (torch's default, approximate='none').
Status GeluEval(const KernelCall& call) {
  return Map(call, [](float v) { return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f)); });
}

Status MishEval(const KernelCall& call) {
  return Map(call, [](float v) { return v * tanhf(Softplus(v)); });
}

}  // namespace

constexpr KernelEntry kActivationEntries[] = {
    {Op::Relu, kAllDeviceKinds, UnaryPrepare, ReluEval, nullptr},
    {Op::LeakyRelu, kAllDeviceKinds, ActivationPrepare, LeakyReluEval, nullptr},
    {Op::Clip, kAllDeviceKinds, ActivationPrepare, ClipEval, nullptr},
    {Op::Sigmoid, kAllDeviceKinds, UnaryPrepare, SigmoidEval, nullptr},
    {Op::Tanh, kAllDeviceKinds, UnaryPrepare, TanhEval, nullptr},
    {Op::HardSigmoid, kAllDeviceKinds, ActivationPrepare, HardSigmoidEval, nullptr},
    {Op::HardSwish, kAllDeviceKinds, UnaryPrepare, HardSwishEval, nullptr},
    {Op::Sqrt, kAllDeviceKinds, UnaryPrepare, SqrtEval, nullptr},
    {Op::Exp, kAllDeviceKinds, UnaryPrepare, ExpEval, nullptr},
    {Op::Log, kAllDeviceKinds, UnaryPrepare, LogEval, nullptr},
    {Op::Erf, kAllDeviceKinds, UnaryPrepare, ErfEval, nullptr},
    {Op::Neg, kAllDeviceKinds, UnaryPrepare, NegEval, nullptr},
    {Op::Abs, kAllDeviceKinds, UnaryPrepare, AbsEval, nullptr},
    {Op::Reciprocal, kAllDeviceKinds, UnaryPrepare, ReciprocalEval, nullptr},
    {Op::Softplus, kAllDeviceKinds, UnaryPrepare, SoftplusEval, nullptr},
    {Op::Elu, kAllDeviceKinds, ActivationPrepare, EluEval, nullptr},
    {Op::Gelu, kAllDeviceKinds, UnaryPrepare, GeluEval, nullptr},
    {Op::Mish, kAllDeviceKinds, UnaryPrepare, MishEval, nullptr},
    {Op::Swish, kAllDeviceKinds, UnaryPrepare, SwishEval, nullptr},
};
BATON_KERNEL_FAMILY(Activation, kActivationEntries);

}  // namespace kernels
}  // namespace baton
