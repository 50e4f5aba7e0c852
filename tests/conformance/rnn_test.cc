// LSTM and GRU against torch and numpy: tests/conformance/make_rnn_models.py
// exports nn.LSTM and nn.GRU modules (one and two layers, bidirectional,
// batch first, initial states, a keyword-spotting LSTM) at opsets 11, 13 and
// 17 with torch's outputs, and builds single nodes torch never exports
// (reverse, peepholes, GRU with linear_before_reset 0, a constant
// sequence_lens, an omitted Y) with outputs from a numpy implementation of
// ONNX's equations. Each case is planned for one CPU and for soc4 with the
// recurrent nodes on the DSP and the GPU, run on the Linux port, and every
// output compared within 1e-4 of max |reference|.

#include <gtest/gtest.h>

#include <sstream>

#include "common/test_util.h"

namespace baton::test {
namespace {

std::string RnnDir() {
  static const std::string dir = ConformanceCases("make_rnn_models.py", "rnn");
  return dir;
}

TEST(Rnn, MatchesTorchAndNumpy) {
  const std::string dir = RnnDir();
  std::ifstream list(dir + "/cases.txt");
  std::string line;
  std::getline(list, line);  // the script's hash
  const std::vector<std::string> rules = {"LSTM=dsp0", "GRU=gpu0"};
  int cases = 0;
  while (std::getline(list, line)) {
    std::istringstream fields(line);
    std::string name;
    int num_inputs = 0, num_outputs = 0;
    if (!(fields >> name >> num_inputs >> num_outputs)) continue;
    ++cases;
    const std::string base = dir + "/" + name + "/";
    Tensors inputs;
    for (int k = 0; k < num_inputs; ++k) {
      inputs.push_back(LoadNpyBytes(base + "input" + std::to_string(k) + ".npy"));
    }
    auto graph = planner::ImportModel(base + "model.onnx");
    ASSERT_TRUE(graph.ok()) << name << ": " << graph.error();
    int recurrent = 0;
    for (const auto& node : graph->nodes) recurrent += node.op == "LSTM" || node.op == "GRU";
    EXPECT_GE(recurrent, 1) << name;
    for (const char* target : {"cpu", "soc4"}) {
      SCOPED_TRACE(name + " on " + target);
      const bool soc4 = target == std::string("soc4");
      planner::Program program;
      const std::string bytes =
          PlanBytes(PlanSpec(base + "model.onnx", target, soc4 ? rules : std::vector<std::string>{}),
                    &program);
      ASSERT_FALSE(bytes.empty());
      if (soc4) {
        for (size_t n = 0; n < program.graph.nodes.size(); ++n) {
          const std::string& op = program.graph.nodes[n].op;
          if (op != "LSTM" && op != "GRU") continue;
          EXPECT_EQ(program.queues[program.node_queue[n]].kind,
                    op == "LSTM" ? schema::DeviceKind::Dsp : schema::DeviceKind::Gpu);
        }
      }
      Runner runner(bytes);
      ASSERT_TRUE(runner.ok());
      Tensors outputs;
      Status s = runner.Invoke(inputs, &outputs);
      ASSERT_TRUE(s.ok()) << s.message();
      ASSERT_EQ(outputs.size(), static_cast<size_t>(num_outputs));
      for (int k = 0; k < num_outputs; ++k) {
        const auto expected = AsFloats(LoadNpyBytes(base + "output" + std::to_string(k) + ".npy"));
        ASSERT_FALSE(expected.empty());
        EXPECT_LE(RelativeError(AsFloats(outputs[k]), expected), 1e-4) << "output " << k;
      }
    }
  }
  EXPECT_EQ(cases, 18);
}

TEST(Rnn, UnsupportedFormsNameNodeAndReason) {
  const std::string dir = RnnDir();
  std::ifstream list(dir + "/errors.txt");
  std::string path, message;
  int cases = 0;
  while (list >> path && std::getline(list, message)) {
    message = message.substr(1);
    ++cases;
    std::string error;
    auto graph = planner::ImportModel(path);
    if (!graph.ok()) {
      error = graph.error();
    } else {
      auto target = planner::LoadTarget(TargetPath("cpu"));
      ASSERT_TRUE(target.ok()) << target.error();
      auto program = planner::PlanGraph(std::move(graph).value(), std::move(target).value(),
                                        planner::PlanOptions());
      ASSERT_FALSE(program.ok()) << path;
      error = program.error();
    }
    EXPECT_NE(error.find("node 'lstm'"), std::string::npos) << error;
    EXPECT_NE(error.find(message), std::string::npos) << error;
  }
  EXPECT_EQ(cases, 4);
}

}  // namespace
}  // namespace baton::test
