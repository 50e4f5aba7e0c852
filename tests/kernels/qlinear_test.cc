// QLinearConv and QLinearMatMul (runtime/src/kernels/qlinear.cc): what
// prepare rejects, the workspace rule, and eval on degenerate scales. Their
// arithmetic is KernelRefTest.QLinear's (reference_test.cc, against
// make_refs.py's integer reference, which qlinear_vs_ort.py checks against
// ONNX Runtime).

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/kernel_test_util.h"

namespace baton {
namespace {

using schema::DType;
using schema::Op;
using testing::KernelHarness;

constexpr DType kF32 = DType::Float32;
constexpr DType kU8 = DType::UInt8;
constexpr DType kS8 = DType::Int8;
constexpr DType kS32 = DType::Int32;

struct Desc {
  DType dtype;
  std::vector<int64_t> shape;
};

// A QLinear node: inputs in ONNX order (absent: shape {-1}), one output.
struct QNode {
  Op op = Op::QLinearConv;
  std::vector<Desc> inputs;
  Desc output;
  // ConvParams (op QLinearConv) or GemmParams (QLinearMatMul) fields.
  bool params = true;
  std::vector<int32_t> kernel{3, 3}, strides{1, 1}, pads{1, 1, 1, 1}, dilations{1, 1};
  int32_t group = 1;
  bool trans_a = false, trans_b = false;
  bool wrong_params_type = false;
  bool clamp = false;
  float clamp_min = 0.0f, clamp_max = 0.0f;
};

// x [1, 4, 6, 6] uint8, w [6, 4, 3, 3] int8 per channel, bias, y uint8.
QNode ConvNode() {
  QNode n;
  n.inputs = {{kU8, {1, 4, 6, 6}}, {kF32, {}}, {kU8, {}}, {kS8, {6, 4, 3, 3}}, {kF32, {6}},
              {kS8, {6}},          {kF32, {}}, {kU8, {}}, {kS32, {6}}};
  n.output = {kU8, {1, 6, 6, 6}};
  return n;
}

// a [2, 3, 5] int8, b [5, 7] int8 per column, y int8.
QNode MatMulNode() {
  QNode n;
  n.op = Op::QLinearMatMul;
  n.inputs = {{kS8, {2, 3, 5}}, {kF32, {1}}, {kS8, {1}}, {kS8, {5, 7}},
              {kF32, {7}},      {kS8, {7}},  {kF32, {}}, {kS8, {}}};
  n.output = {kS8, {2, 3, 7}};
  return n;
}

// Adds the node's tensors to `h`; returns the output's id.
int Build(const QNode& n, KernelHarness* h) {
  std::vector<int> ids;
  for (const Desc& d : n.inputs) {
    const bool absent = d.shape.size() == 1 && d.shape[0] == -1;
    ids.push_back(absent ? -1 : h->AddTensor(d.dtype, d.shape));
  }
  const int y = h->AddTensor(n.output.dtype, n.output.shape);
  if (!n.params) {
    h->SetNode(n.op, ids, {y});
  } else if ((n.op == Op::QLinearConv) != n.wrong_params_type) {
    h->SetNode(
        n.op, ids, {y}, schema::Params::ConvParams, [n](flatbuffers::FlatBufferBuilder& fbb) {
          const schema::Clamp c(n.clamp_min, n.clamp_max);
          return schema::CreateConvParamsDirect(fbb, &n.kernel, &n.strides, &n.pads, &n.dilations,
                                                n.group, n.clamp ? &c : nullptr)
              .Union();
        });
  } else {
    h->SetNode(n.op, ids, {y}, schema::Params::GemmParams,
               [n](flatbuffers::FlatBufferBuilder& fbb) {
                 const schema::Clamp c(n.clamp_min, n.clamp_max);
                 return schema::CreateGemmParams(fbb, 1.0f, 1.0f, n.trans_a, n.trans_b,
                                                 n.clamp ? &c : nullptr)
                     .Union();
               });
  }
  return y;
}

Status Prepare(const QNode& n, KernelHarness* h, int64_t workspace = -1) {
  Build(n, h);
  h->OverrideWorkspace(workspace);
  return h->Prepare();
}

size_t Workspace(const QNode& n) {
  KernelHarness h;
  EXPECT_TRUE(Prepare(n, &h).ok());
  return h.workspace_bytes();
}

void ExpectRejected(const char* what, const QNode& n) {
  KernelHarness h;
  const Status s = Prepare(n, &h);
  EXPECT_FALSE(s.ok()) << what;
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << what;
}

TEST(QLinearPrepareTest, AcceptsValidNodes) {
  KernelHarness conv;
  EXPECT_TRUE(Prepare(ConvNode(), &conv).ok());
  QNode n = ConvNode();
  n.inputs.pop_back();  // no bias
  n.inputs[4].shape = {1};
  n.inputs[5].shape = {};  // per-tensor w
  KernelHarness no_bias;
  EXPECT_TRUE(Prepare(n, &no_bias).ok());
  n.inputs.push_back({kS32, {-1}});  // bias slot present but absent
  KernelHarness absent_bias;
  EXPECT_TRUE(Prepare(n, &absent_bias).ok());
  n = ConvNode();
  n.inputs[0] = {kS8, {1, 4, 6}};  // 1-D, int8 x, uint8 w and int8 y
  n.inputs[2].dtype = kS8;
  n.inputs[3] = {kU8, {6, 2, 3}};
  n.inputs[5].dtype = kU8;
  n.inputs[7].dtype = kS8;
  n.output = {kS8, {1, 6, 6}};
  n.kernel = {3};
  n.strides = {1};
  n.pads = {1, 1};
  n.dilations = {1};
  n.group = 2;
  KernelHarness one_d;
  EXPECT_TRUE(Prepare(n, &one_d).ok());

  KernelHarness mm;
  EXPECT_TRUE(Prepare(MatMulNode(), &mm).ok());
  QNode m = MatMulNode();
  m.params = false;  // ONNX's QLinearMatMul: no transpose, no clamp
  KernelHarness mm_plain;
  EXPECT_TRUE(Prepare(m, &mm_plain).ok());
  m = MatMulNode();
  m.trans_b = true;
  m.inputs[3].shape = {7, 5};
  m.inputs.push_back({kS32, {7}});
  KernelHarness mm_fused;
  EXPECT_TRUE(Prepare(m, &mm_fused).ok());
  m = MatMulNode();
  m.inputs[0].shape = {5};  // a vector: y [N]
  m.output.shape = {7};
  KernelHarness mm_vec;
  EXPECT_TRUE(Prepare(m, &mm_vec).ok());
}

TEST(QLinearPrepareTest, RejectsBadConvNodes) {
  QNode n = ConvNode();
  n.inputs[0].dtype = kF32;
  ExpectRejected("float x", n);
  n = ConvNode();
  n.inputs[3].dtype = kS32;
  ExpectRejected("int32 w", n);
  n = ConvNode();
  n.output.dtype = kF32;
  ExpectRejected("float output", n);
  n = ConvNode();
  n.output.dtype = kS8;
  ExpectRejected("output dtype != y_zero_point dtype", n);
  n = ConvNode();
  n.inputs[2].dtype = kS8;
  ExpectRejected("x_zero_point dtype != x dtype", n);
  n = ConvNode();
  n.inputs[1].shape = {2};
  ExpectRejected("two x scales", n);
  n = ConvNode();
  n.inputs[6].dtype = kU8;
  ExpectRejected("uint8 y_scale", n);
  n = ConvNode();
  n.inputs[6].shape = {1, 1};
  ExpectRejected("2-D y_scale", n);
  n = ConvNode();
  n.inputs[4].shape = {3};
  ExpectRejected("w_scale neither 1 nor M values", n);
  n = ConvNode();
  n.inputs[5].dtype = kU8;
  ExpectRejected("w_zero_point dtype != w dtype", n);
  n = ConvNode();
  n.inputs[5].shape = {5};
  ExpectRejected("w_zero_point neither 1 nor M values", n);
  n = ConvNode();
  n.inputs[8].dtype = kS8;
  ExpectRejected("int8 bias", n);
  n = ConvNode();
  n.inputs[8].shape = {5};
  ExpectRejected("bias of 5 for 6 channels", n);
  n = ConvNode();
  n.inputs[8].shape = {1, 6};
  ExpectRejected("2-D bias", n);
  n = ConvNode();
  n.inputs.resize(7);
  ExpectRejected("no y_zero_point", n);
  n = ConvNode();
  n.inputs[2].shape = {-1};
  ExpectRejected("absent x_zero_point", n);
  n = ConvNode();
  n.params = false;
  ExpectRejected("no ConvParams", n);
  n = ConvNode();
  n.wrong_params_type = true;
  ExpectRejected("GemmParams", n);
  n = ConvNode();
  n.group = 3;
  ExpectRejected("group does not divide C", n);
  n = ConvNode();
  n.group = 2;
  ExpectRejected("weight dim 1 != C / group", n);
  n = ConvNode();
  n.output.shape = {1, 6, 5, 6};
  ExpectRejected("wrong output height", n);
  n = ConvNode();
  n.output.shape = {1, 5, 6, 6};
  ExpectRejected("wrong output channels", n);
  n = ConvNode();
  n.kernel = {3, 2};
  ExpectRejected("kernel != weight shape", n);
  n = ConvNode();
  n.inputs[3].shape = {6, 4, 3};
  ExpectRejected("weight rank", n);
  n = ConvNode();
  n.pads = {1, 1};
  ExpectRejected("pads length", n);
  n = ConvNode();
  n.inputs[0].shape = {0, 4, int64_t{1} << 32, 6};
  n.output.shape = {0, 6, int64_t{1} << 32, 6};
  ExpectRejected("dimension beyond int32", n);
}

// 255 * 255 * K must fit in int32: K = 33025 is the largest reduction.
TEST(QLinearPrepareTest, ReductionSizeBound) {
  QNode n = ConvNode();
  n.inputs[0].shape = {1, 33025, 1, 1};
  n.inputs[3].shape = {2, 33025, 1, 1};
  n.inputs[4].shape = {2};
  n.inputs[5].shape = {2};
  n.inputs[8].shape = {2};
  n.output.shape = {1, 2, 1, 1};
  n.kernel = {1, 1};
  n.pads = {0, 0, 0, 0};
  const size_t ws = Workspace(n);
  EXPECT_GT(ws, 0u);
  EXPECT_LE(ws, size_t{300} << 10);
  n.inputs[0].shape = {1, 33026, 1, 1};
  n.inputs[3].shape = {2, 33026, 1, 1};
  ExpectRejected("K = 33026", n);
  n.inputs[0].shape = {1, 3700, 3, 3};
  n.inputs[3].shape = {2, 3700, 3, 3};
  n.kernel = {3, 3};
  ExpectRejected("K = 3700 * 9", n);

  QNode m = MatMulNode();
  m.inputs[0].shape = {3, 33025};
  m.inputs[3].shape = {33025, 7};
  m.output.shape = {3, 7};
  KernelHarness h;
  EXPECT_TRUE(Prepare(m, &h).ok());
  m.inputs[0].shape = {3, 33026};
  m.inputs[3].shape = {33026, 7};
  ExpectRejected("matmul K = 33026", m);
}

TEST(QLinearPrepareTest, RejectsBadMatMulNodes) {
  QNode n = MatMulNode();
  n.inputs[3].shape = {1, 5, 7};
  ExpectRejected("3-D b", n);
  n = MatMulNode();
  n.inputs[3].shape = {5};
  ExpectRejected("1-D b", n);
  n = MatMulNode();
  n.trans_a = true;
  ExpectRejected("trans_a", n);
  n = MatMulNode();
  n.trans_b = true;
  ExpectRejected("trans_b with b [K, N]", n);
  n = MatMulNode();
  n.inputs[3].shape = {4, 7};
  ExpectRejected("inner dimensions differ", n);
  n = MatMulNode();
  n.output.shape = {2, 3, 6};
  ExpectRejected("output columns", n);
  n = MatMulNode();
  n.output.shape = {1, 3, 7};
  ExpectRejected("output batch", n);
  n = MatMulNode();
  n.output.shape = {6, 7};
  ExpectRejected("output rank", n);
  n = MatMulNode();
  n.inputs[0].shape = {};
  n.output.shape = {};
  ExpectRejected("scalar a", n);
  n = MatMulNode();
  n.wrong_params_type = true;
  ExpectRejected("ConvParams", n);
  n = MatMulNode();
  n.inputs[4].shape = {5};
  ExpectRejected("b_scale neither 1 nor N values", n);
  n = MatMulNode();
  n.inputs[5].dtype = kU8;
  ExpectRejected("b_zero_point dtype", n);
  n = MatMulNode();
  n.inputs.push_back({kS32, {5}});
  ExpectRejected("bias of 5 for 7 columns", n);
  n = MatMulNode();
  n.inputs[0].dtype = kU8;
  ExpectRejected("a_zero_point dtype != a dtype", n);
}

// Depthwise layers hold one channel's padded rows; the im2col blocks stay
// within ~80 KiB for ImageNet-size layers; a missing or short workspace is
// rejected.
TEST(QLinearWorkspaceTest, SizesAndChecks) {
  QNode n = ConvNode();
  n.inputs[3].shape = {4, 1, 3, 3};
  n.inputs[4].shape = {4};
  n.inputs[5].shape = {4};
  n.inputs[8].shape = {4};
  n.output.shape = {1, 4, 6, 6};
  n.group = 4;
  // Phase plane: 6 + 2 padded rows of 8 int16; accumulators: 6 rows of 8.
  EXPECT_EQ(Workspace(n), 8u * 8 * 2 + 6 * 8 * 4);

  const size_t need = Workspace(ConvNode());
  // 18 pairs of K = 36 for 48 columns (36 rounded up to 16) of int16, and
  // a tile of 4 widened weight rows.
  EXPECT_EQ(need, 18u * 48 * 2 * 2 + 18 * 4 * 2 * 2);
  KernelHarness none;
  EXPECT_EQ(Prepare(ConvNode(), &none, 0).code(), StatusCode::kInvalidArgument);
  KernelHarness small;
  EXPECT_EQ(Prepare(ConvNode(), &small, static_cast<int64_t>(need) - 1).code(),
            StatusCode::kInvalidArgument);
  KernelHarness exact;
  EXPECT_TRUE(Prepare(ConvNode(), &exact, static_cast<int64_t>(need)).ok());

  for (int64_t c : {int64_t{3}, int64_t{64}, int64_t{512}}) {
    n = ConvNode();
    n.inputs[0].shape = {1, c, 56, 56};
    n.inputs[3].shape = {64, c, 3, 3};
    n.inputs[4].shape = {64};
    n.inputs[5].shape = {64};
    n.inputs[8].shape = {64};
    n.output.shape = {1, 64, 56, 56};
    EXPECT_LE(Workspace(n), size_t{80} << 10) << "C = " << c;
  }

  // QLinearMatMul: b [K, N] is packed into rows, b [N, K] read in place.
  QNode m = MatMulNode();
  const size_t packed = Workspace(m);
  m.trans_b = true;
  m.inputs[3].shape = {7, 5};
  EXPECT_EQ(packed, Workspace(m) + 7 * 5);
}

// Returns y for a K = 1 QLinearMatMul of int8 a [4, 1] and b [[1]], with the
// given scales and clamp (zero points 0).
std::vector<int8_t> MatMulK1(float a_scale, float y_scale, bool clamp = false, float lo = 0.0f,
                             float hi = 0.0f) {
  QNode n = MatMulNode();
  n.inputs[0].shape = {4, 1};
  n.inputs[3].shape = {1, 1};
  n.inputs[4].shape = {};
  n.inputs[5].shape = {};
  n.output.shape = {4, 1};
  n.clamp = clamp;
  n.clamp_min = lo;
  n.clamp_max = hi;
  KernelHarness h;
  const int y = Build(n, &h);
  EXPECT_TRUE(h.Prepare().ok());
  const int8_t a[4] = {-2, 0, 3, 1};
  const int8_t b = 1, zero = 0;
  const float one = 1.0f;
  h.SetBytes(0, a, sizeof(a));
  h.SetBytes(1, &a_scale, sizeof(float));
  h.SetBytes(2, &zero, 1);
  h.SetBytes(3, &b, 1);
  h.SetBytes(4, &one, sizeof(float));
  h.SetBytes(5, &zero, 1);
  h.SetBytes(6, &y_scale, sizeof(float));
  h.SetBytes(7, &zero, 1);
  EXPECT_TRUE(h.Eval().ok());
  std::vector<int8_t> out(4);
  memcpy(out.data(), h.Data(y), 4);
  return out;
}

// Scales make inf and NaN products; each output still lands in range, NaN at
// the low end (as ONNX Runtime's maxps), and a NaN clamp bound is no bound.
TEST(QLinearEvalTest, DegenerateScalesStayDefined) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(MatMulK1(1.0f, 1.0f), (std::vector<int8_t>{-2, 0, 3, 1}));
  EXPECT_EQ(MatMulK1(1.0f, 0.0f), (std::vector<int8_t>{-128, -128, 127, 127}));  // 0 * inf
  EXPECT_EQ(MatMulK1(nan, 1.0f), (std::vector<int8_t>{-128, -128, -128, -128}));
  EXPECT_EQ(MatMulK1(inf, inf), (std::vector<int8_t>{-128, -128, -128, -128}));
  EXPECT_EQ(MatMulK1(1.0f, 1.0f, true, nan, nan), (std::vector<int8_t>{-2, 0, 3, 1}));
  EXPECT_EQ(MatMulK1(1.0f, 1.0f, true, 0.0f, inf), (std::vector<int8_t>{0, 0, 3, 1}));
  EXPECT_EQ(MatMulK1(1.0f, 1.0f, true, -1.5f, 0.5f), (std::vector<int8_t>{-2, 0, 0, 0}))
      << "bounds -1.5 and 0.5 round half to even";
  EXPECT_EQ(MatMulK1(1.0f, 1.0f, true, 5.0f, -5.0f), (std::vector<int8_t>{-5, -5, -5, -5}))
      << "min > max: max wins, as clamp(v, lo, hi) = min(max(v, lo), hi)";
}

}  // namespace
}  // namespace baton
