// Depthwise convolution (group == C, M = C * multiplier), one output row at a
// time. 3x3 kernels with unit dilation and stride 1 or 2 (MobileNet) take a
// single pass per row with all nine taps in registers (rows in the padding
// get zero weights); every other shape accumulates tap by tap over the row,
// which stays in L1.

#include "conv.h"

namespace baton {
namespace kernels {
namespace {

// Any kernel, stride and dilation: accumulate each tap over its valid range.
void GenericRow(const Window2d& g, const float* x, const float* w, float bias, int64_t oy,
                float* __restrict yr) {
  for (int64_t ox = 0; ox < g.ow; ++ox) yr[ox] = bias;
  for (int64_t ky = 0; ky < g.kh; ++ky) {
    const int64_t iy = oy * g.sh - g.pt + ky * g.dh;
    if (iy < 0 || iy >= g.h) continue;
    const float* __restrict xr = x + iy * g.w;
    for (int64_t kx = 0; kx < g.kw; ++kx) {
      const float wv = w[ky * g.kw + kx];
      const int64_t off = kx * g.dw - g.pl;
      int64_t lo, hi;
      ValidRange(g.ow, g.w, g.sw, off, &lo, &hi);
      if (g.sw == 1) {
        for (int64_t ox = lo; ox < hi; ++ox) yr[ox] += wv * xr[ox + off];
      } else {
        const int64_t sw = g.sw;
        for (int64_t ox = lo; ox < hi; ++ox) yr[ox] += wv * xr[ox * sw + off];
      }
    }
  }
}

// 3x3, dilation 1. r0..r2 are the three input rows; a row outside the input
// is passed as an in-bounds row with its three weights zeroed.
template <int kStride>
void Row3x3(const Window2d& g, const float* __restrict r0, const float* __restrict r1,
            const float* __restrict r2, const float* w, float bias, float* __restrict yr) {
  const float w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4], w5 = w[5], w6 = w[6],
              w7 = w[7], w8 = w[8];
  const int64_t base = -g.pl;
  // Columns whose three taps are all inside the row.
  int64_t lo, hi;
  ValidRange(g.ow, g.w - 2, kStride, base, &lo, &hi);
  for (int64_t ox = lo; ox < hi; ++ox) {
    const int64_t i = ox * kStride + base;
    float s = bias;
    s += w0 * r0[i] + w1 * r0[i + 1] + w2 * r0[i + 2];
    s += w3 * r1[i] + w4 * r1[i + 1] + w5 * r1[i + 2];
    s += w6 * r2[i] + w7 * r2[i + 1] + w8 * r2[i + 2];
    yr[ox] = s;
  }
  // Border columns [0, lo) and [hi, ow): only the taps inside the row.
  const auto border = [&](int64_t ox) {
    const int64_t i = ox * kStride + base;
    float s = bias;
    for (int64_t kx = 0; kx < 3; ++kx) {
      const int64_t ix = i + kx;
      if (ix < 0 || ix >= g.w) continue;
      s += w[kx] * r0[ix] + w[3 + kx] * r1[ix] + w[6 + kx] * r2[ix];
    }
    yr[ox] = s;
  };
  for (int64_t ox = 0; ox < lo; ++ox) border(ox);
  for (int64_t ox = hi; ox < g.ow; ++ox) border(ox);
}

// One output row of a 3x3 unit-dilation depthwise filter.
template <int kStride>
void Row3x3Any(const Window2d& g, const float* x, const float* w, float bias, int64_t oy,
               float* yr) {
  const int64_t iy0 = oy * kStride - g.pt;
  float wz[9];
  const float* rows[3];
  for (int ky = 0; ky < 3; ++ky) {
    const int64_t iy = iy0 + ky;
    const bool inside = iy >= 0 && iy < g.h;
    // Any row inside the input serves as the stand-in for one outside.
    const int64_t safe = iy < 0 ? 0 : (iy >= g.h ? g.h - 1 : iy);
    rows[ky] = x + safe * g.w;
    for (int kx = 0; kx < 3; ++kx) wz[ky * 3 + kx] = inside ? w[ky * 3 + kx] : 0.0f;
  }
  Row3x3<kStride>(g, rows[0], rows[1], rows[2], wz, bias, yr);
}

}  // namespace

void DepthwiseConv(const ConvGeom& cg, const float* x, const float* w, const float* bias,
                   const Clamp& clamp, float* y) {
  const Window2d& g = cg.win;
  const int64_t mult = cg.m / g.c;
  const int64_t hw = g.h * g.w;
  const int64_t ohw = g.oh * g.ow;
  const int64_t taps = g.kh * g.kw;
  const bool is3x3 = g.kh == 3 && g.kw == 3 && g.dh == 1 && g.dw == 1 && g.sh == g.sw && g.h > 0 &&
                     g.w > 0 && (g.sw == 1 || g.sw == 2);
  for (int64_t n = 0; n < g.n; ++n) {
    for (int64_t m = 0; m < cg.m; ++m) {
      const float* xp = x + (n * g.c + m / mult) * hw;
      const float* wm = w + m * taps;
      const float b = bias ? bias[m] : 0.0f;
      float* yp = y + (n * cg.m + m) * ohw;
      for (int64_t oy = 0; oy < g.oh; ++oy) {
        float* yr = yp + oy * g.ow;
        if (!is3x3) {
          GenericRow(g, xp, wm, b, oy, yr);
        } else if (g.sw == 1) {
          Row3x3Any<1>(g, xp, wm, b, oy, yr);
        } else {
          Row3x3Any<2>(g, xp, wm, b, oy, yr);
        }
        ApplyClamp(clamp, yr, g.ow);
      }
    }
  }
}

}  // namespace kernels
}  // namespace baton
