// Custom ops through the planner (issue 16): an ONNX node of another domain,
// or one Baton does not know, declared with --custom-op or by a target
// device's op list, is planned as Op::Custom with its attributes, placed
// only on devices that list it, costed from the target's op_costs, and runs
// with the kernel the application registers (examples/custom_op's MyOp).
// The models and the numpy reference come from make_custom_op_cases.py.

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "baton/planner/analysis/cost.h"
#include "baton/planner/analysis/inspect.h"
#include "baton/planner/import/import_onnx.h"
#include "common/test_util.h"
#include "tool_test_util.h"
#include "my_op_kernel.h"

namespace baton::test {
namespace {

using planner::Graph;
using planner::ImportOptions;
using planner::Program;
using planner::Target;

constexpr const char kOp[] = "com.example::MyOp";

const std::string& CasesDir() {
  static const std::string dir =
      GeneratedCasesDir("tests/tools/make_custom_op_cases.py", "custom_op_cases");
  return dir;
}
std::string Case(const std::string& name) { return CasesDir() + "/" + name; }

// cpu0 (fallback, every built-in op), npu0 (every built-in op, no custom
// op), dsp0 (Relu and MyOp, with a cost for MyOp), all on one DRAM.
const char kTarget[] = R"({"name": "custom_soc", "fallback": "cpu0",
  "domains": [{"name": "dram", "bytes": 1048576, "alignment": 64}],
  "devices": [
    {"name": "cpu0", "kind": "cpu", "domains": ["dram"], "ops": "*"},
    {"name": "npu0", "kind": "npu", "domains": ["dram"], "ops": "*"},
    {"name": "dsp0", "kind": "dsp", "domains": ["dram"], "ops": ["Relu", "com.example::MyOp"],
     "op_costs": {"com.example::MyOp": {"seconds": 2e-5, "per_element_s": 1e-6}}}]})";

Target SocTarget() {
  auto t = planner::ParseTarget(kTarget, "custom_soc.json");
  EXPECT_TRUE(t.ok()) << t.error();
  return t.value();
}

// Imports with the custom ops `target` lists, plans, emits, and checks the
// plan with the runtime's loader and the independent validator.
planner::Result<std::string> Plan(const std::string& model, Target target,
                                  std::vector<std::string> rules = {},
                                  Program* out_program = nullptr) {
  ImportOptions options;
  options.custom_ops = planner::ListedCustomOps(target);
  BATON_ASSIGN_OR_RETURN(Graph graph, planner::ImportModel(model, options));
  planner::PlanOptions plan_options;
  for (const auto& r : rules) plan_options.rules.push_back(planner::ParseAssignRule(r).value());
  BATON_ASSIGN_OR_RETURN(Program program,
                         planner::PlanGraph(std::move(graph), std::move(target), plan_options));
  BATON_ASSIGN_OR_RETURN(std::string bytes, planner::EmitPlan(program));
  BATON_TRY(planner::VerifyWithRuntime(bytes));
  BATON_TRY(planner::ValidatePlanSchedule(bytes.data(), bytes.size()));
  if (out_program != nullptr) *out_program = std::move(program);
  return bytes;
}

Target CpuWith(const std::string& op) {
  Target t = planner::DefaultCpuTarget();
  EXPECT_TRUE(planner::DeclareCustomOp(op, &t).ok());
  return t;
}

Status RegisterMyOpCpu(KernelRegistry* r) { return example::RegisterMyOp(r, DeviceKind::Cpu); }
Status RegisterMyOpDsp(KernelRegistry* r) { return example::RegisterMyOp(r, DeviceKind::Dsp); }

// Runs the plan on x.npy and compares with make_custom_op_cases.py's numpy
// reference, relu(x * 1.5 - 2 + lut[c]).
void ExpectNumpyResult(const std::string& bytes, Status (*register_kernel)(KernelRegistry*)) {
  Runner runner(bytes, {}, register_kernel);
  ASSERT_TRUE(runner.ok());
  Tensors out;
  ASSERT_TRUE(runner.Invoke({LoadNpyBytes(Case("x.npy"))}, &out).ok());
  EXPECT_EQ(AsFloats(out[0]), AsFloats(LoadNpyBytes(Case("expected.npy"))));
}

TEST(CustomOpPlan, RoundTripKeepsEveryAttributeKindAndRuns) {
  auto bytes = Plan(Case("custom.onnx"), CpuWith(kOp));
  ASSERT_TRUE(bytes.ok()) << bytes.error();
  const nlohmann::json plan = Inspect(bytes.value());
  const nlohmann::json* node = NodeByOp(plan, kOp);
  ASSERT_NE(node, nullptr) << plan["nodes"].dump();
  EXPECT_EQ((*node)["name"], "my_op");
  EXPECT_EQ((*node)["queue"], "cpu0");
  // Values as make_custom_op_cases.py wrote them, one of each ONNX kind.
  const nlohmann::json want = nlohmann::json::parse(R"({
    "alpha": 1.5, "bias": -2, "gains": [0.5, 2.0], "mode": "affine",
    "tags": ["edge", "demo"], "taps": [1, 2, 3],
    "lut": {"dtype": "float32", "shape": [2], "bytes": 8, "values": [0.25, -0.5]}})");
  EXPECT_EQ((*node)["attributes"], want) << (*node)["attributes"].dump();
  // The text listing names the op too.
  auto loaded = planner::LoadedPlan::FromBytes(bytes.value().data(), bytes.value().size(), "p");
  const std::string text = planner::InspectText(loaded.value());
  EXPECT_NE(text.find("Custom ops"), std::string::npos) << text;
  EXPECT_NE(text.find(std::string("my_op  ") + kOp), std::string::npos) << text;
  ExpectNumpyResult(bytes.value(), RegisterMyOpCpu);
}

TEST(CustomOpPlan, PlanningTwiceGivesIdenticalBytes) {
  auto a = Plan(Case("custom.onnx"), CpuWith(kOp));
  auto b = Plan(Case("custom.onnx"), CpuWith(kOp));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(a.value() == b.value());
}

TEST(CustomOpPlan, DeclaredByTargetOpListRunsOnTheListingDevice) {
  Program program;
  // Rules put everything on npu0, whose "*" does not cover custom ops, and
  // the fallback cpu0 does not list MyOp: it goes to dsp0, which lists it.
  auto bytes = Plan(Case("custom.onnx"), SocTarget(), {"Relu=npu0", "@my_op=npu0"}, &program);
  ASSERT_TRUE(bytes.ok()) << bytes.error();
  const nlohmann::json plan = Inspect(bytes.value());
  const nlohmann::json* node = NodeByOp(plan, kOp);
  ASSERT_NE(node, nullptr);
  EXPECT_EQ((*node)["queue"], "dsp0");
  EXPECT_EQ((*NodeByOp(plan, "Relu"))["queue"], "npu0");
  ASSERT_EQ(program.fallbacks.size(), 1u);
  EXPECT_EQ(program.fallbacks[0].placed, "dsp0");
  ExpectNumpyResult(bytes.value(), RegisterMyOpDsp);
  // Without a rule, the same (the default device cpu0 does not list it).
  bytes = Plan(Case("custom.onnx"), SocTarget());
  ASSERT_TRUE(bytes.ok()) << bytes.error();
  EXPECT_EQ((*NodeByOp(Inspect(bytes.value()), kOp))["queue"], "dsp0");
}

TEST(CustomOpPlan, NotPlacedOnADeviceThatDoesNotListIt) {
  // Only npu0 and cpu0, neither listing MyOp: no device runs it.
  const std::string two = R"({"name": "two", "fallback": "cpu0",
    "domains": [{"name": "dram", "bytes": 1048576}],
    "devices": [{"name": "cpu0", "kind": "cpu", "domains": ["dram"], "ops": "*"},
                {"name": "npu0", "kind": "npu", "domains": ["dram"], "ops": "*"}]})";
  Target t = planner::ParseTarget(two, "two.json").value();
  ImportOptions options{{kOp}};  // declared, e.g. by another target
  auto graph = planner::ImportModel(Case("custom.onnx"), options);
  ASSERT_TRUE(graph.ok()) << graph.error();
  planner::PlanOptions plan_options;
  plan_options.rules.push_back(planner::ParseAssignRule("@my_op=npu0").value());
  auto failed = planner::PlanGraph(graph.value(), t, plan_options);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.error().find("node 'my_op'"), std::string::npos) << failed.error();
  EXPECT_NE(failed.error().find("npu0: device does not run op com.example::MyOp"),
            std::string::npos)
      << failed.error();
  // Pinned to dsp0, which lists it: placed there.
  auto bytes = Plan(Case("custom.onnx"), SocTarget(), {"@my_op=dsp0"});
  ASSERT_TRUE(bytes.ok()) << bytes.error();
  EXPECT_EQ((*NodeByOp(Inspect(bytes.value()), kOp))["queue"], "dsp0");
  // With --custom-op the fallback cpu0 runs it (before dsp0).
  Target declared = SocTarget();
  ASSERT_TRUE(planner::DeclareCustomOp(kOp, &declared).ok());
  bytes = Plan(Case("custom.onnx"), declared, {"@my_op=npu0"});
  ASSERT_TRUE(bytes.ok()) << bytes.error();
  EXPECT_EQ((*NodeByOp(Inspect(bytes.value()), kOp))["queue"], "cpu0");
  ExpectNumpyResult(bytes.value(), RegisterMyOpCpu);
}

TEST(CustomOpPlan, CostComesFromTheTargetsOpCosts) {
  auto bytes = Plan(Case("custom.onnx"), SocTarget(), {"@my_op=dsp0"});
  ASSERT_TRUE(bytes.ok()) << bytes.error();
  const schema::Plan* plan = schema::GetPlan(bytes.value().data());
  auto costs = planner::NodeCostsOf(*plan, SocTarget());
  ASSERT_TRUE(costs.ok()) << costs.error();
  bool found = false;
  for (uint32_t n = 0; n < plan->nodes()->size(); ++n) {
    if (plan->nodes()->Get(n)->op() != schema::Op::Custom) continue;
    found = true;
    // seconds + per_element_s * 6 output elements, by hand.
    EXPECT_NEAR(costs.value().seconds[n], 2e-5 + 6 * 1e-6, 1e-12);
  }
  EXPECT_TRUE(found);
}

TEST(CustomOpPlan, TargetOpCostsErrorsNameFileAndField) {
  const std::string bad = R"({"domains": [{"name": "dram", "bytes": 1024}],
    "devices": [{"name": "cpu0", "kind": "cpu", "domains": ["dram"],
                 "op_costs": {"x::Y": {"secs": 1}}}]})";
  auto t = planner::ParseTarget(bad, "bad.json");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().find("bad.json"), std::string::npos) << t.error();
  EXPECT_NE(t.error().find("op_costs['x::Y']"), std::string::npos) << t.error();
  EXPECT_NE(t.error().find("secs"), std::string::npos) << t.error();
  auto negative = planner::ParseTarget(
      R"({"domains": [{"name": "dram", "bytes": 1024}],
          "devices": [{"name": "cpu0", "kind": "cpu", "domains": ["dram"],
                       "op_costs": {"Conv": {"seconds": -1}}}]})",
      "neg.json");
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.error().find("seconds"), std::string::npos) << negative.error();
}

TEST(CustomOpPlan, MissingShapeNamesTheTensor) {
  auto graph = planner::ImportOnnx(Case("noshape.onnx"), ImportOptions{{kOp}});
  ASSERT_FALSE(graph.ok());
  EXPECT_NE(graph.error().find("output 't'"), std::string::npos) << graph.error();
  EXPECT_NE(graph.error().find("annotate"), std::string::npos) << graph.error();
}

TEST(CustomOpPlan, UndeclaredOpSuggestsCustomOp) {
  auto graph = planner::ImportOnnx(Case("custom.onnx"));
  ASSERT_FALSE(graph.ok());
  EXPECT_NE(graph.error().find("unsupported ops"), std::string::npos) << graph.error();
  EXPECT_NE(graph.error().find("--custom-op com.example::MyOp"), std::string::npos)
      << graph.error();
  auto unknown = planner::ImportOnnx(Case("default.onnx"));
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().find("--custom-op ai.onnx::Frobnicate"), std::string::npos)
      << unknown.error();
}

TEST(CustomOpPlan, DefaultDomainOpIsDeclaredAsAiOnnx) {
  auto bytes = Plan(Case("default.onnx"), CpuWith("ai.onnx::Frobnicate"));
  ASSERT_TRUE(bytes.ok()) << bytes.error();
  const nlohmann::json plan = Inspect(bytes.value());
  const nlohmann::json* node = NodeByOp(plan, "ai.onnx::Frobnicate");
  ASSERT_NE(node, nullptr);
  EXPECT_EQ((*node)["attributes"], nlohmann::json::object());
}

TEST(CustomOpPlan, GraphJsonCustomOpNeedsDeclarationAndOutputTypes) {
  const std::string json = R"({"inputs": [{"name": "x", "shape": [1, 2, 3]}], "outputs": ["y"],
    "nodes": [{"name": "my_op", "op": "com.example::MyOp", "inputs": ["x"], "outputs": ["t"],
               "attrs": {"alpha": 1.5, "bias": -2, "tags": ["edge", "demo"]},
               "output_types": [{"dtype": "float32", "shape": [1, 2, 3]}]},
              {"name": "relu", "op": "Relu", "inputs": ["t"], "outputs": ["y"]}]})";
  auto undeclared = planner::ParseGraphJson(json, "", "g.json");
  ASSERT_FALSE(undeclared.ok());
  EXPECT_NE(undeclared.error().find("--custom-op com.example::MyOp"), std::string::npos)
      << undeclared.error();
  auto g = planner::ParseGraphJson(json, "", "g.json", ImportOptions{{kOp}});
  ASSERT_TRUE(g.ok()) << g.error();
  EXPECT_EQ(g.value().nodes[0].op, kOp);
  EXPECT_EQ(g.value().nodes[0].attrs.at("tags").strings,
            (std::vector<std::string>{"edge", "demo"}));
  EXPECT_EQ(g.value().tensors[g.value().FindTensor("y")].shape, (std::vector<int64_t>{1, 2, 3}));
  std::string no_types = json;
  no_types.replace(no_types.find("\"output_types\""), 14, "\"output_typez\"");
  auto missing = planner::ParseGraphJson(no_types, "", "g.json", ImportOptions{{kOp}});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("output_types"), std::string::npos) << missing.error();
}

// --- The command line ------------------------------------------------------

CliResult Baton(const std::string& args) { return RunBaton(args); }

TEST(CustomOpCli, PlanDeclaresAndRunNamesTheMissingKernel) {
  const std::string plan = CasesDir() + "/cli.baton";
  CliResult r = Baton("plan " + Case("custom.onnx") + " -o " + plan);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("--custom-op com.example::MyOp"), std::string::npos) << r.out;
  r = Baton("plan " + Case("custom.onnx") + " --custom-op MyOp -o " + plan);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("DOMAIN::NAME"), std::string::npos) << r.out;
  r = Baton("plan " + Case("noshape.onnx") + " --custom-op com.example::MyOp -o " + plan);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("'t'"), std::string::npos) << r.out;

  r = Baton("plan " + Case("custom.onnx") + " --custom-op com.example::MyOp -q -o " + plan);
  ASSERT_EQ(r.code, 0) << r.out;
  r = Baton("inspect " + plan);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("com.example::MyOp"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"tags\":[\"edge\",\"demo\"]"), std::string::npos) << r.out;
  // `baton run` registers no custom kernel: the loader's message names the op.
  r = Baton("run " + plan + " --input x=" + Case("x.npy") + " --output-dir " + CasesDir() +
            "/cli_out");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("com.example::MyOp"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace baton::test
