#include "baton/planner/import/import_onnx.h"

#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <map>
#include <set>

#include "baton/planner/io/npy.h"
#include "baton/planner/import/shapes.h"
#include "baton/planner/import/simplify.h"
#include "baton/planner/ops/op_def.h"
#include "baton/planner/ops/postprocess.h"
#include "import/onnx_patterns.h"
#include "ops/eval_host.h"

namespace baton::planner {
namespace {

constexpr int64_t kMinOpset = 9;  // Upsample's last opset
constexpr int64_t kMaxOpset = 17;

bool IsDefaultDomain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

std::optional<DType> DTypeOf(int32_t elem_type) {
  switch (elem_type) {
    case onnx::TensorProto::FLOAT:
      return DType::Float32;
    case onnx::TensorProto::INT64:
      return DType::Int64;
    case onnx::TensorProto::INT32:
      return DType::Int32;
    case onnx::TensorProto::UINT8:
      return DType::UInt8;
    case onnx::TensorProto::INT8:
      return DType::Int8;
    case onnx::TensorProto::BOOL:
      return DType::Bool;
    default:
      return std::nullopt;
  }
}

std::string ElemTypeName(int32_t elem_type) {
  if (onnx::TensorProto::DataType_IsValid(elem_type)) {
    return onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(elem_type));
  }
  return std::to_string(elem_type);
}

bool UsesExternalData(const onnx::TensorProto& t) {
  return t.data_location() == onnx::TensorProto::EXTERNAL || t.external_data_size() > 0;
}

// Appends `values` as little-endian T; returns how many there were.
template <typename T, typename Field>
size_t AppendNarrowed(const Field& values, std::vector<uint8_t>* out) {
  size_t count = 0;
  for (auto v : values) {
    T narrow = static_cast<T>(v);
    const uint8_t* p = reinterpret_cast<const uint8_t*>(&narrow);
    out->insert(out->end(), p, p + sizeof(T));
    ++count;
  }
  return count;
}

// Appends the typed-field values of `proto` as `dtype`; returns their count.
size_t AppendTypedData(const onnx::TensorProto& proto, DType dtype, std::vector<uint8_t>* out) {
  switch (dtype) {
    case DType::Float32:
      return AppendNarrowed<float>(proto.float_data(), out);
    case DType::Int64:
      return AppendNarrowed<int64_t>(proto.int64_data(), out);
    case DType::Int32:
      return AppendNarrowed<int32_t>(proto.int32_data(), out);
    // ONNX keeps 8-bit values widened in int32_data.
    case DType::UInt8:
      return AppendNarrowed<uint8_t>(proto.int32_data(), out);
    case DType::Int8:
      return AppendNarrowed<int8_t>(proto.int32_data(), out);
    case DType::Bool:
      return AppendNarrowed<uint8_t>(proto.int32_data(), out);
  }
  return 0;
}

// An initializer or Constant value as a constant tensor named `name`.
Result<Tensor> ConvertTensor(const onnx::TensorProto& proto, const std::string& name) {
  if (UsesExternalData(proto)) {
    return Fail("model uses external data for tensor '" + name +
                "'; re-export with weights embedded");
  }
  std::optional<DType> dtype = DTypeOf(proto.data_type());
  if (!dtype) {
    return Fail("tensor '" + name + "' has unsupported data type " +
                ElemTypeName(proto.data_type()));
  }
  Tensor t;
  t.name = name;
  t.dtype = *dtype;
  t.is_constant = true;
  t.shape_known = true;
  for (int64_t d : proto.dims()) {
    if (d < 0) return Fail("tensor '" + name + "' has a negative dim");
    t.shape.push_back(d);
  }
  if (!ShapeFits(t.shape)) {
    // Checked before elements() and bytes(), whose products would overflow.
    return Fail("tensor '" + name + "' has dims whose product overflows 64 bits");
  }
  const size_t n = static_cast<size_t>(t.elements());
  if (proto.has_raw_data()) {
    const std::string& raw = proto.raw_data();
    if (raw.size() != t.bytes()) {
      return Fail("tensor '" + name + "' has " + std::to_string(raw.size()) +
                  " bytes of raw data, expected " + std::to_string(t.bytes()));
    }
    t.data.assign(raw.begin(), raw.end());  // ONNX raw data is little-endian
  } else {
    const size_t count = AppendTypedData(proto, t.dtype, &t.data);
    if (count != n) {
      return Fail("tensor '" + name + "' has " + std::to_string(count) +
                  " values, its shape needs " + std::to_string(n));
    }
  }
  if (t.dtype == DType::Bool) {
    for (uint8_t& b : t.data) b = b != 0;  // Baton's bool is 0 or 1
  }
  return t;
}

// Static shape and dtype of a value_info, if it has both.
bool StaticType(const onnx::ValueInfoProto& vi, DType* out_dtype, std::vector<int64_t>* out_shape) {
  if (!vi.type().has_tensor_type()) return false;
  const auto& tt = vi.type().tensor_type();
  std::optional<DType> dtype = DTypeOf(tt.elem_type());
  if (!dtype || !tt.has_shape()) return false;
  std::vector<int64_t> shape;
  for (const auto& dim : tt.shape().dim()) {
    if (!dim.has_dim_value() || dim.dim_value() < 0) return false;
    shape.push_back(dim.dim_value());
  }
  *out_dtype = *dtype;
  *out_shape = std::move(shape);
  return true;
}

// The custom-op name of a node: "domain::op_type", the default domain
// written "ai.onnx" (IsCustomOp).
std::string CustomOpName(const onnx::NodeProto& proto) {
  return (IsDefaultDomain(proto.domain()) ? std::string("ai.onnx") : proto.domain()) +
         "::" + proto.op_type();
}

// Whether `proto` becomes a custom op: its "domain::op_type" is declared.
bool IsDeclaredCustom(const onnx::NodeProto& proto, const ImportOptions& options) {
  return options.Declares(CustomOpName(proto));
}

// `custom`: the attribute of a custom op, which keeps STRINGS as a list and
// takes TENSOR values (built-in ops hold STRINGS comma-joined).
Result<Attr> ConvertAttr(const onnx::AttributeProto& a, const std::string& where,
                         bool custom = false) {
  Attr attr;
  if (custom && a.type() == onnx::AttributeProto::STRINGS) {
    attr.kind = Attr::Kind::kStrings;
    attr.strings.assign(a.strings().begin(), a.strings().end());
    return attr;
  }
  if (custom && a.type() == onnx::AttributeProto::TENSOR) {
    auto converted = ConvertTensor(a.t(), a.name());
    if (!converted.ok()) return Fail(where + ": attribute " + converted.error());
    attr.kind = Attr::Kind::kTensor;
    attr.t = std::move(converted).value();
    if (attr.t.shape.size() > 8) {  // the runtime's kMaxRank
      return Fail(where + ": tensor attribute '" + a.name() + "' has rank " +
                  std::to_string(attr.t.shape.size()) + ", at most 8 is supported");
    }
    return attr;
  }
  switch (a.type()) {
    case onnx::AttributeProto::INT:
      attr.kind = Attr::Kind::kInt;
      attr.i = a.i();
      break;
    case onnx::AttributeProto::FLOAT:
      attr.kind = Attr::Kind::kFloat;
      attr.f = a.f();
      break;
    case onnx::AttributeProto::INTS:
      attr.kind = Attr::Kind::kInts;
      attr.ints.assign(a.ints().begin(), a.ints().end());
      break;
    case onnx::AttributeProto::FLOATS:
      attr.kind = Attr::Kind::kFloats;
      attr.floats.assign(a.floats().begin(), a.floats().end());
      break;
    case onnx::AttributeProto::STRING:
      attr.kind = Attr::Kind::kString;
      attr.s = a.s();
      break;
    case onnx::AttributeProto::STRINGS:
      // Held as one comma-joined string (LSTM's activations).
      attr.kind = Attr::Kind::kString;
      for (int k = 0; k < a.strings_size(); ++k) attr.s += (k > 0 ? "," : "") + a.strings(k);
      break;
    default:
      return Fail(where + ": attribute '" + a.name() + "' has unsupported type " +
                  onnx::AttributeProto::AttributeType_Name(a.type()));
  }
  return attr;
}

// A shape and dtype ONNX's shape inference (or the exporter) recorded.
struct Declared {
  int tensor = -1;
  DType dtype = DType::Float32;
  std::vector<int64_t> shape;
};

// A graph input that is not an initializer: it needs a static shape.
Result<Tensor> InputTensor(const onnx::ValueInfoProto& input) {
  const std::string& name = input.name();
  if (!input.type().has_tensor_type()) return Fail("graph input '" + name + "' is not a tensor");
  const auto& tt = input.type().tensor_type();
  std::optional<DType> dtype = DTypeOf(tt.elem_type());
  if (!dtype) {
    return Fail("graph input '" + name + "' has unsupported data type " +
                ElemTypeName(tt.elem_type()));
  }
  if (!tt.has_shape()) return Fail("graph input '" + name + "' has no shape");
  Tensor t;
  t.name = name;
  t.dtype = *dtype;
  t.shape_known = true;
  for (int d = 0; d < tt.shape().dim_size(); ++d) {
    const auto& dim = tt.shape().dim(d);
    if (!dim.has_dim_value() || dim.dim_value() < 0) {
      const std::string what =
          dim.has_dim_param() ? "symbolic dim '" + dim.dim_param() + "'" : "an unknown dim";
      return Fail("graph input '" + name + "' has " + what + " at index " + std::to_string(d) +
                  "; dynamic shapes are not supported, export with static input shapes");
    }
    t.shape.push_back(dim.dim_value());
  }
  if (!ShapeFits(t.shape)) return Fail("graph input '" + name + "' is too large (2^63 bytes or more)");
  return t;
}

// ONNX lists nodes in topological order. When a node reads a name that a
// node at or after it produces, says why: the cycle through those nodes
// (node 'a' -> node 'b' -> node 'a', in data-flow order), or else that the
// file is out of order. `defined(name)` says whether a name is a graph input
// or initializer.
template <typename Defined>
Check CheckNodeOrder(const onnx::GraphProto& g, const std::vector<std::string>& names,
                     Defined defined) {
  std::map<std::string, int> producer;
  for (int i = 0; i < g.node_size(); ++i) {
    for (const std::string& out : g.node(i).output()) {
      if (!out.empty()) producer.emplace(out, i);
    }
  }
  // Nodes whose inputs a later (or the same) node produces.
  auto late_input = [&](int i, std::string* name, int* from) {
    for (const std::string& in : g.node(i).input()) {
      if (in.empty() || defined(in)) continue;
      auto it = producer.find(in);
      if (it != producer.end() && it->second >= i) {
        *name = in;
        *from = it->second;
        return true;
      }
    }
    return false;
  };
  std::string late_name;
  int first = -1, late_from = -1;
  for (int i = 0; i < g.node_size() && first < 0; ++i) {
    if (late_input(i, &late_name, &late_from)) first = i;
  }
  if (first < 0) return Check();
  // Iterative depth-first search for a cycle over producer -> consumer edges,
  // walking from each node to the producers of its inputs.
  const int n = g.node_size();
  std::vector<int> state(n, 0);  // 0 unvisited, 1 on the path, 2 done
  std::vector<int> path;
  std::vector<int> next_input;
  for (int root = 0; root < n; ++root) {
    if (state[root] != 0) continue;
    path = {root};
    next_input = {0};
    state[root] = 1;
    while (!path.empty()) {
      const int v = path.back();
      const onnx::NodeProto& node = g.node(v);
      if (next_input.back() >= node.input_size()) {
        state[v] = 2;
        path.pop_back();
        next_input.pop_back();
        continue;
      }
      const std::string& in = node.input(next_input.back()++);
      if (in.empty() || defined(in)) continue;
      auto it = producer.find(in);
      if (it == producer.end()) continue;
      const int u = it->second;
      if (state[u] == 1) {
        // path from u to v walks against the data flow; print it with it.
        auto at = std::find(path.begin(), path.end(), u);
        std::string cycle;
        for (auto p = path.end(); p != at;) {
          --p;
          cycle += "node '" + names[*p] + "' -> ";
        }
        cycle += "node '" + names[v] + "'";
        return Fail("the graph has a cycle: " + cycle + " (through '" + in + "')");
      }
      if (state[u] == 0) {
        state[u] = 1;
        path.push_back(u);
        next_input.push_back(0);
      }
    }
  }
  return Fail("node '" + names[first] + "' reads '" + late_name + "' before node '" +
              names[late_from] + "' produces it; ONNX requires nodes in topological order");
}

// Node names: "<op>_<index>" for unnamed nodes; a suffix resolves clashes.
std::vector<std::string> NodeNames(const onnx::GraphProto& g) {
  std::set<std::string> taken;
  for (const auto& node : g.node()) {
    if (!node.name().empty()) taken.insert(node.name());
  }
  std::set<std::string> used;
  std::vector<std::string> names;
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& node = g.node(i);
    std::string name = node.name();
    if (name.empty() || used.count(name)) {
      const std::string base = (name.empty() ? node.op_type() : name) + "_" + std::to_string(i);
      name = base;
      for (int k = 1; used.count(name) || (taken.count(name) && name != node.name()); ++k) {
        name = base + "_" + std::to_string(k);
      }
    }
    used.insert(name);
    names.push_back(name);
  }
  return names;
}

// The value of a Constant node, whose single output is `name`.
Result<Tensor> ConstantValue(const onnx::NodeProto& proto, const std::string& name,
                             const std::string& where) {
  const onnx::AttributeProto& a = proto.attribute(0);
  if (a.name() == "value" && a.type() == onnx::AttributeProto::TENSOR) {
    auto converted = ConvertTensor(a.t(), name);
    if (!converted.ok()) return Fail(where + ": " + converted.error());
    return converted;
  }
  Tensor t;
  t.name = name;
  t.is_constant = true;
  t.shape_known = true;
  if (a.name() == "value_float") {
    AppendNarrowed<float>(std::vector<float>{a.f()}, &t.data);
  } else if (a.name() == "value_floats") {
    t.shape = {a.floats_size()};
    AppendNarrowed<float>(a.floats(), &t.data);
  } else if (a.name() == "value_int") {
    t.dtype = DType::Int64;
    AppendNarrowed<int64_t>(std::vector<int64_t>{a.i()}, &t.data);
  } else if (a.name() == "value_ints") {
    t.dtype = DType::Int64;
    t.shape = {a.ints_size()};
    AppendNarrowed<int64_t>(a.ints(), &t.data);
  } else {
    return Fail(where + ": unsupported Constant attribute '" + a.name() + "'");
  }
  return t;
}

// Softmax and LogSoftmax before opset 13 coerce their input to 2D at `axis`
// (default 1); the IR has opset 13's single-axis form, so make the axis explicit
// (CheckLegacySoftmax checks the two agree once shapes are known).
void AddLegacySoftmaxAxis(Node* node) {
  if (node->FindAttr("axis") != nullptr) return;
  Attr axis;
  axis.kind = Attr::Kind::kInt;
  axis.i = 1;
  node->attrs["axis"] = axis;
}

// Builds the graph IR of an ONNX graph: tensors by name, then nodes in the
// model's (topological) order.
class Importer {
 public:
  explicit Importer(const ImportOptions& options) : options_(options) {}

  Result<Graph> Run(const onnx::ModelProto& model, int64_t opset) {
    const onnx::GraphProto& g = model.graph();
    graph_.name = g.name();
    graph_.opset = opset;
    BATON_TRY(ImportInitializers(g));
    BATON_TRY(ImportInputs(g));
    BATON_TRY(ImportNodes(g, opset));
    for (const auto& output : g.output()) {
      const int t = Find(output.name());
      if (t < 0) {
        return Fail("graph output '" + output.name() + "' is not produced by any node");
      }
      graph_.outputs.push_back(t);
      Declare(output, t);
    }
    for (const auto& vi : g.value_info()) {
      const int t = Find(vi.name());
      if (t >= 0) Declare(vi, t);
    }
    BATON_TRY(TypeCustomOutputs());
    return std::move(graph_);
  }

  // Softmax/LogSoftmax nodes imported from opset < 13 (coerce-to-2D semantics).
  const std::vector<int>& legacy_softmax() const { return legacy_softmax_; }
  const std::vector<Declared>& declared() const { return declared_; }

 private:
  int Find(const std::string& name) const {
    auto it = index_.find(name);
    return it == index_.end() ? -1 : it->second;
  }
  int Add(Tensor t) {
    const std::string name = t.name;
    const int i = graph_.AddTensor(std::move(t));
    index_[name] = i;
    return i;
  }
  int FindOrAdd(const std::string& name) {
    const int t = Find(name);
    if (t >= 0) return t;
    Tensor tensor;
    tensor.name = name;
    return Add(std::move(tensor));
  }

  // Shapes known to ONNX are recorded, and compared with Baton's after
  // InferShapes (see CheckDeclaredShapes).
  void Declare(const onnx::ValueInfoProto& vi, int t) {
    if (graph_.tensors[t].is_constant || graph_.tensors[t].shape_known) return;
    Declared d;
    d.tensor = t;
    if (StaticType(vi, &d.dtype, &d.shape)) declared_.push_back(std::move(d));
  }

  Check ImportInitializers(const onnx::GraphProto& g) {
    for (const auto& init : g.initializer()) {
      if (index_.count(init.name())) {
        return Fail("initializer '" + init.name() + "' is defined twice");
      }
      BATON_ASSIGN_OR_RETURN(Tensor t, ConvertTensor(init, init.name()));
      Add(std::move(t));
    }
    return Check();
  }

  // After the initializers: an input that is also an initializer is a constant.
  Check ImportInputs(const onnx::GraphProto& g) {
    for (const auto& input : g.input()) {
      const int existing = Find(input.name());
      if (existing >= 0 && graph_.tensors[existing].is_constant) continue;  // an initializer
      if (existing >= 0) return Fail("graph input '" + input.name() + "' is listed twice");
      BATON_ASSIGN_OR_RETURN(Tensor t, InputTensor(input));
      graph_.inputs.push_back(Add(std::move(t)));
    }
    return Check();
  }

  Check ImportNodes(const onnx::GraphProto& g, int64_t opset) {
    const std::vector<std::string> names = NodeNames(g);
    BATON_TRY(CheckNodeOrder(g, names, [this](const std::string& name) { return Find(name) >= 0; }));
    BATON_TRY(CheckOpsSupported(g, names, options_));
    for (int i = 0; i < g.node_size(); ++i) {
      const onnx::NodeProto& proto = g.node(i);
      const std::string where = "node '" + names[i] + "' (op '" + proto.op_type() + "')";
      if (IsDeclaredCustom(proto, options_)) {
        BATON_ASSIGN_OR_RETURN(Node node, ConvertNode(proto, names[i], where, CustomOpName(proto)));
        graph_.nodes.push_back(std::move(node));
        continue;
      }
      if (proto.op_type() == "Slice" && opset < 10) {
        return Fail(where + ": Slice before opset 10 (attributes) is not supported; re-export "
                            "with opset 11 or later");
      }
      if (proto.op_type() == "Constant") {
        BATON_TRY(ImportConstant(proto, where));
        continue;
      }
      BATON_ASSIGN_OR_RETURN(Node node, ConvertNode(proto, names[i], where));
      if ((node.op == "Softmax" || node.op == "LogSoftmax") && opset < 13) {
        AddLegacySoftmaxAxis(&node);
        legacy_softmax_.push_back(static_cast<int>(graph_.nodes.size()));
      }
      graph_.nodes.push_back(std::move(node));
    }
    return Check();
  }

  // Every op Baton cannot plan (an unknown op type or another domain's op)
  // in one error. When there are such ops, the same error also names the
  // fold-only ops (ConstantOfShape, Range, Ceil, Floor, ReduceProd: no
  // kernel) whose inputs are not constant, found by propagating constness
  // through the ONNX graph: initializers and Constant outputs are constant,
  // Shape of a tensor with a static shape (as declared or as ONNX infers
  // it) is, and so is the output of any op Baton can evaluate on constant
  // inputs. Without unknown ops, shape inference and Simplify report those
  // exactly (CheckFoldOnlyOps).
  // Declared custom ops are supported, and never constant.
  static Check CheckOpsSupported(const onnx::GraphProto& g, const std::vector<std::string>& names,
                                 const ImportOptions& options) {
    std::vector<std::pair<std::string, std::string>> unsupported;
    std::vector<bool> unknown(g.node_size(), false);
    std::string example;  // the first unknown op, as --custom-op would name it
    for (int i = 0; i < g.node_size(); ++i) {
      const onnx::NodeProto& proto = g.node(i);
      if (IsDeclaredCustom(proto, options)) {
        unknown[i] = true;  // not an error: skipped by the constness walk below
        continue;
      }
      const bool known = IsDefaultDomain(proto.domain()) && IsSupportedOp(proto.op_type()) &&
                         proto.op_type() != "__copy";
      if (!known && example.empty()) example = CustomOpName(proto);
      if (!IsDefaultDomain(proto.domain())) {
        unsupported.emplace_back(proto.op_type() + " (domain '" + proto.domain() + "')", names[i]);
        unknown[i] = true;
      } else if (!IsSupportedOp(proto.op_type()) || proto.op_type() == "__copy") {
        unsupported.emplace_back(proto.op_type(), names[i]);
        unknown[i] = true;
      }
    }
    if (unsupported.empty()) return Check();
    std::set<std::string> constant, static_shape;
    for (const auto& init : g.initializer()) constant.insert(init.name());
    auto note_static = [&](const onnx::ValueInfoProto& vi) {
      DType dtype;
      std::vector<int64_t> shape;
      if (StaticType(vi, &dtype, &shape)) static_shape.insert(vi.name());
    };
    for (const auto& vi : g.input()) note_static(vi);
    for (const auto& vi : g.value_info()) note_static(vi);
    for (int i = 0; i < g.node_size(); ++i) {
      const onnx::NodeProto& proto = g.node(i);
      if (unknown[i]) continue;
      const std::string& op = proto.op_type();
      bool all_constant = true;
      for (const std::string& in : proto.input()) {
        if (!in.empty() && !constant.count(in)) all_constant = false;
      }
      const OpDef* def = FindOp(op);
      bool out_constant = op == "Constant" || (all_constant && def != nullptr && def->eval != nullptr);
      if (op == "Shape" && proto.input_size() > 0 && static_shape.count(proto.input(0))) {
        out_constant = true;
      }
      if (out_constant) {
        for (const std::string& out : proto.output()) constant.insert(out);
      } else if (def != nullptr && !def->has_kernel && def->eval != nullptr && op != "Shape" &&
                 op != "Dropout") {
        unsupported.emplace_back(op + " (fold-only, an input is not constant)", names[i]);
      }
    }
    if (example.empty()) return Fail(UnsupportedOpsMessage(unsupported));
    return Fail(UnsupportedOpsMessage(unsupported) +
                "; an op whose kernel the application provides can be declared a custom op: "
                "baton plan --custom-op DOMAIN::NAME (here e.g. --custom-op " +
                example +
                "), or list \"DOMAIN::NAME\" in a target device's \"ops\" (docs/porting.md, "
                "Custom ops)");
  }

  // ConstantOfShape's `value` tensor attribute (one element) becomes a scalar
  // attribute `value` (float, or int holding any integer or bool) and
  // `value_dtype`.
  static Check ConvertConstantOfShapeValue(const onnx::AttributeProto& a, const std::string& where,
                                           Node* node) {
    auto converted = ConvertTensor(a.t(), "value");
    if (!converted.ok()) return Fail(where + ": " + converted.error());
    const Tensor& t = *converted;
    if (t.elements() != 1) {
      return Fail(where + ": attribute 'value' must hold one element, it has " +
                  std::to_string(t.elements()));
    }
    Attr value;
    if (t.dtype == DType::Float32) {
      value.kind = Attr::Kind::kFloat;
      value.f = t.FloatData()[0];
    } else {
      value.kind = Attr::Kind::kInt;
      internal::VisitDType(t.dtype, [&](auto zero) {
        using T = decltype(zero);
        value.i = static_cast<int64_t>(internal::Values<T>(t)[0]);
      });
    }
    Attr dtype;
    dtype.kind = Attr::Kind::kString;
    dtype.s = DTypeName(t.dtype);
    node->attrs["value"] = value;
    node->attrs["value_dtype"] = dtype;
    return Check();
  }

  // A node with its attributes, and its inputs and outputs as tensors (the
  // outputs new ones).
  // `custom_op`: the node's custom-op name, or "" for a built-in op.
  Result<Node> ConvertNode(const onnx::NodeProto& proto, const std::string& name,
                           const std::string& where, const std::string& custom_op = "") {
    Node node;
    node.name = name;
    node.op = custom_op.empty() ? proto.op_type() : custom_op;
    for (const auto& a : proto.attribute()) {
      if (!custom_op.empty()) {
        BATON_ASSIGN_OR_RETURN(Attr attr, ConvertAttr(a, where, /*custom=*/true));
        node.attrs[a.name()] = std::move(attr);
        continue;
      }
      if (node.op == "ConstantOfShape" && a.name() == "value" &&
          a.type() == onnx::AttributeProto::TENSOR) {
        BATON_TRY(ConvertConstantOfShapeValue(a, where, &node));
        continue;
      }
      BATON_ASSIGN_OR_RETURN(Attr attr, ConvertAttr(a, where));
      node.attrs[a.name()] = std::move(attr);
    }
    for (const std::string& in : proto.input()) {
      if (in.empty()) {
        node.inputs.push_back(-1);
        continue;
      }
      const int t = Find(in);
      if (t < 0) {
        // ONNX lists nodes in topological order, so this is a dangling name.
        return Fail(where + " reads '" + in +
                    "' which no node produces and is not a graph input or initializer");
      }
      node.inputs.push_back(t);
    }
    while (!node.inputs.empty() && node.inputs.back() < 0) node.inputs.pop_back();
    // Omitted optional outputs (Dropout's mask...) are trailing "" names.
    int n_outputs = proto.output_size();
    while (n_outputs > 0 && proto.output(n_outputs - 1).empty()) --n_outputs;
    for (int k = 0; k < n_outputs; ++k) {
      std::string out = proto.output(k);
      if (out.empty()) {
        // An omitted output before a used one (LSTM's Y when only Y_h is
        // read): it still exists, under a name of its own.
        out = (proto.name().empty() ? proto.op_type() : proto.name()) + ":unused_output" +
              std::to_string(k);
      }
      if (Find(out) >= 0) return Fail(where + ": output '" + out + "' is already defined");
      node.outputs.push_back(FindOrAdd(out));
    }
    return node;
  }

  Check ImportConstant(const onnx::NodeProto& proto, const std::string& where) {
    if (proto.output_size() != 1) return Fail(where + ": Constant must have one output");
    if (proto.attribute_size() != 1) {
      return Fail(where + ": Constant must have one value attribute");
    }
    const std::string& out = proto.output(0);
    if (Find(out) >= 0) return Fail(where + ": output '" + out + "' is already defined");
    BATON_ASSIGN_OR_RETURN(Tensor t, ConstantValue(proto, out, where));
    Add(std::move(t));
    return Check();
  }

  // Baton cannot infer a custom op's outputs: they take the dtype and
  // static shape the model declares (value_info, graph outputs).
  Check TypeCustomOutputs() {
    std::map<int, const Declared*> declared;
    for (const Declared& d : declared_) declared.emplace(d.tensor, &d);
    for (const Node& node : graph_.nodes) {
      if (!IsCustomOp(node.op)) continue;
      for (int t : node.outputs) {
        Tensor& tensor = graph_.tensors[t];
        auto it = declared.find(t);
        // Baton's own post-processing ops: InferShapes infers their outputs
        // and checks any declared type against the inference.
        if (it == declared.end() && IsPostprocessOp(node.op)) continue;
        if (it == declared.end()) {
          return Fail(
              "node '" + node.name + "' (custom op '" + node.op + "'): output '" + tensor.name +
              "' has no static shape and dtype in the model; Baton cannot "
              "infer a custom op's outputs, so annotate '" +
              tensor.name + "' (a value_info or graph output entry with elem_type and every dim)");
        }
        if (!ShapeFits(it->second->shape)) {
          return Fail("node '" + node.name + "': output '" + tensor.name + "' is too large");
        }
        tensor.dtype = it->second->dtype;
        tensor.shape = it->second->shape;
        tensor.shape_known = true;
      }
    }
    return Check();
  }

  const ImportOptions& options_;
  Graph graph_;
  std::map<std::string, int> index_;
  std::vector<int> legacy_softmax_;
  std::vector<Declared> declared_;
};

// Softmax (and LogSoftmax) before opset 13 normalizes over all dims from
// `axis` on; that is opset 13's op over `axis` only when the dims after it
// are all 1.
Check CheckLegacySoftmax(Graph* graph, const std::vector<int>& nodes) {
  for (int n : nodes) {
    Node& node = graph->nodes[n];
    const Tensor& x = graph->tensors[node.inputs[0]];
    const int64_t rank = static_cast<int64_t>(x.shape.size());
    int64_t axis = node.GetInt("axis", 1);
    if (axis < 0) axis += rank;
    for (int64_t d = axis + 1; d < rank; ++d) {
      if (x.shape[d] != 1) {
        return Fail("node '" + node.name + "': " + node.op + " (opset < 13) over dims " +
                    std::to_string(axis) + ".." + std::to_string(rank - 1) + " of '" + x.name +
                    "' is not supported; export with opset 13 or later");
      }
    }
    node.attrs["axis"].i = axis;
  }
  return Check();
}

// ONNX before 1.16 sized ceil_mode pools without the rule that the last
// window must start inside the input or its begin padding (PyTorch and
// onnxruntime apply it; InferShapes does too), and exporters write those
// sizes into the model. True if that rule changes any pool's output here.
bool CeilRuleChangesShapes(const Graph& graph) {
  for (const Node& node : graph.nodes) {
    if ((node.op != "MaxPool" && node.op != "AveragePool") || node.GetInt("ceil_mode", 0) == 0) {
      continue;
    }
    const std::vector<int64_t>& x = graph.tensors[node.inputs[0]].shape;
    const std::vector<int64_t>& y = graph.tensors[node.outputs[0]].shape;
    const size_t r = x.size() - 2;
    const std::vector<int64_t> kernel = node.GetInts("kernel_shape");
    std::vector<int64_t> strides = node.GetInts("strides");
    std::vector<int64_t> dilations = node.GetInts("dilations");
    if (strides.empty()) strides.assign(r, 1);
    if (dilations.empty()) dilations.assign(r, 1);
    auto pads = internal::ResolvePads(node, std::vector<int64_t>(x.begin() + 2, x.end()), kernel,
                                      strides, dilations);
    if (!pads.ok()) continue;  // InferShapes accepted the node, so unreachable
    for (size_t i = 0; i < r; ++i) {
      const int64_t span =
          x[2 + i] + (*pads)[i] + (*pads)[i + r] - dilations[i] * (kernel[i] - 1) - 1;
      if ((span + strides[i] - 1) / strides[i] + 1 != y[2 + i]) return true;
    }
  }
  return false;
}

Check CheckDeclaredShapes(const Graph& graph, const std::vector<Declared>& declared) {
  if (CeilRuleChangesShapes(graph)) return Check();  // ONNX's shapes are stale
  for (const Declared& d : declared) {
    const Tensor& t = graph.tensors[d.tensor];
    if (t.shape != d.shape || t.dtype != d.dtype) {
      return Fail("tensor '" + t.name + "': the model declares " + DTypeName(d.dtype) + " " +
                  internal::ShapeString(d.shape) + " but Baton infers " + DTypeName(t.dtype) + " " +
                  internal::ShapeString(t.shape));
    }
  }
  return Check();
}

// The version of the default-domain opset the model imports, if supported.
Result<int64_t> DefaultOpset(const onnx::ModelProto& model) {
  int64_t opset = -1;
  for (const auto& import : model.opset_import()) {
    if (IsDefaultDomain(import.domain())) opset = import.version();
  }
  if (opset < 0) return Fail("model does not import the default ONNX opset");
  if (opset < kMinOpset || opset > kMaxOpset) {
    return Fail("model uses opset " + std::to_string(opset) + "; Baton supports opsets " +
                std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset) +
                " (re-export, e.g. with opset_version=13)");
  }
  return opset;
}

// ONNX's inference adds shapes to check ours against. It rejects models
// whose declared shapes disagree with its own (ONNX 1.12) rules; then the
// model is imported as written and InferShapes has the last word.
// Bytes per element of an ONNX tensor type; 0 where unknown (strings).
size_t OnnxElementBytes(int32_t type) {
  switch (type) {
    case onnx::TensorProto::UINT8: case onnx::TensorProto::INT8: case onnx::TensorProto::BOOL:
      return 1;
    case onnx::TensorProto::UINT16: case onnx::TensorProto::INT16:
    case onnx::TensorProto::FLOAT16: case onnx::TensorProto::BFLOAT16:
      return 2;
    case onnx::TensorProto::FLOAT: case onnx::TensorProto::INT32: case onnx::TensorProto::UINT32:
      return 4;
    case onnx::TensorProto::INT64: case onnx::TensorProto::UINT64: case onnx::TensorProto::DOUBLE:
    case onnx::TensorProto::COMPLEX64:
      return 8;
    case onnx::TensorProto::COMPLEX128:
      return 16;
    default:
      return 0;
  }
}

// False when some tensor's raw_data is not a whole number of elements:
// ONNX 1.12's data propagation (ParseData) then copies into an empty vector
// and crashes (fuzz_onnx found it). Such a model is left to Baton's own
// checks, which reject it with a message.
bool RawDataWhole(const onnx::GraphProto& graph) {
  auto whole = [](const onnx::TensorProto& t) {
    const size_t bytes = OnnxElementBytes(t.data_type());
    return !t.has_raw_data() || bytes == 0 || t.raw_data().size() % bytes == 0;
  };
  for (const onnx::TensorProto& t : graph.initializer()) {
    if (!whole(t)) return false;
  }
  for (const onnx::NodeProto& node : graph.node()) {
    for (const onnx::AttributeProto& attr : node.attribute()) {
      if (attr.has_t() && !whole(attr.t())) return false;
      for (const onnx::TensorProto& t : attr.tensors()) {
        if (!whole(t)) return false;
      }
      if (attr.has_g() && !RawDataWhole(attr.g())) return false;
      for (const onnx::GraphProto& g : attr.graphs()) {
        if (!RawDataWhole(g)) return false;
      }
    }
  }
  return true;
}

// ONNX 1.12's Conv/pool shape inference divides by the strides (and uses the
// kernel and dilations) unchecked: a zero or negative value is a division by
// zero inside libonnx (fuzz_onnx found it). Such models skip ONNX's
// inference; our own checks reject them with a message. Its QLinearConv and
// ConvInteger inference reads out of bounds on a malformed node (fuzz_onnx:
// a rank-3 input with a rank-4 weight and an undefined scale, SEGV inside
// libonnx), so models with those ops skip it too: the importer lowers them
// and Baton's own inference covers them.
bool WindowAttrsPositive(const onnx::GraphProto& graph) {
  for (const onnx::NodeProto& node : graph.node()) {
    if (node.op_type() == "QLinearConv" || node.op_type() == "ConvInteger") return false;
    for (const onnx::AttributeProto& attr : node.attribute()) {
      if (attr.name() == "strides" || attr.name() == "dilations" ||
          attr.name() == "kernel_shape") {
        for (int64_t v : attr.ints()) {
          if (v <= 0) return false;
        }
      }
      if (attr.has_g() && !WindowAttrsPositive(attr.g())) return false;
      for (const onnx::GraphProto& g : attr.graphs()) {
        if (!WindowAttrsPositive(g)) return false;
      }
    }
  }
  return true;
}

// ONNX 1.12's data propagation (Concat of Shape-derived values feeding a
// Reshape) dereferences a null value when a node reads a name nothing
// defines before it (fuzz_onnx: a Concat of an undefined tensor, SEGV inside
// libonnx). Such models skip ONNX's inference; CheckNodeOrder and the
// dangling-name check then reject them with a message. Subgraphs, which may
// read outer names, are not looked into.
bool InputsDefinedInOrder(const onnx::GraphProto& graph) {
  std::set<std::string> defined;
  for (const onnx::ValueInfoProto& in : graph.input()) defined.insert(in.name());
  for (const onnx::TensorProto& init : graph.initializer()) defined.insert(init.name());
  for (const onnx::NodeProto& node : graph.node()) {
    for (const std::string& in : node.input()) {
      if (!in.empty() && defined.count(in) == 0) return false;
    }
    for (const std::string& out : node.output()) defined.insert(out);
  }
  return true;
}

void AddOnnxShapes(onnx::ModelProto* model) {
  if (!RawDataWhole(model->graph()) || !WindowAttrsPositive(model->graph()) ||
      !InputsDefinedInOrder(model->graph())) {
    return;
  }
  onnx::ModelProto inferred = *model;
  try {
    onnx::ShapeInferenceOptions options(/*check_type_val=*/false, /*strict_mode_val=*/0,
                                        /*data_prop_val=*/true);
    onnx::shape_inference::InferShapes(inferred, onnx::OpSchemaRegistry::Instance(), options);
    model->Swap(&inferred);
  } catch (const std::exception&) {
  }
}

Result<Graph> ImportModelBytes(const std::string& bytes, const ImportOptions& options) {
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) return Fail("not a valid ONNX model (protobuf parse failed)");
  if (!model.has_graph()) return Fail("model has no graph");
  BATON_ASSIGN_OR_RETURN(int64_t opset, DefaultOpset(model));
  // External data must be rejected before ONNX's shape inference sees it.
  for (const auto& init : model.graph().initializer()) {
    if (UsesExternalData(init)) {
      return Fail("model uses external data for tensor '" + init.name() +
                  "'; re-export with weights embedded");
    }
  }
  AddOnnxShapes(&model);
  // Before the supported-op check: the pattern's Pow and Sqrt need no
  // definition of their own.
  internal::FuseDecomposedLayerNorm(model.mutable_graph());
  // QLinearConv, QLinearMatMul and com.microsoft's QLinear ops become their
  // QDQ form, which Baton runs.
  internal::LowerQLinearOps(model.mutable_graph());

  Importer importer(options);
  BATON_ASSIGN_OR_RETURN(Graph graph, importer.Run(model, opset));
  BATON_TRY(Validate(graph));
  BATON_TRY(CheckImportedArity(graph));
  BATON_TRY(InferShapes(&graph));
  BATON_TRY(CheckDeclaredShapes(graph, importer.declared()));
  BATON_TRY(CheckLegacySoftmax(&graph, importer.legacy_softmax()));
  BATON_TRY(Simplify(&graph));
  return graph;
}

}  // namespace

Result<Graph> ImportOnnx(const std::string& path, const ImportOptions& options) {
  auto bytes = ReadFile(path);
  if (!bytes.ok()) return Fail(bytes.error());
  auto graph = ImportModelBytes(*bytes, options);
  if (!graph.ok()) return Fail(path + ": " + graph.error());
  if (graph->name.empty()) {
    const size_t slash = path.find_last_of('/');
    std::string stem = slash == std::string::npos ? path : path.substr(slash + 1);
    const size_t dot = stem.rfind('.');
    graph->name = dot == std::string::npos ? stem : stem.substr(0, dot);
  }
  return graph;
}

}  // namespace baton::planner
