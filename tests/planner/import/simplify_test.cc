#include "baton/planner/import/simplify.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>

#include "baton/planner/import/shapes.h"

namespace baton::planner {
namespace {

using Shape = std::vector<int64_t>;

Attr Ints(Shape v) {
  Attr a;
  a.kind = Attr::Kind::kInts;
  a.ints = std::move(v);
  return a;
}
Attr Int(int64_t v) {
  Attr a;
  a.kind = Attr::Kind::kInt;
  a.i = v;
  return a;
}
Attr Float(float v) {
  Attr a;
  a.kind = Attr::Kind::kFloat;
  a.f = v;
  return a;
}
Attr Str(std::string v) {
  Attr a;
  a.kind = Attr::Kind::kString;
  a.s = std::move(v);
  return a;
}

class Builder {
 public:
  int Input(const std::string& name, Shape shape) {
    Tensor t;
    t.name = name;
    t.shape = std::move(shape);
    t.shape_known = true;
    int i = g.AddTensor(t);
    g.inputs.push_back(i);
    return i;
  }
  int ConstF(const std::string& name, Shape shape, std::vector<float> values) {
    Tensor t;
    t.name = name;
    t.shape = std::move(shape);
    t.shape_known = true;
    t.is_constant = true;
    EXPECT_EQ(static_cast<int64_t>(values.size()), t.elements()) << name;
    t.data.resize(values.size() * 4);
    std::memcpy(t.data.data(), values.data(), t.data.size());
    return g.AddTensor(t);
  }
  int ConstI(const std::string& name, Shape shape, std::vector<int64_t> values) {
    Tensor t;
    t.name = name;
    t.dtype = DType::Int64;
    t.shape = std::move(shape);
    t.shape_known = true;
    t.is_constant = true;
    t.data.resize(values.size() * 8);
    std::memcpy(t.data.data(), values.data(), t.data.size());
    return g.AddTensor(t);
  }
  void Add(const std::string& op, const std::string& name, std::vector<std::string> inputs,
           std::vector<std::string> outputs, std::map<std::string, Attr> attrs = {}) {
    Node node;
    node.op = op;
    node.name = name;
    node.attrs = std::move(attrs);
    for (const auto& i : inputs) node.inputs.push_back(i.empty() ? -1 : Find(i));
    for (const auto& o : outputs) {
      int t = g.FindTensor(o);
      if (t < 0) {
        Tensor tensor;
        tensor.name = o;
        t = g.AddTensor(tensor);
      }
      node.outputs.push_back(t);
    }
    g.nodes.push_back(node);
  }
  void Output(const std::string& name) { g.outputs.push_back(Find(name)); }
  int Find(const std::string& name) const {
    int t = g.FindTensor(name);
    EXPECT_GE(t, 0) << name;
    return t;
  }
  const Tensor& T(const std::string& name) const { return g.tensors[Find(name)]; }
  const Node* N(const std::string& name) const {
    for (const Node& n : g.nodes) {
      if (n.name == name) return &n;
    }
    return nullptr;
  }
  std::string Ops() const {
    std::string s;
    for (const Node& n : g.nodes) s += (s.empty() ? "" : " ") + n.op;
    return s;
  }
  std::string In(const std::string& node, int i) const {
    return g.tensors[N(node)->inputs[i]].name;
  }
  std::string Out(const std::string& node, int i = 0) const {
    return g.tensors[N(node)->outputs[i]].name;
  }

  Graph g;
};

void ExpectOk(const Check& c) { EXPECT_TRUE(c.ok()) << c.error(); }

// --- RemoveIdentities -------------------------------------------------------

TEST(RemoveIdentitiesTest, RewiresConsumers) {
  Builder b;
  b.Input("x", {1, 4});
  b.Add("Relu", "r1", {"x"}, {"a"});
  b.Add("Identity", "id", {"a"}, {"b"});
  b.Add("Dropout", "drop", {"b"}, {"c"}, {{"ratio", Float(0.5f)}});
  b.Add("Relu", "r2", {"c"}, {"y"});
  b.Output("y");
  ExpectOk(Simplify(&b.g));
  EXPECT_EQ(b.Ops(), "Relu Relu");
  EXPECT_EQ(b.In("r2", 0), "a");
  EXPECT_EQ(b.g.FindTensor("b"), -1);
  EXPECT_EQ(b.g.FindTensor("c"), -1);
}

TEST(RemoveIdentitiesTest, KeepsGraphOutputName) {
  Builder b;
  b.Input("x", {1, 4});
  b.Add("Relu", "r1", {"x"}, {"a"});
  b.Add("Identity", "id", {"a"}, {"y"});
  b.Add("Sigmoid", "s", {"a"}, {"z"});
  b.Output("y");
  b.Output("z");
  ExpectOk(Simplify(&b.g));
  EXPECT_EQ(b.Ops(), "Relu Sigmoid");
  EXPECT_EQ(b.Out("r1"), "y");
  EXPECT_EQ(b.In("s", 0), "y");
  EXPECT_EQ(b.g.tensors[b.g.outputs[0]].name, "y");
  EXPECT_EQ(b.g.FindTensor("a"), -1);
}

TEST(RemoveIdentitiesTest, KeepsIdentityBetweenGraphTensors) {
  Builder b;
  b.Input("x", {1, 4});
  b.Add("Identity", "id", {"x"}, {"y"});
  b.Add("Relu", "r", {"x"}, {"z"});
  b.Add("Dropout", "d", {"z"}, {"z2", "mask"});
  b.Add("Identity", "id2", {"z2"}, {"w"});
  b.Output("y");
  b.Output("z2");
  b.Output("w");
  ExpectOk(Simplify(&b.g));
  // y = x and w = z2 need a node each; Relu now writes z2 directly.
  EXPECT_EQ(b.Ops(), "Identity Relu Identity");
  EXPECT_EQ(b.Out("r"), "z2");
  EXPECT_EQ(b.In("id2", 0), "z2");
  EXPECT_EQ(b.g.FindTensor("mask"), -1);
}

TEST(RemoveIdentitiesTest, UsedDropoutMaskIsAnError) {
  Builder b;
  b.Input("x", {1, 4});
  b.Add("Dropout", "d", {"x"}, {"y", "mask"});
  b.Output("y");
  b.Output("mask");
  Check c = Simplify(&b.g);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().find("node 'd': the Dropout mask 'mask' is used"), std::string::npos)
      << c.error();
}

// --- FoldConstants ----------------------------------------------------------

TEST(FoldConstantsTest, ShapeChainBecomesConstant) {
  // torch's x.view(x.size(0), -1) without constant folding.
  Builder b;
  b.Input("x", {2, 3, 4, 5});
  b.Add("Shape", "shape", {"x"}, {"sh"});
  b.ConstI("zero", {}, {0});
  b.Add("Gather", "gather", {"sh", "zero"}, {"n"}, {{"axis", Int(0)}});
  b.Add("Unsqueeze", "unsq", {"n"}, {"n1"}, {{"axes", Ints({0})}});
  b.Add("Constant", "minus1", {}, {"m1"}, {{"value_ints", Ints({-1})}});
  b.Add("Concat", "cat", {"n1", "m1"}, {"s"}, {{"axis", Int(0)}});
  b.Add("Reshape", "reshape", {"x", "s"}, {"y"});
  b.Output("y");
  ExpectOk(Simplify(&b.g));
  EXPECT_EQ(b.Ops(), "Reshape");
  const Tensor& s = b.T("s");
  EXPECT_TRUE(s.is_constant);
  EXPECT_EQ(s.IntData(), (std::vector<int64_t>{2, -1}));
  EXPECT_EQ(b.T("y").shape, (Shape{2, 60}));
  // Only x, s, y are left.
  EXPECT_EQ(b.g.tensors.size(), 3u);
}

TEST(FoldConstantsTest, IntegerArithmetic) {
  // Channel shuffle: reshape(x, [n, 2, c / 2, h * w]) from shape arithmetic.
  Builder b;
  b.Input("x", {1, 8, 3, 5});
  b.Add("Shape", "shape", {"x"}, {"sh"});
  b.ConstI("idx", {4}, {0, 1, 2, 3});
  b.ConstI("i0", {1}, {0});
  b.ConstI("i1", {1}, {1});
  b.ConstI("i2", {1}, {2});
  b.ConstI("i3", {1}, {3});
  b.ConstI("two", {1}, {2});
  b.Add("Gather", "g0", {"sh", "i0"}, {"n"});
  b.Add("Gather", "g1", {"sh", "i1"}, {"c"});
  b.Add("Gather", "g2", {"sh", "i2"}, {"h"});
  b.Add("Gather", "g3", {"sh", "i3"}, {"w"});
  b.Add("Div", "div", {"c", "two"}, {"c2"});
  b.Add("Mul", "mul", {"h", "w"}, {"hw"});
  b.Add("Sub", "sub", {"hw", "two"}, {"hw_m2"});
  b.Add("Add", "add", {"hw_m2", "two"}, {"hw2"});
  b.Add("Concat", "cat", {"n", "two", "c2", "hw2"}, {"s"}, {{"axis", Int(0)}});
  b.Add("Reshape", "reshape", {"x", "s"}, {"y"});
  b.Output("y");
  ExpectOk(Simplify(&b.g));
  EXPECT_EQ(b.Ops(), "Reshape");
  EXPECT_EQ(b.T("s").IntData(), (std::vector<int64_t>{1, 2, 4, 15}));
  EXPECT_EQ(b.T("y").shape, (Shape{1, 2, 4, 15}));
}

// The host evaluators of issue 14's ops, through constant folding; expected
// values by hand (ties: the lower index first, as ONNX specifies).
TEST(FoldConstantsTest, Ops14HostEvals) {
  Builder b;
  b.g.tensors[b.Input("xi", {1})].dtype = DType::Int64;
  b.Input("xf", {2});
  b.ConstI("a", {3}, {1, 5, -2});
  b.ConstI("two", {1}, {2});
  b.Add("Max", "max", {"a", "two"}, {"m"});                                 // {2, 5, 2}
  b.Add("Min", "min", {"a", "two"}, {"n"});                                 // {1, 2, -2}
  b.Add("ReduceMin", "rmin", {"n"}, {"rmin_out"}, {{"axes", Ints({0})}});   // {-2}
  b.Add("ReduceMax", "rmax", {"m"}, {"rmax_out"}, {{"axes", Ints({-1})}});  // {5}
  b.Add("Add", "ai", {"rmin_out", "rmax_out"}, {"s"});
  b.Add("Add", "yi", {"xi", "s"}, {"yi_out"});
  b.ConstF("p", {3}, {1.0f, 2.0f, 3.0f});
  b.Add("Pow", "pow", {"p", "two"}, {"pw"});  // {1, 4, 9}
  b.ConstI("reps", {1}, {2});
  b.Add("Tile", "tile", {"pw", "reps"}, {"t"});                        // {1,4,9,1,4,9}
  b.Add("TopK", "topk", {"t", "two"}, {"tv", "ti"});                   // {9,9}, {2,5}
  b.Add("ArgMax", "argmax", {"t"}, {"am"});                            // {2}
  b.Add("ReduceSum", "rsum", {"tv"}, {"rs"}, {{"keepdims", Int(1)}});  // {18}
  b.Add("ReduceL2", "rl2", {"pw"}, {"l2"});                            // {sqrt(98)}
  b.ConstF("z", {2}, {0.0f, std::log(3.0f)});
  b.Add("LogSoftmax", "ls", {"z"}, {"lsm"});  // {-ln 4, ln 3 - ln 4}
  b.ConstF("u", {2}, {1.0f, -1.0f});
  b.Add("Gelu", "gelu", {"u"}, {"g"});
  b.Add("Mish", "mish", {"u"}, {"mi"});
  b.Add("Elu", "elu", {"u"}, {"e"}, {{"alpha", Float(0.5f)}});
  b.Add("Softplus", "sp", {"u"}, {"spo"});
  b.Add("Erf", "erf", {"u"}, {"er"});
  int k = 0;
  for (const char* t : {"rs", "l2", "lsm", "g", "mi", "e", "spo", "er"}) {
    const std::string out = "yf" + std::to_string(k++);
    b.Add("Add", out, {"xf", t}, {out + "_out"});
    b.Output(out + "_out");
  }
  b.Output("yi_out");
  b.Add("Add", "yt", {"ti", "am"}, {"yt_out"});
  b.Output("yt_out");
  ExpectOk(InferShapes(&b.g));
  ExpectOk(FoldConstants(&b.g));
  EXPECT_EQ(b.Ops(), "Add Add Add Add Add Add Add Add Add Add");
  EXPECT_EQ(b.T("m").IntData(), (std::vector<int64_t>{2, 5, 2}));
  EXPECT_EQ(b.T("n").IntData(), (std::vector<int64_t>{1, 2, -2}));
  EXPECT_EQ(b.T("rmin_out").IntData(), (std::vector<int64_t>{-2}));
  EXPECT_EQ(b.T("rmax_out").IntData(), (std::vector<int64_t>{5}));
  EXPECT_EQ(b.T("t").FloatData(), (std::vector<float>{1, 4, 9, 1, 4, 9}));
  EXPECT_EQ(b.T("tv").FloatData(), (std::vector<float>{9, 9}));
  EXPECT_EQ(b.T("ti").IntData(), (std::vector<int64_t>{2, 5}));
  EXPECT_EQ(b.T("am").IntData(), (std::vector<int64_t>{2}));
  EXPECT_EQ(b.T("rs").FloatData(), (std::vector<float>{18}));
  EXPECT_NEAR(b.T("l2").FloatData()[0], 9.8994949f, 1e-6f);
  const std::vector<float> lsm = b.T("lsm").FloatData();
  EXPECT_NEAR(lsm[0], -1.3862944f, 1e-6f);
  EXPECT_NEAR(lsm[1], -0.2876821f, 1e-6f);
  const std::vector<float> g = b.T("g").FloatData(), mi = b.T("mi").FloatData();
  EXPECT_NEAR(g[0], 0.8413447f, 1e-6f);  // x * Phi(x)
  EXPECT_NEAR(g[1], -0.1586553f, 1e-6f);
  EXPECT_NEAR(mi[0], 0.8650984f, 1e-6f);  // x * tanh(ln(1 + e^x))
  EXPECT_NEAR(mi[1], -0.3034015f, 1e-6f);
  EXPECT_NEAR(b.T("e").FloatData()[1], -0.3160603f, 1e-6f);  // 0.5 * (e^-1 - 1)
  EXPECT_NEAR(b.T("spo").FloatData()[0], 1.3132617f, 1e-6f);
  EXPECT_NEAR(b.T("er").FloatData()[0], 0.8427008f, 1e-6f);
}

TEST(FoldConstantsTest, FloatSubgraphAndSlice) {
  // Transpose then Slice of a constant: [[1,2,3],[4,5,6]]^T = [[1,4],[2,5],[3,6]],
  // rows 1: -> [[2,5],[3,6]], then Relu(x - 4) = [[0,1],[0,2]].
  Builder b;
  b.Input("x", {2, 2});
  b.ConstF("w", {2, 3}, {1, 2, 3, 4, 5, 6});
  b.ConstI("st", {1}, {1});
  b.ConstI("en", {1}, {INT64_MAX});
  b.ConstF("four", {}, {4});
  b.Add("Transpose", "t", {"w"}, {"wt"});
  b.Add("Slice", "sl", {"wt", "st", "en"}, {"ws"});
  b.Add("Sub", "sub", {"ws", "four"}, {"wd"});
  b.Add("Relu", "relu", {"wd"}, {"wr"});
  b.Add("Add", "add", {"x", "wr"}, {"y"});
  b.Output("y");
  ExpectOk(Simplify(&b.g));
  EXPECT_EQ(b.Ops(), "Add");
  EXPECT_EQ(b.T("wr").FloatData(), (std::vector<float>{0, 1, 0, 2}));
}

TEST(FoldConstantsTest, KeepsNodesFeedingGraphOutputs) {
  Builder b;
  b.Input("x", {2});
  b.Add("Shape", "shape", {"x"}, {"sh"});
  b.Add("Relu", "r", {"x"}, {"y"});
  b.Output("sh");
  b.Output("y");
  ExpectOk(FoldConstants(&b.g));  // shapes are known already
  EXPECT_EQ(b.Ops(), "Shape Relu");
}

// --- ResolveAutoPad ---------------------------------------------------------

TEST(ResolveAutoPadTest, SameUpperAndLower) {
  // H: out 4, total pad (4-1)*2+3-7 = 2; W: out 4, total (4-1)*2+3-8 = 1.
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER"}) {
    Builder b;
    b.Input("x", {1, 1, 7, 8});
    b.ConstF("w", {1, 1, 3, 3}, std::vector<float>(9, 1.0f));
    b.Add("Conv", "conv", {"x", "w"}, {"y"}, {{"auto_pad", Str(mode)}, {"strides", Ints({2, 2})}});
    b.Output("y");
    ExpectOk(Simplify(&b.g));
    const Node* conv = b.N("conv");
    ASSERT_NE(conv, nullptr);
    EXPECT_EQ(conv->FindAttr("auto_pad"), nullptr);
    Shape expected = std::string(mode) == "SAME_UPPER" ? Shape{1, 0, 1, 1} : Shape{1, 1, 1, 0};
    EXPECT_EQ(conv->GetInts("pads"), expected) << mode;
    EXPECT_EQ(b.T("y").shape, (Shape{1, 1, 4, 4}));
  }
}

// --- FoldBatchNorm ----------------------------------------------------------

// Conv with 2 output channels followed by BN; epsilon 0.25 and var {3.75, 0.75}
// make sqrt(var + eps) = {2, 1}, so a = scale / sqrt(var + eps) = {0.5, 2}.
Builder ConvBn(bool with_bias) {
  Builder b;
  b.Input("x", {1, 2, 3, 3});
  b.ConstF("w", {2, 2, 1, 1}, {2, 4, -1, 3});
  if (with_bias) b.ConstF("bias", {2}, {0.5f, 1});
  b.ConstF("scale", {2}, {1, 2});
  b.ConstF("shift", {2}, {0.1f, 0.2f});
  b.ConstF("mean", {2}, {0.5f, -1});
  b.ConstF("var", {2}, {3.75f, 0.75f});
  b.Add("Conv", "conv", {"x", "w", with_bias ? "bias" : ""}, {"c"});
  b.Add("BatchNormalization", "bn", {"c", "scale", "shift", "mean", "var"}, {"y"},
        {{"epsilon", Float(0.25f)}});
  b.Output("y");
  return b;
}

TEST(FoldBatchNormTest, ConvWithBias) {
  Builder b = ConvBn(true);
  ExpectOk(Simplify(&b.g));
  EXPECT_EQ(b.Ops(), "Conv");
  const Node* conv = b.N("conv");
  EXPECT_EQ(b.Out("conv"), "y");
  // W' = W * a per output channel: {2*0.5, 4*0.5, -1*2, 3*2}.
  EXPECT_EQ(b.g.tensors[conv->inputs[1]].FloatData(), (std::vector<float>{1, 2, -2, 6}));
  // b' = (b - mean) * a + shift = {(0.5-0.5)*0.5+0.1, (1+1)*2+0.2}.
  std::vector<float> bias = b.g.tensors[conv->inputs[2]].FloatData();
  ASSERT_EQ(bias.size(), 2u);
  EXPECT_FLOAT_EQ(bias[0], 0.1f);
  EXPECT_FLOAT_EQ(bias[1], 4.2f);
  // The original parameters are gone.
  for (const char* gone : {"w", "bias", "scale", "shift", "mean", "var", "c"}) {
    EXPECT_EQ(b.g.FindTensor(gone), -1) << gone;
  }
}

TEST(FoldBatchNormTest, ConvWithoutBiasAndDefaultEpsilon) {
  Builder b = ConvBn(false);
  b.g.nodes[1].attrs.clear();  // epsilon 1e-5
  ExpectOk(Simplify(&b.g));
  const Node* conv = b.N("conv");
  ASSERT_EQ(conv->inputs.size(), 3u);
  const double a0 = 1.0 / std::sqrt(3.75 + 1e-5), a1 = 2.0 / std::sqrt(0.75 + 1e-5);
  std::vector<float> w = b.g.tensors[conv->inputs[1]].FloatData();
  std::vector<float> bias = b.g.tensors[conv->inputs[2]].FloatData();
  EXPECT_FLOAT_EQ(w[0], static_cast<float>(2 * a0));
  EXPECT_FLOAT_EQ(w[3], static_cast<float>(3 * a1));
  EXPECT_FLOAT_EQ(bias[0], static_cast<float>(-0.5 * a0 + 0.1));
  EXPECT_FLOAT_EQ(bias[1], static_cast<float>(1.0 * a1 + 0.2));
}

TEST(FoldBatchNormTest, SharedWeightsAreNotModified) {
  Builder b = ConvBn(true);
  b.Add("Conv", "conv2", {"x", "w"}, {"z"});
  b.Output("z");
  ExpectOk(Simplify(&b.g));
  EXPECT_EQ(b.Ops(), "Conv Conv");
  EXPECT_EQ(b.T("w").FloatData(), (std::vector<float>{2, 4, -1, 3}));
  EXPECT_EQ(b.In("conv2", 1), "w");
  EXPECT_NE(b.In("conv", 1), "w");
}

TEST(FoldBatchNormTest, NotFoldedWhenNotExact) {
  {  // conv output has another consumer
    Builder b = ConvBn(true);
    b.Add("Relu", "other", {"c"}, {"z"});
    b.Output("z");
    ExpectOk(Simplify(&b.g));
    EXPECT_EQ(b.Ops(), "Conv BatchNormalization Relu");
  }
  {  // conv output is a graph output
    Builder b = ConvBn(true);
    b.Output("c");
    ExpectOk(Simplify(&b.g));
    EXPECT_EQ(b.Ops(), "Conv BatchNormalization");
  }
  {  // weights computed at run time
    Builder b;
    b.Input("x", {1, 2, 3, 3});
    b.Input("w", {2, 2, 1, 1});
    for (const char* p : {"scale", "shift", "mean", "var"}) b.ConstF(p, {2}, {1, 1});
    b.Add("Conv", "conv", {"x", "w"}, {"c"});
    b.Add("BatchNormalization", "bn", {"c", "scale", "shift", "mean", "var"}, {"y"});
    b.Output("y");
    ExpectOk(Simplify(&b.g));
    EXPECT_EQ(b.Ops(), "Conv BatchNormalization");
  }
  {  // BN after a fused activation is not exact
    Builder b = ConvBn(true);
    b.g.nodes[0].clamp = std::make_pair(0.0f, 6.0f);
    ExpectOk(FoldBatchNorm(&b.g));
    EXPECT_EQ(b.Ops(), "Conv BatchNormalization");
  }
}

TEST(FoldBatchNormTest, Gemm) {
  // Y = 2 * A W^T + 1 * C, W [2,3], C [2]; BN over the 2 columns with a = {0.5, 2}.
  Builder b;
  b.Input("a", {4, 3});
  b.ConstF("w", {2, 3}, {1, 2, 3, 4, 5, 6});
  b.ConstF("c", {2}, {1, -1});
  b.ConstF("scale", {2}, {1, 2});
  b.ConstF("shift", {2}, {0, 1});
  b.ConstF("mean", {2}, {1, 1});
  b.ConstF("var", {2}, {3.75f, 0.75f});
  b.Add("Gemm", "fc", {"a", "w", "c"}, {"g"}, {{"transB", Int(1)}, {"alpha", Float(2)}});
  b.Add("BatchNormalization", "bn", {"g", "scale", "shift", "mean", "var"}, {"y"},
        {{"epsilon", Float(0.25f)}});
  b.Output("y");
  ExpectOk(Simplify(&b.g));
  EXPECT_EQ(b.Ops(), "Gemm");
  const Node* fc = b.N("fc");
  EXPECT_EQ(fc->FindAttr("alpha"), nullptr);
  EXPECT_EQ(fc->GetInt("transB", 0), 1);
  // W'[n] = alpha * a[n] * W[n] = {1,2,3, 16,20,24}; C' = (C - mean) * a + shift = {0, -3}.
  EXPECT_EQ(b.g.tensors[fc->inputs[1]].FloatData(), (std::vector<float>{1, 2, 3, 16, 20, 24}));
  EXPECT_EQ(b.g.tensors[fc->inputs[2]].FloatData(), (std::vector<float>{0, -3}));
  EXPECT_EQ(b.T("y").shape, (Shape{4, 2}));
}

// --- FuseActivations --------------------------------------------------------

Builder ConvAct(const std::string& act, std::vector<std::string> extra_inputs = {},
                std::map<std::string, Attr> attrs = {}) {
  Builder b;
  b.Input("x", {1, 1, 2, 2});
  b.ConstF("w", {1, 1, 1, 1}, {1});
  b.ConstF("lo", {}, {-1});
  b.ConstF("hi", {}, {6});
  b.Add("Conv", "conv", {"x", "w"}, {"c"});
  std::vector<std::string> inputs = {"c"};
  inputs.insert(inputs.end(), extra_inputs.begin(), extra_inputs.end());
  b.Add(act, "act", inputs, {"y"}, std::move(attrs));
  b.Output("y");
  return b;
}

TEST(FuseActivationsTest, ReluAndClipForms) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  struct Case {
    Builder b;
    std::pair<float, float> clamp;
  } cases[] = {
      {ConvAct("Relu"), {0.0f, kInf}},
      {ConvAct("Clip", {"lo", "hi"}), {-1.0f, 6.0f}},
      {ConvAct("Clip", {"", "hi"}), {-kInf, 6.0f}},
      {ConvAct("Clip", {}, {{"min", Float(0)}, {"max", Float(6)}}), {0.0f, 6.0f}},  // opset 6
  };
  for (Case& c : cases) {
    ExpectOk(Simplify(&c.b.g));
    EXPECT_EQ(c.b.Ops(), "Conv");
    const Node* conv = c.b.N("conv");
    ASSERT_TRUE(conv->clamp.has_value());
    EXPECT_EQ(*conv->clamp, c.clamp);
    EXPECT_EQ(c.b.Out("conv"), "y");
  }
}

TEST(FuseActivationsTest, ChainedActivationsIntersect) {
  Builder b = ConvAct("Relu");
  b.Add("Clip", "clip", {"y", "lo", "hi"}, {"z"});
  b.g.outputs = {b.Find("z")};
  ExpectOk(Simplify(&b.g));
  EXPECT_EQ(b.Ops(), "Conv");
  EXPECT_EQ(*b.N("conv")->clamp, std::make_pair(0.0f, 6.0f));
}

TEST(FuseActivationsTest, GemmAndAdd) {
  Builder b;
  b.Input("a", {2, 3});
  b.Input("r", {2, 4});
  b.ConstF("w", {3, 4}, std::vector<float>(12, 1.0f));
  b.Add("Gemm", "fc", {"a", "w"}, {"g"});
  b.Add("Relu", "relu1", {"g"}, {"g1"});
  b.Add("Add", "add", {"g1", "r"}, {"s"});
  b.Add("Relu", "relu2", {"s"}, {"y"});
  b.Output("y");
  ExpectOk(Simplify(&b.g));
  EXPECT_EQ(b.Ops(), "Gemm Add");
  EXPECT_TRUE(b.N("fc")->clamp.has_value());
  EXPECT_TRUE(b.N("add")->clamp.has_value());
}

TEST(FuseActivationsTest, Preconditions) {
  {  // conv output also read elsewhere
    Builder b = ConvAct("Relu");
    b.Add("Sigmoid", "s", {"c"}, {"z"});
    b.Output("z");
    ExpectOk(Simplify(&b.g));
    EXPECT_EQ(b.Ops(), "Conv Relu Sigmoid");
    EXPECT_FALSE(b.N("conv")->clamp.has_value());
  }
  {  // conv output is a graph output
    Builder b = ConvAct("Relu");
    b.Output("c");
    ExpectOk(Simplify(&b.g));
    EXPECT_EQ(b.Ops(), "Conv Relu");
  }
  {  // bound not constant
    Builder b = ConvAct("Clip");
    b.Input("dyn", {});
    b.g.nodes[1].inputs.push_back(b.Find("dyn"));
    ExpectOk(Simplify(&b.g));
    EXPECT_EQ(b.Ops(), "Conv Clip");
  }
  {  // producer not fusable
    Builder b;
    b.Input("a", {2, 3});
    b.Input("m", {3, 4});
    b.Add("MatMul", "mm", {"a", "m"}, {"p"});
    b.Add("Relu", "relu", {"p"}, {"y"});
    b.Output("y");
    ExpectOk(Simplify(&b.g));
    EXPECT_EQ(b.Ops(), "MatMul Relu");
  }
}

// --- FuseConvActivations and FuseConvAdds (issue 17) -----------------------

TEST(FuseConvActivationsTest, EachActivationAfterTheClamp) {
  struct Case {
    const char* op;
    std::map<std::string, Attr> attrs;
    float alpha, beta;
  } cases[] = {
      {"HardSwish", {}, 1.0f / 6.0f, 0.5f},
      {"Swish", {}, 0.0f, 0.0f},
      {"HardSigmoid", {{"alpha", Float(0.25f)}, {"beta", Float(0.4f)}}, 0.25f, 0.4f},
      {"HardSigmoid", {}, 0.2f, 0.5f},
      {"Sigmoid", {}, 0.0f, 0.0f},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    Builder b = ConvAct("Relu");
    b.Add(c.op, "act2", {"y"}, {"z"}, c.attrs);
    b.g.outputs = {b.Find("z")};
    ExpectOk(Simplify(&b.g));
    EXPECT_EQ(b.Ops(), "Conv");
    const Node* conv = b.N("conv");
    EXPECT_EQ(conv->activation, c.op);
    EXPECT_EQ(conv->activation_alpha, c.alpha);
    EXPECT_EQ(conv->activation_beta, c.beta);
    ASSERT_TRUE(conv->clamp.has_value());  // Relu before the activation: the clamp
    EXPECT_EQ(b.Out("conv"), "z");
  }
}

TEST(FuseConvActivationsTest, GemmAndMulForms) {
  Builder b;
  b.Input("a", {2, 3});
  b.ConstF("w", {3, 4}, std::vector<float>(12, 1.0f));
  b.Add("Gemm", "fc", {"a", "w"}, {"g"});
  b.Add("Sigmoid", "sig", {"g"}, {"s"});
  b.Add("Mul", "mul", {"g", "s"}, {"y"});  // SiLU as exported: Swish, then fused
  b.Output("y");
  ExpectOk(Simplify(&b.g));
  EXPECT_EQ(b.Ops(), "Gemm");
  EXPECT_EQ(b.N("fc")->activation, "Swish");
  EXPECT_FALSE(b.N("fc")->clamp.has_value());
}

TEST(FuseConvActivationsTest, NotWithTwoConsumersOrAGraphOutput) {
  {  // the conv output feeds the activation and another node
    Builder b = ConvAct("Sigmoid");
    b.Add("Relu", "other", {"c"}, {"z"});
    b.Output("z");
    ExpectOk(Simplify(&b.g));
    EXPECT_EQ(b.Ops(), "Conv Sigmoid Relu");
    EXPECT_EQ(b.N("conv")->activation, "");
  }
  {  // the conv output is a graph output
    Builder b = ConvAct("HardSwish");
    b.Output("c");
    ExpectOk(Simplify(&b.g));
    EXPECT_EQ(b.Ops(), "Conv HardSwish");
    EXPECT_EQ(b.N("conv")->activation, "");
  }
  {  // a Relu after the activation stays (the clamp goes first)
    Builder b = ConvAct("Sigmoid");
    b.Add("Relu", "relu", {"y"}, {"z"});
    b.g.outputs = {b.Find("z")};
    ExpectOk(Simplify(&b.g));
    EXPECT_EQ(b.Ops(), "Conv Relu");
    EXPECT_EQ(b.N("conv")->activation, "Sigmoid");
    EXPECT_FALSE(b.N("conv")->clamp.has_value());
  }
}

// Conv -> Add(residual) -> Relu -> HardSwish: one Conv with sum, clamp and
// activation; the Conv (no bias) gets an absent input 2.
Builder ConvAddCase(Shape other_shape) {
  Builder b;
  b.Input("x", {1, 2, 3, 3});
  b.Input("r", std::move(other_shape));
  b.ConstF("w", {2, 2, 1, 1}, {1, 0, 0, 1});
  b.Add("Conv", "conv", {"x", "w"}, {"c"});
  b.Add("Add", "add", {"r", "c"}, {"s"});
  b.Add("Relu", "relu", {"s"}, {"t"});
  b.Add("HardSwish", "hs", {"t"}, {"y"});
  b.Output("y");
  return b;
}

TEST(FuseConvAddsTest, ResidualAddWithClampAndActivation) {
  Builder b = ConvAddCase({1, 2, 3, 3});
  ExpectOk(Simplify(&b.g));
  EXPECT_EQ(b.Ops(), "Conv");
  const Node* conv = b.N("conv");
  ASSERT_EQ(conv->inputs.size(), 4u);
  EXPECT_EQ(conv->inputs[2], -1);
  EXPECT_EQ(b.In("conv", 3), "r");
  EXPECT_TRUE(conv->clamp.has_value());
  EXPECT_EQ(conv->activation, "HardSwish");
  EXPECT_EQ(b.Out("conv"), "y");
}

TEST(FuseConvAddsTest, NotWithBroadcastOrTwoConsumers) {
  {  // other broadcasts over the conv output
    Builder b = ConvAddCase({1, 2, 1, 1});
    ExpectOk(Simplify(&b.g));
    EXPECT_EQ(b.Ops(), "Conv Add HardSwish");
    EXPECT_EQ(b.N("conv")->inputs.size(), 2u);
  }
  {  // the conv output is read twice
    Builder b = ConvAddCase({1, 2, 3, 3});
    b.Add("Sigmoid", "other", {"c"}, {"z"});
    b.Output("z");
    ExpectOk(Simplify(&b.g));
    EXPECT_EQ(b.Ops(), "Conv Add HardSwish Sigmoid");
  }
  {  // the conv output is a graph output
    Builder b = ConvAddCase({1, 2, 3, 3});
    b.Output("c");
    ExpectOk(Simplify(&b.g));
    EXPECT_EQ(b.Ops(), "Conv Add HardSwish");
  }
}

TEST(FuseConvAddsTest, FusedConvMovesAfterTheOtherOperand) {
  // The residual is produced after the conv in the node list: the fused Conv
  // takes the Add's place, so the order stays topological.
  Builder b;
  b.Input("x", {1, 2, 3, 3});
  b.ConstF("w", {2, 2, 1, 1}, {1, 0, 0, 1});
  b.Add("Conv", "conv", {"x", "w"}, {"c"});
  b.Add("Sigmoid", "late", {"x"}, {"r"});
  b.Add("Add", "add", {"c", "r"}, {"y"});
  b.Output("y");
  ExpectOk(Simplify(&b.g));
  EXPECT_EQ(b.Ops(), "Sigmoid Conv");
  EXPECT_EQ(b.In("conv", 3), "r");
}

// --- FuseHardSwish ----------------------------------------------------------

TEST(FuseHardSwishTest, MulOfHardSigmoid) {
  Builder b;
  b.Input("x", {1, 4});
  b.Add("HardSigmoid", "hs", {"x"}, {"h"}, {{"alpha", Float(1.0f / 6)}, {"beta", Float(0.5f)}});
  b.Add("Mul", "mul", {"h", "x"}, {"y"});  // either operand order
  b.Output("y");
  ExpectOk(Simplify(&b.g));
  EXPECT_EQ(b.Ops(), "HardSwish");
  EXPECT_EQ(b.In("mul", 0), "x");
  EXPECT_EQ(b.Out("mul"), "y");
  EXPECT_TRUE(b.N("mul")->attrs.empty());
}

TEST(FuseHardSwishTest, Preconditions) {
  {  // default alpha 0.2 is not hardswish
    Builder b;
    b.Input("x", {1, 4});
    b.Add("HardSigmoid", "hs", {"x"}, {"h"});
    b.Add("Mul", "mul", {"x", "h"}, {"y"});
    b.Output("y");
    ExpectOk(Simplify(&b.g));
    EXPECT_EQ(b.Ops(), "HardSigmoid Mul");
  }
  {  // gate of another tensor (squeeze-excitation)
    Builder b;
    b.Input("x", {1, 4});
    b.Input("z", {1, 4});
    b.Add("HardSigmoid", "hs", {"z"}, {"h"}, {{"alpha", Float(1.0f / 6)}});
    b.Add("Mul", "mul", {"x", "h"}, {"y"});
    b.Output("y");
    ExpectOk(Simplify(&b.g));
    EXPECT_EQ(b.Ops(), "HardSigmoid Mul");
  }
  {  // gate also used elsewhere
    Builder b;
    b.Input("x", {1, 4});
    b.Add("HardSigmoid", "hs", {"x"}, {"h"}, {{"alpha", Float(1.0f / 6)}});
    b.Add("Mul", "mul", {"x", "h"}, {"y"});
    b.Output("y");
    b.Output("h");
    ExpectOk(Simplify(&b.g));
    EXPECT_EQ(b.Ops(), "HardSigmoid Mul");
  }
}

// --- FuseGelu / FuseMish ----------------------------------------------------

// The GELU torch exports: Mul(Mul(x, Add(Erf(Div(x, sqrt2)), 1)), 0.5), in
// the grouping `grouping` (0: torch's, 1: (x * 0.5) * a, 2: x * (a * 0.5)).
Builder GeluGraph(int grouping, float sqrt2 = 1.4142135f, float one = 1.0f, float half = 0.5f,
                  bool div = true) {
  Builder b;
  b.Input("x", {1, 4});
  b.ConstF("c", {}, {div ? sqrt2 : 1.0f / sqrt2});
  b.ConstF("one", {}, {one});
  b.ConstF("half", {}, {half});
  b.Add(div ? "Div" : "Mul", "div", {"x", "c"}, {"d"});
  b.Add("Erf", "erf", {"d"}, {"e"});
  b.Add("Add", "add", {"one", "e"}, {"a"});
  if (grouping == 0) {
    b.Add("Mul", "m1", {"x", "a"}, {"p"});
    b.Add("Mul", "m2", {"p", "half"}, {"y"});
  } else if (grouping == 1) {
    b.Add("Mul", "m1", {"half", "x"}, {"p"});
    b.Add("Mul", "m2", {"a", "p"}, {"y"});
  } else {
    b.Add("Mul", "m1", {"a", "half"}, {"p"});
    b.Add("Mul", "m2", {"x", "p"}, {"y"});
  }
  b.Output("y");
  return b;
}

TEST(FuseGeluTest, EveryGrouping) {
  for (int grouping = 0; grouping < 3; ++grouping) {
    SCOPED_TRACE(grouping);
    Builder b = GeluGraph(grouping);
    ExpectOk(Simplify(&b.g));
    EXPECT_EQ(b.Ops(), "Gelu");
    EXPECT_EQ(b.In("m2", 0), "x");
    EXPECT_EQ(b.Out("m2"), "y");
  }
  Builder b = GeluGraph(0, 1.4142135f, 1.0f, 0.5f, /*div=*/false);  // x * (1/sqrt2)
  ExpectOk(Simplify(&b.g));
  EXPECT_EQ(b.Ops(), "Gelu");
}

TEST(FuseGeluTest, ConstantsMustBeExact) {
  for (auto [sqrt2, one, half] :
       {std::tuple{1.4142f, 1.0f, 0.5f},  // not sqrt(2) to 1e-6
        std::tuple{1.4142135f, 1.001f, 0.5f}, std::tuple{1.4142135f, 1.0f, 0.4999f}}) {
    Builder b = GeluGraph(0, sqrt2, one, half);
    ExpectOk(Simplify(&b.g));
    EXPECT_EQ(b.Ops(), "Div Erf Add Mul Mul");
  }
}

TEST(FuseGeluTest, IntermediateUsedElsewhereIsKept) {
  Builder b = GeluGraph(0);
  b.Output("e");
  ExpectOk(Simplify(&b.g));
  EXPECT_EQ(b.Ops(), "Div Erf Add Mul Mul");
}

TEST(FuseMishTest, MulOfTanhSoftplus) {
  Builder b;
  b.Input("x", {1, 4});
  b.Add("Softplus", "sp", {"x"}, {"s"});
  b.Add("Tanh", "tanh", {"s"}, {"t"});
  b.Add("Mul", "mul", {"t", "x"}, {"y"});
  b.Output("y");
  ExpectOk(Simplify(&b.g));
  EXPECT_EQ(b.Ops(), "Mish");
  EXPECT_EQ(b.In("mul", 0), "x");
}

TEST(FuseMishTest, Preconditions) {
  {  // Softplus of another tensor
    Builder b;
    b.Input("x", {1, 4});
    b.Input("z", {1, 4});
    b.Add("Softplus", "sp", {"z"}, {"s"});
    b.Add("Tanh", "tanh", {"s"}, {"t"});
    b.Add("Mul", "mul", {"x", "t"}, {"y"});
    b.Output("y");
    ExpectOk(Simplify(&b.g));
    EXPECT_EQ(b.Ops(), "Softplus Tanh Mul");
  }
  {  // the Tanh output is also a graph output
    Builder b;
    b.Input("x", {1, 4});
    b.Add("Softplus", "sp", {"x"}, {"s"});
    b.Add("Tanh", "tanh", {"s"}, {"t"});
    b.Add("Mul", "mul", {"x", "t"}, {"y"});
    b.Output("y");
    b.Output("t");
    ExpectOk(Simplify(&b.g));
    EXPECT_EQ(b.Ops(), "Softplus Tanh Mul");
  }
}

TEST(FuseSwishTest, MulOfSigmoidBothOrders) {
  for (int order = 0; order < 2; ++order) {
    Builder b;
    b.Input("x", {1, 4, 3, 3});
    b.Add("Sigmoid", "sig", {"x"}, {"s"});
    b.Add("Mul", "mul",
          order ? std::vector<std::string>{"s", "x"} : std::vector<std::string>{"x", "s"}, {"y"});
    b.Output("y");
    ExpectOk(Simplify(&b.g));
    EXPECT_EQ(b.Ops(), "Swish");
    EXPECT_EQ(b.In("mul", 0), "x");
  }
}

// A squeeze-excitation gate (the Sigmoid reads another tensor), a broadcast
// gate and a Sigmoid read elsewhere stay as written.
TEST(FuseSwishTest, Preconditions) {
  {
    Builder b;
    b.Input("x", {1, 4, 3, 3});
    b.Input("z", {1, 4, 3, 3});
    b.Add("Sigmoid", "sig", {"z"}, {"s"});
    b.Add("Mul", "mul", {"x", "s"}, {"y"});
    b.Output("y");
    ExpectOk(Simplify(&b.g));
    EXPECT_EQ(b.Ops(), "Sigmoid Mul");
  }
  {
    Builder b;
    b.Input("x", {1, 4, 3, 3});
    b.Add("Sigmoid", "sig", {"x"}, {"s"});
    b.Add("Mul", "mul", {"x", "s"}, {"y"});
    b.Output("y");
    b.Output("s");
    ExpectOk(Simplify(&b.g));
    EXPECT_EQ(b.Ops(), "Sigmoid Mul");
  }
}

// --- RemoveUnusedTensors and determinism -----------------------------------

TEST(RemoveUnusedTensorsTest, KeepsOrderAndInputs) {
  Builder b;
  b.Input("x", {2});
  b.Input("unused_input", {2});
  b.ConstF("dead", {1}, {1});
  b.Add("Relu", "r", {"x"}, {"y"});
  b.Output("y");
  RemoveUnusedTensors(&b.g);
  ASSERT_EQ(b.g.tensors.size(), 3u);
  EXPECT_EQ(b.g.tensors[0].name, "x");
  EXPECT_EQ(b.g.tensors[1].name, "unused_input");
  EXPECT_EQ(b.g.tensors[2].name, "y");
  EXPECT_EQ(b.g.inputs, (std::vector<int>{0, 1}));
  EXPECT_EQ(b.g.outputs, (std::vector<int>{2}));
  EXPECT_EQ(b.g.nodes[0].outputs, (std::vector<int>{2}));
}

TEST(SimplifyTest, Deterministic) {
  auto names = [](const Graph& g) {
    std::string s;
    for (const Tensor& t : g.tensors) s += t.name + ",";
    for (const Node& n : g.nodes) s += n.name + ":" + n.op + ",";
    return s;
  };
  Builder a = ConvBn(true);
  a.Add("Relu", "relu", {"y"}, {"z"});
  a.g.outputs = {a.Find("z")};
  Builder b = a;
  ExpectOk(Simplify(&a.g));
  ExpectOk(Simplify(&b.g));
  EXPECT_EQ(names(a.g), names(b.g));
  EXPECT_EQ(a.Ops(), "Conv");
  EXPECT_EQ(names(a.g), "x,z,conv_bn_weight,conv_bn_bias,conv:Conv,");
}

}  // namespace
}  // namespace baton::planner
