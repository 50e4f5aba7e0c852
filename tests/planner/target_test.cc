// Target JSON: wrong fields are errors naming the file, entry and field
// (issue 13: a device without "kind" became a CPU, non-string fields threw
// uncaught exceptions, an alignment of 2^32 truncated to 0 and divided by
// zero later).

#include "baton/planner/target.h"

#include <gtest/gtest.h>

#include <string>

namespace baton::planner {
namespace {

const std::string kGood = R"({"name": "t", "fallback": "cpu0",
  "domains": [{"name": "dram", "bytes": 1048576, "alignment": 64}],
  "devices": [{"name": "cpu0", "kind": "cpu", "domains": ["dram"]},
              {"name": "npu0", "kind": "npu", "domains": ["dram"], "ops": ["Conv"]}]})";

std::string With(const std::string& from, const std::string& to) {
  std::string s = kGood;
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

std::string Error(const std::string& text) {
  Result<Target> t = ParseTarget(text, "t.json");
  return t.ok() ? "(parsed)" : t.error();
}

TEST(Target, ParsesKinds) {
  Result<Target> t = ParseTarget(kGood, "t.json");
  ASSERT_TRUE(t.ok()) << t.error();
  EXPECT_EQ(t->devices[1].kind, schema::DeviceKind::Npu);
  EXPECT_EQ(t->domains[0].alignment, 64u);
}

TEST(Target, DeviceWithoutKindIsAnError) {
  EXPECT_EQ(Error(With(R"("name": "npu0", "kind": "npu",)", R"("name": "npu0",)")),
            "t.json: device 'npu0': needs a string 'kind' (cpu, npu, gpu or dsp)");
  EXPECT_EQ(Error(With(R"("kind": "npu")", R"("kind": "tpu")")),
            "t.json: device 'npu0': unknown kind 'tpu' (cpu, npu, gpu or dsp)");
}

TEST(Target, NonStringFieldsAreErrors) {
  EXPECT_EQ(Error(With(R"("kind": "npu")", R"("kind": 3)")),
            "t.json: device 'npu0': needs a string 'kind' (cpu, npu, gpu or dsp)");
  EXPECT_EQ(Error(With(R"({"name": "t",)", R"({"name": ["t"],)")), "t.json: 'name' must be a string");
  EXPECT_EQ(Error(With(R"("fallback": "cpu0")", R"("fallback": 0)")),
            "t.json: 'fallback' must be a string");
  EXPECT_EQ(Error(With(R"({"name": "cpu0",)", R"({"name": 1,)")),
            "t.json: devices[0]: needs a string 'name'");
}

TEST(Target, AlignmentMustFitThePlan) {
  EXPECT_EQ(Error(With(R"("alignment": 64)", R"("alignment": 4294967296)")),
            "t.json: domain 'dram': 'alignment' must be a power of two from 1 to 2^31");
  EXPECT_EQ(Error(With(R"("alignment": 64)", R"("alignment": 48)")),
            "t.json: domain 'dram': 'alignment' must be a power of two from 1 to 2^31");
  Result<Target> t = ParseTarget(With(R"("alignment": 64)", R"("alignment": 2147483648)"), "t.json");
  ASSERT_TRUE(t.ok()) << t.error();
  EXPECT_EQ(t->domains[0].alignment, 2147483648u);
  // Below 8, int64 tensors and kernel workspaces would be misaligned: the
  // planner raises the alignment (and so asks the caller for an 8-aligned arena).
  for (const char* small : {"1", "2", "4"}) {
    Result<Target> s =
        ParseTarget(With(R"("alignment": 64)", std::string(R"("alignment": )") + small), "t.json");
    ASSERT_TRUE(s.ok()) << s.error();
    EXPECT_EQ(s->domains[0].alignment, 8u) << small;
  }
  Result<Target> eight = ParseTarget(With(R"("alignment": 64)", R"("alignment": 8)"), "t.json");
  ASSERT_TRUE(eight.ok()) << eight.error();
  EXPECT_EQ(eight->domains[0].alignment, 8u);
  EXPECT_EQ(Error(With(R"("bytes": 1048576)", R"("bytes": 0)")),
            "t.json: domain 'dram': 'bytes' must be a positive integer");
}

// "threads" (issue 17): CPU devices only, 1..64, default 1.
TEST(Target, CpuThreads) {
  Result<Target> plain = ParseTarget(kGood, "t.json");
  ASSERT_TRUE(plain.ok()) << plain.error();
  EXPECT_EQ(plain->devices[0].threads, 1u);
  Result<Target> two = ParseTarget(
      With(R"("kind": "cpu", "domains")", R"("kind": "cpu", "threads": 2, "domains")"), "t.json");
  ASSERT_TRUE(two.ok()) << two.error();
  EXPECT_EQ(two->devices[0].threads, 2u);
  for (const char* bad : {"0", "-1", "65", "1.5", "\"2\""}) {
    EXPECT_EQ(
        Error(With(R"("kind": "cpu", "domains")",
                   std::string(R"("kind": "cpu", "threads": )") + bad + R"(, "domains")")),
        std::string("t.json: device 'cpu0': 'threads' must be an integer from 1 to 64, got ") +
            (std::string(bad) == "\"2\"" ? "\"2\"" : bad));
  }
  EXPECT_EQ(Error(With(R"("kind": "npu", "domains")", R"("kind": "npu", "threads": 2, "domains")")),
            "t.json: device 'npu0': 'threads' is for CPU devices only (this device is kind 'npu')");
}

// The cost model's Amdahl factor: 1 for one thread, falling with N, never
// below the serial fraction's bound.
TEST(Target, ParallelSpeedupGrowsWithThreads) {
  EXPECT_DOUBLE_EQ(ParallelSpeedup(1), 1.0);
  EXPECT_DOUBLE_EQ(ParallelSpeedup(0), 1.0);
  EXPECT_NEAR(ParallelSpeedup(2), 1.0 / (kSerialFraction + (1 - kSerialFraction) / 2), 1e-12);
  EXPECT_GT(ParallelSpeedup(2), 1.5);
  EXPECT_GT(ParallelSpeedup(4), ParallelSpeedup(2));
  EXPECT_LT(ParallelSpeedup(64), 1.0 / kSerialFraction);
}

}  // namespace
}  // namespace baton::planner
