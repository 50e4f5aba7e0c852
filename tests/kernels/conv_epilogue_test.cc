// Conv's and Gemm's fused epilogue (issue 17): y = act(clamp(op(x) + bias +
// sum)) for every FusedActivation, on every convolution path (1x1 direct,
// im2col + GEMM with strides 1, 2 and 3, stems, grouped, Winograd, depthwise phase planes, channel
// blocks, direct and rows) and both Gemm drivers (packed, Gemv), with every instruction set this
// build and CPU have. The reference is a plain double-precision loop here (convolution by
// definition, activations from <cmath>).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "conv.h"
#include "conv_winograd.h"
#include "gemm_core.h"
#include "kernels/kernel_test_util.h"

namespace baton {
namespace {

using schema::FusedActivation;

struct Epi {
  FusedActivation act = FusedActivation::None;
  float alpha = 0.0f, beta = 0.0f;
  bool clamp = false;
  float lo = 0.0f, hi = 0.0f;
  bool sum = false;
};

double D(float f) { return static_cast<double>(f); }

double Activate(const Epi& e, double v) {
  if (e.clamp) v = std::min(std::max(v, static_cast<double>(e.lo)), static_cast<double>(e.hi));
  const double sig = 1.0 / (1.0 + std::exp(-v));
  const double hard = std::min(1.0, std::max(0.0, D(e.alpha) * v + D(e.beta)));
  switch (e.act) {
    case FusedActivation::HardSwish:
      return v * hard;
    case FusedActivation::Swish:
      return v * sig;
    case FusedActivation::HardSigmoid:
      return hard;
    case FusedActivation::Sigmoid:
      return sig;
    default:
      return v;
  }
}

// Every activation, with and without sum and clamp (Relu6 and a Relu).
std::vector<Epi> AllEpilogues() {
  std::vector<Epi> out;
  const FusedActivation acts[] = {FusedActivation::None, FusedActivation::HardSwish,
                                  FusedActivation::Swish, FusedActivation::HardSigmoid,
                                  FusedActivation::Sigmoid};
  for (FusedActivation a : acts) {
    for (int variant = 0; variant < 3; ++variant) {
      Epi e;
      e.act = a;
      if (a == FusedActivation::HardSwish) {
        e.alpha = 1.0f / 6.0f;
        e.beta = 0.5f;
      } else if (a == FusedActivation::HardSigmoid) {
        e.alpha = 0.2f;
        e.beta = 0.5f;
      }
      e.sum = variant >= 1;
      e.clamp = variant == 2;
      e.lo = a == FusedActivation::None ? 0.0f : -1.0f;
      e.hi = a == FusedActivation::None ? 6.0f : 2.0f;
      out.push_back(e);
    }
  }
  return out;
}

std::string Name(const Epi& e) {
  return std::string("act ") + schema::EnumNameFusedActivation(e.act) + (e.sum ? " +sum" : "") +
         (e.clamp ? " clamp" : "");
}

std::vector<float> Random(size_t n, std::mt19937* rng, float scale) {
  std::uniform_real_distribution<float> d(-scale, scale);
  std::vector<float> v(n);
  for (float& f : v) f = d(*rng);
  return v;
}

struct ConvCase {
  const char* name;
  int64_t n, c, h, w, m, k, stride, pad, group;
  bool bias;
  int64_t workspace;  // -1: what the kernel asks
};

void CheckClose(const std::vector<float>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::fabs(D(got[i]) - want[i]) > 1e-4 * (1.0 + std::fabs(want[i]))) {
      if (bad++ == 0) first = i;
    }
  }
  EXPECT_EQ(bad, 0u) << "first at " << first << ": got " << got[first] << " want " << want[first];
}

// The kernels' geometry of a case (square kernel, equal strides and pads,
// unit dilation).
kernels::ConvGeom GeomOf(const ConvCase& cc) {
  kernels::ConvGeom g;
  g.win.n = cc.n;
  g.win.c = cc.c;
  g.win.h = cc.h;
  g.win.w = cc.w;
  g.win.kh = g.win.kw = cc.k;
  g.win.sh = g.win.sw = cc.stride;
  g.win.pt = g.win.pl = g.win.pb = g.win.pr = cc.pad;
  g.win.oh = (cc.h + 2 * cc.pad - cc.k) / cc.stride + 1;
  g.win.ow = (cc.w + 2 * cc.pad - cc.k) / cc.stride + 1;
  g.m = cc.m;
  g.group = cc.group;
  return g;
}

// U[f][m][c] = (G g G^T)[f / 4][f % 4] of 3x3 weights w (m x c x 3 x 3), in
// double precision: Winograd F(2x2, 3x3)'s G = [[1, 0, 0], [1/2, 1/2, 1/2],
// [1/2, -1/2, 1/2], [0, 0, 1]] written out here, not the kernels' transform.
std::vector<float> WinogradU(const std::vector<float>& w, int64_t m, int64_t c) {
  const double G[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  std::vector<float> u(static_cast<size_t>(16 * m * c));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t ch = 0; ch < c; ++ch) {
      const float* g = &w[static_cast<size_t>((i * c + ch) * 9)];
      for (int r = 0; r < 4; ++r) {
        for (int q = 0; q < 4; ++q) {
          double acc = 0;
          for (int a = 0; a < 3; ++a) {
            for (int b = 0; b < 3; ++b) acc += G[r][a] * D(g[a * 3 + b]) * G[q][b];
          }
          u[static_cast<size_t>(((r * 4 + q) * m + i) * c + ch)] = static_cast<float>(acc);
        }
      }
    }
  }
  return u;
}

// `workspace`, when given, gets the workspace the kernel ran with. `give_u`:
// the node also gets U (input 4, WinogradU) and its weights input holds
// zeros, so that only a kernel reading U gets the reference.
void RunConv(const ConvCase& cc, const Epi& e, bool expect_winograd, size_t* workspace = nullptr,
             bool give_u = false) {
  std::mt19937 rng(7);
  const kernels::ConvGeom geom = GeomOf(cc);
  const int64_t oh = geom.win.oh, ow = geom.win.ow;
  const int64_t cg = cc.c / cc.group, mg = cc.m / cc.group;
  const std::vector<float> x = Random(static_cast<size_t>(cc.n * cc.c * cc.h * cc.w), &rng, 1.0f);
  const float wscale = 1.5f / std::sqrt(static_cast<float>(cg * cc.k * cc.k));
  const std::vector<float> w = Random(static_cast<size_t>(cc.m * cg * cc.k * cc.k), &rng, wscale);
  const std::vector<float> b = Random(static_cast<size_t>(cc.m), &rng, 0.5f);
  const size_t out_n = static_cast<size_t>(cc.n * cc.m * oh * ow);
  const std::vector<float> s = Random(out_n, &rng, 1.0f);

  std::vector<double> want(out_n);
  for (int64_t n = 0; n < cc.n; ++n) {
    for (int64_t m = 0; m < cc.m; ++m) {
      const int64_t g = m / mg;
      for (int64_t oy = 0; oy < oh; ++oy) {
        for (int64_t ox = 0; ox < ow; ++ox) {
          double acc = cc.bias ? D(b[m]) : 0.0;
          for (int64_t ci = 0; ci < cg; ++ci) {
            for (int64_t ky = 0; ky < cc.k; ++ky) {
              for (int64_t kx = 0; kx < cc.k; ++kx) {
                const int64_t iy = oy * cc.stride - cc.pad + ky;
                const int64_t ix = ox * cc.stride - cc.pad + kx;
                if (iy < 0 || iy >= cc.h || ix < 0 || ix >= cc.w) continue;
                acc += D(x[((n * cc.c + g * cg + ci) * cc.h + iy) * cc.w + ix]) *
                       D(w[((m * cg + ci) * cc.k + ky) * cc.k + kx]);
              }
            }
          }
          const size_t at = static_cast<size_t>(((n * cc.m + m) * oh + oy) * ow + ox);
          if (e.sum) acc += D(s[at]);
          want[at] = Activate(e, acc);
        }
      }
    }
  }

  testing::KernelHarness h;
  const int xi = h.AddTensor(schema::DType::Float32, {cc.n, cc.c, cc.h, cc.w});
  const int wi = h.AddTensor(schema::DType::Float32, {cc.m, cg, cc.k, cc.k});
  const int bi = cc.bias ? h.AddTensor(schema::DType::Float32, {cc.m}) : -1;
  const int si = e.sum ? h.AddTensor(schema::DType::Float32, {cc.n, cc.m, oh, ow}) : -1;
  const int yi = h.AddTensor(schema::DType::Float32, {cc.n, cc.m, oh, ow});
  h.SetF32(xi, x);
  h.SetF32(wi, give_u ? std::vector<float>(w.size(), 0.0f) : w);
  if (bi >= 0) h.SetF32(bi, b);
  if (si >= 0) h.SetF32(si, s);
  std::vector<int> inputs = {xi, wi, bi};
  if (si >= 0 || give_u) inputs.push_back(si);
  if (give_u) {
    const int ui = h.AddTensor(schema::DType::Float32, {16, cc.m, cc.c});
    h.SetF32(ui, WinogradU(w, cc.m, cc.c));
    inputs.push_back(ui);
  }
  const int32_t k = static_cast<int32_t>(cc.k), st = static_cast<int32_t>(cc.stride);
  const int32_t p = static_cast<int32_t>(cc.pad), group = static_cast<int32_t>(cc.group);
  h.SetNode(schema::Op::Conv, inputs, {yi}, schema::Params::ConvParams,
            [=](flatbuffers::FlatBufferBuilder& fbb) {
              const std::vector<int32_t> kernel{k, k}, strides{st, st}, pads{p, p, p, p}, dil{1, 1};
              const schema::Clamp clamp(e.lo, e.hi);
              return schema::CreateConvParamsDirect(fbb, &kernel, &strides, &pads, &dil, group,
                                                    e.clamp ? &clamp : nullptr, e.act, e.alpha,
                                                    e.beta)
                  .Union();
            });
  if (cc.workspace >= 0) h.OverrideWorkspace(cc.workspace);
  ASSERT_TRUE(h.Prepare().ok());
  if (workspace != nullptr) *workspace = h.workspace_bytes();
  ASSERT_TRUE(h.Eval().ok());
  if (expect_winograd) {
    EXPECT_TRUE(kernels::UseWinograd(geom, give_u));
  }
  CheckClose(h.GetF32(yi), want);
}

// Every path of conv.cc and depthwise_conv.cc (see their comments).
const ConvCase kConvCases[] = {
    {"pointwise", 1, 20, 7, 9, 30, 1, 1, 0, 1, true, -1},
    {"pointwise_1x1_image", 2, 41, 1, 1, 30, 1, 1, 0, 1, true, -1},
    {"im2col_s2", 2, 5, 9, 11, 13, 3, 2, 1, 1, true, -1},
    {"im2col_nobias", 1, 3, 8, 8, 17, 3, 1, 1, 1, false, -1},
    // Stems (few input channels, stride 2): padding cut off both ends of a
    // packed segment, segments that span output rows, no padding, and the
    // run-time stride of the packer.
    {"stem_7x7_s2", 1, 3, 29, 31, 16, 7, 2, 3, 1, true, -1},
    {"stem_3x3_s2_nopad", 2, 3, 23, 35, 32, 3, 2, 0, 1, true, -1},
    // The same through ConvDirect (AVX2 and AVX-512: phase rows read in
    // place): a tall image whose 102 output rows take several bands of the
    // GEMM path's workspace, 13 output channels (a 12- or 4-row block and a
    // shifted one); 4 channels at stride 1 with a 5x5 kernel and no bias.
    {"direct_stem_bands", 1, 3, 203, 21, 13, 3, 2, 1, 1, true, -1},
    {"direct_s1_4ch_5x5", 2, 4, 30, 19, 24, 5, 1, 2, 1, false, -1},
    // Channels a multiple of 8, rows of 48 outputs or more: AVX-512's 8-row
    // blocks of 48-column panels, then the last columns on one whole vector
    // (112 = 2 * 48 + 16), through the tile buffer (111), or on two vectors
    // and then the tile buffer (82 = 48 + 32 + 2); stride 1 (50 = 48 + 2).
    {"direct_panels48_112", 1, 3, 7, 225, 16, 3, 2, 0, 1, true, -1},
    {"direct_panels48_111", 1, 3, 9, 223, 24, 3, 2, 0, 1, false, -1},
    {"direct_panels48_82", 2, 3, 8, 165, 16, 3, 2, 0, 1, true, -1},
    {"direct_panels48_s1", 1, 4, 6, 50, 32, 5, 1, 2, 1, true, -1},
    {"im2col_s3", 1, 2, 14, 17, 5, 3, 3, 1, 1, true, -1},
    {"grouped", 1, 8, 6, 7, 12, 3, 1, 1, 2, true, -1},
    // k = 9 * 31 = 279 packs in k blocks of 140 and 139 rows, so the second
    // starts mid-channel (tap 5 of 9), and 25 * 13 = 325 in blocks of 163
    // (tap 13 of 25): the packer's per-tap runs over part of a channel.
    // 14x14 and 7x8 outputs: narrow last column panels.
    {"im2col_k_split", 1, 31, 14, 14, 20, 3, 1, 1, 1, true, -1},
    {"im2col_5x5_s2_k_split", 1, 13, 14, 16, 14, 5, 2, 2, 1, true, -1},
    {"winograd", 1, 64, 15, 15, 64, 3, 1, 1, 1, true, -1},
    // Winograd tile blocks of 96, 64 and 50 tiles (segments that start and
    // end inside a tile row), odd output sizes (the last tile row and column
    // cut), m not a multiple of any tile's rows.
    {"winograd_blocks", 1, 64, 29, 27, 70, 3, 1, 1, 1, false, -1},
    // 96 + 96 channels: blocks of 64 tiles (64, 32 and 48).
    {"winograd_narrow", 1, 96, 23, 23, 96, 3, 1, 1, 1, true, -1},
    // U in blocks of output channels (60, 60 and 12 rows), one tile block.
    {"winograd_mblocks", 1, 128, 13, 13, 132, 3, 1, 1, 1, true, -1},
    // No padding, an even output width: segments inside the plane read their
    // rows in place (the last tile row's fourth input row lies below it).
    {"winograd_nopad", 1, 66, 21, 22, 64, 3, 1, 0, 1, true, -1},
    // 16 input channels, the floor since the transforms went per ISA
    // (squeezenet's expand layers); 15 stay on im2col + GEMM.
    {"winograd_16ch", 2, 16, 17, 19, 24, 3, 1, 1, 1, true, -1},
    {"im2col_15ch", 1, 15, 17, 19, 24, 3, 1, 1, 1, true, -1},
    // 49 tiles (13x13), U transformed whole: Winograd on every instruction
    // set but AVX-512, which runs im2col + GEMM in the same workspace
    // (WinogradFloorPerIsa below).
    {"thin_13x13", 1, 48, 13, 13, 40, 3, 1, 1, 1, true, -1},
    // Phase planes: the 3x3 case runs the direct path on AVX2 and AVX-512
    // (the portable copy keeps the planes), the 7x7 one the planes on all.
    {"dw_planes", 1, 3, 60, 58, 3, 3, 1, 1, 3, true, -1},
    {"dw_planes_7x7", 1, 2, 62, 60, 2, 7, 1, 3, 2, false, -1},
    {"dw_channels_s2", 1, 4, 21, 20, 4, 3, 2, 1, 4, true, -1},
    {"dw_channels", 2, 18, 7, 7, 18, 3, 1, 1, 18, true, -1},
    // Channel blocks in several bands of rows, a partial last block; rows of
    // 38 at stride 1 (the direct path's on AVX-512) and 13 at stride 2, and
    // rows of 13 at stride 1, which the direct path leaves alone.
    {"dw_bands", 1, 20, 40, 38, 20, 3, 1, 1, 20, true, -1},
    {"dw_bands_w13", 1, 20, 160, 13, 20, 3, 1, 1, 20, true, -1},
    {"dw_bands_s2", 2, 17, 70, 25, 17, 3, 2, 1, 17, false, -1},
    {"dw_bands_5x5_s2", 1, 18, 70, 26, 18, 5, 2, 2, 18, true, -1},
    // Channel blocks whose packing runs 8 x 8 blocks across row ends: rows of
    // 13 and of 3 floats (a block spans up to three rows, the tail two).
    {"dw_bands_w13_5x5", 1, 17, 11, 13, 17, 5, 1, 2, 17, true, -1},
    {"dw_bands_w3", 1, 16, 9, 3, 16, 3, 1, 1, 16, false, -1},
    {"dw_rows", 1, 5, 9, 10, 5, 3, 2, 1, 5, false, 0},
    // The direct path (x86-64 AVX2 and AVX-512 where wide enough; elsewhere
    // these take the other paths): rows of 63 and 125 (edge, inner and
    // masked last vectors), 10 and 13 output rows (blocks of four, then
    // single rows); 5x5 with the left padding 2 and 1; 3x3 with padding 2
    // and none; a multiplier of 2; no workspace (an older plan). The 5x5
    // channel blocks at stride 2 keep a case of their own (rows of 10).
    {"dw_direct_s2_wide", 1, 5, 19, 125, 5, 3, 2, 1, 5, true, -1},
    {"dw_direct_s2_5x5", 2, 3, 22, 61, 3, 5, 2, 2, 3, true, -1},
    // 5x5 rows of 63 outputs: inner vectors, whose third load reads three
    // columns (AVX-512's permuted taps).
    {"dw_direct_s2_5x5_wide", 1, 3, 13, 125, 3, 5, 2, 2, 3, false, -1},
    {"dw_direct_s2_5x5_pad1", 1, 2, 15, 60, 2, 5, 2, 1, 2, false, -1},
    {"dw_direct_s2_pad2", 1, 2, 11, 61, 2, 3, 2, 2, 2, true, -1},
    {"dw_direct_s2_nopad", 1, 4, 13, 60, 4, 3, 2, 0, 4, false, -1},
    {"dw_direct_s2_mult2", 1, 2, 9, 58, 4, 3, 2, 1, 2, true, -1},
    {"dw_direct_s2_no_workspace", 1, 3, 9, 64, 3, 3, 2, 1, 3, true, 0},
    {"dw_direct_s1_wide", 1, 5, 13, 125, 5, 3, 1, 1, 5, true, -1},
    {"dw_direct_s1_56", 1, 4, 9, 56, 4, 3, 1, 1, 4, true, -1},
    // Rows of 28 (AVX-512): two vectors, both in the padding.
    {"dw_direct_s1_28", 1, 3, 10, 28, 3, 3, 1, 1, 3, false, -1},
    {"dw_direct_s1_28_5x5", 1, 4, 9, 28, 4, 5, 1, 2, 4, true, -1},
    {"dw_direct_s1_5x5", 1, 3, 11, 61, 3, 5, 1, 2, 3, false, -1},
    {"dw_direct_s1_nopad_mult2", 1, 2, 9, 70, 4, 3, 1, 0, 2, true, -1},
    {"dw_channels_5x5_s2", 1, 17, 12, 20, 17, 5, 2, 2, 17, true, -1},
    {"dw_mult2_5x5", 1, 3, 12, 12, 6, 5, 1, 2, 3, true, -1},
};

TEST(ConvEpilogueTest, EveryActivationPathAndIsa) {
  const testing::IsaGuard restore;
  int ran = 0;
  for (KernelIsa isa : kAllKernelIsas) {
    if (!KernelIsaAvailable(isa)) continue;
    ASSERT_TRUE(SelectKernelIsa(isa));
    for (const ConvCase& cc : kConvCases) {
      for (const Epi& e : AllEpilogues()) {
        SCOPED_TRACE(std::string(cc.name) + " " + Name(e) + " " + KernelIsaName(isa));
        RunConv(cc, e, std::string(cc.name).rfind("winograd", 0) == 0);
        ++ran;
      }
    }
  }
  EXPECT_GE(ran, 225);
}

// The direct path takes the depthwise shapes depthwise_isa.inc names, per
// instruction set (AVX-512: 3x3 and 5x5, rows of at least 28 outputs at
// stride 1 and 14 at stride 2; AVX2: 3x3 only, rows of at least 56 at
// stride 1 and 28 at stride 2; portable: none), and every dw_direct case
// above runs it on AVX-512.
TEST(ConvEpilogueTest, DirectPathShapes) {
  const testing::IsaGuard restore;
  int checked = 0;
  for (KernelIsa isa : kAllKernelIsas) {
    if (!KernelIsaAvailable(isa)) continue;
    ASSERT_TRUE(SelectKernelIsa(isa));
    const std::string name = KernelIsaName(isa);
    const bool avx512 = name.rfind("avx512", 0) == 0;
    const bool avx2 = name == "avx2";
    for (const ConvCase& cc : kConvCases) {
      if (cc.group != cc.c || cc.group == 1) continue;
      const kernels::ConvGeom g = GeomOf(cc);
      const int64_t ow = g.win.ow;
      const bool k35 = cc.k == 3 || cc.k == 5;
      bool want = false;
      if (avx512) want = k35 && ow >= (cc.stride == 1 ? 28 : cc.stride == 2 ? 14 : 1 << 30);
      if (avx2) want = cc.k == 3 && (cc.stride == 2 ? ow >= 28 : ow >= 56);
      if (avx512 && std::string(cc.name).rfind("dw_direct", 0) == 0) {
        EXPECT_TRUE(want) << cc.name;
      }
      EXPECT_EQ(kernels::DepthwiseRunsDirect(g), want) << cc.name << " " << name;
      ++checked;
    }
  }
  EXPECT_GE(checked, 20);
}

// The floor of 2x2 tiles for Winograd with U transformed whole is the
// active copy's (gemm_isa.inc: 64 on AVX-512, 49 elsewhere): 13x13 layers
// take Winograd on SSE2, AVX2 and NEON, im2col + GEMM on AVX-512; 12x12
// (36 tiles) none, 15x15 (64) all. The workspace the kernel asks for is the
// same under every instruction set and holds either path's; a layer every
// instruction set runs on Winograd reserves Winograd's alone, as before.
TEST(ConvEpilogueTest, WinogradFloorPerIsa) {
  const testing::IsaGuard restore;
  // 16 channels: the GEMM path's packing buffers are larger than
  // Winograd's workspace here, so the reservation is theirs.
  const ConvCase thin = {"thin_13x13", 1, 16, 13, 13, 16, 3, 1, 1, 1, true, -1};
  const ConvCase small = {"small_12x12", 1, 16, 12, 12, 16, 3, 1, 1, 1, true, -1};
  const ConvCase wide = {"wide_15x15", 1, 16, 15, 15, 16, 3, 1, 1, 1, true, -1};
  const kernels::ConvGeom g = GeomOf(thin);
  const size_t winograd = kernels::WinogradWorkspaceBytes(g);
  const size_t gemm = kernels::GemmWorkspaceBytes(16, 13 * 13, 16 * 9);
  ASSERT_GT(winograd, 0u);
  ASSERT_GT(gemm, winograd);
  EXPECT_FALSE(kernels::WinogradOnEveryIsa(g));
  EXPECT_EQ(kernels::WinogradWorkspaceBytes(GeomOf(small)), 0u);
  EXPECT_TRUE(kernels::WinogradOnEveryIsa(GeomOf(wide)));
  Epi relu;
  relu.clamp = true;
  relu.hi = 1e30f;
  int ran = 0;
  for (KernelIsa isa : kAllKernelIsas) {
    if (!KernelIsaAvailable(isa)) continue;
    ASSERT_TRUE(SelectKernelIsa(isa));
    const std::string name = KernelIsaName(isa);
    SCOPED_TRACE(name);
    const bool avx512 = name.rfind("avx512", 0) == 0;
    EXPECT_GE(kernels::WinogradMinTiles(), kernels::kWinogradMinTilesAnyIsa);
    EXPECT_LE(kernels::WinogradMinTiles(), kernels::kWinogradMinTilesEveryIsa);
    EXPECT_EQ(kernels::UseWinograd(g), !avx512);
    EXPECT_FALSE(kernels::UseWinograd(GeomOf(small)));
    EXPECT_TRUE(kernels::UseWinograd(GeomOf(wide)));
    size_t planned = 0;
    RunConv(thin, relu, !avx512, &planned);
    EXPECT_EQ(planned, std::max(winograd, gemm));
    RunConv(wide, relu, true, &planned);
    EXPECT_EQ(planned, kernels::WinogradWorkspaceBytes(GeomOf(wide)));
    ++ran;
  }
  EXPECT_GE(ran, 1);
}

// Winograd weights given (input 4, `baton plan --winograd-weights`): every
// instruction set takes Winograd from 49 tiles on (AVX-512 too, at 13x13),
// reads U instead of transforming the weights (the weights input holds
// zeros here), and reserves Winograd's workspace without U. Cases: U whole
// (13x13 and 28x28), U in blocks of output channels (160 -> 128 at 14x14:
// 16 x 160 x 128 floats), with and without the whole epilogue. A layer
// under the floor (12x12) or not 3x3 stride 1 keeps its path and size.
TEST(ConvEpilogueTest, WinogradWeightsGiven) {
  const testing::IsaGuard restore;
  const ConvCase cases[] = {
      {"thin_13x13", 1, 16, 13, 13, 16, 3, 1, 1, 1, true, -1},
      {"u_whole_28x28", 1, 32, 28, 28, 24, 3, 1, 1, 1, false, -1},
      {"u_blocked_14x14", 1, 160, 14, 14, 128, 3, 1, 1, 1, true, -1},
  };
  const ConvCase small = {"small_12x12", 1, 16, 12, 12, 16, 3, 1, 1, 1, true, -1};
  EXPECT_EQ(kernels::WinogradWorkspaceBytes(GeomOf(small), true), 0u);
  EXPECT_FALSE(ConvTakesWinogradWeights(16, 16, 12, 12));
  Epi relu;
  relu.clamp = true;
  relu.hi = 1e30f;
  Epi all;
  all.act = FusedActivation::HardSwish;
  all.alpha = 1.0f / 6.0f;
  all.beta = 0.5f;
  all.sum = true;
  all.clamp = true;
  all.lo = -1.0f;
  all.hi = 2.0f;
  int ran = 0;
  for (KernelIsa isa : kAllKernelIsas) {
    if (!KernelIsaAvailable(isa)) continue;
    ASSERT_TRUE(SelectKernelIsa(isa));
    SCOPED_TRACE(KernelIsaName(isa));
    for (const ConvCase& cc : cases) {
      SCOPED_TRACE(cc.name);
      const kernels::ConvGeom g = GeomOf(cc);
      EXPECT_TRUE(kernels::UseWinograd(g, true));
      EXPECT_TRUE(ConvTakesWinogradWeights(cc.c, cc.m, g.win.oh, g.win.ow));
      const size_t without_u = kernels::WinogradWorkspaceBytes(g, true);
      ASSERT_GT(without_u, 0u);
      EXPECT_LT(without_u, kernels::WinogradWorkspaceBytes(g));
      size_t planned = 0;
      RunConv(cc, relu, true, &planned, true);
      EXPECT_EQ(planned, without_u);
      RunConv(cc, all, true, nullptr, true);
    }
    ++ran;
  }
  EXPECT_GE(ran, 1);
}

// Prepare rejects Winograd weights of another shape or dtype, or on a
// layer that is not 3x3 stride 1.
TEST(ConvEpilogueTest, RejectsBadWinogradWeights) {
  struct Bad {
    int64_t k, stride;
    std::vector<int64_t> u_shape;
    schema::DType dtype;
  };
  const Bad bad[] = {
      {3, 1, {16, 4, 3}, schema::DType::Float32},  // C wrong
      {3, 1, {16, 3, 4}, schema::DType::Float32},  // M and C swapped
      {3, 1, {9, 4, 2}, schema::DType::Float32},   // 9 frequencies
      {3, 1, {16, 4, 2}, schema::DType::Int32},    // dtype
      {1, 1, {16, 4, 2}, schema::DType::Float32},  // 1x1
      {3, 2, {16, 4, 2}, schema::DType::Float32},  // stride 2
  };
  for (const Bad& b : bad) {
    testing::KernelHarness h;
    const int32_t k = static_cast<int32_t>(b.k), st = static_cast<int32_t>(b.stride);
    const int64_t o = (8 - b.k) / b.stride + 1;
    const int xi = h.AddTensor(schema::DType::Float32, {1, 2, 8, 8});
    const int wi = h.AddTensor(schema::DType::Float32, {4, 2, b.k, b.k});
    const int ui = h.AddTensor(b.dtype, b.u_shape);
    const int yi = h.AddTensor(schema::DType::Float32, {1, 4, o, o});
    h.SetNode(schema::Op::Conv, {xi, wi, -1, -1, ui}, {yi}, schema::Params::ConvParams,
              [=](flatbuffers::FlatBufferBuilder& fbb) {
                const std::vector<int32_t> kernel{k, k}, strides{st, st}, ones{1, 1},
                    pads{0, 0, 0, 0};
                return schema::CreateConvParamsDirect(fbb, &kernel, &strides, &pads, &ones, 1)
                    .Union();
              });
    EXPECT_FALSE(h.Prepare().ok()) << b.k << " " << b.stride << " " << b.u_shape[0];
  }
}

// Prepare rejects a sum of another shape or dtype.
TEST(ConvEpilogueTest, RejectsBadSum) {
  for (int bad = 0; bad < 2; ++bad) {
    testing::KernelHarness h;
    const int xi = h.AddTensor(schema::DType::Float32, {1, 2, 4, 4});
    const int wi = h.AddTensor(schema::DType::Float32, {3, 2, 1, 1});
    const int si = bad == 0 ? h.AddTensor(schema::DType::Float32, {1, 3, 4, 1})
                            : h.AddTensor(schema::DType::Int32, {1, 3, 4, 4});
    const int yi = h.AddTensor(schema::DType::Float32, {1, 3, 4, 4});
    h.SetNode(schema::Op::Conv, {xi, wi, -1, si}, {yi}, schema::Params::ConvParams,
              [](flatbuffers::FlatBufferBuilder& fbb) {
                const std::vector<int32_t> kernel{1, 1}, ones{1, 1}, pads{0, 0, 0, 0};
                return schema::CreateConvParamsDirect(fbb, &kernel, &ones, &pads, &ones, 1).Union();
              });
    EXPECT_FALSE(h.Prepare().ok()) << bad;
  }
}

void RunGemm(int64_t m, int64_t n, int64_t k, const Epi& e) {
  std::mt19937 rng(11);
  const std::vector<float> a = Random(static_cast<size_t>(m * k), &rng, 1.0f);
  const std::vector<float> b =
      Random(static_cast<size_t>(k * n), &rng, 1.5f / std::sqrt(static_cast<float>(k)));
  const std::vector<float> c = Random(static_cast<size_t>(n), &rng, 0.5f);
  std::vector<double> want(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = D(c[j]);
      for (int64_t p = 0; p < k; ++p) acc += D(a[i * k + p]) * D(b[p * n + j]);
      want[static_cast<size_t>(i * n + j)] = Activate(e, acc);
    }
  }
  testing::KernelHarness h;
  const int ai = h.AddTensor(schema::DType::Float32, {m, k});
  const int bi = h.AddTensor(schema::DType::Float32, {k, n});
  const int ci = h.AddTensor(schema::DType::Float32, {n});
  const int yi = h.AddTensor(schema::DType::Float32, {m, n});
  h.SetF32(ai, a);
  h.SetF32(bi, b);
  h.SetF32(ci, c);
  h.SetNode(schema::Op::Gemm, {ai, bi, ci}, {yi}, schema::Params::GemmParams,
            [=](flatbuffers::FlatBufferBuilder& fbb) {
              const schema::Clamp clamp(e.lo, e.hi);
              return schema::CreateGemmParams(fbb, 1.0f, 1.0f, false, false,
                                              e.clamp ? &clamp : nullptr, e.act, e.alpha, e.beta)
                  .Union();
            });
  ASSERT_TRUE(h.Prepare().ok());
  ASSERT_TRUE(h.Eval().ok());
  CheckClose(h.GetF32(yi), want);
}

TEST(GemmEpilogueTest, EveryActivationDriverAndIsa) {
  const testing::IsaGuard restore;
  for (KernelIsa isa : kAllKernelIsas) {
    if (!KernelIsaAvailable(isa)) continue;
    ASSERT_TRUE(SelectKernelIsa(isa));
    for (const Epi& e : AllEpilogues()) {
      if (e.sum) continue;  // Gemm has no sum input
      SCOPED_TRACE(Name(e) + " " + KernelIsaName(isa));
      RunGemm(13, 37, 29, e);  // packed, partial tiles
      RunGemm(1, 50, 40, e);   // Gemv
    }
  }
}

// Both GEMM drivers on every ISA against a double loop, at every tile
// remainder: m leaves every remainder of the 12-row tile (AVX-512: the
// 4- and 8-row kernels, exact or shifted, and the shifted 12-row window)
// and of the 4- and 6-row tiles; m = 3 the edge kernel, m = 4..11 below
// the 12-row tile (AVX-512: the 8-row block, then 4-row blocks, the last
// one shifted back; AVX2 m = 4..7: the 4-row tile); n = 1..70 (full,
// shifted and edge column tiles; n = 1 the dot products; AVX-512 with
// m = 16 or 24: the direct driver's 48-column panels, n = 48 to 50 with
// their dot tail, 144, and 169 with two vectors shifted back, and with
// k = 16, short enough for any last panels, n = 48 to 70 and over B wider
// than a column block, n = 531 to 3136); k = 16 (one k block: full tiles
// write C with the whole epilogue), k = 300 (two of
// GemmPacked's: the second adds into C) and k = 1100 (two of GemmDirect's),
// with bias, sum, clamp and HardSwish, and with accumulate (c += A*B).
TEST(GemmEpilogueTest, DriversEveryTileRemainderAndIsa) {
  const testing::IsaGuard restore;
  std::mt19937 rng(5);
  const int64_t ms[] = {3, 4, 5, 7, 8, 11, 12, 13, 16, 19, 20, 23, 24, 29};
  for (const int64_t k : {16, 300, 1100}) {
    for (const int64_t m : ms) {
      if (k > 300 && m != 13 && m != 16 && m != 24) continue;
      std::vector<int64_t> ns;
      for (int64_t n = 1; n <= 70; ++n) ns.push_back(n);
      if (m == 16 || m == 24) ns.insert(ns.end(), {144, 169});
      // B wider than a column block but of few rows (k = 16): the 48-column
      // panels over all of it, then a dot tail (3025), one vector shifted
      // back (3136 and 531) or two (600).
      if ((m == 16 || m == 24) && k == 16) ns.insert(ns.end(), {531, 600, 3025, 3136});
      // Several full tiles after a row block's first at k = 16 through the
      // 12-, 8- and 4-row kernels (AVX-512: m = 16 and 24 take the 48-column
      // panels instead) and AVX2's shifted 4-row window.
      if (k == 16 && (m == 5 || m == 11 || m == 13 || m == 29)) ns.push_back(144);
      for (const int64_t n : ns) {
        if (k > 16 && n % 16 != 0 && n % 16 != 1 && n % 16 != 15 && n != 49 && n != 50 &&
            n != 169) {
          continue;
        }
        const bool accumulate = k > 16 && n % 2 == 1;
        const std::vector<float> a = Random(static_cast<size_t>(m * k), &rng, 1.0f);
        const std::vector<float> b =
            Random(static_cast<size_t>(k * n), &rng, 1.5f / std::sqrt(static_cast<float>(k)));
        const std::vector<float> bias = Random(static_cast<size_t>(m), &rng, 0.5f);
        const std::vector<float> sum = Random(static_cast<size_t>(m * n), &rng, 1.0f);
        const std::vector<float> c0 = Random(static_cast<size_t>(m * n), &rng, 1.0f);
        // HardSwish, which FinishTile applies after the micro-kernel; on the
        // wide short-k cases also the epilogues the micro-kernels apply
        // themselves (clamp and sum; Swish), where runs of full tiles share
        // one call (MicroKernelVRun).
        const int acts = k == 16 && n >= 144 ? 3 : 1;
        for (int act = 0; act < acts; ++act) {
          Epi e;
          e.act = act == 0   ? FusedActivation::HardSwish
                  : act == 1 ? FusedActivation::None
                             : FusedActivation::Swish;
          e.alpha = 1.0f / 6.0f;
          e.beta = 0.5f;
          e.clamp = true;
          e.lo = -2.5f;
          e.hi = 2.0f;
          std::vector<double> want(static_cast<size_t>(m * n));
          for (int64_t i = 0; i < m; ++i) {
            for (int64_t j = 0; j < n; ++j) {
              const size_t at = static_cast<size_t>(i * n + j);
              double acc =
                  D(bias[static_cast<size_t>(i)]) + D(sum[at]) + (accumulate ? D(c0[at]) : 0);
              for (int64_t p = 0; p < k; ++p) acc += D(a[i * k + p]) * D(b[p * n + j]);
              want[at] = Activate(e, acc);
            }
          }
          kernels::GemmEpilogue epi;
          epi.row_bias = bias.data();
          epi.accumulate = accumulate;
          epi.sum = sum.data();
          epi.ldsum = n;
          epi.clamp = true;
          epi.lo = e.lo;
          epi.hi = e.hi;
          epi.act = act == 0   ? kernels::kActHardSwish
                    : act == 1 ? kernels::kActNone
                               : kernels::kActSwish;
          epi.act_alpha = e.alpha;
          epi.act_beta = e.beta;
          const kernels::StridedMatrix am{a.data(), k, 1};
          const kernels::StridedMatrix bm{b.data(), n, 1};
          std::vector<float> ws(kernels::GemmWorkspaceBytes(m, n, k) / sizeof(float) + 16);
          for (KernelIsa isa : kAllKernelIsas) {
            if (!KernelIsaAvailable(isa)) continue;
            ASSERT_TRUE(SelectKernelIsa(isa));
            SCOPED_TRACE(std::string(KernelIsaName(isa)) + " m " + std::to_string(m) + " n " +
                         std::to_string(n) + " k " + std::to_string(k) + " act " +
                         std::to_string(act));
            std::vector<float> direct = c0, packed = c0;
            kernels::GemmDirect(m, n, k, a.data(), k, b.data(), n, direct.data(), n, epi);
            kernels::GemmPacked(m, n, k, 1.0f, am, kernels::PackBStrided, &bm, packed.data(), n,
                                epi, ws.data());
            {
              SCOPED_TRACE("direct");
              CheckClose(direct, want);
            }
            {
              SCOPED_TRACE("packed");
              CheckClose(packed, want);
            }
            if (HasFailure()) return;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace baton
