// The plan file's layout (docs/formats.md, "File layout"): the plan
// FlatBuffer, then the summary section (summary FlatBuffer, its length, the
// "BTNS" magic), then the CRC-32C trailer over every byte before it. The
// layout is parsed here by hand from the documentation, and the CRC computed
// bit by bit, independently of analysis/summary.cc and the runtime's Crc32c.

#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <string>

#include "baton/checksum.h"
#include "baton/planner/analysis/inspect.h"
#include "baton/planner/analysis/summary.h"
#include "baton/planner/analysis/validate_plan.h"
#include "common/test_util.h"

namespace baton::test {
namespace {

uint32_t BitwiseCrc32c(const std::string& bytes, size_t size) {
  uint32_t crc = 0xFFFFFFFFu;
  for (size_t i = 0; i < size; ++i) {
    crc ^= static_cast<uint8_t>(bytes[i]);
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
  }
  return ~crc;
}

uint32_t U32At(const std::string& bytes, size_t at) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{static_cast<uint8_t>(bytes[at + i])} << (8 * i);
  return v;
}

void PutU32(std::string* bytes, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) (*bytes)[at + i] = static_cast<char>((v >> (8 * i)) & 0xFF);
}

// The bytes with their trailer recomputed (an edit that keeps the checksum
// valid, as a third-party tool writing the file would).
std::string Reseal(std::string bytes) {
  ResealPlan(&bytes);
  return bytes;
}

bool RuntimeLoads(const std::string& bytes) {
  linux_port::AlignedBytes copy(bytes.data(), bytes.size());
  PlanView view;
  return PlanView::Load(copy.data(), copy.size(), &view).ok();
}

nlohmann::json InspectJsonOf(const std::string& bytes) {
  auto loaded = planner::LoadedPlan::FromBytes(bytes.data(), bytes.size(), "plan");
  EXPECT_TRUE(loaded.ok()) << loaded.error();
  if (!loaded.ok()) return nullptr;
  return nlohmann::json::parse(planner::InspectJson(loaded.value()));
}

struct Planned {
  std::string bytes;
  planner::Program program;
};

Planned RulePlan() {
  Planned p;
  p.bytes = PlanBytes(PlanSpec(GraphPath("tiny_cnn"), "soc4", {"Conv=npu0", "Softmax=npu0"}),
                      &p.program);
  return p;
}

TEST(PlanFileLayout, SummarySectionSitsBetweenTheFlatBufferAndTheTrailer) {
  const Planned planned = RulePlan();
  const std::string& bytes = planned.bytes;
  ASSERT_GT(bytes.size(), 64u);
  const size_t n = bytes.size();
  // Trailer: CRC-32C of everything before it, little-endian.
  EXPECT_EQ(U32At(bytes, n - 4), BitwiseCrc32c(bytes, n - 4));
  // Magic, then the summary's length, then the summary FlatBuffer.
  EXPECT_EQ(bytes.substr(n - 8, 4), "BTNS");
  const size_t length = U32At(bytes, n - 12);
  ASSERT_GT(length, 8u);
  ASSERT_LT(length, n - 12);
  EXPECT_EQ(length % 8, 0u);
  const size_t offset = n - 12 - length;
  EXPECT_EQ(offset % 8, 0u);
  EXPECT_EQ(bytes.substr(offset + 4, 4), "BTNS");  // the summary's file identifier
  EXPECT_EQ(bytes.substr(4, 4), "BTN1");           // the plan's

  // The same program emitted without a summary: the plan FlatBuffer is
  // byte-identical, only the section is missing (and the trailer differs).
  planner::Program bare_program = planned.program;
  bare_program.summary.present = false;
  auto bare = planner::EmitPlan(bare_program);
  ASSERT_TRUE(bare.ok()) << bare.error();
  ASSERT_EQ(bare.value().size(), offset + 4);
  EXPECT_EQ(bare.value().substr(0, offset), bytes.substr(0, offset));
  EXPECT_EQ(U32At(bare.value(), offset), BitwiseCrc32c(bare.value(), offset));

  // The helper agrees with the hand parse.
  auto parts = planner::FindPlanParts(bytes.data(), n);
  ASSERT_TRUE(parts.ok()) << parts.error();
  EXPECT_EQ(parts->flatbuffer_bytes, offset);
  EXPECT_EQ(parts->summary_offset, offset);
  EXPECT_EQ(parts->summary_bytes, length);
  auto bare_parts = planner::FindPlanParts(bare.value().data(), bare.value().size());
  ASSERT_TRUE(bare_parts.ok()) << bare_parts.error();
  EXPECT_EQ(bare_parts->summary_bytes, 0u);
  EXPECT_EQ(bare_parts->flatbuffer_bytes, offset);

  // Runtime loader and independent validator accept both.
  EXPECT_TRUE(RuntimeLoads(bytes));
  EXPECT_TRUE(RuntimeLoads(bare.value()));
  EXPECT_TRUE(planner::ValidatePlanSchedule(bytes.data(), n).ok());
  EXPECT_TRUE(planner::ValidatePlanSchedule(bare.value().data(), bare.value().size()).ok());

  // inspect: the same plan either way; the summary only where it was written.
  nlohmann::json with = InspectJsonOf(bytes), without = InspectJsonOf(bare.value());
  ASSERT_TRUE(with["summary"].is_object()) << with["summary"].dump();
  EXPECT_EQ(with["summary"]["method"], "rules");
  EXPECT_TRUE(without["summary"].is_null());
  for (const char* key : {"domains", "queues", "tensors", "nodes", "inputs", "outputs"}) {
    EXPECT_EQ(with[key], without[key]) << key;
  }
}

TEST(PlanFileLayout, TheChecksumCoversTheSummary) {
  const std::string bytes = RulePlan().bytes;
  const size_t n = bytes.size();
  const size_t offset = n - 12 - U32At(bytes, n - 12);
  for (size_t at : {offset + 8, n - 12, n - 6}) {  // summary body, length, magic
    std::string bad = bytes;
    bad[at] = static_cast<char>(bad[at] ^ 0x40);
    EXPECT_FALSE(RuntimeLoads(bad)) << at;
    EXPECT_FALSE(planner::LoadedPlan::FromBytes(bad.data(), n, "plan").ok()) << at;
    EXPECT_FALSE(planner::ValidatePlanSchedule(bad.data(), n).ok()) << at;
  }
}

TEST(PlanFileLayout, AMalformedSectionIsReportedAndThePlanStillLoads) {
  const std::string bytes = RulePlan().bytes;
  const size_t n = bytes.size();
  const uint32_t length = U32At(bytes, n - 12);
  // A length that is not a multiple of 8, one past the file's start, and 0.
  for (uint32_t bad_length : {length + 4, static_cast<uint32_t>(n), 0u}) {
    std::string bad = bytes;
    PutU32(&bad, n - 12, bad_length);
    bad = Reseal(bad);
    EXPECT_TRUE(RuntimeLoads(bad)) << bad_length;  // the runtime never reads it
    auto parts = planner::FindPlanParts(bad.data(), n);
    ASSERT_FALSE(parts.ok()) << bad_length;
    EXPECT_NE(parts.error().find("summary section is malformed (length " +
                                 std::to_string(bad_length)),
              std::string::npos)
        << parts.error();
    nlohmann::json j = InspectJsonOf(bad);
    ASSERT_TRUE(j["summary"].is_object()) << bad_length;
    EXPECT_NE(j["summary"]["error"].get<std::string>().find("malformed"), std::string::npos);
    EXPECT_EQ(j["nodes"].size(), InspectJsonOf(bytes)["nodes"].size());
  }
  // A summary that is not a PlanSummary FlatBuffer (identifier changed).
  std::string bad = bytes;
  bad[n - 12 - length + 4] = 'X';
  bad = Reseal(bad);
  nlohmann::json j = InspectJsonOf(bad);
  EXPECT_NE(j["summary"]["error"].get<std::string>().find("corrupt"), std::string::npos)
      << j["summary"].dump();
  auto loaded = planner::LoadedPlan::FromBytes(bad.data(), n, "plan");
  ASSERT_TRUE(loaded.ok());
  const std::string text = planner::InspectText(loaded.value());
  EXPECT_NE(text.find("the plan's summary is corrupt"), std::string::npos) << text;
  EXPECT_NE(text.find("Arenas"), std::string::npos) << text;
}

}  // namespace
}  // namespace baton::test
