// Workspace tensors on a CPU with "threads" (issue 17): only the ops whose
// kernels split a node across threads (Conv, Gemm, MatMul) get one slice per
// thread; every other op keeps its serial workspace, and the cost model gives
// it no parallel speed-up.
#include <gtest/gtest.h>

#include <map>

#include "baton/planner/analysis/cost.h"
#include "baton/planner/import/import_json.h"
#include "baton/planner/planner.h"

namespace baton::planner {
namespace {

// n values of a small repeating pattern, as a JSON list.
std::string Values(int n) {
  std::string out = "[";
  for (int i = 0; i < n; ++i) out += (i ? "," : "") + std::to_string((i % 7) * 0.01);
  return out + "]";
}

// A 3x3 Conv (im2col + GEMM: workspace, splits) feeding a ConvTranspose
// (workspace, never splits).
std::string Graph() {
  return R"({"name": "ws", "inputs": [{"name": "x", "dtype": "float32", "shape": [1, 8, 12, 12]}],
    "outputs": ["y"], "initializers": [
    {"name": "w1", "dtype": "float32", "shape": [8, 8, 3, 3], "data": )" +
         Values(8 * 8 * 9) + R"(},
    {"name": "w2", "dtype": "float32", "shape": [8, 4, 3, 3], "data": )" +
         Values(8 * 4 * 9) + R"(}],
    "nodes": [
    {"name": "conv", "op": "Conv", "inputs": ["x", "w1"], "outputs": ["t"], "attrs": {"pads": [1, 1, 1, 1]}},
    {"name": "up", "op": "ConvTranspose", "inputs": ["t", "w2"], "outputs": ["y"], "attrs": {"strides": [2, 2]}}]})";
}

std::string CpuTarget(int threads) {
  return R"({"name": "cpu", "domains": [{"name": "dram", "bytes": 16777216, "alignment": 64}],
    "devices": [{"name": "cpu0", "kind": "cpu", "threads": )" +
         std::to_string(threads) + R"(, "domains": ["dram"]}]})";
}

// Workspace bytes per node name.
std::map<std::string, int64_t> Workspaces(int threads) {
  auto g = ParseGraphJson(Graph(), "", "ws.json");
  EXPECT_TRUE(g.ok()) << g.error();
  auto t = ParseTarget(CpuTarget(threads), "cpu.json");
  EXPECT_TRUE(t.ok()) << t.error();
  std::map<std::string, int64_t> out;
  if (!g.ok() || !t.ok()) return out;
  auto p = PlanGraph(g.value(), t.value(), PlanOptions());
  EXPECT_TRUE(p.ok()) << p.error();
  if (!p.ok()) return out;
  for (size_t n = 0; n < p->graph.nodes.size(); ++n) {
    for (int w : p->workspace[n]) out[p->graph.nodes[n].name] += p->graph.tensors[w].shape[0];
  }
  return out;
}

TEST(Workspace, OnlySplittingOpsGetOneSlicePerThread) {
  const std::map<std::string, int64_t> one = Workspaces(1);
  const std::map<std::string, int64_t> three = Workspaces(3);
  ASSERT_GT(one.count("conv"), 0u);
  ASSERT_GT(one.count("up"), 0u);
  ASSERT_GT(one.at("conv"), 0);
  ASSERT_GT(one.at("up"), 0);
  // Three slices, each the serial size rounded up to 64 bytes.
  EXPECT_EQ(three.at("conv"), 3 * ((one.at("conv") + 63) / 64 * 64));
  EXPECT_EQ(three.at("up"), one.at("up"));
}

TEST(Workspace, ThreadsForNamesTheSplittingOps) {
  TargetDevice d;
  d.threads = 4;
  for (const char* op : {"Conv", "Gemm", "MatMul"}) EXPECT_EQ(d.ThreadsFor(op), 4u) << op;
  for (const char* op : {"Relu", "MaxPool", "ConvTranspose", "QLinearConv", "LSTM", "__copy",
                         "my.domain::Custom"}) {
    EXPECT_EQ(d.ThreadsFor(op), 1u) << op;
  }
  d.threads = 1;
  EXPECT_EQ(d.ThreadsFor("Conv"), 1u);
}

}  // namespace
}  // namespace baton::planner
