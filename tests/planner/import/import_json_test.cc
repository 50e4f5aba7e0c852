// Graph JSON importer: good graphs and every kind of bad input gives a clear
// error naming the node, tensor or field.

#include <gtest/gtest.h>

#include "baton/planner/import/import_json.h"
#include "baton/planner/target.h"

namespace baton::planner {
namespace {

const char* kGood = R"({"name": "g",
  "inputs": [{"name": "x", "dtype": "float32", "shape": [1, 2, 4, 4]}],
  "outputs": ["y"],
  "initializers": [{"name": "w", "dtype": "float32", "shape": [3, 2, 1, 1], "data": [1, 2, 3, 4, 5, 6]}],
  "nodes": [{"name": "conv", "op": "Conv", "inputs": ["x", "w"], "outputs": ["c"]},
            {"name": "relu", "op": "Relu", "inputs": ["c"], "outputs": ["y"], "device": "npu0"}]})";

std::string Error(const std::string& text) {
  auto g = ParseGraphJson(text, "", "g.json");
  EXPECT_FALSE(g.ok());
  return g.ok() ? "" : g.error();
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

TEST(ImportJson, ParsesGraph) {
  auto g = ParseGraphJson(kGood, "", "g.json");
  ASSERT_TRUE(g.ok()) << g.error();
  ASSERT_EQ(g->nodes.size(), 2u);
  EXPECT_EQ(g->nodes[1].device, "npu0");
  const Tensor& c = g->tensors[g->FindTensor("c")];
  EXPECT_EQ(c.shape, (std::vector<int64_t>{1, 3, 4, 4}));  // by hand: 1x1 conv, 3 filters
  const Tensor& w = g->tensors[g->FindTensor("w")];
  EXPECT_TRUE(w.is_constant);
  EXPECT_EQ(w.FloatData(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST(ImportJson, InvalidJsonNamesFile) {
  EXPECT_NE(Error("{").find("g.json: invalid JSON"), std::string::npos);
}

// Found by fuzz_graph_json: nlohmann throws out_of_range, not parse_error,
// for a number beyond double's range; it escaped and aborted the tool.
TEST(ImportJson, NumberOverflowIsInvalidJson) {
  EXPECT_NE(Error(R"({"name": 1e999})").find("g.json: invalid JSON"), std::string::npos);
  auto t = ParseTarget(R"({"devices": [{"name": "cpu0", "flops": 1e999}]})", "t.json");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().find("t.json: invalid JSON"), std::string::npos) << t.error();
}

TEST(ImportJson, DanglingInputNamesNodeAndTensor) {
  std::string e = Error(Replace(kGood, R"("inputs": ["c"])", R"("inputs": ["nope"])"));
  EXPECT_NE(e.find("relu"), std::string::npos) << e;
  EXPECT_NE(e.find("nope"), std::string::npos) << e;
}

TEST(ImportJson, DuplicateOutputName) {
  std::string e = Error(Replace(kGood, R"("outputs": ["y"], "device")", R"("outputs": ["c"], "device")"));
  EXPECT_NE(e.find("'c'"), std::string::npos) << e;
}

TEST(ImportJson, CycleNamesANode) {
  // relu reads y2 produced by relu2, which reads y produced by relu.
  std::string cyclic = R"({"inputs": [{"name": "x", "shape": [4]}], "outputs": ["y"],
    "nodes": [{"name": "relu", "op": "Relu", "inputs": ["y2"], "outputs": ["y"]},
              {"name": "relu2", "op": "Relu", "inputs": ["y"], "outputs": ["y2"]}]})";
  std::string e = Error(cyclic);
  EXPECT_NE(e.find("cycle"), std::string::npos) << e;
  EXPECT_TRUE(e.find("relu") != std::string::npos) << e;
}

TEST(ImportJson, UnknownOp) {
  std::string e = Error(Replace(kGood, R"("op": "Relu")", R"("op": "Frobnicate")"));
  EXPECT_NE(e.find("Frobnicate"), std::string::npos) << e;
  EXPECT_NE(e.find("relu"), std::string::npos) << e;
}

TEST(ImportJson, ShapeMismatch) {
  // 3 input channels declared, weights expect 2.
  std::string e = Error(Replace(kGood, R"("shape": [1, 2, 4, 4])", R"("shape": [1, 3, 4, 4])"));
  EXPECT_NE(e.find("conv"), std::string::npos) << e;
}

TEST(ImportJson, DtypeMismatch) {
  std::string e = Error(Replace(kGood, R"("dtype": "float32", "shape": [3, 2, 1, 1])",
                                R"("dtype": "int32", "shape": [3, 2, 1, 1])"));
  EXPECT_NE(e.find("conv"), std::string::npos) << e;
}

TEST(ImportJson, WrongDataCount) {
  std::string e = Error(Replace(kGood, "[1, 2, 3, 4, 5, 6]", "[1, 2, 3]"));
  EXPECT_NE(e.find("initializer 'w'"), std::string::npos) << e;
  EXPECT_NE(e.find("3 values"), std::string::npos) << e;
}

TEST(ImportJson, UnknownDtype) {
  std::string e = Error(Replace(kGood, R"("dtype": "float32", "shape": [1)", R"("dtype": "float64", "shape": [1)"));
  EXPECT_NE(e.find("float64"), std::string::npos) << e;
}

TEST(ImportJson, MissingNpyFileNamesPath) {
  std::string e = Error(Replace(kGood, R"("data": [1, 2, 3, 4, 5, 6])", R"("file": "missing.npy")"));
  EXPECT_NE(e.find("missing.npy"), std::string::npos) << e;
}

TEST(ImportJson, UndefinedGraphOutput) {
  std::string e = Error(Replace(kGood, R"("outputs": ["y"],)", R"("outputs": ["zz"],)"));
  EXPECT_NE(e.find("zz"), std::string::npos) << e;
}

// The messages of the shared JSON field readers (import/json_fields.h), word
// for word.
TEST(ImportJson, FieldErrorsNameTheEntry) {
  struct Case {
    std::string from, to, message;
  };
  const Case cases[] = {
      {R"({"name": "g",)", R"([)", "g.json: invalid JSON: "},
      {R"("initializers": [{"name": "w")", R"("initializers": [{"name": "")",
       "g.json: initializers[0]: needs a non-empty string 'name'"},
      {R"("initializers": [{)", R"("initializers": 3, "x": [{)",
       "g.json: 'initializers' must be a list"},
      {R"("inputs": [{"name": "x")", R"("inputs": [{"name": "w")",
       "g.json: input 'w': duplicate tensor name"},
      {R"("inputs": [{"name": "x")", R"("inputs": [{"nam": "x")",
       "g.json: inputs[0]: needs a non-empty string 'name'"},
      {R"("inputs": ["c"])", R"("inputs": "c")", "g.json: node 'relu': 'inputs' must be a list"},
      {R"({"name": "relu")", R"({"name": 5)", "g.json: nodes[1]: needs a non-empty string 'name'"},
      {R"("nodes": [)", R"("nodes": {}, "x": [)", "g.json: 'nodes' must be a list"},
  };
  for (const Case& c : cases) {
    std::string e = Error(Replace(kGood, c.from, c.to));
    EXPECT_EQ(e.substr(0, c.message.size()), c.message) << c.to;
  }
  EXPECT_EQ(Error("[1]"), "g.json: the graph must be a JSON object");
}

// Issue 13: a non-string "name" or "dtype" threw an uncaught nlohmann
// exception (exit 134); inline data out of the dtype's range wrapped.
TEST(ImportJson, WrongTypedFieldsAreErrors) {
  EXPECT_EQ(Error(Replace(kGood, R"({"name": "g",)", R"({"name": 7,)")),
            "g.json: 'name' must be a string");
  EXPECT_EQ(Error(Replace(kGood, R"("dtype": "float32", "shape": [1, 2, 4, 4])",
                          R"("dtype": 1, "shape": [1, 2, 4, 4])")),
            "g.json: input 'x': 'dtype' must be a string");
  EXPECT_EQ(Error(Replace(kGood, R"("shape": [1, 2, 4, 4])", R"("shape": [1, 18446744073709551615, 4, 4])")),
            "g.json: input 'x': 'shape' must be a list of non-negative integers");
  EXPECT_EQ(Error(Replace(kGood, R"({"name": "conv", "op": "Conv",)",
                          R"({"name": "conv", "op": "Conv", "attrs": {"group": 18446744073709551615},)")),
            "g.json: node 'conv': attribute 'group': 18446744073709551615 is out of int64 range");
  EXPECT_EQ(Error(Replace(kGood, R"("data": [1, 2, 3, 4, 5, 6])", R"("data": [1, 2, 3, 4, 5, 1e300])")),
            "g.json: initializer 'w': 'data' value 1e+300 is out of float32 range");
}

// Conv's fourth input (`sum`) is the simplifier's fused residual Add, not
// ONNX's: an imported Conv with four inputs is an error, not a silent Add.
TEST(ImportJson, ConvWithFourInputsIsAnError) {
  EXPECT_EQ(Error(Replace(kGood, R"("inputs": ["x", "w"], "outputs": ["c"])",
                          R"("inputs": ["x", "w", "", "x"], "outputs": ["c"])")),
            "g.json: node 'conv': Conv has 4 inputs, expected 2 to 3 (ONNX Conv: X, W, optional B)");
}

TEST(ImportJson, InlineDataMustFitItsDtype) {
  const std::string base = R"({"inputs": [{"name": "x", "dtype": "uint8", "shape": [3]}],
    "initializers": [{"name": "c", "dtype": "DT", "shape": [3], "data": DATA}],
    "nodes": [{"name": "add", "op": "Add", "inputs": ["x", "c"], "outputs": ["y"]}],
    "outputs": ["y"]})";
  struct Case {
    const char* dtype;
    const char* data;
    const char* message;  // empty: accepted
  };
  const Case cases[] = {
      {"uint8", "[0, 255, 300]", "'data' value 300 is not a uint8 (an integer from 0 to 255)"},
      {"uint8", "[0, -1, 3]", "'data' value -1 is not a uint8"},
      {"uint8", "[0, 1.5, 3]", "'data' value 1.5 is not a uint8"},
      {"int8", "[-128, 127, 128]", "'data' value 128 is not a int8 (an integer from -128 to 127)"},
      {"int32", "[0, 2147483648, 1]", "'data' value 2147483648 is not a int32"},
      {"int64", "[0, 9223372036854775808, 1]", "'data' value 9223372036854775808 is not a int64"},
      {"uint8", "[0, 255, 7]", ""},
      {"int8", "[-128, 127, 0]", ""},
  };
  for (const Case& c : cases) {
    const std::string text = Replace(Replace(base, "DT", c.dtype), "DATA", c.data);
    auto g = ParseGraphJson(text, "", "g.json");
    if (c.message[0] == '\0') {
      // Parsed; the Add's dtypes may still disagree, which is another error.
      EXPECT_TRUE(g.ok() || g.error().find("'data'") == std::string::npos) << g.error();
      continue;
    }
    ASSERT_FALSE(g.ok()) << c.data;
    EXPECT_NE(g.error().find(std::string("g.json: initializer 'c': ") + c.message), std::string::npos)
        << g.error();
  }
  // In-range values keep their bits: Gather indices as int32, -1 included.
  const std::string gather = R"({"inputs": [{"name": "x", "shape": [3]}],
    "initializers": [{"name": "c", "dtype": "int32", "shape": [2], "data": [2147483647, -1]}],
    "nodes": [{"name": "g", "op": "Gather", "inputs": ["x", "c"], "outputs": ["y"]}],
    "outputs": ["y"]})";
  auto g = ParseGraphJson(gather, "", "g.json");
  ASSERT_FALSE(g.ok());  // 2147483647 is out of range for x, which proves the value was kept
  EXPECT_NE(g.error().find("index 2147483647"), std::string::npos) << g.error();
  g = ParseGraphJson(Replace(gather, "2147483647, -1", "2, -1"), "", "g.json");
  ASSERT_TRUE(g.ok()) << g.error();
  const Tensor& c = g->tensors[g->FindTensor("c")];
  EXPECT_EQ(c.data, (std::vector<uint8_t>{2, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}));
}

}  // namespace
}  // namespace baton::planner
