// Crc32c (baton/checksum.h) against published CRC-32C check values.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "baton/checksum.h"

namespace baton::testing {
namespace {

// The catalogue check value (reveng.sourceforge.io, "CRC-32/ISCSI") and the
// iSCSI test vectors of RFC 3720, appendix B.4.
TEST(Crc32c, MatchesPublishedCheckValues) {
  const std::string digits = "123456789";
  EXPECT_EQ(Crc32c(digits.data(), digits.size()), 0xE3069283u);
  EXPECT_EQ(Crc32c(nullptr, 0), 0u);
  std::vector<uint8_t> bytes(32, 0x00);
  EXPECT_EQ(Crc32c(bytes.data(), bytes.size()), 0x8A9136AAu);
  bytes.assign(32, 0xFF);
  EXPECT_EQ(Crc32c(bytes.data(), bytes.size()), 0x62A8AB43u);
  for (int i = 0; i < 32; ++i) bytes[i] = static_cast<uint8_t>(i);
  EXPECT_EQ(Crc32c(bytes.data(), bytes.size()), 0x46DD794Eu);
  for (int i = 0; i < 32; ++i) bytes[i] = static_cast<uint8_t>(31 - i);
  EXPECT_EQ(Crc32c(bytes.data(), bytes.size()), 0x113FDB5Cu);
}

TEST(Crc32c, ChainsAcrossPieces) {
  const std::string text = "Baton plans cannot silently go wrong";
  const uint32_t whole = Crc32c(text.data(), text.size());
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    EXPECT_EQ(Crc32c(text.data() + cut, text.size() - cut, Crc32c(text.data(), cut)), whole);
  }
}

TEST(Crc32c, AppendAndReseal) {
  std::vector<uint8_t> plan = {1, 2, 3, 4, 5};
  AppendPlanTrailer(&plan);
  ASSERT_EQ(plan.size(), 5 + kPlanTrailerBytes);
  const uint32_t crc = Crc32c(plan.data(), 5);
  EXPECT_EQ(plan[5] | plan[6] << 8 | plan[7] << 16 | static_cast<uint32_t>(plan[8]) << 24, crc);
  plan[0] = 9;
  ResealPlan(&plan);
  EXPECT_EQ(plan.size(), 5 + kPlanTrailerBytes);
  EXPECT_EQ(plan[5], Crc32c(plan.data(), 5) & 0xFF);
}

}  // namespace
}  // namespace baton::testing
