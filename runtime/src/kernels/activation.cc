// Pointwise activations: Relu, LeakyRelu, Clip, Sigmoid, Tanh, HardSigmoid,
// HardSwish. Output shape equals input shape; the output may alias the input.

#include <math.h>

#include "kernel_family.h"
#include "kernel_util.h"

namespace baton {
namespace kernels {
namespace {

template <typename F>
Status Map(const KernelCall& call, F f) {
  const float* x = call.inputs[0].f32();
  float* y = call.outputs[0].f32();
  const int64_t n = call.outputs[0].elements();
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

Status SigmoidEval(const KernelCall& call) {
  // For v << 0, expf(-v) overflows to inf and the result is exactly 0.
  return Map(call, [](float v) { return 1.0f / (1.0f + expf(-v)); });
}

Status TanhEval(const KernelCall& call) {
  return Map(call, [](float v) { return tanhf(v); });
}

Status HardSigmoidEval(const KernelCall& call) {
  const schema::ActivationParams* p = call.node->params_as_ActivationParams();
  const float alpha = p->alpha();
  const float beta = p->beta();
  return Map(call, [alpha, beta](float v) { return Clamp01(alpha * v + beta); });
}

Status HardSwishEval(const KernelCall& call) {
  return Map(call, [](float v) { return v * Clamp01(v * (1.0f / 6.0f) + 0.5f); });
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
};
BATON_KERNEL_FAMILY(Activation, kActivationEntries);

}  // namespace kernels
}  // namespace baton
