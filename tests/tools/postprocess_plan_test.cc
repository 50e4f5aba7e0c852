// Baton's own post-processing ops through the planner (issue 16):
// baton::DecodeBoxes and baton::NonMaxSuppression are known without
// --custom-op, their outputs are inferred (InferPostprocessOutputs; a model's
// declaration must agree), NonMaxSuppression's workspace is planned, they run
// only on CPU devices, and the plan runs with RegisterPostprocessKernels to
// torchvision's results. Models and references: make_postprocess_cases.py
// (torchvision's BoxCoder.decode_single and SSD.postprocess_detections).

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "baton/planner/analysis/cost.h"
#include "baton/planner/analysis/inspect.h"
#include "baton/planner/import/import_json.h"
#include "baton/planner/import/import_onnx.h"
#include "baton/planner/import/shapes.h"
#include "baton/postprocess.h"
#include "common/test_util.h"
#include "tool_test_util.h"

namespace baton::test {
namespace {

using planner::Graph;
using planner::ImportOptions;
using planner::Program;
using planner::Target;

const std::string& CasesDir() {
  static const std::string dir =
      GeneratedCasesDir("tests/tools/make_postprocess_cases.py", "postprocess_cases");
  return dir;
}
std::string Case(const std::string& name) { return CasesDir() + "/" + name; }

// cpu0 (fallback) and npu0 both run every built-in op; npu0 is listed first
// so that a rule can try to put the post-processing there.
const char kTarget[] = R"({"name": "pp_soc", "fallback": "cpu0",
  "domains": [{"name": "dram", "bytes": 1048576, "alignment": 64}],
  "devices": [
    {"name": "npu0", "kind": "npu", "domains": ["dram"], "ops": "*", "dtypes": "*"},
    {"name": "cpu0", "kind": "cpu", "domains": ["dram"], "ops": "*", "dtypes": "*"}]})";

Target SocTarget() {
  auto t = planner::ParseTarget(kTarget, "pp_soc.json");
  EXPECT_TRUE(t.ok()) << t.error();
  return t.value();
}

// Imports with no custom op declared, plans, emits, and checks the plan with
// the runtime's loader (which prepares the real kernels) and the validator.
planner::Result<std::string> Plan(const std::string& model, Target target,
                                  std::vector<std::string> rules = {}) {
  BATON_ASSIGN_OR_RETURN(Graph graph, planner::ImportModel(model, ImportOptions{}));
  planner::PlanOptions plan_options;
  for (const auto& r : rules) plan_options.rules.push_back(planner::ParseAssignRule(r).value());
  BATON_ASSIGN_OR_RETURN(Program program,
                         planner::PlanGraph(std::move(graph), std::move(target), plan_options));
  BATON_ASSIGN_OR_RETURN(std::string bytes, planner::EmitPlan(program));
  BATON_TRY(planner::VerifyWithRuntime(bytes));
  BATON_TRY(planner::ValidatePlanSchedule(bytes.data(), bytes.size()));
  return bytes;
}

template <typename T>
std::vector<T> As(const std::vector<uint8_t>& bytes) {
  std::vector<T> out(bytes.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
  return out;
}

// Runs the plan on the case's inputs; outputs equal torchvision's.
void ExpectTorchvisionResult(const std::string& bytes) {
  Runner runner(bytes, {}, RegisterPostprocessKernels);
  ASSERT_TRUE(runner.ok());
  Tensors out;
  ASSERT_TRUE(
      runner.Invoke({LoadNpyBytes(Case("codes.npy")), LoadNpyBytes(Case("scores.npy"))}, &out)
          .ok());
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(As<int32_t>(out[3]), As<int32_t>(LoadNpyBytes(Case("ref_count.npy"))));
  EXPECT_EQ(As<int64_t>(out[2]), As<int64_t>(LoadNpyBytes(Case("ref_classes.npy"))));
  EXPECT_LE(MaxAbsDiff(AsFloats(out[1]), AsFloats(LoadNpyBytes(Case("ref_scores.npy")))), 0.0);
  // Boxes: decode_single op for op (no fused multiply-add) and copied.
  EXPECT_LE(MaxAbsDiff(AsFloats(out[0]), AsFloats(LoadNpyBytes(Case("ref_boxes.npy")))), 1e-5);
}

TEST(PostprocessPlan, KnownWithoutCustomOpInferredAndRunsToTorchvision) {
  auto bytes = Plan(Case("detect.onnx"), planner::DefaultCpuTarget());
  ASSERT_TRUE(bytes.ok()) << bytes.error();
  const nlohmann::json plan = Inspect(bytes.value());
  const nlohmann::json* nms = NodeByOp(plan, kNonMaxSuppressionOp);
  ASSERT_NE(nms, nullptr) << plan["nodes"].dump();
  ASSERT_NE(NodeByOp(plan, kDecodeBoxesOp), nullptr);
  EXPECT_EQ((*nms)["attributes"]["detections_per_img"], 12);
  // Inferred outputs, by the op's contract: [N, D, 4], [N, D], [N, D], [N].
  const schema::Plan* p = schema::GetPlan(bytes.value().data());
  std::vector<std::vector<int64_t>> shapes;
  std::vector<schema::DType> dtypes;
  for (uint32_t o = 0; o < p->outputs()->size(); ++o) {
    const schema::Tensor* t = p->tensors()->Get(p->outputs()->Get(o));
    shapes.emplace_back(t->shape()->begin(), t->shape()->end());
    dtypes.push_back(t->dtype());
  }
  EXPECT_EQ(shapes, (std::vector<std::vector<int64_t>>{{2, 12, 4}, {2, 12}, {2, 12}, {2}}));
  EXPECT_EQ(dtypes, (std::vector<schema::DType>{schema::DType::Float32, schema::DType::Float32,
                                                 schema::DType::Int64, schema::DType::Int32}));
  ExpectTorchvisionResult(bytes.value());
  // The same model with agreeing value_info plans the same.
  auto declared = Plan(Case("declared.onnx"), planner::DefaultCpuTarget());
  ASSERT_TRUE(declared.ok()) << declared.error();
  ExpectTorchvisionResult(declared.value());
}

TEST(PostprocessPlan, WorkspaceIsPlannedForNonMaxSuppression) {
  auto bytes = Plan(Case("detect.onnx"), planner::DefaultCpuTarget());
  ASSERT_TRUE(bytes.ok()) << bytes.error();
  const schema::Plan* p = schema::GetPlan(bytes.value().data());
  // By hand (docs/operators.md): C' = 3 classes, K = min(6, 48) = 6:
  // (3 * 6) * 8 + 3 * 4 = 156 bytes.
  bool found = false;
  for (const schema::Node* node : *p->nodes()) {
    const schema::CustomParams* custom = node->params_as_CustomParams();
    if (custom == nullptr || custom->name()->str() != kNonMaxSuppressionOp) continue;
    found = true;
    ASSERT_TRUE(node->workspace() != nullptr && node->workspace()->size() == 1)
        << "no workspace planned";
    EXPECT_GE(p->tensors()->Get(node->workspace()->Get(0))->bytes(), 156u);
  }
  EXPECT_TRUE(found);
}

TEST(PostprocessPlan, RunsOnlyOnCpuDevices) {
  // A rule puts everything on npu0 ("*"): the post-processing falls back to
  // the CPU, the report says why.
  auto bytes = Plan(Case("detect.onnx"), SocTarget(), {"@decode=npu0", "@nms=npu0"});
  ASSERT_TRUE(bytes.ok()) << bytes.error();
  const nlohmann::json plan = Inspect(bytes.value());
  EXPECT_EQ((*NodeByOp(plan, kDecodeBoxesOp))["queue"], "cpu0");
  EXPECT_EQ((*NodeByOp(plan, kNonMaxSuppressionOp))["queue"], "cpu0");
  ExpectTorchvisionResult(bytes.value());
  // A non-CPU device may not list them.
  auto bad = planner::ParseTarget(
      R"({"domains": [{"name": "dram", "bytes": 1024}],
          "devices": [{"name": "cpu0", "kind": "cpu", "domains": ["dram"]},
                      {"name": "dsp0", "kind": "dsp", "domains": ["dram"],
                       "ops": ["Relu", "baton::NonMaxSuppression"]}]})",
      "bad.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().find("baton::NonMaxSuppression"), std::string::npos) << bad.error();
  EXPECT_NE(bad.error().find("CPU devices only"), std::string::npos) << bad.error();
}

TEST(PostprocessPlan, DefaultCostScansTheScoresAndOpCostsOverride) {
  // cpu0: 1e9 MAC/s, 1e12 B/s (compute-bound), no launch cost.
  const std::string json = R"({"name": "c", "domains": [{"name": "dram", "bytes": 1048576}],
    "devices": [{"name": "cpu0", "kind": "cpu", "domains": ["dram"], "ops": "*", "dtypes": "*",
                 "cost": {"macs_per_s": 1e9, "bytes_per_s": 1e12, "launch_s": 0}%s}]})";
  char text[1024];
  std::snprintf(text, sizeof(text), json.c_str(), "");
  const Target plain = planner::ParseTarget(text, "c.json").value();
  std::snprintf(text, sizeof(text), json.c_str(),
                R"(, "op_costs": {"baton::NonMaxSuppression": {"seconds": 1e-3}})");
  const Target costed = planner::ParseTarget(text, "c.json").value();
  auto bytes = Plan(Case("detect.onnx"), plain);
  ASSERT_TRUE(bytes.ok()) << bytes.error();
  const schema::Plan* p = schema::GetPlan(bytes.value().data());
  auto a = planner::NodeCostsOf(*p, plain);
  auto b = planner::NodeCostsOf(*p, costed);
  ASSERT_TRUE(a.ok() && b.ok());
  bool found = false;
  for (uint32_t n = 0; n < p->nodes()->size(); ++n) {
    const schema::CustomParams* custom = p->nodes()->Get(n)->params_as_CustomParams();
    if (custom == nullptr || custom->name()->str() != kNonMaxSuppressionOp) continue;
    found = true;
    EXPECT_NEAR(a.value().seconds[n], 2 * 48 * 4 / 1e9, 1e-12);  // one pass over N*A*C scores
    EXPECT_NEAR(b.value().seconds[n], 1e-3, 1e-12);
  }
  EXPECT_TRUE(found);
}

TEST(PostprocessPlan, WrongAnchorsNameTheNode) {
  auto graph = planner::ImportModel(Case("bad_anchors.onnx"), ImportOptions{});
  ASSERT_FALSE(graph.ok());
  EXPECT_NE(graph.error().find("node 'decode'"), std::string::npos) << graph.error();
  EXPECT_NE(graph.error().find("baton::DecodeBoxes"), std::string::npos) << graph.error();
}

TEST(PostprocessPlan, DisagreeingDeclarationNamesTheTensor) {
  auto graph = planner::ImportModel(Case("bad_decl.onnx"), ImportOptions{});
  ASSERT_FALSE(graph.ok());
  EXPECT_NE(graph.error().find("node 'nms'"), std::string::npos) << graph.error();
  EXPECT_NE(graph.error().find("output 'det_scores'"), std::string::npos) << graph.error();
  EXPECT_NE(graph.error().find("[2,11]"), std::string::npos) << graph.error();
}

TEST(PostprocessPlan, GraphJsonNeedsNoDeclarationNorOutputTypes) {
  const std::string json = R"({"inputs": [{"name": "codes", "shape": [1, 5, 4]},
                                          {"name": "anchors", "shape": [5, 4]}],
    "outputs": ["boxes"],
    "nodes": [{"name": "decode", "op": "baton::DecodeBoxes", "inputs": ["codes", "anchors"],
               "outputs": ["boxes"], "attrs": {"weights": [1.0, 1.0, 1.0, 1.0]}}]})";
  auto graph = planner::ParseGraphJson(json, "", "g.json");
  ASSERT_TRUE(graph.ok()) << graph.error();
  ASSERT_TRUE(planner::InferShapes(&graph.value()).ok());
  const planner::Tensor& boxes = graph.value().tensors[graph.value().FindTensor("boxes")];
  EXPECT_TRUE(boxes.shape_known);
  EXPECT_EQ(boxes.shape, (std::vector<int64_t>{1, 5, 4}));
}

}  // namespace
}  // namespace baton::test
