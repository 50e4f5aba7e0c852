#pragma once
// The planner's graph IR. Op names and attribute semantics are ONNX's,
// whatever the importer. Tensors and nodes are referred to by index; -1 marks
// an absent optional input. Every pass is a function over this structure.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "baton/plan_generated.h"
#include "baton/planner/result.h"

namespace baton::planner {

using schema::DType;

// "float32", "int64", ... ; nullopt for an unknown name.
std::optional<DType> ParseDType(const std::string& name);
const char* DTypeName(DType dtype);
size_t DTypeBytes(DType dtype);

struct Tensor {
  std::string name;
  DType dtype = DType::Float32;
  std::vector<int64_t> shape;  // known after shape inference
  bool shape_known = false;
  bool is_constant = false;   // an initializer or a folded constant
  std::vector<uint8_t> data;  // constants: little-endian element bytes

  int64_t elements() const;  // product of shape (1 for a scalar)
  size_t bytes() const { return static_cast<size_t>(elements()) * DTypeBytes(dtype); }
  // Typed views of constant data; empty when dtype does not match.
  std::vector<float> FloatData() const;
  std::vector<int64_t> IntData() const;  // int64 or int32 constants widened
};

// True if every dim is non-negative and the shape's elements, at 8 bytes
// each, fit in int64: what the planner's and runtime's size arithmetic
// assumes. Importers check it for every shape they read.
bool ShapeFits(const std::vector<int64_t>& shape);

struct Attr {
  // kStrings and kTensor only on custom ops (IsCustomOp) and `__subgraph`
  // nodes (ops/region.h); the attributes of
  // built-in ops keep an ONNX STRINGS attribute comma-joined in a kString.
  enum class Kind { kInt, kFloat, kInts, kFloats, kString, kStrings, kTensor };
  Kind kind = Kind::kInt;
  int64_t i = 0;
  float f = 0;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::string s;                     // kString; an ONNX STRINGS attribute is held comma-joined
  std::vector<std::string> strings;  // kStrings
  Tensor t;                          // kTensor: dtype, shape and data
};

struct Node {
  std::string name;
  std::string op;           // ONNX op type, or "__copy"
  std::vector<int> inputs;  // tensor indices, -1 = absent
  std::vector<int> outputs;
  std::map<std::string, Attr> attrs;
  std::string device;  // annotation from the model, "" if none
  // Fused output activation y = clamp(x, min, max), set by the simplifier.
  std::optional<std::pair<float, float>> clamp;
  // A second fused activation applied after the clamp (Conv and Gemm, set by
  // the simplifier): "" for none, else "HardSwish", "Swish", "HardSigmoid"
  // or "Sigmoid" with its alpha and beta (schema FusedActivation).
  std::string activation;
  float activation_alpha = 0.0f;
  float activation_beta = 0.0f;

  const Attr* FindAttr(const std::string& key) const;
  int64_t GetInt(const std::string& key, int64_t fallback) const;
  float GetFloat(const std::string& key, float fallback) const;
  std::vector<int64_t> GetInts(const std::string& key) const;  // empty if absent
  std::string GetString(const std::string& key, const std::string& fallback) const;
};

struct Graph {
  std::string name;
  // The default-domain ONNX opset the model imported; 0 for a graph JSON
  // (whose nodes follow the current ONNX semantics). Foreign-runtime regions
  // are serialized with it (passes/regions.h).
  int64_t opset = 0;
  std::vector<Tensor> tensors;
  std::vector<Node> nodes;
  std::vector<int> inputs;  // non-constant graph inputs
  std::vector<int> outputs;

  // -1 when absent.
  int FindTensor(const std::string& name) const;
  // Appends a tensor and returns its index.
  int AddTensor(Tensor tensor);
  // Producer node of each tensor (-1 for graph inputs and constants).
  std::vector<int> Producers() const;
  // Node indices in a deterministic topological order (ties by node index);
  // an error naming a node on the cycle if there is one.
  Result<std::vector<int>> TopologicalOrder() const;
};

// The ops Baton can plan: the ONNX names Baton knows (shape inference and
// lowering know them), and custom ops.
bool IsSupportedOp(const std::string& op);

// A custom op: "domain::name" (e.g. "com.example::MyOp"; default-domain ops
// are "ai.onnx::Name"). Its output shapes come from the model, its kernel
// from the application (Op::Custom, docs/porting.md "Custom ops"); only
// devices that list it by name run it (TargetDevice::Runs).
bool IsCustomOp(const std::string& op);

// The ops an importer turns into custom ops: "domain::name" strings, from
// `baton plan --custom-op` and from the target's device op lists. Baton's own
// post-processing ops ("baton::DecodeBoxes", "baton::NonMaxSuppression";
// IsPostprocessOp) are always declared; their outputs are inferred
// (InferPostprocessOutputs), not read from the model.
struct ImportOptions {
  std::vector<std::string> custom_ops;
  bool Declares(const std::string& op) const;
};

// One error naming every op type of `ops` ((op type, node name) pairs in node
// order), sorted by type, each with its count and first node:
// "unsupported ops (2 types): Erf x12 (first 'gelu_1/Erf'), LSTM x1 (first 'lstm')".
std::string UnsupportedOpsMessage(const std::vector<std::pair<std::string, std::string>>& ops);

// Structural validation: unique tensor and node names, every input/output
// index in range, every non-constant tensor produced exactly once or a graph
// input, graph outputs produced, no cycle, supported ops (every unsupported
// op in one message, UnsupportedOpsMessage). Messages name the node or tensor.
Check Validate(const Graph& graph);

}  // namespace baton::planner
