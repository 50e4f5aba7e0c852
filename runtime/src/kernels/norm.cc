// LayerNormalization (BatchNormParams{epsilon}; over the dims from axis =
// rank(X) - rank(Scale), with scale and optional bias of those dims' shape) and InstanceNormalization (per
// sample and channel over the spatial dims, scale and bias [C]), float32:
//   y = (x - mean) / sqrt(var + epsilon) * scale + bias
// One row at a time: the mean (SumF32's eight partial sums), the variance of
// the centred values (likewise), then one fused pass; all three loops
// vectorize without reassociation flags.

#include <math.h>

#include "kernel_family.h"
#include "kernel_util.h"

namespace baton {
namespace kernels {
namespace {

// Sum of (x[i] - mean)^2, in eight partial sums.
float CenteredSquares(const float* x, int64_t n, float mean) {
  float acc[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) {
      const float d = x[i + j] - mean;
      acc[j] += d * d;
    }
  }
  float sum = 0.0f;
  for (; i < n; ++i) sum += (x[i] - mean) * (x[i] - mean);
  for (int j = 0; j < 8; ++j) sum += acc[j];
  return sum;
}

// Mean and 1 / sqrt(variance + eps) of one row.
void Moments(const float* x, int64_t n, float eps, float* out_mean, float* out_inv) {
  const float inv_n = 1.0f / static_cast<float>(n);
  const float mean = SumF32(x, n) * inv_n;
  *out_mean = mean;
  *out_inv = 1.0f / sqrtf(CenteredSquares(x, n, mean) * inv_n + eps);
}

Status LayerNormPrepare(const KernelCall& call) {
  BATON_RETURN_IF_ERROR(CheckArity(call, 2, 3, 1));
  BATON_RETURN_IF_ERROR(CheckAllF32(call));
  const TensorArg& x = call.inputs[0];
  BATON_KCHECK(SameShape(x, call.outputs[0]), "LayerNormalization output shape != input");
  const schema::BatchNormParams* p = call.node->params_as_BatchNormParams();
  const TensorArg& scale = call.inputs[1];
  BATON_KCHECK(p != nullptr && scale.rank() >= 1 && scale.rank() <= x.rank(),
               "LayerNormalization needs BatchNormParams and a Scale of rank 1..rank(X)");
  const uint32_t axis = x.rank() - scale.rank();
  for (uint32_t i = 1; i < 3; ++i) {
    const TensorArg& t = Input(call, i);
    if (!t.present()) continue;
    bool ok = t.rank() == x.rank() - axis;
    for (uint32_t d = 0; ok && d < t.rank(); ++d) ok = t.dim(d) == x.dim(axis + d);
    BATON_KCHECK(ok, "LayerNormalization scale and bias must have the normalized dims' shape");
  }
  return Status::Ok();
}

Status LayerNormEval(const KernelCall& call) {
  const TensorArg& tx = call.inputs[0];
  const schema::BatchNormParams* p = call.node->params_as_BatchNormParams();
  const uint32_t axis = tx.rank() - call.inputs[1].rank();
  const int64_t rows = DimProduct(tx, 0, axis);
  const int64_t n = DimProduct(tx, axis, tx.rank());
  const float* scale = call.inputs[1].f32();
  const TensorArg& b = Input(call, 2);
  const float* bias = b.present() ? b.f32() : nullptr;
  const float eps = p->epsilon();
  if (n == 0) return Status::Ok();
  for (int64_t r = 0; r < rows; ++r) {
    const float* x = tx.f32() + r * n;
    float* y = call.outputs[0].f32() + r * n;
    float mean, inv;
    Moments(x, n, eps, &mean, &inv);
    if (bias != nullptr) {
      for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * inv * scale[i] + bias[i];
    } else {
      for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * inv * scale[i];
    }
  }
  return Status::Ok();
}

Status InstanceNormPrepare(const KernelCall& call) {
  BATON_RETURN_IF_ERROR(CheckArity(call, 3, 3, 1));
  BATON_RETURN_IF_ERROR(CheckAllF32(call));
  const TensorArg& x = call.inputs[0];
  BATON_KCHECK(x.rank() >= 3, "InstanceNormalization input must have rank >= 3");
  BATON_KCHECK(SameShape(x, call.outputs[0]), "InstanceNormalization output shape != input");
  for (uint32_t i = 1; i < 3; ++i) {
    const TensorArg& t = call.inputs[i];
    BATON_KCHECK(t.rank() == 1 && t.dim(0) == x.dim(1),
                 "InstanceNormalization scale and B must be [C]");
  }
  return Status::Ok();
}

Status InstanceNormEval(const KernelCall& call) {
  const TensorArg& tx = call.inputs[0];
  const schema::BatchNormParams* p = call.node->params_as_BatchNormParams();
  const float eps = p ? p->epsilon() : 1e-5f;  // ONNX default when absent
  const float* scale = call.inputs[1].f32();
  const float* shift = call.inputs[2].f32();
  const int64_t c = tx.dim(1);
  const int64_t planes = tx.dim(0) * c;
  const int64_t n = DimProduct(tx, 2, tx.rank());
  if (n == 0) return Status::Ok();
  for (int64_t pl = 0; pl < planes; ++pl) {
    const float* x = tx.f32() + pl * n;
    float* y = call.outputs[0].f32() + pl * n;
    float mean, inv;
    Moments(x, n, eps, &mean, &inv);
    const float a = inv * scale[pl % c];
    const float d = shift[pl % c] - mean * a;
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] * a + d;
  }
  return Status::Ok();
}

}  // namespace

constexpr KernelEntry kNormEntries[] = {
    {Op::LayerNormalization, kAllDeviceKinds, LayerNormPrepare, LayerNormEval, nullptr},
    {Op::InstanceNormalization, kAllDeviceKinds, InstanceNormPrepare, InstanceNormEval, nullptr},
};
BATON_KERNEL_FAMILY(Norm, kNormEntries);

}  // namespace kernels
}  // namespace baton
