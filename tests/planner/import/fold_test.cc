// The general constant folder (FoldConstants, CheckFoldOnlyOps) over the
// shape-arithmetic ops: expected values are computed by hand in the comments.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "baton/planner/import/shapes.h"
#include "baton/planner/import/simplify.h"

namespace baton::planner {
namespace {

using Shape = std::vector<int64_t>;

Attr IntAttr(int64_t v) {
  Attr a;
  a.kind = Attr::Kind::kInt;
  a.i = v;
  return a;
}
Attr FloatAttr(float v) {
  Attr a;
  a.kind = Attr::Kind::kFloat;
  a.f = v;
  return a;
}
Attr IntsAttr(Shape v) {
  Attr a;
  a.kind = Attr::Kind::kInts;
  a.ints = std::move(v);
  return a;
}
Attr StrAttr(std::string v) {
  Attr a;
  a.kind = Attr::Kind::kString;
  a.s = std::move(v);
  return a;
}

class G {
 public:
  int Input(const std::string& name, Shape shape, DType dtype = DType::Float32) {
    Tensor t;
    t.name = name;
    t.dtype = dtype;
    t.shape = std::move(shape);
    t.shape_known = true;
    const int i = g.AddTensor(t);
    g.inputs.push_back(i);
    return i;
  }
  template <typename T>
  int Const(const std::string& name, DType dtype, Shape shape, std::vector<T> values) {
    Tensor t;
    t.name = name;
    t.dtype = dtype;
    t.shape = std::move(shape);
    t.shape_known = true;
    t.is_constant = true;
    t.data.resize(values.size() * sizeof(T));
    std::memcpy(t.data.data(), values.data(), t.data.size());
    return g.AddTensor(t);
  }
  int I64(const std::string& name, Shape shape, std::vector<int64_t> v) {
    return Const(name, DType::Int64, std::move(shape), std::move(v));
  }
  int F32(const std::string& name, Shape shape, std::vector<float> v) {
    return Const(name, DType::Float32, std::move(shape), std::move(v));
  }
  void Add(const std::string& op, const std::string& name, std::vector<std::string> inputs,
           std::vector<std::string> outputs, std::map<std::string, Attr> attrs = {}) {
    Node node;
    node.op = op;
    node.name = name;
    node.attrs = std::move(attrs);
    for (const auto& i : inputs) node.inputs.push_back(g.FindTensor(i));
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
  void Output(const std::string& name) { g.outputs.push_back(g.FindTensor(name)); }
  const Tensor& T(const std::string& name) const { return g.tensors[g.FindTensor(name)]; }
  std::string Ops() const {
    std::string s;
    for (const Node& n : g.nodes) s += (s.empty() ? "" : " ") + n.op;
    return s;
  }
  template <typename V>
  std::vector<V> Data(const std::string& name) const {
    const Tensor& t = T(name);
    std::vector<V> out(t.data.size() / sizeof(V));
    std::memcpy(out.data(), t.data.data(), t.data.size());
    return out;
  }

  Graph g;
};

void ExpectOk(const Check& c) { ASSERT_TRUE(c.ok()) << c.error(); }

TEST(FoldTest, WhereOnShapesFeedsReshape) {
  // torch's view(-1, 3) pattern: where(shape == 2, -1, shape).
  // shape(x) = [2, 3]; == [2, 7] -> [1, 0]; where -> [-1, 3]; Reshape -> [2, 3].
  G b;
  b.Input("x", {2, 3});
  b.Add("Shape", "shape", {"x"}, {"sh"});
  b.I64("probe", {2}, {2, 7});
  b.I64("minus1", {}, {-1});
  b.Add("Equal", "eq", {"sh", "probe"}, {"mask"});
  b.Add("Not", "not", {"mask"}, {"nmask"});
  b.Add("And", "and", {"mask", "nmask"}, {"none"});
  b.Add("Where", "where", {"mask", "minus1", "sh"}, {"target"});
  b.Add("Reshape", "reshape", {"x", "target"}, {"y"});
  b.Output("y");
  ExpectOk(Simplify(&b.g));
  EXPECT_EQ(b.Ops(), "Reshape");
  EXPECT_EQ(b.T("target").IntData(), (Shape{-1, 3}));
  EXPECT_EQ(b.T("y").shape, (Shape{2, 3}));
}

TEST(FoldTest, BoolValues) {
  // Evaluated outside Simplify so the dead bool tensors survive for checking.
  G b;
  b.Input("x", {2});
  b.Add("Shape", "shape", {"x"}, {"sh"});  // [2]
  b.I64("probe", {3}, {1, 2, 3});
  b.Add("Equal", "eq", {"sh", "probe"}, {"eq_out"});        // [0, 1, 0]
  b.Add("Greater", "gt", {"probe", "sh"}, {"gt_out"});      // [0, 0, 1]
  b.Add("Less", "lt", {"probe", "sh"}, {"lt_out"});         // [1, 0, 0]
  b.Add("Not", "not", {"gt_out"}, {"not_out"});             // [1, 1, 0]
  b.Add("And", "and", {"not_out", "eq_out"}, {"and_out"});  // [0, 1, 0]
  b.Add("Relu", "r", {"x"}, {"y"});
  b.Output("y");
  ExpectOk(InferShapes(&b.g));
  ExpectOk(FoldConstants(&b.g));
  EXPECT_EQ(b.Ops(), "Relu");
  EXPECT_EQ(b.T("eq_out").dtype, DType::Bool);
  EXPECT_EQ(b.Data<uint8_t>("eq_out"), (std::vector<uint8_t>{0, 1, 0}));
  EXPECT_EQ(b.Data<uint8_t>("gt_out"), (std::vector<uint8_t>{0, 0, 1}));
  EXPECT_EQ(b.Data<uint8_t>("lt_out"), (std::vector<uint8_t>{1, 0, 0}));
  EXPECT_EQ(b.Data<uint8_t>("not_out"), (std::vector<uint8_t>{1, 1, 0}));
  EXPECT_EQ(b.Data<uint8_t>("and_out"), (std::vector<uint8_t>{0, 1, 0}));
}

TEST(FoldTest, RangeConstantOfShapeExpandWhereFloat) {
  G b;
  b.Input("x", {2, 3});
  b.I64("r0", {}, {0});
  b.I64("r5", {}, {5});
  b.I64("r2", {}, {2});
  b.Add("Range", "range_i", {"r0", "r5", "r2"}, {"ri"});  // [0, 2, 4]
  b.I64("s5", {}, {5});
  b.I64("s0", {}, {0});
  b.I64("sm2", {}, {-2});
  b.Add("Range", "range_down", {"s5", "s0", "sm2"}, {"rd"});  // [5, 3, 1]
  b.F32("f1", {}, {1.0f});
  b.F32("f2", {}, {2.0f});
  b.F32("fq", {}, {0.25f});
  b.Add("Range", "range_f", {"f1", "f2", "fq"}, {"rf"});  // [1, 1.25, 1.5, 1.75]
  b.Add("Shape", "shape", {"x"}, {"sh"});                 // [2, 3]
  b.Add("ConstantOfShape", "cos", {"sh"}, {"half"}, {{"value", FloatAttr(0.5f)}});
  b.Add("ConstantOfShape", "cos_bool", {"sh"}, {"ones_b"},
        {{"value", IntAttr(1)}, {"value_dtype", StrAttr("bool")}});
  b.Add("ConstantOfShape", "cos_default", {"sh"}, {"zeros"});
  b.F32("row", {1, 3}, {1, 2, 3});
  b.Add("Expand", "expand", {"row", "sh"}, {"rows"});            // [[1,2,3],[1,2,3]]
  b.Add("Cast", "cast", {"ri"}, {"rif"}, {{"to", IntAttr(1)}});  // float [0, 2, 4]
  b.F32("thr", {}, {1.5f});
  b.Add("Greater", "gt", {"rows", "thr"}, {"big"});           // [[0,1,1],[0,1,1]]
  b.Add("Where", "where", {"big", "rows", "half"}, {"sel"});  // [[.5,2,3],[.5,2,3]]
  b.Add("Add", "add", {"x", "sel"}, {"y"});
  b.Output("y");
  ExpectOk(InferShapes(&b.g));
  ExpectOk(FoldConstants(&b.g));
  EXPECT_EQ(b.Ops(), "Add");
  EXPECT_EQ(b.T("ri").IntData(), (Shape{0, 2, 4}));
  EXPECT_EQ(b.T("rd").IntData(), (Shape{5, 3, 1}));
  EXPECT_EQ(b.T("rf").FloatData(), (std::vector<float>{1, 1.25f, 1.5f, 1.75f}));
  EXPECT_EQ(b.T("half").FloatData(), (std::vector<float>(6, 0.5f)));
  EXPECT_EQ(b.T("ones_b").dtype, DType::Bool);
  EXPECT_EQ(b.Data<uint8_t>("ones_b"), (std::vector<uint8_t>(6, 1)));
  EXPECT_EQ(b.T("zeros").dtype, DType::Float32);
  EXPECT_EQ(b.T("zeros").FloatData(), (std::vector<float>(6, 0.0f)));
  EXPECT_EQ(b.T("rows").FloatData(), (std::vector<float>{1, 2, 3, 1, 2, 3}));
  EXPECT_EQ(b.T("rif").FloatData(), (std::vector<float>{0, 2, 4}));
  EXPECT_EQ(b.T("sel").FloatData(), (std::vector<float>{0.5f, 2, 3, 0.5f, 2, 3}));
}

TEST(FoldTest, CastCeilFloorReduceProd) {
  constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
  G b;
  b.Input("x", {1});
  b.F32("f", {5}, {3.9f, -3.9f, 1e10f, kNan, -1.5f});
  b.Add("Cast", "to_i32", {"f"}, {"fi"}, {{"to", IntAttr(6)}});   // [3, -3, INT32_MAX, 0, -1]
  b.Add("Cast", "to_u8", {"f"}, {"fu"}, {{"to", IntAttr(2)}});    // [3, 0, 255, 0, 0]
  b.Add("Cast", "to_bool", {"f"}, {"fb"}, {{"to", IntAttr(9)}});  // [1, 1, 1, 1, 1]
  b.I64("w", {3}, {0, 300, -1});
  b.Add("Cast", "wrap", {"w"}, {"wu"}, {{"to", IntAttr(2)}});    // [0, 44, 255]
  b.Add("Cast", "w_bool", {"w"}, {"wb"}, {{"to", IntAttr(9)}});  // [0, 1, 1]
  b.F32("g", {3}, {-1.5f, 2.2f, 3.0f});
  b.Add("Ceil", "ceil", {"g"}, {"gc"});    // [-1, 3, 3]
  b.Add("Floor", "floor", {"g"}, {"gf"});  // [-2, 2, 3]
  b.I64("m", {2, 3}, {1, 2, 3, 4, 5, 6});
  b.Add("ReduceProd", "prod_all", {"m"}, {"p_all"}, {{"keepdims", IntAttr(0)}});   // 720
  b.Add("ReduceProd", "prod_rows", {"m"}, {"p_rows"}, {{"axes", IntsAttr({1})}});  // [[6],[120]]
  b.Add("ReduceProd", "prod_cols", {"m"}, {"p_cols"},
        {{"axes", IntsAttr({-2})}, {"keepdims", IntAttr(0)}});  // [4, 10, 18]
  b.Add("Relu", "r", {"x"}, {"y"});
  b.Output("y");
  ExpectOk(InferShapes(&b.g));
  ExpectOk(FoldConstants(&b.g));
  EXPECT_EQ(b.Ops(), "Relu");
  EXPECT_EQ(b.Data<int32_t>("fi"), (std::vector<int32_t>{3, -3, 2147483647, 0, -1}));
  EXPECT_EQ(b.Data<uint8_t>("fu"), (std::vector<uint8_t>{3, 0, 255, 0, 0}));
  EXPECT_EQ(b.Data<uint8_t>("fb"), (std::vector<uint8_t>{1, 1, 1, 1, 1}));
  EXPECT_EQ(b.Data<uint8_t>("wu"), (std::vector<uint8_t>{0, 44, 255}));
  EXPECT_EQ(b.Data<uint8_t>("wb"), (std::vector<uint8_t>{0, 1, 1}));
  EXPECT_EQ(b.T("gc").FloatData(), (std::vector<float>{-1, 3, 3}));
  EXPECT_EQ(b.T("gf").FloatData(), (std::vector<float>{-2, 2, 3}));
  EXPECT_EQ(b.T("p_all").shape, Shape{});
  EXPECT_EQ(b.T("p_all").IntData(), (Shape{720}));
  EXPECT_EQ(b.T("p_rows").shape, (Shape{2, 1}));
  EXPECT_EQ(b.T("p_rows").IntData(), (Shape{6, 120}));
  EXPECT_EQ(b.T("p_cols").IntData(), (Shape{4, 10, 18}));
}

TEST(FoldTest, BoolGatherSliceConcatUnsqueeze) {
  // Data movement is dtype-generic: a bool mask [1,0,1] -> gather [2,0] -> [1,1],
  // unsqueeze -> [1,2], concat with itself on axis 0 -> [[1,1],[1,1]].
  G b;
  b.Input("x", {1});
  b.Const<uint8_t>("mask", DType::Bool, {3}, {1, 0, 1});
  b.I64("idx", {2}, {2, 0});
  b.Add("Gather", "gather", {"mask", "idx"}, {"gm"});
  b.I64("ax", {1}, {0});
  b.Add("Unsqueeze", "unsq", {"gm", "ax"}, {"um"});
  b.Add("Concat", "cat", {"um", "um"}, {"cm"}, {{"axis", IntAttr(0)}});
  b.I64("st", {1}, {1});
  b.I64("en", {1}, {3});
  b.Add("Slice", "slice", {"mask", "st", "en"}, {"sm"});  // [0, 1]
  b.Add("Relu", "r", {"x"}, {"y"});
  b.Output("y");
  ExpectOk(InferShapes(&b.g));
  ExpectOk(FoldConstants(&b.g));
  EXPECT_EQ(b.Ops(), "Relu");
  EXPECT_EQ(b.T("cm").dtype, DType::Bool);
  EXPECT_EQ(b.T("cm").shape, (Shape{2, 2}));
  EXPECT_EQ(b.Data<uint8_t>("cm"), (std::vector<uint8_t>{1, 1, 1, 1}));
  EXPECT_EQ(b.Data<uint8_t>("sm"), (std::vector<uint8_t>{0, 1}));
}

TEST(FoldTest, RuntimeOpsStayWhenAnInputIsNotConstant) {
  G b;
  b.Input("x", {2, 3});
  b.F32("zero", {}, {0.0f});
  b.Add("Greater", "gt", {"x", "zero"}, {"pos"});
  b.Add("Where", "where", {"pos", "x", "zero"}, {"relu"});
  b.Add("Cast", "cast", {"pos"}, {"posf"}, {{"to", IntAttr(1)}});
  b.Add("Add", "add", {"relu", "posf"}, {"y"});
  b.Output("y");
  ExpectOk(Simplify(&b.g));
  EXPECT_EQ(b.Ops(), "Greater Where Cast Add");
  EXPECT_EQ(b.T("pos").dtype, DType::Bool);
}

TEST(FoldTest, FoldOnlyOpsWithDynamicInputsAreNamed) {
  {
    G b;
    b.Input("s", {2}, DType::Int64);
    b.Add("ConstantOfShape", "cos", {"s"}, {"y"});
    b.Output("y");
    Check c = Simplify(&b.g);
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.error(),
              "node 'cos': its input 's' is not constant; Baton folds ConstantOfShape only at "
              "plan time");
  }
  {
    G b;
    b.Input("x", {3});
    b.Add("Floor", "floor", {"x"}, {"f"});
    b.Add("Ceil", "ceil", {"f"}, {"c"});
    b.Add("Ceil", "ceil2", {"c"}, {"y"});
    b.Output("y");
    Check c = Simplify(&b.g);
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.error(),
              "2 ops cannot run: node 'ceil': its input 'f' is not constant; Baton folds Ceil "
              "only at plan time; node 'floor': its input 'x' is not constant; Baton folds Floor "
              "only at plan time");
  }
}

TEST(FoldTest, SizeBound) {
  // 2^20 x 17 float32 = 71,303,168 bytes > 64 MiB: a fold-only op fails...
  {
    G b;
    b.Input("x", {1});
    b.I64("big", {2}, {1 << 20, 17});
    b.Add("ConstantOfShape", "huge", {"big"}, {"h"});
    b.Add("Relu", "r", {"x"}, {"y"});
    b.Output("y");
    Check c = Simplify(&b.g);
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.error(),
              "node 'huge': folding ConstantOfShape would make 'h' float32 [1048576,17] of "
              "71303168 bytes, over the folding limit of 67108864 bytes (64 MiB)");
  }
  // ... an op with a kernel stays a node.
  {
    G b;
    b.Input("x", {1});
    b.F32("one", {1}, {1.0f});
    b.I64("big", {2}, {1 << 20, 17});
    b.Add("Expand", "expand", {"one", "big"}, {"e"});
    b.Add("Relu", "r", {"x"}, {"y"});
    b.Output("y");
    b.Output("e");
    ExpectOk(InferShapes(&b.g));
    ExpectOk(FoldConstants(&b.g));
    EXPECT_EQ(b.Ops(), "Expand Relu");
    EXPECT_FALSE(b.T("e").is_constant);
    EXPECT_TRUE(b.T("e").data.empty());
  }
  // Shapes past 2^63 bytes and Range counts are rejected before anything is
  // allocated.
  {
    G b;
    b.Input("x", {1});
    b.I64("big", {2}, {int64_t{1} << 40, int64_t{1} << 40});
    b.Add("ConstantOfShape", "cos", {"big"}, {"h"});
    b.Add("Relu", "r", {"x"}, {"y"});
    b.Output("y");
    Check c = InferShapes(&b.g);
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.error(),
              "node 'cos': output shape [1099511627776,1099511627776] is too large (2^63 bytes "
              "or more)");
  }
  {
    G b;
    b.Input("x", {1});
    b.I64("lo", {}, {std::numeric_limits<int64_t>::min()});
    b.I64("hi", {}, {std::numeric_limits<int64_t>::max()});
    b.I64("one", {}, {1});
    b.Add("Range", "range", {"lo", "hi", "one"}, {"h"});
    b.Add("Relu", "r", {"x"}, {"y"});
    b.Output("y");
    Check c = InferShapes(&b.g);
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.error().find("node 'range': Range of "), std::string::npos) << c.error();
    EXPECT_NE(c.error().find("elements is too large"), std::string::npos) << c.error();
  }
  {
    G b;
    b.Input("x", {1});
    b.I64("a", {}, {0});
    b.I64("zero", {}, {0});
    b.Add("Range", "range", {"a", "a", "zero"}, {"h"});
    b.Add("Relu", "r", {"x"}, {"y"});
    b.Output("y");
    Check c = InferShapes(&b.g);
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.error(), "node 'range': delta is 0");
  }
}

TEST(FoldTest, EveryUnsupportedOpInOneMessage) {
  G b;
  b.Input("x", {4});
  b.Add("Hardmax", "hm_1", {"x"}, {"a"});
  b.Add("RNN", "rnn", {"a"}, {"b"});
  b.Add("Hardmax", "hm_2", {"b"}, {"c"});
  b.Add("Relu", "r", {"c"}, {"y"});
  b.Output("y");
  Check c = Validate(b.g);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error(),
            "unsupported ops (2 types): Hardmax x2 (first 'hm_1'), RNN x1 (first 'rnn')");
}


// swin_t's window padding and shifted-window mask: Mod and ScatterND fold.
TEST(FoldTest, ModAndScatterND) {
  G b;
  b.Input("x", {2});
  b.I64("a", {4}, {7, -7, 7, -7});
  b.I64("d", {4}, {3, 3, -3, -3});
  // numpy.mod (fmod=0): 1, 2, -2, -1; C fmod (fmod=1): 1, -1, 1, -1.
  b.Add("Mod", "mod", {"a", "d"}, {"m"});
  b.Add("Mod", "fmod", {"a", "d"}, {"fm"}, {{"fmod", IntAttr(1)}});
  b.F32("fa", {3}, {5.5f, -5.5f, 5.5f});
  b.F32("fd", {1}, {2.0f});
  b.Add("Mod", "mod_f", {"fa", "fd"}, {"mf"}, {{"fmod", IntAttr(1)}});  // 1.5, -1.5, 1.5
  // data 3x2 zeros; rows 2 and 0 set to [1,2] and [3,4]; index -1 is row 2.
  b.F32("data", {3, 2}, {0, 0, 0, 0, 0, 0});
  b.I64("idx", {2, 1}, {-1, 0});
  b.F32("upd", {2, 2}, {1, 2, 3, 4});
  b.Add("ScatterND", "scatter", {"data", "idx", "upd"}, {"sc"});
  b.Add("Relu", "r", {"x"}, {"y"});
  b.Output("y");
  ExpectOk(InferShapes(&b.g));
  ExpectOk(FoldConstants(&b.g));
  EXPECT_EQ(b.Ops(), "Relu");
  EXPECT_EQ(b.T("m").IntData(), (Shape{1, 2, -2, -1}));
  EXPECT_EQ(b.T("fm").IntData(), (Shape{1, -1, 1, -1}));
  EXPECT_EQ(b.T("mf").FloatData(), (std::vector<float>{1.5f, -1.5f, 1.5f}));
  EXPECT_EQ(b.T("sc").FloatData(), (std::vector<float>{3, 4, 0, 0, 1, 2}));
}

TEST(FoldTest, ModByZeroAndScatterNDOutOfRange) {
  {
    G b;
    b.Input("x", {1});
    b.I64("a", {1}, {5});
    b.I64("z", {1}, {0});
    b.Add("Mod", "mod0", {"a", "z"}, {"m"});
    b.Add("Reshape", "r", {"x", "m"}, {"y"});
    b.Output("y");
    Check c = Simplify(&b.g);
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.error().find("integer Mod by zero"), std::string::npos) << c.error();
  }
  {
    G b;
    b.Input("x", {3});
    b.F32("data", {3}, {0, 0, 0});
    b.I64("idx", {1, 1}, {3});
    b.F32("upd", {1}, {1});
    b.Add("ScatterND", "scatter", {"data", "idx", "upd"}, {"sc"});
    b.Add("Add", "add", {"x", "sc"}, {"y"});
    b.Output("y");
    Check c = Simplify(&b.g);
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.error().find("ScatterND index 3 is out of range for dim 0 of size 3"),
              std::string::npos)
        << c.error();
  }
}

// DequantizeLinear of a constant (a quantized weight, an int32 bias) folds to
// float32; QuantizeLinear of a constant rounds half to even and saturates.
// Values by hand.
TEST(FoldTest, QuantizeDequantizeConstants) {
  G b;
  b.Input("x", {2, 2});
  b.Const<int8_t>("w", DType::Int8, {2, 2}, {-128, 3, 127, -1});
  b.F32("ws", {2}, {0.5f, 0.25f});
  b.Const<int8_t>("wz", DType::Int8, {2}, {0, -1});
  b.Add("DequantizeLinear", "dq_w", {"w", "ws", "wz"}, {"wd"}, {{"axis", IntAttr(0)}});
  // row 0: (-128, 3) * 0.5; row 1: (127 + 1, -1 + 1) * 0.25
  b.Const<int32_t>("bias", DType::Int32, {2}, {-7, 1000});
  b.F32("bs", {}, {0.125f});
  b.Add("DequantizeLinear", "dq_b", {"bias", "bs"}, {"bd"});
  b.F32("f", {6}, {0.25f, 0.75f, -0.25f, 100.0f, -100.0f, 0.6f});
  b.F32("s", {}, {0.5f});
  b.Const<uint8_t>("z", DType::UInt8, {}, {10});
  // f / 0.5 = 0.5, 1.5, -0.5, 200, -200, 1.2 -> rint 0, 2, -0, 200, -200, 1 -> + 10, saturate
  b.Add("QuantizeLinear", "q_f", {"f", "s", "z"}, {"fq"});
  b.Add("QuantizeLinear", "q_default", {"f", "s"}, {"fq0"});  // uint8, zero point 0
  b.Add("MatMul", "mm", {"x", "wd"}, {"m"});
  b.Add("Add", "add", {"m", "bd"}, {"y"});
  b.Output("y");
  ExpectOk(InferShapes(&b.g));
  ExpectOk(FoldConstants(&b.g));
  EXPECT_EQ(b.Ops(), "MatMul Add");
  EXPECT_EQ(b.T("wd").dtype, DType::Float32);
  EXPECT_EQ(b.T("wd").FloatData(), (std::vector<float>{-64.0f, 1.5f, 32.0f, 0.0f}));
  EXPECT_EQ(b.T("bd").FloatData(), (std::vector<float>{-0.875f, 125.0f}));
  EXPECT_EQ(b.T("fq").dtype, DType::UInt8);
  EXPECT_EQ(b.Data<uint8_t>("fq"), (std::vector<uint8_t>{10, 12, 10, 210, 0, 11}));
  EXPECT_EQ(b.Data<uint8_t>("fq0"), (std::vector<uint8_t>{0, 2, 0, 200, 0, 1}));
}

TEST(FoldTest, QuantizeDequantizeErrorsNameTheNode) {
  struct Case {
    const char* what;
    std::function<void(G&)> build;
    const char* message;
  };
  const Case cases[] = {
      {"per-axis scale of the wrong length",
       [](G& b) {
         b.F32("s", {3}, {1, 1, 1});
         b.Add("QuantizeLinear", "q", {"x", "s"}, {"y"});
       },
       "node 'q': per-axis scale 's' [3] needs one value per index of axis 1 of 'x' [2,4]"},
      {"int16 zero point",
       [](G& b) {
         b.F32("s", {}, {1});
         b.Const<int32_t>("z", DType::Int32, {}, {0});
         b.Add("QuantizeLinear", "q", {"x", "s", "z"}, {"y"});
       },
       "node 'q': zero point 'z' is int32; Baton quantizes to uint8 and int8"},
      {"float input to DequantizeLinear",
       [](G& b) {
         b.F32("s", {}, {1});
         b.Add("DequantizeLinear", "dq", {"x", "s"}, {"y"});
       },
       "node 'dq': input 'x' is float32; Baton dequantizes uint8, int8 and int32"},
      {"blocked quantization",
       [](G& b) {
         b.F32("s", {2, 2}, {1, 1, 1, 1});
         b.Add("QuantizeLinear", "q", {"x", "s"}, {"y"}, {{"block_size", IntAttr(2)}});
       },
       "node 'q': blocked quantization (block_size 2) is not supported"},
  };
  for (const Case& c : cases) {
    G b;
    b.Input("x", {2, 4});
    c.build(b);
    b.Output("y");
    const Check check = InferShapes(&b.g);
    ASSERT_FALSE(check.ok()) << c.what;
    EXPECT_EQ(check.error(), c.message) << c.what;
  }
}

// QDQ groups become integer ops (FuseQLinear): a per-channel Conv with an
// int32 bias and a Relu, a Gemm with transB, and groups that must stay as
// written (bias scale not x_scale * w_scale; per-channel scale on the wrong
// axis; a float weight).
class QdqGroup {
 public:
  explicit QdqGroup(const std::string& op) {
    b.Input("x", op == "Conv" ? Shape{1, 2, 4, 4} : Shape{3, 2});
    b.F32("s", {}, {0.5f});
    b.Const<uint8_t>("z", DType::UInt8, {}, {128});
    b.Add("QuantizeLinear", "qx", {"x", "s", "z"}, {"xq"});
    b.Add("Cast", "cast", {"xq"}, {"xc"}, {{"to", IntAttr(2)}});  // torch's no-op Cast
    b.Add("DequantizeLinear", "dqx", {"xc", "s", "z"}, {"xd"});
  }
  void Weight(Shape shape, std::vector<float> scale, int64_t axis) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    b.Const<int8_t>("w", DType::Int8, shape, std::vector<int8_t>(static_cast<size_t>(n), 3));
    b.F32("ws", scale.size() == 1 ? Shape{} : Shape{static_cast<int64_t>(scale.size())}, scale);
    b.Add("DequantizeLinear", "dqw", {"w", "ws"}, {"wd"}, {{"axis", IntAttr(axis)}});
  }
  void Bias(std::vector<float> scale) {
    b.Const<int32_t>("bias", DType::Int32, {2}, {7, -7});
    b.F32("bs", {2}, scale);
    b.Add("DequantizeLinear", "dqb", {"bias", "bs"}, {"bd"}, {{"axis", IntAttr(0)}});
  }
  void Finish(const std::string& act_out) {
    b.F32("ys", {}, {0.25f});
    b.Const<uint8_t>("yz", DType::UInt8, {}, {0});
    b.Add("QuantizeLinear", "qy", {act_out, "ys", "yz"}, {"y"});
    b.Output("y");
  }
  G b;
};

TEST(FuseQLinearTest, ConvWithBiasAndRelu) {
  QdqGroup g("Conv");
  g.Weight({2, 2, 3, 3}, {0.1f, 0.2f}, 0);
  g.Bias({0.5f * 0.1f, 0.5f * 0.2f});
  g.b.Add("Conv", "conv", {"xd", "wd", "bd"}, {"c"}, {{"pads", IntsAttr({1, 1, 1, 1})}});
  g.b.Add("Relu", "relu", {"c"}, {"r"});
  g.Finish("r");
  ExpectOk(Simplify(&g.b.g));
  EXPECT_EQ(g.b.Ops(), "QuantizeLinear QLinearConv");
  const Node& conv = g.b.g.nodes[1];
  EXPECT_EQ(conv.name, "conv");
  std::vector<std::string> inputs;
  for (int t : conv.inputs) inputs.push_back(g.b.g.tensors[t].name);
  EXPECT_EQ(inputs, (std::vector<std::string>{"xq", "s", "z", "w", "ws", "conv_w_zero_point", "ys",
                                              "yz", "bias"}));
  EXPECT_EQ(g.b.T("conv_w_zero_point").shape, Shape{2});
  EXPECT_EQ(g.b.T("conv_w_zero_point").dtype, DType::Int8);
  ASSERT_TRUE(conv.clamp.has_value());
  EXPECT_EQ(conv.clamp->first, 0.0f);
  EXPECT_EQ(conv.GetInts("pads"), (Shape{1, 1, 1, 1}));
  EXPECT_EQ(g.b.T("y").dtype, DType::UInt8);
}

TEST(FuseQLinearTest, GemmTransB) {
  QdqGroup g("Gemm");
  g.Weight({2, 2}, {0.1f, 0.2f}, 0);  // [N, K], per output column N
  g.Bias({0.05f, 0.1f});
  g.b.Add("Gemm", "fc", {"xd", "wd", "bd"}, {"f"}, {{"transB", IntAttr(1)}});
  g.Finish("f");
  ExpectOk(Simplify(&g.b.g));
  EXPECT_EQ(g.b.Ops(), "QuantizeLinear QLinearMatMul");
  EXPECT_EQ(g.b.g.nodes[1].GetInt("transB", 0), 1);
  EXPECT_EQ(g.b.g.nodes[1].inputs.size(), 9u);
}

TEST(FuseQLinearTest, GroupsThatStayAsWritten) {
  {  // bias scale is not x_scale * w_scale
    QdqGroup g("Conv");
    g.Weight({2, 2, 3, 3}, {0.1f, 0.2f}, 0);
    g.Bias({0.05f, 0.2f});
    g.b.Add("Conv", "conv", {"xd", "wd", "bd"}, {"c"});
    g.Finish("c");
    ExpectOk(Simplify(&g.b.g));
    EXPECT_EQ(g.b.Ops(), "QuantizeLinear DequantizeLinear Conv QuantizeLinear");
  }
  {  // per-channel weight scale on the input-channel axis
    QdqGroup g("Conv");
    g.Weight({2, 2, 3, 3}, {0.1f, 0.2f}, 1);
    g.b.Add("Conv", "conv", {"xd", "wd"}, {"c"});
    g.Finish("c");
    ExpectOk(Simplify(&g.b.g));
    EXPECT_EQ(g.b.Ops(), "QuantizeLinear DequantizeLinear Conv QuantizeLinear");
  }
  {  // MatMul with a float weight
    QdqGroup g("MatMul");
    g.b.F32("wf", {2, 2}, {1, 2, 3, 4});
    g.b.Add("MatMul", "mm", {"xd", "wf"}, {"m"});
    g.Finish("m");
    ExpectOk(Simplify(&g.b.g));
    EXPECT_EQ(g.b.Ops(), "QuantizeLinear DequantizeLinear MatMul QuantizeLinear");
  }
}

TEST(FuseQLinearTest, PoolsAsOnnxRuntimeFusesThem) {
  {  // a no-op Pad (torch's AvgPool2d(padding=0)) disappears first
    QdqGroup g("Conv");
    g.b.Const<int64_t>("pads", DType::Int64, {8}, std::vector<int64_t>(8, 0));
    g.b.Add("Pad", "pad", {"xd", "pads"}, {"xp"});
    g.b.Add("AveragePool", "pool", {"xp"}, {"p"},
            {{"kernel_shape", IntsAttr({2, 2})}, {"count_include_pad", IntAttr(1)}});
    g.Finish("p");
    ExpectOk(Simplify(&g.b.g));
    EXPECT_EQ(g.b.Ops(), "QuantizeLinear QLinearAveragePool");
    const Node& pool = g.b.g.nodes[1];
    EXPECT_EQ(pool.inputs.size(), 5u);
    EXPECT_EQ(pool.GetInt("count_include_pad", 0), 1);
    EXPECT_EQ(g.b.T("y").shape, (Shape{1, 2, 3, 3}));
  }
  {
    QdqGroup g("Conv");
    g.b.Add("GlobalAveragePool", "gap", {"xd"}, {"p"});
    g.Finish("p");
    ExpectOk(Simplify(&g.b.g));
    EXPECT_EQ(g.b.Ops(), "QuantizeLinear QLinearGlobalAveragePool");
  }
  {  // dilated windows stay simulated (ONNX Runtime's kernel has none)
    QdqGroup g("Conv");
    g.b.Add("AveragePool", "pool", {"xd"}, {"p"},
            {{"kernel_shape", IntsAttr({2, 2})}, {"dilations", IntsAttr({2, 2})}});
    g.Finish("p");
    ExpectOk(Simplify(&g.b.g));
    EXPECT_EQ(g.b.Ops(), "QuantizeLinear DequantizeLinear AveragePool QuantizeLinear");
  }
}

// DequantizeLinear -> Softmax -> QuantizeLinear becomes QLinearSoftmax (ONNX
// Runtime's com.microsoft op, its arithmetic) with the normalized axis and a
// float32 [256] table e[d] = exp((shift - d) * x_scale), shift * x_scale =
// ln(FLT_MAX / len) - 5; it stays float when the Softmax's output has another
// reader, x is quantized per channel, x and y differ in dtype, or the output
// scale is so small that e[0] * floor(1 / y_scale) overflows float.
TEST(FuseQLinearTest, SoftmaxBecomesQLinearSoftmax) {
  {
    QdqGroup g("Conv");  // x [1, 2, 4, 4], scale 0.5, zero point 128
    g.b.Add("Softmax", "sm", {"xd"}, {"p"}, {{"axis", IntAttr(-3)}});
    g.Finish("p");
    ExpectOk(Simplify(&g.b.g));
    ASSERT_EQ(g.b.Ops(), "QuantizeLinear QLinearSoftmax");
    const Node& n = g.b.g.nodes[1];
    EXPECT_EQ(n.name, "sm");
    EXPECT_EQ(n.GetInt("axis", -1), 1);
    std::vector<std::string> inputs;
    for (int t : n.inputs) inputs.push_back(g.b.g.tensors[t].name);
    EXPECT_EQ(inputs, (std::vector<std::string>{"xq", "s", "z", "ys", "yz", "sm_exp_table"}));
    EXPECT_EQ(g.b.T("y").dtype, DType::UInt8);
    const std::vector<float> e = g.b.Data<float>("sm_exp_table");
    ASSERT_EQ(e.size(), 256u);
    // The log in float (ONNX Runtime's log(float) call), the rest in double.
    const double top =
        static_cast<double>(std::log(std::numeric_limits<float>::max() / 2.0f)) - 5.0;
    EXPECT_EQ(e[0], static_cast<float>(std::exp(top)));
    EXPECT_EQ(e[3], static_cast<float>(std::exp((-3.0 + top / 0.5) * 0.5)));
    for (size_t d = 1; d < e.size(); ++d) EXPECT_LT(e[d], e[d - 1]);
  }
  {  // the float softmax is also read by a Relu: stays
    QdqGroup g("Conv");
    g.b.Add("Softmax", "sm", {"xd"}, {"p"}, {{"axis", IntAttr(1)}});
    g.b.Add("Relu", "relu", {"p"}, {"r"});
    g.b.Output("r");
    g.Finish("p");
    ExpectOk(Simplify(&g.b.g));
    EXPECT_EQ(g.b.Ops(), "QuantizeLinear DequantizeLinear Softmax Relu QuantizeLinear");
  }
  {  // output scale 1e-6: e[0] * 10^6 overflows float: stays
    QdqGroup g("Conv");
    g.b.Add("Softmax", "sm", {"xd"}, {"p"}, {{"axis", IntAttr(1)}});
    g.b.F32("ys", {}, {1e-6f});
    g.b.Const<uint8_t>("yz", DType::UInt8, {}, {0});
    g.b.Add("QuantizeLinear", "qy", {"p", "ys", "yz"}, {"y"});
    g.b.Output("y");
    ExpectOk(Simplify(&g.b.g));
    EXPECT_EQ(g.b.Ops(), "QuantizeLinear DequantizeLinear Softmax QuantizeLinear");
  }
  {  // uint8 x, int8 y: stays
    QdqGroup g("Conv");
    g.b.Add("Softmax", "sm", {"xd"}, {"p"}, {{"axis", IntAttr(1)}});
    g.b.F32("ys", {}, {1.0f / 256});
    g.b.Const<int8_t>("yz", DType::Int8, {}, {-128});
    g.b.Add("QuantizeLinear", "qy", {"p", "ys", "yz"}, {"y"});
    g.b.Output("y");
    ExpectOk(Simplify(&g.b.g));
    EXPECT_EQ(g.b.Ops(), "QuantizeLinear DequantizeLinear Softmax QuantizeLinear");
  }
  {  // x quantized per channel: stays
    G b;
    b.Input("x", {1, 2, 4, 4});
    b.F32("s", {2}, {0.5f, 0.25f});
    b.Const<uint8_t>("z", DType::UInt8, {2}, {128, 128});
    b.Add("QuantizeLinear", "qx", {"x", "s", "z"}, {"xq"}, {{"axis", IntAttr(1)}});
    b.Add("DequantizeLinear", "dqx", {"xq", "s", "z"}, {"xd"}, {{"axis", IntAttr(1)}});
    b.Add("Softmax", "sm", {"xd"}, {"p"}, {{"axis", IntAttr(1)}});
    b.F32("ys", {}, {1.0f / 256});
    b.Const<uint8_t>("yz", DType::UInt8, {}, {0});
    b.Add("QuantizeLinear", "qy", {"p", "ys", "yz"}, {"y"});
    b.Output("y");
    ExpectOk(Simplify(&b.g));
    EXPECT_EQ(b.Ops(), "QuantizeLinear DequantizeLinear Softmax QuantizeLinear");
  }
}

TEST(FuseQLinearTest, MulBecomesQLinearMulWithoutActivation) {
  {
    QdqGroup g("Conv");
    g.b.Add("Mul", "mul", {"xd", "xd"}, {"m"});
    g.Finish("m");
    ExpectOk(Simplify(&g.b.g));
    EXPECT_EQ(g.b.Ops(), "QuantizeLinear QLinearMul");
    EXPECT_EQ(g.b.g.nodes[1].inputs.size(), 8u);
  }
  {  // ONNX Runtime fuses no activation into QLinearMul; Relu(x * x) is a
     // function of x alone, so the group is a table (FuseQLinearLookup)
    QdqGroup g("Conv");
    g.b.Add("Mul", "mul", {"xd", "xd"}, {"m"});
    g.b.Add("Relu", "relu", {"m"}, {"r"});
    g.Finish("r");
    ExpectOk(Simplify(&g.b.g));
    EXPECT_EQ(g.b.Ops(), "QuantizeLinear QLinearLookup");
  }
}

TEST(FuseQLinearTest, LayoutOpBetweenEqualQuantizationRunsOnBytes) {
  {  // same scale and zero point on both sides: Flatten reads the uint8 x
    QdqGroup g("Conv");
    g.b.Add("Flatten", "flat", {"xd"}, {"f"});
    g.b.Add("QuantizeLinear", "qy", {"f", "s", "z"}, {"y"});
    g.b.Output("y");
    ExpectOk(Simplify(&g.b.g));
    EXPECT_EQ(g.b.Ops(), "QuantizeLinear Flatten");
    EXPECT_EQ(g.b.g.tensors[g.b.g.nodes[1].inputs[0]].name, "xq");
    EXPECT_EQ(g.b.T("y").dtype, DType::UInt8);
  }
  {  // another output scale requantizes: stays
    QdqGroup g("Conv");
    g.b.Add("Flatten", "flat", {"xd"}, {"f"});
    g.Finish("f");
    ExpectOk(Simplify(&g.b.g));
    EXPECT_EQ(g.b.Ops(), "QuantizeLinear DequantizeLinear Flatten QuantizeLinear");
  }
}

// The 256-entry table of a fused QLinearLookup node `n`.
std::vector<uint8_t> TableOf(const G& b, size_t n) {
  const Node& node = b.g.nodes[n];
  EXPECT_EQ(node.op, "QLinearLookup");
  EXPECT_EQ(node.inputs.size(), 2u);
  const Tensor& t = b.g.tensors[node.inputs[1]];
  EXPECT_TRUE(t.is_constant);
  EXPECT_EQ(t.data.size(), 256u);
  return t.data;
}

// ONNX Runtime's QuantizeLinear of one float to uint8 (division, round half
// to even, zero point, saturation), for the hand-checked tables below.
uint8_t QuantizeU8(double v, float scale, int zero_point) {
  const float r = std::nearbyint(static_cast<float>(v) / scale) + static_cast<float>(zero_point);
  return static_cast<uint8_t>(std::min(255.0f, std::max(0.0f, r)));
}

TEST(FuseQLinearTest, ElementwiseFunctionsBecomeTables) {
  // x: uint8, scale 0.5, zero point 128; y: uint8, scale 0.25, zero point 0.
  {
    QdqGroup g("Conv");
    g.b.Add("Sigmoid", "sig", {"xd"}, {"f"});
    g.Finish("f");
    ExpectOk(Simplify(&g.b.g));
    ASSERT_EQ(g.b.Ops(), "QuantizeLinear QLinearLookup");
    EXPECT_EQ(g.b.g.tensors[g.b.g.nodes[1].inputs[0]].name, "xq");
    const std::vector<uint8_t> table = TableOf(g.b, 1);
    EXPECT_EQ(table[128], 2);  // sigmoid(0) = 0.5 -> 2 (0.25 each)
    EXPECT_EQ(table[130], 3);  // sigmoid(1) = 0.731 -> 2.92 -> 3
    EXPECT_EQ(table[126], 1);  // sigmoid(-1) = 0.269 -> 1.08 -> 1
    EXPECT_EQ(table[0], 0);
    EXPECT_EQ(table[255], 4);
    for (int i = 0; i < 256; ++i) {
      EXPECT_EQ(table[i], QuantizeU8(1.0 / (1.0 + std::exp(-(i - 128) * 0.5)), 0.25f, 0)) << i;
    }
  }
  {  // HardSwish as torch exports it: Mul(x, HardSigmoid(x))
    QdqGroup g("Conv");
    g.b.Add("HardSigmoid", "hsig", {"xd"}, {"h"},
            {{"alpha", FloatAttr(1.0f / 6.0f)}, {"beta", FloatAttr(0.5f)}});
    g.b.Add("Mul", "hswish", {"xd", "h"}, {"f"});
    g.Finish("f");
    ExpectOk(Simplify(&g.b.g));
    ASSERT_EQ(g.b.Ops(), "QuantizeLinear QLinearLookup");
    EXPECT_EQ(g.b.g.nodes[1].name, "hswish");
    const std::vector<uint8_t> table = TableOf(g.b, 1);
    EXPECT_EQ(table[134], 12);  // x = 3: 3 * 1 = 3 -> 12
    EXPECT_EQ(table[129], 1);   // x = 0.5: 0.5 * 0.583 = 0.29 -> 1.17 -> 1
    EXPECT_EQ(table[120], 0);   // x = -4: 0, and negatives saturate at 0
  }
  {  // two QuantizeLinear readers: one table each, the Sigmoid goes
    QdqGroup g("Conv");
    g.b.Add("Sigmoid", "sig", {"xd"}, {"f"});
    g.b.F32("s2", {}, {0.5f});
    g.b.Add("QuantizeLinear", "qy2", {"f", "s2", "yz"}, {"y2"});
    g.Finish("f");
    g.b.Output("y2");
    ExpectOk(Simplify(&g.b.g));
    ASSERT_EQ(g.b.Ops(), "QuantizeLinear QLinearLookup QLinearLookup");
    EXPECT_EQ(TableOf(g.b, 1)[130], 1);  // 0.731 / 0.5 = 1.46 -> 1
    EXPECT_EQ(TableOf(g.b, 2)[130], 3);
  }
  {  // a float reader of the Sigmoid: it stays, unfused
    QdqGroup g("Conv");
    g.b.Add("Sigmoid", "sig", {"xd"}, {"f"});
    g.b.Add("Neg", "neg", {"f"}, {"n"});
    g.Finish("f");
    g.b.Output("n");
    ExpectOk(Simplify(&g.b.g));
    EXPECT_EQ(g.b.Ops(), "QuantizeLinear DequantizeLinear Sigmoid Neg QuantizeLinear");
  }
  {  // two non-constant operands: not a function of x alone
    QdqGroup g("Conv");
    g.b.Input("other", {1, 2, 4, 4});
    g.b.Add("Add", "add", {"xd", "other"}, {"f"});
    g.Finish("f");
    ExpectOk(Simplify(&g.b.g));
    EXPECT_EQ(g.b.Ops(), "QuantizeLinear DequantizeLinear Add QuantizeLinear");
  }
}

TEST(FuseQLinearTest, MaxPoolAndConcatRunOnBytes) {
  {  // MaxPool between equal quantizations reads the uint8 x
    QdqGroup g("Conv");
    g.b.Add("MaxPool", "pool", {"xd"}, {"p"}, {{"kernel_shape", IntsAttr({2, 2})}});
    g.b.Add("QuantizeLinear", "qy", {"p", "s", "z"}, {"y"});
    g.b.Output("y");
    ExpectOk(Simplify(&g.b.g));
    EXPECT_EQ(g.b.Ops(), "QuantizeLinear MaxPool");
    EXPECT_EQ(g.b.T("y").dtype, DType::UInt8);
  }
  {  // a constant Pad fills with the quantized fill value: 0.8 / 0.5 = 1.6 -> 2 + 128
    QdqGroup g("Conv");
    g.b.Const<int64_t>("pads", DType::Int64, {8}, {0, 0, 1, 1, 0, 0, 1, 1});
    g.b.F32("fill", {}, {0.8f});
    g.b.Add("Pad", "pad", {"xd", "pads", "fill"}, {"p"});
    g.b.Add("QuantizeLinear", "qy", {"p", "s", "z"}, {"y"});
    g.b.Output("y");
    ExpectOk(Simplify(&g.b.g));
    ASSERT_EQ(g.b.Ops(), "QuantizeLinear Pad");
    const Tensor& fill = g.b.g.tensors[g.b.g.nodes[1].inputs[2]];
    EXPECT_EQ(fill.dtype, DType::UInt8);
    EXPECT_EQ(fill.data, std::vector<uint8_t>{130});
    EXPECT_EQ(g.b.T("y").shape, (Shape{1, 2, 6, 6}));
  }
  {  // Concat of x (0.5, 128) and x quantized with (0.25, 128) into (0.5, 128):
     // the second operand is requantized by a table
    QdqGroup g("Conv");
    g.b.F32("s2", {}, {0.25f});
    g.b.Add("QuantizeLinear", "qx2", {"x", "s2", "z"}, {"xq2"});
    g.b.Add("DequantizeLinear", "dqx2", {"xq2", "s2", "z"}, {"xd2"});
    g.b.Add("Concat", "cat", {"xd", "xd2"}, {"c"}, {{"axis", IntAttr(1)}});
    g.b.Add("QuantizeLinear", "qy", {"c", "s", "z"}, {"y"});
    g.b.Output("y");
    ExpectOk(Simplify(&g.b.g));
    ASSERT_EQ(g.b.Ops(), "QuantizeLinear QuantizeLinear QLinearLookup Concat");
    const Node& cat = g.b.g.nodes[3];
    ASSERT_EQ(cat.inputs.size(), 2u);
    EXPECT_EQ(g.b.g.tensors[cat.inputs[0]].name, "xq");
    EXPECT_EQ(g.b.g.tensors[cat.outputs[0]].name, "y");
    EXPECT_EQ(g.b.T("y").shape, (Shape{1, 4, 4, 4}));
    const std::vector<uint8_t> table = TableOf(g.b, 2);
    for (int i = 0; i < 256; ++i) {  // (i - 128) * 0.25 / 0.5, half to even
      EXPECT_EQ(table[i], QuantizeU8((i - 128) * 0.25, 0.5f, 128)) << i;
    }
    EXPECT_EQ(table[129], 128);  // 0.5 -> 0
    EXPECT_EQ(table[131], 130);  // 1.5 -> 2
  }
  {  // the same operand twice (torch.cat([x, x])): one table per position
    QdqGroup g("Conv");
    g.b.F32("s2", {}, {0.25f});
    g.b.Add("QuantizeLinear", "qx2", {"x", "s2", "z"}, {"xq2"});
    g.b.Add("DequantizeLinear", "dqx2", {"xq2", "s2", "z"}, {"xd2"});
    g.b.Add("Concat", "cat", {"xd2", "xd2"}, {"c"}, {{"axis", IntAttr(1)}});
    g.b.Add("QuantizeLinear", "qy", {"c", "s", "z"}, {"y"});
    g.b.Output("y");
    ExpectOk(Simplify(&g.b.g));
    EXPECT_EQ(g.b.Ops(), "QuantizeLinear QuantizeLinear QLinearLookup QLinearLookup Concat");
  }
}

}  // namespace
}  // namespace baton::planner
