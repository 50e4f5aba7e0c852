// Reference kernels through the whole runtime (plan -> loader -> executor ->
// kernel) on tiny hand-computed cases, so a cross build (aarch64, no
// planner) checks its kernels too.

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "plan_builder.h"
#include "test_util.h"

namespace baton::testing {
namespace {

using Op = schema::Op;
using DeviceKind = schema::DeviceKind;

// One node `op` on cpu0 with input x (graph input), constants, output y and,
// when the kernel wants one, a workspace tensor.
struct OneNode {
  Op op;
  std::vector<int64_t> x_shape;
  std::vector<int64_t> y_shape;
  std::vector<std::pair<std::vector<int64_t>, std::vector<float>>> constants;
  // Builds the node's params in `fbb` (or returns NONE).
  std::function<std::pair<schema::Params, flatbuffers::Offset<void>>(
      flatbuffers::FlatBufferBuilder&)>
      params;
};

AlignedPlan Build(const OneNode& spec, uint64_t workspace_bytes) {
  PlanBuilder b;
  const uint64_t x_bytes = PlanBuilder::Bytes(spec.x_shape, schema::DType::Float32);
  const uint64_t y_bytes = PlanBuilder::Bytes(spec.y_shape, schema::DType::Float32);
  const auto round = [](uint64_t v) { return (v + 63) / 64 * 64; };
  const uint32_t dram = b.Domain("dram", round(x_bytes) + round(y_bytes) + round(workspace_bytes));
  const uint32_t cpu = b.Queue("cpu0", DeviceKind::Cpu, {dram});
  const uint32_t x = b.Arena("x", spec.x_shape, dram, 0);
  std::vector<int32_t> inputs = {static_cast<int32_t>(x)};
  int k = 0;
  for (const auto& c : spec.constants) {
    inputs.push_back(
        static_cast<int32_t>(b.Constant("c" + std::to_string(k++), c.first, c.second)));
  }
  const uint32_t y = b.Arena("y", spec.y_shape, dram, round(x_bytes));
  std::vector<uint32_t> workspace;
  if (workspace_bytes > 0) {
    workspace.push_back(b.Arena("ws", {static_cast<int64_t>(workspace_bytes)}, dram,
                                round(x_bytes) + round(y_bytes), 1, 0, schema::DType::UInt8));
  }
  auto params = spec.params ? spec.params(b.fbb())
                            : std::make_pair(schema::Params::NONE, flatbuffers::Offset<void>());
  b.Node("n", spec.op, cpu, inputs, {y}, {}, 0, params.first, params.second, workspace);
  b.Inputs({x});
  b.Outputs({y});
  return b.Finish();
}

std::vector<float> RunOne(const OneNode& spec, const std::vector<float>& x) {
  const size_t ws = WorkspaceFor(Build(spec, 0), 0);
  const AlignedPlan plan = Build(spec, ws);
  const auto out = RunStream(plan, Mode::kInline, {x});
  return out.empty() ? std::vector<float>() : out[0];
}

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6f) << "element " << i;
}

TEST(Kernels, Conv2x2WithBias) {
  OneNode spec{
      Op::Conv,
      {1, 1, 3, 3},
      {1, 1, 2, 2},
      {{{1, 1, 2, 2}, {1, 0, 0, 1}}, {{1}, {0.5f}}},
      [](flatbuffers::FlatBufferBuilder& fbb) {
        const std::vector<int32_t> kernel = {2, 2}, strides = {1, 1}, pads = {0, 0, 0, 0},
                                   dilations = {1, 1};
        return std::make_pair(
            schema::Params::ConvParams,
            schema::CreateConvParamsDirect(fbb, &kernel, &strides, &pads, &dilations, 1).Union());
      }};
  // y[i][j] = x[i][j] + x[i+1][j+1] + 0.5
  ExpectNear(RunOne(spec, {1, 2, 3, 4, 5, 6, 7, 8, 9}), {6.5f, 8.5f, 12.5f, 14.5f});
}

TEST(Kernels, GemmTransBWithBias) {
  OneNode spec{Op::Gemm,
               {1, 3},
               {1, 2},
               {{{2, 3}, {1, 0, 1, 0, 1, 0}}, {{2}, {0.5f, -1.0f}}},
               [](flatbuffers::FlatBufferBuilder& fbb) {
                 return std::make_pair(
                     schema::Params::GemmParams,
                     schema::CreateGemmParams(fbb, 1.0f, 1.0f, false, true).Union());
               }};
  ExpectNear(RunOne(spec, {1, 2, 3}), {4.5f, 1.0f});
}

TEST(Kernels, SoftmaxLastAxis) {
  OneNode spec{Op::Softmax, {1, 3}, {1, 3}, {}, [](flatbuffers::FlatBufferBuilder& fbb) {
                 return std::make_pair(schema::Params::AxisParams,
                                       schema::CreateAxisParams(fbb, 1).Union());
               }};
  ExpectNear(RunOne(spec, {0.0f, std::log(2.0f), std::log(4.0f)}), {1 / 7.0f, 2 / 7.0f, 4 / 7.0f});
}

TEST(Kernels, MaxPool2x2Stride2) {
  OneNode spec{
      Op::MaxPool, {1, 1, 2, 4}, {1, 1, 1, 2}, {}, [](flatbuffers::FlatBufferBuilder& fbb) {
        const std::vector<int32_t> kernel = {2, 2}, strides = {2, 2}, pads = {0, 0, 0, 0},
                                   dilations = {1, 1};
        return std::make_pair(
            schema::Params::PoolParams,
            schema::CreatePoolParamsDirect(fbb, &kernel, &strides, &pads, &dilations).Union());
      }};
  ExpectNear(RunOne(spec, {1, 5, -2, 0, 3, 2, -1, -3}), {5, 0});
}

TEST(Kernels, Relu) {
  OneNode spec{Op::Relu, {5}, {5}, {}, nullptr};
  ExpectNear(RunOne(spec, {-1, 0, 2, -0.5f, 3}), {0, 0, 2, 0, 3});
}

}  // namespace
}  // namespace baton::testing
