// The Cortex-M port prints values with its own formatter (newlib's printf
// with floats would pull in malloc). It must print exactly what
// printf("%.9g") prints, so firmware and host outputs compare as text.

#include "baton/cortex_m/format.h"

#include <gtest/gtest.h>
#include <stdio.h>
#include <string.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

namespace baton::cortex_m {
namespace {

std::string Printf(float v) {
  char text[64];
  snprintf(text, sizeof(text), "%.9g", static_cast<double>(v));
  return text;
}

std::string Ours(float v) {
  char text[kNumberTextBytes];
  const size_t n = FormatFloat(v, text);
  EXPECT_EQ(n, strlen(text));
  return text;
}

float FromBits(uint32_t bits) {
  float v;
  memcpy(&v, &bits, sizeof(v));
  return v;
}

TEST(FormatFloat, SpecialValues) {
  EXPECT_EQ(Ours(0.0f), "0");
  EXPECT_EQ(Ours(-0.0f), "-0");
  EXPECT_EQ(Ours(std::numeric_limits<float>::infinity()), "inf");
  EXPECT_EQ(Ours(-std::numeric_limits<float>::infinity()), "-inf");
  EXPECT_EQ(Ours(std::numeric_limits<float>::quiet_NaN()),
            Printf(std::numeric_limits<float>::quiet_NaN()));
  EXPECT_EQ(Ours(-std::numeric_limits<float>::quiet_NaN()),
            Printf(-std::numeric_limits<float>::quiet_NaN()));
}

TEST(FormatFloat, StyleBoundaries) {
  for (float v : {1.0f, 0.1f, 1e-4f, 1e-5f, 9.99999e-5f, 123456789.0f, 999999999.0f, 1e9f, 1e10f,
                  0.5f, 100.0f, 1.5e-45f, 3.4028235e38f, 1.17549435e-38f, 0.3f, 2.5f}) {
    EXPECT_EQ(Ours(v), Printf(v)) << v;
    EXPECT_EQ(Ours(-v), Printf(-v)) << -v;
  }
}

TEST(FormatFloat, TiesRoundToEven) {
  // Exactly representable values with a 5 in the tenth significant digit.
  for (float v : {1234567.125f, 1234567.375f, 0.5f, 2097152.25f, 1048576.125f, 16777215.0f}) {
    EXPECT_EQ(Ours(v), Printf(v)) << v;
  }
}

TEST(FormatFloat, EveryExponentAndRandomBits) {
  std::mt19937 rng(12345);
  for (uint32_t e = 0; e < 256; ++e) {
    for (int k = 0; k < 2000; ++k) {
      const uint32_t bits = (e << 23) | (rng() & 0x807fffffu);
      const float v = FromBits(bits);
      ASSERT_EQ(Ours(v), Printf(v)) << "bits 0x" << std::hex << bits;
    }
  }
}

TEST(FormatFloat, Integers) {
  char text[kNumberTextBytes];
  FormatInt(-9223372036854775807LL - 1, text);
  EXPECT_STREQ(text, "-9223372036854775808");
  FormatUint(18446744073709551615ULL, text);
  EXPECT_STREQ(text, "18446744073709551615");
  FormatInt(0, text);
  EXPECT_STREQ(text, "0");
}

}  // namespace
}  // namespace baton::cortex_m
