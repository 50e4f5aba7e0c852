// The MiniMalloc "challenging" set (../shared/bench/minimalloc): every
// instance must fit its capacity of 1,048,576 bytes within the per-instance
// time limit below. The packer needs about 0.1-1 s each on the build machine;
// the limit leaves room for slow CI runners and sanitizer builds.

#include <gtest/gtest.h>

#include <string>

#include "pack_test_util.h"

namespace baton::planner {
namespace {

constexpr int64_t kCapacity = 1048576;
constexpr double kTimeLimitS = 30;

bool Load(const std::string& name, PackProblem* p) {
  std::string text;
  if (!pack_test::ReadText(pack_test::MiniMallocDir() + name, &text)) return false;
  Result<std::vector<PackBuffer>> buffers = ReadPackCsv(text);
  EXPECT_TRUE(buffers.ok()) << name << ": " << buffers.error();
  p->buffers = std::move(buffers.value());
  return true;
}

class MiniMalloc : public testing::TestWithParam<const char*> {};

TEST_P(MiniMalloc, FitsCapacity) {
  const std::string name = std::string(GetParam()) + ".1048576.csv";
  PackProblem p;
  if (!Load(name, &p)) GTEST_SKIP() << "benchmark not found: " << pack_test::MiniMallocDir();
  p.capacity = kCapacity;
  p.time_limit_s = kTimeLimitS;
  Result<PackSolution> s = Pack(p);
  ASSERT_TRUE(s.ok()) << name << ": " << s.error();
  const Check valid = ValidatePacking(p, *s);
  EXPECT_TRUE(valid.ok()) << valid.error();
  EXPECT_LE(s->height, kCapacity);
  EXPECT_LT(s->seconds, kTimeLimitS);
  RecordProperty("height", std::to_string(s->height));
  RecordProperty("seconds", std::to_string(s->seconds));
}

INSTANTIATE_TEST_SUITE_P(Challenging, MiniMalloc,
                         testing::Values("A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K"));

TEST(MiniMallocSanity, Input12) {
  PackProblem p;
  if (!Load("input.12.csv", &p)) GTEST_SKIP() << "benchmark not found";
  p.capacity = 12;
  Result<PackSolution> s = Pack(p);
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_TRUE(ValidatePacking(p, *s).ok());
  EXPECT_EQ(s->height, 12);
}

// Without a capacity the packer minimizes: instance C goes down to its lower
// bound, below the 1,047,552 bytes MiniMalloc reports for it.
TEST(MiniMallocMinimize, CReachesItsLowerBound) {
  PackProblem p;
  if (!Load("C.1048576.csv", &p)) GTEST_SKIP() << "benchmark not found";
  p.time_limit_s = kTimeLimitS;
  Result<PackSolution> s = Pack(p);
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_TRUE(ValidatePacking(p, *s).ok());
  EXPECT_EQ(s->lower_bound, 1039360);
  EXPECT_EQ(s->height, 1039360);
  EXPECT_TRUE(s->optimal);
}

}  // namespace
}  // namespace baton::planner
