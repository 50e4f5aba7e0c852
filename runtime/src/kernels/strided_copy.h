#pragma once
// Element copies with a source stride, for any dtype (by element size).
// Used by the layout kernels (Slice, Transpose, Gather, Pad).

#include <stddef.h>
#include <stdint.h>
#include <string.h>

namespace baton {
namespace kernels {

template <typename T>
inline void CopyStridedT(T* __restrict dst, const T* __restrict src, int64_t n, int64_t step) {
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i * step];
}

// dst[i] = src[i * step] for i < n; `step` in elements, may be negative or 0.
inline void CopyStrided(void* dst, const void* src, int64_t n, int64_t step, size_t esize) {
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

}  // namespace kernels
}  // namespace baton
