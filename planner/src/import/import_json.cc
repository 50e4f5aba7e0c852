#include "baton/planner/import/import_json.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>

#include "baton/planner/import/import_onnx.h"
#include "baton/planner/import/shapes.h"
#include "baton/planner/io/npy.h"
#include "baton/planner/ops/postprocess.h"
#include "import/json_fields.h"

namespace baton::planner {
namespace {

using internal::json;
using internal::ListNeed;

void FlattenNumbers(const json& v, std::vector<const json*>* out) {
  if (v.is_array()) {
    for (const json& e : v) FlattenNumbers(e, out);
  } else {
    out->push_back(&v);
  }
}

// True if `v` is an integer beyond int64's range, which get<int64_t> would wrap.
bool BeyondInt64(const json& v) {
  return v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX);
}

Result<std::vector<int64_t>> ParseShape(const json& v, const std::string& where) {
  if (!v.is_array()) return Fail(where + ": 'shape' must be a list of integers");
  std::vector<int64_t> shape;
  for (const json& d : v) {
    if (!d.is_number_integer() || BeyondInt64(d) || d.get<int64_t>() < 0) {
      return Fail(where + ": 'shape' must be a list of non-negative integers");
    }
    shape.push_back(d.get<int64_t>());
  }
  if (!ShapeFits(shape)) return Fail(where + ": 'shape' " + v.dump() + " is too large (2^63 bytes or more)");
  return shape;
}

Result<DType> ParseDTypeField(const json& obj, const std::string& where) {
  BATON_ASSIGN_OR_RETURN(std::string name, internal::OptionalString(obj, "dtype", "float32", where));
  auto dtype = ParseDType(name);
  if (!dtype) return Fail(where + ": unknown dtype '" + name + "'");
  return *dtype;
}

// A JSON number as a float32; values beyond float's range are errors (the
// conversion would be undefined).
Result<float> FloatValue(const json& v, const std::string& where) {
  const double d = v.get<double>();
  if (!(std::fabs(d) <= static_cast<double>(std::numeric_limits<float>::max()))) {
    return Fail(where + " is out of float32 range");
  }
  return static_cast<float>(d);
}

// The values an integer dtype holds.
std::pair<int64_t, int64_t> IntRange(DType dtype) {
  switch (dtype) {
    case DType::Int32: return {INT32_MIN, INT32_MAX};
    case DType::UInt8: return {0, 255};
    case DType::Int8: return {-128, 127};
    case DType::Bool: return {0, 1};
    default: return {INT64_MIN, INT64_MAX};
  }
}

Result<Attr> ParseAttr(const json& v, const std::string& where) {
  Attr a;
  if (BeyondInt64(v)) return Fail(where + ": " + v.dump() + " is out of int64 range");
  if (v.is_array()) {
    for (const json& e : v) {
      if (BeyondInt64(e)) return Fail(where + ": " + e.dump() + " is out of int64 range");
    }
  }
  if (v.is_number_integer() || v.is_boolean()) {
    a.kind = Attr::Kind::kInt;
    a.i = v.is_boolean() ? (v.get<bool>() ? 1 : 0) : v.get<int64_t>();
  } else if (v.is_number()) {
    a.kind = Attr::Kind::kFloat;
    BATON_ASSIGN_OR_RETURN(a.f, FloatValue(v, where));
  } else if (v.is_string()) {
    a.kind = Attr::Kind::kString;
    a.s = v.get<std::string>();
  } else if (v.is_array() && !v.empty() &&
             std::all_of(v.begin(), v.end(), [](const json& e) { return e.is_string(); })) {
    a.kind = Attr::Kind::kStrings;  // custom ops only (ReadNode checks)
    for (const json& e : v) a.strings.push_back(e.get<std::string>());
  } else if (v.is_array()) {
    bool all_int = true;
    for (const json& e : v) {
      if (!e.is_number()) return Fail(where + ": list attributes must hold numbers");
      all_int &= e.is_number_integer();
    }
    if (all_int) {
      a.kind = Attr::Kind::kInts;
      for (const json& e : v) a.ints.push_back(e.get<int64_t>());
    } else {
      a.kind = Attr::Kind::kFloats;
      for (const json& e : v) {
        BATON_ASSIGN_OR_RETURN(float f, FloatValue(e, where));
        a.floats.push_back(f);
      }
    }
  } else {
    return Fail(where + ": unsupported attribute value " + v.dump());
  }
  return a;
}

Check FillInline(const json& data, Tensor* t, const std::string& where) {
  std::vector<const json*> values;
  FlattenNumbers(data, &values);
  if (static_cast<int64_t>(values.size()) != t->elements()) {
    return Fail(where + ": 'data' has " + std::to_string(values.size()) + " values, shape needs " +
                std::to_string(t->elements()));
  }
  t->data.resize(t->bytes());
  for (size_t i = 0; i < values.size(); ++i) {
    const json& v = *values[i];
    if (!v.is_number()) return Fail(where + ": 'data' must hold numbers");
    uint8_t* dst = t->data.data() + i * DTypeBytes(t->dtype);
    if (t->dtype == DType::Float32) {
      BATON_ASSIGN_OR_RETURN(float f, FloatValue(v, where + ": 'data' value " + v.dump()));
      std::memcpy(dst, &f, 4);
      continue;
    }
    // Integer dtypes take integers in the dtype's range, never a wrapped or
    // truncated value.
    const auto [lo, hi] = IntRange(t->dtype);
    const bool in_range = v.is_number_unsigned()
                              ? v.get<uint64_t>() <= static_cast<uint64_t>(hi)
                              : v.is_number_integer() && v.get<int64_t>() >= lo && v.get<int64_t>() <= hi;
    if (!in_range) {
      return Fail(where + ": 'data' value " + v.dump() + " is not a " + DTypeName(t->dtype) +
                  " (an integer from " + std::to_string(lo) + " to " + std::to_string(hi) + ")");
    }
    const int64_t x = v.is_number_unsigned() ? static_cast<int64_t>(v.get<uint64_t>()) : v.get<int64_t>();
    switch (t->dtype) {
      case DType::Float32: break;
      case DType::Int32: { int32_t y = static_cast<int32_t>(x); std::memcpy(dst, &y, 4); break; }
      case DType::Int64: std::memcpy(dst, &x, 8); break;
      case DType::UInt8: { uint8_t y = static_cast<uint8_t>(x); std::memcpy(dst, &y, 1); break; }
      case DType::Int8: { int8_t y = static_cast<int8_t>(x); std::memcpy(dst, &y, 1); break; }
      case DType::Bool: { uint8_t y = static_cast<uint8_t>(x); std::memcpy(dst, &y, 1); break; }
    }
  }
  return {};
}

std::string Join(const std::string& dir, const std::string& file) {
  if (file.empty() || file[0] == '/' || dir.empty()) return file;
  return dir + "/" + file;
}

// An initializer's value from its .npy file; a declared dtype or shape must
// agree with the file's.
Check ReadInitializerFile(const json& init, const std::string& base_dir, const std::string& where,
                          Tensor* t) {
  if (!init["file"].is_string()) return Fail(where + ": 'file' must be a string");
  BATON_ASSIGN_OR_RETURN(NpyArray arr, ReadNpy(Join(base_dir, init["file"].get<std::string>())));
  t->dtype = arr.dtype;
  t->shape = arr.shape;
  t->data = std::move(arr.data);
  if (init.contains("dtype")) {
    BATON_ASSIGN_OR_RETURN(DType declared, ParseDTypeField(init, where));
    if (declared != t->dtype) return Fail(where + ": dtype does not match the .npy file");
  }
  if (init.contains("shape")) {
    BATON_ASSIGN_OR_RETURN(std::vector<int64_t> declared, ParseShape(init["shape"], where));
    if (declared != t->shape) return Fail(where + ": shape does not match the .npy file");
  }
  return {};
}

// An initializer's value: inline "data" with "shape" (and "dtype"), or a
// .npy "file".
Check FillInitializer(const json& init, const std::string& base_dir, const std::string& where,
                      Tensor* t) {
  t->is_constant = true;
  if (init.contains("file")) return ReadInitializerFile(init, base_dir, where, t);
  if (!init.contains("shape")) return Fail(where + ": needs 'shape'");
  BATON_ASSIGN_OR_RETURN(t->dtype, ParseDTypeField(init, where));
  BATON_ASSIGN_OR_RETURN(t->shape, ParseShape(init["shape"], where));
  if (!init.contains("data")) return Fail(where + ": needs 'data' or 'file'");
  return FillInline(init["data"], t, where);
}

Check FillInput(const json& in, const std::string& where, Tensor* t) {
  BATON_ASSIGN_OR_RETURN(t->dtype, ParseDTypeField(in, where));
  if (!in.contains("shape")) return Fail(where + ": needs 'shape'");
  BATON_ASSIGN_OR_RETURN(t->shape, ParseShape(in["shape"], where));
  return {};
}

// Adds a tensor of known shape for every entry of the list `key` ("inputs",
// whose entries errors call `kind`, "input"): a new name, then
// `fill(entry, where, &tensor)`. Returns the new tensors' indices.
template <typename Fill>
Result<std::vector<int>> AddTensors(const json& root, const char* key, ListNeed need,
                                    const char* kind, const std::string& what, Graph* g,
                                    Fill fill) {
  BATON_ASSIGN_OR_RETURN(const json* list, internal::ListField(root, key, need, what));
  std::vector<int> added;
  for (size_t i = 0; i < list->size(); ++i) {
    const json& entry = (*list)[i];
    BATON_ASSIGN_OR_RETURN(internal::NamedEntry e,
                           internal::ReadNamedEntry(entry, what, key, i, kind, true));
    if (g->FindTensor(e.name) >= 0) return Fail(e.where + ": duplicate tensor name");
    Tensor t;
    t.name = e.name;
    BATON_TRY(fill(entry, e.where, &t));
    t.shape_known = true;
    added.push_back(g->AddTensor(std::move(t)));
  }
  return added;
}

// Adds every node's output tensors before any node is read, so inputs can
// name later nodes' outputs (Validate reports cycles and dangling names
// clearly).
Check DeclareNodeOutputs(const json& nodes, const std::string& what, Graph* g) {
  for (size_t i = 0; i < nodes.size(); ++i) {
    const json& jn = nodes[i];
    BATON_ASSIGN_OR_RETURN(internal::NamedEntry e,
                           internal::ReadNamedEntry(jn, what, "nodes", i, "node", true));
    if (!jn.contains("outputs") || !jn["outputs"].is_array() || jn["outputs"].empty()) {
      return Fail(e.where + ": 'outputs' must be a non-empty list of names");
    }
    for (const json& o : jn["outputs"]) {
      if (!o.is_string()) return Fail(e.where + ": output names must be strings");
      if (g->FindTensor(o.get<std::string>()) >= 0) {
        return Fail(e.where + ": output '" + o.get<std::string>() +
                    "' is already produced by another node, an input or an initializer");
      }
      Tensor t;
      t.name = o.get<std::string>();
      g->AddTensor(std::move(t));
    }
  }
  return {};
}

// A custom op's "output_types": per output, {"dtype", "shape"} (Baton
// cannot infer a custom op's outputs).
Check ReadOutputTypes(const json& jn, const std::string& where, Node* n, Graph* g) {
  if (!jn.contains("output_types") || !jn["output_types"].is_array() ||
      jn["output_types"].size() != n->outputs.size()) {
    return Fail(where + ": custom op '" + n->op +
                "' needs 'output_types', one {\"dtype\", "
                "\"shape\"} per output (Baton cannot infer a custom op's outputs)");
  }
  for (size_t k = 0; k < n->outputs.size(); ++k) {
    const json& type = jn["output_types"][k];
    Tensor& t = g->tensors[n->outputs[k]];
    const std::string at = where + ": output_types[" + std::to_string(k) + "] ('" + t.name + "')";
    if (!type.is_object() || !type.contains("shape")) {
      return Fail(at + ": must be an object with 'dtype' and 'shape'");
    }
    BATON_ASSIGN_OR_RETURN(t.dtype, ParseDTypeField(type, at));
    BATON_ASSIGN_OR_RETURN(t.shape, ParseShape(type["shape"], at));
    t.shape_known = true;
  }
  return {};
}

// A node whose names DeclareNodeOutputs has checked.
Result<Node> ReadNode(const json& jn, Graph& g, const std::string& what,
                      const ImportOptions& options) {
  Node n;
  n.name = jn["name"].get<std::string>();
  const std::string where = what + ": node '" + n.name + "'";
  if (!jn.contains("op") || !jn["op"].is_string()) return Fail(where + ": needs a string 'op'");
  n.op = jn["op"].get<std::string>();
  BATON_ASSIGN_OR_RETURN(const json* inputs,
                         internal::ListField(jn, "inputs", ListNeed::kOptional, where));
  for (const json& in : *inputs) {
    if (in.is_null() || (in.is_string() && in.get<std::string>().empty())) {
      n.inputs.push_back(-1);
      continue;
    }
    if (!in.is_string()) return Fail(where + ": input names must be strings");
    int t = g.FindTensor(in.get<std::string>());
    if (t < 0) {
      return Fail(where + ": input '" + in.get<std::string>() +
                  "' is not a graph input, an initializer or any node's output");
    }
    n.inputs.push_back(t);
  }
  for (const json& o : jn["outputs"]) n.outputs.push_back(g.FindTensor(o.get<std::string>()));
  if (jn.contains("attrs")) {
    if (!jn["attrs"].is_object()) return Fail(where + ": 'attrs' must be an object");
    for (auto it = jn["attrs"].begin(); it != jn["attrs"].end(); ++it) {
      BATON_ASSIGN_OR_RETURN(Attr a,
                             ParseAttr(it.value(), where + ": attribute '" + it.key() + "'"));
      if (a.kind == Attr::Kind::kStrings && !IsCustomOp(n.op)) {
        return Fail(where + ": attribute '" + it.key() + "': list attributes must hold numbers");
      }
      n.attrs[it.key()] = std::move(a);
    }
  }
  if (jn.contains("device")) {
    if (!jn["device"].is_string()) return Fail(where + ": 'device' must be a string");
    n.device = jn["device"].get<std::string>();
  }
  if (IsCustomOp(n.op)) {
    if (!options.Declares(n.op)) {
      return Fail(where + ": custom op '" + n.op +
                  "' is not declared; declare it with "
                  "baton plan --custom-op " +
                  n.op + " or list it in a target device's \"ops\"");
    }
    // Baton infers its own post-processing ops' outputs; types given anyway
    // are checked against the inference (InferShapes).
    if (!IsPostprocessOp(n.op) || jn.contains("output_types")) {
      BATON_TRY(ReadOutputTypes(jn, where, &n, &g));
    }
  }
  return n;
}

Check ReadNodes(const json& root, const std::string& what, const ImportOptions& options, Graph* g) {
  BATON_ASSIGN_OR_RETURN(const json* nodes,
                         internal::ListField(root, "nodes", ListNeed::kRequired, what));
  BATON_TRY(DeclareNodeOutputs(*nodes, what, g));
  for (const json& jn : *nodes) {
    BATON_ASSIGN_OR_RETURN(Node n, ReadNode(jn, *g, what, options));
    g->nodes.push_back(std::move(n));
  }
  return {};
}

Check ReadOutputs(const json& root, const std::string& what, Graph* g) {
  if (!root.contains("outputs") || !root["outputs"].is_array() || root["outputs"].empty()) {
    return Fail(what + ": 'outputs' must be a non-empty list of tensor names");
  }
  for (const json& o : root["outputs"]) {
    if (!o.is_string()) return Fail(what + ": output names must be strings");
    int t = g->FindTensor(o.get<std::string>());
    if (t < 0) return Fail(what + ": graph output '" + o.get<std::string>() + "' is not defined");
    g->outputs.push_back(t);
  }
  return {};
}

}  // namespace

Result<Graph> ParseGraphJson(const std::string& text, const std::string& base_dir,
                             const std::string& what, const ImportOptions& options) {
  BATON_ASSIGN_OR_RETURN(json root, internal::ParseJsonObject(text, what, "graph"));
  Graph g;
  BATON_ASSIGN_OR_RETURN(g.name, internal::OptionalString(root, "name", "graph", what));
  // Initializers and inputs first, so nodes can refer to them by name.
  auto fill_initializer = [&](const json& init, const std::string& where, Tensor* t) {
    return FillInitializer(init, base_dir, where, t);
  };
  BATON_TRY(AddTensors(root, "initializers", ListNeed::kOptional, "initializer", what, &g,
                       fill_initializer));
  BATON_ASSIGN_OR_RETURN(
      g.inputs, AddTensors(root, "inputs", ListNeed::kRequired, "input", what, &g, FillInput));
  BATON_TRY(ReadNodes(root, what, options, &g));
  BATON_TRY(ReadOutputs(root, what, &g));
  Check valid = Validate(g);
  if (valid.ok()) valid = CheckImportedArity(g);
  if (!valid.ok()) return Fail(what + ": " + valid.error());
  Check shapes = InferShapes(&g);
  if (!shapes.ok()) return Fail(what + ": " + shapes.error());
  return g;
}

Result<Graph> ImportJson(const std::string& path, const ImportOptions& options) {
  BATON_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  size_t slash = path.find_last_of('/');
  std::string dir = slash == std::string::npos ? "" : path.substr(0, slash);
  return ParseGraphJson(text, dir, path, options);
}

Result<Graph> ImportModel(const std::string& path, const ImportOptions& options) {
  const std::string ext = ".onnx";
  if (path.size() >= ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0) {
    return ImportOnnx(path, options);
  }
  return ImportJson(path, options);
}

}  // namespace baton::planner
