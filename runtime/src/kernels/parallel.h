#pragma once
// The kernels' side of baton/parallel.h: split a loop over the calling
// thread's runner.

#include <stddef.h>
#include <stdint.h>

#include "baton/parallel.h"

// Hosted builds have the thread-local runner; bare-metal ones compile the
// split paths out (ParallelThreads() is always 1 there). A port for an RTOS
// with thread-local storage may define BATON_PARALLEL_KERNELS=1 itself.
#ifndef BATON_PARALLEL_KERNELS
#if defined(__linux__) || defined(__APPLE__) || defined(_WIN32)
#define BATON_PARALLEL_KERNELS 1
#else
#define BATON_PARALLEL_KERNELS 0
#endif
#endif

namespace baton {
namespace kernels {

// Threads the calling thread's runner offers (1 without one).
int ParallelThreads();

// Runs fn(ctx, begin, end, slot) over [0, n) split into at most `max_parts`
// contiguous ranges of whole multiples of `grain` (the last range also takes
// the remainder, so no range is shorter than `grain` when n >= grain), slot
// numbering the ranges from 0; serially (one call, slot 0) when
// the thread has no runner or only one range results. Ranges are as even as
// possible, so the split depends only on n, grain and the part count.
using RangeFn = void (*)(void* ctx, int64_t begin, int64_t end, int slot);
void ParallelFor(int64_t n, int64_t grain, int max_parts, RangeFn fn, void* ctx);

// The range ParallelFor gives `slot` of `parts` (at most n / grain, at
// least 1) over [0, n): units [slot * units / parts, (slot + 1) * units /
// parts) of `grain` items, the last range up to n.
inline void ParallelRange(int64_t n, int64_t grain, int parts, int slot, int64_t* begin,
                          int64_t* end) {
  const int64_t units = n / grain > 0 ? n / grain : 1;
  *begin = units * slot / parts * grain;
  *end = slot + 1 == parts ? n : units * (slot + 1) / parts * grain;
}

// Slices of `slice_bytes` (rounded up to 64) a workspace of `have` bytes
// holds; at least 1.
int ParallelWorkspaceSlices(size_t have, size_t slice_bytes);

// The byte stride between workspace slices.
inline size_t ParallelSliceStride(size_t slice_bytes) { return (slice_bytes + 63) / 64 * 64; }

}  // namespace kernels
}  // namespace baton
