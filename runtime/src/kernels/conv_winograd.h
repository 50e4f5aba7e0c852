#pragma once
// Winograd F(2x2, 3x3) convolution (conv_winograd.cc), used by conv.cc for
// dense 3x3 stride-1 layers large enough to profit.

#include <stddef.h>

#include "conv.h"

namespace baton {
namespace kernels {

// The lowest and highest GemmImpl::wino_min_tiles of any compiled copy
// (gemm/gemm_isa.inc: 49, and 64 on AVX-512). A layer with fewer 2x2 tiles
// than the first never takes Winograd where U is transformed whole; one
// with at least the second does on every instruction set.
constexpr int64_t kWinogradMinTilesAnyIsa = 49;
constexpr int64_t kWinogradMinTilesEveryIsa = 64;

// True when Conv takes the Winograd path for this geometry with the active
// instruction set (given the workspace WinogradWorkspaceBytes). `u_given`:
// the node carries U, its weights transformed by the planner (input 4,
// docs/formats.md); every instruction set then takes Winograd from
// kWinogradMinTilesAnyIsa tiles on (what made AVX-512 wait for more, the
// transform of U in every call, is gone).
bool UseWinograd(const ConvGeom& g, bool u_given = false);

// True when every instruction set does (the workspace then need not hold
// the im2col + GEMM path's too).
bool WinogradOnEveryIsa(const ConvGeom& g);

// Workspace of WinogradConv where some instruction set takes Winograd (0
// where none does). It depends on the shape only, as a plan's reservation
// must: the planner may run on an AVX-512 host, the plan on a Cortex-M.
// `u_given`: without room for U.
size_t WinogradWorkspaceBytes(const ConvGeom& g, bool u_given = false);

// y = conv(x, w) + bias, clamped (or, with `fused`, ApplyEpilogue on each
// finished output row segment of a tile row, the sum laid out as y).
// `workspace` holds WinogradWorkspaceBytes, 16-byte aligned (`workspace_bytes`
// in all: with several slices of it, ParallelWorkspaceBytes, the tile blocks
// are split over the calling thread's parallel runner); `bias` may be null.
// `u_given`: U[f][m][c] (16 x m x c floats, f = 4 * row + column of
// G g G^T), so that w is not read; the workspace then is
// WinogradWorkspaceBytes(g, true).
void WinogradConv(const ConvGeom& g, const float* x, const float* w, const float* bias,
                  const Clamp& clamp, float* y, float* workspace, size_t workspace_bytes,
                  const GemmEpilogue* fused = nullptr, const float* u_given = nullptr);

}  // namespace kernels
}  // namespace baton
