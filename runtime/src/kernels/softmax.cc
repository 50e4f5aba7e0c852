// Softmax over one axis (opset 13): y = exp(x - max) / sum(exp(x - max)),
// max and sum taken along AxisParams.axis; LogSoftmax:
// y = x - max - log(sum(exp(x - max))). The output may alias the input.

#include <math.h>

#include "kernel_family.h"
#include "kernel_util.h"

namespace baton {
namespace kernels {
namespace {

Status SoftmaxPrepare(const KernelCall& call) {
  BATON_RETURN_IF_ERROR(CheckArity(call, 1, 1, 1));
  BATON_RETURN_IF_ERROR(CheckAllF32(call));
  BATON_RETURN_IF_ERROR(CheckRank(call.inputs[0]));
  BATON_KCHECK(SameShape(call.inputs[0], call.outputs[0]), "Softmax output shape != input");
  const schema::AxisParams* p = call.node->params_as_AxisParams();
  BATON_KCHECK(p != nullptr, "Softmax/LogSoftmax needs AxisParams");
  BATON_KCHECK(p->axis() >= 0 && static_cast<uint32_t>(p->axis()) < call.inputs[0].rank(),
               "Softmax axis out of range");
  return Status::Ok();
}

template <bool kLog>
Status SoftmaxEval(const KernelCall& call) {
  const TensorArg& tx = call.inputs[0];
  const uint32_t axis = static_cast<uint32_t>(call.node->params_as_AxisParams()->axis());
  const int64_t outer = DimProduct(tx, 0, axis);
  const int64_t len = tx.dim(axis);
  const int64_t inner = DimProduct(tx, axis + 1, tx.rank());
  const float* x = tx.f32();
  float* y = call.outputs[0].f32();
  if (len == 0) return Status::Ok();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const float* xs = x + o * len * inner + i;
      float* ys = y + o * len * inner + i;
      float mx = xs[0];
      for (int64_t a = 1; a < len; ++a) mx = xs[a * inner] > mx ? xs[a * inner] : mx;
      float sum = 0.0f;
      if (kLog) {
        for (int64_t a = 0; a < len; ++a) sum += expf(xs[a * inner] - mx);
        const float shift = mx + logf(sum);
        for (int64_t a = 0; a < len; ++a) ys[a * inner] = xs[a * inner] - shift;
        continue;
      }
      for (int64_t a = 0; a < len; ++a) {
        const float e = expf(xs[a * inner] - mx);
        ys[a * inner] = e;
        sum += e;
      }
      const float inv = 1.0f / sum;
      for (int64_t a = 0; a < len; ++a) ys[a * inner] *= inv;
    }
  }
  return Status::Ok();
}

}  // namespace

constexpr KernelEntry kSoftmaxEntries[] = {
    {Op::Softmax, kAllDeviceKinds, SoftmaxPrepare, SoftmaxEval<false>, nullptr},
    {Op::LogSoftmax, kAllDeviceKinds, SoftmaxPrepare, SoftmaxEval<true>, nullptr},
};
BATON_KERNEL_FAMILY(Softmax, kSoftmaxEntries);

}  // namespace kernels
}  // namespace baton
