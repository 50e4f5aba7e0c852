// Float MaxPool (pool.cc; the separable plane filter of gemm/window_isa.inc
// and the per-tap path it leaves dilated-x and very wide windows to) on
// every instruction set this build and CPU have, against the definition
// written out here: the maximum of each window's taps inside the input
// (NaNs never win), -inf for a window with none.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernel_test_util.h"

namespace baton {
namespace {

struct PoolCase {
  const char* name;
  int64_t c, h, w, kh, kw, sh, sw, dh, dw;
  int64_t pt, pl, pb, pr;
  bool ceil;
  int64_t oh, ow;  // output size (with ceil_mode, possibly a window in the end padding)
};

const PoolCase kCases[] = {
    {"resnet_3x3_s2_p1", 3, 20, 22, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, false, 10, 11},
    {"squeezenet_3x3_s2_ceil", 2, 15, 16, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, true, 7, 8},
    {"k2_s2", 2, 12, 13, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, false, 6, 6},
    {"3x3_s1_p1", 2, 9, 10, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false, 9, 10},
    {"3x5_s1x2_pads", 1, 11, 19, 3, 5, 1, 2, 1, 1, 0, 2, 1, 2, false, 10, 10},
    {"s3_dh2", 2, 17, 16, 3, 3, 3, 3, 2, 1, 1, 1, 1, 1, false, 5, 6},
    {"dw2_per_tap", 1, 12, 14, 3, 3, 1, 1, 1, 2, 0, 0, 0, 0, false, 10, 10},
    // Same-size stride-1 windows on small planes: the flat-plane filter.
    {"inception_3x3_s1_p1_ceil", 3, 14, 14, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, 14, 14},
    {"small_5x5_s1_p2", 2, 7, 9, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, false, 7, 9},
    {"small_3x2_s1_pads_end", 2, 6, 5, 3, 2, 1, 1, 1, 1, 0, 0, 2, 1, false, 6, 5},
    {"small_one_column", 1, 5, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false, 5, 1},
    {"wide_rows_chunks", 1, 5, 300, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, false, 3, 150},
    {"wide_window", 1, 4, 90, 1, 40, 1, 1, 1, 1, 0, 0, 0, 0, false, 4, 51},
    {"wider_than_row", 1, 4, 90, 1, 70, 1, 3, 1, 1, 0, 0, 0, 0, false, 4, 7},
    // Rows of at most 32 floats: the band filter (interior rows and columns
    // flat, the rest through the row filter). googlenet's ceil-mode pools,
    // tall planes that take several bands, stride 1 with a smaller output,
    // stride 3 with pads on every side, a 2-row window.
    {"bands_googlenet_14_s2_ceil", 3, 14, 14, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, true, 7, 7},
    {"bands_28_s2_ceil", 2, 28, 28, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, true, 14, 14},
    {"bands_tall_several", 2, 121, 20, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, true, 60, 10},
    {"bands_tall_s1_p0", 1, 70, 31, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, false, 68, 29},
    {"bands_5x5_s3_pads", 2, 40, 32, 5, 5, 3, 3, 1, 1, 2, 1, 2, 2, false, 14, 11},
    {"bands_2x3_s2x1_pads", 1, 33, 17, 2, 3, 2, 1, 1, 1, 1, 0, 0, 2, false, 17, 17},
    // Stride 2 with 2 or 3 columns (AVX2 and up: vector column maxima and
    // stride-2 picks with masked tails): squeezenet's odd 111-wide rows,
    // ResNet's pads at 112, the 128-float row limit and one past it (the
    // row filter), a 2-column window with pads on odd rows, and a plane
    // with no interior column.
    {"s2_wide_111_ceil", 2, 9, 111, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, true, 4, 55},
    {"s2_wide_112_p1", 2, 7, 112, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, false, 4, 56},
    {"s2_k2_row_limit_128_ceil", 1, 5, 128, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, true, 3, 64},
    {"s2_past_row_limit_129", 1, 5, 129, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, true, 2, 64},
    {"s2_k2_p1_odd", 2, 10, 37, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, false, 6, 19},
    {"s2_no_interior_column", 2, 6, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, false, 3, 2},
    // The last window starts in the end padding (kept: the size rule of
    // PyTorch before the ONNX one): no valid taps, -inf.
    {"window_in_end_pad", 1, 4, 4, 2, 2, 2, 2, 1, 1, 0, 0, 2, 2, true, 3, 3},
};

std::vector<float> Reference(const PoolCase& pc, const std::vector<float>& x) {
  std::vector<float> y(static_cast<size_t>(pc.c * pc.oh * pc.ow));
  for (int64_t c = 0; c < pc.c; ++c) {
    for (int64_t oy = 0; oy < pc.oh; ++oy) {
      for (int64_t ox = 0; ox < pc.ow; ++ox) {
        float m = -std::numeric_limits<float>::infinity();
        for (int64_t ky = 0; ky < pc.kh; ++ky) {
          for (int64_t kx = 0; kx < pc.kw; ++kx) {
            const int64_t iy = oy * pc.sh - pc.pt + ky * pc.dh;
            const int64_t ix = ox * pc.sw - pc.pl + kx * pc.dw;
            if (iy < 0 || iy >= pc.h || ix < 0 || ix >= pc.w) continue;
            const float v = x[static_cast<size_t>((c * pc.h + iy) * pc.w + ix)];
            if (!std::isnan(v) && v > m) m = v;
          }
        }
        y[static_cast<size_t>((c * pc.oh + oy) * pc.ow + ox)] = m;
      }
    }
  }
  return y;
}

void RunPool(const PoolCase& pc) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> d(-4.0f, 4.0f);
  std::vector<float> x(static_cast<size_t>(pc.c * pc.h * pc.w));
  for (float& v : x) v = d(rng);
  // A few NaNs, one whole column of them.
  for (size_t i = 7; i < x.size(); i += 53) x[i] = std::numeric_limits<float>::quiet_NaN();
  for (int64_t r = 0; r < pc.h && pc.w > 1; ++r) {
    x[static_cast<size_t>(r * pc.w + 1)] = std::numeric_limits<float>::quiet_NaN();
  }
  const std::vector<float> want = Reference(pc, x);

  testing::KernelHarness h;
  const int xi = h.AddTensor(schema::DType::Float32, {1, pc.c, pc.h, pc.w});
  const int yi = h.AddTensor(schema::DType::Float32, {1, pc.c, pc.oh, pc.ow});
  h.SetF32(xi, x);
  h.SetNode(
      schema::Op::MaxPool, {xi}, {yi}, schema::Params::PoolParams,
      [&pc](flatbuffers::FlatBufferBuilder& fbb) {
        const auto i32 = [](int64_t v) { return static_cast<int32_t>(v); };
        const std::vector<int32_t> kernel{i32(pc.kh), i32(pc.kw)}, strides{i32(pc.sh), i32(pc.sw)},
            dil{i32(pc.dh), i32(pc.dw)}, pads{i32(pc.pt), i32(pc.pl), i32(pc.pb), i32(pc.pr)};
        return schema::CreatePoolParamsDirect(fbb, &kernel, &strides, &pads, &dil, pc.ceil, false)
            .Union();
      });
  ASSERT_TRUE(h.Prepare().ok());
  ASSERT_TRUE(h.Eval().ok());
  const std::vector<float> got = h.GetF32(yi);
  ASSERT_EQ(got.size(), want.size());
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!(got[i] == want[i])) {  // exact: a maximum is one of the inputs (or -inf)
      if (bad++ == 0) first = i;
    }
  }
  EXPECT_EQ(bad, 0u) << "first at " << first << ": got " << got[first] << " want " << want[first];
}

TEST(MaxPoolTest, EveryShapeAndIsaMatchesDefinition) {
  const testing::IsaGuard restore;
  int ran = 0;
  for (KernelIsa isa : kAllKernelIsas) {
    if (!KernelIsaAvailable(isa)) continue;
    ASSERT_TRUE(SelectKernelIsa(isa));
    for (const PoolCase& pc : kCases) {
      SCOPED_TRACE(std::string(pc.name) + " " + KernelIsaName(isa));
      RunPool(pc);
      ++ran;
    }
  }
  EXPECT_GE(ran, 27);
}

}  // namespace
}  // namespace baton
