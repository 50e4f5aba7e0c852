#pragma once
// Sliding-window geometry shared by Conv and the pools: NCHW (or NCL, seen as
// NC1L) input, one window per output position.

#include <stdint.h>

#include "kernel_util.h"

namespace baton {
namespace kernels {

struct Window2d {
  int64_t n = 1, c = 1, h = 1, w = 1;  // input
  int64_t oh = 1, ow = 1;              // output spatial dims
  int64_t kh = 1, kw = 1;
  int64_t sh = 1, sw = 1;
  int64_t pt = 0, pl = 0, pb = 0, pr = 0;  // top, left, bottom, right
  int64_t dh = 1, dw = 1;

  // Number of window taps along y (x) whose position lies in
  // [lo_bound, hi_bound), for a window starting at `start`.
  static int64_t TapsIn(int64_t start, int64_t k, int64_t d, int64_t lo_bound, int64_t hi_bound) {
    int64_t lo = CeilDiv(lo_bound - start, d);
    int64_t hi = FloorDiv(hi_bound - 1 - start, d) + 1;
    lo = lo < 0 ? 0 : lo;
    hi = hi > k ? k : hi;
    return hi > lo ? hi - lo : 0;
  }
};

// Reads kernel/strides/pads/dilations (spatial rank 1 or 2) and the N, C and
// spatial dims of `x` and `y`. `kernel` is required; absent strides and
// dilations mean 1, absent pads 0.
inline Status ParseWindow(const TensorArg& x, const TensorArg& y,
                          const flatbuffers::Vector<int32_t>* kernel,
                          const flatbuffers::Vector<int32_t>* strides,
                          const flatbuffers::Vector<int32_t>* pads,
                          const flatbuffers::Vector<int32_t>* dilations, Window2d* out) {
  BATON_KCHECK(x.rank() == 3 || x.rank() == 4, "expected an NCL or NCHW input");
  BATON_KCHECK(y.rank() == x.rank(), "output rank must match input rank");
  const uint32_t sp = x.rank() - 2;
  BATON_KCHECK(kernel != nullptr && kernel->size() == sp, "kernel shape length mismatch");
  BATON_KCHECK(strides == nullptr || strides->size() == sp, "strides length mismatch");
  BATON_KCHECK(pads == nullptr || pads->size() == 2 * sp, "pads length mismatch");
  BATON_KCHECK(dilations == nullptr || dilations->size() == sp, "dilations length mismatch");
  Window2d g;
  g.n = x.dim(0);
  g.c = x.dim(1);
  const uint32_t ix = sp == 2 ? 1 : 0;  // index of the x (width) axis in the param arrays
  if (sp == 2) {
    g.h = x.dim(2);
    g.oh = y.dim(2);
    g.kh = kernel->Get(0);
    g.sh = strides ? strides->Get(0) : 1;
    g.dh = dilations ? dilations->Get(0) : 1;
    g.pt = pads ? pads->Get(0) : 0;
    g.pb = pads ? pads->Get(sp) : 0;
  }
  g.w = x.dim(x.rank() - 1);
  g.ow = y.dim(y.rank() - 1);
  g.kw = kernel->Get(ix);
  g.sw = strides ? strides->Get(ix) : 1;
  g.dw = dilations ? dilations->Get(ix) : 1;
  g.pl = pads ? pads->Get(ix) : 0;
  g.pr = pads ? pads->Get(sp + ix) : 0;
  BATON_KCHECK(g.kh >= 1 && g.kw >= 1, "kernel size must be positive");
  BATON_KCHECK(g.sh >= 1 && g.sw >= 1, "strides must be positive");
  BATON_KCHECK(g.dh >= 1 && g.dw >= 1, "dilations must be positive");
  BATON_KCHECK(g.pt >= 0 && g.pl >= 0 && g.pb >= 0 && g.pr >= 0, "pads must be non-negative");
  *out = g;
  return Status::Ok();
}

// Output length of a window along one axis (ONNX/PyTorch rules; with
// ceil_mode the last window must start inside the input or the begin pad).
inline int64_t WindowOutputSize(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pad_begin,
                                int64_t pad_end, bool ceil_mode) {
  const int64_t span = in + pad_begin + pad_end - d * (k - 1) - 1;
  if (span < 0) return 0;
  int64_t out = (ceil_mode ? CeilDiv(span, s) : FloorDiv(span, s)) + 1;
  if (ceil_mode && (out - 1) * s >= in + pad_begin) --out;
  return out;
}

}  // namespace kernels
}  // namespace baton
