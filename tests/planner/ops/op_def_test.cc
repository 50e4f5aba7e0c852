#include "baton/planner/ops/op_def.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "baton/kernels.h"

namespace baton::planner {
namespace {

// The ops the planner's host evaluator (constant folding, shape-value
// propagation) implements. Adding one is a deliberate change: it widens what
// the simplifier folds.
const std::set<std::string> kEvaluable = {
    "Shape",  "Identity", "Dropout", "Reshape", "Flatten",   "Squeeze", "Unsqueeze",   "__copy",
    "Gather", "Concat",   "Split",   "Slice",   "Transpose", "Add",     "Sub",         "Mul",
    "Div",    "Relu",     "Sigmoid", "Tanh",    "LeakyRelu", "Clip",    "HardSigmoid", "HardSwish",
    // Issue 14: shape arithmetic and masks.
    "Equal", "Greater", "Less", "Not", "And", "Where", "Cast", "Expand", "ConstantOfShape", "Range",
    "Ceil", "Floor", "ReduceProd", "Mod", "ScatterND",  // swin_t
    // issue 14 (float math; Max/Min/ReduceMax/ReduceMin also on integers)
    "Sqrt", "Exp", "Log", "Erf", "Neg", "Abs", "Reciprocal", "Softplus", "Elu", "Gelu", "Mish", "Swish",
    "Pow", "Max", "Min", "PRelu", "Tile", "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin",
    "ReduceL2", "ArgMax", "ArgMin", "TopK", "LogSoftmax",
    "QuantizeLinear", "DequantizeLinear",  // issue 15
};

TEST(OpDefTest, EveryPlanOpHasExactlyOneKernelDefinition) {
  for (schema::Op op : schema::EnumValuesOp()) {
    // Custom ops and foreign-runtime regions have no definition of their own.
    if (op == schema::Op::Custom || op == schema::Op::Subgraph) continue;
    int defs = 0;
    for (const OpDef* def : AllOps()) {
      if (def->has_kernel && def->kernel_op == op) ++defs;
    }
    EXPECT_EQ(defs, 1) << schema::EnumNameOp(op);
    const OpDef* def = FindOp(op);
    ASSERT_NE(def, nullptr) << schema::EnumNameOp(op);
    EXPECT_TRUE(def->has_kernel) << def->name;
    EXPECT_EQ(def->kernel_op, op) << def->name;
  }
}

TEST(OpDefTest, EveryKernelOpHasAReferenceKernel) {
  KernelRegistry registry;
  ASSERT_TRUE(RegisterReferenceKernels(&registry).ok());
  for (const OpDef* def : AllOps()) {
    if (!def->has_kernel) continue;
    // A foreign-runtime region's kernel is the runtime's plugin.
    if (def->kernel_op == schema::Op::Subgraph) continue;
    EXPECT_NE(registry.Find(def->kernel_op, DeviceKind::Cpu), nullptr) << def->name;
  }
}

// docs/operators.md names every op the planner knows (as `Name`).
TEST(OpDefTest, EveryOpIsDocumented) {
  std::ifstream f(std::string(BATON_SOURCE_DIR) + "/docs/operators.md");
  ASSERT_TRUE(f.good());
  const std::string doc((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  for (const OpDef* def : AllOps()) {
    EXPECT_NE(doc.find("`" + std::string(def->name) + "`"), std::string::npos)
        << def->name << " is not listed in docs/operators.md";
  }
}

TEST(OpDefTest, FindByNameRoundTrips) {
  const std::vector<const OpDef*> all = AllOps();
  ASSERT_FALSE(all.empty());
  std::set<std::string> names;
  for (const OpDef* def : all) {
    ASSERT_NE(def->name, nullptr);
    EXPECT_TRUE(names.insert(def->name).second) << "duplicate " << def->name;
    EXPECT_EQ(FindOp(std::string(def->name)), def) << def->name;
  }
  EXPECT_EQ(FindOp(std::string("NoSuchOp")), nullptr);
}

TEST(OpDefTest, ExactlyTheEvaluableOpsHaveEval) {
  std::set<std::string> with_eval;
  for (const OpDef* def : AllOps()) {
    if (def->eval != nullptr) with_eval.insert(def->name);
    // Only an op the evaluator runs can ask to be run on shapes alone.
    if (def->eval_reads_shapes_only) {
      EXPECT_NE(def->eval, nullptr) << def->name;
    }
  }
  EXPECT_EQ(with_eval, kEvaluable);
  for (const std::string& name : kEvaluable) EXPECT_NE(FindOp(name), nullptr) << name;
}

TEST(OpDefTest, OnlyShapeReadsShapesOnly) {
  for (const OpDef* def : AllOps()) {
    EXPECT_EQ(def->eval_reads_shapes_only, std::string(def->name) == "Shape") << def->name;
  }
}

TEST(OpDefTest, OpsWithoutKernelHaveNoLoweringOrCost) {
  for (const OpDef* def : AllOps()) {
    if (def->has_kernel) continue;
    EXPECT_EQ(def->lower, nullptr) << def->name;
    EXPECT_EQ(def->macs, nullptr) << def->name;
  }
}

TEST(OpDefTest, ArityBoundsAreOrdered) {
  for (const OpDef* def : AllOps()) {
    EXPECT_GE(def->min_inputs, 0) << def->name;
    EXPECT_GE(def->min_outputs, 0) << def->name;
    if (def->max_inputs != kUnbounded) {
      EXPECT_LE(def->min_inputs, def->max_inputs) << def->name;
    }
    if (def->max_outputs != kUnbounded) {
      EXPECT_LE(def->min_outputs, def->max_outputs) << def->name;
    }
    if (def->has_kernel && def->kernel_inputs != kAllInputs && def->max_inputs != kUnbounded) {
      EXPECT_LE(def->kernel_inputs, def->max_inputs) << def->name;
    }
  }
}

}  // namespace
}  // namespace baton::planner
