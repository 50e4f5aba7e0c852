// LowerCustomParams (emit/lower.h): the CustomParams of a custom op, read
// back with the runtime's reader (baton/custom_op.h), which verifies the
// nested buffer; the bytes depend only on the name and the attributes.

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>

#include "baton/custom_op.h"
#include "baton/planner/emit/lower.h"

namespace baton::planner {
namespace {

std::map<std::string, Attr> EveryKind() {
  std::map<std::string, Attr> attrs;
  attrs["i"].kind = Attr::Kind::kInt;
  attrs["i"].i = -7;
  attrs["f"].kind = Attr::Kind::kFloat;
  attrs["f"].f = 0.25f;
  attrs["s"].kind = Attr::Kind::kString;
  attrs["s"].s = "text";
  attrs["is"].kind = Attr::Kind::kInts;
  attrs["is"].ints = {4, 5};
  attrs["fs"].kind = Attr::Kind::kFloats;
  attrs["fs"].floats = {1.5f};
  attrs["ss"].kind = Attr::Kind::kStrings;
  attrs["ss"].strings = {"a", "bc"};
  Attr& t = attrs["t"];
  t.kind = Attr::Kind::kTensor;
  t.t.dtype = DType::Int32;
  t.t.shape = {3};
  const int32_t values[3] = {1, -2, 3};
  t.t.data.assign(reinterpret_cast<const uint8_t*>(values),
                  reinterpret_cast<const uint8_t*>(values) + sizeof(values));
  return attrs;
}

// A finished buffer holding one Node with `params`, for the reader.
std::string NodeBytes(const std::map<std::string, Attr>& attrs) {
  flatbuffers::FlatBufferBuilder b;
  auto params = LowerCustomParams(&b, "com.example::Op", attrs);
  EXPECT_TRUE(params.ok()) << params.error();
  EXPECT_EQ(params.value().type, schema::Params::CustomParams);
  auto node =
      schema::CreateNodeDirect(b, "n", schema::Op::Custom, 0, 0, 0, nullptr, nullptr, nullptr,
                               nullptr, params.value().type, params.value().offset);
  b.Finish(node);
  return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
}

TEST(LowerCustomParamsTest, EveryKindReadsBackSortedByName) {
  const std::string bytes = NodeBytes(EveryKind());
  alignas(16) uint8_t aligned[4096];
  ASSERT_LE(bytes.size(), sizeof(aligned));
  std::memcpy(aligned, bytes.data(), bytes.size());
  const schema::Node* node = flatbuffers::GetRoot<schema::Node>(aligned);
  CustomAttributes attrs;
  ASSERT_TRUE(CustomAttributes::Load(*node, &attrs).ok());
  EXPECT_STREQ(attrs.op_name(), "com.example::Op");
  ASSERT_EQ(attrs.size(), 7u);
  const char* sorted[] = {"f", "fs", "i", "is", "s", "ss", "t"};
  for (uint32_t k = 0; k < 7; ++k) EXPECT_STREQ(attrs.Get(k)->name()->c_str(), sorted[k]);
  int64_t i = 0;
  float f = 0;
  EXPECT_TRUE(attrs.Int("i", &i));
  EXPECT_EQ(i, -7);
  EXPECT_TRUE(attrs.Float("f", &f));
  EXPECT_EQ(f, 0.25f);
  EXPECT_STREQ(attrs.String("s"), "text");
  int64_t ints[4];
  EXPECT_EQ(attrs.Ints("is", ints, 4), 2);
  EXPECT_EQ(ints[1], 5);
  float floats[4];
  EXPECT_EQ(attrs.Floats("fs", floats, 4), 1);
  EXPECT_EQ(attrs.Find("ss")->kind(), schema::AttributeKind::Strings);
  EXPECT_EQ(attrs.Find("ss")->strings()->Get(1)->str(), "bc");
  CustomAttributes::TensorValue t;
  ASSERT_TRUE(attrs.Tensor("t", &t));
  EXPECT_EQ(t.dtype, DType::Int32);
  EXPECT_EQ(t.rank, 1u);
  EXPECT_EQ(t.dims[0], 3);
  int32_t values[3];
  std::memcpy(values, t.data, sizeof(values));
  EXPECT_EQ(values[1], -2);
}

TEST(LowerCustomParamsTest, BytesDependOnlyOnNameAndAttributes) {
  EXPECT_EQ(NodeBytes(EveryKind()), NodeBytes(EveryKind()));
  std::map<std::string, Attr> other = EveryKind();
  other["i"].i = -8;
  EXPECT_NE(NodeBytes(EveryKind()), NodeBytes(other));
}

TEST(LowerCustomParamsTest, TensorDataMustMatchItsShape) {
  std::map<std::string, Attr> attrs = EveryKind();
  attrs["t"].t.shape = {4};
  flatbuffers::FlatBufferBuilder b;
  auto params = LowerCustomParams(&b, "com.example::Op", attrs);
  ASSERT_FALSE(params.ok());
  EXPECT_NE(params.error().find("'t'"), std::string::npos) << params.error();
  EXPECT_FALSE(LowerCustomParams(&b, "", {}).ok());
}

}  // namespace
}  // namespace baton::planner
