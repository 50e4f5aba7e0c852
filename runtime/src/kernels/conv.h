#pragma once
// Convolution internals shared by conv.cc (GEMM path), depthwise_conv.cc and
// qlinear.cc.

#include <stdint.h>

#include "gemm_core.h"
#include "kernel_util.h"
#include "window.h"

namespace baton {
namespace kernels {

struct ConvGeom {
  Window2d win;
  int64_t m = 1;  // output channels
  int64_t group = 1;
};

// group == C and M a multiple of C: one (or `M / C`) filters per channel.
inline bool IsDepthwise(const ConvGeom& g) {
  return g.group > 1 && g.group == g.win.c && g.m % g.win.c == 0;
}

// 1x1 kernel, unit stride, no padding: the input is the GEMM's B as is.
inline bool IsPointwise(const ConvGeom& g) {
  const Window2d& w = g.win;
  return w.kh == 1 && w.kw == 1 && w.sh == 1 && w.sw == 1 && w.pt == 0 && w.pl == 0 && w.pb == 0 &&
         w.pr == 0;
}

// Reads a convolution's geometry from ConvParams and the shapes of x (NCHW
// or NCL), w ([M, C / group, kH, kW]) and y, and checks that they agree
// (Conv, QLinearConv; dtypes are the caller's).
Status ParseConvGeometry(const TensorArg& x, const TensorArg& w, const TensorArg& y,
                         const schema::ConvParams& p, ConvGeom* out);

// The workspace DepthwiseConv's phase-plane or channel-block path needs.
size_t DepthwiseWorkspaceBytes(const ConvGeom& g);

// Whether DepthwiseConv runs g on the direct path with the active kernels
// (x86-64 AVX2 and AVX-512 builds only; depthwise_conv.cc).
#if BATON_DW_DIRECT_BUILT
bool DepthwiseRunsDirect(const ConvGeom& g);
#else
inline bool DepthwiseRunsDirect(const ConvGeom&) { return false; }
#endif

// y[n, m] for all n, m. `bias` may be null. The direct path where it takes
// the layer; else with a workspace of DepthwiseWorkspaceBytes the
// phase-plane or channel-block path, else the row path.
// `fused` (may be null): ApplyEpilogue on each finished output row, channel
// or channel block, its sum (when non-null) laid out as y; `clamp` is then
// disabled and fused->clamp applies instead.
void DepthwiseConv(const ConvGeom& g, const float* x, const float* w, const float* bias,
                   const Clamp& clamp, float* y, float* ws, size_t ws_bytes,
                   const GemmEpilogue* fused = nullptr);

}  // namespace kernels
}  // namespace baton
