#include "baton/planner/import/import_onnx.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>

#include "baton/planner/import/simplify.h"
#include "baton/planner/io/npy.h"
#include "baton/planner/planner.h"

// The tiny models come from tests/planner/import/make_onnx_cases.py, the torchvision
// models from tools/export_torchvision.py; both run with the system Python
// (python3-onnx, python3-torch, python3-torchvision). A missing Python
// package fails the tests: nothing is skipped.

namespace baton::planner {
namespace {

const std::string kWorkDir = std::string(BATON_BINARY_DIR) + "/import_onnx_test";

int RunCommand(const std::string& command) { return std::system(command.c_str()); }

std::map<std::string, int> OpCounts(const Graph& g) {
  std::map<std::string, int> counts;
  for (const Node& n : g.nodes) counts[n.op]++;
  return counts;
}

int Fused(const Graph& g) {
  int n = 0;
  for (const Node& node : g.nodes) n += node.clamp.has_value();
  return n;
}

// Nodes per fused activation (Node::activation; "sum": Conv's fused
// residual Add, input 3).
std::map<std::string, int> FusedCounts(const Graph& g) {
  std::map<std::string, int> out;
  for (const Node& node : g.nodes) {
    if (!node.activation.empty()) ++out[node.activation];
    if (node.op == "Conv" && node.inputs.size() > 3 && node.inputs[3] >= 0) ++out["sum"];
  }
  return out;
}

const Node* FindNode(const Graph& g, const std::string& name) {
  for (const Node& n : g.nodes) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

// --- Tiny hand-made models --------------------------------------------------

// Every test generates the cases into its own directory, so that tests run
// as separate processes in parallel (ctest -j) never read a half-written file.
class OnnxCasesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cases_dir_ =
        kWorkDir + "/cases_" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    for (const char* script : {"make_onnx_cases.py", "make_onnx_order_cases.py"}) {
      const std::string cmd = std::string(BATON_PYTHON) + " " + BATON_SOURCE_DIR +
                              "/tests/planner/import/" + script + " " + cases_dir_;
      ASSERT_EQ(RunCommand(cmd), 0) << cmd << " failed";
    }
  }
  const std::string& CasesDir() const { return cases_dir_; }
  std::string Case(const std::string& name) const { return cases_dir_ + "/" + name + ".onnx"; }

  void ExpectError(const std::string& name, const std::string& message) const {
    auto g = ImportOnnx(Case(name));
    ASSERT_FALSE(g.ok()) << name << " imported but should fail with: " << message;
    EXPECT_NE(g.error().find(message), std::string::npos) << g.error();
    EXPECT_EQ(g.error().rfind(Case(name) + ": ", 0), 0u)
        << "error should name the file: " << g.error();
  }

  std::string cases_dir_;
};

TEST_F(OnnxCasesTest, ValidSmallModel) {
  auto g = ImportOnnx(Case("valid_small"));
  ASSERT_TRUE(g.ok()) << g.error();
  EXPECT_EQ(g->name, "case");
  // w is an initializer also listed as a graph input: a constant, not an input.
  ASSERT_EQ(g->inputs.size(), 1u);
  EXPECT_EQ(g->tensors[g->inputs[0]].name, "x");
  EXPECT_EQ(g->tensors[g->inputs[0]].shape, (std::vector<int64_t>{1, 3}));
  ASSERT_EQ(g->outputs.size(), 1u);
  const Tensor& y = g->tensors[g->outputs[0]];
  EXPECT_EQ(y.name, "y");  // stable through Identity removal
  EXPECT_EQ(y.shape, (std::vector<int64_t>{2, 2}));
  // Gemm (unnamed -> "Gemm_0") with its Relu fused, then the Reshape writing y.
  ASSERT_EQ(g->nodes.size(), 2u);
  const Node* gemm = FindNode(*g, "Gemm_0");
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->op, "Gemm");
  ASSERT_TRUE(gemm->clamp.has_value());
  EXPECT_EQ(gemm->clamp->first, 0.0f);
  EXPECT_EQ(gemm->clamp->second, std::numeric_limits<float>::infinity());
  EXPECT_EQ(gemm->GetInt("transB", 0), 1);
  // Typed-field initializers.
  EXPECT_EQ(g->tensors[gemm->inputs[1]].FloatData(), std::vector<float>(12, 0.5f));
  EXPECT_EQ(g->tensors[gemm->inputs[2]].FloatData(), (std::vector<float>{1, 2, 3, 4}));
  const Node* reshape = FindNode(*g, "reshape");
  ASSERT_NE(reshape, nullptr);
  const Tensor& shape = g->tensors[reshape->inputs[1]];
  EXPECT_TRUE(shape.is_constant);
  EXPECT_EQ(shape.IntData(), (std::vector<int64_t>{2, 2}));
  // The unused Constant 'scale' is gone.
  EXPECT_EQ(g->FindTensor("scale"), -1);
}

// An omitted output before a used one gets a name of its own, and a
// STRINGS attribute is kept comma-joined.
TEST_F(OnnxCasesTest, RecurrentNodes) {
  auto g = ImportOnnx(Case("rnn_lstm"));
  ASSERT_TRUE(g.ok()) << g.error();
  const Node* lstm = FindNode(*g, "lstm");
  ASSERT_NE(lstm, nullptr);
  ASSERT_EQ(lstm->outputs.size(), 2u);
  EXPECT_EQ(g->tensors[lstm->outputs[0]].name, "lstm:unused_output0");
  EXPECT_EQ(g->tensors[lstm->outputs[0]].shape, (std::vector<int64_t>{3, 1, 1, 2}));
  EXPECT_EQ(g->tensors[lstm->outputs[1]].name, "y");
  EXPECT_EQ(lstm->GetString("activations", ""), "Sigmoid,Tanh,Tanh");
  auto gru = ImportOnnx(Case("rnn_gru"));
  ASSERT_TRUE(gru.ok()) << gru.error();
  EXPECT_EQ(gru->tensors[gru->outputs[0]].shape, (std::vector<int64_t>{3, 2, 1, 2}));
}

// QLinearConv, QLinearMatMul and com.microsoft's QLinearAdd and
// QLinearGlobalAveragePool are lowered by the importer to
// DequantizeLinear -> float op -> QuantizeLinear (bias scale xs * ws, a Mul
// that folds), and the simplifier fuses the groups that have integer kernels
// back: QLinearConv reading the model's own int8 weight and int32 bias,
// QLinearMatMul, QLinearAdd, QLinearGlobalAveragePool. Outputs against ONNX
// Runtime: tests/quant.
TEST_F(OnnxCasesTest, QLinearOpsLowerToQdq) {
  auto g = ImportOnnx(Case("qlinear_ops"));
  ASSERT_TRUE(g.ok()) << g.error();
  const std::map<std::string, int> want = {
      {"QLinearConv", 1}, {"QLinearMatMul", 1}, {"QLinearAdd", 1}, {"QLinearGlobalAveragePool", 1}};
  EXPECT_EQ(OpCounts(*g), want);
  EXPECT_EQ(g->tensors[g->outputs[0]].dtype, DType::UInt8);
  const Node* conv = nullptr;
  for (const Node& n : g->nodes) {
    if (n.op == "QLinearConv") conv = &n;
  }
  ASSERT_NE(conv, nullptr);
  std::vector<std::string> inputs;
  for (int t : conv->inputs) inputs.push_back(g->tensors[t].name);
  EXPECT_EQ(inputs, (std::vector<std::string>{"x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"}));
  EXPECT_EQ(g->tensors[conv->inputs[3]].dtype, DType::Int8);
  EXPECT_EQ(g->tensors[conv->inputs[8]].dtype, DType::Int32);
  ExpectError("qlinear_channels_last", "QLinearGlobalAveragePool (domain 'com.microsoft')");
}

// com.microsoft's QLinearSoftmax (opset 13's form) lowers to DequantizeLinear
// -> Softmax -> QuantizeLinear and fuses back into Baton's QLinearSoftmax
// with its axis and the planner's exponential table; the opset-12 form over a
// middle axis (coerce to 2-D) is reported unsupported.
TEST_F(OnnxCasesTest, QLinearSoftmaxLowersAndFusesBack) {
  auto g = ImportOnnx(Case("qlinear_softmax"));
  ASSERT_TRUE(g.ok()) << g.error();
  EXPECT_EQ(OpCounts(*g), (std::map<std::string, int>{{"QLinearSoftmax", 1}}));
  const Node& n = g->nodes[0];
  ASSERT_EQ(n.inputs.size(), 6u);
  EXPECT_EQ(n.GetInt("axis", -1), 1);
  EXPECT_EQ(g->tensors[n.inputs[0]].name, "x");
  EXPECT_EQ(g->tensors[n.inputs[5]].dtype, DType::Float32);
  EXPECT_EQ(g->tensors[n.inputs[5]].elements(), 256);
  EXPECT_EQ(g->tensors[g->outputs[0]].dtype, DType::UInt8);
  ExpectError("qlinear_softmax_opset12", "QLinearSoftmax (domain 'com.microsoft')");
}

TEST_F(OnnxCasesTest, GeneratedNodeNamesAreUnique) {
  auto g = ImportOnnx(Case("unnamed_nodes"));
  ASSERT_TRUE(g.ok()) << g.error();
  ASSERT_EQ(g->nodes.size(), 3u);
  EXPECT_EQ(g->nodes[0].name, "Relu_0_1");  // "Relu_0" is taken by the Sigmoid
  EXPECT_EQ(g->nodes[1].name, "Relu_0");
  EXPECT_EQ(g->nodes[2].name, "Tanh_2");
}

TEST_F(OnnxCasesTest, ShapeChainFolds) {
  auto g = ImportOnnx(Case("shape_chain"));
  ASSERT_TRUE(g.ok()) << g.error();
  ASSERT_EQ(g->nodes.size(), 1u);
  EXPECT_EQ(g->nodes[0].op, "Reshape");
  EXPECT_EQ(g->tensors[g->nodes[0].inputs[1]].IntData(), (std::vector<int64_t>{2, -1}));
  EXPECT_EQ(g->tensors[g->outputs[0]].shape, (std::vector<int64_t>{2, 12}));
}

TEST_F(OnnxCasesTest, OpsetRange) {
  for (const char* name : {"opset_9", "opset_11", "opset_17"}) {
    auto g = ImportOnnx(Case(name));
    EXPECT_TRUE(g.ok()) << name << ": " << g.error();
  }
  ExpectError("opset_8", "model uses opset 8; Baton supports opsets 9 to 17");
  ExpectError("opset_18", "model uses opset 18; Baton supports opsets 9 to 17");
}

TEST_F(OnnxCasesTest, LegacySoftmax) {
  auto g = ImportOnnx(Case("softmax_opset11_ok"));
  ASSERT_TRUE(g.ok()) << g.error();
  EXPECT_EQ(g->nodes[0].GetInt("axis", -1), 1);  // explicit, opset 13 meaning
  ExpectError("softmax_opset11_bad",
              "node 'sm': Softmax (opset < 13) over dims 1..2 of 'x' is not supported");
}

TEST_F(OnnxCasesTest, DeclaredShapes) {
  // A ceil_mode pool declared with ONNX 1.12's size or with the corrected one.
  for (const char* name : {"ceil_pool", "ceil_pool_new"}) {
    auto g = ImportOnnx(Case(name));
    ASSERT_TRUE(g.ok()) << name << ": " << g.error();
    EXPECT_EQ(g->tensors[g->outputs[0]].shape, (std::vector<int64_t>{1, 3, 3, 3})) << name;
  }
  ExpectError("wrong_declared_shape",
              "tensor 'y': the model declares float32 [1,5] but Baton infers float32 [1,4]");
}

TEST_F(OnnxCasesTest, Errors) {
  ExpectError("unsupported_op", "unsupported ops (1 type): Det x1 (first 'det1')");
  ExpectError("custom_domain",
              "unsupported ops (1 type): Foo (domain 'com.example') x1 (first 'Foo_0')");
  // Issue 14: every missing op in one message, sorted by op type, also when
  // a node reads the output of an unsupported one.
  ExpectError("many_unsupported",
              "unsupported ops (3 types): Foo (domain 'com.example') x1 (first 'foo'), Hardmax x2 "
              "(first 'hardmax_a'), RNN x1 (first 'rnn')");
  // ... together with the fold-only ops left with a non-constant input.
  ExpectError("unsupported_and_fold_only",
              "unsupported ops (4 types): ConstantOfShape (fold-only, an input is not constant) "
              "x1 (first 'cos'), Floor (fold-only, an input is not constant) x1 (first "
              "'floor1'), Hardmax x1 (first 'hm'), Range (fold-only, an input is not constant) "
              "x2 (first 'range1')");
  ExpectError("constant_of_shape_dynamic",
              "node 'cos': its input 's' is not constant; Baton folds ConstantOfShape only at "
              "plan time");
  ExpectError("external_data",
              "model uses external data for tensor 'w'; re-export with weights embedded");
  ExpectError("dynamic_input", "graph input 'x' has symbolic dim 'batch' at index 0");
  ExpectError("double_initializer", "tensor 'd' has unsupported data type DOUBLE");
  ExpectError("shape_mismatch",
              "node 'add1': shapes [1,3] and [1,4] of 'x' and 'z' are not broadcastable");
  ExpectError("dangling_input", "node 'r' (op 'Relu') reads 'nowhere' which no node produces");
  // Issue 13: a cycle was reported as "reads 'b' which no node produces".
  ExpectError("cycle", "the graph has a cycle: node 'nb' -> node 'na' -> node 'nb' (through 'a')");
  ExpectError("out_of_order",
              "node 'second' reads 'a' before node 'first' produces it; ONNX requires nodes in "
              "topological order");
  ExpectError("dynamic_reshape",
              "node 'r': shape input 's' is not a constant (dynamic shapes are not supported)");
  ExpectError("not_onnx", "not a valid ONNX model");
  auto missing = ImportOnnx(CasesDir() + "/does_not_exist.onnx");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("does_not_exist.onnx"), std::string::npos) << missing.error();
}

// Issue 13: a graph with no outputs failed with "internal: the runtime
// rejects the plan".
TEST_F(OnnxCasesTest, NoOutputsIsAClearError) {
  auto g = ImportOnnx(Case("no_outputs"));
  ASSERT_TRUE(g.ok()) << g.error();
  auto planned = PlanGraph(std::move(g).value(), DefaultCpuTarget(), PlanOptions());
  ASSERT_FALSE(planned.ok());
  EXPECT_EQ(planned.error(), "the graph has no outputs; nothing to compute");
}

// --- torchvision models -----------------------------------------------------

struct Exported {
  std::string dir;
  std::string onnx;
};

// Exports MODEL at 64x64 with extra script flags into its own directory.
Exported Export(const std::string& model, const std::string& tag, const std::string& flags) {
  Exported e;
  e.dir = kWorkDir + "/" + model + "_" + tag;
  e.onnx = e.dir + "/" + model + ".onnx";
  std::remove(e.onnx.c_str());
  const std::string cmd = std::string(BATON_PYTHON) + " " + BATON_SOURCE_DIR +
                          "/tools/export_torchvision.py " + model + " " + e.dir + " --size 64 " +
                          flags + " > " + e.dir + ".log 2>&1";
  EXPECT_EQ(RunCommand("mkdir -p " + kWorkDir), 0);
  EXPECT_EQ(RunCommand(cmd), 0) << cmd << " failed; see " << e.dir << ".log";
  return e;
}

// Imports an export and checks what every torchvision classifier shares.
Graph ImportClassifier(const Exported& e) {
  auto g = ImportOnnx(e.onnx);
  EXPECT_TRUE(g.ok()) << g.error();
  if (!g.ok()) return Graph();
  EXPECT_EQ(g->inputs.size(), 1u);
  EXPECT_EQ(g->outputs.size(), 1u);
  if (g->inputs.size() != 1 || g->outputs.size() != 1) return std::move(g).value();
  const Tensor& in = g->tensors[g->inputs[0]];
  const Tensor& out = g->tensors[g->outputs[0]];
  EXPECT_EQ(in.name, "input");
  EXPECT_EQ(in.shape, (std::vector<int64_t>{1, 3, 64, 64}));
  EXPECT_EQ(out.name, "output");
  EXPECT_EQ(out.shape, (std::vector<int64_t>{1, 1000}));
  auto expected = ReadNpy(e.dir + "/output.npy");
  EXPECT_TRUE(expected.ok()) << expected.error();
  if (expected.ok()) {
    EXPECT_EQ(expected->shape, out.shape);
  }
  std::map<std::string, int> ops = OpCounts(*g);
  for (const char* gone :
       {"BatchNormalization", "Identity", "Dropout", "Constant", "Shape", "Gather", "Unsqueeze"}) {
    EXPECT_EQ(ops.count(gone), 0u) << gone << " left in " << e.onnx;
  }
  for (const Node& n : g->nodes) {
    EXPECT_EQ(n.FindAttr("auto_pad"), nullptr) << n.name;
    EXPECT_TRUE(IsSupportedOp(n.op)) << n.op;
  }
  // The planner simplifies again; that must change nothing.
  Graph again = *g;
  Check simplified = Simplify(&again);
  EXPECT_TRUE(simplified.ok()) << simplified.error();
  EXPECT_EQ(again.nodes.size(), g->nodes.size());
  EXPECT_EQ(again.tensors.size(), g->tensors.size());
  return std::move(g).value();
}

TEST(TorchvisionImportTest, Resnet18) {
  Graph g = ImportClassifier(Export("resnet18", "default", ""));
  // The 8 residual Adds fuse into the Conv before them (issue 17).
  EXPECT_EQ(g.nodes.size(), 32u - 8u);
  EXPECT_EQ(FusedCounts(g), (std::map<std::string, int>{{"sum", 8}}));
  EXPECT_EQ(
      OpCounts(g),
      (std::map<std::string, int>{
          {"Conv", 20}, {"Flatten", 1}, {"Gemm", 1}, {"GlobalAveragePool", 1}, {"MaxPool", 1}}));
  EXPECT_EQ(Fused(g), 17);  // every Relu
}

TEST(TorchvisionImportTest, Resnet18WithBatchNormAndNoFolding) {
  // torch's exporter keeps the 20 BatchNormalization nodes here; the planner
  // folds them and lands on the same graph as the default export.
  Exported e = Export("resnet18", "bn", "--keep-batchnorm --no-constant-folding");
  Graph g = ImportClassifier(e);
  EXPECT_EQ(g.nodes.size(), 32u - 8u);
  EXPECT_EQ(OpCounts(g)["Conv"], 20);
  EXPECT_EQ(Fused(g), 17);
  // Every Conv got a folded bias (and 8 a fused residual sum after it).
  for (const Node& n : g.nodes) {
    if (n.op == "Conv") {
      EXPECT_GE(n.inputs.size(), 3u) << n.name;
      EXPECT_GE(n.inputs[2], 0) << n.name;
    }
  }
  // The folded weights and biases match torch's own Conv+BN fusion (the
  // default export of the same seeded model).
  Graph fused_by_torch = ImportClassifier(Export("resnet18", "torch_fused", ""));
  std::vector<const Node*> mine, theirs;
  for (const Node& n : g.nodes) {
    if (n.op == "Conv") mine.push_back(&n);
  }
  for (const Node& n : fused_by_torch.nodes) {
    if (n.op == "Conv") theirs.push_back(&n);
  }
  ASSERT_EQ(mine.size(), theirs.size());
  for (size_t c = 0; c < mine.size(); ++c) {
    for (int input : {1, 2}) {
      std::vector<float> a = g.tensors[mine[c]->inputs[input]].FloatData();
      std::vector<float> b = fused_by_torch.tensors[theirs[c]->inputs[input]].FloatData();
      ASSERT_EQ(a.size(), b.size()) << mine[c]->name;
      for (size_t i = 0; i < a.size(); ++i) {
        ASSERT_NEAR(a[i], b[i], 1e-5f * (1.0f + std::fabs(b[i])))
            << mine[c]->name << " input " << input << " element " << i;
      }
    }
  }
  // Importing twice gives the same graph.
  auto again = ImportOnnx(e.onnx);
  ASSERT_TRUE(again.ok()) << again.error();
  ASSERT_EQ(again->tensors.size(), g.tensors.size());
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    EXPECT_EQ(again->tensors[t].name, g.tensors[t].name);
    EXPECT_EQ(again->tensors[t].data, g.tensors[t].data);
  }
  ASSERT_EQ(again->nodes.size(), g.nodes.size());
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    EXPECT_EQ(again->nodes[n].name, g.nodes[n].name);
    EXPECT_EQ(again->nodes[n].inputs, g.nodes[n].inputs);
  }
}

TEST(TorchvisionImportTest, MobilenetV2) {
  Graph g = ImportClassifier(Export("mobilenet_v2", "default", ""));
  std::map<std::string, int> ops = OpCounts(g);
  EXPECT_EQ(ops["Conv"], 52);
  EXPECT_EQ(ops.count("Add"), 0u);  // the 10 residual Adds fused into the projections
  EXPECT_EQ(FusedCounts(g), (std::map<std::string, int>{{"sum", 10}}));
  EXPECT_EQ(ops.count("Clip"), 0u);  // ReLU6 fused as clamp [0, 6]
  EXPECT_EQ(Fused(g), 35);
  for (const Node& n : g.nodes) {
    if (n.clamp) {
      EXPECT_EQ(*n.clamp, std::make_pair(0.0f, 6.0f)) << n.name;
    }
  }
}

TEST(TorchvisionImportTest, Squeezenet11) {
  Graph g = ImportClassifier(Export("squeezenet1_1", "default", "--opset 11"));
  std::map<std::string, int> ops = OpCounts(g);
  EXPECT_EQ(ops["Conv"], 26);
  EXPECT_EQ(ops["Concat"], 8);
  EXPECT_EQ(ops["MaxPool"], 3);  // ceil_mode pools
  EXPECT_EQ(Fused(g), 26);
}

TEST(TorchvisionImportTest, ShufflenetV2WithoutFolding) {
  // Channel shuffle exports Shape/Gather/Div/Unsqueeze/Concat chains feeding
  // Reshape when torch does not fold constants; the planner folds them.
  Graph g = ImportClassifier(
      Export("shufflenet_v2_x0_5", "nofold", "--no-constant-folding --keep-batchnorm"));
  std::map<std::string, int> ops = OpCounts(g);
  EXPECT_EQ(ops["Conv"], 56);
  EXPECT_EQ(ops["Transpose"], 16);
  EXPECT_EQ(ops["Reshape"], 32);
  EXPECT_EQ(ops.count("Div"), 0u);
  EXPECT_EQ(g.nodes.size(), 149u);
}

TEST(TorchvisionImportTest, MobilenetV3SmallOpset17) {
  Graph g = ImportClassifier(
      Export("mobilenet_v3_small", "opset17", "--opset 17 --no-constant-folding --keep-batchnorm"));
  std::map<std::string, int> ops = OpCounts(g);
  EXPECT_EQ(ops["Conv"], 52);
  // Every HardSwish follows a Conv or the classifier's Gemm, every
  // squeeze-excitation HardSigmoid a Conv: all fuse (issue 17), as do the 6
  // residual Adds.
  EXPECT_EQ(ops.count("HardSwish"), 0u);
  EXPECT_EQ(ops.count("HardSigmoid"), 0u);
  EXPECT_EQ(ops.count("Add"), 0u);
  EXPECT_EQ(FusedCounts(g),
            (std::map<std::string, int>{{"HardSigmoid", 9}, {"HardSwish", 19}, {"sum", 6}}));
  EXPECT_EQ(g.nodes.size(), 108u - 34u);
}

TEST(TorchvisionImportTest, MobilenetV3SmallOpset13) {
  // Before opset 14 hardswish exports as x * HardSigmoid(x); the planner
  // fuses it back, so the graph matches the opset 17 export.
  Graph g = ImportClassifier(Export("mobilenet_v3_small", "default", ""));
  std::map<std::string, int> ops = OpCounts(g);
  EXPECT_EQ(ops.count("HardSwish"), 0u);
  EXPECT_EQ(ops["Mul"], 9);  // squeeze-excitation gates stay
  EXPECT_EQ(FusedCounts(g),
            (std::map<std::string, int>{{"HardSigmoid", 9}, {"HardSwish", 19}, {"sum", 6}}));
  EXPECT_EQ(g.nodes.size(), 108u - 34u);
}

TEST(TorchvisionImportTest, EfficientnetB0) {
  Graph g = ImportClassifier(Export("efficientnet_b0", "default", ""));
  std::map<std::string, int> ops = OpCounts(g);
  EXPECT_EQ(ops["Conv"], 81);
  // SiLU = x * Sigmoid(x) fuses into Swish: the stem, the 15 expansions, the
  // 16 depthwise layers, the 16 squeeze-excitation reductions and the head;
  // the 16 squeeze-excitation gates, Mul(y, Sigmoid(s)), stay.
  // Then (issue 17) every Swish and the gates' Sigmoid fuse into the Conv
  // before them, and the 9 residual Adds into the projection Convs.
  EXPECT_EQ(ops.count("Swish"), 0u);
  EXPECT_EQ(ops.count("Sigmoid"), 0u);
  EXPECT_EQ(ops.count("Add"), 0u);
  EXPECT_EQ(FusedCounts(g), (std::map<std::string, int>{
                                {"Sigmoid", 16}, {"Swish", 1 + 15 + 16 + 16 + 1}, {"sum", 9}}));
  EXPECT_EQ(ops["Mul"], 16);
  EXPECT_EQ(g.nodes.size(), 239u - 49u - 49u - 16u - 9u);
}

}  // namespace
}  // namespace baton::planner
