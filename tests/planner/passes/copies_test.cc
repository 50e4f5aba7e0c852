// Assignment, copy insertion, routing and scheduling on small graphs whose
// expected placement is worked out by hand.

#include <gtest/gtest.h>

#include "baton/planner/passes/assign.h"
#include "baton/planner/passes/copies.h"
#include "baton/planner/import/import_json.h"
#include "baton/planner/passes/schedule.h"

namespace baton::planner {
namespace {

// x -> r1 (Relu) -> r2 (Relu) -> r3 (Relu) -> y, plus s = r1 + r3 (Add).
const char* kChain = R"({"name": "chain", "inputs": [{"name": "x", "shape": [1, 4]}], "outputs": ["y", "s"],
  "nodes": [{"name": "r1", "op": "Relu", "inputs": ["x"], "outputs": ["a"]},
            {"name": "r2", "op": "Relu", "inputs": ["a"], "outputs": ["b"]},
            {"name": "r3", "op": "Relu", "inputs": ["b"], "outputs": ["y"]},
            {"name": "add", "op": "Add", "inputs": ["a", "y"], "outputs": ["s"]}]})";

const char* kTarget = R"({"name": "t", "fallback": "cpu",
  "domains": [{"name": "dram", "bytes": 65536}, {"name": "sram0", "bytes": 65536}, {"name": "sram1", "bytes": 65536}],
  "devices": [{"name": "cpu", "kind": "cpu", "domains": ["dram"]},
              {"name": "gpu", "kind": "gpu", "domains": ["dram"], "ops": ["Relu", "Add"]},
              {"name": "npu0", "kind": "npu", "domains": ["sram0"], "ops": ["Relu"]},
              {"name": "npu1", "kind": "npu", "domains": ["sram1"], "ops": ["Relu"]}],
  "links": [{"from": "dram", "to": "sram0", "queue": "dma"}, {"from": "sram0", "to": "dram", "queue": "dma"},
            {"from": "sram0", "to": "sram1"}, {"from": "sram1", "to": "dram"}]})";

Program Make(const std::vector<std::string>& rules, bool* ok, std::string* error = nullptr) {
  Program p;
  auto g = ParseGraphJson(kChain, "", "chain.json");
  auto t = ParseTarget(kTarget, "t.json");
  EXPECT_TRUE(g.ok() && t.ok());
  p.graph = g.value();
  p.target = t.value();
  std::vector<AssignRule> parsed;
  for (const auto& r : rules) parsed.push_back(ParseAssignRule(r).value());
  Check c = AssignDevices(parsed, &p);
  if (c.ok()) c = InsertCopies(&p);
  if (c.ok()) c = AssignStages({}, &p);
  if (c.ok()) c = Schedule(&p);
  *ok = c.ok();
  if (error) *error = c.error();
  return p;
}

std::string DeviceOf(const Program& p, const std::string& node) {
  for (size_t n = 0; n < p.graph.nodes.size(); ++n) {
    if (p.graph.nodes[n].name == node) return p.queues[p.node_queue[n]].name;
  }
  return "?";
}

TEST(Assign, RulePrecedenceAndKth) {
  bool ok = false;
  Program p = Make({"Relu=gpu", "Relu#1=npu0", "@r3=npu0", "@r3=gpu"}, &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(DeviceOf(p, "r1"), "gpu");
  EXPECT_EQ(DeviceOf(p, "r2"), "npu0");   // the second Relu in topological order
  EXPECT_EQ(DeviceOf(p, "r3"), "gpu");    // later rule wins
  EXPECT_EQ(DeviceOf(p, "add"), "cpu");   // default: fallback
}

TEST(Assign, UnknownDeviceIsAnError) {
  bool ok = true;
  std::string error;
  Make({"Relu=tpu"}, &ok, &error);
  EXPECT_FALSE(ok);
  EXPECT_NE(error.find("unknown device 'tpu'"), std::string::npos) << error;
}

TEST(Assign, UnsupportedOpFallsBack) {
  bool ok = false;
  Program p = Make({"Add=npu0"}, &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(DeviceOf(p, "add"), "cpu");
  ASSERT_EQ(p.fallbacks.size(), 1u);
  EXPECT_EQ(p.fallbacks[0].node, "add");
  EXPECT_EQ(p.fallbacks[0].requested, "npu0");
}

int CopiesOf(const Program& p, const std::string& tensor) {
  int count = 0;
  for (const Node& n : p.graph.nodes) {
    if (n.op == kCopyOp && p.graph.tensors[n.inputs[0]].name.rfind(tensor, 0) == 0) ++count;
  }
  return count;
}

// An int8-only device (as Ethos-U and other NPUs are) runs a QLinearConv,
// whose float32 scales and int32 bias are constants, but not a node that
// reads or writes a float32 activation.
TEST(Assign, Int8OnlyDeviceJudgesActivationsNotParameters) {
  Graph g;
  auto add = [&g](const std::string& name, DType dtype, bool constant) {
    Tensor t;
    t.name = name;
    t.dtype = dtype;
    t.is_constant = constant;
    g.tensors.push_back(t);
    return static_cast<int>(g.tensors.size()) - 1;
  };
  const int x = add("x", DType::UInt8, false), xs = add("xs", DType::Float32, true),
            xz = add("xz", DType::UInt8, true), w = add("w", DType::Int8, true),
            ws = add("ws", DType::Float32, true), wz = add("wz", DType::Int8, true),
            ys = add("ys", DType::Float32, true), yz = add("yz", DType::UInt8, true),
            b = add("b", DType::Int32, true), y = add("y", DType::UInt8, false),
            f = add("f", DType::Float32, false);
  Node qconv;
  qconv.name = "qconv";
  qconv.op = "QLinearConv";
  qconv.inputs = {x, xs, xz, w, ws, wz, ys, yz, b};
  qconv.outputs = {y};
  Node dq;
  dq.name = "dq";
  dq.op = "DequantizeLinear";
  dq.inputs = {y, ys, yz};
  dq.outputs = {f};

  TargetDevice npu;
  npu.name = "npu";
  npu.kind = schema::DeviceKind::Npu;
  npu.ops = {"QLinearConv", "DequantizeLinear"};
  npu.dtypes = {"uint8", "int8"};
  std::string why;
  EXPECT_TRUE(DeviceCanRun(g, npu, qconv, &why)) << why;
  EXPECT_FALSE(DeviceCanRun(g, npu, dq, &why));
  EXPECT_EQ(why, "device does not handle dtype float32 of tensor 'f'");

  // A float-only device runs neither: the activations are 8-bit.
  npu.dtypes = {"float32"};
  EXPECT_FALSE(DeviceCanRun(g, npu, qconv, &why));
  EXPECT_EQ(why, "device does not handle dtype uint8 of tensor 'x'");
}

TEST(Copies, SharedDomainsNeedNoCopy) {
  bool ok = false;
  Program p = Make({"Relu=gpu"}, &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(p.NumCopies(), 0);
}

TEST(Copies, OneCopyPerTensorAndDomainOnTheDmaQueue) {
  bool ok = false;
  // r1 on npu0: x goes dram->sram0 (dma), a comes back to dram once for both
  // r2 (cpu) and add (cpu).
  Program p = Make({"@r1=npu0"}, &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(CopiesOf(p, "x"), 1);
  EXPECT_EQ(CopiesOf(p, "a"), 1);
  EXPECT_EQ(p.NumCopies(), 2);
  for (size_t n = 0; n < p.graph.nodes.size(); ++n) {
    if (p.graph.nodes[n].op == kCopyOp) {
      EXPECT_EQ(p.queues[p.node_queue[n]].name, "dma");
    }
  }
}

TEST(Copies, RoutesThroughAnIntermediateDomain) {
  bool ok = false;
  // r2 on npu1 reads a from dram: no dram->sram1 link, so dram->sram0->sram1.
  // The second hop has no DMA queue: it runs on the destination device npu1.
  Program p = Make({"@r2=npu1"}, &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(CopiesOf(p, "a"), 2);
  bool npu1_copies = false;
  for (size_t n = 0; n < p.graph.nodes.size(); ++n) {
    if (p.graph.nodes[n].op == kCopyOp && p.queues[p.node_queue[n]].name == "npu1") npu1_copies = true;
  }
  EXPECT_TRUE(npu1_copies);
}

TEST(Copies, GraphOutputsKeepTheirNameInTheFallbackDomain) {
  bool ok = false;
  Program p = Make({"@r3=npu0"}, &ok);
  ASSERT_TRUE(ok);
  const Tensor& y = p.graph.tensors[p.graph.outputs[0]];
  EXPECT_EQ(y.name, "y");
  EXPECT_EQ(p.target.domains[p.tensor_domain[p.graph.outputs[0]]].name, "dram");
}

TEST(Copies, NoRouteIsAnErrorNamingThePair) {
  const char* target = R"({"name": "t", "domains": [{"name": "dram", "bytes": 4096}, {"name": "island", "bytes": 4096}],
    "devices": [{"name": "cpu", "kind": "cpu", "domains": ["dram"]},
                {"name": "npu", "kind": "npu", "domains": ["island"], "ops": ["Relu"]}]})";
  Program p;
  p.graph = ParseGraphJson(kChain, "", "chain.json").value();
  p.target = ParseTarget(target, "t.json").value();
  ASSERT_TRUE(AssignDevices({ParseAssignRule("@r2=npu").value()}, &p).ok());
  Check c = InsertCopies(&p);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().find("'dram' to domain 'island'"), std::string::npos) << c.error();
}

TEST(Schedule, CrossQueueEdgesBecomeWaitsInOrder) {
  bool ok = false;
  Program p = Make({"@r2=gpu"}, &ok);
  ASSERT_TRUE(ok);
  // r2 (gpu) waits on r1 (cpu); r3 (cpu) waits on r2 (gpu).
  auto index = [&](const std::string& name) {
    for (size_t n = 0; n < p.graph.nodes.size(); ++n) if (p.graph.nodes[n].name == name) return static_cast<int>(n);
    return -1;
  };
  ASSERT_EQ(p.waits[index("r2")].size(), 1u);
  EXPECT_EQ(p.waits[index("r2")][0].node, index("r1"));
  ASSERT_EQ(p.waits[index("r3")].size(), 1u);
  EXPECT_EQ(p.waits[index("r3")][0].node, index("r2"));
  // Programs respect topological order.
  EXPECT_EQ(p.programs[0], (std::vector<int>{index("r1"), index("r3"), index("add")}));
}

TEST(Stages, SplitStartsNewStages) {
  Program p;
  p.graph = ParseGraphJson(kChain, "", "chain.json").value();
  p.target = ParseTarget(kTarget, "t.json").value();
  p.in_flight = 2;
  ASSERT_TRUE(AssignDevices({}, &p).ok());
  ASSERT_TRUE(InsertCopies(&p).ok());
  ASSERT_TRUE(AssignStages({"r3"}, &p).ok());
  EXPECT_EQ(p.num_stages, 2);
  EXPECT_EQ(p.node_stage[0], 0);  // r1
  EXPECT_EQ(p.node_stage[2], 1);  // r3
  EXPECT_EQ(p.node_stage[3], 1);  // add comes after r3
  EXPECT_FALSE(AssignStages({"nope"}, &p).ok());
}

}  // namespace
}  // namespace baton::planner
