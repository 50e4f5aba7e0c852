#pragma once
// Winograd weights (`baton plan --winograd-weights`, docs/formats.md).
//
// A float Conv that the runtime runs on Winograd F(2x2, 3x3) transforms its
// 3x3 weights into U = G g G^T (16 values per filter) before use. Without
// help it does so in every call: for a 13x13 plane that is a quarter of the
// layer's time on AVX-512, where it made im2col + GEMM the faster path. This
// pass does it once, on the host: each such Conv gets U as a constant fifth
// input, [16, M, C] float32, U[f][m][c] = (G g_mc G^T)[f / 4][f % 4] with
//   G = [[1, 0, 0], [1/2, 1/2, 1/2], [1/2, -1/2, 1/2], [0, 0, 1]],
// computed as the runtime does (rows, then columns: (a + b + d) * 0.5 and
// (a - b + d) * 0.5 in float), so that both give the same U. The node keeps
// its weights (input 1): a runtime that takes another path reads those.
//
// Which Convs: 3x3 kernel, stride 1, no dilation, one group, float32 with
// constant weights, 2-D, and a shape that ConvTakesWinogradWeights
// (baton/kernels.h) accepts. The plan grows by U (16/9 of those weights);
// the layers' workspaces shrink by it.

#include "baton/planner/graph.h"
#include "baton/planner/result.h"

namespace baton::planner {

// Adds U to every such Conv of `graph` (shapes inferred) that has none.
// Returns how many Convs got one.
Result<int> AddWinogradWeights(Graph* graph);

// U of weights w ([m][c][3][3], row-major) as above: 16 * m * c floats.
std::vector<float> WinogradTransform(const std::vector<float>& w, int64_t m, int64_t c);

}  // namespace baton::planner
