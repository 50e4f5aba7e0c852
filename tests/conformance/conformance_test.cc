// Conformance against PyTorch: torchvision architectures with seeded random
// weights (and non-trivial BatchNorm statistics) are exported to ONNX by
// tools/export_torchvision.py, planned for the single-CPU and the 4-device
// target, run, and compared with torch's own output:
//   max |baton - torch| <= 1e-4 * max |torch|.

#include <gtest/gtest.h>

#include <set>

#include "common/test_util.h"
#include "kernels/kernel_test_util.h"  // IsaGuard

namespace baton::test {
namespace {

struct Model {
  const char* name;
  int size;
};

std::string Export(const Model& m) {
  const std::string dir = std::string(BATON_BINARY_DIR) + "/conformance/" + m.name + "_" + std::to_string(m.size);
  const std::string cmd = std::string(BATON_PYTHON) + " " + BATON_SOURCE_DIR +
                          "/tools/export_torchvision.py " + m.name + " " + dir + " --size " +
                          std::to_string(m.size) + " > " + dir + ".log 2>&1";
  EXPECT_TRUE(GenerateOnce(dir, cmd)) << cmd;
  return dir;
}

// Rules that spread a CNN over all four devices of soc4.json.
const std::vector<std::string> kSoc4Rules = {
    "Conv=npu0", "Add=gpu0", "MaxPool=gpu0", "Concat=gpu0", "Mul=gpu0", "Sigmoid=gpu0",
    "HardSwish=gpu0", "AveragePool=npu0", "GlobalAveragePool=dsp0", "Gemm=dsp0", "Flatten=dsp0",
    "Reshape=dsp0", "ReduceMean=dsp0"};

void CheckModel(const Model& m, const std::string& target, const std::vector<std::string>& rules) {
  SCOPED_TRACE(std::string(m.name) + " on " + target);
  const std::string dir = Export(m);
  planner::Program program;
  const std::string bytes = PlanBytes(PlanSpec(dir + "/" + m.name + ".onnx", target, rules), &program);
  ASSERT_FALSE(bytes.empty());
  Runner runner(bytes);
  ASSERT_TRUE(runner.ok());
  Tensors outputs;
  Status s = runner.Invoke({LoadNpyBytes(dir + "/input.npy")}, &outputs);
  ASSERT_TRUE(s.ok()) << s.message();
  const auto expected = AsFloats(LoadNpyBytes(dir + "/output.npy"));
  ASSERT_FALSE(expected.empty());
  EXPECT_LE(RelativeError(AsFloats(outputs[0]), expected), 1e-4);
  if (target == "soc4") {
    int on_accelerators = 0;
    for (size_t n = 0; n < program.graph.nodes.size(); ++n) {
      on_accelerators += program.queues[program.node_queue[n]].kind != schema::DeviceKind::Cpu;
    }
    EXPECT_GT(on_accelerators, 0);
  }
}

TEST(Conformance, MobileNetV2) {
  CheckModel({"mobilenet_v2", 224}, "cpu", {});
  CheckModel({"mobilenet_v2", 224}, "soc4", kSoc4Rules);
}

TEST(Conformance, ResNet18) {
  CheckModel({"resnet18", 224}, "cpu", {});
  CheckModel({"resnet18", 224}, "soc4", kSoc4Rules);
}

TEST(Conformance, SqueezeNet11) {
  CheckModel({"squeezenet1_1", 224}, "cpu", {});
  CheckModel({"squeezenet1_1", 224}, "soc4", kSoc4Rules);
}

// The three models once per GEMM instruction set this build and CPU have
// (the tests above use the default, the widest).
TEST(Conformance, ThreeModelsEveryIsa) {
  const baton::testing::IsaGuard restore;
  for (KernelIsa isa : {KernelIsa::kPortable, KernelIsa::kAvx2, KernelIsa::kAvx512}) {
    if (!KernelIsaAvailable(isa)) continue;
    SCOPED_TRACE(KernelIsaName(isa));
    ASSERT_TRUE(SelectKernelIsa(isa));
    for (const char* name : {"mobilenet_v2", "resnet18", "squeezenet1_1"}) {
      CheckModel({name, 224}, "cpu", {});
    }
  }
}

// Segmentation: lraspp's head upsamples with Resize (bilinear).
TEST(Conformance, LrasppMobileNetV3Large) {
  CheckModel({"lraspp_mobilenet_v3_large", 128}, "cpu", {});
  CheckModel({"lraspp_mobilenet_v3_large", 128}, "soc4", kSoc4Rules);
}

// Small models of one op each (Resize and Upsample in every mode,
// ConvTranspose, DepthToSpace, SpaceToDepth, LayerNormalization fused or not,
// InstanceNormalization, GroupNorm's export) and a ConvTranspose + Upsample
// autoencoder, at opsets 9 to 17, from tests/conformance/make_op_models.py:
// expected outputs from torch or ONNX's numpy references. Each is planned for
// one CPU and for soc4 with its ops on the GPU.
TEST(Conformance, OpModels) {
  const std::string dir = std::string(BATON_BINARY_DIR) + "/conformance/op_models";
  const std::string cmd = std::string(BATON_PYTHON) + " " + BATON_SOURCE_DIR +
                          "/tests/conformance/make_op_models.py " + dir + " > " + dir +
                          ".log 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream list(dir + "/cases.txt");
  std::string name;
  std::getline(list, name);  // the script's hash
  const std::vector<std::string> rules = {
      "Resize=gpu0", "ConvTranspose=gpu0", "DepthToSpace=gpu0", "SpaceToDepth=gpu0",
      "LayerNormalization=gpu0", "InstanceNormalization=gpu0", "Conv=npu0", "Mul=dsp0",
      "Reshape=dsp0"};
  int cases = 0;
  while (std::getline(list, name)) {
    if (name.empty()) continue;
    ++cases;
    const std::string model = dir + "/" + name + "/model.onnx";
    const auto input = LoadNpyBytes(dir + "/" + name + "/input.npy");
    const auto expected = AsFloats(LoadNpyBytes(dir + "/" + name + "/output.npy"));
    ExpectMatchesOnCpuAndSoc4(model, input, expected, rules, name);
  }
  EXPECT_GE(cases, 80);
}

// Other torchvision classifiers built from the same operators, at a smaller
// input size to keep CI fast.
class OtherClassifiers : public ::testing::TestWithParam<Model> {};

TEST_P(OtherClassifiers, MatchTorch) { CheckModel(GetParam(), "cpu", {}); }

INSTANTIATE_TEST_SUITE_P(
    Torchvision, OtherClassifiers,
    ::testing::Values(Model{"mobilenet_v3_small", 96}, Model{"mobilenet_v3_large", 96},
                      Model{"shufflenet_v2_x0_5", 96}, Model{"mnasnet0_5", 96},
                      Model{"efficientnet_b0", 96}, Model{"resnet50", 96},
                      Model{"regnet_x_400mf", 96}, Model{"densenet121", 64},
                      Model{"googlenet", 96}, Model{"squeezenet1_0", 96}),
    [](const ::testing::TestParamInfo<Model>& param_info) { return std::string(param_info.param.name); });

// baton plan --auto on every bundled multi-device target: the plan passes the
// independent validator (PlanBytes), and a stream of 2 * D inferences through
// the pipeline gives, for every inference, torch's output and the single-CPU
// plan's output.
struct AutoCase {
  Model model;
  const char* target;
};

class AutoPlans : public ::testing::TestWithParam<AutoCase> {};

TEST_P(AutoPlans, MatchTorchAndTheCpuPlan) {
  const AutoCase& c = GetParam();
  SCOPED_TRACE(std::string(c.model.name) + " --auto on " + c.target);
  const std::string dir = Export(c.model);
  const std::string onnx = dir + "/" + c.model.name + ".onnx";
  const auto input = LoadNpyBytes(dir + "/input.npy");
  const auto expected = AsFloats(LoadNpyBytes(dir + "/output.npy"));
  ASSERT_FALSE(expected.empty());

  Tensors cpu_outputs;
  {
    Runner cpu(PlanBytes(PlanSpec(onnx, "cpu")));
    ASSERT_TRUE(cpu.ok());
    ASSERT_TRUE(cpu.Invoke({input}, &cpu_outputs).ok());
  }

  PlanSpec spec(onnx, c.target);
  spec.auto_partition = true;
  planner::Program program;
  const std::string bytes = PlanBytes(spec, &program);
  ASSERT_FALSE(bytes.empty());
  std::set<int> queues_used;
  for (size_t n = 0; n < program.node_queue.size(); ++n) queues_used.insert(program.node_queue[n]);
  EXPECT_GE(queues_used.size(), 2u) << "--auto kept everything on one queue";
  EXPECT_GE(program.auto_report.throughput_per_s,
            0.999 * program.auto_report.best_single_throughput_per_s);

  Runner runner(bytes);
  ASSERT_TRUE(runner.ok());
  const std::vector<Tensors> inputs(2 * static_cast<size_t>(program.in_flight), Tensors{input});
  std::vector<Tensors> results;
  std::vector<StatusCode> statuses;
  runner.Stream(inputs, &results, &statuses);
  ASSERT_EQ(results.size(), inputs.size());
  for (size_t i = 0; i < results.size(); ++i) {
    ASSERT_EQ(statuses[i], StatusCode::kOk) << "inference " << i;
    const auto got = AsFloats(results[i][0]);
    EXPECT_LE(RelativeError(got, expected), 1e-4) << "inference " << i << " vs torch";
    EXPECT_LE(RelativeError(got, AsFloats(cpu_outputs[0])), 1e-5) << "inference " << i << " vs cpu";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Torchvision, AutoPlans,
    ::testing::Values(AutoCase{{"mobilenet_v2", 224}, "soc4"},
                      AutoCase{{"resnet18", 96}, "twin_npu_f32"},
                      AutoCase{{"squeezenet1_1", 96}, "imx8mp_f32"},
                      AutoCase{{"googlenet", 96}, "soc4"},
                      AutoCase{{"mobilenet_v3_small", 96}, "twin_npu_f32"},
                      AutoCase{{"efficientnet_b0", 96}, "imx8mp_f32"}),
    [](const ::testing::TestParamInfo<AutoCase>& param_info) {
      return std::string(param_info.param.model.name) + "_" + param_info.param.target;
    });

}  // namespace
}  // namespace baton::test
