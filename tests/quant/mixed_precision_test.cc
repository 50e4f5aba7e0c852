// Mixed float/int8 plans (issue 15): torch-quantized QDQ models (the cases
// tests/quant/make_quant_models.py writes, with ONNX Runtime's outputs) on
//  - imx93: a Cortex-A55 CPU and an Ethos-U65 that takes only uint8/int8;
//  - imx8mp: an int8-only NPU on shared DDR next to a float GPU and DSP;
//  - twin_npu: two int8-only NPUs, each behind its own SRAM and DMA engine;
//  - soc4: an NPU behind its own SRAM and DMA engine, float32 and int8.
// Placed by rules and by --auto. Every plan goes through the independent
// validator and the runtime's loader (PlanBytes). Checked here from the plan
// bytes alone: no node on an int8-only device reads or writes a non-constant
// tensor that is not 8-bit, every NPU under test does get work, copies
// appear where memory changes, and the outputs equal the single-CPU plan's and
// ONNX Runtime's (quant.models_match_ort holds the CPU plan to ORT too).

#include <gtest/gtest.h>

#include <cctype>
#include <ostream>
#include <string>
#include <vector>

#include "baton/plan_generated.h"
#include "common/test_util.h"

namespace baton::test {
namespace {

// The fixture quant.make_models writes the cases here.
std::string CaseDir(const std::string& model) {
  return std::string(BATON_BINARY_DIR) + "/quant_models/" + model;
}

bool IsEightBit(schema::DType t) { return t == schema::DType::UInt8 || t == schema::DType::Int8; }

struct Placement {
  int on_device = 0;        // nodes on the device under test
  int copies = 0;           // __copy nodes anywhere
  std::vector<std::string> not_int8;  // "node: tensor" on the device, not 8-bit
};

// Reads the plan: nodes on `queue`, their non-constant tensors' dtypes.
Placement Inspect(const PlanView& view, const std::string& queue) {
  Placement p;
  const schema::Plan* plan = view.plan();
  for (uint32_t n = 0; n < view.num_nodes(); ++n) {
    const schema::Node* node = view.node(n);
    if (node->op() == schema::Op::Copy) ++p.copies;
    if (view.queue(node->queue())->name()->str() != queue) continue;
    ++p.on_device;
    std::vector<int64_t> used;
    for (int32_t t : *node->inputs()) used.push_back(t);
    for (uint32_t t : *node->outputs()) used.push_back(t);
    for (int64_t t : used) {
      if (t < 0) continue;
      const schema::Tensor* tensor = plan->tensors()->Get(static_cast<uint32_t>(t));
      if (tensor->storage() == schema::Storage::Constant) continue;
      if (!IsEightBit(tensor->dtype())) {
        p.not_int8.push_back(node->name()->str() + ": " + tensor->name()->str());
      }
    }
  }
  return p;
}

Tensors RunOnce(Runner* runner, const std::string& model) {
  Tensors outputs;
  if (!runner->ok()) return outputs;
  Tensors inputs = {LoadNpyBytes(CaseDir(model) + "/input0.npy")};
  Status s = runner->Invoke(inputs, &outputs);
  EXPECT_TRUE(s.ok()) << s.message();
  return outputs;
}

struct MixedCase {
  std::string model;
  std::string target;
  std::vector<std::string> devices;  // the NPUs under test
  std::string fallback;              // the target's CPU
  bool int8_only;
  bool own_memory;  // the NPUs have their own memory: copies expected
  bool auto_partition;
  std::vector<std::string> rules;
};

std::string CaseName(const MixedCase& c) {
  return c.model + "/" + c.target + (c.auto_partition ? "/auto" : "/rules");
}

void PrintTo(const MixedCase& c, std::ostream* os) { *os << CaseName(c); }

const std::vector<std::string> kImx93Rules = {
    "QLinearConv=ethos_u65", "QLinearAdd=ethos_u65", "QLinearMatMul=ethos_u65",
    // Float ops a rule sends to the int8-only NPU fall back to the CPU.
    "GlobalAveragePool=ethos_u65", "Flatten=ethos_u65", "DequantizeLinear=ethos_u65"};
const std::vector<std::string> kImx8mpRules = {
    "QLinearConv=vip8000", "QLinearAdd=vip8000", "QLinearMatMul=vip8000",
    "DequantizeLinear=vip8000", "GlobalAveragePool=gc7000ul"};
// The first two convolutions on npu0, the rest on npu1: a two-NPU pipeline.
const std::vector<std::string> kTwinNpuRules = {
    "QLinearConv=npu1", "QLinearConv#0=npu0", "QLinearConv#1=npu0", "QLinearAdd=npu1",
    "QLinearMatMul=npu1", "GlobalAveragePool=npu1", "DequantizeLinear=npu1"};
const std::vector<std::string> kNone = {};
const std::vector<std::string> kSoc4Rules = {"QLinearConv=npu0", "QLinearAdd=npu0",
                                             "GlobalAveragePool=npu0"};

class MixedPrecision : public testing::TestWithParam<MixedCase> {};

TEST_P(MixedPrecision, PlansValidatesAndMatches) {
  const MixedCase& c = GetParam();
  const std::string model = CaseDir(c.model) + "/model.onnx";

  PlanSpec spec(model, c.target, c.rules, {}, c.auto_partition ? 1 : 2);
  spec.auto_partition = c.auto_partition;
  planner::Program program;
  const std::string bytes = PlanBytes(spec, &program);  // validator and loader
  ASSERT_FALSE(bytes.empty());
  const std::string cpu_bytes = PlanBytes(PlanSpec(model));
  ASSERT_FALSE(cpu_bytes.empty());

  Runner runner(bytes);
  ASSERT_TRUE(runner.ok());
  for (const std::string& device : c.devices) {
    const Placement placement = Inspect(runner.view(), device);
    EXPECT_GT(placement.on_device, 0) << "nothing placed on " << device;
    if (c.int8_only) {
      EXPECT_TRUE(placement.not_int8.empty())
          << placement.not_int8.size() << " tensors of another dtype on " << device
          << ", first: " << placement.not_int8.front();
    }
    if (c.own_memory) {
      EXPECT_GT(placement.copies, 0) << device << " has its own memory: copies expected";
    }
  }
  if (c.int8_only && !c.auto_partition) {
    // The float ops the rules named fell back to the CPU.
    bool fell_back = false;
    for (const auto& f : program.fallbacks) fell_back |= f.placed == c.fallback;
    EXPECT_TRUE(fell_back);
  }

  Tensors got = RunOnce(&runner, c.model);
  Runner cpu(cpu_bytes);
  Tensors want = RunOnce(&cpu, c.model);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(want.size(), 1u);
  EXPECT_EQ(got[0], want[0]) << "differs from the single-CPU plan";

  // ONNX Runtime's output (fused integer kernels): the CPU kernels are exact
  // against it on these models, so equal floats here too.
  const std::vector<float> ort = AsFloats(LoadNpyBytes(CaseDir(c.model) + "/ort_out0.npy"));
  const std::vector<float> ours = AsFloats(got[0]);
  ASSERT_EQ(ours.size(), ort.size());
  size_t equal = 0;
  for (size_t i = 0; i < ours.size(); ++i) equal += ours[i] == ort[i];
  EXPECT_EQ(equal, ours.size()) << "elements equal to ONNX Runtime's";
}

std::vector<MixedCase> Cases() {
  std::vector<MixedCase> cases;
  const std::vector<std::string> u65 = {"ethos_u65"}, vip = {"vip8000"}, twin = {"npu0", "npu1"};
  for (const char* m : {"mobilenet_v2", "resnet18", "ds_cnn_kws", "mobilenet_v1_025_vww"}) {
    cases.push_back({m, "imx93", u65, "a55", true, false, false, kImx93Rules});
    // resnet18's --auto search takes 27 s (minutes under ASan): the other
    // three cover it.
    if (std::string(m) != "resnet18") {
      cases.push_back({m, "imx93", u65, "a55", true, false, true, {}});
    }
    cases.push_back({m, "soc4", {"npu0"}, "cpu0", false, true, false, kSoc4Rules});
  }
  // mobilenet_v2 by rules; --auto on the two small models (mobilenet_v2's
  // searches take 1-3 s here, 10-20 s under ASan).
  for (const char* m : {"mobilenet_v2", "ds_cnn_kws", "mobilenet_v1_025_vww"}) {
    const bool search = std::string(m) != "mobilenet_v2";
    cases.push_back({m, "imx8mp", vip, "a53", true, false, search, search ? kNone : kImx8mpRules});
    cases.push_back({m, "twin_npu", twin, "cpu0", true, true, search, search ? kNone : kTwinNpuRules});
  }
  return cases;
}

std::string TestName(const testing::TestParamInfo<MixedCase>& param_info) {
  std::string name = CaseName(param_info.param);
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Quant, MixedPrecision, testing::ValuesIn(Cases()), TestName);

}  // namespace
}  // namespace baton::test
