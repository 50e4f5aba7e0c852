// Softmax over one axis (opset 13): y = exp(x - max) / sum(exp(x - max)),
// max and sum taken along AxisParams.axis; LogSoftmax:
// y = x - max - log(sum(exp(x - max))). The output may alias the input.
//
// Vectorized without intrinsics: the loops below are written so that GCC's
// vectorizer (-O3, baton_kernels; this file is built with
// -fno-trapping-math so that the float selects if-convert) turns them into
// SIMD code on every ISA: exp is a branch-free polynomial (ExpNonPositive),
// max and sum keep kLanes partial results, and when the axis is not the
// innermost dim the loops run across blocks of the contiguous inner dims.

#include <math.h>
#include <string.h>

#include "kernel_family.h"
#include "kernel_math.h"
#include "kernel_util.h"

namespace baton {
namespace kernels {
namespace {

constexpr int kLanes = 8;   // partial maxima and sums (one AVX2 register)
constexpr int kBlock = 16;  // inner positions per pass when the axis is not last

// The axis is the innermost dim: rows are contiguous.
template <bool kLog>
void SoftmaxRow(const float* x, float* y, int64_t len) {
  float lanes[kLanes];
  for (int l = 0; l < kLanes; ++l) lanes[l] = x[0];
  int64_t a = 0;
  for (; a + kLanes <= len; a += kLanes) {
    for (int l = 0; l < kLanes; ++l) lanes[l] = x[a + l] > lanes[l] ? x[a + l] : lanes[l];
  }
  float mx = lanes[0];
  for (int l = 1; l < kLanes; ++l) mx = lanes[l] > mx ? lanes[l] : mx;
  for (; a < len; ++a) mx = x[a] > mx ? x[a] : mx;

  float sums[kLanes] = {};
  a = 0;
  if (kLog) {
    for (; a + kLanes <= len; a += kLanes) {
      for (int l = 0; l < kLanes; ++l) sums[l] += ExpNonPositive(x[a + l] - mx);
    }
  } else {
    for (; a + kLanes <= len; a += kLanes) {
      for (int l = 0; l < kLanes; ++l) {
        const float e = ExpNonPositive(x[a + l] - mx);
        y[a + l] = e;
        sums[l] += e;
      }
    }
  }
  float sum = 0.0f;
  for (int l = 0; l < kLanes; ++l) sum += sums[l];
  for (; a < len; ++a) {
    const float e = ExpNonPositive(x[a] - mx);
    if (!kLog) y[a] = e;
    sum += e;
  }
  if (kLog) {
    const float shift = mx + logf(sum);
    for (int64_t k = 0; k < len; ++k) y[k] = x[k] - shift;
    return;
  }
  const float inv = 1.0f / sum;
  for (int64_t k = 0; k < len; ++k) y[k] *= inv;
}

// The axis has `inner` contiguous positions after it: `width` (<= kBlock) of
// them at a time, vectorized across positions.
template <bool kLog>
void SoftmaxColumns(const float* x, float* y, int64_t len, int64_t inner, int width) {
  float mx[kBlock];
  float sum[kBlock];
  for (int i = 0; i < width; ++i) {
    mx[i] = x[i];
    sum[i] = 0.0f;
  }
  for (int64_t a = 1; a < len; ++a) {
    const float* xa = x + a * inner;
    for (int i = 0; i < width; ++i) mx[i] = xa[i] > mx[i] ? xa[i] : mx[i];
  }
  for (int64_t a = 0; a < len; ++a) {
    const float* xa = x + a * inner;
    float* ya = y + a * inner;
    for (int i = 0; i < width; ++i) {
      const float e = ExpNonPositive(xa[i] - mx[i]);
      if (!kLog) ya[i] = e;
      sum[i] += e;
    }
  }
  if (kLog) {
    for (int i = 0; i < width; ++i) mx[i] += logf(sum[i]);
    for (int64_t a = 0; a < len; ++a) {
      const float* xa = x + a * inner;
      float* ya = y + a * inner;
      for (int i = 0; i < width; ++i) ya[i] = xa[i] - mx[i];
    }
    return;
  }
  for (int i = 0; i < width; ++i) sum[i] = 1.0f / sum[i];
  for (int64_t a = 0; a < len; ++a) {
    float* ya = y + a * inner;
    for (int i = 0; i < width; ++i) ya[i] *= sum[i];
  }
}

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
    const float* xo = x + o * len * inner;
    float* yo = y + o * len * inner;
    if (inner == 1) {
      SoftmaxRow<kLog>(xo, yo, len);
      continue;
    }
    for (int64_t i = 0; i < inner; i += kBlock) {
      const int width = static_cast<int>(inner - i < kBlock ? inner - i : kBlock);
      SoftmaxColumns<kLog>(xo + i, yo + i, len, inner, width);
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
