// ReadPackCsv / WritePackCsv: round trip, the offset column, and errors that
// name the line.

#include <gtest/gtest.h>

#include "baton/planner/memory/pack.h"

namespace baton::planner {
namespace {

TEST(PackCsv, ReadsMiniMallocFormat) {
  auto r = ReadPackCsv("id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\n");
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].id, "b1");
  EXPECT_EQ((*r)[0].lower, 0);
  EXPECT_EQ((*r)[0].upper, 3);
  EXPECT_EQ((*r)[0].size, 4);
  EXPECT_EQ((*r)[1].id, "b2");
  EXPECT_EQ((*r)[1].lower, 3);
}

TEST(PackCsv, RoundTrip) {
  const std::vector<PackBuffer> buffers = {{"x", 0, 10, 1024}, {"y", 5, 7, 3}, {"z", -2, 1, 9}};
  const std::string text = WritePackCsv(buffers, {0, 1024, 0});
  EXPECT_EQ(text, "id,lower,upper,size,offset\nx,0,10,1024,0\ny,5,7,3,1024\nz,-2,1,9,0\n");
  auto back = ReadPackCsv(text);  // the offset column is accepted and ignored
  ASSERT_TRUE(back.ok()) << back.error();
  ASSERT_EQ(back->size(), buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    EXPECT_EQ((*back)[i].id, buffers[i].id);
    EXPECT_EQ((*back)[i].lower, buffers[i].lower);
    EXPECT_EQ((*back)[i].upper, buffers[i].upper);
    EXPECT_EQ((*back)[i].size, buffers[i].size);
  }
  EXPECT_EQ(WritePackCsv(buffers, {}), "id,lower,upper,size\nx,0,10,1024\ny,5,7,3\nz,-2,1,9\n");
}

TEST(PackCsv, ToleratesCrLfSpacesBlankLinesAndColumnOrder) {
  auto r = ReadPackCsv("\xEF\xBB\xBFsize, id ,upper,lower\r\n\r\n 8 , a , 2 , 1 \r\n\n");
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].id, "a");
  EXPECT_EQ((*r)[0].lower, 1);
  EXPECT_EQ((*r)[0].upper, 2);
  EXPECT_EQ((*r)[0].size, 8);
}

TEST(PackCsv, HeaderOnlyIsEmpty) {
  auto r = ReadPackCsv("id,lower,upper,size\n");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_TRUE(r->empty());
}

void ExpectError(const std::string& text, const std::string& fragment) {
  auto r = ReadPackCsv(text);
  ASSERT_FALSE(r.ok()) << "accepted: " << text;
  EXPECT_NE(r.error().find(fragment), std::string::npos) << r.error();
}

TEST(PackCsv, ErrorsNameTheLine) {
  ExpectError("", "line 1: missing header");
  ExpectError("id,lower,upper\n", "line 1: header lacks the column 'size'");
  ExpectError("id,lower,upper,size,colour\n", "line 1: unknown column 'colour'");
  ExpectError("id,lower,upper,size,size\n", "line 1: column 'size' appears twice");
  ExpectError("id,lower,upper,size\na,0,1,4\nb,0,1\n", "line 3: expected 4 fields, got 3");
  ExpectError("id,lower,upper,size\na,0,x,4\n", "line 2: upper 'x' is not an integer");
  ExpectError("id,lower,upper,size\na,0,1,4.5\n", "line 2: size '4.5' is not an integer");
  ExpectError("id,lower,upper,size\na,0,1,99999999999999999999\n", "line 2: size");
  ExpectError("id,lower,upper,size\na,0,1,\n", "line 2: size '' is not an integer");
  ExpectError("id,lower,upper,size\na,3,3,4\n", "line 2: upper (3) must be greater than lower (3)");
  ExpectError("id,lower,upper,size\na,0,1,0\n", "line 2: size must be > 0");
  ExpectError("id,lower,upper,size\na,0,1,-4\n", "line 2: size must be > 0");
  ExpectError("id,lower,upper,size\n,0,1,4\n", "line 2: empty id");
  ExpectError("id,lower,upper,size\na,0,1,4\n\nb,0,1,4\na,2,3,4\n",
              "line 5: duplicate id 'a' (first on line 2)");
}

}  // namespace
}  // namespace baton::planner
