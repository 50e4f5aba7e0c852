#pragma once
// The float32 GEMM core shared by Conv, Gemm and MatMul.
//
//   C[m x n] (=|+=) alpha * A[m x k] * B[k x n]  (+ row bias) (clamped)
//
// Two drivers:
//  - GemmPacked: cache-blocked (Goto/BLIS loop order). A is packed into
//    kMr-row panels and B into kNr-column panels inside caller workspace
//    (GemmWorkspaceBytes), so any layout of A and any source of B (a strided
//    matrix or an implicit im2col matrix, through a PackBFn) feeds the same
//    register-tiled micro-kernel.
//
//      workspace: [ packed A block: mc x kc ][ packed B block: kc x nc ]
//      packed B : panel p = columns [p*kNr, p*kNr+kNr), k-major:
//                 b[(p*kc + k)*kNr + j]          (zero padded past n)
//      packed A : panel q = rows [q*kMr, q*kMr+kMr), k-major:
//                 a[(q*kc + k)*kMr + i]          (zero padded past m)
//
//    With the AVX2/AVX-512 tiles, a row-major A with alpha 1 (convolution
//    weights) is read in place instead of packed.
//
//  - GemmDirect: no workspace; row-major A and B (unit column stride) are
//    read in place. Used for 1x1 convolutions, whose B is the input tensor.
//
//  - Gemv: the m == 1 case, no workspace.
//
// Partial tiles: packed operands are zero padded; operands read in place are
// covered by a full tile shifted back over its neighbour (only the new rows
// or columns are stored).
//
// The micro-kernels are plain C++ loops over a local kMr x kNr accumulator
// array that GCC vectorizes (SSE2 on the portable build, wider with
// BATON_NATIVE_ARCH). The tile shape is chosen per instruction set.

#include <stddef.h>
#include <stdint.h>

namespace baton {
namespace kernels {

// Tile shapes measured with GCC 12 on x86-64 (a Zen 5 host): shapes for
// which GCC's vectorizer emits clean broadcast + multiply-add code for both
// micro-kernels (some others, e.g. 4x8 or 4x16 for the direct kernel, come
// out 3-4x slower). Re-measure with tests/bench when changing them.
#if defined(__AVX512F__)
inline constexpr int kMr = 12;
inline constexpr int kNr = 32;
#elif defined(__AVX2__)
inline constexpr int kMr = 4;
inline constexpr int kNr = 24;
#else
inline constexpr int kMr = 6;
inline constexpr int kNr = 12;
#endif

// Every tile shape above. The workspace a plan reserves must not depend on
// how the runtime that executes it was compiled (the planner may run on an
// AVX-512 host, the plan on a Cortex-M), so GemmWorkspaceBytes is the
// maximum over all of them.
struct TileShape {
  int mr, nr;
};
inline constexpr TileShape kAllTileShapes[] = {{12, 32}, {4, 24}, {6, 12}};

constexpr bool IsKnownTileShape(int mr, int nr) {
  for (const TileShape& t : kAllTileShapes) {
    if (t.mr == mr && t.nr == nr) return true;
  }
  return false;
}
static_assert(IsKnownTileShape(kMr, kNr), "add the tile shape to kAllTileShapes");

// Element (r, c) is data[r * row_stride + c * col_stride].
struct StridedMatrix {
  const float* data = nullptr;
  int64_t row_stride = 0;
  int64_t col_stride = 1;
};

// Writes rows [k0, k0 + kc) and columns [j0, j0 + nc) of B into packed kNr
// panels at `dst` (layout above; columns past the matrix are zero).
using PackBFn = void (*)(const void* ctx, int64_t k0, int64_t kc, int64_t j0, int64_t nc,
                         float* dst);

// Packs a StridedMatrix; ctx is a const StridedMatrix*.
void PackBStrided(const void* ctx, int64_t k0, int64_t kc, int64_t j0, int64_t nc, float* dst);

struct GemmEpilogue {
  const float* row_bias = nullptr;  // c[i][j] += row_bias[i], when non-null
  bool accumulate = false;          // c += A*B instead of c = A*B
  bool clamp = false;               // then c = min(max(c, lo), hi)
  float lo = 0.0f;
  float hi = 0.0f;
};

// Workspace bytes GemmPacked needs for these sizes with any tile shape (0
// when any size is 0).
size_t GemmWorkspaceBytes(int64_t m, int64_t n, int64_t k);

// `workspace` must hold GemmWorkspaceBytes(m, n, k) bytes, 16-byte aligned.
void GemmPacked(int64_t m, int64_t n, int64_t k, float alpha, StridedMatrix a, PackBFn pack_b,
                const void* b_ctx, float* c, int64_t ldc, const GemmEpilogue& epi,
                float* workspace);

// The m == 1 case (a matrix-vector product: classifiers, MatMul with a
// vector), without packing or workspace: y = alpha * x * B with x[k] at
// x[k * x_stride], y a row of n floats. The epilogue's row_bias is y's bias.
void Gemv(int64_t n, int64_t k, float alpha, const float* x, int64_t x_stride, StridedMatrix b,
          float* y, const GemmEpilogue& epi);

// Row-major A (lda) and B (ldb), alpha = 1, no workspace.
void GemmDirect(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                int64_t ldb, float* c, int64_t ldc, const GemmEpilogue& epi);

}  // namespace kernels
}  // namespace baton
