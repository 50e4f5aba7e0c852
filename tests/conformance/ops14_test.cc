// Conformance against PyTorch for issue 14's elementwise, activation and
// reduction ops: tests/conformance/export_ops14.py exports a small module
// (nn.GELU, nn.Mish, Softplus, ELU, PReLU, maximum/minimum, log_softmax,
// sum/amax/amin, argmax, topk, sqrt/pow/exp/log/erf..., repeat) at opsets
// 11, 13 and 17; each export is planned for the single-CPU and the 4-device
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
  if (!std::ifstream(dir + "/output4.npy").good()) {
    std::system(("mkdir -p " + dir).c_str());
    const std::string cmd = std::string(BATON_PYTHON) + " " + BATON_SOURCE_DIR +
                            "/tests/conformance/export_ops14.py " + dir + " --opset " +
                            std::to_string(opset) + " > " + dir + ".log 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  return dir;
}

// Every new op kind on an accelerator of soc4.json somewhere.
const std::vector<std::string> kSoc4Rules = {
    "Conv=npu0",      "Gelu=npu0",       "Mish=gpu0",      "Softplus=gpu0", "Elu=dsp0",
    "PRelu=npu0",     "Max=gpu0",        "Min=gpu0",       "LogSoftmax=dsp0", "ReduceSum=dsp0",
    "ReduceMax=dsp0", "ArgMax=gpu0",     "TopK=dsp0",      "Sqrt=npu0",     "Pow=npu0",
    "Exp=gpu0",       "Log=gpu0",        "Erf=dsp0",       "Reciprocal=dsp0", "ReduceMin=npu0",
    "Tile=gpu0"};

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
  Runner runner(bytes);
  ASSERT_TRUE(runner.ok());
  Tensors outputs;
  Status s = runner.Invoke({LoadNpyBytes(dir + "/input.npy")}, &outputs);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(outputs.size(), 5u);
  for (int k = 0; k < 5; ++k) {
    SCOPED_TRACE("output " + std::to_string(k));
    auto ref = planner::ReadNpy(dir + "/output" + std::to_string(k) + ".npy");
    ASSERT_TRUE(ref.ok()) << ref.error();
    if (ref->dtype == DType::Int64) {
      EXPECT_EQ(outputs[k], ref->data);
    } else {
      EXPECT_LE(RelativeError(AsFloats(outputs[k]), AsFloats(ref->data)), 1e-4);
    }
  }
  if (target == "soc4") {
    int on_accelerators = 0;
    for (size_t n = 0; n < program.graph.nodes.size(); ++n) {
      on_accelerators += program.queues[program.node_queue[n]].kind != schema::DeviceKind::Cpu;
    }
    EXPECT_GT(on_accelerators, 10);
  }
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
