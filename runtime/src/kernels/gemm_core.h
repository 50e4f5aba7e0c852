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
// array that GCC vectorizes; the tile shape is chosen per instruction set.
// gemm/gemm_isa.inc is compiled once per ISA: the build's own flags (SSE2 on
// a portable x86-64 build, NEON on aarch64, scalar on Cortex-M3), plus AVX2
// and AVX-512 copies on x86-64 hosts and a NEON dot-product copy on aarch64,
// one of which is chosen at first use from the CPU (see KernelIsa in
// baton/kernels.h).

#include <stddef.h>
#include <stdint.h>

namespace baton {
namespace kernels {

// Every tile shape gemm_isa.inc uses (portable 6x12, AVX2 4x24, AVX-512
// 12x32). The workspace a plan reserves must not depend on
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

// The widest panel of any tile shape.
constexpr int MaxTileNr() {
  int nr = 0;
  for (const TileShape& t : kAllTileShapes) nr = t.nr > nr ? t.nr : nr;
  return nr;
}
inline constexpr int kMaxNr = MaxTileNr();

// Element (r, c) is data[r * row_stride + c * col_stride].
struct StridedMatrix {
  const float* data = nullptr;
  int64_t row_stride = 0;
  int64_t col_stride = 1;
};

// Writes rows [k0, k0 + kc) and columns [j0, j0 + nc) of B into packed
// panels of `nr` columns at `dst` (layout above, kNr = nr; columns past the
// matrix are zero). nr is the active tile's width, at most kMaxNr.
using PackBFn = void (*)(const void* ctx, int64_t k0, int64_t kc, int64_t j0, int64_t nc, int nr,
                         float* dst);

// Packs a StridedMatrix; ctx is a const StridedMatrix*.
void PackBStrided(const void* ctx, int64_t k0, int64_t kc, int64_t j0, int64_t nc, int nr,
                  float* dst);

// The fused activations (schema FusedActivation's values), applied after
// the clamp: HardSwish x * min(max(alpha x + beta, 0), 1), Swish x *
// sigmoid(x), HardSigmoid min(max(alpha x + beta, 0), 1), Sigmoid.
enum EpilogueAct : int {
  kActNone = 0,
  kActHardSwish = 1,
  kActSwish = 2,
  kActHardSigmoid = 3,
  kActSigmoid = 4,
};

// Applied to each element of C once its last k block is summed, in order:
//   c = act(clamp(A*B (+ c) + row_bias + sum))
struct GemmEpilogue {
  const float* row_bias = nullptr;  // c[i][j] += row_bias[i], when non-null
  bool accumulate = false;          // c += A*B instead of c = A*B
  // c[i][j] += sum[i * ldsum + j], when non-null (a fused residual Add); sum
  // must not overlap c (the first k block overwrites c before the last adds
  // the sum; the planner never gives a node overlapping inputs and outputs).
  const float* sum = nullptr;
  int64_t ldsum = 0;
  bool clamp = false;  // then c = min(max(c, lo), hi)
  float lo = 0.0f;
  float hi = 0.0f;
  int act = kActNone;  // then c = act(c)
  float act_alpha = 0.0f;
  float act_beta = 0.0f;
};

// Workspace bytes GemmPacked needs for these sizes with any tile shape (0
// when any size is 0).
size_t GemmWorkspaceBytes(int64_t m, int64_t n, int64_t k);

// `workspace` must hold GemmWorkspaceBytes(m, n, k) bytes, 16-byte aligned.
void GemmPacked(int64_t m, int64_t n, int64_t k, float alpha, StridedMatrix a, PackBFn pack_b,
                const void* b_ctx, float* c, int64_t ldc, const GemmEpilogue& epi,
                float* workspace);

// GemmPacked over `slices` workspace slices, each GemmWorkspaceBytes(m, n, k)
// bytes rounded up to 64 (ParallelSliceStride) apart: with a parallel
// runner on the calling thread (baton/parallel.h) it splits C into up to
// `slices` column or row ranges of whole tiles, one GemmPacked each.
// Bitwise the same as GemmPacked: every C element is summed in the same
// order (the k blocking does not depend on m or n).
void GemmPackedSliced(int64_t m, int64_t n, int64_t k, float alpha, StridedMatrix a, PackBFn pack_b,
                      const void* b_ctx, float* c, int64_t ldc, const GemmEpilogue& epi,
                      float* workspace, int slices);

// The m == 1 case (a matrix-vector product: classifiers, MatMul with a
// vector), without packing or workspace: y = alpha * x * B with x[k] at
// x[k * x_stride], y a row of n floats. The epilogue's row_bias is y's bias.
void Gemv(int64_t n, int64_t k, float alpha, const float* x, int64_t x_stride, StridedMatrix b,
          float* y, const GemmEpilogue& epi);

// Row-major A (lda) and B (ldb), alpha = 1, no workspace. Split over the
// calling thread's parallel runner like GemmPackedSliced (bitwise the same).
void GemmDirect(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                int64_t ldb, float* c, int64_t ldc, const GemmEpilogue& epi);

// One channel of a depthwise convolution on the phase-plane path
// (depthwise_conv.cc describes it); plain values only, so that the per-ISA
// copies (gemm/depthwise_isa.inc) include no header with inline functions.
struct DwPlane {
  int64_t h, w, oh, ow;  // input and output plane
  int64_t kh, kw, sh, sw, dh, dw, pt, pl;
  int64_t rows;    // output rows per block
  int64_t wq;      // phase plane width: ceil((w + pl + pr) / sw)
  int64_t hq;      // phase plane rows per block (with one slack row)
  int64_t hp, wp;  // padded input plane
  int64_t crows;   // channel-block path: output rows per band
  int64_t cin;     // channel-block path: padded input rows a band reads
  bool clamp;
  float lo, hi;
};

// Output channels a channel block holds (the lanes of one AVX-512 vector).
inline constexpr int64_t kDwLanes = 16;

// Floats of workspace the channel-block path needs: a band's padded input
// rows of kDwLanes channels interleaved, their weights and biases, the
// band's outputs.
inline int64_t DepthwiseChannelFloats(const DwPlane& g) {
  return (g.cin * g.wp + g.kh * g.kw + 1 + g.crows * g.ow) * kDwLanes;
}

// One group of a convolution's input seen as the implicit im2col matrix
// (plain values, like DwPlane): row k = (c, ky, kx), column j = (oy, ox),
// value x[c][oy*sh - pt + ky*dh][ox*sw - pl + kx*dw], zero in the padding.
struct Im2colPlane {
  const float* x;  // the group's first input channel, h x w per channel
  int64_t h, w, ow;
  int64_t kh, kw, sh, sw, dh, dw, pt, pl;
};

// One (n, c) plane of a float MaxPool (undilated along x): y (oh x ow) =
// the maximum of each window's valid taps of x (h x w); -inf for a window
// with none. NaNs never win (pool.cc's MaxOp).
struct PoolPlane {
  int64_t h, w, oh, ow;
  int64_t kh, kw, sh, sw, dh, pt, pl;
};

// Floats of the stack row MaxPoolPlanes works in: windows wider than half of
// it take pool.cc's per-tap path.
inline constexpr int64_t kPoolRowFloats = 128;

// A convolution of few input channels (the stems: RGB images), run as a
// GEMM whose B rows are read through pointers into phase planes (ConvDirect
// below) instead of a packed im2col copy. One batch item:
//   y (m x oh x ow) = w (m x c*kh*kw) * im2col(x (c x h x w)) + bias,
// stride s (1 or 2) both ways, unit dilation, pads pt (top) and pl (left); the rest
// of the padding follows from the sizes. Per band of `band` output rows,
// the padded input rows it reads are split into s phase rows of `lq`
// floats each, P[ci][r][px][j] = xpad[ci][row0 + r][j * s + px], so that
// tap (ci, ky, kx) of output columns [j0, j0 + n) is the contiguous run
// P[ci][oy * s + ky - row0][kx % s][j0 + kx / s ...].
struct DirectConv {
  const float* x;
  const float* w;
  float* y;
  const GemmEpilogue* epi;  // row_bias, clamp, act and sum (ldsum = oh * ow)
  int64_t c, h, w_in, m, oh, ow, kh, kw, s, pt, pl;
  int64_t band, lq;
};

// Builds with a ConvDirect kernel (the AVX2 and AVX-512 copies, x86-64
// only): elsewhere (Cortex-M, aarch64) the stems keep im2col + GEMM and no
// code of this path is linked.
#if defined(__x86_64__)
#define BATON_CONV_DIRECT_BUILT 1
#else
#define BATON_CONV_DIRECT_BUILT 0
#endif

// Builds with GemmImpl::depthwise_direct (the direct path of
// depthwise_conv.cc; its kernels are the AVX2 and AVX-512 copies', null in
// the x86-64 portable copy). Elsewhere the fields do not exist.
#if defined(__x86_64__)
#define BATON_DW_DIRECT_BUILT 1
#else
#define BATON_DW_DIRECT_BUILT 0
#endif

// Most taps (c * kh * kw) ConvDirect takes: its row pointers live on the
// stack, and one k block covers them all.
inline constexpr int64_t kConvDirectMaxTaps = 256;

// Floats of one phase row of DirectConv: the output row plus a tile's width
// of slack (the kernels compute whole tiles past ow) and the taps' reach.
inline int64_t ConvDirectRowFloats(int64_t ow, int64_t kw, int64_t s) {
  return ow + 32 + (kw - 1) / s;
}

// Floats of one band of `band` output rows.
inline int64_t ConvDirectBandFloats(const DirectConv& g, int64_t band) {
  return g.c * ((band - 1) * g.s + g.kh) * g.s * g.lq;
}

// One tile row segment of Winograd F(2x2, 3x3) (conv_winograd.cc), plain
// values like DwPlane. Input: `len` tiles whose first 4x4 input patch
// starts at (iy0, ix0) of the h x w planes of `c` channels at x (zero
// outside); writes V[f][ch][j] = v[f * fstride + ch * ldv + j], the 16
// frequencies B^T d B of tile j of channel ch.
struct WinoInputSeg {
  const float* x;
  int64_t h, w, c;
  int64_t iy0, ix0, len;
  float* v;
  int64_t ldv, fstride;
};

// Output: the same segment's 2x2 outputs of `m` channels from M[f][i][j] =
// mo[f * fstride + i * ldm + j] (A^T M A), plus bias[i] (bias may be null),
// clamped to [lo, hi]; only `rows` (1 or 2) output rows and `cols` (<= 2 *
// len) output columns exist. Channel i's first output is y[i * plane]
// (rows `ow` apart). With `fused`, ApplyEpilogue's steps then run on each
// written row, the sum laid out as y (sum may be null).
struct WinoOutputSeg {
  const float* mo;
  int64_t m, ldm, fstride, len;
  float* y;
  int64_t plane, ow, rows, cols;
  const float* bias;
  float lo, hi;
  const GemmEpilogue* fused;
  const float* sum;
};

// Floats of scratch WinogradInput needs for a segment of `len` tiles.
inline constexpr int64_t WinoScratchFloats(int64_t len) { return 16 * (len + 1); }

// QLinearAdd's per-row constants (qlinear.cc describes the arithmetic).
struct QAddRowParams {
  uint8_t flip;  // 0x80 for int8, 0 for uint8
  int32_t off;   // 128 for int8, 0 for uint8
  float ra, rb, fixed, lo, hi;
};

using QGemmPairsFn = void (*)(const int16_t* w, const int16_t* x, int64_t ldx, int64_t kp,
                              int64_t n, int32_t* acc, int64_t ldacc);
using QGemmQuadsFn = void (*)(const uint8_t* const* w, int64_t kq, const int32_t* tail,
                              const uint8_t* x, int64_t ldx, int64_t n, const int32_t* init,
                              int32_t* acc, int64_t ldacc);
using QTapsFn = void (*)(int32_t* acc, const int16_t* const* src, const int16_t* wv, int64_t taps,
                         int64_t n, bool add);

// One compiled copy of the drivers (gemm/gemm_isa.inc).
struct GemmImpl {
  int mr, nr;
  // Fewest 2x2 output tiles from which this copy runs a Winograd layer
  // whose transformed weights are transformed whole (conv_winograd.cc).
  int wino_min_tiles;
  void (*packed)(int64_t m, int64_t n, int64_t k, float alpha, StridedMatrix a, PackBFn pack_b,
                 const void* b_ctx, float* c, int64_t ldc, const GemmEpilogue& epi,
                 float* workspace);
  void (*direct)(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                 int64_t ldb, float* c, int64_t ldc, const GemmEpilogue& epi);
  void (*gemv)(int64_t n, int64_t k, float alpha, const float* x, int64_t x_stride, StridedMatrix b,
               float* y, const GemmEpilogue& epi);
  // y (oh x ow) = depthwise filter w (kh x kw) over x (h x w) + bias; `ws`
  // holds DwPlane's blocks and a scratch row (DepthwisePlaneFloats floats).
  void (*depthwise)(const DwPlane& g, const float* x, const float* w, float bias, float* y,
                    float* ws);
  // Output channels [m0, m0 + lanes) (lanes <= kDwLanes) of one batch item:
  // x and y point at the item's first channel, input channel m / mult feeds
  // output channel m; `ws` holds DepthwiseChannelFloats floats.
  void (*depthwise_channels)(const DwPlane& g, const float* x, int64_t m0, int64_t lanes,
                             int64_t mult, const float* w, const float* bias, float* y, float* ws);
  // y[i] = f(x[i]) for i < n, f one of UnaryFn (kernel_math.h's forms).
  void (*unary)(int fn, const float* x, float* y, int64_t n);
  // ApplyEpilogue below.
  void (*epilogue)(const GemmEpilogue& epi, float* y, const float* sum, int64_t n);
  // Im2colPacker and MaxPoolPlanes below.
  PackBFn pack_im2col;
  void (*max_pool)(const PoolPlane& g, int64_t planes, const float* x, float* y);
  // The integer kernels (exact: every copy gives the same sums).
  // acc[i * ldacc + j] = sum_k (w[i * ldw + k] ^ flip) * cols[j * k + k]
  // for i < rows, j < n: dot products of 8-bit weight rows with int16 columns.
  void (*qdot)(const uint8_t* w, int64_t ldw, uint8_t flip, int64_t rows, const int16_t* cols,
               int64_t n, int64_t k, int32_t* acc, int64_t ldacc);
  // acc[i] += wv * src[i] for i < n (a depthwise tap).
  void (*qtap)(int32_t* acc, const int16_t* src, int16_t wv, int64_t n);
  // QGemmPairs, QRequantize and QAddRow below.
  // Null in the portable copy (QGemmPairsAvailable).
  QGemmPairsFn qgemm_pairs;
  // QGemmQuads below; null but in the AVX-512 VNNI and aarch64 dot-product
  // copies.
  QGemmQuadsFn qgemm_quads;
  // QTaps below; null in the portable copy.
  QTapsFn qtaps;
  void (*qrequantize)(const int32_t* acc, const int32_t* sums, int32_t wz, int32_t bias, int64_t n,
                      float scale, float lo, float hi, int32_t zero, uint8_t* y, int64_t stride);
  void (*qadd_row)(const uint8_t* a, int64_t sa, const uint8_t* b, int64_t sb, int64_t n,
                   const QAddRowParams& p, uint8_t* out);
  // Winograd F(2x2, 3x3)'s transforms (WinogradWeights, WinogradInput,
  // WinogradOutput below).
  void (*wino_weights)(const float* w, int64_t c, int64_t m, float* u);
  void (*wino_input)(const WinoInputSeg& s, float* scratch);
  void (*wino_output)(const WinoOutputSeg& s);
  // DirectConv's output rows [oy0, oy1) in bands of g.band, `ws` holding
  // ConvDirectBandFloats(g, g.band) floats; null where the kernels are not
  // vectors (ConvDirect then declines).
  void (*conv_direct)(const DirectConv& g, int64_t oy0, int64_t oy1, float* ws);
#if BATON_DW_DIRECT_BUILT
  // Whether depthwise_direct runs a layer of this shape (stride 1 or 2,
  // unit dilation, a 3x3 or 5x5 kernel, rows wide enough for this copy's
  // vectors); null where not built.
  bool (*depthwise_direct_takes)(const DwPlane& g);
  // One channel of such a layer, from its NCHW plane x to its plane y (w:
  // its K x K weights), with DwPlane's clamp; no workspace.
  void (*depthwise_direct)(const DwPlane& g, const float* x, const float* w, float bias, float* y);
#endif
};

// Most outputs QRequantize takes at a time.
inline constexpr int64_t kQRequantizeMax = 64;

// The integer GEMM tile: weight rows x columns (the same on every ISA, so
// that the workspace a plan reserves does not depend on it).
inline constexpr int64_t kQRowTile = 4;
inline constexpr int64_t kQColTile = 16;

// The activations compiled per instruction set (GemmImpl::unary).
enum UnaryFn : int { kUnarySigmoid = 0, kUnaryTanh = 1, kUnarySwish = 2 };

// The active copy's unary map.
void MapUnary(UnaryFn fn, const float* x, float* y, int64_t n);

// y[j] = act(clamp(y[j] + sum[j])) for j < n with epi's clamp and act (sum
// may be null; epi's row_bias, accumulate and sum fields are not read): the
// fused epilogue for paths that write their output outside the GEMM
// (Winograd's output transform, depthwise planes), called on each finished
// row, channel or block while it is still in cache.
void ApplyEpilogue(const GemmEpilogue& epi, float* y, const float* sum, int64_t n);

// True when the epilogue does more than GemmEpilogue's bias and clamp.
inline bool HasFusedEpilogue(const GemmEpilogue& epi) {
  return epi.sum != nullptr || epi.act != kActNone;
}

// The active copy's integer kernels (GemmImpl::qdot, qtap).
void QDot(const uint8_t* w, int64_t ldw, uint8_t flip, int64_t rows, const int16_t* cols, int64_t n,
          int64_t k, int32_t* acc, int64_t ldacc);
void QTap(int32_t* acc, const int16_t* src, int16_t wv, int64_t n);
// Exact int16 pair products summed into int32, kQRowTile rows at a time:
//   acc[r * ldacc + j] = sum_{p < kp, t < 2} w[(p * kQRowTile + r) * 2 + t] *
//                                            x[(p * ldx + j) * 2 + t]
// for r < kQRowTile and j < n, n a multiple of kQColTile: reduction steps
// come in pairs (k = 2p + t), the weights (w - wz) pair-interleaved per row,
// the columns (x - xz) pair-interleaved per column, ldx columns per pair row.
// Only where QGemmPairsAvailable() (the AVX2 and AVX-512 copies).
void QGemmPairs(const int16_t* w, const int16_t* x, int64_t ldx, int64_t kp, int64_t n,
                int32_t* acc, int64_t ldacc);
bool QGemmPairsAvailable();
// Weight rows QGemmQuads takes at a time.
inline constexpr int64_t kQQuadRows = 8;
// Exact uint8 x int8 quad products summed into int32, kQQuadRows rows at a
// time, the weights read in place:
//   acc[r * ldacc + j] = init[r] + sum_{q < kq, t < 4} w[r][4q + t] * x[(q * ldx + j) * 4 + t]
//                      + (tail ? sum_t tail_r[t] * x[(kq * ldx + j) * 4 + t] : 0)
// (w[r] int8, x uint8, tail_r the bytes of tail[r]; int32 adds wrap) for
// r < kQQuadRows and j < n, n a multiple of kQColTile. Only where
// QGemmQuadsAvailable() (the AVX-512 VNNI copy: vpdpbusd; the aarch64
// dot-product copy: SDOT).
void QGemmQuads(const uint8_t* const* w, int64_t kq, const int32_t* tail, const uint8_t* x,
                int64_t ldx, int64_t n, const int32_t* init, int32_t* acc, int64_t ldacc);
bool QGemmQuadsAvailable();
// Most taps QTaps takes at a time.
inline constexpr int64_t kQTapsMax = 32;
// acc[i] (+)= sum_{t < taps} wv[t] * src[t][i] for i < n, taps <= kQTapsMax
// (+= with `add`): several depthwise taps at once, exact for |values| <=
// 255. Only where QTapsAvailable() (the AVX2, AVX-512 and aarch64
// dot-product copies).
void QTaps(int32_t* acc, const int16_t* const* src, const int16_t* wv, int64_t taps, int64_t n,
           bool add);
bool QTapsAvailable();
// y[j * stride] for j < n <= kQRequantizeMax: the low byte of
//   round_half_even(clamp(float(acc[j] (- wz * sums[j]) + bias) * scale, lo, hi)) + zero
// (the bias add wraps; sums may be null). Identical bytes on every ISA.
void QRequantize(const int32_t* acc, const int32_t* sums, int32_t wz, int32_t bias, int64_t n,
                 float scale, float lo, float hi, int32_t zero, uint8_t* y, int64_t stride);
// out[j] for j < n from a[j * sa] and b[j * sb]: one row of QLinearAdd.
void QAddRow(const uint8_t* a, int64_t sa, const uint8_t* b, int64_t sb, int64_t n,
             const QAddRowParams& p, uint8_t* out);

// Floats of workspace DwPlane's blocking needs.
inline int64_t DepthwisePlaneFloats(const DwPlane& g) {
  return g.sh * g.sw * g.hq * g.wq + g.rows * g.wq + (g.sw > 1 ? g.wq * g.sw : 0);
}

// The active copy's im2col packer: a PackBFn whose ctx is a const
// Im2colPlane*.
PackBFn Im2colPacker();

// The active copy's Winograd F(2x2, 3x3) transforms (conv_winograd.cc):
// U[f][i][ch] = (G g G^T)[f] of each 3x3 filter g = w[(i * c + ch) * 9..]
// for m output and c input channels; the input and output transforms of one
// tile row segment (WinoInputSeg, WinoOutputSeg; `scratch` holds
// WinoScratchFloats(s.len) floats).
void WinogradWeights(const float* w, int64_t c, int64_t m, float* u);
// The active copy's GemmImpl::wino_min_tiles.
int64_t WinogradMinTiles();
void WinogradInput(const WinoInputSeg& s, float* scratch);
void WinogradOutput(const WinoOutputSeg& s);

// Runs a convolution of one batch item as DirectConv (g.band and g.lq are
// set here) on `slices` workspace slices of `slice_bytes` each (threads
// take output rows); false, having written nothing, when the active copy
// has no such kernel, g.m is below its tile's rows, or a slice cannot hold
// one band.
bool ConvDirect(DirectConv g, float* ws, size_t slice_bytes, int slices);

// The active copy's MaxPool plane filter (PoolPlane above) over `planes`
// consecutive planes (x h * w floats apart, y oh * ow); g.kw <=
// kPoolRowFloats / 2.
void MaxPoolPlanes(const PoolPlane& g, int64_t planes, const float* x, float* y);

// The active copy's depthwise plane filter.
void DepthwisePlane(const DwPlane& g, const float* x, const float* w, float bias, float* y,
                    float* ws);
// The active copy's channel-block depthwise filter.
void DepthwiseChannels(const DwPlane& g, const float* x, int64_t m0, int64_t lanes, int64_t mult,
                       const float* w, const float* bias, float* y, float* ws);
#if BATON_DW_DIRECT_BUILT
// The active copy's direct depthwise filter (GemmImpl::depthwise_direct) if
// it takes layers of g's shape, else null.
using DwDirectFn = void (*)(const DwPlane& g, const float* x, const float* w, float bias, float* y);
DwDirectFn DepthwiseDirect(const DwPlane& g);
#endif

}  // namespace kernels
}  // namespace baton
