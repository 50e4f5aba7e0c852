// Load-time checks (prepare) and workspace sizing of the reference kernels;
// in-place execution and run-time errors. Registration:
// registry_reference_test.cc.

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/kernel_test_util.h"

namespace baton {
namespace {

using schema::DType;
using schema::Op;
using testing::KernelHarness;

constexpr DType kF32 = DType::Float32;

struct ConvArgs {
  std::vector<int64_t> x{1, 4, 8, 8};
  std::vector<int64_t> w{6, 4, 3, 3};
  std::vector<int64_t> y{1, 6, 8, 8};
  std::vector<int32_t> kernel{3, 3}, strides{1, 1}, pads{1, 1, 1, 1}, dilations{1, 1};
  int32_t group = 1;
  bool bias = true;
  bool params = true;
  DType x_dtype = kF32;
};

// Builds a Conv node in `h` and returns prepare's status.
Status PrepareConv(const ConvArgs& a, KernelHarness* h, int64_t workspace_override = -1) {
  const int x = h->AddTensor(a.x_dtype, a.x);
  const int w = h->AddTensor(kF32, a.w);
  const int b = h->AddTensor(kF32, {a.w[0]});
  const int y = h->AddTensor(kF32, a.y);
  std::vector<int> inputs{x, w};
  if (a.bias) inputs.push_back(b);
  if (a.params) {
    h->SetNode(Op::Conv, inputs, {y}, schema::Params::ConvParams,
               [a](flatbuffers::FlatBufferBuilder& fbb) {
                 return schema::CreateConvParamsDirect(fbb, &a.kernel, &a.strides, &a.pads,
                                                       &a.dilations, a.group)
                     .Union();
               });
  } else {
    h->SetNode(Op::Conv, inputs, {y});
  }
  h->OverrideWorkspace(workspace_override);
  return h->Prepare();
}

size_t ConvWorkspace(const ConvArgs& a) {
  KernelHarness h;
  EXPECT_TRUE(PrepareConv(a, &h).ok());
  return h.workspace_bytes();
}

TEST(ConvPrepareTest, AcceptsValidNode) {
  KernelHarness h;
  EXPECT_TRUE(PrepareConv(ConvArgs{}, &h).ok());
}

TEST(ConvPrepareTest, RejectsBadNodes) {
  struct Case {
    const char* what;
    ConvArgs args;
  };
  std::vector<Case> cases;
  ConvArgs a;
  a.x_dtype = DType::Int32;
  cases.push_back({"int32 input", a});
  a = ConvArgs{};
  a.y = {1, 6, 7, 8};
  cases.push_back({"wrong output height", a});
  a = ConvArgs{};
  a.y = {1, 5, 8, 8};
  cases.push_back({"wrong output channels", a});
  a = ConvArgs{};
  a.w = {6, 3, 3, 3};
  cases.push_back({"weight channels != C / group", a});
  a = ConvArgs{};
  a.group = 3;
  cases.push_back({"group does not divide C", a});
  a = ConvArgs{};
  a.kernel = {3, 5};
  cases.push_back({"kernel != weight shape", a});
  a = ConvArgs{};
  a.pads = {1, 1};
  cases.push_back({"pads of the wrong length", a});
  a = ConvArgs{};
  a.strides = {0, 1};
  cases.push_back({"zero stride", a});
  a = ConvArgs{};
  a.params = false;
  cases.push_back({"no ConvParams", a});
  a = ConvArgs{};
  a.x = {4, 8, 8};
  cases.push_back({"rank mismatch", a});
  for (const Case& c : cases) {
    KernelHarness h;
    const Status s = PrepareConv(c.args, &h);
    EXPECT_FALSE(s.ok()) << c.what;
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.what;
  }
}

TEST(ConvPrepareTest, RejectsBadBias) {
  KernelHarness h;
  const int x = h.AddTensor(kF32, {1, 2, 4, 4});
  const int w = h.AddTensor(kF32, {3, 2, 1, 1});
  const int b = h.AddTensor(kF32, {2});
  const int y = h.AddTensor(kF32, {1, 3, 4, 4});
  h.SetNode(Op::Conv, {x, w, b}, {y}, schema::Params::ConvParams,
            [](flatbuffers::FlatBufferBuilder& fbb) {
              const std::vector<int32_t> k{1, 1}, s{1, 1}, p{0, 0, 0, 0}, d{1, 1};
              return schema::CreateConvParamsDirect(fbb, &k, &s, &p, &d, 1).Union();
            });
  EXPECT_FALSE(h.Prepare().ok());
}

TEST(ConvWorkspaceTest, NeedsWorkspaceOnlyForIm2col) {
  ConvArgs a;  // 3x3 pad 1
  EXPECT_GT(ConvWorkspace(a), 0u);
  a.w = {6, 4, 1, 1};
  a.kernel = {1, 1};
  a.pads = {0, 0, 0, 0};
  EXPECT_EQ(ConvWorkspace(a), 0u) << "1x1 stride 1 pad 0 reads its input in place";
  // Depthwise: the channel-block path's workspace for this 8x8 plane (16
  // lanes of the padded 10x10 input, 9 taps, a bias and the 8x8 outputs).
  a = ConvArgs{};
  a.w = {4, 1, 3, 3};
  a.y = {1, 4, 8, 8};
  a.group = 4;
  EXPECT_EQ(ConvWorkspace(a), (10u * 10 + 9 + 1 + 8 * 8) * 16 * sizeof(float));
  a.w = {8, 1, 3, 3};
  a.y = {1, 8, 8, 8};
  EXPECT_EQ(ConvWorkspace(a), (10u * 10 + 9 + 1 + 8 * 8) * 16 * sizeof(float))
      << "multiplier 2: the same block";
}

// A depthwise layer prepares without a workspace too (a plan from before the
// depthwise paths had one: it runs on the row path), and the phase-plane
// workspace of a large plane stays within one L1 block: 16 rows of 114
// padded columns (112 + pads) fit kDwBlockFloats = 4096 floats.
TEST(ConvWorkspaceTest, DepthwiseWorkspaceOptionalAndBounded) {
  ConvArgs a;
  a.x = {1, 32, 112, 112};
  a.w = {32, 1, 3, 3};
  a.y = {1, 32, 112, 112};
  a.group = 32;
  KernelHarness none;
  EXPECT_TRUE(PrepareConv(a, &none, 0).ok());
  // rows = (4096 / 114 - 1 * 3) / 2 = 16; planes (16 + 3) x 114, accumulators 16 x 114.
  EXPECT_EQ(ConvWorkspace(a), (19u * 114 + 16 * 114) * sizeof(float));
}

// Planes that do not fit one channel block whole go in bands of output
// rows sized to kDwBandFloats = 32768 floats: (sh * wp + ow) * 16 floats per
// row beyond a fixed ((kh - sh) * wp + taps + 1) * 16.
TEST(ConvWorkspaceTest, DepthwiseChannelBands) {
  ConvArgs a;  // MobileNetV2's 144@56x56, stride 1
  a.x = {1, 144, 56, 56};
  a.w = {144, 1, 3, 3};
  a.y = {1, 144, 56, 56};
  a.group = 144;
  // (32768 - (2 * 58 + 10) * 16) / ((58 + 56) * 16) = 16 rows reading 18.
  EXPECT_EQ(ConvWorkspace(a), (18u * 58 + 9 + 1 + 16 * 56) * 16 * sizeof(float));
  a.x = {1, 96, 112, 112};  // its 96@112x112, stride 2
  a.w = {96, 1, 3, 3};
  a.y = {1, 96, 56, 56};
  a.group = 96;
  a.strides = {2, 2};
  // (32768 - (1 * 114 + 10) * 16) / ((2 * 114 + 56) * 16) = 6 rows reading 13.
  EXPECT_EQ(ConvWorkspace(a), (13u * 114 + 9 + 1 + 6 * 56) * 16 * sizeof(float));
}

TEST(ConvWorkspaceTest, MissingOrSmallWorkspaceRejected) {
  const size_t need = ConvWorkspace(ConvArgs{});
  ASSERT_GT(need, 0u);
  KernelHarness none;
  EXPECT_EQ(PrepareConv(ConvArgs{}, &none, 0).code(), StatusCode::kInvalidArgument);
  KernelHarness small;
  EXPECT_EQ(PrepareConv(ConvArgs{}, &small, static_cast<int64_t>(need) - 4).code(),
            StatusCode::kInvalidArgument);
  KernelHarness exact;
  EXPECT_TRUE(PrepareConv(ConvArgs{}, &exact, static_cast<int64_t>(need)).ok());
}

// Workspace stays small (im2col is tiled through the GEMM's packing) for the
// largest layers of ResNet-18 and MobileNetV2 at 224x224.
TEST(ConvWorkspaceTest, BoundedForImageNetLayers) {
  struct L {
    int64_t c, hw, m, k, s, group;
  };
  const L layers[] = {
      {3, 224, 64, 7, 2, 1},   {64, 56, 64, 3, 1, 1},   {64, 56, 128, 3, 2, 1},
      {128, 28, 128, 3, 1, 1}, {256, 14, 256, 3, 1, 1}, {512, 7, 512, 3, 1, 1},
      {3, 224, 32, 3, 2, 1},   {32, 112, 32, 3, 1, 32}, {96, 112, 96, 3, 2, 96},
      {144, 56, 24, 1, 1, 1},  {320, 7, 1280, 1, 1, 1}, {960, 7, 960, 3, 1, 960},
  };
  for (const L& l : layers) {
    ConvArgs a;
    const int64_t out = (l.hw + 2 * (l.k / 2) - l.k) / l.s + 1;
    const int32_t k = static_cast<int32_t>(l.k), s = static_cast<int32_t>(l.s),
                  p = static_cast<int32_t>(l.k / 2);
    a.x = {1, l.c, l.hw, l.hw};
    a.w = {l.m, l.c / l.group, l.k, l.k};
    a.y = {1, l.m, out, out};
    a.kernel = {k, k};
    a.strides = {s, s};
    a.pads = {p, p, p, p};
    a.group = static_cast<int32_t>(l.group);
    // 3 MiB: the Winograd cap (conv_winograd.cc), reached by 128 channels at 28x28.
    EXPECT_LE(ConvWorkspace(a), size_t{3} << 20) << "layer c=" << l.c << " hw=" << l.hw;
  }
}

TEST(WorkspaceBytesTest, ZeroForMalformedNodesAndWorkspaceFreeOps) {
  KernelHarness h;
  const int x = h.AddTensor(kF32, {1, 4, 8, 8});
  const int y = h.AddTensor(kF32, {1, 4, 8, 8});
  h.SetNode(Op::Conv, {x}, {y});  // no weight, no params
  EXPECT_FALSE(h.Prepare().ok());
  EXPECT_EQ(h.workspace_bytes(), 0u);
  KernelHarness r;
  const int rx = r.AddTensor(kF32, {2, 3});
  const int ry = r.AddTensor(kF32, {2, 3});
  r.SetNode(Op::Relu, {rx}, {ry});
  EXPECT_TRUE(r.Prepare().ok());
  EXPECT_EQ(r.workspace_bytes(), 0u);
}

TEST(GemmPrepareTest, RejectsMismatches) {
  {
    KernelHarness h;  // inner dims differ
    const int a = h.AddTensor(kF32, {3, 4}), b = h.AddTensor(kF32, {5, 6});
    const int y = h.AddTensor(kF32, {3, 6});
    h.SetNode(Op::Gemm, {a, b}, {y});
    EXPECT_FALSE(h.Prepare().ok());
  }
  {
    KernelHarness h;  // C not broadcastable to [3, 6]
    const int a = h.AddTensor(kF32, {3, 4}), b = h.AddTensor(kF32, {4, 6});
    const int c = h.AddTensor(kF32, {2, 6}), y = h.AddTensor(kF32, {3, 6});
    h.SetNode(Op::Gemm, {a, b, c}, {y});
    EXPECT_FALSE(h.Prepare().ok());
  }
  {
    KernelHarness h;  // trans_b makes it valid
    const int a = h.AddTensor(kF32, {3, 4}), b = h.AddTensor(kF32, {6, 4});
    const int y = h.AddTensor(kF32, {3, 6});
    h.SetNode(Op::Gemm, {a, b}, {y}, schema::Params::GemmParams,
              [](flatbuffers::FlatBufferBuilder& fbb) {
                return schema::CreateGemmParams(fbb, 1.0f, 1.0f, false, true).Union();
              });
    EXPECT_TRUE(h.Prepare().ok());
    EXPECT_GT(h.workspace_bytes(), 0u);
  }
}

TEST(MatMulPrepareTest, RejectsUnbroadcastableBatch) {
  KernelHarness h;
  const int a = h.AddTensor(kF32, {2, 3, 4}), b = h.AddTensor(kF32, {3, 4, 5});
  const int y = h.AddTensor(kF32, {3, 3, 5});
  h.SetNode(Op::MatMul, {a, b}, {y});
  EXPECT_FALSE(h.Prepare().ok());
}

TEST(BinaryPrepareTest, RejectsBadShapes) {
  {
    KernelHarness h;
    const int a = h.AddTensor(kF32, {2, 3}), b = h.AddTensor(kF32, {4});
    const int y = h.AddTensor(kF32, {2, 3});
    h.SetNode(Op::Add, {a, b}, {y});
    EXPECT_FALSE(h.Prepare().ok());
  }
  {
    KernelHarness h;  // output is not the broadcast shape
    const int a = h.AddTensor(kF32, {2, 3}), b = h.AddTensor(kF32, {3});
    const int y = h.AddTensor(kF32, {2, 1});
    h.SetNode(Op::Mul, {a, b}, {y});
    EXPECT_FALSE(h.Prepare().ok());
  }
  {
    KernelHarness h;  // int64 operands are not float32
    const int a = h.AddTensor(DType::Int64, {3}), b = h.AddTensor(DType::Int64, {3});
    const int y = h.AddTensor(DType::Int64, {3});
    h.SetNode(Op::Sub, {a, b}, {y});
    EXPECT_FALSE(h.Prepare().ok());
  }
}

TEST(PoolPrepareTest, ChecksOutputShape) {
  const auto prepare = [](std::vector<int64_t> y_shape, bool ceil) {
    KernelHarness h;
    const int x = h.AddTensor(kF32, {1, 2, 8, 8});
    const int y = h.AddTensor(kF32, y_shape);
    h.SetNode(Op::MaxPool, {x}, {y}, schema::Params::PoolParams,
              [ceil](flatbuffers::FlatBufferBuilder& fbb) {
                const std::vector<int32_t> k{3, 3}, s{2, 2}, p{0, 0, 0, 0}, d{1, 1};
                return schema::CreatePoolParamsDirect(fbb, &k, &s, &p, &d, ceil, false).Union();
              });
    return h.Prepare();
  };
  EXPECT_TRUE(prepare({1, 2, 3, 3}, false).ok());
  EXPECT_FALSE(prepare({1, 2, 4, 4}, false).ok());
  EXPECT_TRUE(prepare({1, 2, 4, 4}, true).ok());
  EXPECT_FALSE(prepare({1, 2, 5, 5}, true).ok());
}

TEST(LayoutPrepareTest, RejectsBadParams) {
  {
    KernelHarness h;  // transpose perm repeats an axis
    const int x = h.AddTensor(kF32, {2, 3}), y = h.AddTensor(kF32, {2, 2});
    h.SetNode(Op::Transpose, {x}, {y}, schema::Params::TransposeParams,
              [](flatbuffers::FlatBufferBuilder& fbb) {
                const std::vector<int32_t> perm{0, 0};
                return schema::CreateTransposeParamsDirect(fbb, &perm).Union();
              });
    EXPECT_FALSE(h.Prepare().ok());
  }
  {
    KernelHarness h;  // slice reads past the end
    const int x = h.AddTensor(kF32, {5}), y = h.AddTensor(kF32, {3});
    h.SetNode(
        Op::Slice, {x}, {y}, schema::Params::SliceParams, [](flatbuffers::FlatBufferBuilder& fbb) {
          const std::vector<int64_t> starts{2}, steps{2};
          return schema::CreateSliceParamsDirect(fbb, &starts, nullptr, nullptr, &steps).Union();
        });
    EXPECT_FALSE(h.Prepare().ok());
  }
  {
    KernelHarness h;  // pad output shape inconsistent with pads
    const int x = h.AddTensor(kF32, {2, 2}), y = h.AddTensor(kF32, {3, 3});
    h.SetNode(Op::Pad, {x}, {y}, schema::Params::PadParams,
              [](flatbuffers::FlatBufferBuilder& fbb) {
                const std::vector<int64_t> pads{1, 1, 1, 1};
                return schema::CreatePadParamsDirect(fbb, &pads, 0, 0.0f).Union();
              });
    EXPECT_FALSE(h.Prepare().ok());
  }
  {
    KernelHarness h;  // softmax axis out of range
    const int x = h.AddTensor(kF32, {2, 2}), y = h.AddTensor(kF32, {2, 2});
    h.SetNode(Op::Softmax, {x}, {y}, schema::Params::AxisParams,
              [](flatbuffers::FlatBufferBuilder& fbb) {
                return schema::CreateAxisParams(fbb, 2).Union();
              });
    EXPECT_FALSE(h.Prepare().ok());
  }
  {
    KernelHarness h;  // reshape to a different element count
    const int x = h.AddTensor(kF32, {2, 3}), y = h.AddTensor(kF32, {5});
    h.SetNode(Op::Reshape, {x}, {y});
    EXPECT_FALSE(h.Prepare().ok());
  }
  {
    KernelHarness h;  // gather with float indices
    const int d = h.AddTensor(kF32, {4, 2}), i = h.AddTensor(kF32, {2});
    const int y = h.AddTensor(kF32, {2, 2});
    h.SetNode(Op::Gather, {d, i}, {y});
    EXPECT_FALSE(h.Prepare().ok());
  }
}

TEST(CopyKernelTest, InPlaceLeavesDataAndCopiesOtherwise) {
  for (Op op : {Op::Copy, Op::Reshape, Op::Flatten, Op::Squeeze, Op::Unsqueeze, Op::Identity}) {
    KernelHarness h;
    const int x = h.AddTensor(kF32, {2, 3});
    const int y = h.AddTensor(kF32, {6});
    h.SetF32(x, {1, 2, 3, 4, 5, 6});
    h.Alias(y, x);  // the planner placed y on top of x
    h.SetNode(op, {x}, {y});
    ASSERT_TRUE(h.Prepare().ok()) << schema::EnumNameOp(op);
    ASSERT_TRUE(h.Eval().ok());
    EXPECT_EQ(h.GetF32(x), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  }
  KernelHarness h;  // int64 data copies byte for byte
  const int x = h.AddTensor(DType::Int64, {3});
  const int y = h.AddTensor(DType::Int64, {3, 1});
  const int64_t values[3] = {-1, int64_t{1} << 40, 7};
  h.SetBytes(x, values, sizeof(values));
  h.SetNode(Op::Unsqueeze, {x}, {y});
  ASSERT_TRUE(h.Prepare().ok());
  ASSERT_TRUE(h.Eval().ok());
  EXPECT_EQ(0, memcmp(h.Data(y), values, sizeof(values)));
}

TEST(ActivationKernelTest, InPlace) {
  KernelHarness h;
  const int x = h.AddTensor(kF32, {5});
  const int y = h.AddTensor(kF32, {5});
  h.SetF32(x, {-2, -1, 0, 1, 2});
  h.Alias(y, x);
  h.SetNode(Op::Relu, {x}, {y});
  ASSERT_TRUE(h.Prepare().ok());
  ASSERT_TRUE(h.Eval().ok());
  EXPECT_EQ(h.GetF32(x), (std::vector<float>{0, 0, 0, 1, 2}));
}

TEST(ConcatKernelTest, SkipsChunksAlreadyInPlace) {
  // The planner may place inputs directly in their slice of the output when
  // the axis is the outermost one: concat then copies only the other input.
  KernelHarness h;
  const int a = h.AddTensor(kF32, {2, 2});
  const int b = h.AddTensor(kF32, {1, 2});
  const int y = h.AddTensor(kF32, {3, 2});
  h.SetF32(y, {1, 2, 3, 4, 0, 0});  // a already written into y's first rows
  h.Alias(a, y);
  h.SetF32(b, {5, 6});
  h.SetNode(
      Op::Concat, {a, b}, {y}, schema::Params::AxisParams,
      [](flatbuffers::FlatBufferBuilder& fbb) { return schema::CreateAxisParams(fbb, 0).Union(); });
  ASSERT_TRUE(h.Prepare().ok());
  ASSERT_TRUE(h.Eval().ok());
  EXPECT_EQ(h.GetF32(y), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST(GatherKernelTest, IndexOutOfRangeFailsAtEval) {
  KernelHarness h;
  const int d = h.AddTensor(kF32, {4, 2});
  const int i = h.AddTensor(DType::Int64, {2});
  const int y = h.AddTensor(kF32, {2, 2});
  const int64_t idx[2] = {1, 4};
  h.SetBytes(i, idx, sizeof(idx));
  h.SetNode(Op::Gather, {d, i}, {y});
  ASSERT_TRUE(h.Prepare().ok());
  EXPECT_EQ(h.Eval().code(), StatusCode::kOutOfRange);
}

TEST(ConvKernelTest, ClampWithoutBiasAndEmptyK) {
  // A 1x1 conv with zero input channels: the output is the clamped bias.
  KernelHarness h;
  const int x = h.AddTensor(kF32, {1, 0, 2, 2});
  const int w = h.AddTensor(kF32, {2, 0, 1, 1});
  const int b = h.AddTensor(kF32, {2});
  const int y = h.AddTensor(kF32, {1, 2, 2, 2});
  h.SetF32(b, {-3.0f, 9.0f});
  h.SetNode(Op::Conv, {x, w, b}, {y}, schema::Params::ConvParams,
            [](flatbuffers::FlatBufferBuilder& fbb) {
              const std::vector<int32_t> k{1, 1}, s{1, 1}, p{0, 0, 0, 0}, d{1, 1};
              const schema::Clamp clamp(0.0f, 6.0f);
              return schema::CreateConvParamsDirect(fbb, &k, &s, &p, &d, 1, &clamp).Union();
            });
  ASSERT_TRUE(h.Prepare().ok());
  ASSERT_TRUE(h.Eval().ok());
  EXPECT_EQ(h.GetF32(y), (std::vector<float>{0, 0, 0, 0, 6, 6, 6, 6}));
}

}  // namespace
}  // namespace baton
