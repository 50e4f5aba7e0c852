#include "baton/planner/graph.h"

#include <gtest/gtest.h>

#include <cstring>

namespace baton::planner {
namespace {

// Builds small graphs by name.
class Builder {
 public:
  int Tensor(const std::string& name, std::vector<int64_t> shape = {1, 4}) {
    int t = g.FindTensor(name);
    if (t >= 0) return t;
    planner::Tensor tensor;
    tensor.name = name;
    tensor.shape = std::move(shape);
    tensor.shape_known = true;
    return g.AddTensor(tensor);
  }
  int Input(const std::string& name) {
    int t = Tensor(name);
    g.inputs.push_back(t);
    return t;
  }
  int Constant(const std::string& name, std::vector<float> values) {
    int t = Tensor(name, {static_cast<int64_t>(values.size())});
    g.tensors[t].is_constant = true;
    g.tensors[t].data.resize(values.size() * 4);
    std::memcpy(g.tensors[t].data.data(), values.data(), values.size() * 4);
    return t;
  }
  int Node(const std::string& op, const std::string& name, std::vector<std::string> inputs,
           std::vector<std::string> outputs) {
    planner::Node node;
    node.op = op;
    node.name = name;
    for (const auto& i : inputs) node.inputs.push_back(i.empty() ? -1 : Tensor(i));
    for (const auto& o : outputs) node.outputs.push_back(Tensor(o));
    g.nodes.push_back(node);
    return static_cast<int>(g.nodes.size()) - 1;
  }
  void Output(const std::string& name) { g.outputs.push_back(Tensor(name)); }

  Graph g;
};

TEST(DTypeTest, NamesRoundTrip) {
  for (const char* name : {"float32", "int32", "int64", "uint8", "int8"}) {
    auto dtype = ParseDType(name);
    ASSERT_TRUE(dtype.has_value()) << name;
    EXPECT_STREQ(DTypeName(*dtype), name);
  }
  EXPECT_FALSE(ParseDType("float64").has_value());
  EXPECT_FALSE(ParseDType("").has_value());
  EXPECT_EQ(DTypeBytes(DType::Float32), 4u);
  EXPECT_EQ(DTypeBytes(DType::Int32), 4u);
  EXPECT_EQ(DTypeBytes(DType::Int64), 8u);
  EXPECT_EQ(DTypeBytes(DType::UInt8), 1u);
  EXPECT_EQ(DTypeBytes(DType::Int8), 1u);
}

TEST(TensorTest, ElementsAndBytes) {
  planner::Tensor t;
  EXPECT_EQ(t.elements(), 1);  // scalar
  t.shape = {2, 3, 4};
  EXPECT_EQ(t.elements(), 24);
  EXPECT_EQ(t.bytes(), 96u);
  t.dtype = DType::Int64;
  EXPECT_EQ(t.bytes(), 192u);
  t.shape = {2, 0};
  EXPECT_EQ(t.elements(), 0);
}

TEST(TensorTest, TypedViews) {
  planner::Tensor f;
  f.shape = {2};
  float fv[2] = {1.5f, -2.0f};
  f.data.assign(reinterpret_cast<uint8_t*>(fv), reinterpret_cast<uint8_t*>(fv) + 8);
  EXPECT_EQ(f.FloatData(), (std::vector<float>{1.5f, -2.0f}));
  EXPECT_TRUE(f.IntData().empty());

  planner::Tensor i32;
  i32.dtype = DType::Int32;
  i32.shape = {2};
  int32_t iv[2] = {-7, 9};
  i32.data.assign(reinterpret_cast<uint8_t*>(iv), reinterpret_cast<uint8_t*>(iv) + 8);
  EXPECT_EQ(i32.IntData(), (std::vector<int64_t>{-7, 9}));
  EXPECT_TRUE(i32.FloatData().empty());

  planner::Tensor i64;
  i64.dtype = DType::Int64;
  i64.shape = {1};
  int64_t lv = -(int64_t{1} << 40);
  i64.data.assign(reinterpret_cast<uint8_t*>(&lv), reinterpret_cast<uint8_t*>(&lv) + 8);
  EXPECT_EQ(i64.IntData(), (std::vector<int64_t>{lv}));
}

TEST(NodeTest, AttrGetters) {
  planner::Node n;
  Attr i;
  i.kind = Attr::Kind::kInt;
  i.i = 3;
  Attr f;
  f.kind = Attr::Kind::kFloat;
  f.f = 0.25f;
  Attr ints;
  ints.kind = Attr::Kind::kInts;
  ints.ints = {1, 2};
  Attr s;
  s.kind = Attr::Kind::kString;
  s.s = "SAME_UPPER";
  n.attrs = {{"group", i}, {"alpha", f}, {"pads", ints}, {"auto_pad", s}};

  EXPECT_EQ(n.FindAttr("missing"), nullptr);
  ASSERT_NE(n.FindAttr("group"), nullptr);
  EXPECT_EQ(n.GetInt("group", 1), 3);
  EXPECT_EQ(n.GetInt("missing", 7), 7);
  EXPECT_EQ(n.GetInt("pads", 7), 7);  // wrong kind: fallback
  EXPECT_FLOAT_EQ(n.GetFloat("alpha", 1.0f), 0.25f);
  EXPECT_FLOAT_EQ(n.GetFloat("group", 1.0f), 3.0f);  // ints widen to float
  EXPECT_FLOAT_EQ(n.GetFloat("missing", 1.0f), 1.0f);
  EXPECT_EQ(n.GetInts("pads"), (std::vector<int64_t>{1, 2}));
  EXPECT_TRUE(n.GetInts("missing").empty());
  EXPECT_EQ(n.GetString("auto_pad", "NOTSET"), "SAME_UPPER");
  EXPECT_EQ(n.GetString("group", "NOTSET"), "NOTSET");
}

TEST(GraphTest, FindAddAndProducers) {
  Builder b;
  b.Input("x");
  b.Node("Relu", "r1", {"x"}, {"y"});
  b.Node("Relu", "r2", {"y"}, {"z"});
  EXPECT_EQ(b.g.FindTensor("x"), 0);
  EXPECT_EQ(b.g.FindTensor("z"), 2);
  EXPECT_EQ(b.g.FindTensor("nope"), -1);
  EXPECT_EQ(b.g.Producers(), (std::vector<int>{-1, 0, 1}));
  planner::Tensor t;
  t.name = "extra";
  EXPECT_EQ(b.g.AddTensor(t), 3);
  EXPECT_EQ(b.g.tensors[3].name, "extra");
}

TEST(GraphTest, TopologicalOrderBreaksTiesByIndex) {
  Builder b;
  b.Input("x");
  // Declared out of order: n0 needs n2's output, n1 and n2 are independent.
  b.Node("Add", "n0", {"a", "c"}, {"d"});
  b.Node("Relu", "n1", {"x"}, {"c"});
  b.Node("Relu", "n2", {"x"}, {"a"});
  b.Node("Relu", "n3", {"x"}, {"e"});
  auto order = b.g.TopologicalOrder();
  ASSERT_TRUE(order.ok()) << order.error();
  EXPECT_EQ(*order, (std::vector<int>{1, 2, 0, 3}));
}

TEST(GraphTest, TopologicalOrderNamesCycle) {
  Builder b;
  b.Input("x");
  b.Node("Relu", "head", {"x"}, {"h"});
  b.Node("Add", "a", {"h", "c"}, {"a_out"});
  b.Node("Relu", "b", {"a_out"}, {"b_out"});
  b.Node("Relu", "c", {"b_out"}, {"c"});
  auto order = b.g.TopologicalOrder();
  ASSERT_FALSE(order.ok());
  EXPECT_NE(order.error().find("cycle"), std::string::npos) << order.error();
  EXPECT_NE(order.error().find("'a' -> 'b' -> 'c' -> 'a'"), std::string::npos) << order.error();
}

TEST(SupportedOpTest, KnownAndUnknown) {
  for (const char* op : {"Conv", "Gemm", "HardSwish", "GlobalMaxPool", "Shape", "Dropout", "__copy",
                         "BatchNormalization", "Unsqueeze", "Resize", "Upsample", "LSTM", "GRU"}) {
    EXPECT_TRUE(IsSupportedOp(op)) << op;
  }
  for (const char* op : {"Foo", "RNN", "conv", "", "ResizeBilinear"}) EXPECT_FALSE(IsSupportedOp(op));
}

Builder ValidGraph() {
  Builder b;
  b.Input("x");
  b.Constant("w", {1, 2, 3, 4});
  b.Node("Mul", "mul", {"x", "w"}, {"m"});
  b.Node("Relu", "relu", {"m"}, {"y"});
  b.Output("y");
  return b;
}

TEST(ValidateTest, AcceptsValidGraph) {
  Builder b = ValidGraph();
  Check c = Validate(b.g);
  EXPECT_TRUE(c.ok()) << c.error();
}

void ExpectInvalid(const Graph& g, const std::string& message) {
  Check c = Validate(g);
  ASSERT_FALSE(c.ok()) << "expected: " << message;
  EXPECT_NE(c.error().find(message), std::string::npos) << c.error();
}

TEST(ValidateTest, DuplicateNames) {
  Builder b = ValidGraph();
  b.g.tensors[1].name = "x";
  ExpectInvalid(b.g, "duplicate tensor name 'x'");
  b = ValidGraph();
  b.g.nodes[1].name = "mul";
  ExpectInvalid(b.g, "duplicate node name 'mul'");
}

TEST(ValidateTest, DanglingIndices) {
  Builder b = ValidGraph();
  b.g.nodes[0].inputs[1] = 42;
  ExpectInvalid(b.g, "node 'mul': input index 42 is out of range");
  b = ValidGraph();
  b.g.nodes[1].outputs[0] = -1;
  ExpectInvalid(b.g, "node 'relu': output index -1 is out of range");
  b = ValidGraph();
  b.g.outputs.push_back(99);
  ExpectInvalid(b.g, "graph output index 99 is out of range");
  b = ValidGraph();
  b.g.inputs.push_back(-3);
  ExpectInvalid(b.g, "graph input index -3 is out of range");
}

TEST(ValidateTest, ProducedTwice) {
  Builder b = ValidGraph();
  b.Node("Relu", "again", {"x"}, {"m"});
  ExpectInvalid(b.g, "tensor 'm' is produced by both node 'mul' and node 'again'");
}

TEST(ValidateTest, UnproducedInput) {
  Builder b;
  b.Input("x");
  b.Node("Conv", "conv1", {"x2", "x"}, {"y"});
  b.Output("y");
  ExpectInvalid(b.g, "node 'conv1' reads 'x2' which no node produces and is not a graph input");
}

TEST(ValidateTest, OutputNeverProduced) {
  Builder b = ValidGraph();
  b.Output("ghost");
  ExpectInvalid(b.g, "graph output 'ghost' is not produced by any node");
}

TEST(ValidateTest, UnsupportedOp) {
  Builder b = ValidGraph();
  b.Node("Foo", "n3", {"y"}, {"z"});
  ExpectInvalid(b.g, "unsupported ops (1 type): Foo x1 (first 'n3')");
}

TEST(ValidateTest, WritesInputOrConstant) {
  Builder b = ValidGraph();
  b.Node("Relu", "bad", {"y"}, {"x"});
  ExpectInvalid(b.g, "node 'bad' writes graph input 'x'");
  b = ValidGraph();
  b.Node("Relu", "bad", {"y"}, {"w"});
  ExpectInvalid(b.g, "node 'bad' writes constant tensor 'w'");
}

TEST(ValidateTest, ConstantDataSize) {
  Builder b = ValidGraph();
  b.g.tensors[b.g.FindTensor("w")].data.pop_back();
  ExpectInvalid(b.g, "constant 'w' has 15 bytes of data but its shape needs 16");
}

TEST(ValidateTest, Cycle) {
  Builder b;
  b.Input("x");
  b.Node("Add", "a", {"x", "c"}, {"a_out"});
  b.Node("Relu", "b", {"a_out"}, {"c"});
  b.Output("c");
  ExpectInvalid(b.g, "graph has a cycle through node");
}

TEST(ValidateTest, AbsentOptionalInputIsFine) {
  Builder b = ValidGraph();
  b.Node("Clip", "clip", {"y", "", ""}, {"z"});
  Check c = Validate(b.g);
  EXPECT_TRUE(c.ok()) << c.error();
}

}  // namespace
}  // namespace baton::planner
