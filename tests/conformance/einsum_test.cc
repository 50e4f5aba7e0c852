// Einsum against numpy.einsum: tests/conformance/make_einsum_models.py writes
// one-node models (attention, batched and broadcast matmuls, ellipsis,
// implicit outputs, transposes, reductions, outer and elementwise products)
// at opsets 12, 13 and 17. The importer lowers each Einsum into Transpose,
// Reshape, ReduceSum, MatMul or Mul; each case is planned for one CPU and for
// soc4 with those ops on the accelerators, run on the Linux port, and
// compared with numpy. Rejected equations must name the node and equation.

#include <gtest/gtest.h>

#include "common/test_util.h"

namespace baton::test {
namespace {

std::string EinsumDir() {
  static const std::string dir = ConformanceCases("make_einsum_models.py", "einsum");
  return dir;
}

TEST(Einsum, MatchesNumpy) {
  const std::string dir = EinsumDir();
  std::ifstream list(dir + "/cases.txt");
  std::string name;
  const std::vector<std::string> rules = {"MatMul=gpu0", "Transpose=gpu0", "Reshape=dsp0",
                                          "ReduceSum=dsp0", "Mul=dsp0"};
  int cases = 0;
  while (std::getline(list, name)) {
    if (name.empty()) continue;
    ++cases;
    const std::string model = dir + "/" + name + "/model.onnx";
    Tensors inputs;
    for (int k = 0; k < 2; ++k) {
      const std::string path = dir + "/" + name + "/input" + std::to_string(k) + ".npy";
      if (std::ifstream(path).good()) inputs.push_back(LoadNpyBytes(path));
    }
    const auto expected = AsFloats(LoadNpyBytes(dir + "/" + name + "/output.npy"));
    ASSERT_FALSE(expected.empty()) << name;
    auto graph = planner::ImportModel(model);
    ASSERT_TRUE(graph.ok()) << name << ": " << graph.error();
    for (const auto& node : graph->nodes) EXPECT_NE(node.op, "Einsum") << name;
    for (const char* target : {"cpu", "soc4"}) {
      SCOPED_TRACE(name + " on " + target);
      const std::string bytes = PlanBytes(
          PlanSpec(model, target, target == std::string("soc4") ? rules : std::vector<std::string>{}));
      ASSERT_FALSE(bytes.empty());
      Runner runner(bytes);
      ASSERT_TRUE(runner.ok());
      Tensors outputs;
      Status s = runner.Invoke(inputs, &outputs);
      ASSERT_TRUE(s.ok()) << s.message();
      const auto got = AsFloats(outputs[0]);
      ASSERT_EQ(got.size(), expected.size());
      EXPECT_LE(MaxAbsDiff(got, expected), 1e-5);
    }
  }
  EXPECT_EQ(cases, 66);
}

// The contraction goes through MatMul (the GEMM core), not a generic loop.
TEST(Einsum, AttentionLowersToOneMatMul) {
  auto graph = planner::ImportModel(EinsumDir() + "/attn_values_opset13/model.onnx");
  ASSERT_TRUE(graph.ok()) << graph.error();
  ASSERT_EQ(graph->nodes.size(), 1u);  // bhij,bhjd->bhid needs no transpose
  EXPECT_EQ(graph->nodes[0].op, "MatMul");
  auto scores = planner::ImportModel(EinsumDir() + "/attn_scores_opset13/model.onnx");
  ASSERT_TRUE(scores.ok()) << scores.error();
  std::vector<std::string> ops;
  for (const auto& node : scores->nodes) ops.push_back(node.op);
  EXPECT_EQ(ops, (std::vector<std::string>{"Transpose", "MatMul"}));
}

TEST(Einsum, UnsupportedEquationsNameNodeAndEquation) {
  const std::string dir = EinsumDir();
  std::ifstream list(dir + "/errors.txt");
  std::string path, message;
  int cases = 0;
  while (list >> path && std::getline(list, message)) {
    message = message.substr(1);
    ++cases;
    auto graph = planner::ImportModel(path);
    ASSERT_FALSE(graph.ok()) << path;
    EXPECT_NE(graph.error().find(message), std::string::npos) << graph.error();
    EXPECT_NE(graph.error().find("node 'bad_"), std::string::npos) << graph.error();
    EXPECT_NE(graph.error().find("Einsum '"), std::string::npos) << graph.error();
  }
  EXPECT_EQ(cases, 4);
}

}  // namespace
}  // namespace baton::test
