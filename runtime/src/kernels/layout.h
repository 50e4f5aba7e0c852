#pragma once
// What the layout kernels (Slice, Transpose, Pad: any dtype, elements moved
// by their size) share: the checks their prepare starts with, contiguous
// strides, and the copy of a strided view.

#include <stddef.h>
#include <stdint.h>

#include "baton/kernels.h"

namespace baton {
namespace kernels {

// 1 to `max_inputs` inputs (the extra ones ignored) and one output, input
// rank <= kMaxRank, output of the input's dtype (a known one) and rank.
// Fails with InvalidArgument and `dtype_message` or `rank_message` (the
// caller's, naming its op) for the last two.
Status CheckLayoutPrepare(const KernelCall& call, uint32_t max_inputs, const char* dtype_message,
                          const char* rank_message);

// Element strides of `t` stored contiguously: out_stride[d] is the product of
// the dims after d. Writes t.rank() entries (t.rank() <= kMaxRank).
void ContiguousStrides(const TensorArg& t, int64_t* out_stride);

// Writes the elements of a strided view of `src` to `dst` in order. The view
// has `rank` (<= kMaxRank) dims of size[d] > 0 elements; its element 0 is
// src[base] and one step along dim d moves step[d] elements in `src` (may be
// negative or 0). Rank 0 is one element.
void CopyStridedView(void* dst, const void* src, int64_t base, const int64_t* size,
                     const int64_t* step, uint32_t rank, size_t esize);

}  // namespace kernels
}  // namespace baton
