// ValidatePacking on hand-made packings, valid and invalid.

#include <gtest/gtest.h>

#include "baton/planner/memory/pack.h"

namespace baton::planner {
namespace {

// Three buffers: a and b live together, c lives after both.
//   time:  0 1 2 3 4
//   a      [---)
//   b        [---)
//   c              [-)
PackProblem Three() {
  PackProblem p;
  p.buffers = {{"a", 0, 2, 8}, {"b", 1, 3, 4}, {"c", 3, 5, 12}};
  return p;
}

PackSolution Solution(std::vector<int64_t> offsets, int64_t height) {
  PackSolution s;
  s.offsets = std::move(offsets);
  s.height = height;
  return s;
}

TEST(ValidatePacking, AcceptsValidPackings) {
  const PackProblem p = Three();
  EXPECT_TRUE(ValidatePacking(p, Solution({0, 8, 0}, 12)).ok());
  EXPECT_TRUE(ValidatePacking(p, Solution({4, 0, 0}, 12)).ok());
  // b may sit anywhere clear of a; c may share bytes with both.
  EXPECT_TRUE(ValidatePacking(p, Solution({0, 100, 2}, 104)).ok());
}

TEST(ValidatePacking, EmptyProblem) {
  EXPECT_TRUE(ValidatePacking(PackProblem(), Solution({}, 0)).ok());
  EXPECT_FALSE(ValidatePacking(PackProblem(), Solution({}, 1)).ok());
}

TEST(ValidatePacking, RejectsOverlapOfLiveBuffers) {
  const Check c = ValidatePacking(Three(), Solution({0, 7, 0}, 12));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().find("'a'"), std::string::npos) << c.error();
  EXPECT_NE(c.error().find("'b'"), std::string::npos) << c.error();
}

TEST(ValidatePacking, TouchingIsNotOverlap) {
  // Half-open in bytes: a at [0, 8) and b at [8, 12) share no byte.
  EXPECT_TRUE(ValidatePacking(Three(), Solution({0, 8, 0}, 12)).ok());
  PackProblem p;
  // Half-open in time: x ends exactly when y starts.
  p.buffers = {{"x", 0, 2, 4}, {"y", 2, 4, 4}};
  EXPECT_TRUE(ValidatePacking(p, Solution({0, 0}, 4)).ok());
}

TEST(ValidatePacking, RejectsWrongHeight) {
  EXPECT_FALSE(ValidatePacking(Three(), Solution({0, 8, 0}, 13)).ok());
  EXPECT_FALSE(ValidatePacking(Three(), Solution({0, 8, 0}, 11)).ok());
}

TEST(ValidatePacking, RejectsNegativeAndMisalignedOffsets) {
  EXPECT_FALSE(ValidatePacking(Three(), Solution({-4, 8, 0}, 12)).ok());
  PackProblem p = Three();
  p.alignment = 4;
  EXPECT_TRUE(ValidatePacking(p, Solution({0, 8, 0}, 12)).ok());
  const Check c = ValidatePacking(p, Solution({0, 10, 0}, 14));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().find("multiple of 4"), std::string::npos) << c.error();
}

TEST(ValidatePacking, RejectsWrongOffsetCount) {
  EXPECT_FALSE(ValidatePacking(Three(), Solution({0, 8}, 12)).ok());
}

TEST(ValidatePacking, HonorsExtraConflicts) {
  PackProblem p = Three();
  EXPECT_TRUE(ValidatePacking(p, Solution({0, 8, 0}, 12)).ok());
  p.extra_conflicts = {{2, 0}};  // c must now stay clear of a
  const Check c = ValidatePacking(p, Solution({0, 8, 0}, 12));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().find("extra conflict"), std::string::npos) << c.error();
  EXPECT_TRUE(ValidatePacking(p, Solution({0, 8, 8}, 20)).ok());
  p.extra_conflicts = {{0, 3}};
  EXPECT_FALSE(ValidatePacking(p, Solution({0, 8, 8}, 20)).ok());
}

TEST(ValidatePacking, HonorsCapacity) {
  PackProblem p = Three();
  p.capacity = 12;
  EXPECT_TRUE(ValidatePacking(p, Solution({0, 8, 0}, 12)).ok());
  p.capacity = 11;
  EXPECT_FALSE(ValidatePacking(p, Solution({0, 8, 0}, 12)).ok());
}

}  // namespace
}  // namespace baton::planner
