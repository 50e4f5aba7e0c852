// A two-stage software pipeline with two inferences in flight:
//
//   cpu0 (stage 0):  x[i] ──relu──► m[i]           slots: i mod 2
//   npu0 (stage 1):          m[i] ──add(c)──► y[i]
//
// npu0 runs inference i while cpu0 already runs inference i + 1. Outputs must
// come back in submission order with the right values, on every port mode.

#include <gtest/gtest.h>

#include <vector>

#include "plan_builder.h"
#include "test_util.h"

namespace baton::testing {
namespace {

using Op = schema::Op;
using DeviceKind = schema::DeviceKind;

const std::vector<float> kC = {1.0f, -2.0f, 0.25f, 4.0f};

AlignedPlan PipelinePlan() {
  PlanBuilder b;
  const uint32_t dram = b.Domain("dram", 256);
  const uint32_t cpu = b.Queue("cpu0", DeviceKind::Cpu, {dram});
  const uint32_t npu = b.Queue("npu0", DeviceKind::Npu, {dram});
  const uint32_t x = b.Arena("x", {4}, dram, 0, 2, 16);
  const uint32_t m = b.Arena("m", {4}, dram, 32, 2, 16);
  const uint32_t y = b.Arena("y", {4}, dram, 64, 2, 16);
  const uint32_t c = b.Constant("c", {4}, kC);
  const uint32_t relu = b.Node("relu", Op::Relu, cpu, {static_cast<int32_t>(x)}, {m});
  b.Node("add", Op::Add, npu, {static_cast<int32_t>(m), static_cast<int32_t>(c)}, {y}, {{relu, 0}},
         /*stage=*/1, schema::Params::ElementwiseParams,
         schema::CreateElementwiseParams(b.fbb()).Union());
  b.Inputs({x});
  b.Outputs({y});
  b.InFlight(2);
  return b.Finish();
}

class PipelineTest : public ::testing::TestWithParam<Mode> {};

TEST_P(PipelineTest, OutputsInOrderWithTwoInFlight) {
  const AlignedPlan plan = PipelinePlan();
  std::vector<std::vector<float>> inputs;
  for (int k = 0; k < 9; ++k) {
    inputs.push_back({static_cast<float>(k), static_cast<float>(-k), 0.5f * k, 1.0f - k});
  }
  const auto outputs = RunStream(plan, GetParam(), inputs);
  ASSERT_EQ(outputs.size(), inputs.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    std::vector<float> want(4);
    for (int i = 0; i < 4; ++i) want[i] = (inputs[k][i] > 0 ? inputs[k][i] : 0.0f) + kC[i];
    EXPECT_EQ(outputs[k], want) << "inference " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(Ports, PipelineTest,
                         ::testing::Values(Mode::kInline, Mode::kAsync, Mode::kLinuxCooperative,
                                           Mode::kLinuxThreaded),
                         [](const ::testing::TestParamInfo<Mode>& param_info) {
                           return std::string(ModeName(param_info.param));
                         });

TEST(Pipeline, SetInputIsBusyBeyondTheInFlightLimit) {
  const AlignedPlan plan = PipelinePlan();
  PlanView view;
  ASSERT_TRUE(PlanView::Load(plan.data(), plan.size(), &view).ok());
  linux_port::Arenas arenas(view);
  InlinePort port;
  Executor executor;
  ASSERT_TRUE(executor.Init(view, ReferenceRegistry(), &port, arenas.buffers()).ok());
  const float x[4] = {1, 2, 3, 4};
  for (int k = 0; k < 2; ++k) {
    ASSERT_TRUE(executor.SetInput(0, x, sizeof(x)).ok());
    ASSERT_TRUE(executor.Run().ok());
  }
  EXPECT_EQ(executor.SetInput(0, x, sizeof(x)).code(), StatusCode::kBusy);
  float y[4];
  const Buffer out{y, sizeof(y)};
  EXPECT_EQ(executor.GetOutputs(Span<const Buffer>(&out, 1)).code(), StatusCode::kNotReady);
  ASSERT_TRUE(executor.Wait().ok());
  ASSERT_TRUE(executor.GetOutputs(Span<const Buffer>(&out, 1)).ok());
  EXPECT_EQ(y[0], 2.0f);
  EXPECT_EQ(y[3], 8.0f);
}

}  // namespace
}  // namespace baton::testing
