#pragma once
// Broadcasting of up to three operands to an output shape, element by
// element (no collapsing): the comparison, logic, Where and Expand kernels,
// whose operands may have any dtype. Internal to baton_kernels.

#include <stdint.h>

#include "kernel_util.h"

namespace baton {
namespace kernels {

// Element strides of `a` broadcast to `y`'s shape (right-aligned; 0 along
// broadcast dims). Fails unless every dim of `a` is 1 or y's.
inline Status BroadcastStrides(const TensorArg& a, const TensorArg& y,
                               int64_t out_strides[kMaxRank]) {
  BATON_RETURN_IF_ERROR(CheckRank(a));
  BATON_RETURN_IF_ERROR(CheckRank(y));
  const uint32_t r = y.rank();
  BATON_KCHECK(a.rank() <= r, "operand rank exceeds output rank");
  int64_t run = 1;
  for (int32_t d = static_cast<int32_t>(r) - 1; d >= 0; --d) {
    const int32_t k = d - static_cast<int32_t>(r - a.rank());
    const int64_t da = k >= 0 ? a.dim(static_cast<uint32_t>(k)) : 1;
    BATON_KCHECK(da == 1 || da == y.dim(static_cast<uint32_t>(d)),
                 "operand does not broadcast to the output shape");
    out_strides[d] = da == 1 ? 0 : run;
    run *= da;
  }
  return Status::Ok();
}

// Calls fn(i, offsets) for every output element i in row-major order, where
// offsets[k] is operand k's element for it (strides[k] from BroadcastStrides).
template <uint32_t N, typename Fn>
void ForEachBroadcast(const TensorArg& y, const int64_t (&strides)[N][kMaxRank], Fn fn) {
  const uint32_t r = y.rank();
  const int64_t total = y.elements();
  int64_t index[kMaxRank] = {};
  int64_t offsets[N] = {};
  for (int64_t i = 0; i < total; ++i) {
    fn(i, offsets);
    for (int32_t d = static_cast<int32_t>(r) - 1; d >= 0; --d) {
      const int64_t dim = y.dim(static_cast<uint32_t>(d));
      if (++index[d] < dim) {
        for (uint32_t k = 0; k < N; ++k) offsets[k] += strides[k][d];
        break;
      }
      for (uint32_t k = 0; k < N; ++k) offsets[k] -= strides[k][d] * (dim - 1);
      index[d] = 0;
    }
  }
}

}  // namespace kernels
}  // namespace baton
