// QLinearConv and QLinearMatMul: uint8/int8 convolution and matrix product
// (and QLinearAdd, at the end of this file: see its own comment)
// with an int32 accumulator and ONNX Runtime's requantization (issue 15).
// Inputs as in ONNX: 0 x, 1 x_scale, 2 x_zero_point, 3 w, 4 w_scale,
// 5 w_zero_point, 6 y_scale, 7 y_zero_point, 8 optional int32 bias (one per
// output channel; for QLinearMatMul, Baton's extension for a fused Gemm).
//
//   acc[m][p] = sum_k (x[k][p] - xz) * (w[m][k] - wz[m]) + bias[m]     int32
//   scale[m]  = (x_scale * w_scale[m]) / y_scale                      float32
//   y[m][p]   = round_half_even(clamp(float(acc) * scale[m], lo, hi)) + yz
//
// with [lo, hi] = [qmin - yz, qmax - yz], tightened by a fused clamp
// {min, max} (ConvParams/GemmParams.clamp, in real units) to
// [min / y_scale, max / y_scale] kept inside that range (a NaN bound is
// none). The scale's float expression and order, the clamp before rounding
// (NaN to lo, as SSE's maxps) and the int32 bias add (wrapping) are
// MlasRequantizeOutput's; tests/kernels/qlinear_vs_ort.py checks the numpy
// reference the tests hold these kernels to against ONNX Runtime bit for bit.
// Prepare rejects reductions (C / group * kH * kW, or K) above
// kMaxReduction = 33025, so that the int32 accumulator cannot overflow.
//
// The integer products run through the per-ISA kernels of gemm_core.h
// (QGemmQuads, QGemmPairs, QTaps, QTap, QDot: exact, so every ISA gives the
// same bytes):
//  - QLinearConv with int8 weights, AVX-512 VNNI and aarch64 dot-product
//    copies: blocks of PB im2col columns as uint8 quads times the weight
//    rows read in place, vpdpbusd / SDOT (QConvQuads describes the layout
//    and the zero-point terms); K <= 8192;
//  - other QLinearConv: with AVX2 / AVX-512, blocks of PB im2col columns (one per
//    output position) of each group and tiles of 4 weight rows, both
//    widened to int16 with the reduction in pairs (QConvGemm describes the
//    layout); in the portable copy, and for reductions K too large for 32
//    such columns in kQBlockBytes, qlinear_gemm.h's dot-product blocks
//    (QConvDot, below). The workspace fits either;
//  - QLinearMatMul: qlinear_gemm.h's blocks, a's rows as the columns, b's
//    columns as the output channels: b [N, K] (trans_b) read in place,
//    b [K, N] packed a block of NB columns at a time into rows;
//  - depthwise convolutions (group == C): the padded input of a band of
//    output rows as int16 phase planes (QDepthwise describes them), tap by
//    tap into int32 accumulators (AVX2 / AVX-512: up to 32 taps per pass,
//    QTaps).
//
//   vnni:      [ columns: uint8 [Kq][PB][4] ][ sums: int32 [PB] ][ rows: int32 [M/g][2] ]
//   conv:      [ columns: int16 [Kp][PB][2] ][ weight tile: int16 [Kp][4][2] ]
//   dot, and   [ columns: int16 [P][K] ][ column sums: int32 [P] ]
//   matmul:    [ QLinearMatMul without trans_b: packed b rows [NB][K] ]
//   depthwise: [ phase planes: int16 [sh * sw][hq][wq] ][ acc: int32 [rows][wq] ]
//
// Every block fills kQBlockBytes: about 64 KiB (plus 8 KiB of weight tile,
// or 64 KiB of packed b rows), at most 4 * 2 * 33025 bytes of columns for
// the largest K; the VNNI blocks at least 16 columns, up to 128 KiB for
// K = 8192). The workspace is the largest of the paths a node may take on
// any ISA, so none of the sizes depends on the ISA.

#include <stddef.h>
#include <stdint.h>

#include "broadcast.h"
#include "conv.h"
#include "gemm_core.h"
#include "kernel_family.h"
#include "kernel_util.h"
#include "qlinear_gemm.h"
#include "window.h"

#if BATON_KERNEL_DISPATCH
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif
#endif

namespace baton {
namespace kernels {
namespace {

// Largest dimension accepted, so that products of two dims fit in int64.
constexpr int64_t kMaxDim = INT32_MAX;

// A float32, uint8... scalar: rank 0 or [1].
inline bool IsScalarOf(const TensorArg& t, DType dtype) {
  return t.dtype() == dtype && t.rank() <= 1 && t.elements() == 1;
}

// One value, or one per output channel.
inline bool IsPerChannelOf(const TensorArg& t, DType dtype, int64_t channels) {
  return t.dtype() == dtype && t.rank() <= 1 && (t.elements() == 1 || t.elements() == channels);
}

inline bool DimsWithinLimit(const TensorArg& t) {
  for (uint32_t i = 0; i < t.rank(); ++i) {
    if (t.dim(i) > kMaxDim) return false;
  }
  return true;
}

// A fused clamp bound in output LSBs kept inside [lo, hi]; NaN: `fallback`.
inline float ClampBoundOf(float v, float lo, float hi, float fallback) {
  if (v != v) return fallback;
  v = v > lo ? v : lo;
  return v < hi ? v : hi;
}

// Inputs 1, 2 (x's scale and zero point), 4, 5 (w's: per tensor or per
// output channel), 6, 7 (y's) and the optional bias 8, for `channels` outputs.
Status CheckQuantInputs(const KernelCall& call, int64_t channels) {
  const TensorArg& x = call.inputs[0];
  const TensorArg& w = call.inputs[3];
  const TensorArg& y = call.outputs[0];
  BATON_KCHECK(
      IsScalarOf(call.inputs[1], DType::Float32) && IsScalarOf(call.inputs[6], DType::Float32),
      "QLinear x_scale and y_scale must be float32 scalars");
  BATON_KCHECK(IsScalarOf(call.inputs[2], x.dtype()),
               "QLinear x_zero_point must be a scalar of x's dtype");
  BATON_KCHECK(IsScalarOf(call.inputs[7], y.dtype()),
               "QLinear y_zero_point must be a scalar of the output's dtype");
  BATON_KCHECK(IsPerChannelOf(call.inputs[4], DType::Float32, channels),
               "QLinear w_scale must be float32, one value or one per output channel");
  BATON_KCHECK(IsPerChannelOf(call.inputs[5], w.dtype(), channels),
               "QLinear w_zero_point must have w's dtype, one value or one per output channel");
  const TensorArg& b = Input(call, 8);
  if (b.present()) {
    BATON_KCHECK(b.dtype() == DType::Int32 && b.rank() == 1 && b.dim(0) == channels,
                 "QLinear bias must be int32 with one value per output channel");
  }
  return Status::Ok();
}

// --------------------------------------------------------------- QLinearConv

struct QConv {
  ConvGeom g;
  int64_t k = 0;  // reduction size C / group * kH * kW
  Clamp clamp;
};

Status ParseQConv(const KernelCall& call, QConv* out) {
  BATON_RETURN_IF_ERROR(CheckArity(call, 8, 9, 1));
  const schema::ConvParams* p = call.node->params_as_ConvParams();
  BATON_KCHECK(p != nullptr, "QLinearConv needs ConvParams");
  const TensorArg& x = call.inputs[0];
  const TensorArg& w = call.inputs[3];
  const TensorArg& y = call.outputs[0];
  BATON_KCHECK(IsQ8(x.dtype()) && IsQ8(w.dtype()) && IsQ8(y.dtype()),
               "QLinearConv x, w and output must be uint8 or int8");
  BATON_KCHECK(DimsWithinLimit(x) && DimsWithinLimit(w) && DimsWithinLimit(y),
               "QLinearConv dimension too large");
  QConv q;
  BATON_RETURN_IF_ERROR(ParseConvGeometry(x, w, y, *p, &q.g));
  const ConvGeom& g = q.g;
  const Window2d& win = g.win;
  const int64_t cg = win.c / g.group;
  BATON_KCHECK(cg <= kMaxReduction && win.kh <= kMaxReduction && win.kw <= kMaxReduction &&
                   cg * win.kh * win.kw <= kMaxReduction,
               "QLinearConv reduction C / group * kH * kW too large for an int32 accumulator");
  q.k = cg * win.kh * win.kw;
  BATON_RETURN_IF_ERROR(CheckQuantInputs(call, g.m));
  q.clamp = Clamp::From(p->clamp());
  *out = q;
  return Status::Ok();
}

// The other convolutions: per block of PB output positions, the implicit
// im2col matrix X [K][P] of one group's input as int16 (x - xz), and per
// tile of kQRowTile output channels their weight rows as int16 (w - wz),
// both with the reduction in pairs (k = 2p + t) for QGemmPairs:
//
//   columns: int16 [Kp][PB][2]          (p, j, t) = X[2p + t][p0 + j]
//   weights: int16 [Kp][kQRowTile][2]   (p, r, t) = w[m0 + r][2p + t] - wz
//
// zero past K, past the block's columns and past M; Kp = ceil(K / 2), PB a
// multiple of kQColTile. X[k][p] for k = (c, ky, kx), p = (oy, ox) is
// x[c][oy * sh - pt + ky * dh][ox * sw - pl + kx * dw] - xz, 0 in the
// padding (which holds the zero point). The sums need no column sums.
struct QConvBlock {
  int64_t kp = 0, pb = 0;
};

inline int64_t RoundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }
inline int64_t Align8Bytes(int64_t bytes) { return (bytes + 7) & ~int64_t{7}; }

// Columns per block fill kQBlockBytes; below kQMinPairColumns (large K)
// the weight tiles would be widened too often for too little work, and
// QConvDot runs instead (pb = 0).
constexpr int64_t kQMinPairColumns = 2 * kQColTile;

QConvBlock QConvBlockOf(const QConv& q) {
  QConvBlock b;
  b.kp = (q.k + 1) / 2;
  const int64_t pb = kQBlockBytes / (4 * (b.kp > 0 ? b.kp : 1)) / kQColTile * kQColTile;
  const int64_t all = RoundUp(q.g.win.oh * q.g.win.ow, kQColTile);
  b.pb = pb < all ? pb : all;
  if (b.pb < kQMinPairColumns && b.pb < all) b.pb = 0;
  return b;
}

inline int64_t QColumnPairBytes(const QConvBlock& b) { return Align8Bytes(b.kp * b.pb * 4); }

// The VNNI path (int8 weights, QGemmQuads): per block of PB output
// positions, X's columns as bytes (x ^ flip: uint8 whatever x's dtype) with
// the reduction in quads (k = 4q + t), and their sums:
//
//   columns: uint8 [Kq][PB][4]   (q, j, t) = X[4q + t][p0 + j] ^ flip
//   sums:    int32 [PB]          sum_k of (X[k][p0 + j] ^ flip) - xz'
//   rows:    int32 [M / group][2] per weight row: init (below), its last
//                                 partial quad zero padded
//
// with the padding and k >= K holding xz' (x's zero point as such a byte),
// Kq = ceil(K / 4). The weight rows are read in place, the last partial
// quad from a zero-padded copy. With w' the int8 weights and wz' their zero
// point, u the column bytes:
//
//   sum_k (u - xz') (w' - wz') = [sum_k u w' - xz' sum_k w'] - wz' sums
//
// The bracket, QGemmQuads's result from init = -xz' sum_k w' (wrapping
// int32 arithmetic), is at most 255 * 128 * K in magnitude, as is wz' *
// sums, and the whole is the exact sum: no step leaves int32 (kMaxReduction).
struct QQuadBlock {
  int64_t kq = 0, pb = 0;
};

QQuadBlock QQuadBlockOf(const QConv& q) {
  QQuadBlock b;
  b.kq = (q.k + 3) / 4;
  int64_t pb = kQBlockBytes / (4 * (b.kq > 0 ? b.kq : 1)) / kQColTile * kQColTile;
  if (pb == 0) {
    // One tile's columns, up to twice the block bytes (K <= 8192: resnet's
    // 512-channel 3x3 layers); larger reductions take QConvDot (pb = 0).
    pb = kQColTile * 4 * b.kq <= 2 * kQBlockBytes ? kQColTile : 0;
  }
  const int64_t all = RoundUp(q.g.win.oh * q.g.win.ow, kQColTile);
  b.pb = pb < all ? pb : all;
  return b;
}

inline int64_t QColumnQuadBytes(const QQuadBlock& b) { return Align8Bytes(b.kq * b.pb * 4); }

inline int64_t QQuadWorkspaceFor(const QConv& q) {
  const QQuadBlock b = QQuadBlockOf(q);
  if (b.pb == 0) return 0;
  return QColumnQuadBytes(b) + Align8Bytes(b.pb * 4) + Align8Bytes(q.g.m / q.g.group * 8);
}

size_t QDepthwiseWorkspaceFor(const Window2d& g);

size_t QConvWorkspaceFor(const QConv& q) {
  if (IsDepthwise(q.g)) return QDepthwiseWorkspaceFor(q.g.win);
  const int64_t ohw = q.g.win.oh * q.g.win.ow;
  if (ohw == 0) return 0;
  // Either path may run (the portable kernels have no pair kernel): the
  // larger of the two, the same on every ISA.
  const size_t dot = QColumnBytes(QColumnsPerBlock(q.k, ohw), q.k);
  const auto quads = static_cast<size_t>(QQuadWorkspaceFor(q));
  const size_t most = quads > dot ? quads : dot;
  const QConvBlock b = QConvBlockOf(q);
  if (b.pb == 0) return most;
  const auto pairs = static_cast<size_t>(QColumnPairBytes(b) + Align8Bytes(b.kp * kQRowTile * 4));
  return pairs > most ? pairs : most;
}

#if BATON_KERNEL_DISPATCH
// Only the AVX2 / AVX-512 copies have a pair kernel (QGemmPairsAvailable),
// only the AVX-512 VNNI and aarch64 dot-product ones a quad kernel
// (QGemmQuadsAvailable): builds without such copies leave these paths out.

// Columns [p0, p0 + count) of one group's X (x: the group's first plane).
void PackColumnPairs(const QConv& q, const QActivation& x, const QConvBlock& b, int64_t p0,
                     int64_t count, int16_t* cols) {
  const Window2d& g = q.g.win;
  const int64_t padded = RoundUp(count, kQColTile);
  const int64_t taps = g.kh * g.kw;
  const bool pointwise = IsPointwise(q.g);
  for (int64_t k = 0; k < 2 * b.kp; ++k) {
    int16_t* out = cols + (k >> 1) * b.pb * 2 + (k & 1);
    int64_t j = 0;
    if (k < q.k) {
      const int64_t c = k / taps, ky = (k / g.kw) % g.kh, kx = k % g.kw;
      const uint8_t* plane = x.data + c * g.h * g.w;
      if (pointwise) {
        const uint8_t* __restrict src = plane + p0;
        const uint8_t flip = x.flip;
        const int32_t xz = x.zero;
        for (; j < count; ++j) out[2 * j] = static_cast<int16_t>((src[j] ^ flip) - xz);
      } else {
        // One output row at a time: a run of input columns ix0 + t * sw,
        // zero where it leaves the row (or the row leaves the input).
        int64_t oy = p0 / g.ow, ox = p0 % g.ow;
        while (j < count) {
          const int64_t len = g.ow - ox < count - j ? g.ow - ox : count - j;
          const int64_t iy = oy * g.sh - g.pt + ky * g.dh;
          int16_t* o = out + 2 * j;
          int64_t lo = len, hi = len;  // t in [lo, hi) read the input
          const int64_t ix0 = ox * g.sw - g.pl + kx * g.dw;
          if (iy >= 0 && iy < g.h) {
            lo = ix0 >= 0 ? 0 : (-ix0 + g.sw - 1) / g.sw;
            hi = ix0 >= g.w ? 0 : (g.w - ix0 + g.sw - 1) / g.sw;
            hi = hi < len ? hi : len;
            lo = lo < hi ? lo : hi;
          }
          // src[t]: column ix0 + (lo + t) * sw, inside the input.
          const uint8_t* src = lo < hi ? plane + iy * g.w + ix0 + lo * g.sw : plane;
          const uint8_t flip = x.flip;
          const int32_t xz = x.zero;
          for (int64_t t = 0; t < lo; ++t) o[2 * t] = 0;
          int16_t* body = o + 2 * lo;
          if (g.sw == 1) {
            for (int64_t t = 0; t < hi - lo; ++t) {
              body[2 * t] = static_cast<int16_t>((src[t] ^ flip) - xz);
            }
          } else {
            for (int64_t t = 0; t < hi - lo; ++t) {
              body[2 * t] = static_cast<int16_t>((src[t * g.sw] ^ flip) - xz);
            }
          }
          for (int64_t t = hi; t < len; ++t) o[2 * t] = 0;
          j += len;
          ox = 0;
          ++oy;
        }
      }
    }
    for (; j < padded; ++j) out[2 * j] = 0;
  }
}

// Weight rows [i0, i0 + rows) of `ch` (K bytes each) as one tile.
void WidenWeightPairs(const QChannels& ch, int64_t i0, int64_t rows, int64_t k, int64_t kp,
                      int16_t* dst) {
  const uint8_t flip = ch.flip;
  for (int64_t r = 0; r < kQRowTile; ++r) {
    int16_t* __restrict out = dst + r * 2;
    int64_t i = 0;
    if (r < rows) {
      const uint8_t* __restrict row = ch.w + (i0 + r) * ch.ldw;
      const int32_t wz = ChannelZero(ch, ch.c0 + i0 + r);
      for (; i + 1 < k; i += 2, out += kQRowTile * 2) {
        out[0] = static_cast<int16_t>((row[i] ^ flip) - wz);
        out[1] = static_cast<int16_t>((row[i + 1] ^ flip) - wz);
      }
      if (i < k) {
        out[0] = static_cast<int16_t>((row[i] ^ flip) - wz);
        out[1] = 0;
        i += 2;
        out += kQRowTile * 2;
      }
    }
    for (; i < 2 * kp; i += 2, out += kQRowTile * 2) out[0] = out[1] = 0;
  }
}

void QConvGemm(const QConv& q, const KernelCall& call, const QChannels& all, QOutput o, void* ws) {
  const Window2d& win = q.g.win;
  const int64_t cg = win.c / q.g.group;
  const int64_t mg = q.g.m / q.g.group;
  const int64_t hw = win.h * win.w;
  const int64_t ohw = win.oh * win.ow;
  const QConvBlock b = QConvBlockOf(q);
  auto* cols = static_cast<int16_t*>(ws);
  auto* wtile = reinterpret_cast<int16_t*>(static_cast<unsigned char*>(ws) + QColumnPairBytes(b));
  const QActivation x = QActivationOf(call);
  uint8_t* y = o.y;
  int32_t acc[kQRowTile][kQChunk];
  for (int64_t n = 0; n < win.n; ++n) {
    for (int64_t gi = 0; gi < q.g.group; ++gi) {
      QActivation xg = x;
      xg.data = x.data + (n * win.c + gi * cg) * hw;
      QChannels ch = all;
      ch.c0 = gi * mg;
      ch.w = all.w + gi * mg * q.k;
      for (int64_t p0 = 0; p0 < ohw; p0 += b.pb) {
        const int64_t count = ohw - p0 < b.pb ? ohw - p0 : b.pb;
        PackColumnPairs(q, xg, b, p0, count, cols);
        o.y = y + (n * q.g.m + gi * mg) * ohw + p0;
        for (int64_t i0 = 0; i0 < mg; i0 += kQRowTile) {
          const int64_t rows = mg - i0 < kQRowTile ? mg - i0 : kQRowTile;
          WidenWeightPairs(ch, i0, rows, q.k, b.kp, wtile);
          for (int64_t j0 = 0; j0 < count; j0 += kQChunk) {
            const int64_t len = count - j0 < kQChunk ? count - j0 : kQChunk;
            QGemmPairs(wtile, cols + j0 * 2, b.pb, b.kp, RoundUp(len, kQColTile), acc[0], kQChunk);
            for (int64_t r = 0; r < rows; ++r) {
              const int64_t c = ch.c0 + i0 + r;
              RequantizeChunk(acc[r], nullptr, 0, ch.bias != nullptr ? ch.bias[c] : 0,
                              static_cast<ptrdiff_t>(len), ChannelScale(o, ch, c), o,
                              (i0 + r) * ohw + j0, 1);
            }
          }
        }
      }
    }
  }
}

// out[4j + t] = s[t][j] ^ flip for j < n: four rows of X as one block row.
void Interleave4(const uint8_t* const* s, int64_t n, uint8_t flip, uint8_t* out) {
  int64_t j = 0;
#if defined(__aarch64__)
  // ST4 interleaves four registers byte by byte.
  const uint8x16_t f = vdupq_n_u8(flip);
  for (; j + 16 <= n; j += 16) {
    uint8x16x4_t r;
    r.val[0] = veorq_u8(vld1q_u8(s[0] + j), f);
    r.val[1] = veorq_u8(vld1q_u8(s[1] + j), f);
    r.val[2] = veorq_u8(vld1q_u8(s[2] + j), f);
    r.val[3] = veorq_u8(vld1q_u8(s[3] + j), f);
    vst4q_u8(out + 4 * j, r);
  }
#else
  const __m128i f = _mm_set1_epi8(static_cast<char>(flip));
  for (; j + 16 <= n; j += 16) {
    const __m128i r0 =
        _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s[0] + j)), f);
    const __m128i r1 =
        _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s[1] + j)), f);
    const __m128i r2 =
        _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s[2] + j)), f);
    const __m128i r3 =
        _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s[3] + j)), f);
    const __m128i lo01 = _mm_unpacklo_epi8(r0, r1), hi01 = _mm_unpackhi_epi8(r0, r1);
    const __m128i lo23 = _mm_unpacklo_epi8(r2, r3), hi23 = _mm_unpackhi_epi8(r2, r3);
    auto* o = reinterpret_cast<__m128i*>(out + 4 * j);
    _mm_storeu_si128(o, _mm_unpacklo_epi16(lo01, lo23));
    _mm_storeu_si128(o + 1, _mm_unpackhi_epi16(lo01, lo23));
    _mm_storeu_si128(o + 2, _mm_unpacklo_epi16(hi01, hi23));
    _mm_storeu_si128(o + 3, _mm_unpackhi_epi16(hi01, hi23));
  }
#endif
  for (; j < n; ++j) {
    for (int t = 0; t < 4; ++t) out[4 * j + t] = static_cast<uint8_t>(s[t][j] ^ flip);
  }
}

// Input bytes a row run of X row k needs at most (a stack buffer).
constexpr int64_t kQRunBytes = 256;

// Columns [p0, p0 + count) of one group's X as quads (x: the group's first
// plane), and with `sums` their sums.
void PackColumnQuads(const QConv& q, const QActivation& x, const QQuadBlock& b, int64_t p0,
                     int64_t count, uint8_t* cols, int32_t* sums) {
  const Window2d& g = q.g.win;
  const int64_t padded = RoundUp(count, kQColTile);
  const int64_t taps = g.kh * g.kw;
  const bool pointwise = IsPointwise(q.g);
  const auto pad = static_cast<uint8_t>(x.zero ^ x.flip);  // a raw byte of value xz
  uint8_t run[4][kQRunBytes];
  for (int64_t qi = 0; qi < b.kq; ++qi) {
    uint8_t* out = cols + qi * b.pb * 4;
    const uint8_t* src[4];
    if (pointwise) {
      for (int t = 0; t < 4; ++t) {
        const int64_t k = 4 * qi + t;
        if (k < q.k) {
          src[t] = x.data + k * g.h * g.w + p0;
        } else {
          for (int64_t i = 0; i < kQRunBytes; ++i) run[t][i] = pad;
          src[t] = run[t];
        }
      }
      // Past K, the run buffer repeats: kQRunBytes at a time.
      const bool all_real = 4 * qi + 3 < q.k;
      if (all_real) {
        Interleave4(src, count, x.flip, out);
      } else {
        for (int64_t j = 0; j < count; j += kQRunBytes) {
          const int64_t len = count - j < kQRunBytes ? count - j : kQRunBytes;
          const uint8_t* s2[4];
          for (int t = 0; t < 4; ++t) s2[t] = src[t] == run[t] ? run[t] : src[t] + j;
          Interleave4(s2, len, x.flip, out + 4 * j);
        }
      }
    } else {
      // One output row (at most kQRunBytes of it) at a time: four runs of
      // input columns ix0 + t * sw, the padding where they leave the input.
      int64_t oy = p0 / g.ow, ox = p0 % g.ow;
      int64_t j = 0;
      while (j < count) {
        int64_t len = g.ow - ox < count - j ? g.ow - ox : count - j;
        len = len < kQRunBytes ? len : kQRunBytes;
        const uint8_t* s2[4];
        for (int t = 0; t < 4; ++t) {
          const int64_t k = 4 * qi + t;
          uint8_t* r = run[t];
          s2[t] = r;
          if (k >= q.k) {
            for (int64_t i = 0; i < len; ++i) r[i] = pad;
            continue;
          }
          const int64_t c = k / taps, ky = (k / g.kw) % g.kh, kx = k % g.kw;
          const int64_t iy = oy * g.sh - g.pt + ky * g.dh;
          const int64_t ix0 = ox * g.sw - g.pl + kx * g.dw;
          int64_t lo = len, hi = len;  // i in [lo, hi) read the input
          if (iy >= 0 && iy < g.h) {
            lo = ix0 >= 0 ? 0 : (-ix0 + g.sw - 1) / g.sw;
            hi = ix0 >= g.w ? 0 : (g.w - ix0 + g.sw - 1) / g.sw;
            hi = hi < len ? hi : len;
            lo = lo < hi ? lo : hi;
          }
          for (int64_t i = 0; i < lo; ++i) r[i] = pad;
          if (lo < hi) {
            // row[i * sw]: column ix0 + (lo + i) * sw, inside the input.
            const uint8_t* row = x.data + c * g.h * g.w + iy * g.w + ix0 + lo * g.sw;
            if (lo == 0 && hi == len && g.sw == 1) {
              s2[t] = row;  // read in place
              continue;
            }
            if (g.sw == 1) {
              for (int64_t i = lo; i < hi; ++i) r[i] = row[i - lo];
            } else {
              for (int64_t i = lo; i < hi; ++i) r[i] = row[(i - lo) * g.sw];
            }
          }
          for (int64_t i = hi; i < len; ++i) r[i] = pad;
        }
        Interleave4(s2, len, x.flip, out + 4 * j);
        j += len;
        ox += len;
        if (ox == g.ow) {
          ox = 0;
          ++oy;
        }
      }
    }
    const auto xz = static_cast<uint8_t>(x.zero);
    for (int64_t j = 4 * count; j < 4 * padded; ++j) out[j] = xz;
  }
  if (sums == nullptr) return;
  // Column bytes past K and in the padding hold xz', so every quad counts.
  const int32_t bias = static_cast<int32_t>(4 * b.kq) * x.zero;
  for (int64_t j = 0; j < padded; ++j) sums[j] = -bias;
  for (int64_t qi = 0; qi < b.kq; ++qi) {
    const uint8_t* col = cols + qi * b.pb * 4;
    for (int64_t j = 0; j < padded; ++j) {
      sums[j] += col[4 * j] + col[4 * j + 1] + col[4 * j + 2] + col[4 * j + 3];
    }
  }
}

// int8 weights only (ch.flip == 0x80); the zero points as int8 values.
void QConvQuads(const QConv& q, const KernelCall& call, const QChannels& all, QOutput o, void* ws) {
  const Window2d& win = q.g.win;
  const int64_t cg = win.c / q.g.group;
  const int64_t mg = q.g.m / q.g.group;
  const int64_t hw = win.h * win.w;
  const int64_t ohw = win.oh * win.ow;
  const QQuadBlock b = QQuadBlockOf(q);
  auto* cols = static_cast<uint8_t*>(ws);
  auto* sums = reinterpret_cast<int32_t*>(static_cast<unsigned char*>(ws) + QColumnQuadBytes(b));
  auto* row_terms = reinterpret_cast<int32_t*>(static_cast<unsigned char*>(ws) +
                                               QColumnQuadBytes(b) + Align8Bytes(b.pb * 4));
  const QActivation x = QActivationOf(call);
  // Column sums only where some weight zero point is not 0.
  const auto* wzs = static_cast<const int8_t*>(all.zero);
  bool any_wz = false;
  for (int64_t c = 0; c < (all.zero_step != 0 ? q.g.m : 1); ++c) any_wz = any_wz || wzs[c] != 0;
  const int64_t kq_full = q.k / 4;
  const bool has_tail = q.k % 4 != 0;
  uint8_t* y = o.y;
  int32_t acc[kQQuadRows][kQChunk];
  for (int64_t n = 0; n < win.n; ++n) {
    for (int64_t gi = 0; gi < q.g.group; ++gi) {
      QActivation xg = x;
      xg.data = x.data + (n * win.c + gi * cg) * hw;
      const int64_t c0 = gi * mg;
      const auto* wg = reinterpret_cast<const int8_t*>(all.w) + c0 * q.k;
      for (int64_t m = 0; m < mg; ++m) {
        const int8_t* row = wg + m * q.k;
        int32_t sw = 0;
        for (int64_t i = 0; i < q.k; ++i) sw += row[i];
        row_terms[2 * m] =
            static_cast<int32_t>(0u - static_cast<uint32_t>(x.zero) * static_cast<uint32_t>(sw));
        uint8_t last[4] = {0, 0, 0, 0};
        for (int64_t i = 4 * kq_full; i < q.k; ++i) last[i - 4 * kq_full] = row[i];
        memcpy(&row_terms[2 * m + 1], last, sizeof(last));
      }
      for (int64_t p0 = 0; p0 < ohw; p0 += b.pb) {
        const int64_t count = ohw - p0 < b.pb ? ohw - p0 : b.pb;
        PackColumnQuads(q, xg, b, p0, count, cols, any_wz ? sums : nullptr);
        o.y = y + (n * q.g.m + c0) * ohw + p0;
        for (int64_t i0 = 0; i0 < mg; i0 += kQQuadRows) {
          const int64_t rows = mg - i0 < kQQuadRows ? mg - i0 : kQQuadRows;
          const uint8_t* w[kQQuadRows];
          int32_t init[kQQuadRows];
          int32_t tail[kQQuadRows];
          for (int64_t r = 0; r < kQQuadRows; ++r) {
            const int64_t m = i0 + (r < rows ? r : rows - 1);  // a partial tile repeats a row
            w[r] = reinterpret_cast<const uint8_t*>(wg + m * q.k);
            init[r] = row_terms[2 * m];
            tail[r] = row_terms[2 * m + 1];
          }
          for (int64_t j0 = 0; j0 < count; j0 += kQChunk) {
            const int64_t len = count - j0 < kQChunk ? count - j0 : kQChunk;
            QGemmQuads(w, kq_full, has_tail ? tail : nullptr, cols + j0 * 4, b.pb,
                       RoundUp(len, kQColTile), init, acc[0], kQChunk);
            for (int64_t r = 0; r < rows; ++r) {
              const int64_t c = c0 + i0 + r;
              const int32_t wz = wzs[c * all.zero_step];
              RequantizeChunk(acc[r], any_wz ? sums + j0 : nullptr, wz,
                              all.bias != nullptr ? all.bias[c] : 0, static_cast<ptrdiff_t>(len),
                              ChannelScale(o, all, c), o, (i0 + r) * ohw + j0, 1);
            }
          }
        }
      }
    }
  }
}
#endif  // BATON_KERNEL_DISPATCH

// Large reductions (pb = 0): im2col columns [P][K] with their sums, the
// weight rows read in place (qlinear_gemm.h's QGemmBlock).
// Columns [p0, p0 + count) of the implicit im2col matrix of one group's
// input channels (x: the group's first plane): column p = output position
// (oy, ox), element (c, ky, kx) = x[c][oy*sh - pt + ky*dh][ox*sw - pl +
// kx*dw] - xz, 0 in the padding (which holds the zero point).
void Im2colColumns(const Window2d& g, const QActivation& x, int64_t cg, int64_t p0, int64_t count,
                   int16_t* cols, int32_t* sums) {
  const int64_t k = cg * g.kh * g.kw;
  const uint8_t flip = x.flip;
  const int32_t xz = x.zero;
  int64_t oy = p0 / g.ow;
  int64_t ox = p0 % g.ow;
  for (int64_t j = 0; j < count; ++j) {
    int16_t* col = cols + j * k;
    int32_t sum = 0;
    const int64_t iy0 = oy * g.sh - g.pt;
    const int64_t ix0 = ox * g.sw - g.pl;
    for (int64_t c = 0; c < cg; ++c) {
      const uint8_t* plane = x.data + c * g.h * g.w;
      for (int64_t ky = 0; ky < g.kh; ++ky) {
        int16_t* dst = col + (c * g.kh + ky) * g.kw;
        const int64_t iy = iy0 + ky * g.dh;
        if (iy < 0 || iy >= g.h) {
          for (int64_t kx = 0; kx < g.kw; ++kx) dst[kx] = 0;
          continue;
        }
        const uint8_t* row = plane + iy * g.w;
        const bool inside = ix0 >= 0 && ix0 + (g.kw - 1) * g.dw < g.w;
        for (int64_t kx = 0; kx < g.kw; ++kx) {
          const int64_t ix = ix0 + kx * g.dw;
          const int32_t v = (inside || (ix >= 0 && ix < g.w)) ? (row[ix] ^ flip) - xz : 0;
          dst[kx] = static_cast<int16_t>(v);
          sum += v;
        }
      }
    }
    sums[j] = sum;
    if (++ox == g.ow) {
      ox = 0;
      ++oy;
    }
  }
}

void QConvDot(const QConv& q, const KernelCall& call, const QChannels& all, QOutput o, void* ws) {
  const Window2d& win = q.g.win;
  const int64_t cg = win.c / q.g.group;
  const int64_t mg = q.g.m / q.g.group;
  const int64_t hw = win.h * win.w;
  const int64_t ohw = win.oh * win.ow;
  const int64_t block = QColumnsPerBlock(q.k, ohw);
  QColumns cols = QColumnsIn(ws, block, q.k);
  const QActivation x = QActivationOf(call);
  uint8_t* y = o.y;
  o.ld_channel = ohw;
  o.ld_column = 1;
  for (int64_t n = 0; n < win.n; ++n) {
    for (int64_t gi = 0; gi < q.g.group; ++gi) {
      QActivation xg = x;
      xg.data = x.data + (n * win.c + gi * cg) * hw;
      QChannels ch = all;
      ch.c0 = gi * mg;
      ch.count = mg;
      ch.w = all.w + gi * mg * q.k;
      for (int64_t p0 = 0; p0 < ohw; p0 += block) {
        cols.count = ohw - p0 < block ? ohw - p0 : block;
        Im2colColumns(win, xg, cg, p0, cols.count, cols.data, cols.sums);
        o.y = y + (n * q.g.m + gi * mg) * ohw + p0;
        QGemmBlock(ch, cols, o);
      }
    }
  }
}

// Depthwise (group == C, M = C * multiplier), one input channel a band of
// output rows at a time. The workspace holds the band's padded input as
// int16 (x - xz) (the padding, which holds the zero point, is 0) split into
// sh * sw phase planes, and an int32 accumulator plane:
//
//   phase plane (fy, fx): int16 [hq][wq],  element (r, i) = padded input
//                         row (oy0 + r) * sh + fy, column i * sw + fx
//   planes in order fy * sw + fx, then acc: int32 [rows][wq]
//
// Tap (ky, kx) of output (oy, ox) reads padded (oy * sh + ky * dh,
// ox * sw + kx * dw), which is element (oy - oy0 + (ky * dh) / sh,
// ox + (kx * dw) / sw) of phase plane ((ky * dh) % sh, (kx * dw) % sw): a
// tap adds (w - wz) * plane over one contiguous run of the band's rows, the
// accumulator rows being wq long (the columns past ow are scratch). Exact:
// the sums the numpy reference makes, then RequantizeChunk.
struct QDwBand {
  int64_t wq = 0;     // plane row: ow + ((kw - 1) * dw) / sw
  int64_t extra = 0;  // plane rows beyond the output rows: ((kh - 1) * dh) / sh
  int64_t rows = 0;   // output rows per band
  int64_t PlaneElements() const { return (rows + extra) * wq; }
};

QDwBand QDwBandOf(const Window2d& g) {
  QDwBand b;
  b.wq = g.ow + ((g.kw - 1) * g.dw) / g.sw;
  b.extra = ((g.kh - 1) * g.dh) / g.sh;
  const int64_t phases = g.sh * g.sw;
  // rows * (2 * phases * wq + 4 * wq) + 2 * phases * extra * wq <= kQBlockBytes
  const int64_t fit = (kQBlockBytes - 2 * phases * b.extra * b.wq) / (b.wq * (2 * phases + 4));
  b.rows = fit > 1 ? fit : 1;
  b.rows = b.rows < g.oh ? b.rows : g.oh;
  return b;
}

// Bytes of the phase planes (the accumulator plane follows).
inline int64_t QDwPlaneBytes(const Window2d& g, const QDwBand& b) {
  return Align8Bytes(g.sh * g.sw * b.PlaneElements() * 2);
}

size_t QDepthwiseWorkspaceFor(const Window2d& g) {
  if (g.oh <= 0 || g.ow <= 0) return 0;
  const QDwBand b = QDwBandOf(g);
  return static_cast<size_t>(QDwPlaneBytes(g, b) + Align8Bytes(b.rows * b.wq * 4));
}

// Plane rows [0, count) of every phase plane of the band from output row oy0.
void FillPhasePlanes(const Window2d& g, const QDwBand& b, const uint8_t* plane, uint8_t flip,
                     int32_t xz, int64_t oy0, int64_t count, int16_t* xq) {
  for (int64_t fy = 0; fy < g.sh; ++fy) {
    for (int64_t fx = 0; fx < g.sw; ++fx) {
      int16_t* dst = xq + (fy * g.sw + fx) * b.PlaneElements();
      // Columns i with input column i * sw + fx - pl inside [0, w).
      const int64_t first = g.pl - fx;
      int64_t lo = first <= 0 ? 0 : (first + g.sw - 1) / g.sw;
      int64_t hi = g.w + first <= 0 ? 0 : (g.w + first + g.sw - 1) / g.sw;
      hi = hi < b.wq ? hi : b.wq;
      lo = lo < hi ? lo : hi;
      for (int64_t r = 0; r < count; ++r, dst += b.wq) {
        const int64_t iy = (oy0 + r) * g.sh + fy - g.pt;
        if (iy < 0 || iy >= g.h) {
          for (int64_t i = 0; i < b.wq; ++i) dst[i] = 0;
          continue;
        }
        const uint8_t* src = plane + iy * g.w - first;  // src[i * sw]: column i
        for (int64_t i = 0; i < lo; ++i) dst[i] = 0;
        if (g.sw == 1) {
          for (int64_t i = lo; i < hi; ++i) dst[i] = static_cast<int16_t>((src[i] ^ flip) - xz);
        } else if (g.sw == 2) {
          for (int64_t i = lo; i < hi; ++i) {
            dst[i] = static_cast<int16_t>((src[2 * i] ^ flip) - xz);
          }
        } else {
          for (int64_t i = lo; i < hi; ++i) {
            dst[i] = static_cast<int16_t>((src[i * g.sw] ^ flip) - xz);
          }
        }
        for (int64_t i = hi; i < b.wq; ++i) dst[i] = 0;
      }
    }
  }
}

void QDepthwise(const QConv& q, const KernelCall& call, const QChannels& ch, const QOutput& o,
                void* ws) {
  const Window2d& g = q.g.win;
  const int64_t mult = q.g.m / g.c;
  const int64_t hw = g.h * g.w;
  const int64_t ohw = g.oh * g.ow;
  const int64_t taps = g.kh * g.kw;
  const QDwBand b = QDwBandOf(g);
  auto* xq = static_cast<int16_t*>(ws);
  auto* acc = reinterpret_cast<int32_t*>(static_cast<unsigned char*>(ws) + QDwPlaneBytes(g, b));
  const QActivation x = QActivationOf(call);
#if BATON_KERNEL_DISPATCH
  const bool fused = QTapsAvailable();
#else
  constexpr bool fused = false;  // the portable copy has no QTaps (code size)
#endif
  for (int64_t n = 0; n < g.n; ++n) {
    for (int64_t c = 0; c < g.c; ++c) {
      const uint8_t* plane = x.data + (n * g.c + c) * hw;
      for (int64_t oy0 = 0; oy0 < g.oh; oy0 += b.rows) {
        const int64_t rows = g.oh - oy0 < b.rows ? g.oh - oy0 : b.rows;
        FillPhasePlanes(g, b, plane, x.flip, x.zero, oy0, rows + b.extra, xq);
        // The last row's scratch columns are left out: the run stays inside its plane.
        const int64_t run = (rows - 1) * b.wq + g.ow;
        for (int64_t m = c * mult; m < (c + 1) * mult; ++m) {
          const uint8_t* wm = ch.w + m * taps;
          const int32_t wz = ChannelZero(ch, m);
#if BATON_KERNEL_DISPATCH
          if (fused) {
            // All taps (kQTapsMax at a time) in one pass over the accumulators.
            const int16_t* srcs[kQTapsMax];
            int16_t wvs[kQTapsMax];
            int64_t count = 0;
            bool add = false;
            for (int64_t t = 0; t < taps; ++t) {
              const int64_t ty = (t / g.kw) * g.dh, tx = (t % g.kw) * g.dw;
              srcs[count] = xq + ((ty % g.sh) * g.sw + tx % g.sw) * b.PlaneElements() +
                            (ty / g.sh) * b.wq + tx / g.sw;
              wvs[count] = static_cast<int16_t>((wm[t] ^ ch.flip) - wz);
              if (++count == kQTapsMax || t + 1 == taps) {
                QTaps(acc, srcs, wvs, count, run, add);
                add = true;
                count = 0;
              }
            }
          } else {
            for (int64_t i = 0; i < run; ++i) acc[i] = 0;
          }
#else
          for (int64_t i = 0; i < run; ++i) acc[i] = 0;
#endif
          for (int64_t ky = 0; ky < (fused ? 0 : g.kh); ++ky) {
            for (int64_t kx = 0; kx < g.kw; ++kx) {
              // (w - wz) and (x - xz) fit in int16: a widening int16 multiply.
              const auto wv = static_cast<int16_t>((wm[ky * g.kw + kx] ^ ch.flip) - wz);
              const int64_t ty = ky * g.dh, tx = kx * g.dw;
              const int16_t* src = xq + ((ty % g.sh) * g.sw + tx % g.sw) * b.PlaneElements() +
                                   (ty / g.sh) * b.wq + tx / g.sw;
              QTap(acc, src, wv, run);
            }
          }
          const int32_t bias = ch.bias != nullptr ? ch.bias[m] : 0;
          const float scale = ChannelScale(o, ch, m);
          // The rows packed to ow apart (moving down only: no overlap ahead),
          // then requantized as one run.
          for (int64_t r = 1; r < rows; ++r) {
            for (int64_t i = 0; i < g.ow; ++i) acc[r * g.ow + i] = acc[r * b.wq + i];
          }
          const int64_t out0 = (n * q.g.m + m) * ohw + oy0 * g.ow;
          for (int64_t j = 0; j < rows * g.ow; j += kQChunk) {
            const int64_t len = rows * g.ow - j < kQChunk ? rows * g.ow - j : kQChunk;
            RequantizeChunk(acc + j, nullptr, 0, bias, static_cast<ptrdiff_t>(len), scale, o,
                            out0 + j, 1);
          }
        }
      }
    }
  }
}

Status QConvPrepare(const KernelCall& call) {
  QConv q;
  BATON_RETURN_IF_ERROR(ParseQConv(call, &q));
  return CheckWorkspace(call, QConvWorkspaceFor(q));
}

size_t QConvWorkspaceBytes(const KernelCall& call) {
  QConv q;
  if (!ParseQConv(call, &q).ok()) return 0;
  return QConvWorkspaceFor(q);
}

Status QConvEval(const KernelCall& call) {
  QConv q;
  BATON_RETURN_IF_ERROR(ParseQConv(call, &q));
  const QChannels ch = QChannelsOf(call, call.inputs[3].data, q.k, q.g.m);
  const QOutput o = QOutputOf(call, q.clamp);
  if (IsDepthwise(q.g)) {
    if (q.g.win.oh * q.g.win.ow > 0) QDepthwise(q, call, ch, o, call.workspace[0].data);
  } else if (q.g.win.oh * q.g.win.ow > 0) {
#if BATON_KERNEL_DISPATCH
    if (call.inputs[3].dtype() == DType::Int8 && QQuadBlockOf(q).pb > 0 && QGemmQuadsAvailable()) {
      QConvQuads(q, call, ch, o, call.workspace[0].data);
      return Status::Ok();
    }
    if (QConvBlockOf(q).pb > 0 && QGemmPairsAvailable()) {
      QConvGemm(q, call, ch, o, call.workspace[0].data);
      return Status::Ok();
    }
#endif
    QConvDot(q, call, ch, o, call.workspace[0].data);
  }
  return Status::Ok();
}

// ------------------------------------------------------------- QLinearMatMul

struct QMatMul {
  int64_t rows = 0;  // a seen as [rows, k]
  int64_t k = 0, n = 0;
  bool trans_b = false;
  Clamp clamp;
};

Status ParseQMatMul(const KernelCall& call, QMatMul* out) {
  BATON_RETURN_IF_ERROR(CheckArity(call, 8, 9, 1));
  QMatMul q;
  // Optional: absent means ONNX's QLinearMatMul (no transpose, no clamp).
  BATON_KCHECK(call.node->params_type() == schema::Params::NONE ||
                   call.node->params_type() == schema::Params::GemmParams,
               "QLinearMatMul takes GemmParams");
  if (const schema::GemmParams* p = call.node->params_as_GemmParams()) {
    BATON_KCHECK(!p->trans_a(), "QLinearMatMul does not transpose a");
    q.trans_b = p->trans_b();
    q.clamp = Clamp::From(p->clamp());
  }
  const TensorArg& a = call.inputs[0];
  const TensorArg& b = call.inputs[3];
  const TensorArg& y = call.outputs[0];
  BATON_KCHECK(IsQ8(a.dtype()) && IsQ8(b.dtype()) && IsQ8(y.dtype()),
               "QLinearMatMul a, b and output must be uint8 or int8");
  BATON_KCHECK(DimsWithinLimit(a) && DimsWithinLimit(b) && DimsWithinLimit(y),
               "QLinearMatMul dimension too large");
  BATON_KCHECK(b.rank() == 2, "QLinearMatMul b must be 2-D");
  BATON_KCHECK(a.rank() >= 1 && y.rank() == a.rank(), "QLinearMatMul a and output ranks differ");
  const uint32_t last = a.rank() - 1;
  q.k = a.dim(last);
  q.n = q.trans_b ? b.dim(0) : b.dim(1);
  BATON_KCHECK((q.trans_b ? b.dim(1) : b.dim(0)) == q.k, "QLinearMatMul inner dimensions differ");
  BATON_KCHECK(q.k <= kMaxReduction,
               "QLinearMatMul reduction K too large for an int32 accumulator");
  BATON_KCHECK(y.dim(last) == q.n, "QLinearMatMul output shape mismatch");
  q.rows = 1;
  for (uint32_t i = 0; i < last; ++i) {
    BATON_KCHECK(y.dim(i) == a.dim(i), "QLinearMatMul output shape mismatch");
    BATON_KCHECK(a.dim(i) == 0 || q.rows <= (int64_t{1} << 62) / a.dim(i),
                 "QLinearMatMul a too large");
    q.rows *= a.dim(i);
  }
  BATON_RETURN_IF_ERROR(CheckQuantInputs(call, q.n));
  *out = q;
  return Status::Ok();
}

// Packed b rows per block (b [K, N] without trans_b): NB * K bytes.
int64_t PackedRowsPerBlock(const QMatMul& q) {
  const int64_t nb = kQBlockBytes / (q.k > 0 ? q.k : 1);
  return nb < 1 ? 1 : (nb < q.n ? nb : q.n);
}

size_t QMatMulWorkspaceFor(const QMatMul& q) {
  if (q.rows == 0 || q.n == 0) return 0;
  size_t bytes = QColumnBytes(QColumnsPerBlock(q.k, q.rows), q.k);
  if (!q.trans_b) bytes += static_cast<size_t>(PackedRowsPerBlock(q) * q.k);
  return bytes;
}

// Rows [r0, r0 + count) of a as int16 (a - az) columns, with their sums.
void RowColumns(const QActivation& a, int64_t k, int64_t r0, int64_t count, int16_t* cols,
                int32_t* sums) {
  const uint8_t flip = a.flip;
  const int32_t az = a.zero;
  for (int64_t j = 0; j < count; ++j) {
    const uint8_t* src = a.data + (r0 + j) * k;
    int16_t* dst = cols + j * k;
    int32_t sum = 0;
    for (int64_t i = 0; i < k; ++i) {
      const int32_t v = (src[i] ^ flip) - az;
      dst[i] = static_cast<int16_t>(v);
      sum += v;
    }
    sums[j] = sum;
  }
}

// Columns [j0, j0 + count) of b [K, N] as rows of K bytes.
void PackColumns(const uint8_t* b, int64_t k, int64_t n, int64_t j0, int64_t count, uint8_t* dst) {
  for (int64_t i = 0; i < k; ++i) {
    const uint8_t* src = b + i * n + j0;
    for (int64_t j = 0; j < count; ++j) dst[j * k + i] = src[j];
  }
}

Status QMatMulPrepare(const KernelCall& call) {
  QMatMul q;
  BATON_RETURN_IF_ERROR(ParseQMatMul(call, &q));
  return CheckWorkspace(call, QMatMulWorkspaceFor(q));
}

size_t QMatMulWorkspaceBytes(const KernelCall& call) {
  QMatMul q;
  if (!ParseQMatMul(call, &q).ok()) return 0;
  return QMatMulWorkspaceFor(q);
}

// b's columns are the output channels, a's rows the GEMM's columns.
Status QMatMulEval(const KernelCall& call) {
  QMatMul q;
  BATON_RETURN_IF_ERROR(ParseQMatMul(call, &q));
  if (q.rows == 0 || q.n == 0) return Status::Ok();
  void* ws = call.workspace[0].data;
  const int64_t block = QColumnsPerBlock(q.k, q.rows);
  QColumns cols = QColumnsIn(ws, block, q.k);
  uint8_t* packed = static_cast<uint8_t*>(ws) + QColumnBytes(block, q.k);
  const QActivation a = QActivationOf(call);
  const auto* b = static_cast<const uint8_t*>(call.inputs[3].data);
  QOutput o = QOutputOf(call, q.clamp);
  uint8_t* y = o.y;
  o.ld_channel = 1;
  o.ld_column = q.n;
  const int64_t nb = q.trans_b ? q.n : PackedRowsPerBlock(q);
  for (int64_t j0 = 0; j0 < q.n; j0 += nb) {
    const int64_t count_n = q.n - j0 < nb ? q.n - j0 : nb;
    QChannels ch = QChannelsOf(call, b + j0 * q.k, q.k, count_n);
    ch.c0 = j0;
    if (!q.trans_b) {
      PackColumns(b, q.k, q.n, j0, count_n, packed);
      ch.w = packed;
    }
    for (int64_t r0 = 0; r0 < q.rows; r0 += block) {
      cols.count = q.rows - r0 < block ? q.rows - r0 : block;
      RowColumns(a, q.k, r0, cols.count, cols.data, cols.sums);
      o.y = y + r0 * q.n + j0;
      QGemmBlock(ch, cols, o);
    }
  }
  return Status::Ok();
}

// ---------------------------------------------------------------- QLinearAdd
//
// com.microsoft's QLinearAdd: inputs 0 a, 1 a_scale, 2 a_zero_point, 3 b,
// 4 b_scale, 5 b_zero_point, 6 c_scale, 7 c_zero_point (optional: 0, uint8
// output); a, b and c all uint8 or all int8, numpy broadcasting of a and b.
// ONNX Runtime's arithmetic (MLAS's AVX2 QLinearAdd, found bit-exact against
// ORT 1.30 by tests/kernels/qlinear_vs_ort.py), all float32:
//
//   ra = a_scale / c_scale,  rb = b_scale / c_scale
//   fixed = float(zc) - fma(ra, float(za), rb * float(zb))
//   v = fma(float(a), ra, fma(float(b), rb, fixed))
//   c = saturate(round_half_even(v))
//
// with a and b exchanged (operands, scales and zero points) where ORT's
// broadcast loop sees a as the scalar operand: when a is broadcast along the
// innermost collapsed dimension (or the output has one element). The fused
// clamp {min, max} (ElementwiseParams.clamp, real units) narrows v's range
// [qmin, qmax] to zc + [min / c_scale, max / c_scale] (a NaN bound is none),
// as QLinearConv's; v is clamped before rounding (NaN to the low bound).

struct QAddSide {
  const uint8_t* data = nullptr;
  float ratio = 0.0f;  // scale / c_scale
  int32_t zero = 0;
  const int64_t* strides = nullptr;
};

inline int32_t SignedZero(const TensorArg& z, DType type) {
  if (!z.present()) return 0;
  const uint8_t byte = static_cast<const uint8_t*>(z.data)[0];
  return type == DType::Int8 ? static_cast<int32_t>(static_cast<int8_t>(byte)) : byte;
}

Status ParseQAdd(const KernelCall& call, Broadcast2* bc) {
  BATON_RETURN_IF_ERROR(CheckArity(call, 7, 8, 1));
  BATON_KCHECK(call.node->params_type() == schema::Params::NONE ||
                   call.node->params_type() == schema::Params::ElementwiseParams,
               "QLinearAdd/Mul takes ElementwiseParams");
  const TensorArg& a = call.inputs[0];
  const TensorArg& b = call.inputs[3];
  const TensorArg& y = call.outputs[0];
  BATON_KCHECK(IsQ8(a.dtype()) && b.dtype() == a.dtype() && y.dtype() == a.dtype(),
               "QLinearAdd/Mul a, b and output must be all uint8 or all int8");
  BATON_KCHECK(IsScalarOf(call.inputs[1], DType::Float32) &&
                   IsScalarOf(call.inputs[4], DType::Float32) &&
                   IsScalarOf(call.inputs[6], DType::Float32),
               "QLinearAdd/Mul scales must be float32 scalars");
  BATON_KCHECK(IsScalarOf(call.inputs[2], a.dtype()) && IsScalarOf(call.inputs[5], a.dtype()),
               "QLinearAdd/Mul a_zero_point and b_zero_point must be scalars of the inputs' dtype");
  const TensorArg& zc = Input(call, 7);
  if (zc.present()) {
    BATON_KCHECK(IsScalarOf(zc, y.dtype()),
                 "QLinearAdd/Mul c_zero_point must be a scalar of the output's dtype");
  } else {
    BATON_KCHECK(y.dtype() == DType::UInt8, "QLinearAdd/Mul without c_zero_point writes uint8");
  }
  return MakeBroadcast2(a, b, y, bc);
}

Status QAddPrepare(const KernelCall& call) {
  Broadcast2 bc;
  return ParseQAdd(call, &bc);
}

Status QAddEval(const KernelCall& call) {
  Broadcast2 bc;
  BATON_RETURN_IF_ERROR(ParseQAdd(call, &bc));
  const TensorArg& y = call.outputs[0];
  if (y.elements() == 0) return Status::Ok();
  const DType type = y.dtype();
  const bool is_signed = type == DType::Int8;
  const float cs = call.inputs[6].f32()[0];
  QAddSide p, q;  // p: ORT's vector operand ("A"), q: the other ("B")
  p.data = static_cast<const uint8_t*>(call.inputs[0].data);
  p.ratio = call.inputs[1].f32()[0] / cs;
  p.zero = SignedZero(call.inputs[2], type);
  p.strides = bc.sa;
  q.data = static_cast<const uint8_t*>(call.inputs[3].data);
  q.ratio = call.inputs[4].f32()[0] / cs;
  q.zero = SignedZero(call.inputs[5], type);
  q.strides = bc.sb;
  const uint32_t inner = bc.rank - 1;
  if (bc.sa[inner] == 0) {
    const QAddSide t = p;
    p = q;
    q = t;
  }
  const int32_t zc = SignedZero(Input(call, 7), type);
  const float fixed = static_cast<float>(zc) - __builtin_fmaf(p.ratio, static_cast<float>(p.zero),
                                                              q.ratio * static_cast<float>(q.zero));
  // v's range, output zero point included.
  const float qlo = is_signed ? -128.0f : 0.0f;
  const float qhi = is_signed ? 127.0f : 255.0f;
  float lo = qlo, hi = qhi;
  const schema::ElementwiseParams* params = call.node->params_as_ElementwiseParams();
  const Clamp clamp = Clamp::From(params ? params->clamp() : nullptr);
  if (clamp.enabled) {
    const float rlo = qlo - static_cast<float>(zc), rhi = qhi - static_cast<float>(zc);
    lo = ClampBoundOf(clamp.lo / cs, rlo, rhi, rlo) + static_cast<float>(zc);
    hi = ClampBoundOf(clamp.hi / cs, rlo, rhi, rhi) + static_cast<float>(zc);
  }
  const uint8_t flip = FlipOf(type);
  const int32_t off = is_signed ? 128 : 0;
  const int64_t n = bc.shape[inner];
  const int64_t sp = p.strides[inner], sq = q.strides[inner];
  const int64_t rows = Rows(bc);
  uint8_t* out = static_cast<uint8_t*>(y.data);
  int64_t index[kMaxRank] = {};
  int64_t op = 0, oq = 0;
  QAddRowParams row;
  row.flip = flip;
  row.off = off;
  row.ra = p.ratio;
  row.rb = q.ratio;
  row.fixed = fixed;
  row.lo = lo;
  row.hi = hi;
  for (int64_t t = 0; t < rows; ++t) {
    QAddRow(p.data + op, sp, q.data + oq, sq, n, row, out);
    out += n;
    NextRow(bc, p.strides, q.strides, index, &op, &oq);
  }
  return Status::Ok();
}

// ---------------------------------------------------------------- QLinearMul
//
// com.microsoft's QLinearMul: QLinearAdd's inputs, dtypes and broadcasting,
// no clamp. ONNX Runtime's arithmetic (MLAS's SSE2/AVX2 QLinearMul), exact
// integer product, then one float32 multiply by the combined scale:
//
//   ratio = (a_scale * b_scale) / c_scale
//   c = saturate(round_half_even(float((a - za) * (b - zb)) * ratio + float(zc)))
//
// The zero point is added before rounding (found against ORT 1.30: adding it
// after differs at ties with an odd zc). |(a - za) * (b - zb)| <= 255 * 255
// is exact in float32. v is clamped to the output range before rounding
// (NaN to the low bound).

Status QMulPrepare(const KernelCall& call) {
  const schema::ElementwiseParams* params = call.node->params_as_ElementwiseParams();
  BATON_KCHECK(params == nullptr || params->clamp() == nullptr, "QLinearMul takes no clamp");
  Broadcast2 bc;
  return ParseQAdd(call, &bc);
}

Status QMulEval(const KernelCall& call) {
  Broadcast2 bc;
  BATON_RETURN_IF_ERROR(ParseQAdd(call, &bc));
  const TensorArg& y = call.outputs[0];
  if (y.elements() == 0) return Status::Ok();
  const DType type = y.dtype();
  const bool is_signed = type == DType::Int8;
  const float ratio = (call.inputs[1].f32()[0] * call.inputs[4].f32()[0]) / call.inputs[6].f32()[0];
  const int32_t za = SignedZero(call.inputs[2], type);
  const int32_t zb = SignedZero(call.inputs[5], type);
  const int32_t zc = SignedZero(Input(call, 7), type);
  const float fzc = static_cast<float>(zc);
  const float lo = is_signed ? -128.0f : 0.0f;
  const float hi = is_signed ? 127.0f : 255.0f;
  const uint8_t flip = FlipOf(type);
  const int32_t off = is_signed ? 128 : 0;  // (byte ^ flip) - off is the value
  const auto* a = static_cast<const uint8_t*>(call.inputs[0].data);
  const auto* b = static_cast<const uint8_t*>(call.inputs[3].data);
  auto* out = static_cast<uint8_t*>(y.data);
  const uint32_t inner = bc.rank - 1;
  const int64_t n = bc.shape[inner];
  const int64_t sa = bc.sa[inner], sb = bc.sb[inner];
  const int64_t rows = Rows(bc);
  int64_t index[kMaxRank] = {};
  int64_t oa = 0, ob = 0;
  for (int64_t t = 0; t < rows; ++t) {
    for (int64_t i = 0; i < n; ++i) {
      const int32_t va = ((a[oa + i * sa] ^ flip) - off) - za;
      const int32_t vb = ((b[ob + i * sb] ^ flip) - off) - zb;
      float v = static_cast<float>(va * vb) * ratio + fzc;
      v = v > lo ? v : lo;
      v = v < hi ? v : hi;
      out[i] = static_cast<uint8_t>(static_cast<int32_t>(RoundHalfEven(v)));
    }
    out += n;
    NextRow(bc, bc.sa, bc.sb, index, &oa, &ob);
  }
  return Status::Ok();
}

}  // namespace

constexpr KernelEntry kQLinearEntries[] = {
    {Op::QLinearConv, kAllDeviceKinds, QConvPrepare, QConvEval, QConvWorkspaceBytes},
    {Op::QLinearMatMul, kAllDeviceKinds, QMatMulPrepare, QMatMulEval, QMatMulWorkspaceBytes},
    {Op::QLinearAdd, kAllDeviceKinds, QAddPrepare, QAddEval, nullptr},
    {Op::QLinearMul, kAllDeviceKinds, QMulPrepare, QMulEval, nullptr},
};
BATON_KERNEL_FAMILY(QLinear, kQLinearEntries);

}  // namespace kernels
}  // namespace baton
