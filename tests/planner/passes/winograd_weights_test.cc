// `baton plan --winograd-weights` (passes/winograd_weights.h): which Convs get
// U, its values against G g G^T computed here in double precision, the
// smaller workspace, and byte-identical plans.
#include "baton/planner/passes/winograd_weights.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "baton/planner/emit/emit.h"
#include "baton/planner/import/import_json.h"
#include "baton/planner/import/shapes.h"
#include "baton/planner/ops/region.h"
#include "baton/planner/passes/assign.h"
#include "baton/planner/planner.h"
#include "common/test_util.h"

namespace baton::planner {
namespace {

// n pseudo-random values in [-0.5, 0.5), as a JSON list.
std::string Values(int n, int seed) {
  std::string out = "[";
  uint32_t s = static_cast<uint32_t>(seed) * 2654435761u + 1u;
  for (int i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    out += (i ? "," : "") + std::to_string(static_cast<double>(s >> 8) / 16777216.0 - 0.5);
  }
  return out + "]";
}

// a: 3x3 stride 1 at 16x16 (64 tiles: Winograd); s2: stride 2; small: 3x3
// at 8x8 (16 tiles: too few); pw: 1x1.
std::string GraphJson() {
  auto w = [](const char* name, int m, int c, int k, int seed) {
    return std::string(R"({"name": ")") + name + R"(", "dtype": "float32", "shape": [)" +
           std::to_string(m) + ", " + std::to_string(c) + ", " + std::to_string(k) + ", " +
           std::to_string(k) + R"(], "data": )" + Values(m * c * k * k, seed) + "}";
  };
  return R"({"name": "wino", "inputs": [{"name": "x", "dtype": "float32", "shape": [1, 16, 16, 16]}],
    "outputs": ["y"], "initializers": [)" +
         w("wa", 16, 16, 3, 1) + "," + w("ws2", 16, 16, 3, 2) + "," + w("wsmall", 16, 16, 3, 3) +
         "," + w("wpw", 8, 16, 1, 4) + R"(],
    "nodes": [
    {"name": "a", "op": "Conv", "inputs": ["x", "wa"], "outputs": ["t1"], "attrs": {"pads": [1, 1, 1, 1]}},
    {"name": "s2", "op": "Conv", "inputs": ["t1", "ws2"], "outputs": ["t2"], "attrs": {"pads": [1, 1, 1, 1], "strides": [2, 2]}},
    {"name": "small", "op": "Conv", "inputs": ["t2", "wsmall"], "outputs": ["t3"], "attrs": {"pads": [1, 1, 1, 1]}},
    {"name": "pw", "op": "Conv", "inputs": ["t3", "wpw"], "outputs": ["y"]}]})";
}

Result<Program> Plan(bool winograd_weights) {
  BATON_ASSIGN_OR_RETURN(Graph g, ParseGraphJson(GraphJson(), "", "wino.json"));
  PlanOptions o;
  o.winograd_weights = winograd_weights;
  return PlanGraph(std::move(g), DefaultCpuTarget(), o);
}

const Node& NodeNamed(const Program& p, const std::string& name) {
  for (const Node& n : p.graph.nodes) {
    if (n.name == name) return n;
  }
  ADD_FAILURE() << "no node " << name;
  return p.graph.nodes.front();
}

int64_t WorkspaceOf(const Program& p, const std::string& name) {
  int64_t bytes = 0;
  for (size_t n = 0; n < p.graph.nodes.size(); ++n) {
    if (p.graph.nodes[n].name != name) continue;
    for (int t : p.workspace[n]) bytes += p.graph.tensors[t].shape[0];
  }
  return bytes;
}

TEST(WinogradWeights, OnlyWinogradLayersGetU) {
  auto with = Plan(true);
  ASSERT_TRUE(with.ok()) << with.error();
  const Node& a = NodeNamed(*with, "a");
  ASSERT_EQ(a.inputs.size(), 5u);
  EXPECT_EQ(a.inputs[2], -1);
  EXPECT_EQ(a.inputs[3], -1);
  const Tensor& u = with->graph.tensors[a.inputs[4]];
  EXPECT_TRUE(u.is_constant);
  EXPECT_EQ(u.dtype, DType::Float32);
  EXPECT_EQ(u.shape, (std::vector<int64_t>{16, 16, 16}));
  for (const char* other : {"s2", "small", "pw"}) {
    EXPECT_LE(NodeNamed(*with, other).inputs.size(), 4u) << other;
  }
  auto without = Plan(false);
  ASSERT_TRUE(without.ok()) << without.error();
  for (const Node& n : without->graph.nodes) EXPECT_LE(n.inputs.size(), 4u) << n.name;
}

// U[f][m][c] = (G g G^T)[f / 4][f % 4], G as in Lavin and Gray's F(2x2, 3x3).
TEST(WinogradWeights, UIsGgGt) {
  auto p = Plan(true);
  ASSERT_TRUE(p.ok()) << p.error();
  const Node& a = NodeNamed(*p, "a");
  const std::vector<float> w = p->graph.tensors[a.inputs[1]].FloatData();
  const std::vector<float> u = p->graph.tensors[a.inputs[4]].FloatData();
  ASSERT_EQ(w.size(), 16u * 16 * 9);
  ASSERT_EQ(u.size(), 16u * 16 * 16);
  const double G[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  int checked = 0;
  for (int m = 0; m < 16; ++m) {
    for (int c = 0; c < 16; ++c) {
      for (int r = 0; r < 4; ++r) {
        for (int q = 0; q < 4; ++q) {
          double want = 0;
          for (int i = 0; i < 3; ++i) {
            for (int j = 0; j < 3; ++j) {
              want += G[r][i] * static_cast<double>(w[(m * 16 + c) * 9 + i * 3 + j]) * G[q][j];
            }
          }
          const float got = u[((r * 4 + q) * 16 + m) * 16 + c];
          EXPECT_NEAR(got, want, 1e-6 * (1 + std::fabs(want))) << m << " " << c << " " << r << q;
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 4096);
}

// The workspace leaves U out; the plan passes the runtime's checks and is
// the same bytes when planned again.
TEST(WinogradWeights, SmallerWorkspaceSameBytes) {
  auto with = Plan(true);
  auto without = Plan(false);
  ASSERT_TRUE(with.ok()) << with.error();
  ASSERT_TRUE(without.ok()) << without.error();
  EXPECT_GT(WorkspaceOf(*with, "a"), 0);
  EXPECT_EQ(WorkspaceOf(*without, "a") - WorkspaceOf(*with, "a"), 16 * 16 * 16 * 4);
  auto bytes = EmitPlan(*with);
  ASSERT_TRUE(bytes.ok()) << bytes.error();
  EXPECT_TRUE(VerifyWithRuntime(bytes.value()).ok());
  auto again = Plan(true);
  ASSERT_TRUE(again.ok());
  auto bytes2 = EmitPlan(*again);
  ASSERT_TRUE(bytes2.ok());
  EXPECT_EQ(bytes.value(), bytes2.value());
}

// A Conv on a foreign runtime's device (Arm NN) goes into its region as the
// ONNX node: no U there, and none in the plan.
TEST(WinogradWeights, RuntimeDevicesGetNone) {
  auto g = ParseGraphJson(GraphJson(), "", "wino.json");
  ASSERT_TRUE(g.ok()) << g.error();
  auto target = LoadTarget(test::TargetPath("armnn_soc"));
  ASSERT_TRUE(target.ok()) << target.error();
  PlanOptions o;
  o.winograd_weights = true;
  o.rules.push_back(ParseAssignRule("@a=npu").value());
  auto p = PlanGraph(std::move(g.value()), target.value(), o);
  ASSERT_TRUE(p.ok()) << p.error();
  bool region = false;
  for (const Node& n : p->graph.nodes) {
    region = region || n.op == kSubgraphOp;
    EXPECT_LE(n.inputs.size(), 4u) << n.name;
  }
  EXPECT_TRUE(region);
  auto bytes = EmitPlan(*p);
  ASSERT_TRUE(bytes.ok()) << bytes.error();
  EXPECT_EQ(bytes->find("a/winograd_weights"), std::string::npos);
}

// Only the planner gives a Conv U: a graph file whose Conv has a fifth input
// is rejected at import, naming the node (ONNX's Conv takes X, W, B).
TEST(WinogradWeights, GraphFilesCannotGiveU) {
  const std::string json =
      R"({"name": "g", "inputs": [{"name": "x", "dtype": "float32", "shape": [1, 16, 16, 16]}],
      "outputs": ["y"], "initializers": [
      {"name": "w", "dtype": "float32", "shape": [16, 16, 3, 3], "data": )" +
      Values(16 * 16 * 9, 5) + R"(},
      {"name": "u", "dtype": "float32", "shape": [16, 16, 16], "data": )" +
      Values(16 * 16 * 16, 6) + R"(}],
      "nodes": [{"name": "c", "op": "Conv", "inputs": ["x", "w", "", "", "u"], "outputs": ["y"],
                 "attrs": {"pads": [1, 1, 1, 1]}}]})";
  auto g = ParseGraphJson(json, "", "g.json");
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.error().find("node 'c'"), std::string::npos) << g.error();
  EXPECT_NE(g.error().find("5 inputs"), std::string::npos) << g.error();
}

// A graph that already carries a tensor of U's name is an error naming it.
TEST(WinogradWeights, NameClashIsAnError) {
  auto g = ParseGraphJson(GraphJson(), "", "wino.json");
  ASSERT_TRUE(g.ok()) << g.error();
  Tensor t;
  t.name = "a/winograd_weights";
  t.shape = {1};
  t.shape_known = true;
  t.is_constant = true;
  t.data.resize(4);
  g->AddTensor(t);
  ASSERT_TRUE(InferShapes(&g.value()).ok());
  auto added = AddWinogradWeights(&g.value());
  ASSERT_FALSE(added.ok());
  EXPECT_NE(added.error().find("a/winograd_weights"), std::string::npos) << added.error();
}

}  // namespace
}  // namespace baton::planner
