// Profiles (baton/planner/profile.h): parsing, errors, the JSON round trip
// and how measurements are matched.

#include "baton/planner/profile.h"

#include <gtest/gtest.h>

namespace baton::planner {
namespace {

std::string Entry(const std::string& device, const std::string& kind, double median,
                  const std::string& shape = "[1,4,8,8]") {
  return R"({"node": "c", "op": "Conv", "device": ")" + device + R"(", "kind": ")" + kind +
         R"(", "inputs": [{"dtype": "float32", "shape": [1,3,8,8]}, {"dtype": "float32", "shape": [4,3,3,3]}, null],
             "outputs": [{"dtype": "float32", "shape": )" + shape + R"(}],
             "median_s": )" + std::to_string(median) + R"(, "min_s": 0.0, "runs": 3})";
}

std::string Doc(const std::string& entries, const std::string& version = "1") {
  return R"({"baton_profile": )" + version + R"(, "plan": "p.baton", "runs": 3, "entries": [)" +
         entries + "]}";
}

const char* kSignature = "Conv(float32[1,3,8,8],float32[4,3,3,3],-)->(float32[1,4,8,8])";

TEST(Profile, SignatureText) {
  OperandSignature x{true, "float32", {1, 3, 8, 8}}, w{true, "float32", {4, 3, 3, 3}}, none;
  none.present = false;
  OperandSignature y{true, "float32", {1, 4, 8, 8}};
  EXPECT_EQ(NodeSignatureText("Conv", {x, w, none}, {y}), kSignature);
}

TEST(Profile, MatchesByKindAndPrefersTheSameDevice) {
  // Two npu measurements of the same signature on different devices, one on
  // a gpu, one of another shape.
  Result<Profile> p = ParseProfile(
      Doc(Entry("npu0", "npu", 0.004) + "," + Entry("npu1", "npu", 0.002) + "," +
          Entry("gpu0", "gpu", 0.5) + "," + Entry("npu0", "npu", 9.0, "[1,4,4,4]")),
      "p.json");
  ASSERT_TRUE(p.ok()) << p.error();
  ASSERT_EQ(p->entries.size(), 4u);
  EXPECT_EQ(p->entries[0].signature, kSignature);
  // Same name wins: exactly that entry.
  EXPECT_DOUBLE_EQ(*p->Seconds(kSignature, schema::DeviceKind::Npu, "npu0"), 0.004);
  EXPECT_DOUBLE_EQ(*p->Seconds(kSignature, schema::DeviceKind::Npu, "npu1"), 0.002);
  // Another npu: the mean of both npu entries (hand: (0.004 + 0.002) / 2).
  EXPECT_DOUBLE_EQ(*p->Seconds(kSignature, schema::DeviceKind::Npu, "npu7"), 0.003);
  EXPECT_DOUBLE_EQ(*p->Seconds(kSignature, schema::DeviceKind::Gpu, "gpu1"), 0.5);
  // No cpu and no dsp measurement: the target's model applies.
  EXPECT_FALSE(p->Seconds(kSignature, schema::DeviceKind::Cpu, "cpu0").has_value());
  EXPECT_FALSE(p->Seconds("Relu(float32[1])->(float32[1])", schema::DeviceKind::Npu, "npu0"));
}

TEST(Profile, JsonRoundTrip) {
  Result<Profile> p = ParseProfile(Doc(Entry("npu0", "npu", 0.25)), "p.json");
  ASSERT_TRUE(p.ok()) << p.error();
  Result<Profile> again = ParseProfile(ProfileJson(*p), "again.json");
  ASSERT_TRUE(again.ok()) << again.error();
  ASSERT_EQ(again->entries.size(), 1u);
  const ProfileEntry& e = again->entries[0];
  EXPECT_EQ(e.signature, kSignature);
  EXPECT_EQ(e.device, "npu0");
  EXPECT_EQ(e.kind, schema::DeviceKind::Npu);
  EXPECT_EQ(e.median_s, 0.25);
  EXPECT_EQ(e.runs, 3);
  EXPECT_EQ(again->plan, "p.baton");
  EXPECT_EQ(again->kernels, "");
  EXPECT_EQ(ProfileJson(*again), ProfileJson(*p));
  // The kernels' ISA (informative) is kept when given.
  p->kernels = "avx2";
  again = ParseProfile(ProfileJson(*p), "again.json");
  ASSERT_TRUE(again.ok()) << again.error();
  EXPECT_EQ(again->kernels, "avx2");
  EXPECT_NE(ProfileJson(*again).find("\"kernels\": \"avx2\""), std::string::npos);
}

TEST(Profile, MergeKeepsEveryEntry) {
  Profile a = ParseProfile(Doc(Entry("npu0", "npu", 0.004)), "a.json").value();
  Profile b = ParseProfile(Doc(Entry("npu0", "npu", 0.002)), "b.json").value();
  a.kernels = "avx2";
  b.kernels = "portable";
  Profile c = b;
  a.Merge(b);
  EXPECT_EQ(a.entries.size(), 2u);
  EXPECT_EQ(a.source, "a.json, b.json");
  EXPECT_DOUBLE_EQ(*a.Seconds(kSignature, schema::DeviceKind::Npu, "npu0"), 0.003);
  EXPECT_EQ(a.kernels, "avx2, portable");
  a.Merge(c);  // a third file, of an ISA already listed
  EXPECT_EQ(a.kernels, "avx2, portable");
  Profile d = b;  // a merged profile's list, one ISA new
  d.kernels = "portable, avx512, avx2";
  a.Merge(d);
  EXPECT_EQ(a.kernels, "avx2, portable, avx512");
}

void ExpectError(const std::string& text, const std::string& needle) {
  Result<Profile> p = ParseProfile(text, "bad.json");
  ASSERT_FALSE(p.ok()) << text;
  EXPECT_NE(p.error().find("bad.json"), std::string::npos) << p.error();
  EXPECT_NE(p.error().find(needle), std::string::npos) << p.error();
}

TEST(Profile, ErrorsNameTheFileAndField) {
  ExpectError("{not json", "invalid JSON");
  ExpectError("[1, 2]", "must be a JSON object");
  ExpectError(R"({"entries": []})", "no \"baton_profile\"");
  ExpectError(Doc("", "2"), "version 2 is not supported");
  ExpectError(Doc("", "\"1\""), "is not supported");
  ExpectError(R"({"baton_profile": 1})", "'entries' must be a list");
  ExpectError(R"({"baton_profile": 1, "kernels": 2, "entries": []})", "'kernels' must be a string");
  EXPECT_TRUE(ParseProfile(R"({"baton_profile": 1, "kernels": null, "entries": []})", "n").ok());
  ExpectError(Doc(R"({"op": "Conv"})"), "entries[0]: 'device'");
  std::string e = Entry("npu0", "npu", 0.1);
  ExpectError(Doc(std::string(e).replace(e.find("\"Conv\""), 6, "\"Frob\"")), "unknown op 'Frob'");
  ExpectError(Doc(std::string(e).replace(e.find("\"npu\""), 5, "\"tpu\"")), "'kind' must be");
  ExpectError(Doc(e + "," + std::string(e).replace(e.find("0.100000"), 8, "-1")),
              "entries[1]: 'median_s' must be a non-negative");
  ExpectError(Doc(std::string(e).replace(e.find("\"runs\": 3"), 9, "\"runs\": 0")),
              "'runs' must be a positive integer");
  ExpectError(Doc(std::string(e).replace(e.find("float32"), 7, "float99")), "inputs[0]: 'dtype'");
}

}  // namespace
}  // namespace baton::planner
