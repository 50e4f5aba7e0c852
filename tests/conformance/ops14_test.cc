// Conformance against PyTorch for issue 14's elementwise, activation and
// reduction ops: tests/conformance/export_ops14.py exports a small module
// (nn.GELU, nn.Mish, Softplus, ELU, PReLU, maximum/minimum, log_softmax,
// sum/amax/amin, argmax, topk, sqrt/pow/exp/log/erf...) at opsets 11, 13
// and 17, with a graph built by onnx.helper for the ops whose signature
// changes between opsets (numpy references); each export is planned for the single-CPU and the 4-device
// target, run, and compared with torch's outputs: float outputs within
// 1e-4 * max |torch|, int64 outputs (argmax, topk indices) exactly.

#include <gtest/gtest.h>

#include <map>

#include "common/test_util.h"

namespace baton::test {
namespace {

std::string Export(int opset) {
  const std::string dir =
      std::string(BATON_BINARY_DIR) + "/conformance/ops14_opset" + std::to_string(opset);
  const std::string cmd = std::string(BATON_PYTHON) + " " + BATON_SOURCE_DIR +
                          "/tests/conformance/export_ops14.py " + dir + " --opset " +
                          std::to_string(opset) + " > " + dir + ".log 2>&1";
  EXPECT_TRUE(GenerateOnce(dir, cmd)) << cmd;
  return dir;
}

// The float ops spread over soc4.json's accelerators (ArgMax, TopK and Tile,
// with int64 tensors, stay on the CPU, the only device that handles int64).
const std::vector<std::string> kSoc4Rules = {
    "Conv=npu0",      "Gelu=npu0",       "PRelu=npu0",     "Max=npu0",      "Min=gpu0",
    "Mish=gpu0",      "Softplus=gpu0",   "Elu=gpu0",       "Pow=gpu0",      "Neg=gpu0",
    "Abs=gpu0",       "Reciprocal=gpu0", "LogSoftmax=dsp0", "ReduceSum=dsp0", "ReduceMax=dsp0",
    "ReduceMin=dsp0", "ReduceL2=dsp0",   "Exp=dsp0",       "Log=dsp0",      "Sqrt=dsp0",
    "Erf=dsp0"};

void CheckOutputs(const std::string& bytes, const std::string& input, const std::string& prefix,
                  size_t count) {
  Runner runner(bytes);
  ASSERT_TRUE(runner.ok());
  Tensors outputs;
  Status s = runner.Invoke({LoadNpyBytes(input)}, &outputs);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(outputs.size(), count);
  for (size_t k = 0; k < count; ++k) {
    SCOPED_TRACE("output " + std::to_string(k));
    auto ref = planner::ReadNpy(prefix + std::to_string(k) + ".npy");
    ASSERT_TRUE(ref.ok()) << ref.error();
    if (ref->dtype == DType::Int64) {
      EXPECT_EQ(outputs[k], ref->data);
    } else {
      EXPECT_LE(RelativeError(AsFloats(outputs[k]), AsFloats(ref->data)), 1e-4);
    }
  }
}

void CheckOpset(int opset, const std::string& target, const std::vector<std::string>& rules) {
  SCOPED_TRACE("opset " + std::to_string(opset) + " on " + target);
  const std::string dir = Export(opset);
  planner::Program program;
  const std::string bytes = PlanBytes(PlanSpec(dir + "/ops14.onnx", target, rules), &program);
  ASSERT_FALSE(bytes.empty());
  // The fusions fired: no Erf-pattern GELU or Tanh(Softplus) Mish is left.
  std::map<std::string, int> ops;
  for (const planner::Node& n : program.graph.nodes) ++ops[n.op];
  EXPECT_EQ(ops["Gelu"], 1);
  EXPECT_EQ(ops["Mish"], 1);
  EXPECT_EQ(ops["Tanh"], 0);
  EXPECT_EQ(ops["Erf"], 1);  // the explicit torch.erf only
  CheckOutputs(bytes, dir + "/input.npy", dir + "/output", 5);
  if (target == "soc4") {
    int on_accelerators = 0;
    for (size_t n = 0; n < program.graph.nodes.size(); ++n) {
      on_accelerators += program.queues[program.node_queue[n]].kind != schema::DeviceKind::Cpu;
    }
    EXPECT_GT(on_accelerators, 10);
  }
  // The hand-built graph: ReduceSum's axes as attribute (11) or input (13+),
  // TopK, Tile, ReduceL2, ArgMin, Pow with an int64 exponent, Max/Min.
  const std::string graph_bytes = PlanBytes(PlanSpec(dir + "/graph.onnx", target, rules));
  ASSERT_FALSE(graph_bytes.empty());
  CheckOutputs(graph_bytes, dir + "/graph_input.npy", dir + "/graph_output", 5);
}

TEST(ConformanceOps14, Opset11) {
  CheckOpset(11, "cpu", {});
  CheckOpset(11, "soc4", kSoc4Rules);
}

TEST(ConformanceOps14, Opset13) {
  CheckOpset(13, "cpu", {});
  CheckOpset(13, "soc4", kSoc4Rules);
}

TEST(ConformanceOps14, Opset17) {
  CheckOpset(17, "cpu", {});
  CheckOpset(17, "soc4", kSoc4Rules);
}

}  // namespace
}  // namespace baton::test
