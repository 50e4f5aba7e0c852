// Sigmoid, Swish (SiLU) and Tanh, the unary activations compiled per
// instruction set (GemmImpl::unary, and the same forms in the convolution
// epilogue), on every ISA the machine has, against double precision computed
// here with std::exp: a dense sweep over [-100, 100], lengths that leave a
// remainder after the vector loop, and the special values (NaN stays NaN,
// +-inf, -0, huge negative inputs where the clamped exp would mislead).

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/kernel_test_util.h"

namespace baton {
namespace {

using testing::KernelHarness;

constexpr float kInf = std::numeric_limits<float>::infinity();

double Reference(schema::Op op, double x) {
  switch (op) {
    case schema::Op::Sigmoid:
      return 1.0 / (1.0 + std::exp(-x));
    case schema::Op::Swish:
      return x / (1.0 + std::exp(-x));
    default:
      return std::tanh(x);
  }
}

std::vector<float> RunUnary(schema::Op op, const std::vector<float>& in) {
  KernelHarness h;
  const int64_t n = static_cast<int64_t>(in.size());
  const int x = h.AddTensor(schema::DType::Float32, {1, n});
  const int y = h.AddTensor(schema::DType::Float32, {1, n});
  h.SetF32(x, in);
  h.SetNode(op, {x}, {y});
  EXPECT_TRUE(h.Prepare().ok());
  EXPECT_TRUE(h.Eval().ok());
  return h.GetF32(y);
}

TEST(UnaryKernel, EveryIsaMatchesDoubleReference) {
  const testing::IsaGuard restore;
  std::vector<float> in;
  for (int i = 0; i <= 40001; ++i) in.push_back(-100.0f + 0.005f * static_cast<float>(i));
  for (KernelIsa isa : kAllKernelIsas) {
    if (!KernelIsaAvailable(isa)) continue;
    ASSERT_TRUE(SelectKernelIsa(isa));
    for (schema::Op op : {schema::Op::Sigmoid, schema::Op::Swish, schema::Op::Tanh}) {
      SCOPED_TRACE(std::string(KernelIsaName(isa)) + " " + schema::EnumNameOp(op));
      const std::vector<float> got = RunUnary(op, in);
      ASSERT_EQ(got.size(), in.size());
      int bad = 0;
      for (size_t i = 0; i < in.size() && bad < 5; ++i) {
        const double ref = Reference(op, static_cast<double>(in[i]));
        // Relative where the value is a normal float; below that (sigmoid
        // and swish of x < -87), anything within 1e-30 of zero.
        const double tol = std::fabs(ref) > 1e-30 ? 5e-7 * std::fabs(ref) : 1e-30;
        if (!(std::fabs(static_cast<double>(got[i]) - ref) <= tol)) {
          ADD_FAILURE() << "x " << in[i] << " got " << got[i] << " want " << ref;
          ++bad;
        }
      }
    }
  }
}

TEST(UnaryKernel, EveryIsaSpecialValues) {
  const testing::IsaGuard restore;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Past the vector width, so that the specials land in vector lanes too.
  std::vector<float> in = {nan, kInf, -kInf, -0.0f, 0.0f, 88.0f, -88.0f, -1e6f, -1e30f, -3e38f, 3e38f};
  const size_t specials = in.size();
  for (size_t i = 0; i < 2 * specials + 3; ++i) in.push_back(in[i % specials]);
  for (KernelIsa isa : kAllKernelIsas) {
    if (!KernelIsaAvailable(isa)) continue;
    ASSERT_TRUE(SelectKernelIsa(isa));
    SCOPED_TRACE(KernelIsaName(isa));
    const std::vector<float> sig = RunUnary(schema::Op::Sigmoid, in);
    const std::vector<float> swish = RunUnary(schema::Op::Swish, in);
    for (size_t i = 0; i + specials <= in.size(); i += specials) {
      EXPECT_TRUE(std::isnan(sig[i + 0]));
      EXPECT_EQ(sig[i + 1], 1.0f);
      EXPECT_EQ(sig[i + 2], 0.0f);  // below -87: 0, as exp underflows
      EXPECT_EQ(sig[i + 6], 0.0f);
      EXPECT_EQ(sig[i + 9], 0.0f);
      EXPECT_EQ(sig[i + 3], 0.5f);
      EXPECT_EQ(sig[i + 4], 0.5f);
      EXPECT_EQ(sig[i + 10], 1.0f);
      EXPECT_TRUE(std::isnan(swish[i + 0]));
      EXPECT_EQ(swish[i + 1], kInf);
      EXPECT_TRUE(std::isnan(swish[i + 2]));  // -inf * sigmoid(-inf) = -inf * 0
      EXPECT_EQ(swish[i + 3], 0.0f);
      EXPECT_NEAR(swish[i + 5], 88.0f, 1e-5f);
      // Huge negative inputs give (minus) zero, not x / exp(87).
      for (int k : {6, 7, 8, 9}) EXPECT_LE(std::fabs(swish[i + k]), 1e-30f) << in[i + k];
      EXPECT_EQ(swish[i + 10], 3e38f);
    }
  }
}

}  // namespace
}  // namespace baton
