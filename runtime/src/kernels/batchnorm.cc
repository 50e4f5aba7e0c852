// BatchNormalization, inference form: inputs X [N, C, ...], scale, B, mean,
// var (all [C]); y = (x - mean) / sqrt(var + epsilon) * scale + B, computed
// as one multiply-add per element with per-channel coefficients.

#include <math.h>

#include "kernel_family.h"
#include "kernel_util.h"

namespace baton {
namespace kernels {
namespace {

Status BatchNormPrepare(const KernelCall& call) {
  BATON_RETURN_IF_ERROR(CheckArity(call, 5, 5, 1));
  BATON_RETURN_IF_ERROR(CheckAllF32(call));
  const TensorArg& x = call.inputs[0];
  BATON_KCHECK(x.rank() >= 2, "BatchNormalization input must have rank >= 2");
  BATON_KCHECK(SameShape(x, call.outputs[0]), "BatchNormalization output shape != input");
  for (uint32_t i = 1; i < 5; ++i) {
    const TensorArg& t = call.inputs[i];
    BATON_KCHECK(t.rank() == 1 && t.dim(0) == x.dim(1),
                 "BatchNormalization scale, B, mean and var must be [C]");
  }
  return Status::Ok();
}

Status BatchNormEval(const KernelCall& call) {
  const TensorArg& tx = call.inputs[0];
  const schema::BatchNormParams* p = call.node->params_as_BatchNormParams();
  const float eps = p ? p->epsilon() : 1e-5f;  // ONNX default when absent
  const float* x = tx.f32();
  const float* scale = call.inputs[1].f32();
  const float* shift = call.inputs[2].f32();
  const float* mean = call.inputs[3].f32();
  const float* var = call.inputs[4].f32();
  float* y = call.outputs[0].f32();
  const int64_t n = tx.dim(0);
  const int64_t c = tx.dim(1);
  const int64_t inner = DimProduct(tx, 2, tx.rank());
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ch = 0; ch < c; ++ch) {
      const float a = scale[ch] / sqrtf(var[ch] + eps);
      const float d = shift[ch] - mean[ch] * a;
      const float* xs = x + (b * c + ch) * inner;
      float* ys = y + (b * c + ch) * inner;
      for (int64_t i = 0; i < inner; ++i) ys[i] = xs[i] * a + d;
    }
  }
  return Status::Ok();
}

}  // namespace

constexpr KernelEntry kBatchNormEntries[] = {
    {Op::BatchNormalization, kAllDeviceKinds, BatchNormPrepare, BatchNormEval, nullptr},
};
BATON_KERNEL_FAMILY(BatchNorm, kBatchNormEntries);

}  // namespace kernels
}  // namespace baton
