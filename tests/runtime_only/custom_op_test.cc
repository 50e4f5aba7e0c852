// Custom ops in the runtime: kernels registered by name
// (KernelRegistry::RegisterCustom), the loader's error for a custom op
// without a kernel, and the attribute reader (baton/custom_op.h) on plans
// built by hand, with hostile attribute buffers.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "baton/custom_op.h"
#include "baton/executor.h"
#include "plan_builder.h"

namespace baton::testing {
namespace {

using Op = schema::Op;
using DeviceKind = schema::DeviceKind;

// The nested CustomAttributes buffer: scale (float), offset (int), mode
// (string), taps (ints), lut (a 2x2 float tensor).
std::vector<uint8_t> Attributes() {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<schema::Attribute>> attrs;
  const std::vector<float> scale = {3.0f};
  attrs.push_back(schema::CreateAttributeDirect(fbb, "scale", schema::AttributeKind::Float,
                                                nullptr, &scale));
  const std::vector<int64_t> offset = {-2};
  attrs.push_back(
      schema::CreateAttributeDirect(fbb, "offset", schema::AttributeKind::Int, &offset));
  std::vector<flatbuffers::Offset<flatbuffers::String>> mode = {fbb.CreateString("affine")};
  attrs.push_back(schema::CreateAttributeDirect(fbb, "mode", schema::AttributeKind::String,
                                                nullptr, nullptr, &mode));
  const std::vector<int64_t> taps = {1, 2, 3};
  attrs.push_back(schema::CreateAttributeDirect(fbb, "taps", schema::AttributeKind::Ints, &taps));
  const std::vector<int64_t> shape = {2, 2};
  const std::vector<float> lut = {0.5f, 1.5f, 2.5f, 3.5f};
  std::vector<uint8_t> lut_bytes(reinterpret_cast<const uint8_t*>(lut.data()),
                                 reinterpret_cast<const uint8_t*>(lut.data()) + 16);
  fbb.ForceVectorAlignment(lut_bytes.size(), 1, 8);
  attrs.push_back(schema::CreateAttributeDirect(fbb, "lut", schema::AttributeKind::Tensor,
                                                nullptr, nullptr, nullptr, schema::DType::Float32,
                                                &shape, &lut_bytes));
  fbb.Finish(schema::CreateCustomAttributesDirect(fbb, &attrs));
  return std::vector<uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
}

// x [1, 4] -> custom "com.example::Affine" on cpu0 -> y; y = x * scale + offset.
AlignedPlan AffinePlan(const std::vector<uint8_t>& attributes, Op op = Op::Custom) {
  PlanBuilder b;
  const uint32_t dram = b.Domain("dram", 64);
  const uint32_t cpu = b.Queue("cpu0", DeviceKind::Cpu, {dram});
  const uint32_t x = b.Arena("x", {1, 4}, dram, 0);
  const uint32_t y = b.Arena("y", {1, 4}, dram, 16);
  b.fbb().ForceVectorAlignment(attributes.size(), 1, 8);
  const auto bytes = b.fbb().CreateVector(attributes);
  const auto params =
      schema::CreateCustomParams(b.fbb(), b.fbb().CreateString("com.example::Affine"), bytes);
  b.Node("affine", op, cpu, {static_cast<int32_t>(x)}, {y}, {}, 0, schema::Params::CustomParams,
         params.Union());
  b.Inputs({x});
  b.Outputs({y});
  return b.Finish();
}

Status AffinePrepare(const KernelCall& call) {
  CustomAttributes attrs;
  BATON_RETURN_IF_ERROR(CustomAttributes::Load(*call.node, &attrs));
  float scale = 0;
  int64_t offset = 0;
  if (!attrs.Float("scale", &scale) || !attrs.Int("offset", &offset)) {
    return BATON_ERROR(kInvalidArgument, "Affine needs scale and offset");
  }
  return Status::Ok();
}

Status AffineEval(const KernelCall& call) {
  CustomAttributes attrs;
  BATON_RETURN_IF_ERROR(CustomAttributes::Load(*call.node, &attrs));
  float scale = 0;
  int64_t offset = 0;
  attrs.Float("scale", &scale);
  attrs.Int("offset", &offset);
  const float* x = call.inputs[0].f32();
  float* y = call.outputs[0].f32();
  for (int64_t i = 0; i < call.inputs[0].elements(); ++i) {
    y[i] = x[i] * scale + static_cast<float>(offset);
  }
  return Status::Ok();
}

Status Fails(const KernelCall&) { return BATON_ERROR(kInternal, "wrong kernel"); }

Status RunAffine(const AlignedPlan& plan, const KernelRegistry& registry, std::vector<float>* y,
           LoadError* error) {
  PlanView view;
  BATON_RETURN_IF_ERROR(PlanView::Load(plan.data(), plan.size(), &view, error));
  alignas(16) static uint8_t arena[64];
  const Buffer arenas[] = {{arena, sizeof(arena)}};
  static Executor executor;
  InlinePort port;
  BATON_RETURN_IF_ERROR(executor.Init(view, registry, &port, arenas, error));
  const float x[4] = {1.0f, -2.0f, 0.5f, 4.0f};
  const ConstBuffer in[] = {{x, sizeof(x)}};
  y->assign(4, 0.0f);
  const Buffer out[] = {{y->data(), 16}};
  return executor.Invoke(in, out);
}

TEST(CustomOpTest, RegisteredKernelRunsWithItsAttributes) {
  KernelRegistry registry;
  // Another device kind's kernel and another name must not be picked.
  ASSERT_TRUE(registry.RegisterCustom("com.example::Affine", DeviceKind::Npu, {nullptr, Fails}).ok());
  ASSERT_TRUE(registry.RegisterCustom("com.example::Affin", DeviceKind::Cpu, {nullptr, Fails}).ok());
  ASSERT_TRUE(registry.RegisterCustom("com.example::Affine", DeviceKind::Cpu, {nullptr, Fails}).ok());
  // The newest registration of the pair wins.
  ASSERT_TRUE(
      registry.RegisterCustom("com.example::Affine", DeviceKind::Cpu, {AffinePrepare, AffineEval})
          .ok());
  std::vector<float> y;
  LoadError error;
  ASSERT_TRUE(RunAffine(AffinePlan(Attributes()), registry, &y, &error).ok()) << error.text;
  // Hand-computed: x * 3 - 2.
  EXPECT_EQ(y, (std::vector<float>{1.0f, -8.0f, -0.5f, 10.0f}));
}

TEST(CustomOpTest, MissingKernelIsNamedAtLoad) {
  KernelRegistry registry;
  ASSERT_TRUE(RegisterReferenceKernels(&registry).ok());
  ASSERT_TRUE(registry.RegisterCustom("com.example::Affine", DeviceKind::Npu, {nullptr, Fails}).ok());
  std::vector<float> y;
  LoadError error;
  const Status status = RunAffine(AffinePlan(Attributes()), registry, &y, &error);
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
  EXPECT_NE(std::string(error.text).find("com.example::Affine"), std::string::npos) << error.text;
}

TEST(CustomOpTest, SubgraphNodesAreFoundByRuntimeName) {
  KernelRegistry registry;
  ASSERT_TRUE(
      registry.RegisterCustom("com.example::Affine", DeviceKind::Cpu, {AffinePrepare, AffineEval})
          .ok());
  std::vector<float> y;
  LoadError error;
  ASSERT_TRUE(RunAffine(AffinePlan(Attributes(), Op::Subgraph), registry, &y, &error).ok()) << error.text;
  EXPECT_EQ(y[3], 10.0f);
}

TEST(CustomOpTest, RegistryCapacityAndArguments) {
  KernelRegistry registry;
  EXPECT_EQ(registry.RegisterCustom(nullptr, DeviceKind::Cpu, {nullptr, Fails}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.RegisterCustom("a::b", DeviceKind::Cpu, {nullptr, nullptr}).code(),
            StatusCode::kInvalidArgument);
  for (uint32_t i = 0; i < kMaxCustomKernels; ++i) {
    ASSERT_TRUE(registry.RegisterCustom("a::b", DeviceKind::Cpu, {nullptr, Fails}).ok());
  }
  EXPECT_EQ(registry.RegisterCustom("a::c", DeviceKind::Cpu, {nullptr, Fails}).code(),
            StatusCode::kResourceExhausted);
}

TEST(CustomAttributesTest, ReadsEveryKind) {
  const AlignedPlan plan = AffinePlan(Attributes());
  PlanView view;
  ASSERT_TRUE(PlanView::Load(plan.data(), plan.size(), &view).ok());
  CustomAttributes attrs;
  ASSERT_TRUE(CustomAttributes::Load(*view.node(0), &attrs).ok());
  EXPECT_STREQ(attrs.op_name(), "com.example::Affine");
  EXPECT_EQ(attrs.size(), 5u);
  float f = 0;
  int64_t i = 0;
  EXPECT_TRUE(attrs.Float("scale", &f));
  EXPECT_EQ(f, 3.0f);
  EXPECT_FALSE(attrs.Int("scale", &i));  // kind mismatch
  EXPECT_FALSE(attrs.Float("absent", &f));
  EXPECT_STREQ(attrs.String("mode"), "affine");
  EXPECT_EQ(attrs.String("taps"), nullptr);
  int64_t taps[2] = {};
  EXPECT_EQ(attrs.Ints("taps", taps, 2), 3);  // the count, not the copied values
  EXPECT_EQ(taps[0], 1);
  EXPECT_EQ(taps[1], 2);
  EXPECT_EQ(attrs.Ints("mode", taps, 2), -1);
  CustomAttributes::TensorValue lut;
  ASSERT_TRUE(attrs.Tensor("lut", &lut));
  EXPECT_EQ(lut.rank, 2u);
  EXPECT_EQ(lut.dims[1], 2);
  ASSERT_EQ(lut.bytes, 16u);
  EXPECT_EQ(reinterpret_cast<const float*>(lut.data)[3], 3.5f);
}

TEST(CustomAttributesTest, RejectsBrokenBuffers) {
  const std::vector<uint8_t> good = Attributes();
  // Every truncation and every single-byte corruption either fails Load or
  // leaves readable, consistent attributes (the verifier's promise).
  size_t rejected = 0;
  for (size_t cut = 1; cut < good.size(); cut += 7) {
    const std::vector<uint8_t> bad(good.begin(), good.begin() + static_cast<ptrdiff_t>(cut));
    const AlignedPlan plan = AffinePlan(bad);
    PlanView view;
    ASSERT_TRUE(PlanView::Load(plan.data(), plan.size(), &view).ok());
    CustomAttributes attrs;
    if (!CustomAttributes::Load(*view.node(0), &attrs).ok()) ++rejected;
  }
  EXPECT_GT(rejected, 0u);
  for (size_t at = 0; at < good.size(); ++at) {
    std::vector<uint8_t> bad = good;
    bad[at] ^= 0xA5;
    const AlignedPlan plan = AffinePlan(bad);
    PlanView view;
    ASSERT_TRUE(PlanView::Load(plan.data(), plan.size(), &view).ok());
    CustomAttributes attrs;
    if (!CustomAttributes::Load(*view.node(0), &attrs).ok()) continue;
    for (uint32_t k = 0; k < attrs.size(); ++k) {
      CustomAttributes::TensorValue t;
      if (attrs.Get(k)->kind() == schema::AttributeKind::Tensor) {
        ASSERT_TRUE(attrs.Tensor(attrs.Get(k)->name()->c_str(), &t));
        size_t elements = 1;
        for (uint32_t d = 0; d < t.rank; ++d) elements *= static_cast<size_t>(t.dims[d]);
        EXPECT_EQ(elements * DTypeSize(t.dtype), t.bytes);
      }
    }
  }
  // A node without CustomParams.
  PlanBuilder b;
  const uint32_t dram = b.Domain("dram", 64);
  const uint32_t cpu = b.Queue("cpu0", DeviceKind::Cpu, {dram});
  const uint32_t x = b.Arena("x", {1, 4}, dram, 0);
  const uint32_t y = b.Arena("y", {1, 4}, dram, 16);
  b.Node("relu", Op::Relu, cpu, {static_cast<int32_t>(x)}, {y});
  b.Inputs({x});
  b.Outputs({y});
  const AlignedPlan plain = b.Finish();
  PlanView view;
  ASSERT_TRUE(PlanView::Load(plain.data(), plain.size(), &view).ok());
  CustomAttributes attrs;
  EXPECT_EQ(CustomAttributes::Load(*view.node(0), &attrs).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace baton::testing
