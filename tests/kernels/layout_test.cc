// The layout kernels' shared pieces (runtime/src/kernels/layout.h): prepare
// checks with the caller's messages, contiguous strides, strided view copies
// of every element size, with negative, zero and unit steps.

#include "layout.h"  // runtime/src/kernels (internal)

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "flatbuffers/flatbuffers.h"
#include "kernels/kernel_test_util.h"

namespace baton {
namespace {

using schema::DType;
using schema::Op;
using testing::KernelHarness;

template <typename T>
std::vector<T> Iota(size_t n) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<T>(i);
  return v;
}

TEST(ContiguousStridesTest, ProductOfTheFollowingDims) {
  flatbuffers::FlatBufferBuilder fbb;
  const std::vector<int64_t> shape{2, 3, 4, 5};
  fbb.Finish(schema::CreateTensorDirect(fbb, nullptr, DType::Float32, &shape));
  TensorArg t;
  t.tensor = flatbuffers::GetRoot<schema::Tensor>(fbb.GetBufferPointer());
  int64_t stride[kMaxRank] = {};
  kernels::ContiguousStrides(t, stride);
  EXPECT_EQ(stride[0], 60);
  EXPECT_EQ(stride[1], 20);
  EXPECT_EQ(stride[2], 5);
  EXPECT_EQ(stride[3], 1);
}

TEST(CopyStridedViewTest, RankZeroCopiesOneElement) {
  const std::vector<int32_t> src = Iota<int32_t>(4);
  int32_t out = -1;
  kernels::CopyStridedView(&out, src.data(), 2, nullptr, nullptr, 0, sizeof(int32_t));
  EXPECT_EQ(out, 2);
}

TEST(CopyStridedViewTest, TransposedMatrix) {
  const std::vector<int32_t> src = Iota<int32_t>(12);  // [3, 4]
  const int64_t size[2] = {4, 3};
  const int64_t step[2] = {1, 4};
  std::vector<int32_t> out(12, -1);
  kernels::CopyStridedView(out.data(), src.data(), 0, size, step, 2, sizeof(int32_t));
  EXPECT_EQ(out, (std::vector<int32_t>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
}

TEST(CopyStridedViewTest, ContiguousRowsWithOuterStepAndBase) {
  const std::vector<float> src = Iota<float>(12);  // [3, 4]: rows 1..2, columns 1..2
  const int64_t size[2] = {2, 2};
  const int64_t step[2] = {4, 1};
  std::vector<float> out(4, -1.0f);
  kernels::CopyStridedView(out.data(), src.data(), 5, size, step, 2, sizeof(float));
  EXPECT_EQ(out, (std::vector<float>{5, 6, 9, 10}));
}

TEST(CopyStridedViewTest, NegativeAndZeroStepsForEveryElementSize) {
  const int64_t size[2] = {2, 3};
  const int64_t step[2] = {0, -2};  // row repeated, read backwards in steps of 2
  {
    const std::vector<uint8_t> src = Iota<uint8_t>(6);
    std::vector<uint8_t> out(6);
    kernels::CopyStridedView(out.data(), src.data(), 5, size, step, 2, 1);
    EXPECT_EQ(out, (std::vector<uint8_t>{5, 3, 1, 5, 3, 1}));
  }
  {
    const std::vector<uint16_t> src = Iota<uint16_t>(6);  // byte-wise fallback
    std::vector<uint16_t> out(6);
    kernels::CopyStridedView(out.data(), src.data(), 4, size, step, 2, 2);
    EXPECT_EQ(out, (std::vector<uint16_t>{4, 2, 0, 4, 2, 0}));
  }
  {
    const std::vector<int64_t> src{int64_t{1} << 40, -7, 3, 9, -1, 11};
    std::vector<int64_t> out(6);
    kernels::CopyStridedView(out.data(), src.data(), 5, size, step, 2, 8);
    EXPECT_EQ(out, (std::vector<int64_t>{11, 9, -7, 11, 9, -7}));
  }
}

// Dtype and rank mismatches fail with the op's own message.
TEST(CheckLayoutPrepareTest, NamesTheOp) {
  const struct {
    Op op;
    const char* name;
  } ops[] = {{Op::Slice, "Slice"}, {Op::Transpose, "Transpose"}, {Op::Pad, "Pad"}};
  for (const auto& o : ops) {
    {
      KernelHarness h;
      const int x = h.AddTensor(DType::Float32, {2, 2});
      const int y = h.AddTensor(DType::Int32, {2, 2});
      h.SetNode(o.op, {x}, {y});
      const Status s = h.Prepare();
      EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
      EXPECT_EQ(std::string(s.message()), std::string(o.name) + " dtype mismatch");
    }
    {
      KernelHarness h;
      const int x = h.AddTensor(DType::Float32, {2, 2});
      const int y = h.AddTensor(DType::Float32, {4});
      h.SetNode(o.op, {x}, {y});
      const Status s = h.Prepare();
      EXPECT_EQ(std::string(s.message()), std::string(o.name) + " output rank != input rank");
    }
  }
  KernelHarness h;  // Transpose takes one input
  const int x = h.AddTensor(DType::Float32, {2, 2});
  const int extra = h.AddTensor(DType::Int64, {2});
  const int y = h.AddTensor(DType::Float32, {2, 2});
  h.SetNode(Op::Transpose, {x, extra}, {y});
  EXPECT_EQ(std::string(h.Prepare().message()), "wrong number of inputs");
}

}  // namespace
}  // namespace baton
