#include "baton/planner/graph.h"

#include "baton/planner/ops/op_def.h"
#include "baton/planner/ops/postprocess.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <queue>
#include <set>

namespace baton::planner {

std::optional<DType> ParseDType(const std::string& name) {
  if (name == "float32") return DType::Float32;
  if (name == "int32") return DType::Int32;
  if (name == "int64") return DType::Int64;
  if (name == "uint8") return DType::UInt8;
  if (name == "int8") return DType::Int8;
  if (name == "bool") return DType::Bool;
  return std::nullopt;
}

const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::Float32:
      return "float32";
    case DType::Int32:
      return "int32";
    case DType::Int64:
      return "int64";
    case DType::UInt8:
      return "uint8";
    case DType::Int8:
      return "int8";
    case DType::Bool:
      return "bool";
  }
  return "unknown";
}

size_t DTypeBytes(DType dtype) {
  switch (dtype) {
    case DType::Float32:
      return 4;
    case DType::Int32:
      return 4;
    case DType::Int64:
      return 8;
    case DType::UInt8:
      return 1;
    case DType::Int8:
    case DType::Bool:
      return 1;
  }
  return 0;
}

bool ShapeFits(const std::vector<int64_t>& shape) {
  int64_t bytes = 8;
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(bytes, d, &bytes)) return false;
  }
  return true;
}

int64_t Tensor::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<float> Tensor::FloatData() const {
  if (dtype != DType::Float32) return {};
  std::vector<float> out(data.size() / sizeof(float));
  if (!out.empty()) std::memcpy(out.data(), data.data(), out.size() * sizeof(float));
  return out;
}

std::vector<int64_t> Tensor::IntData() const {
  if (dtype == DType::Int64) {
    std::vector<int64_t> out(data.size() / sizeof(int64_t));
    if (!out.empty()) std::memcpy(out.data(), data.data(), out.size() * sizeof(int64_t));
    return out;
  }
  if (dtype == DType::Int32) {
    std::vector<int32_t> narrow(data.size() / sizeof(int32_t));
    if (!narrow.empty()) std::memcpy(narrow.data(), data.data(), narrow.size() * sizeof(int32_t));
    return std::vector<int64_t>(narrow.begin(), narrow.end());
  }
  return {};
}

const Attr* Node::FindAttr(const std::string& key) const {
  auto it = attrs.find(key);
  return it == attrs.end() ? nullptr : &it->second;
}

int64_t Node::GetInt(const std::string& key, int64_t fallback) const {
  const Attr* a = FindAttr(key);
  if (a == nullptr) return fallback;
  if (a->kind == Attr::Kind::kInt) return a->i;
  if (a->kind == Attr::Kind::kFloat) return static_cast<int64_t>(a->f);
  return fallback;
}

float Node::GetFloat(const std::string& key, float fallback) const {
  const Attr* a = FindAttr(key);
  if (a == nullptr) return fallback;
  if (a->kind == Attr::Kind::kFloat) return a->f;
  if (a->kind == Attr::Kind::kInt) return static_cast<float>(a->i);
  return fallback;
}

std::vector<int64_t> Node::GetInts(const std::string& key) const {
  const Attr* a = FindAttr(key);
  if (a == nullptr) return {};
  if (a->kind == Attr::Kind::kInts) return a->ints;
  if (a->kind == Attr::Kind::kInt) return {a->i};
  return {};
}

std::string Node::GetString(const std::string& key, const std::string& fallback) const {
  const Attr* a = FindAttr(key);
  if (a == nullptr || a->kind != Attr::Kind::kString) return fallback;
  return a->s;
}

int Graph::FindTensor(const std::string& tensor_name) const {
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].name == tensor_name) return static_cast<int>(i);
  }
  return -1;
}

int Graph::AddTensor(Tensor tensor) {
  tensors.push_back(std::move(tensor));
  return static_cast<int>(tensors.size()) - 1;
}

std::vector<int> Graph::Producers() const {
  std::vector<int> producer(tensors.size(), -1);
  for (size_t n = 0; n < nodes.size(); ++n) {
    for (int t : nodes[n].outputs) {
      if (t >= 0 && static_cast<size_t>(t) < tensors.size() && producer[t] < 0) {
        producer[t] = static_cast<int>(n);
      }
    }
  }
  return producer;
}

Result<std::vector<int>> Graph::TopologicalOrder() const {
  const std::vector<int> producer = Producers();
  const size_t n_nodes = nodes.size();
  // Distinct predecessor nodes of each node, and successors, in index order.
  std::vector<std::vector<int>> preds(n_nodes), succs(n_nodes);
  for (size_t n = 0; n < n_nodes; ++n) {
    std::set<int> seen;
    for (int t : nodes[n].inputs) {
      if (t < 0 || static_cast<size_t>(t) >= tensors.size()) continue;
      int p = producer[t];
      if (p >= 0 && seen.insert(p).second) preds[n].push_back(p);
    }
    for (int p : preds[n]) succs[p].push_back(static_cast<int>(n));
  }
  std::vector<int> indegree(n_nodes);
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (size_t n = 0; n < n_nodes; ++n) {
    indegree[n] = static_cast<int>(preds[n].size());
    if (indegree[n] == 0) ready.push(static_cast<int>(n));
  }
  std::vector<int> order;
  order.reserve(n_nodes);
  while (!ready.empty()) {
    int n = ready.top();
    ready.pop();
    order.push_back(n);
    for (int s : succs[n]) {
      if (--indegree[s] == 0) ready.push(s);
    }
  }
  if (order.size() == n_nodes) return order;

  // Every unordered node has an unordered predecessor; walking predecessors
  // from the lowest one must revisit a node, and that node is on a cycle.
  int start = -1;
  for (size_t n = 0; n < n_nodes && start < 0; ++n) {
    if (indegree[n] > 0) start = static_cast<int>(n);
  }
  std::vector<int> visit_step(n_nodes, -1);
  std::vector<int> path;
  int cur = start;
  while (visit_step[cur] < 0) {
    visit_step[cur] = static_cast<int>(path.size());
    path.push_back(cur);
    int next = -1;
    for (int p : preds[cur]) {
      if (indegree[p] > 0) {
        next = p;
        break;
      }
    }
    cur = next;  // never -1: an unordered node has an unordered predecessor
  }
  // path[visit_step[cur]..] is the cycle, walked against the data flow;
  // print it along the data flow.
  std::string cycle = "'" + nodes[cur].name + "'";
  for (size_t i = path.size(); i-- > static_cast<size_t>(visit_step[cur]) + 1;) {
    cycle += " -> '" + nodes[path[i]].name + "'";
  }
  cycle += " -> '" + nodes[cur].name + "'";
  return Fail("graph has a cycle through node '" + nodes[cur].name + "': " + cycle);
}

bool IsSupportedOp(const std::string& op) { return FindOp(op) != nullptr || IsCustomOp(op); }

bool IsCustomOp(const std::string& op) {
  const size_t sep = op.find("::");
  return sep != std::string::npos && sep > 0 && sep + 2 < op.size();
}

bool ImportOptions::Declares(const std::string& op) const {
  // Baton's own post-processing ops need no declaration.
  return IsPostprocessOp(op) || std::find(custom_ops.begin(), custom_ops.end(), op) != custom_ops.end();
}

std::string UnsupportedOpsMessage(const std::vector<std::pair<std::string, std::string>>& ops) {
  struct Seen {
    int count = 0;
    std::string first;
  };
  std::map<std::string, Seen> by_type;
  for (const auto& [op, node] : ops) {
    Seen& seen = by_type[op];
    if (seen.count++ == 0) seen.first = node;
  }
  std::string message = "unsupported ops (" + std::to_string(by_type.size()) +
                        (by_type.size() == 1 ? " type): " : " types): ");
  bool first = true;
  for (const auto& [op, seen] : by_type) {
    if (!first) message += ", ";
    first = false;
    message += op + " x" + std::to_string(seen.count) + " (first '" + seen.first + "')";
  }
  return message;
}

namespace {

// Tensor and node names are non-empty and unique.
Check CheckNames(const Graph& graph) {
  std::map<std::string, int> tensor_names;
  for (size_t t = 0; t < graph.tensors.size(); ++t) {
    const std::string& name = graph.tensors[t].name;
    if (name.empty()) return Fail("tensor " + std::to_string(t) + " has an empty name");
    if (!tensor_names.emplace(name, static_cast<int>(t)).second) {
      return Fail("duplicate tensor name '" + name + "'");
    }
  }
  std::set<std::string> node_names;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const std::string& name = graph.nodes[n].name;
    if (name.empty()) return Fail("node " + std::to_string(n) + " has an empty name");
    if (!node_names.insert(name).second) return Fail("duplicate node name '" + name + "'");
  }
  return Check();
}

// Which tensors are graph inputs: each in range, listed once, not a constant.
Result<std::vector<bool>> GraphInputs(const Graph& graph) {
  const int n_tensors = static_cast<int>(graph.tensors.size());
  std::vector<bool> is_input(n_tensors, false);
  for (int t : graph.inputs) {
    if (t < 0 || t >= n_tensors) {
      return Fail("graph input index " + std::to_string(t) + " is out of range");
    }
    if (is_input[t]) {
      return Fail("tensor '" + graph.tensors[t].name + "' is listed twice as a graph input");
    }
    if (graph.tensors[t].is_constant) {
      return Fail("graph input '" + graph.tensors[t].name + "' is a constant");
    }
    is_input[t] = true;
  }
  return is_input;
}

// The node writing each tensor (-1 if none), after checking every node: a
// supported op, indices in range, at least one output, and no output that is
// another node's, a graph input or a constant.
Result<std::vector<int>> UniqueProducers(const Graph& graph, const std::vector<bool>& is_input) {
  const int n_tensors = static_cast<int>(graph.tensors.size());
  std::vector<int> producer(n_tensors, -1);
  std::vector<std::pair<std::string, std::string>> unsupported;
  for (const Node& node : graph.nodes) {
    if (!IsSupportedOp(node.op)) unsupported.emplace_back(node.op, node.name);
  }
  if (!unsupported.empty()) return Fail(UnsupportedOpsMessage(unsupported));
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    for (int t : node.inputs) {
      if (t < -1 || t >= n_tensors) {
        return Fail("node '" + node.name + "': input index " + std::to_string(t) +
                    " is out of range");
      }
    }
    if (node.outputs.empty()) return Fail("node '" + node.name + "' has no outputs");
    for (int t : node.outputs) {
      if (t < 0 || t >= n_tensors) {
        return Fail("node '" + node.name + "': output index " + std::to_string(t) +
                    " is out of range");
      }
      const Tensor& tensor = graph.tensors[t];
      if (producer[t] >= 0) {
        return Fail("tensor '" + tensor.name + "' is produced by both node '" +
                    graph.nodes[producer[t]].name + "' and node '" + node.name + "'");
      }
      if (is_input[t]) {
        return Fail("node '" + node.name + "' writes graph input '" + tensor.name + "'");
      }
      // A Constant node may carry its value in its output tensor already.
      if (tensor.is_constant && node.op != "Constant") {
        return Fail("node '" + node.name + "' writes constant tensor '" + tensor.name + "'");
      }
      producer[t] = static_cast<int>(n);
    }
  }
  return producer;
}

// Every tensor read (by a node or as a graph output) has a value, and every
// constant not computed by a node holds as many bytes as its shape needs.
Check CheckValues(const Graph& graph, const std::vector<int>& producer,
                  const std::vector<bool>& is_input) {
  const int n_tensors = static_cast<int>(graph.tensors.size());
  for (const Node& node : graph.nodes) {
    for (int t : node.inputs) {
      if (t < 0) continue;
      const Tensor& tensor = graph.tensors[t];
      if (producer[t] < 0 && !is_input[t] && !tensor.is_constant) {
        return Fail("node '" + node.name + "' reads '" + tensor.name +
                    "' which no node produces and is not a graph input");
      }
    }
  }
  for (int t : graph.outputs) {
    if (t < 0 || t >= n_tensors) {
      return Fail("graph output index " + std::to_string(t) + " is out of range");
    }
    if (producer[t] < 0 && !is_input[t]) {
      return Fail("graph output '" + graph.tensors[t].name + "' is not produced by any node");
    }
  }
  for (int t = 0; t < n_tensors; ++t) {
    const Tensor& tensor = graph.tensors[t];
    if (tensor.is_constant && producer[t] < 0 && tensor.shape_known &&
        tensor.data.size() != tensor.bytes()) {
      return Fail("constant '" + tensor.name + "' has " + std::to_string(tensor.data.size()) +
                  " bytes of data but its shape needs " + std::to_string(tensor.bytes()));
    }
  }
  return Check();
}

}  // namespace

Check Validate(const Graph& graph) {
  BATON_TRY(CheckNames(graph));
  BATON_ASSIGN_OR_RETURN(std::vector<bool> is_input, GraphInputs(graph));
  BATON_ASSIGN_OR_RETURN(std::vector<int> producer, UniqueProducers(graph, is_input));
  BATON_TRY(CheckValues(graph, producer, is_input));
  auto order = graph.TopologicalOrder();
  if (!order.ok()) return Fail(order.error());
  return Check();
}

}  // namespace baton::planner
