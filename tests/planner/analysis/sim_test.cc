#include "baton/planner/analysis/sim.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "baton/planner/analysis/cost.h"
#include "baton/planner/analysis/inspect.h"
#include "baton/planner/analysis/validate_plan.h"
#include "planner/plan_builder.h"

namespace baton::planner {
namespace {

using schema::DeviceKind;
using schema::Op;
using testing::PlanBuilder;

LoadedPlan Load(const std::vector<uint8_t>& bytes) {
  auto plan = LoadedPlan::FromBytes(bytes.data(), bytes.size(), "test plan");
  EXPECT_TRUE(plan.ok()) << plan.error();
  return std::move(plan).value();
}

Target ParseOrDie(const std::string& json) {
  auto target = ParseTarget(json, "test target");
  EXPECT_TRUE(target.ok()) << target.error();
  return std::move(target).value();
}

// cpu0 runs conv (x[1,3,8,8] * w[4,3,3,3] -> c[1,4,8,8], pads 1) then relu.
std::vector<uint8_t> SingleQueuePlan() {
  PlanBuilder b;
  const uint32_t dram = b.Domain("dram", 8192, 64);
  const uint32_t cpu = b.Queue("cpu0", DeviceKind::Cpu, {dram});
  const uint32_t x = b.Tensor("x", {1, 3, 8, 8}, dram, 0);
  const uint32_t w = b.Constant("w", {4, 3, 3, 3});
  const uint32_t c = b.Tensor("c", {1, 4, 8, 8}, dram, 1024);
  const uint32_t y = b.Tensor("y", {1, 4, 8, 8}, dram, 2048);
  b.Node("conv", Op::Conv, cpu)
      .In({static_cast<int32_t>(x), static_cast<int32_t>(w), -1})
      .Out({c})
      .Conv({3, 3});
  b.Node("relu", Op::Relu, cpu).In({static_cast<int32_t>(c)}).Out({y});
  b.Inputs({x}).Outputs({y});
  return b.Finish();
}

const char* kCpuTarget = R"({"name": "one", "domains": [{"name": "dram", "bytes": 65536}],
  "devices": [{"name": "cpu0", "kind": "cpu", "domains": ["dram"],
               "cost": {"macs_per_s": 1e6, "bytes_per_s": 1e9, "launch_s": 1e-6}}]})";

TEST(CostTest, MacsAndBytes) {
  LoadedPlan plan = Load(SingleQueuePlan());
  // Conv: 256 output elements * Cin 3 * 3x3 kernel.
  EXPECT_DOUBLE_EQ(NodeMacs(plan.plan(), 0), 256.0 * 3 * 9);
  // Relu: one per output element.
  EXPECT_DOUBLE_EQ(NodeMacs(plan.plan(), 1), 256.0);
  // x 768 + w 432 + c 1024 (the absent bias is skipped).
  EXPECT_DOUBLE_EQ(NodeBytes(plan.plan(), 0), 768.0 + 432 + 1024);
  EXPECT_DOUBLE_EQ(NodeBytes(plan.plan(), 1), 2048.0);
}

TEST(CostTest, GemmAndMatMul) {
  PlanBuilder b;
  const uint32_t dram = b.Domain("dram", 65536);
  const uint32_t cpu = b.Queue("cpu0", DeviceKind::Cpu, {dram});
  const uint32_t a = b.Tensor("a", {2, 5, 7}, dram, 0);  // batch 2, M 5, K 7
  const uint32_t m = b.Constant("m", {7, 3});
  const uint32_t c = b.Tensor("c", {2, 5, 3}, dram, 1024);
  const uint32_t g = b.Tensor("g", {5, 4}, dram, 2048);  // Gemm: M 5, N 4, K 6
  const uint32_t ga = b.Tensor("ga", {5, 6}, dram, 3072);
  const uint32_t gb = b.Constant("gb", {6, 4});
  b.Node("mm", Op::MatMul, cpu).In({static_cast<int32_t>(a), static_cast<int32_t>(m)}).Out({c});
  b.Node("gemm", Op::Gemm, cpu).In({static_cast<int32_t>(ga), static_cast<int32_t>(gb)}).Out({g});
  b.Inputs({a, ga}).Outputs({c, g});
  LoadedPlan plan = Load(b.Finish());
  EXPECT_DOUBLE_EQ(NodeMacs(plan.plan(), 0), 2.0 * 5 * 3 * 7);
  EXPECT_DOUBLE_EQ(NodeMacs(plan.plan(), 1), 5.0 * 4 * 6);
}

TEST(SimTest, SingleQueueLatencyIsTheSumOfNodeCosts) {
  LoadedPlan plan = Load(SingleQueuePlan());
  const Target target = ParseOrDie(kCpuTarget);
  // conv: 1e-6 + max(6912 / 1e6, 2224 / 1e9); relu: 1e-6 + max(256 / 1e6, 2048 / 1e9).
  const double conv = 1e-6 + 6912 / 1e6;
  const double relu = 1e-6 + 256 / 1e6;
  auto result = Simulate(plan.view(), target, 3);
  ASSERT_TRUE(result.ok()) << result.error();
  EXPECT_NEAR(result->latency_mean_s, conv + relu, 1e-12);
  EXPECT_NEAR(result->latency_max_s, conv + relu, 1e-12);
  EXPECT_NEAR(result->makespan_s, 3 * (conv + relu), 1e-12);
  EXPECT_NEAR(result->throughput_per_s, 1 / (conv + relu), 1e-6);
  EXPECT_NEAR(result->bound_throughput_per_s, 1 / (conv + relu), 1e-6);
  EXPECT_NEAR(result->utilization[0], 1.0, 1e-9);
  ASSERT_EQ(result->node_duration_s.size(), 2u);
  EXPECT_NEAR(result->node_duration_s[0], conv, 1e-15);
  EXPECT_NEAR(result->node_duration_s[1], relu, 1e-15);
  EXPECT_EQ(result->instances.size(), 6u);
}

// A CPU with "threads": 2 (issue 17) runs the same plan faster in the cost
// model and the simulator: the compute term of each node whose op splits
// (Conv here) divided by ParallelSpeedup(2), launch_s not.
TEST(SimTest, CpuThreadsShortenNodeTimes) {
  LoadedPlan plan = Load(SingleQueuePlan());
  std::string two_json = kCpuTarget;
  two_json.replace(two_json.find(R"("kind": "cpu",)"), 14, R"("kind": "cpu", "threads": 2,)");
  const Target one = ParseOrDie(kCpuTarget);
  const Target two = ParseOrDie(two_json);
  ASSERT_EQ(two.devices[0].threads, 2u);
  auto r1 = Simulate(plan.view(), one, 1);
  auto r2 = Simulate(plan.view(), two, 1);
  ASSERT_TRUE(r1.ok() && r2.ok());
  // By hand: 1e-6 + 6912 / 1e6 * (0.15 + 0.85 / 2).
  const double conv2 = 1e-6 + 6912 / 1e6 * (0.15 + 0.85 / 2);
  EXPECT_NEAR(r2->node_duration_s[0], conv2, 1e-12);
  // The Relu never splits (TargetDevice::ThreadsFor): its time stays.
  EXPECT_NEAR(r2->node_duration_s[1], 1e-6 + 256 / 1e6, 1e-15);
  EXPECT_LT(r2->latency_mean_s, r1->latency_mean_s * 0.6);
  EXPECT_NEAR(DeviceSeconds(one.devices[0].cost, 1e6, 0, 4), 1e-6 + 1.0 * (0.15 + 0.85 / 4), 1e-12);
}

// Two stages on two queues sharing dram: A (cpu0, 1 ms) then B (npu0, 2 ms).
std::vector<uint8_t> TwoStagePlan(uint32_t in_flight) {
  PlanBuilder b;
  b.InFlight(in_flight);
  const uint32_t dram = b.Domain("dram", 65536);
  const uint32_t cpu = b.Queue("cpu0", DeviceKind::Cpu, {dram});
  const uint32_t npu = b.Queue("npu0", DeviceKind::Npu, {dram});
  const uint32_t x = b.Tensor("x", {1, 1000}, dram, 0, 2);
  const uint32_t a = b.Tensor("a", {1, 1000}, dram, 8192, 2);
  const uint32_t y = b.Tensor("y", {1, 1000}, dram, 16384, 2);
  const uint32_t node_a = b.Node("A", Op::Relu, cpu).In({static_cast<int32_t>(x)}).Out({a});
  b.Node("B", Op::Relu, npu).In({static_cast<int32_t>(a)}).Out({y}).Stage(1).Wait(node_a);
  b.Inputs({x}).Outputs({y});
  return b.Finish();
}

const char* kTwoDeviceTarget = R"({"name": "two", "domains": [{"name": "dram", "bytes": 65536}],
  "devices": [
    {"name": "cpu0", "kind": "cpu", "domains": ["dram"], "cost": {"macs_per_s": 1e6, "bytes_per_s": 1e15}},
    {"name": "npu0", "kind": "npu", "domains": ["dram"], "cost": {"macs_per_s": 5e5, "bytes_per_s": 1e15}}]})";

TEST(SimTest, PipelineReachesTheBoundWithTwoInFlight) {
  const std::vector<uint8_t> bytes = TwoStagePlan(2);
  const Check valid = ValidatePlanSchedule(bytes.data(), bytes.size());
  ASSERT_TRUE(valid.ok()) << valid.error();
  LoadedPlan plan = Load(bytes);
  auto result = Simulate(plan.view(), ParseOrDie(kTwoDeviceTarget), 20);
  ASSERT_TRUE(result.ok()) << result.error();
  // Busiest queue: npu0 with 2 ms per inference.
  EXPECT_NEAR(result->bound_throughput_per_s, 500.0, 1e-6);
  EXPECT_NEAR(result->throughput_per_s, 500.0, 1e-6);
  // finish(i) = 1 ms + (i + 1) * 2 ms; admission(i) = finish(i - 2).
  EXPECT_NEAR(result->latency_max_s, 5e-3, 1e-12);
  EXPECT_NEAR(result->makespan_s, 41e-3, 1e-12);
  EXPECT_NEAR(result->utilization[1], 40.0 / 41.0, 1e-9);
}

TEST(SimTest, PipelineWithOneInFlightRunsSerially) {
  LoadedPlan plan = Load(TwoStagePlan(1));
  auto result = Simulate(plan.view(), ParseOrDie(kTwoDeviceTarget), 20);
  ASSERT_TRUE(result.ok()) << result.error();
  EXPECT_NEAR(result->throughput_per_s, 1 / 3e-3, 1e-6);
  EXPECT_NEAR(result->latency_mean_s, 3e-3, 1e-12);
  EXPECT_NEAR(result->bound_throughput_per_s, 500.0, 1e-6);
}

TEST(SimTest, CopyOnDmaQueueUsesTheLinkCost) {
  PlanBuilder b;
  const uint32_t dram = b.Domain("dram", 4096);
  const uint32_t sram = b.Domain("sram", 4096);
  const uint32_t cpu = b.Queue("cpu0", DeviceKind::Cpu, {dram});
  const uint32_t dma = b.Queue("dma0", DeviceKind::Dma, {dram, sram});
  const uint32_t npu = b.Queue("npu0", DeviceKind::Npu, {sram});
  const uint32_t x = b.Tensor("x", {1, 16}, dram, 0);
  const uint32_t a = b.Tensor("a", {1, 16}, dram, 64);
  const uint32_t a_s = b.Tensor("a_s", {1, 16}, sram, 0);
  const uint32_t y = b.Tensor("y", {1, 16}, sram, 64);
  const uint32_t node_a = b.Node("A", Op::Relu, cpu).In({static_cast<int32_t>(x)}).Out({a});
  const uint32_t copy =
      b.Node("copy_a", Op::Copy, dma).In({static_cast<int32_t>(a)}).Out({a_s}).Wait(node_a);
  b.Node("B", Op::Relu, npu).In({static_cast<int32_t>(a_s)}).Out({y}).Wait(copy);
  b.Inputs({x}).Outputs({y});
  LoadedPlan plan = Load(b.Finish());
  const Target target = ParseOrDie(R"({"name": "soc",
    "domains": [{"name": "dram", "bytes": 65536}, {"name": "sram", "bytes": 4096}],
    "devices": [{"name": "cpu0", "kind": "cpu", "domains": ["dram"]},
                {"name": "npu0", "kind": "npu", "domains": ["sram"]}],
    "links": [{"from": "dram", "to": "sram", "bytes_per_s": 1e6, "latency_s": 1e-5, "queue": "dma0"}]})");
  auto seconds = NodeSeconds(plan.plan(), target);
  ASSERT_TRUE(seconds.ok()) << seconds.error();
  EXPECT_NEAR((*seconds)[1], 1e-5 + 64 / 1e6, 1e-15);
  auto result = Simulate(plan.view(), target, 2);
  ASSERT_TRUE(result.ok()) << result.error();
  EXPECT_EQ(result->queue_names, (std::vector<std::string>{"cpu0", "dma0", "npu0"}));
}

TEST(SimTest, TargetMismatchesAreErrors) {
  LoadedPlan plan = Load(TwoStagePlan(2));
  auto missing = Simulate(plan.view(), ParseOrDie(kCpuTarget), 4);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("'npu0'"), std::string::npos) << missing.error();
  auto kind = Simulate(plan.view(), ParseOrDie(R"({"name": "k",
    "domains": [{"name": "dram", "bytes": 65536}],
    "devices": [{"name": "cpu0", "kind": "cpu", "domains": ["dram"]},
                {"name": "npu0", "kind": "gpu", "domains": ["dram"]}]})"),
                       4);
  ASSERT_FALSE(kind.ok());
  EXPECT_NE(kind.error().find("gpu"), std::string::npos) << kind.error();
  EXPECT_FALSE(Simulate(plan.view(), ParseOrDie(kTwoDeviceTarget), 0).ok());
}

TEST(SimTest, Deterministic) {
  LoadedPlan plan = Load(TwoStagePlan(2));
  const Target target = ParseOrDie(kTwoDeviceTarget);
  auto first = Simulate(plan.view(), target, 9);
  auto second = Simulate(plan.view(), target, 9);
  ASSERT_TRUE(first.ok() && second.ok());
  ASSERT_EQ(first->instances.size(), second->instances.size());
  for (size_t k = 0; k < first->instances.size(); ++k) {
    EXPECT_EQ(first->instances[k].node, second->instances[k].node);
    EXPECT_EQ(first->instances[k].inference, second->instances[k].inference);
    EXPECT_EQ(first->instances[k].start_s, second->instances[k].start_s);
    EXPECT_EQ(first->instances[k].end_s, second->instances[k].end_s);
  }
  EXPECT_EQ(SimJson(*first), SimJson(*second));
  EXPECT_EQ(ChromeTrace(*first), ChromeTrace(*second));
  EXPECT_EQ(GanttSvg(*first), GanttSvg(*second));
}

TEST(SimTest, JsonHasTheDesignLayout) {
  LoadedPlan plan = Load(TwoStagePlan(2));
  auto result = Simulate(plan.view(), ParseOrDie(kTwoDeviceTarget), 4);
  ASSERT_TRUE(result.ok());
  const auto json = nlohmann::ordered_json::parse(SimJson(*result));
  std::vector<std::string> keys;
  for (const auto& item : json.items()) keys.push_back(item.key());
  EXPECT_EQ(keys,
            (std::vector<std::string>{"inferences", "throughput_per_s", "bound_throughput_per_s",
                                      "latency_s", "utilization", "nodes"}));
  EXPECT_EQ(json["inferences"], 4);
  EXPECT_TRUE(json["latency_s"].contains("mean") && json["latency_s"].contains("max"));
  EXPECT_TRUE(json["utilization"].contains("cpu0") && json["utilization"].contains("npu0"));
  ASSERT_EQ(json["nodes"].size(), 2u);
  EXPECT_EQ(json["nodes"][1]["id"], 1);
  EXPECT_EQ(json["nodes"][1]["queue"], "npu0");
  EXPECT_NEAR(json["nodes"][1]["duration_s"].get<double>(), 2e-3, 1e-12);
}

TEST(SimTest, ChromeTraceParsesWithOneEventPerInstance) {
  LoadedPlan plan = Load(TwoStagePlan(2));
  auto result = Simulate(plan.view(), ParseOrDie(kTwoDeviceTarget), 5);
  ASSERT_TRUE(result.ok());
  const auto trace = nlohmann::json::parse(ChromeTrace(*result));
  ASSERT_TRUE(trace.contains("traceEvents"));
  int complete = 0, thread_names = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X") {
      ++complete;
      EXPECT_EQ(e["pid"], 0);
      EXPECT_TRUE(e["args"].contains("inference"));
      EXPECT_GE(e["dur"].get<double>(), 0);
    }
    if (e["ph"] == "M" && e["name"] == "thread_name") ++thread_names;
  }
  EXPECT_EQ(complete, 2 * 5);
  EXPECT_EQ(thread_names, 2);
  // B of inference 3 on npu0 (tid 1): starts at 1 + 3 * 2 ms.
  bool found = false;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X" && e["name"] == "B" && e["args"]["inference"] == 3) {
      found = true;
      EXPECT_EQ(e["tid"], 1);
      EXPECT_NEAR(e["ts"].get<double>(), 7000.0, 1e-6);
      EXPECT_NEAR(e["dur"].get<double>(), 2000.0, 1e-6);
    }
  }
  EXPECT_TRUE(found);
}

TEST(SimTest, GanttHasOneRowPerQueue) {
  LoadedPlan plan = Load(TwoStagePlan(2));
  auto result = Simulate(plan.view(), ParseOrDie(kTwoDeviceTarget), 5);
  ASSERT_TRUE(result.ok());
  const std::string svg = GanttSvg(*result);
  size_t rows = 0;
  for (size_t at = svg.find("<g class=\"row\""); at != std::string::npos;
       at = svg.find("<g class=\"row\"", at + 1)) {
    ++rows;
  }
  EXPECT_EQ(rows, 2u);
  EXPECT_NE(svg.find("data-queue=\"cpu0\""), std::string::npos);
  EXPECT_NE(svg.find("data-queue=\"npu0\""), std::string::npos);
  EXPECT_NE(svg.find("time (ms)"), std::string::npos);
  EXPECT_EQ(svg.rfind("</svg>\n"), svg.size() - 7);
  EXPECT_NE(SimText(*result).find("npu0"), std::string::npos);
}

// One queue runs stage 0 (Y, 1 ms) before stage 1 (X, 1 ms) in each
// iteration.
std::vector<uint8_t> InterleavedPlan(uint32_t in_flight) {
  PlanBuilder b;
  b.InFlight(in_flight);
  const uint32_t dram = b.Domain("dram", 65536);
  const uint32_t cpu = b.Queue("cpu0", DeviceKind::Cpu, {dram});
  const uint32_t x = b.Tensor("x", {1, 1000}, dram, 0, 2);
  const uint32_t m = b.Tensor("m", {1, 1000}, dram, 8192, 2);
  const uint32_t y = b.Tensor("y", {1, 1000}, dram, 16384, 2);
  b.Node("Y", Op::Relu, cpu).In({static_cast<int32_t>(x)}).Out({m});
  b.Node("X", Op::Relu, cpu).In({static_cast<int32_t>(m)}).Out({y}).Stage(1);
  b.Inputs({x}).Outputs({y});
  return b.Finish();
}

const char* kSlowCpuTarget = R"({"name": "one", "domains": [{"name": "dram", "bytes": 65536}],
  "devices": [{"name": "cpu0", "kind": "cpu", "domains": ["dram"],
               "cost": {"macs_per_s": 1e6, "bytes_per_s": 1e15}}]})";

TEST(SimTest, StreamIsFlushedWhenTheInFlightLimitBlocksAStage) {
  // D = 1: Y of inference 1 cannot be submitted before inference 0 is back,
  // which needs X of inference 0, queued after Y of inference 1: the caller
  // flushes after every inference, as the executor does.
  LoadedPlan one = Load(InterleavedPlan(1));
  auto flushed = Simulate(one.view(), ParseOrDie(kSlowCpuTarget), 4);
  ASSERT_TRUE(flushed.ok()) << flushed.error();
  EXPECT_EQ(flushed->flushes, 3u);
  EXPECT_NEAR(flushed->makespan_s, 8e-3, 1e-12);
  EXPECT_NEAR(flushed->latency_max_s, 2e-3, 1e-12);
  EXPECT_NE(SimText(*flushed).find("flushes"), std::string::npos);
  // D = 2 streams without flushes: Y0 | Y1 X0 | Y2 X1 | Y3 X2 | X3.
  LoadedPlan two = Load(InterleavedPlan(2));
  auto streamed = Simulate(two.view(), ParseOrDie(kSlowCpuTarget), 4);
  ASSERT_TRUE(streamed.ok()) << streamed.error();
  EXPECT_EQ(streamed->flushes, 0u);
  EXPECT_NEAR(streamed->makespan_s, 8e-3, 1e-12);
  EXPECT_NEAR(streamed->latency_max_s, 5e-3, 1e-12);  // inference 1: admitted 0, done 5 ms
}

}  // namespace
}  // namespace baton::planner
