// QLinearConv through its kernel (runtime/src/kernels/qlinear.cc) with every
// instruction set the build and CPU have: each must give the portable copy's
// bytes. The shapes reach the int8-weight quad path (QConvQuads: the AVX-512
// VNNI and aarch64 dot-product copies), the dot-product path (uint8 weights,
// the portable copy) and the depthwise one, with reductions K that are not a
// multiple of 4, output counts that are not a multiple of 16, per-channel
// weight zero points, bias, groups and int8 and uint8 activations at their
// extremes. The portable copy is held to ONNX Runtime by the host's tests
// (tests/kernels); this is what the aarch64 cross ctest runs for the op.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "baton/kernels.h"
#include "baton/plan_view.h"
#include "plan_builder.h"
#include "test_util.h"

namespace baton::testing {
namespace {

using schema::DType;

struct QConvCase {
  const char* name;
  int64_t c, h, w, m, k, stride, pad, group;
  DType x_dtype, w_dtype;
};

class Bytes {
 public:
  explicit Bytes(uint32_t seed) : state_(seed * 2654435761u + 1) {}
  uint8_t Next() {
    state_ = state_ * 1103515245u + 12345u;
    return static_cast<uint8_t>(state_ >> 16);
  }

 private:
  uint32_t state_;
};

// The output bytes of one QLinearConv with the active instruction set.
std::vector<uint8_t> RunQConv(const QConvCase& t) {
  const int64_t oh = (t.h + 2 * t.pad - t.k) / t.stride + 1;
  const int64_t ow = (t.w + 2 * t.pad - t.k) / t.stride + 1;
  const int64_t cg = t.c / t.group;
  const std::vector<int64_t> xs = {1, t.c, t.h, t.w}, ws = {t.m, cg, t.k, t.k},
                             ys = {1, t.m, oh, ow}, one = {1}, per = {t.m};
  PlanBuilder b;
  const uint32_t dram = b.Domain("dram", 1 << 24);
  const uint32_t cpu = b.Queue("cpu0", DeviceKind::Cpu, {dram});
  uint64_t offset = 0;
  const auto arena = [&](const char* name, const std::vector<int64_t>& shape, DType dtype) {
    const uint32_t id = b.Arena(name, shape, dram, offset, 1, 0, dtype);
    offset += (PlanBuilder::Bytes(shape, dtype) + 63) / 64 * 64;
    return static_cast<int32_t>(id);
  };
  const std::vector<int32_t> inputs = {
      arena("x", xs, t.x_dtype),         arena("xs", one, DType::Float32),
      arena("xz", one, t.x_dtype),       arena("w", ws, t.w_dtype),
      arena("wsc", per, DType::Float32), arena("wz", per, t.w_dtype),
      arena("ys", one, DType::Float32),  arena("yz", one, t.x_dtype),
      arena("bias", per, DType::Int32)};
  const auto y = static_cast<uint32_t>(arena("y", ys, t.x_dtype));
  const std::vector<int32_t> kernel = {static_cast<int32_t>(t.k), static_cast<int32_t>(t.k)},
                             strides = {static_cast<int32_t>(t.stride),
                                        static_cast<int32_t>(t.stride)},
                             pads(4, static_cast<int32_t>(t.pad)), dilations = {1, 1};
  const auto params = schema::CreateConvParamsDirect(b.fbb(), &kernel, &strides, &pads, &dilations,
                                                     static_cast<int32_t>(t.group));
  b.Node("q", Op::QLinearConv, cpu, inputs, {y}, {}, 0, schema::Params::ConvParams, params.Union(),
         {});
  b.Inputs({static_cast<uint32_t>(inputs[0])});
  b.Outputs({y});
  const AlignedPlan plan = b.Finish();
  PlanView view;
  EXPECT_TRUE(PlanView::Load(plan.data(), plan.size(), &view).ok());

  // The data, the same for every ISA (seeded by the case).
  Bytes rng(static_cast<uint32_t>(t.c * 131 + t.m * 17 + t.k));
  std::vector<std::vector<uint8_t>> data;
  const auto fill = [&](size_t bytes) {
    data.emplace_back(bytes);
    for (auto& v : data.back()) v = rng.Next();
    return data.back().data();
  };
  std::vector<TensorArg> args;
  const schema::Node* node = view.node(0);
  for (int32_t id : *node->inputs()) {
    TensorArg a;
    a.tensor = view.tensor(static_cast<uint32_t>(id));
    a.data = fill(a.bytes());
    args.push_back(a);
  }
  // x: runs of the extreme bytes too (0x00, 0x7F, 0x80, 0xFF).
  uint8_t* x = static_cast<uint8_t*>(args[0].data);
  for (size_t i = 0; i < args[0].bytes(); i += 7)
    x[i] = static_cast<uint8_t>(0x7F + (i % 3) * 0x80);
  uint8_t* w = static_cast<uint8_t*>(args[3].data);
  for (size_t i = 0; i < args[3].bytes(); i += 5) w[i] = i % 2 != 0 ? 0x80 : 0x7F;
  // Scales: x 0.02, w 0.01 per channel varying, y chosen so outputs spread.
  const auto set_float = [](const TensorArg& a, size_t i, float v) { a.f32()[i] = v; };
  set_float(args[1], 0, 0.02f);
  for (int64_t c = 0; c < t.m; ++c)
    set_float(args[4], static_cast<size_t>(c), 0.004f + 0.001f * static_cast<float>(c % 5));
  set_float(args[6], 0, 0.05f * static_cast<float>(cg * t.k * t.k) / 9.0f);
  auto* bias = static_cast<int32_t*>(args[8].data);
  for (int64_t c = 0; c < t.m; ++c) bias[c] = static_cast<int32_t>(c * 997 % 4001) - 2000;

  TensorArg out;
  out.tensor = view.tensor(y);
  out.data = fill(out.bytes());
  args.push_back(out);
  KernelCall call;
  call.node = node;
  call.inputs = args.data();
  call.num_inputs = static_cast<uint32_t>(args.size() - 1);
  call.outputs = args.data() + call.num_inputs;
  call.num_outputs = 1;
  const size_t ws_bytes = WorkspaceBytes(call);
  // The workspace as a tensor the kernel can check: its bytes only matter.
  flatbuffers::FlatBufferBuilder fbb;
  const std::vector<int64_t> ws_shape = {static_cast<int64_t>(ws_bytes)};
  fbb.Finish(schema::CreateTensorDirect(fbb, "ws", DType::UInt8, &ws_shape, ws_bytes,
                                        schema::Storage::Arena, 0, 0, 1, 0));
  TensorArg wsa;
  wsa.tensor = flatbuffers::GetRoot<schema::Tensor>(fbb.GetBufferPointer());
  std::vector<uint64_t> ws_storage(ws_bytes / 8 + 2);
  wsa.data = ws_storage.data();
  call.workspace = &wsa;
  call.num_workspace = ws_bytes > 0 ? 1 : 0;
  const Kernel* kernel_fn = ReferenceRegistry().Find(Op::QLinearConv, DeviceKind::Cpu);
  EXPECT_NE(kernel_fn, nullptr);
  if (kernel_fn == nullptr) return {};
  Status s = kernel_fn->prepare != nullptr ? kernel_fn->prepare(call) : Status::Ok();
  EXPECT_TRUE(s.ok()) << s.message();
  s = kernel_fn->eval(call);
  EXPECT_TRUE(s.ok()) << s.message();
  const auto* yb = static_cast<const uint8_t*>(out.data);
  return std::vector<uint8_t>(yb, yb + out.bytes());
}

TEST(QLinearConvIsaTest, EveryIsaGivesThePortableBytes) {
  const QConvCase cases[] = {
      {"pointwise_int8", 37, 9, 7, 11, 1, 1, 0, 1, DType::Int8, DType::Int8},
      {"pointwise_uint8_x", 20, 5, 5, 9, 1, 1, 0, 1, DType::UInt8, DType::Int8},
      {"3x3_k45", 5, 11, 13, 10, 3, 1, 1, 1, DType::UInt8, DType::Int8},
      {"3x3_stride2_int8", 8, 12, 9, 17, 3, 2, 1, 1, DType::Int8, DType::Int8},
      {"grouped", 6, 8, 8, 4, 3, 1, 1, 2, DType::Int8, DType::Int8},
      {"uint8_weights", 7, 6, 6, 5, 3, 1, 0, 1, DType::UInt8, DType::UInt8},
      {"depthwise", 6, 9, 9, 6, 3, 1, 1, 6, DType::Int8, DType::Int8},
  };
  struct Restore {
    KernelIsa saved = ActiveKernelIsa();
    ~Restore() { SelectKernelIsa(saved); }
  } restore;
  for (const QConvCase& t : cases) {
    ASSERT_TRUE(SelectKernelIsa(KernelIsa::kPortable));
    const std::vector<uint8_t> want = RunQConv(t);
    ASSERT_FALSE(want.empty());
    // Not a degenerate case: the outputs spread over many values.
    std::vector<bool> seen(256);
    int distinct = 0;
    for (uint8_t v : want) distinct += seen[v] ? 0 : (seen[v] = true, 1);
    EXPECT_GE(distinct, 8) << t.name;
    for (KernelIsa isa : kAllKernelIsas) {
      if (isa == KernelIsa::kPortable || !SelectKernelIsa(isa)) continue;
      const std::vector<uint8_t> got = RunQConv(t);
      size_t bad = 0, first = 0;
      for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
        if (got[i] != want[i] && bad++ == 0) first = i;
      }
      EXPECT_EQ(got.size(), want.size());
      EXPECT_EQ(bad, 0u) << t.name << " " << KernelIsaName(isa) << ": " << bad << " of "
                         << want.size() << " bytes differ, first at " << first;
    }
  }
}

}  // namespace
}  // namespace baton::testing
