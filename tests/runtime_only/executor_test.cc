// Executor + loader + reference kernels + ports on a hand-built plan with
// three queues and explicit copies between two memory domains:
//
//   dram:     x ──────────────┐                     r ──► add(r, c) ──► y
//                    copy_in  │ (dma0)     copy_out │ (dma0)    (cpu0)
//   npu_sram:                 └──► x_n ──► relu ──► r_n
//                                         (npu0)
//
// y = relu(x) + c, checked against hand-computed values on every port mode.

#include <gtest/gtest.h>

#include <vector>

#include "plan_builder.h"
#include "test_util.h"

namespace baton::testing {
namespace {

using Op = schema::Op;
using DeviceKind = schema::DeviceKind;

const std::vector<float> kC = {0.5f, -1.0f, 2.0f, 0.0f, 1.5f, -0.25f, 3.0f, -2.0f};

AlignedPlan CopyPlan() {
  PlanBuilder b;
  const uint32_t dram = b.Domain("dram", 128);
  const uint32_t sram = b.Domain("npu_sram", 64);
  const uint32_t cpu = b.Queue("cpu0", DeviceKind::Cpu, {dram});
  const uint32_t npu = b.Queue("npu0", DeviceKind::Npu, {sram});
  const uint32_t dma = b.Queue("dma0", DeviceKind::Dma, {dram, sram});
  const uint32_t x = b.Arena("x", {1, 8}, dram, 0);
  const uint32_t x_n = b.Arena("x_n", {1, 8}, sram, 0);
  const uint32_t r_n = b.Arena("r_n", {1, 8}, sram, 32);
  const uint32_t r = b.Arena("r", {1, 8}, dram, 32);
  const uint32_t c = b.Constant("c", {1, 8}, kC);
  const uint32_t y = b.Arena("y", {1, 8}, dram, 64);
  const int32_t in = static_cast<int32_t>(x);
  const uint32_t copy_in = b.Node("copy_in", Op::Copy, dma, {in}, {x_n});
  const uint32_t relu =
      b.Node("relu", Op::Relu, npu, {static_cast<int32_t>(x_n)}, {r_n}, {{copy_in, 0}});
  const uint32_t copy_out =
      b.Node("copy_out", Op::Copy, dma, {static_cast<int32_t>(r_n)}, {r}, {{relu, 0}});
  b.Node("add", Op::Add, cpu, {static_cast<int32_t>(r), static_cast<int32_t>(c)}, {y},
         {{copy_out, 0}}, 0, schema::Params::ElementwiseParams,
         schema::CreateElementwiseParams(b.fbb()).Union());
  b.Inputs({x});
  b.Outputs({y});
  return b.Finish();
}

std::vector<float> Expected(const std::vector<float>& x) {
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = (x[i] > 0 ? x[i] : 0.0f) + kC[i];
  return y;
}

std::vector<std::vector<float>> Inputs(int count) {
  std::vector<std::vector<float>> inputs;
  for (int k = 0; k < count; ++k) {
    std::vector<float> x(8);
    for (int i = 0; i < 8; ++i) x[i] = static_cast<float>((i * 7 + k * 3) % 11) - 5.0f;
    inputs.push_back(x);
  }
  return inputs;
}

class CopyPlanTest : public ::testing::TestWithParam<Mode> {};

TEST_P(CopyPlanTest, MatchesHandComputedValues) {
  const AlignedPlan plan = CopyPlan();
  const auto inputs = Inputs(5);
  const auto outputs = RunStream(plan, GetParam(), inputs);
  ASSERT_EQ(outputs.size(), inputs.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    EXPECT_EQ(outputs[k], Expected(inputs[k])) << "inference " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(Ports, CopyPlanTest,
                         ::testing::Values(Mode::kInline, Mode::kAsync, Mode::kLinuxCooperative,
                                           Mode::kLinuxThreaded),
                         [](const ::testing::TestParamInfo<Mode>& param_info) {
                           return std::string(ModeName(param_info.param));
                         });

TEST(CopyPlan, InvokeOnAsyncPortGoesThroughPoll) {
  const AlignedPlan plan = CopyPlan();
  PlanView view;
  ASSERT_TRUE(PlanView::Load(plan.data(), plan.size(), &view).ok());
  linux_port::Arenas arenas(view);
  AsyncPort port(view, 2);
  Executor executor;
  LoadError error;
  ASSERT_TRUE(executor.Init(view, ReferenceRegistry(), &port, arenas.buffers(), &error).ok())
      << error.text;
  const std::vector<float> x = {-1, 2, -3, 4, -5, 6, -7, 8};
  std::vector<float> y(8);
  const ConstBuffer in{x.data(), x.size() * sizeof(float)};
  const Buffer out{y.data(), y.size() * sizeof(float)};
  const Status s = executor.Invoke(Span<const ConstBuffer>(&in, 1), Span<const Buffer>(&out, 1));
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(y, Expected(x));
  EXPECT_EQ(port.submitted(), 3u);  // copy_in, relu, copy_out
  EXPECT_EQ(port.not_ready(), 6u);  // two polls each
  EXPECT_GT(port.idles(), 0u);      // nothing else to run while they are busy
}

TEST(CopyPlan, SimulatedAcceleratorOutsideItsDomainsFails) {
  // relu on npu0 writes into dram, which npu0 cannot reach: the loader
  // rejects the plan before anything runs.
  PlanBuilder b;
  const uint32_t dram = b.Domain("dram", 64);
  const uint32_t sram = b.Domain("npu_sram", 64);
  b.Queue("cpu0", DeviceKind::Cpu, {dram});
  const uint32_t npu = b.Queue("npu0", DeviceKind::Npu, {sram});
  const uint32_t x = b.Arena("x", {1, 8}, sram, 0);
  const uint32_t y = b.Arena("y", {1, 8}, dram, 0);
  b.Node("relu", Op::Relu, npu, {static_cast<int32_t>(x)}, {y});
  b.Inputs({x});
  b.Outputs({y});
  const AlignedPlan plan = b.Finish();
  PlanView view;
  LoadError error;
  const Status s = PlanView::Load(plan.data(), plan.size(), &view, &error);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(std::string(error.text).find("node 0"), std::string::npos) << error.text;
}

}  // namespace
}  // namespace baton::testing
