// Pack(): properties on random problems checked against references that share
// no code with the packer (pack_test_util.h), plus bad input, capacities,
// alignment, extra conflicts and large problems.

#include <gtest/gtest.h>
#include <pthread.h>

#include <chrono>
#include <random>

#include "pack_test_util.h"

namespace baton::planner {
namespace {

using pack_test::BruteOptimum;
using pack_test::FirstFitHeight;
using pack_test::RandomProblem;
using pack_test::SweepLowerBound;

PackSolution PackOrDie(const PackProblem& p) {
  Result<PackSolution> r = Pack(p);
  EXPECT_TRUE(r.ok()) << r.error();
  if (!r.ok()) return PackSolution();
  const Check valid = ValidatePacking(p, *r);
  EXPECT_TRUE(valid.ok()) << valid.error();
  return std::move(r).value();
}

TEST(Pack, Empty) {
  PackProblem p;
  const PackSolution s = PackOrDie(p);
  EXPECT_EQ(s.height, 0);
  EXPECT_TRUE(s.optimal);
}

TEST(Pack, SanityCaseInput12) {
  // MiniMalloc's examples/input.12.csv.
  PackProblem p;
  p.buffers = {
      {"b1", 0, 3, 4}, {"b2", 3, 9, 4}, {"b3", 0, 9, 4}, {"b4", 9, 21, 4}, {"b5", 0, 21, 4}};
  const PackSolution s = PackOrDie(p);
  EXPECT_EQ(s.height, 12);
  EXPECT_EQ(s.lower_bound, 12);
  EXPECT_TRUE(s.optimal);
  p.capacity = 12;
  EXPECT_EQ(PackOrDie(p).height, 12);
  p.capacity = 11;
  Result<PackSolution> r = Pack(p);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("no packing fits within 11 bytes"), std::string::npos) << r.error();
}

TEST(Pack, RejectsBadInput) {
  auto expect_error = [](PackProblem p, const std::string& fragment) {
    Result<PackSolution> r = Pack(p);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().find(fragment), std::string::npos) << r.error();
  };
  PackProblem p;
  p.buffers = {{"a", 0, 2, 8}, {"b", 1, 3, 4}};
  PackProblem q = p;
  q.buffers[1].size = 0;
  expect_error(q, "buffer 1 ('b'): size must be > 0");
  q = p;
  q.buffers[0].upper = 0;
  expect_error(q, "buffer 0 ('a'): upper must be greater than lower");
  q = p;
  q.alignment = 0;
  expect_error(q, "alignment must be >= 1");
  q = p;
  q.capacity = -1;
  expect_error(q, "capacity must be >= 0");
  q = p;
  q.time_limit_s = -1;
  expect_error(q, "time limit");
  q = p;
  q.extra_conflicts = {{0, 2}};
  expect_error(q, "extra conflict (0, 2)");
  q = p;
  q.extra_conflicts = {{1, 1}};
  expect_error(q, "extra conflict (1, 1)");
  q = p;
  q.buffers[0].size = int64_t{1} << 62;
  expect_error(q, "exceeds");
  q = p;
  q.buffers[0].lower = -(int64_t{1} << 62);
  expect_error(q, "buffer 0 ('a'): lifetime must lie within");
}

TEST(Pack, CapacityBelowLiveBytesFailsAtOnce) {
  PackProblem p;
  p.buffers = {{"a", 0, 2, 8}, {"b", 1, 3, 4}};
  p.capacity = 11;
  Result<PackSolution> r = Pack(p);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("12 bytes are live at one time"), std::string::npos) << r.error();
}

// Tiny problems: the packer's optimum equals brute force, its lower bound
// equals a time sweep, and a capacity one byte below the optimum is refused.
TEST(PackProperty, TinyOptimumMatchesBruteForce) {
  std::mt19937_64 rng(1);
  for (int round = 0; round < 300; ++round) {
    const int n = 1 + static_cast<int>(rng() % 7);
    PackProblem p = RandomProblem(rng, n, 8, 6);
    p.time_limit_s = 5;
    const PackSolution s = PackOrDie(p);
    const int64_t optimum = BruteOptimum(p);
    ASSERT_EQ(s.height, optimum) << "round " << round;
    EXPECT_TRUE(s.optimal) << "round " << round;
    EXPECT_EQ(s.lower_bound, SweepLowerBound(p)) << "round " << round;
    EXPECT_LE(s.lower_bound, optimum);
    p.capacity = optimum;
    EXPECT_EQ(PackOrDie(p).height, optimum);
    if (optimum > 1) {  // capacity 0 would mean "minimize"
      p.capacity = optimum - 1;
      EXPECT_FALSE(Pack(p).ok()) << "round " << round;
    }
  }
}

TEST(PackProperty, TinyWithExtraConflictsMatchesBruteForce) {
  std::mt19937_64 rng(2);
  for (int round = 0; round < 300; ++round) {
    const int n = 2 + static_cast<int>(rng() % 6);
    PackProblem p = RandomProblem(rng, n, 8, 6, 1, 0.3);
    p.time_limit_s = 5;
    const PackSolution s = PackOrDie(p);
    const int64_t optimum = BruteOptimum(p);
    ASSERT_EQ(s.height, optimum) << "round " << round;
    EXPECT_TRUE(s.optimal) << "round " << round;
    EXPECT_LE(s.lower_bound, optimum);
    p.capacity = optimum;
    EXPECT_EQ(PackOrDie(p).height, optimum) << "round " << round;
    if (optimum > 1) {
      p.capacity = optimum - 1;
      EXPECT_FALSE(Pack(p).ok()) << "round " << round;
    }
  }
}

// The planner's multi-queue form: unit intervals, all conflicts listed.
TEST(PackProperty, TinyConflictGraphOnlyMatchesBruteForce) {
  std::mt19937_64 rng(3);
  for (int round = 0; round < 200; ++round) {
    const int n = 2 + static_cast<int>(rng() % 6);
    PackProblem p = RandomProblem(rng, n, 8, 6, 1, 0.5);
    for (int i = 0; i < n; ++i) p.buffers[i].lower = i, p.buffers[i].upper = i + 1;
    p.time_limit_s = 5;
    const PackSolution s = PackOrDie(p);
    ASSERT_EQ(s.height, BruteOptimum(p)) << "round " << round;
    EXPECT_TRUE(s.optimal) << "round " << round;
  }
}

TEST(PackProperty, TinyAlignedMatchesBruteForce) {
  std::mt19937_64 rng(4);
  for (int round = 0; round < 400; ++round) {
    const int n = 1 + static_cast<int>(rng() % 7);
    const int64_t alignment = int64_t{1} << (rng() % 4);
    PackProblem p = RandomProblem(rng, n, 8, 12, alignment);
    p.time_limit_s = 5;
    const PackSolution s = PackOrDie(p);  // validates alignment
    const int64_t optimum = BruteOptimum(p);
    ASSERT_EQ(s.height, optimum) << "round " << round << " alignment " << alignment;
    for (int64_t o : s.offsets) EXPECT_EQ(o % alignment, 0);
    // Capacities that are not multiples of the alignment.
    p.capacity = optimum;
    EXPECT_EQ(PackOrDie(p).height, optimum) << "round " << round;
    if (optimum > 1) {
      p.capacity = optimum - 1;
      EXPECT_FALSE(Pack(p).ok()) << "round " << round;
    }
  }
}

// Medium problems: always valid, never worse than first fit by size.
TEST(PackProperty, RandomAlwaysValidAndNoWorseThanFirstFit) {
  std::mt19937_64 rng(5);
  for (int round = 0; round < 60; ++round) {
    const int n = 10 + static_cast<int>(rng() % 150);
    const int64_t alignment = round % 3 == 0 ? 16 : 1;
    const double extra = round % 4 == 0 ? 0.02 : 0.0;
    PackProblem p = RandomProblem(rng, n, 2 * n, 1000, alignment, extra);
    p.time_limit_s = 0.05;
    const PackSolution s = PackOrDie(p);
    EXPECT_LE(s.height, FirstFitHeight(p)) << "round " << round;
    EXPECT_GE(s.height, s.lower_bound);
    if (extra == 0.0) {
      EXPECT_EQ(s.lower_bound, SweepLowerBound(p));
    }
  }
}

TEST(PackProperty, CapacityIsHonored) {
  std::mt19937_64 rng(6);
  for (int round = 0; round < 30; ++round) {
    PackProblem p = RandomProblem(rng, 60, 100, 500);
    p.time_limit_s = 0.05;
    const PackSolution free = PackOrDie(p);
    p.capacity = free.height;
    const PackSolution fitted = PackOrDie(p);
    EXPECT_LE(fitted.height, p.capacity);
  }
}

TEST(Pack, ZeroTimeLimitStillPacks) {
  std::mt19937_64 rng(7);
  PackProblem p = RandomProblem(rng, 300, 400, 1000);
  p.time_limit_s = 0;
  const PackSolution s = PackOrDie(p);
  EXPECT_LE(s.height, FirstFitHeight(p));
}

TEST(Pack, DeterministicWhenTheSearchCompletes) {
  std::mt19937_64 rng(8);
  for (int round = 0; round < 20; ++round) {
    PackProblem p = RandomProblem(rng, 12, 20, 50, 1, round % 2 ? 0.1 : 0.0);
    p.time_limit_s = 10;
    const PackSolution a = PackOrDie(p);
    const PackSolution b = PackOrDie(p);
    ASSERT_TRUE(a.optimal);
    EXPECT_EQ(a.offsets, b.offsets);
  }
}

TEST(Pack, IndependentComponents) {
  // Two disjoint phases; the second sets the height.
  PackProblem p;
  p.buffers = {
      {"a", 0, 2, 4}, {"b", 1, 3, 4}, {"c", 10, 12, 8}, {"d", 11, 13, 8}, {"e", 12, 14, 8}};
  const PackSolution s = PackOrDie(p);
  EXPECT_EQ(s.height, 16);
  EXPECT_TRUE(s.optimal);
}

// Perfect packings (guillotine tilings, like the MiniMalloc set) that greedy
// orderings miss: the search must reach the bound, and fast.
TEST(PackProperty, TilingsReachTheLowerBound) {
  std::mt19937_64 rng(10);
  int greedy_misses = 0;
  for (int round = 0; round < 40; ++round) {
    PackProblem p = pack_test::TiledProblem(rng, 12 + round, 1000, 1 << 16);
    p.time_limit_s = 10;
    const PackSolution s = PackOrDie(p);
    EXPECT_EQ(s.lower_bound, 1 << 16);
    EXPECT_EQ(s.height, 1 << 16) << "round " << round;
    EXPECT_TRUE(s.optimal);
    greedy_misses += FirstFitHeight(p) > (1 << 16);
  }
  EXPECT_GT(greedy_misses, 20);  // the test is not trivial
}

// Realistic large problem: 10,000 buffers, mostly short-lived activations
// with a few long-lived ones. Must answer within its time limit plus the
// greedy's time, and beat first fit.
PackProblem LargeProblem(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  PackProblem p;
  std::uniform_int_distribution<int64_t> size(1, 64);
  for (int i = 0; i < n; ++i) {
    const int64_t len = rng() % 50 == 0 ? 1 + static_cast<int64_t>(rng() % 2000)
                                        : 1 + static_cast<int64_t>(rng() % 8);
    p.buffers.push_back({"t" + std::to_string(i), i, i + len, 1024 * size(rng)});
  }
  return p;
}

TEST(Pack, TenThousandBuffersInSeconds) {
  PackProblem p = LargeProblem(10000, 9);
  p.time_limit_s = 2;
  const auto start = std::chrono::steady_clock::now();
  const PackSolution s = PackOrDie(p);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 6.0);
  EXPECT_LE(s.height, FirstFitHeight(p));
  // An immediate answer with no search at all is still a good one.
  p.time_limit_s = 0;
  const PackSolution quick = PackOrDie(p);
  EXPECT_LE(quick.height, FirstFitHeight(p));
  EXPECT_LE(static_cast<double>(quick.height), 1.25 * static_cast<double>(quick.lower_bound));
}

// The exact search goes one level deeper per placed buffer; on a component
// of nearly 3,000 buffers that depth must not live on the thread's stack
// (sanitizer builds have large frames). Run it on a 512 KiB stack.
TEST(Pack, DeepSearchOnASmallStack) {
  struct Job {
    PackProblem problem;
    Result<PackSolution> result = Fail("not run");
  } job;
  job.problem = LargeProblem(2900, 11);
  job.problem.time_limit_s = 1;
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, 512 * 1024), 0);
  pthread_t thread;
  auto run = [](void* arg) -> void* {
    Job* j = static_cast<Job*>(arg);
    j->result = Pack(j->problem);
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&thread, &attr, run, &job), 0);
  ASSERT_EQ(pthread_join(thread, nullptr), 0);
  pthread_attr_destroy(&attr);
  ASSERT_TRUE(job.result.ok()) << job.result.error();
  EXPECT_TRUE(ValidatePacking(job.problem, *job.result).ok());
  EXPECT_LE(job.result->height, FirstFitHeight(job.problem));
}

// So many overlaps that the packer keeps no conflict lists (dense path).
TEST(Pack, DenseProblemWithoutAdjacency) {
  PackProblem p;
  const int n = 4200;  // 4200^2 > 2^24 conflict entries
  for (int i = 0; i < n; ++i)
    p.buffers.push_back({"d" + std::to_string(i), i % 7, n + 10, 1 + i % 5});
  p.extra_conflicts = {{0, 1}};
  p.time_limit_s = 1;
  const PackSolution s = PackOrDie(p);
  EXPECT_EQ(s.height, s.lower_bound);
}

}  // namespace
}  // namespace baton::planner
