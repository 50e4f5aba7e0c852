// ReduceMean over ReduceParams.axes (non-negative, sorted; empty or absent
// means all axes). keepdims only changes the output shape, which the output
// tensor already carries. Runs of reduced / kept axes are collapsed, then the
// input is walked once in memory order, adding into the output.

#include "kernel_family.h"
#include "kernel_util.h"

namespace baton {
namespace kernels {
namespace {

// Bit i set when input axis i is reduced.
Status ReducedAxes(const KernelCall& call, uint32_t* out_mask) {
  const TensorArg& x = call.inputs[0];
  const schema::ReduceParams* p = call.node->params_as_ReduceParams();
  const auto* axes = p ? p->axes() : nullptr;
  uint32_t mask = 0;
  if (axes == nullptr || axes->size() == 0) {
    mask = x.rank() == 0 ? 0 : (1u << x.rank()) - 1;
  } else {
    int32_t prev = -1;
    for (uint32_t i = 0; i < axes->size(); ++i) {
      const int32_t a = axes->Get(i);
      BATON_KCHECK(a > prev && static_cast<uint32_t>(a) < x.rank(),
                   "ReduceMean axes must be sorted, unique and in range");
      mask |= 1u << a;
      prev = a;
    }
  }
  *out_mask = mask;
  return Status::Ok();
}

Status ReduceMeanPrepare(const KernelCall& call) {
  BATON_RETURN_IF_ERROR(CheckArity(call, 1, 1, 1));
  BATON_RETURN_IF_ERROR(CheckAllF32(call));
  const TensorArg& x = call.inputs[0];
  const TensorArg& y = call.outputs[0];
  BATON_RETURN_IF_ERROR(CheckRank(x));
  uint32_t mask;
  BATON_RETURN_IF_ERROR(ReducedAxes(call, &mask));
  const schema::ReduceParams* p = call.node->params_as_ReduceParams();
  const bool keepdims = p ? p->keepdims() : true;
  uint32_t j = 0;
  for (uint32_t i = 0; i < x.rank(); ++i) {
    const bool reduced = (mask >> i) & 1u;
    if (reduced && !keepdims) continue;
    BATON_KCHECK(j < y.rank() && y.dim(j) == (reduced ? 1 : x.dim(i)),
                 "ReduceMean output shape mismatch");
    ++j;
  }
  BATON_KCHECK(j == y.rank(), "ReduceMean output rank mismatch");
  return Status::Ok();
}

Status ReduceMeanEval(const KernelCall& call) {
  const TensorArg& tx = call.inputs[0];
  uint32_t mask;
  BATON_RETURN_IF_ERROR(ReducedAxes(call, &mask));
  // Collapsed dims: size, whether reduced, output stride (0 when reduced).
  int64_t size[kMaxRank + 1];
  bool red[kMaxRank + 1];
  uint32_t n = 0;
  int64_t count = 1;
  for (uint32_t i = 0; i < tx.rank(); ++i) {
    const bool r = (mask >> i) & 1u;
    if (r) count *= tx.dim(i);
    if (tx.dim(i) == 1) continue;
    if (n > 0 && red[n - 1] == r) {
      size[n - 1] *= tx.dim(i);
    } else {
      size[n] = tx.dim(i);
      red[n] = r;
      ++n;
    }
  }
  if (n == 0) {
    size[0] = 1;
    red[0] = false;
    n = 1;
  }
  int64_t ostride[kMaxRank + 1];
  int64_t run = 1;
  for (int32_t d = static_cast<int32_t>(n) - 1; d >= 0; --d) {
    ostride[d] = red[d] ? 0 : run;
    if (!red[d]) run *= size[d];
  }
  const float* x = tx.f32();
  float* y = call.outputs[0].f32();
  const int64_t out_elems = call.outputs[0].elements();
  for (int64_t i = 0; i < out_elems; ++i) y[i] = 0.0f;
  if (tx.elements() == 0) return Status::Ok();

  const uint32_t inner = n - 1;
  const int64_t len = size[inner];
  int64_t rows = 1;
  for (uint32_t d = 0; d < inner; ++d) rows *= size[d];
  int64_t index[kMaxRank + 1] = {};
  int64_t o = 0;
  for (int64_t t = 0; t < rows; ++t) {
    const float* xr = x + t * len;
    if (red[inner]) {
      y[o] += SumF32(xr, len);
    } else {
      float* yr = y + o;
      for (int64_t i = 0; i < len; ++i) yr[i] += xr[i];
    }
    for (int32_t d = static_cast<int32_t>(inner) - 1; d >= 0; --d) {
      o += ostride[d];
      if (++index[d] < size[d]) break;
      o -= ostride[d] * size[d];
      index[d] = 0;
    }
  }
  const float inv = count > 0 ? 1.0f / static_cast<float>(count) : 0.0f;
  for (int64_t i = 0; i < out_elems; ++i) y[i] *= inv;
  return Status::Ok();
}

}  // namespace

constexpr KernelEntry kReduceEntries[] = {
    {Op::ReduceMean, kAllDeviceKinds, ReduceMeanPrepare, ReduceMeanEval, nullptr},
};
BATON_KERNEL_FAMILY(Reduce, kReduceEntries);

}  // namespace kernels
}  // namespace baton
