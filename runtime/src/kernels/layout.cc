// A strided view is copied as runs along its innermost dim (a memcpy when
// contiguous), the outer dims an odometer over source offsets.

#include "layout.h"

#include <string.h>

#include "kernel_util.h"

namespace baton {
namespace kernels {
namespace {

template <typename T>
void CopyStridedT(T* __restrict dst, const T* __restrict src, int64_t n, int64_t step) {
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i * step];
}

// dst[i] = src[i * step] for i < n; `step` in elements, may be negative or 0.
void CopyStrided(void* dst, const void* src, int64_t n, int64_t step, size_t esize) {
  if (step == 1) {
    memcpy(dst, src, static_cast<size_t>(n) * esize);
    return;
  }
  switch (esize) {
    case 1:
      CopyStridedT(static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), n, step);
      return;
    case 4:
      CopyStridedT(static_cast<uint32_t*>(dst), static_cast<const uint32_t*>(src), n, step);
      return;
    case 8:
      CopyStridedT(static_cast<uint64_t*>(dst), static_cast<const uint64_t*>(src), n, step);
      return;
    default: {
      uint8_t* d = static_cast<uint8_t*>(dst);
      const uint8_t* s = static_cast<const uint8_t*>(src);
      for (int64_t i = 0; i < n; ++i) {
        memcpy(d + static_cast<size_t>(i) * esize,
               s + static_cast<ptrdiff_t>(i * step) * static_cast<ptrdiff_t>(esize), esize);
      }
      return;
    }
  }
}

}  // namespace

Status CheckLayoutPrepare(const KernelCall& call, uint32_t max_inputs, const char* dtype_message,
                          const char* rank_message) {
  BATON_RETURN_IF_ERROR(CheckArity(call, 1, max_inputs, 1));
  const TensorArg& x = call.inputs[0];
  const TensorArg& y = call.outputs[0];
  BATON_RETURN_IF_ERROR(CheckRank(x));
  BATON_KCHECK(x.dtype() == y.dtype() && DTypeSize(x.dtype()) != 0, dtype_message);
  BATON_KCHECK(x.rank() == y.rank(), rank_message);
  return Status::Ok();
}

void ContiguousStrides(const TensorArg& t, int64_t* out_stride) {
  int64_t run = 1;
  for (int32_t d = static_cast<int32_t>(t.rank()) - 1; d >= 0; --d) {
    out_stride[d] = run;
    run *= t.dim(static_cast<uint32_t>(d));
  }
}

void CopyStridedView(void* dst, const void* src, int64_t base, const int64_t* size,
                     const int64_t* step, uint32_t rank, size_t esize) {
  const uint8_t* s = static_cast<const uint8_t*>(src);
  uint8_t* d = static_cast<uint8_t*>(dst);
  if (rank == 0) {
    memcpy(d, s + base * static_cast<int64_t>(esize), esize);
    return;
  }
  const uint32_t inner = rank - 1;
  const int64_t len = size[inner];
  int64_t rows = 1;
  for (uint32_t k = 0; k < inner; ++k) rows *= size[k];
  int64_t index[kMaxRank] = {};
  int64_t off = base;
  for (int64_t t = 0; t < rows; ++t) {
    CopyStrided(d, s + off * static_cast<int64_t>(esize), len, step[inner], esize);
    d += static_cast<size_t>(len) * esize;
    for (int32_t k = static_cast<int32_t>(inner) - 1; k >= 0; --k) {
      off += step[k];
      if (++index[k] < size[k]) break;
      off -= step[k] * size[k];
      index[k] = 0;
    }
  }
}

}  // namespace kernels
}  // namespace baton
