#pragma once
// Winograd F(2x2, 3x3) convolution (conv_winograd.cc), used by conv.cc for
// dense 3x3 stride-1 layers large enough to profit.

#include <stddef.h>

#include "conv.h"

namespace baton {
namespace kernels {

// True when Conv takes the Winograd path for this geometry. Depends on the
// shape only (never on the instruction set), like the workspace size.
bool UseWinograd(const ConvGeom& g);

// Workspace of WinogradConv (0 when UseWinograd is false).
size_t WinogradWorkspaceBytes(const ConvGeom& g);

// y = conv(x, w) + bias, clamped (or, with `fused`, ApplyEpilogue on each
// finished output row segment of a tile row, the sum laid out as y).
// `workspace` holds WinogradWorkspaceBytes, 16-byte aligned (`workspace_bytes`
// in all: with several slices of it, ParallelWorkspaceBytes, the tile blocks
// are split over the calling thread's parallel runner); `bias` may be null.
void WinogradConv(const ConvGeom& g, const float* x, const float* w, const float* bias,
                  const Clamp& clamp, float* y, float* workspace, size_t workspace_bytes,
                  const GemmEpilogue* fused = nullptr);

}  // namespace kernels
}  // namespace baton
