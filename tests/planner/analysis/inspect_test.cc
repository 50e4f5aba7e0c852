#include "baton/planner/analysis/inspect.h"

#include <gtest/gtest.h>

#include <cstdio>

#include <nlohmann/json.hpp>

#include "planner/plan_builder.h"

namespace baton::planner {
namespace {

using schema::DeviceKind;
using schema::Op;
using testing::PlanBuilder;

// cpu0: pre (stage 0) x -> p;  dma0: copy p -> p_s (stage 1);
// npu0: conv (stage 1) p_s, w, (no bias) -> c;  relu (stage 1) c -> y.
std::vector<uint8_t> PipelinePlan() {
  PlanBuilder b;
  b.Name("tiny").InFlight(2);
  const uint32_t dram = b.Domain("dram", 8192, 64);
  const uint32_t sram = b.Domain("npu_sram", 4096, 64);
  const uint32_t cpu = b.Queue("cpu0", DeviceKind::Cpu, {dram});
  const uint32_t dma = b.Queue("dma0", DeviceKind::Dma, {dram, sram});
  const uint32_t npu = b.Queue("npu0", DeviceKind::Npu, {sram});
  const uint32_t x = b.Tensor("x", {1, 3, 8, 8}, dram, 0, 2);
  const uint32_t p = b.Tensor("p", {1, 3, 8, 8}, dram, 2048, 2);
  const uint32_t p_s = b.Tensor("p@npu_sram", {1, 3, 8, 8}, sram, 0);
  const uint32_t w = b.Constant("w", {4, 3, 3, 3});
  const uint32_t c = b.Tensor("c", {1, 4, 8, 8}, sram, 1024);
  const uint32_t y = b.Tensor("y", {1, 4, 8, 8}, sram, 2048, 2);
  const uint32_t pre = b.Node("pre", Op::Relu, cpu).In({static_cast<int32_t>(x)}).Out({p});
  const uint32_t copy =
      b.Node("copy_p", Op::Copy, dma).In({static_cast<int32_t>(p)}).Out({p_s}).Stage(1).Wait(pre);
  b.Node("conv", Op::Conv, npu)
      .In({static_cast<int32_t>(p_s), static_cast<int32_t>(w), -1})
      .Out({c})
      .Stage(1)
      .Conv({3, 3})
      .Wait(copy);
  b.Node("relu", Op::Relu, npu).In({static_cast<int32_t>(c)}).Out({y}).Stage(1);
  b.Inputs({x}).Outputs({y});
  return b.Finish();
}

LoadedPlan Load(const std::vector<uint8_t>& bytes) {
  auto plan = LoadedPlan::FromBytes(bytes.data(), bytes.size(), "test plan");
  EXPECT_TRUE(plan.ok()) << plan.error();
  return std::move(plan).value();
}

std::vector<std::string> Keys(const nlohmann::ordered_json& object) {
  std::vector<std::string> keys;
  for (const auto& item : object.items()) keys.push_back(item.key());
  return keys;
}

TEST(InspectTest, JsonFollowsTheDesignLayout) {
  LoadedPlan plan = Load(PipelinePlan());
  const auto json = nlohmann::ordered_json::parse(InspectJson(plan));
  EXPECT_EQ(Keys(json),
            (std::vector<std::string>{"format", "version", "inferences_in_flight", "domains",
                                      "queues", "tensors", "nodes", "inputs", "outputs",
                                      "summary", "checksum"}));
  // A plan built without the planner carries no summary.
  EXPECT_TRUE(json["summary"].is_null());
  EXPECT_NE(InspectText(plan).find("(none: the plan carries no summary)"),
            std::string::npos);
  // The trailer's bytes, read straight from the plan (little-endian).
  const auto* bytes = static_cast<const uint8_t*>(plan.data()) + plan.size() - 4;
  char hex[11];
  std::snprintf(hex, sizeof(hex), "0x%02x%02x%02x%02x", bytes[3], bytes[2], bytes[1], bytes[0]);
  EXPECT_EQ(json["checksum"], hex);
  EXPECT_NE(InspectText(plan).find(std::string("checksum (CRC-32C trailer): ") + hex),
            std::string::npos);
  EXPECT_EQ(json["format"], "baton-plan");
  EXPECT_EQ(json["version"], 1);
  EXPECT_EQ(json["inferences_in_flight"], 2);
  EXPECT_EQ(json["domains"][1], nlohmann::ordered_json::parse(
                                    R"({"name": "npu_sram", "bytes": 4096, "alignment": 64})"));
  EXPECT_EQ(json["queues"][1],
            nlohmann::ordered_json::parse(
                R"({"name": "dma0", "kind": "dma", "domains": ["dram", "npu_sram"]})"));
  EXPECT_EQ(json["tensors"][0], nlohmann::ordered_json::parse(R"({"id": 0, "name": "x",
      "dtype": "float32", "shape": [1, 3, 8, 8], "bytes": 768, "storage": "arena",
      "domain": "dram", "offset": 0, "slots": 2, "slot_stride": 768})"));
  const auto& w = json["tensors"][3];
  EXPECT_EQ(w["storage"], "constant");
  EXPECT_TRUE(w["domain"].is_null());
  EXPECT_TRUE(w["offset"].is_null());
  EXPECT_EQ(json["nodes"][1], nlohmann::ordered_json::parse(R"({"id": 1, "name": "copy_p",
      "op": "__copy", "queue": "dma0", "position": 0, "stage": 1, "inputs": [1],
      "outputs": [2], "workspace": [], "waits": [{"node": 0, "lag": 0}]})"));
  // The absent bias keeps its position as null.
  EXPECT_EQ(json["nodes"][2]["op"], "Conv");
  EXPECT_EQ(json["nodes"][2]["inputs"], nlohmann::ordered_json::parse("[2, 3, null]"));
  EXPECT_EQ(json["inputs"], nlohmann::ordered_json::parse("[0]"));
  EXPECT_EQ(json["outputs"], nlohmann::ordered_json::parse("[5]"));
}

TEST(InspectTest, TextShowsThePipelineConfiguration) {
  LoadedPlan plan = Load(PipelinePlan());
  const std::string text = InspectText(plan);
  // Graph input into the CPU subgraph, the DMA copy as the transport of the
  // connection, and the NPU subgraph producing the output.
  EXPECT_NE(text.find("input x -> cpu0.sub0.in0"), std::string::npos) << text;
  EXPECT_NE(text.find("cpu0.sub0.out0 -> [dma0 copy] -> npu0.sub0.in0"), std::string::npos) << text;
  EXPECT_NE(text.find("(p => p@npu_sram)"), std::string::npos) << text;
  EXPECT_NE(text.find("npu0.sub0.out0 -> output y"), std::string::npos) << text;
  EXPECT_NE(text.find("stage 1:  npu0.sub0, dma0 copies (copy_p)"), std::string::npos) << text;
  // Queue programs with waits, arenas with offsets and roles.
  EXPECT_NE(text.find("copy_p@dma0"), std::string::npos) << text;
  EXPECT_NE(text.find("npu_sram: 4096 bytes, alignment 64, 3 tensors"), std::string::npos) << text;
  EXPECT_NE(text.find("graph output"), std::string::npos) << text;
  EXPECT_NE(text.find("constants (read in place from the plan)"), std::string::npos) << text;
}

TEST(InspectTest, SubgraphsSplitByStageAndConnectDirectly) {
  // Unified memory: cpu0 stage 0 and stage 1 both feed gpu0, no copies.
  PlanBuilder b;
  b.InFlight(2);
  const uint32_t dram = b.Domain("dram", 8192);
  const uint32_t cpu = b.Queue("cpu0", DeviceKind::Cpu, {dram});
  const uint32_t gpu = b.Queue("gpu0", DeviceKind::Gpu, {dram});
  const uint32_t x = b.Tensor("x", {1, 16}, dram, 0, 2);
  const uint32_t a = b.Tensor("a", {1, 16}, dram, 256, 2);
  const uint32_t g = b.Tensor("g", {1, 16}, dram, 512, 2);
  const uint32_t y = b.Tensor("y", {1, 16}, dram, 768, 2);
  const uint32_t na = b.Node("a", Op::Relu, cpu).In({static_cast<int32_t>(x)}).Out({a});
  const uint32_t ng =
      b.Node("g", Op::Relu, gpu).In({static_cast<int32_t>(a)}).Out({g}).Stage(1).Wait(na);
  b.Node("post", Op::Add, cpu)
      .In({static_cast<int32_t>(g), static_cast<int32_t>(a)})
      .Out({y})
      .Stage(2)
      .Wait(ng);
  b.Inputs({x}).Outputs({y});
  LoadedPlan plan = Load(b.Finish());
  const std::string text = InspectText(plan);
  EXPECT_NE(text.find("cpu0.sub0.out0 -> gpu0.sub0.in0"), std::string::npos) << text;
  EXPECT_NE(text.find("gpu0.sub0.out0 -> cpu0.sub1.in0"), std::string::npos) << text;
  EXPECT_NE(text.find("cpu0.sub0.out0 -> cpu0.sub1.in1"), std::string::npos) << text;
  EXPECT_NE(text.find("cpu0.sub1.out0 -> output y"), std::string::npos) << text;
}

TEST(InspectTest, BadBytesAreRejectedWithTheirName) {
  std::vector<uint8_t> bytes = PipelinePlan();
  bytes[4] ^= 0xff;  // the file identifier
  auto plan = LoadedPlan::FromBytes(bytes.data(), bytes.size(), "broken.baton");
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.error().find("broken.baton"), std::string::npos) << plan.error();
  EXPECT_FALSE(LoadedPlan::FromFile("/nonexistent/plan.baton").ok());
}

}  // namespace
}  // namespace baton::planner
