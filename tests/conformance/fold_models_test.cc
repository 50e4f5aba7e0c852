// Issue 14: torch modules whose shape arithmetic (arange, ones_like,
// new_zeros, expand, where/masked_fill on shapes) Baton folds at plan time,
// and one that keeps Equal/Greater/Less/Not/And/Where/Cast/Expand as runtime
// ops. tests/conformance/make_fold_models.py exports each at opsets 11, 13
// and 17 (torch 1.13) with torch's output; each is planned for one CPU and
// for soc4 (Add, Mul on the GPU, Softmax on the DSP), run on the Linux port
// and compared: max |baton - torch| <= 1e-4 * max |torch|.

#include <gtest/gtest.h>

#include "common/test_util.h"

namespace baton::test {
namespace {

std::string FoldModelsDir() {
  static const std::string dir = [] {
    const std::string d = std::string(BATON_BINARY_DIR) + "/conformance/fold_models";
    const std::string cmd = std::string(BATON_PYTHON) + " " + BATON_SOURCE_DIR +
                            "/tests/conformance/make_fold_models.py " + d + " > " + d +
                            ".log 2>&1";
    EXPECT_TRUE(GenerateOnce(d, cmd)) << cmd;
    return d;
  }();
  return dir;
}

// The nodes left after folding, as "Op Op ...".
std::string Ops(const planner::Program& program) {
  std::string s;
  for (const planner::Node& n : program.graph.nodes) {
    if (n.op != "__copy") s += (s.empty() ? "" : " ") + n.op;
  }
  return s;
}

void CheckCase(const std::string& name, const std::string& expected_ops) {
  const std::string dir = FoldModelsDir();
  for (int opset : {11, 13, 17}) {
    for (const std::string target : {"cpu", "soc4"}) {
      SCOPED_TRACE(name + " opset " + std::to_string(opset) + " on " + target);
      const std::vector<std::string> rules =
          target == "soc4" ? std::vector<std::string>{"Add=gpu0", "Mul=gpu0", "Softmax=dsp0"}
                           : std::vector<std::string>{};
      planner::Program program;
      const std::string bytes = PlanBytes(
          PlanSpec(dir + "/" + name + "_op" + std::to_string(opset) + ".onnx", target, rules),
          &program);
      ASSERT_FALSE(bytes.empty());
      EXPECT_EQ(Ops(program), expected_ops);
      Runner runner(bytes);
      ASSERT_TRUE(runner.ok());
      Tensors outputs;
      Status s = runner.Invoke({LoadNpyBytes(dir + "/" + name + "_input.npy")}, &outputs);
      ASSERT_TRUE(s.ok()) << s.message();
      const auto expected = AsFloats(LoadNpyBytes(dir + "/" + name + "_output.npy"));
      ASSERT_FALSE(expected.empty());
      EXPECT_LE(RelativeError(AsFloats(outputs[0]), expected), 1e-4);
    }
  }
}

// x + arange(n) * 0.5: Shape, Gather, Range, Cast and Mul fold to a constant.
TEST(FoldModels, Arange) { CheckCase("arange_add", "Add"); }

// x * ones_like(x) + new_zeros(x.shape) + bias.expand(...): ConstantOfShape,
// Equal, Where and Expand on shapes fold; only the arithmetic on x is left.
TEST(FoldModels, OnesLikeNewZerosExpand) { CheckCase("ones_like_expand", "Mul Add Add"); }

// masked_fill with a causal mask from arange comparisons: Range, Unsqueeze,
// Greater fold to a constant bool mask; Where runs.
TEST(FoldModels, MaskedFill) { CheckCase("masked_fill", "Where Softmax"); }

// where(shape == 4, ...), prod, floor, ceil on shapes feed Reshape and Expand.
TEST(FoldModels, WhereOnShapes) {
  CheckCase("where_on_shapes", "Reshape Expand Mul Reshape Gather Add");
}

// Comparisons, logic, Where, Cast and Expand on data run as kernels; the two
// Casts torch writes from bool to bool before And are identities and go.
TEST(FoldModels, RuntimeCompare) {
  CheckCase("runtime_compare",
            "Greater Less Equal Not And Mul Where Where Cast Add Cast Cast Add Slice Expand Add");
}

}  // namespace
}  // namespace baton::test
