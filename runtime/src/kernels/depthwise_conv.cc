// Depthwise convolution (group == C, M = C * multiplier).
//
// With the workspace plans reserve, one of two paths, chosen by shape:
//
// The channel-block path (every strided layer, planes up to kDwChannelPlane
// outputs): kDwLanes output channels at once, a local NCHWc inside the
// kernel. Per band of output rows, the padded input rows the band reads are
// packed channel-last ([row][col][16], 8x8 register transposes with AVX2),
// every tap is one full-width vector multiply-add across the 16 channels
// (strided taps read whole vectors too), and the band's outputs go back to
// the channels' NCHW planes, clamped (gemm/depthwise_isa.inc).
//
//   workspace: [ band input: cin x wp x 16 ][ weights: taps x 16 ][ bias: 16 ]
//              [ band outputs: crows x ow x 16 ]
//
// The phase-plane path (unit-stride planes larger than that): per channel
// and block of output rows, the padded input rows the block reads are split
// into sh x sw phase planes, so that every tap becomes one contiguous
// multiply-add over the whole block, the block's rows laid end to end; a
// kernel row of 3, 5 or 7 taps is one pass. The padding is zeros in the
// planes, so no tap has a border case. Blocks are sized to kDwBlockFloats
// (L1).
//   workspace: [ sh * sw phase planes: hq x wq ][ accumulators: rows x wq ]
//              [ with stride: one padded row, wq * sw ]
//
// The direct path (x86-64 AVX2 and AVX-512 copies; it takes a layer before
// the others, whatever its workspace): 3x3 and 5x5 kernels (AVX2: 3x3),
// unit dilation, at stride 1 on rows of at least 28 outputs (AVX2: 56) or
// at stride 2 on rows of at least 14 (AVX2: 28). Per channel, four output
// rows at a time straight from the NCHW input rows, two vectors of outputs
// per step at stride 1 and one at stride 2 (whose even and odd input
// columns come from in-register shuffles or, on AVX-512, permutes):
// nothing is packed or copied (gemm/depthwise_isa.inc). Plans still reserve
// the other paths' workspace for these layers: which path runs depends on
// the CPU.
//
// The row path (a plan without that workspace, from an older planner): one
// output row at a time; 3x3 kernels with unit dilation and stride 1 or 2
// take a single pass per row with all nine taps in registers (rows in the
// padding get zero weights); every other shape accumulates tap by tap.

#include "conv.h"
#include "gemm_core.h"
#include "parallel.h"

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

// Floats per block the phase-plane path aims at (16 KiB: an L1 share).
constexpr int64_t kDwBlockFloats = 4096;

// Floats a channel-block band aims at (128 KiB: an L2 share).
constexpr int64_t kDwBandFloats = 8 * kDwBlockFloats;

// The channel-block path's bands: the whole plane when it fits (the padded
// input whole), else as many output rows as fit kDwBandFloats.
void ChannelBands(DwPlane* p) {
  p->crows = p->oh;
  p->cin = p->hp;
  if (DepthwiseChannelFloats(*p) <= kDwBandFloats) return;
  const int64_t reach = (p->kh - 1) * p->dh + 1;  // input rows one output row reads
  const int64_t per_row = (p->sh * p->wp + p->ow) * kDwLanes;
  const int64_t fixed = ((reach - p->sh) * p->wp + p->kh * p->kw + 1) * kDwLanes;
  const int64_t fit = (kDwBandFloats - fixed) / per_row;
  p->crows = fit < 1 ? 1 : (fit > p->oh ? p->oh : fit);
  p->cin = (p->crows - 1) * p->sh + reach;
}

DwPlane PlaneGeometry(const ConvGeom& cg, const Clamp& clamp) {
  const Window2d& g = cg.win;
  DwPlane p{};
  p.h = g.h;
  p.w = g.w;
  p.oh = g.oh;
  p.ow = g.ow;
  p.kh = g.kh;
  p.kw = g.kw;
  p.sh = g.sh;
  p.sw = g.sw;
  p.dh = g.dh;
  p.dw = g.dw;
  p.pt = g.pt;
  p.pl = g.pl;
  p.wq = CeilDiv(g.w + g.pl + g.pr, g.sw);
  const int64_t extra = (g.kh - 1) * g.dh / g.sh + 1;  // rows a block reads past its own
  const int64_t phases = g.sh * g.sw;
  const int64_t fit = (kDwBlockFloats / (p.wq > 0 ? p.wq : 1) - phases * extra) / (phases + 1);
  p.rows = fit < 1 ? 1 : (fit > g.oh ? g.oh : fit);
  p.hq = p.rows + extra;
  p.hp = g.h + g.pt + g.pb;
  p.wp = g.w + g.pl + g.pr;
  ChannelBands(&p);
  p.clamp = clamp.enabled;
  p.lo = clamp.lo;
  p.hi = clamp.hi;
  return p;
}

// The channel-block path wins on every stride-2 layer and every plane up to
// 56x56 (its packing costs two 8x8 transposes per 64 floats; the phase
// planes' cost per output grows as the rows shrink and halves their useful
// work with stride); the phase planes keep unit-stride planes larger than
// kDwChannelPlane outputs (MobileNet's 112x112 stage), whose long flat rows
// they run at full vector width without a transpose. The choice depends on
// the shapes only, as the workspace the planner reserves must.
constexpr int64_t kDwChannelPlane = 56 * 56;

bool UsesChannelBlocks(const DwPlane& p) {
  return p.sh > 1 || p.sw > 1 || p.oh * p.ow <= kDwChannelPlane;
}

}  // namespace

#if BATON_DW_DIRECT_BUILT
bool DepthwiseRunsDirect(const ConvGeom& cg) {
  const Window2d& g = cg.win;
  if (g.h <= 0 || g.w <= 0 || g.oh <= 0 || g.ow <= 0) return false;
  return DepthwiseDirect(PlaneGeometry(cg, Clamp())) != nullptr;
}
#endif

size_t DepthwiseWorkspaceBytes(const ConvGeom& cg) {
  const Window2d& g = cg.win;
  if (g.oh <= 0 || g.ow <= 0 || g.h <= 0 || g.w <= 0) return 0;
  const DwPlane p = PlaneGeometry(cg, Clamp());
  const int64_t floats = UsesChannelBlocks(p) ? DepthwiseChannelFloats(p) : DepthwisePlaneFloats(p);
  return static_cast<size_t>(floats) * sizeof(float);
}

namespace {

// The fused epilogue on n finished outputs at y (offset `at` into the
// output, which the sum shares).
void Finish(const GemmEpilogue* fused, float* y, int64_t at, int64_t n) {
  if (fused != nullptr) ApplyEpilogue(*fused, y + at, fused->sum ? fused->sum + at : nullptr, n);
}

// One depthwise layer split over the calling thread's parallel runner:
// items are (batch item, channel block) or (batch item, channel) pairs,
// each computed exactly as in the serial loop, so the split changes no bit.
struct DwJob {
  const ConvGeom* cg;
  const DwPlane* plane;  // null: the row path
  const float* x;
  const float* w;
  const float* bias;
  const Clamp* clamp;
  const GemmEpilogue* fused;  // null: bias and clamp only
  float* y;
  float* ws;
  int64_t slice_floats;
#if BATON_DW_DIRECT_BUILT
  DwDirectFn direct = nullptr;  // non-null: PlaneRange runs the direct path
#endif
};

void ChannelBlockRange(void* ctx, int64_t begin, int64_t end, int slot) {
  const DwJob& j = *static_cast<const DwJob*>(ctx);
  const ConvGeom& cg = *j.cg;
  const Window2d& g = cg.win;
  const int64_t blocks = CeilDiv(cg.m, kDwLanes);
  float* ws = j.ws + slot * j.slice_floats;
  for (int64_t item = begin; item < end; ++item) {
    const int64_t n = item / blocks;
    const int64_t m0 = (item % blocks) * kDwLanes;
    const int64_t lanes = cg.m - m0 < kDwLanes ? cg.m - m0 : kDwLanes;
    DepthwiseChannels(*j.plane, j.x + n * g.c * g.h * g.w, m0, lanes, cg.m / g.c, j.w, j.bias,
                      j.y + n * cg.m * g.oh * g.ow, ws);
    Finish(j.fused, j.y, (n * cg.m + m0) * g.oh * g.ow, lanes * g.oh * g.ow);
  }
}

// One channel on the phase planes, or on the direct path when the job has it
// (which reads no workspace).
void PlaneChannel(const DwJob& j, const float* x, const float* w, float bias, float* y, float* ws) {
#if BATON_DW_DIRECT_BUILT
  if (j.direct != nullptr) {
    j.direct(*j.plane, x, w, bias, y);
    return;
  }
#endif
  DepthwisePlane(*j.plane, x, w, bias, y, ws);
}

void PlaneRange(void* ctx, int64_t begin, int64_t end, int slot) {
  const DwJob& j = *static_cast<const DwJob*>(ctx);
  const ConvGeom& cg = *j.cg;
  const Window2d& g = cg.win;
  const int64_t mult = cg.m / g.c;
  float* ws = j.ws + slot * j.slice_floats;
  for (int64_t item = begin; item < end; ++item) {
    const int64_t n = item / cg.m;
    const int64_t m = item % cg.m;
    PlaneChannel(j, j.x + (n * g.c + m / mult) * g.h * g.w, j.w + m * g.kh * g.kw,
                 j.bias ? j.bias[m] : 0.0f, j.y + (n * cg.m + m) * g.oh * g.ow, ws);
    Finish(j.fused, j.y, (n * cg.m + m) * g.oh * g.ow, g.oh * g.ow);
  }
}

void RowPathRange(void* ctx, int64_t begin, int64_t end, int slot) {
  (void)slot;
  const DwJob& j = *static_cast<const DwJob*>(ctx);
  const ConvGeom& cg = *j.cg;
  const Window2d& g = cg.win;
  const int64_t mult = cg.m / g.c;
  const int64_t hw = g.h * g.w;
  const int64_t ohw = g.oh * g.ow;
  const int64_t taps = g.kh * g.kw;
  const bool is3x3 = g.kh == 3 && g.kw == 3 && g.dh == 1 && g.dw == 1 && g.sh == g.sw && g.h > 0 &&
                     g.w > 0 && (g.sw == 1 || g.sw == 2);
  for (int64_t item = begin; item < end; ++item) {
    const int64_t n = item / cg.m;
    const int64_t m = item % cg.m;
    const float* xp = j.x + (n * g.c + m / mult) * hw;
    const float* wm = j.w + m * taps;
    const float b = j.bias ? j.bias[m] : 0.0f;
    float* yp = j.y + (n * cg.m + m) * ohw;
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      float* yr = yp + oy * g.ow;
      if (!is3x3) {
        GenericRow(g, xp, wm, b, oy, yr);
      } else if (g.sw == 1) {
        Row3x3Any<1>(g, xp, wm, b, oy, yr);
      } else {
        Row3x3Any<2>(g, xp, wm, b, oy, yr);
      }
      ApplyClamp(*j.clamp, yr, g.ow);
      Finish(j.fused, j.y, (n * cg.m + m) * ohw + oy * g.ow, g.ow);
    }
  }
}

// Items below which a layer runs on one thread (waking workers costs a few
// microseconds).
constexpr int64_t kDwParallelMinOutputs = 16 * 1024;

}  // namespace

void DepthwiseConv(const ConvGeom& cg, const float* x, const float* w, const float* bias,
                   const Clamp& clamp, float* y, float* ws, size_t ws_bytes,
                   const GemmEpilogue* fused) {
  const Window2d& g = cg.win;
  const size_t need = DepthwiseWorkspaceBytes(cg);
  const int64_t outputs = g.n * cg.m * g.oh * g.ow;
  DwJob job{
      &cg,    nullptr, x, w,  bias,
      &clamp, fused,   y, ws, static_cast<int64_t>(ParallelSliceStride(need) / sizeof(float))};
#if BATON_DW_DIRECT_BUILT
  // The direct path needs no workspace: it runs whatever the plan reserved
  // (which covers the other paths, for CPUs without it).
  if (g.h > 0 && g.w > 0 && g.oh > 0 && g.ow > 0) {
    const DwPlane plane = PlaneGeometry(cg, clamp);
    job.direct = DepthwiseDirect(plane);
    if (job.direct != nullptr) {
      job.plane = &plane;
      job.slice_floats = 0;  // no workspace (ws may be null)
      ParallelFor(g.n * cg.m, 1, outputs < kDwParallelMinOutputs ? 1 : 1 << 10, PlaneRange, &job);
      return;
    }
  }
#endif
  if (ws != nullptr && need > 0 && ws_bytes >= need) {
    const DwPlane plane = PlaneGeometry(cg, clamp);
    job.plane = &plane;
    const int parts = outputs < kDwParallelMinOutputs ? 1 : ParallelWorkspaceSlices(ws_bytes, need);
    if (UsesChannelBlocks(plane)) {
      ParallelFor(g.n * CeilDiv(cg.m, kDwLanes), 1, parts, ChannelBlockRange, &job);
    } else {
      ParallelFor(g.n * cg.m, 1, parts, PlaneRange, &job);
    }
    return;
  }
  ParallelFor(g.n * cg.m, 1, outputs < kDwParallelMinOutputs ? 1 : 1 << 10, RowPathRange, &job);
}

}  // namespace kernels
}  // namespace baton
