#include "baton/planner/import/shapes.h"

#include <gtest/gtest.h>

#include <cstring>

// Expected shapes were worked out by hand and cross-checked with
// torch.nn.functional / numpy (see the comments next to the non-obvious ones).

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
  int Input(const std::string& name, Shape shape, DType dtype = DType::Float32) {
    int t = Declare(name, std::move(shape), dtype);
    g.inputs.push_back(t);
    return t;
  }
  int Declare(const std::string& name, Shape shape, DType dtype = DType::Float32) {
    Tensor t;
    t.name = name;
    t.dtype = dtype;
    t.shape = std::move(shape);
    t.shape_known = true;
    return g.AddTensor(t);
  }
  int ConstF(const std::string& name, Shape shape) {
    int t = Declare(name, shape, DType::Float32);
    g.tensors[t].is_constant = true;
    g.tensors[t].data.assign(g.tensors[t].bytes(), 0);
    return t;
  }
  int ConstI(const std::string& name, std::vector<int64_t> values) {
    int t = Declare(name, {static_cast<int64_t>(values.size())}, DType::Int64);
    g.tensors[t].is_constant = true;
    g.tensors[t].data.resize(values.size() * 8);
    std::memcpy(g.tensors[t].data.data(), values.data(), values.size() * 8);
    return t;
  }
  Node& Add(const std::string& op, const std::string& name, std::vector<std::string> inputs,
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
    return g.nodes.back();
  }
  int Find(const std::string& name) {
    int t = g.FindTensor(name);
    EXPECT_GE(t, 0) << name;
    return t;
  }
  const Tensor& T(const std::string& name) { return g.tensors[Find(name)]; }

  Graph g;
};

// Infers a one-node graph and returns the shape of output `out`.
Shape InferOne(Builder& b, const std::string& out = "y") {
  Check c = InferShapes(&b.g);
  EXPECT_TRUE(c.ok()) << c.error();
  if (!c.ok()) return {-999};
  EXPECT_TRUE(b.T(out).shape_known);
  return b.T(out).shape;
}

std::string InferError(Builder& b) {
  Check c = InferShapes(&b.g);
  EXPECT_FALSE(c.ok());
  return c.error();
}

#define EXPECT_ERROR(builder, text)                                     \
  do {                                                                  \
    std::string e_ = InferError(builder);                               \
    EXPECT_NE(e_.find(text), std::string::npos) << "error was: " << e_; \
  } while (0)

TEST(ShapesConvTest, PadsStridesDilationsGroups) {
  // torch: conv2d(zeros(1,8,10,12), zeros(16,2,3,5), stride=(2,3), padding=(1,2),
  //               dilation=(2,1), groups=4) -> [1,16,4,4]
  Builder b;
  b.Input("x", {1, 8, 10, 12});
  b.ConstF("w", {16, 2, 3, 5});
  b.ConstF("bias", {16});
  b.Add("Conv", "conv", {"x", "w", "bias"}, {"y"},
        {{"strides", Ints({2, 3})},
         {"pads", Ints({1, 2, 1, 2})},
         {"dilations", Ints({2, 1})},
         {"group", Int(4)}});
  EXPECT_EQ(InferOne(b), (Shape{1, 16, 4, 4}));
  EXPECT_EQ(b.T("y").dtype, DType::Float32);
}

TEST(ShapesConvTest, AutoPad) {
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER"}) {
    Builder b;
    b.Input("x", {1, 3, 7, 8});
    b.ConstF("w", {4, 3, 3, 3});
    b.Add("Conv", "conv", {"x", "w"}, {"y"}, {{"auto_pad", Str(mode)}, {"strides", Ints({2, 2})}});
    EXPECT_EQ(InferOne(b), (Shape{1, 4, 4, 4})) << mode;  // ceil(7/2), ceil(8/2)
  }
  Builder b;
  b.Input("x", {1, 3, 7, 8});
  b.ConstF("w", {4, 3, 3, 3});
  b.Add("Conv", "conv", {"x", "w"}, {"y"}, {{"auto_pad", Str("VALID")}, {"strides", Ints({2, 2})}});
  EXPECT_EQ(InferOne(b), (Shape{1, 4, 3, 3}));  // floor((7-3)/2)+1, floor((8-3)/2)+1
}

TEST(ShapesConvTest, Conv1d) {
  Builder b;
  b.Input("x", {2, 4, 20});
  b.ConstF("w", {6, 4, 5});
  b.Add("Conv", "conv", {"x", "w"}, {"y"}, {{"strides", Ints({3})}});
  EXPECT_EQ(InferOne(b), (Shape{2, 6, 6}));  // (20-5)/3+1
}

TEST(ShapesConvTest, Errors) {
  {
    Builder b;
    b.Input("x", {1, 3, 8, 8});
    b.ConstF("w", {4, 2, 3, 3});
    b.Add("Conv", "c1", {"x", "w"}, {"y"});
    EXPECT_ERROR(b, "node 'c1': input 'x' [1,3,8,8] has 3 channels but weight 'w' [4,2,3,3]");
  }
  {
    Builder b;
    b.Input("x", {1, 3, 8, 8});
    b.ConstF("w", {4, 3, 3, 3});
    b.ConstF("bias", {5});
    b.Add("Conv", "c1", {"x", "w", "bias"}, {"y"});
    EXPECT_ERROR(b, "node 'c1': bias 'bias' [5] must have shape [4]");
  }
  {
    Builder b;
    b.Input("x", {1, 3, 2, 2});
    b.ConstF("w", {4, 3, 3, 3});
    b.Add("Conv", "c1", {"x", "w"}, {"y"});
    EXPECT_ERROR(b, "node 'c1': kernel [3,3] is larger than padded input 'x' [1,3,2,2]");
  }
  {
    Builder b;
    b.Input("x", {1, 3, 8, 8}, DType::Int64);
    b.ConstF("w", {4, 3, 3, 3});
    b.Add("Conv", "c1", {"x", "w"}, {"y"});
    EXPECT_ERROR(b, "node 'c1': input 'x' must be float32, got int64");
  }
  {
    Builder b;
    b.Input("x", {1, 3, 8, 8});
    b.ConstF("w", {4, 3, 3, 3});
    b.Add("Conv", "c1", {"x", "w"}, {"y"}, {{"pads", Ints({1, 1})}});
    EXPECT_ERROR(b, "node 'c1': attribute 'pads' has 2 values, expected 4");
  }
}

TEST(ShapesPoolTest, CeilModeAndPads) {
  struct Case {
    Shape in;
    int64_t k, s, p;
    int ceil;
    Shape expected;
  } cases[] = {
      {{1, 3, 111, 111}, 3, 2, 0, 1, {1, 3, 55, 55}},  // squeezenet
      {{1, 3, 7, 7}, 3, 2, 1, 1, {1, 3, 4, 4}},
      {{1, 3, 6, 6}, 3, 2, 1, 1, {1, 3, 4, 4}},  // torch: [1,3,4,4]
      {{1, 3, 5, 5}, 2, 2, 1, 1, {1, 3, 3, 3}},  // last window dropped (torch: 3)
      {{1, 3, 5, 5}, 2, 2, 0, 1, {1, 3, 3, 3}},
      {{1, 3, 5, 5}, 2, 2, 0, 0, {1, 3, 2, 2}},
      {{1, 3, 112, 112}, 3, 2, 1, 0, {1, 3, 56, 56}},  // resnet stem
  };
  for (const Case& c : cases) {
    for (const char* op : {"MaxPool", "AveragePool"}) {
      Builder b;
      b.Input("x", c.in);
      b.Add(op, "pool", {"x"}, {"y"},
            {{"kernel_shape", Ints({c.k, c.k})},
             {"strides", Ints({c.s, c.s})},
             {"pads", Ints({c.p, c.p, c.p, c.p})},
             {"ceil_mode", Int(c.ceil)}});
      EXPECT_EQ(InferOne(b), c.expected) << op << " in=" << c.in[2] << " k=" << c.k;
    }
  }
}

TEST(ShapesPoolTest, GlobalAndErrors) {
  Builder b;
  b.Input("x", {2, 5, 7, 9});
  b.Add("GlobalAveragePool", "gap", {"x"}, {"y"});
  b.Add("GlobalMaxPool", "gmp", {"x"}, {"z"});
  EXPECT_EQ(InferOne(b), (Shape{2, 5, 1, 1}));
  EXPECT_EQ(b.T("z").shape, (Shape{2, 5, 1, 1}));

  Builder e;
  e.Input("x", {1, 3, 8, 8});
  e.Add("MaxPool", "mp", {"x"}, {"y"});
  EXPECT_ERROR(e, "node 'mp': attribute 'kernel_shape' is required");
}

TEST(ShapesGemmTest, TransposeAndBias) {
  Builder b;
  b.Input("a", {3, 5});
  b.ConstF("w", {7, 5});
  b.ConstF("c", {7});
  b.Add("Gemm", "fc", {"a", "w", "c"}, {"y"}, {{"transB", Int(1)}});
  EXPECT_EQ(InferOne(b), (Shape{3, 7}));

  Builder t;
  t.Input("a", {5, 3});
  t.ConstF("w", {5, 7});
  t.Add("Gemm", "fc", {"a", "w"}, {"y"}, {{"transA", Int(1)}});
  EXPECT_EQ(InferOne(t), (Shape{3, 7}));

  Builder e;
  e.Input("a", {3, 5});
  e.ConstF("w", {7, 5});
  e.Add("Gemm", "fc", {"a", "w"}, {"y"});
  EXPECT_ERROR(e, "node 'fc': inner dimensions of 'a' [3,5] and 'w' [7,5] differ");
}

TEST(ShapesMatMulTest, BatchBroadcastAndVectors) {
  // numpy: matmul(zeros((2,1,3,4)), zeros((5,4,6))).shape == (2,5,3,6)
  Builder b;
  b.Input("a", {2, 1, 3, 4});
  b.Input("w", {5, 4, 6});
  b.Add("MatMul", "mm", {"a", "w"}, {"y"});
  EXPECT_EQ(InferOne(b), (Shape{2, 5, 3, 6}));

  // numpy: matmul(zeros(4), zeros((2,4,6))).shape == (2,6)
  Builder v;
  v.Input("a", {4});
  v.Input("w", {2, 4, 6});
  v.Add("MatMul", "mm", {"a", "w"}, {"y"});
  EXPECT_EQ(InferOne(v), (Shape{2, 6}));

  Builder e;
  e.Input("a", {2, 3, 4});
  e.Input("w", {3, 4, 6});
  e.Add("MatMul", "mm", {"a", "w"}, {"y"});
  EXPECT_ERROR(e, "batch dimensions of 'a' [2,3,4] and 'w' [3,4,6] are not broadcastable");
}

TEST(ShapesElementwiseTest, Broadcast) {
  Builder b;
  b.Input("a", {1, 3, 8, 8});
  b.Input("c", {3, 1, 1});
  b.Add("Mul", "mul", {"a", "c"}, {"y"});
  EXPECT_EQ(InferOne(b), (Shape{1, 3, 8, 8}));

  Builder s;
  s.Input("a", {4, 1});
  s.Input("c", {1, 5});
  s.Add("Sub", "sub", {"a", "c"}, {"y"});
  EXPECT_EQ(InferOne(s), (Shape{4, 5}));

  Builder e;
  e.Input("a", {1, 3, 8, 8});
  e.Input("b", {1, 4, 8, 8});
  e.Add("Add", "add1", {"a", "b"}, {"y"});
  EXPECT_ERROR(e,
               "node 'add1': shapes [1,3,8,8] and [1,4,8,8] of 'a' and 'b' are not broadcastable");

  Builder d;
  d.Input("a", {2}, DType::Int64);
  d.Input("b", {2});
  d.Add("Div", "div", {"a", "b"}, {"y"});
  EXPECT_ERROR(d, "node 'div': dtypes int64 and float32 of 'a' and 'b' differ");
}

TEST(ShapesUnaryTest, ActivationsKeepShape) {
  for (const char* op : {"Relu", "LeakyRelu", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish",
                         "Softmax", "Identity", "Dropout", "Clip"}) {
    Builder b;
    b.Input("x", {2, 3, 4});
    b.Add(op, "act", {"x"}, {"y"});
    EXPECT_EQ(InferOne(b), (Shape{2, 3, 4})) << op;
  }
  Builder c;
  c.Input("x", {2, 3});
  c.ConstF("lo", {});
  c.ConstF("hi", {2});
  c.Add("Clip", "clip", {"x", "lo", "hi"}, {"y"});
  EXPECT_ERROR(c, "node 'clip': bound 'hi' [2] must be a scalar");

  Builder s;
  s.Input("x", {2, 3});
  s.Add("Softmax", "sm", {"x"}, {"y"}, {{"axis", Int(2)}});
  EXPECT_ERROR(s, "node 'sm': axis 2 is out of range for rank 2");
}

TEST(ShapesReduceTest, AxesAttrAndInput) {
  Builder b;
  b.Input("x", {2, 3, 4, 5});
  b.Add("ReduceMean", "rm", {"x"}, {"y"}, {{"axes", Ints({-1, 2})}});
  EXPECT_EQ(InferOne(b), (Shape{2, 3, 1, 1}));

  Builder k;
  k.Input("x", {2, 3, 4, 5});
  k.ConstI("axes", {1});
  k.Add("ReduceMean", "rm", {"x", "axes"}, {"y"}, {{"keepdims", Int(0)}});
  EXPECT_EQ(InferOne(k), (Shape{2, 4, 5}));

  Builder a;
  a.Input("x", {2, 3});
  a.Add("ReduceMean", "rm", {"x"}, {"y"}, {{"keepdims", Int(0)}});
  EXPECT_EQ(InferOne(a), (Shape{}));
}

// Issue 14's ops: shapes, dtypes and the errors for what is not supported.
TEST(ShapesOps14Test, ShapesAndErrors) {
  Builder r;  // ReduceMax keeps int64 (shape arithmetic), negative axes
  r.Input("x", {2, 3, 4}, DType::Int64);
  r.Add("ReduceMax", "rm", {"x"}, {"y"}, {{"axes", Ints({-1})}, {"keepdims", Int(0)}});
  EXPECT_EQ(InferOne(r), (Shape{2, 3}));
  EXPECT_EQ(r.T("y").dtype, DType::Int64);

  Builder rs;  // ReduceSum axes input (opset 13), repeated axis
  rs.Input("x", {2, 3, 4});
  rs.ConstI("axes", {1, -2});
  rs.Add("ReduceSum", "rs", {"x", "axes"}, {"y"});
  EXPECT_ERROR(rs, "node 'rs': axis -2 is repeated");

  Builder am;
  am.Input("x", {2, 3, 4});
  am.Add("ArgMax", "am", {"x"}, {"y"}, {{"axis", Int(-2)}, {"keepdims", Int(0)}});
  EXPECT_EQ(InferOne(am), (Shape{2, 4}));
  EXPECT_EQ(am.T("y").dtype, DType::Int64);
  Builder last;
  last.Input("x", {2, 3});
  last.Add("ArgMin", "am", {"x"}, {"y"}, {{"select_last_index", Int(1)}});
  EXPECT_ERROR(last, "node 'am': select_last_index=1 is not supported");

  Builder tk;
  tk.Input("x", {2, 7});
  tk.ConstI("k", {3});
  tk.Add("TopK", "tk", {"x", "k"}, {"v", "i"});
  EXPECT_EQ(InferOne(tk, "v"), (Shape{2, 3}));
  EXPECT_EQ(tk.T("i").dtype, DType::Int64);
  Builder dyn;
  dyn.Input("x", {2, 7});
  dyn.Input("k", {1}, DType::Int64);
  dyn.Add("TopK", "tk", {"x", "k"}, {"v", "i"});
  EXPECT_ERROR(dyn, "node 'tk': k 'k' is not a constant (only a constant k is supported)");
  Builder big;
  big.Input("x", {2, 7});
  big.ConstI("k", {8});
  big.Add("TopK", "tk", {"x", "k"}, {"v", "i"});
  EXPECT_ERROR(big, "node 'tk': k = 8 is outside [0, 7] for 'x' [2,7]");

  Builder pw;  // int64 exponent must be a scalar
  pw.Input("x", {2, 3});
  pw.ConstI("e", {2, 2, 2});
  pw.Add("Pow", "pow", {"x", "e"}, {"y"});
  EXPECT_ERROR(pw, "node 'pow': exponent 'e' [3] must be float32, or an int32/int64 scalar (is int64)");

  Builder pr;  // the slope broadcasts to x, not the other way
  pr.Input("x", {2, 3});
  pr.ConstF("s", {4, 2, 3});
  pr.Add("PRelu", "pr", {"x", "s"}, {"y"});
  EXPECT_ERROR(pr, "node 'pr': slope 's' [4,2,3] does not broadcast to 'x' [2,3]");

  Builder mx;  // variadic Max beyond two inputs is rejected clearly
  mx.Input("a", {2});
  mx.Input("b", {2});
  mx.Input("c", {2});
  mx.Add("Max", "max", {"a", "b", "c"}, {"y"});
  EXPECT_ERROR(mx, "node 'max': Max has 3 inputs, expected 2");

  Builder tl;
  tl.Input("x", {2, 3});
  tl.ConstI("reps", {3, 2});
  tl.Add("Tile", "tile", {"x", "reps"}, {"y"});
  EXPECT_EQ(InferOne(tl), (Shape{6, 6}));

  Builder gl;
  gl.Input("x", {2});
  gl.Add("Gelu", "gelu", {"x"}, {"y"}, {{"approximate", Str("tanh")}});
  EXPECT_ERROR(gl, "node 'gelu': Gelu approximate='tanh' is not supported (only 'none', the erf form)");
}

TEST(ShapesBatchNormTest, ChecksParams) {
  Builder b;
  b.Input("x", {1, 4, 5, 5});
  for (const char* p : {"s", "bb", "m", "v"}) b.ConstF(p, {4});
  b.Add("BatchNormalization", "bn", {"x", "s", "bb", "m", "v"}, {"y"});
  EXPECT_EQ(InferOne(b), (Shape{1, 4, 5, 5}));

  Builder e;
  e.Input("x", {1, 4, 5, 5});
  for (const char* p : {"s", "bb", "m"}) e.ConstF(p, {4});
  e.ConstF("v", {3});
  e.Add("BatchNormalization", "bn", {"x", "s", "bb", "m", "v"}, {"y"});
  EXPECT_ERROR(e, "node 'bn': parameter 'v' [3] must have shape [4]");
}

TEST(ShapesConcatSplitTest, ConcatAndSplitForms) {
  Builder b;
  b.Input("a", {1, 2, 4});
  b.Input("c", {1, 3, 4});
  b.Add("Concat", "cat", {"a", "c"}, {"y"}, {{"axis", Int(-2)}});
  EXPECT_EQ(InferOne(b), (Shape{1, 5, 4}));

  Builder e;
  e.Input("a", {1, 2, 4});
  e.Input("c", {1, 3, 5});
  e.Add("Concat", "cat", {"a", "c"}, {"y"}, {{"axis", Int(1)}});
  EXPECT_ERROR(e, "node 'cat': cannot concatenate 'a' [1,2,4] and 'c' [1,3,5] on axis 1");

  Builder eq;  // equal split
  eq.Input("x", {1, 6, 2});
  eq.Add("Split", "sp", {"x"}, {"p", "q", "r"}, {{"axis", Int(1)}});
  EXPECT_EQ(InferOne(eq, "p"), (Shape{1, 2, 2}));
  EXPECT_EQ(eq.T("r").shape, (Shape{1, 2, 2}));

  Builder at;  // opset < 13 attribute
  at.Input("x", {1, 6, 2});
  at.Add("Split", "sp", {"x"}, {"p", "q"}, {{"axis", Int(1)}, {"split", Ints({2, 4})}});
  EXPECT_EQ(InferOne(at, "q"), (Shape{1, 4, 2}));

  Builder in;  // opset >= 13 input
  in.Input("x", {1, 6, 2});
  in.ConstI("split", {5, 1});
  in.Add("Split", "sp", {"x", "split"}, {"p", "q"}, {{"axis", Int(1)}});
  EXPECT_EQ(InferOne(in, "p"), (Shape{1, 5, 2}));

  Builder bad;
  bad.Input("x", {1, 6, 2});
  bad.ConstI("split", {5, 2});
  bad.Add("Split", "sp", {"x", "split"}, {"p", "q"}, {{"axis", Int(1)}});
  EXPECT_ERROR(bad, "node 'sp': split sizes [5,2] do not add up to dim 6 of 'x' [1,6,2]");
}

TEST(ShapesSliceTest, InputsAndAttrs) {
  // numpy: zeros((10,20,30))[2:-1:3, ::-2, -100:5].shape == (3,10,5)
  Builder b;
  b.Input("x", {10, 20, 30});
  b.ConstI("starts", {2, -1, -100});
  b.ConstI("ends", {-1, INT64_MIN, 5});
  b.ConstI("axes", {0, 1, 2});
  b.ConstI("steps", {3, -2, 1});
  b.Add("Slice", "sl", {"x", "starts", "ends", "axes", "steps"}, {"y"});
  EXPECT_EQ(InferOne(b), (Shape{3, 10, 5}));

  Builder open;  // the "to the end" idiom with INT64_MAX, negative axis
  open.Input("x", {1, 8, 4});
  open.ConstI("starts", {3});
  open.ConstI("ends", {INT64_MAX});
  open.ConstI("axes", {-2});
  open.Add("Slice", "sl", {"x", "starts", "ends", "axes"}, {"y"});
  EXPECT_EQ(InferOne(open), (Shape{1, 5, 4}));

  Builder old;  // opset < 10
  old.Input("x", {4, 6});
  old.Add("Slice", "sl", {"x"}, {"y"},
          {{"starts", Ints({1})}, {"ends", Ints({3})}, {"axes", Ints({1})}});
  EXPECT_EQ(InferOne(old), (Shape{4, 2}));

  Builder dyn;
  dyn.Input("x", {4, 6});
  dyn.Input("s", {1}, DType::Int64);
  dyn.ConstI("e", {3});
  dyn.Add("Slice", "sl", {"x", "s", "e"}, {"y"});
  EXPECT_ERROR(dyn,
               "node 'sl': starts input 's' is not a constant (dynamic shapes are not supported)");
}

TEST(ShapesPadTest, InputAndAttr) {
  Builder b;
  b.Input("x", {1, 3, 4, 4});
  b.ConstI("pads", {0, 0, 1, 2, 0, 0, 3, 4});
  b.Add("Pad", "pad", {"x", "pads"}, {"y"});
  EXPECT_EQ(InferOne(b), (Shape{1, 3, 8, 10}));

  Builder a;
  a.Input("x", {1, 3, 4, 4});
  a.Add("Pad", "pad", {"x"}, {"y"},
        {{"pads", Ints({0, 0, -1, 0, 0, 0, 0, 2})}, {"mode", Str("reflect")}});
  EXPECT_EQ(InferOne(a), (Shape{1, 3, 3, 6}));

  Builder e;
  e.Input("x", {1, 3, 4, 4});
  e.ConstI("pads", {1, 1});
  e.Add("Pad", "pad", {"x", "pads"}, {"y"});
  EXPECT_ERROR(e, "node 'pad': pads has 2 values, expected 8");
}

TEST(ShapesTransposeTest, PermAndDefault) {
  Builder b;
  b.Input("x", {1, 2, 3, 4});
  b.Add("Transpose", "t", {"x"}, {"y"}, {{"perm", Ints({0, 2, 1, 3})}});
  b.Add("Transpose", "rev", {"x"}, {"z"});
  EXPECT_EQ(InferOne(b), (Shape{1, 3, 2, 4}));
  EXPECT_EQ(b.T("z").shape, (Shape{4, 3, 2, 1}));

  Builder e;
  e.Input("x", {1, 2, 3});
  e.Add("Transpose", "t", {"x"}, {"y"}, {{"perm", Ints({0, 0, 1})}});
  EXPECT_ERROR(e, "node 't': perm [0,0,1] is not a permutation for 'x' [1,2,3]");
}

TEST(ShapesReshapeTest, ZeroAndMinusOne) {
  Builder b;
  b.Input("x", {2, 3, 4});
  b.ConstI("s", {0, -1});
  b.Add("Reshape", "r", {"x", "s"}, {"y"});
  EXPECT_EQ(InferOne(b), (Shape{2, 12}));

  Builder e;
  e.Input("x", {2, 3, 4});
  e.ConstI("s", {5, -1});
  e.Add("Reshape", "r", {"x", "s"}, {"y"});
  EXPECT_ERROR(e, "node 'r': cannot reshape 'x' [2,3,4] to [5,-1]");

  Builder d;
  d.Input("x", {2, 3, 4});
  d.Input("s", {2}, DType::Int64);
  d.Add("Reshape", "r", {"x", "s"}, {"y"});
  EXPECT_ERROR(d, "node 'r': shape input 's' is not a constant (dynamic shapes are not supported)");
}

TEST(ShapesReshapeTest, ShapeChainIsPropagated) {
  // Shape -> Gather -> Unsqueeze -> Concat -> Reshape, as torch exports
  // x.view(x.size(0), -1) without constant folding.
  Builder b;
  b.Input("x", {2, 3, 4, 5});
  b.Add("Shape", "shape", {"x"}, {"sh"});
  b.ConstI("zero", {0});
  b.g.tensors[b.Find("zero")].shape = {};  // scalar index
  b.Add("Gather", "gather", {"sh", "zero"}, {"n"}, {{"axis", Int(0)}});
  b.Add("Unsqueeze", "unsq", {"n"}, {"n1"}, {{"axes", Ints({0})}});
  b.ConstI("minus1", {-1});
  b.Add("Concat", "cat", {"n1", "minus1"}, {"s"}, {{"axis", Int(0)}});
  b.Add("Reshape", "reshape", {"x", "s"}, {"y"});
  EXPECT_EQ(InferOne(b), (Shape{2, 60}));
  EXPECT_EQ(b.T("sh").shape, (Shape{4}));
  EXPECT_EQ(b.T("sh").dtype, DType::Int64);
  EXPECT_EQ(b.T("n").shape, (Shape{}));
  // Propagated values do not turn tensors into constants.
  EXPECT_FALSE(b.T("s").is_constant);
}

TEST(ShapesFlattenSqueezeTest, Forms) {
  Builder f;
  f.Input("x", {2, 3, 4, 5});
  f.Add("Flatten", "f", {"x"}, {"y"});
  f.Add("Flatten", "f0", {"x"}, {"z"}, {{"axis", Int(0)}});
  f.Add("Flatten", "fm", {"x"}, {"w"}, {{"axis", Int(-1)}});
  EXPECT_EQ(InferOne(f), (Shape{2, 60}));
  EXPECT_EQ(f.T("z").shape, (Shape{1, 120}));
  EXPECT_EQ(f.T("w").shape, (Shape{24, 5}));

  Builder s;
  s.Input("x", {1, 3, 1, 5});
  s.Add("Squeeze", "all", {"x"}, {"y"});
  s.ConstI("axes", {-2});
  s.Add("Squeeze", "one", {"x", "axes"}, {"z"});
  s.Add("Unsqueeze", "u", {"x"}, {"u_out"}, {{"axes", Ints({0, -1})}});
  EXPECT_EQ(InferOne(s), (Shape{3, 5}));
  EXPECT_EQ(s.T("z").shape, (Shape{1, 3, 5}));
  EXPECT_EQ(s.T("u_out").shape, (Shape{1, 1, 3, 1, 5, 1}));

  Builder e;
  e.Input("x", {1, 3});
  e.Add("Squeeze", "sq", {"x"}, {"y"}, {{"axes", Ints({1})}});
  EXPECT_ERROR(e, "node 'sq': cannot squeeze axis 1 of 'x' [1,3]: its size is not 1");
}

TEST(ShapesGatherTest, AxisAndRange) {
  Builder b;
  b.Input("x", {4, 5, 6});
  b.Input("i", {2, 3}, DType::Int64);
  b.Add("Gather", "g", {"x", "i"}, {"y"}, {{"axis", Int(1)}});
  EXPECT_EQ(InferOne(b), (Shape{4, 2, 3, 6}));

  Builder e;
  e.Input("x", {4, 5});
  e.ConstI("i", {5});
  e.Add("Gather", "g", {"x", "i"}, {"y"}, {{"axis", Int(1)}});
  EXPECT_ERROR(e, "node 'g': index 5 in 'i' is out of range for axis 1 of 'x' [4,5]");
}

TEST(ShapesConstantTest, ValueAttrsBecomeConstants) {
  Builder b;
  b.Add("Constant", "c", {}, {"y"}, {{"value_ints", Ints({1, -1})}});
  b.Add("Constant", "f", {}, {"z"}, {{"value_float", Float(2.5f)}});
  EXPECT_EQ(InferOne(b), (Shape{2}));
  EXPECT_TRUE(b.T("y").is_constant);
  EXPECT_EQ(b.T("y").dtype, DType::Int64);
  EXPECT_EQ(b.T("y").IntData(), (std::vector<int64_t>{1, -1}));
  EXPECT_EQ(b.T("z").shape, (Shape{}));
  EXPECT_EQ(b.T("z").FloatData(), (std::vector<float>{2.5f}));
}

TEST(ShapesTest, DeclaredShapeMustAgree) {
  Builder b;
  b.Input("x", {1, 3, 8, 8});
  b.Declare("y", {1, 3, 8, 9});
  b.Add("Relu", "relu", {"x"}, {"y"});
  EXPECT_ERROR(
      b, "node 'relu': inferred float32 [1,3,8,8] for 'y' but it is declared float32 [1,3,8,9]");
}

TEST(ShapesTest, ArityAndInputShapes) {
  Builder b;
  b.Input("x", {1, 3});
  b.Add("Relu", "relu", {"x", "x"}, {"y"});
  EXPECT_ERROR(b, "node 'relu': Relu has 2 inputs, expected 1");

  Builder m;
  Tensor x;
  x.name = "x";
  m.g.inputs.push_back(m.g.AddTensor(x));
  m.Add("Relu", "relu", {"x"}, {"y"});
  EXPECT_ERROR(m, "graph input 'x' has no shape");
}

TEST(ShapesTest, IdempotentOnRerun) {
  Builder b;
  b.Input("x", {1, 3, 8, 8});
  b.ConstF("w", {4, 3, 3, 3});
  b.Add("Conv", "conv", {"x", "w"}, {"c"}, {{"pads", Ints({1, 1, 1, 1})}});
  b.Add("Relu", "relu", {"c"}, {"y"});
  EXPECT_EQ(InferOne(b), (Shape{1, 4, 8, 8}));
  EXPECT_EQ(InferOne(b), (Shape{1, 4, 8, 8}));
}

}  // namespace
}  // namespace baton::planner
