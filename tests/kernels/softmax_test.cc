// The vectorized Softmax/LogSoftmax kernel (polynomial exp) against a
// double-precision reference computed here with std::exp: rows along the
// innermost axis (the attention case) and along an outer axis (inner dims
// in blocks of 16, so 37 exercises a full and a partial block), lengths
// that are not multiples of the 8 lanes, large ranges of values, -inf
// (masked attention scores) and values far below the row's maximum.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "kernels/kernel_test_util.h"

namespace baton {
namespace {

using testing::KernelHarness;

void CheckSoftmax(const std::vector<int64_t>& shape, int axis, bool log) {
  SCOPED_TRACE(::testing::Message() << (log ? "LogSoftmax" : "Softmax") << " axis " << axis
                                    << " of " << ::testing::PrintToString(shape));
  KernelHarness h;
  const int x = h.AddTensor(schema::DType::Float32, shape);
  const int y = h.AddTensor(schema::DType::Float32, shape);
  std::mt19937 rng(static_cast<uint32_t>(shape.size() * 31 + axis));
  std::uniform_real_distribution<float> dist(-30.0f, 30.0f);
  std::vector<float> in(static_cast<size_t>(h.Elements(x)));
  for (size_t i = 0; i < in.size(); ++i) {
    in[i] = dist(rng);
    if (i % 11 == 3) in[i] = -std::numeric_limits<float>::infinity();
    if (i % 13 == 5) in[i] = -200.0f;  // exp underflows
  }
  h.SetF32(x, in);
  h.SetNode(log ? schema::Op::LogSoftmax : schema::Op::Softmax, {x}, {y},
            schema::Params::AxisParams, [axis](flatbuffers::FlatBufferBuilder& fbb) {
              return schema::CreateAxisParams(fbb, axis).Union();
            });
  ASSERT_TRUE(h.Prepare().ok());
  ASSERT_TRUE(h.Eval().ok());
  const std::vector<float> got = h.GetF32(y);
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t len = shape[axis];
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t a) { return static_cast<size_t>((o * len + a) * inner + i); };
      auto v = [&](int64_t a) { return static_cast<double>(in[at(a)]); };
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t a = 0; a < len; ++a) mx = std::max(mx, v(a));
      double sum = 0;
      for (int64_t a = 0; a < len; ++a) sum += std::exp(v(a) - mx);
      for (int64_t a = 0; a < len; ++a) {
        const double ref = log ? v(a) - mx - std::log(sum) : std::exp(v(a) - mx) / sum;
        if (std::isinf(ref)) {
          EXPECT_TRUE(std::isinf(got[at(a)]) && got[at(a)] < 0.0f) << got[at(a)];
        } else {
          EXPECT_NEAR(static_cast<double>(got[at(a)]), ref, 2e-6 * std::max(1.0, std::fabs(ref))) << "at " << at(a);
        }
      }
    }
  }
}

TEST(SoftmaxKernel, MatchesDoubleReference) {
  for (bool log : {false, true}) {
    CheckSoftmax({4, 197}, 1, log);     // ViT attention row length
    CheckSoftmax({3, 5}, 1, log);       // shorter than the 8 lanes
    CheckSoftmax({2, 29, 37}, 1, log);  // outer axis, 37 inner: blocks of 16, 16, 5
    CheckSoftmax({1000, 3}, 0, log);
  }
}

// A NaN in a row makes that row NaN (as in torch), and nothing undefined
// happens on the way (the fuzzer found the exp converting NaN to int).
TEST(SoftmaxKernel, NanRowIsNanOtherRowsExact) {
  for (bool log : {false, true}) {
    KernelHarness h;
    const int x = h.AddTensor(schema::DType::Float32, {2, 9});
    const int y = h.AddTensor(schema::DType::Float32, {2, 9});
    std::vector<float> in(18, 0.0f);
    in[4] = std::numeric_limits<float>::quiet_NaN();
    h.SetF32(x, in);
    h.SetNode(log ? schema::Op::LogSoftmax : schema::Op::Softmax, {x}, {y},
              schema::Params::AxisParams, [](flatbuffers::FlatBufferBuilder& fbb) {
                return schema::CreateAxisParams(fbb, 1).Union();
              });
    ASSERT_TRUE(h.Prepare().ok());
    ASSERT_TRUE(h.Eval().ok());
    const std::vector<float> got = h.GetF32(y);
    for (int k = 0; k < 9; ++k) EXPECT_TRUE(std::isnan(got[k])) << k;
    // Nine equal values: 1/9 each, or log(1/9).
    const double want = log ? -std::log(9.0) : 1.0 / 9.0;
    for (int k = 9; k < 18; ++k) EXPECT_NEAR(static_cast<double>(got[k]), want, 1e-6) << k;
  }
}

}  // namespace
}  // namespace baton
