#include "import/onnx_patterns.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace baton::planner::internal {
namespace {

using Shape = std::vector<int64_t>;

struct GraphIndex {
  std::map<std::string, int> producer;                 // output name -> node
  std::map<std::string, std::vector<int>> consumers;   // input name -> nodes
  std::map<std::string, const onnx::TensorProto*> constants;  // initializers, Constant values
  std::map<std::string, Shape> shapes;                 // static shapes
  std::map<std::string, bool> graph_outputs;
};

bool StaticShape(const onnx::ValueInfoProto& vi, Shape* out) {
  if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) return false;
  Shape s;
  for (const auto& d : vi.type().tensor_type().shape().dim()) {
    if (!d.has_dim_value()) return false;
    s.push_back(d.dim_value());
  }
  *out = s;
  return true;
}

GraphIndex Index(const onnx::GraphProto& g) {
  GraphIndex ix;
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& n = g.node(i);
    for (const std::string& o : n.output()) ix.producer[o] = i;
    for (const std::string& in : n.input()) {
      if (!in.empty()) ix.consumers[in].push_back(i);
    }
    if (n.op_type() == "Constant" && n.output_size() == 1) {
      for (const auto& a : n.attribute()) {
        if (a.name() == "value" && a.has_t()) ix.constants[n.output(0)] = &a.t();
      }
    }
  }
  for (const auto& t : g.initializer()) {
    ix.constants[t.name()] = &t;
    ix.shapes[t.name()] = Shape(t.dims().begin(), t.dims().end());
  }
  for (const auto& c : ix.constants) {
    ix.shapes[c.first] = Shape(c.second->dims().begin(), c.second->dims().end());
  }
  Shape s;
  for (const auto& vi : g.input()) {
    if (StaticShape(vi, &s)) ix.shapes.emplace(vi.name(), s);
  }
  for (const auto& vi : g.value_info()) {
    if (StaticShape(vi, &s)) ix.shapes.emplace(vi.name(), s);
  }
  for (const auto& vi : g.output()) ix.graph_outputs[vi.name()] = true;
  return ix;
}

// The single float32 value of a constant, if it is one.
std::optional<float> FloatScalar(const GraphIndex& ix, const std::string& name) {
  auto it = ix.constants.find(name);
  if (it == ix.constants.end()) return std::nullopt;
  const onnx::TensorProto& t = *it->second;
  if (t.data_type() != onnx::TensorProto::FLOAT) return std::nullopt;
  for (int64_t d : t.dims()) {
    if (d != 1) return std::nullopt;
  }
  if (t.has_raw_data()) {
    if (t.raw_data().size() != sizeof(float)) return std::nullopt;
    float v;
    std::memcpy(&v, t.raw_data().data(), sizeof(v));
    return v;
  }
  if (t.float_data_size() != 1) return std::nullopt;
  return t.float_data(0);
}

bool IsFloatConstant(const GraphIndex& ix, const std::string& name, const Shape& shape) {
  auto it = ix.constants.find(name);
  return it != ix.constants.end() && it->second->data_type() == onnx::TensorProto::FLOAT &&
         Shape(it->second->dims().begin(), it->second->dims().end()) == shape;
}

// Node `i` is `op` with `inputs` inputs and one output.
bool Is(const onnx::GraphProto& g, int i, const char* op, int inputs) {
  return i >= 0 && g.node(i).op_type() == op && g.node(i).domain().empty() &&
         g.node(i).input_size() == inputs && g.node(i).output_size() == 1;
}

// The only consumer of `name` (which is no graph output), or -1.
int SoleConsumer(const GraphIndex& ix, const std::string& name) {
  auto it = ix.consumers.find(name);
  if (it == ix.consumers.end() || it->second.size() != 1 || ix.graph_outputs.count(name)) {
    return -1;
  }
  return it->second[0];
}

// ReduceMean's axes when they are -k..-1 with keepdims, as k; else 0.
int64_t TrailingAxes(const onnx::NodeProto& n) {
  std::vector<int64_t> axes;
  for (const auto& a : n.attribute()) {
    if (a.name() == "axes") axes.assign(a.ints().begin(), a.ints().end());
    if (a.name() == "keepdims" && a.i() != 1) return 0;
  }
  const int64_t k = static_cast<int64_t>(axes.size());
  for (int64_t i = 0; i < k; ++i) {
    if (axes[i] != i - k) return 0;
  }
  return k;
}

struct Match {
  std::vector<int> nodes;  // matched nodes, the last one writes the result
  std::string x, gamma, beta, y;
  int64_t k = 0;
  float eps = 0;
};

// The pattern rooted at ReduceMean node `r`.
std::optional<Match> MatchAt(const onnx::GraphProto& g, const GraphIndex& ix, int r) {
  if (!Is(g, r, "ReduceMean", 1)) return std::nullopt;
  Match m;
  m.x = g.node(r).input(0);
  m.k = TrailingAxes(g.node(r));
  auto xs = ix.shapes.find(m.x);
  if (m.k == 0 || xs == ix.shapes.end() || static_cast<int64_t>(xs->second.size()) < m.k) {
    return std::nullopt;
  }
  const Shape normalized(xs->second.end() - m.k, xs->second.end());
  const int sub = SoleConsumer(ix, g.node(r).output(0));
  if (!Is(g, sub, "Sub", 2) || g.node(sub).input(0) != m.x || g.node(sub).input(1) != g.node(r).output(0)) {
    return std::nullopt;
  }
  const std::string d = g.node(sub).output(0);
  auto dc = ix.consumers.find(d);
  if (dc == ix.consumers.end() || dc->second.size() != 2 || ix.graph_outputs.count(d)) {
    return std::nullopt;
  }
  int pow = -1, div = -1;
  for (int c : dc->second) {
    if (Is(g, c, "Pow", 2) && g.node(c).input(0) == d) pow = c;
    if (Is(g, c, "Div", 2) && g.node(c).input(0) == d) div = c;
  }
  if (pow < 0 || div < 0 || FloatScalar(ix, g.node(pow).input(1)) != 2.0f) return std::nullopt;
  const int mean2 = SoleConsumer(ix, g.node(pow).output(0));
  if (!Is(g, mean2, "ReduceMean", 1) || TrailingAxes(g.node(mean2)) != m.k) return std::nullopt;
  const int add = SoleConsumer(ix, g.node(mean2).output(0));
  if (!Is(g, add, "Add", 2) || g.node(add).input(0) != g.node(mean2).output(0)) {
    return std::nullopt;
  }
  const std::optional<float> eps = FloatScalar(ix, g.node(add).input(1));
  if (!eps || !(*eps >= 0)) return std::nullopt;
  m.eps = *eps;
  const int sqrt = SoleConsumer(ix, g.node(add).output(0));
  if (!Is(g, sqrt, "Sqrt", 1) || SoleConsumer(ix, g.node(sqrt).output(0)) != div ||
      g.node(div).input(1) != g.node(sqrt).output(0)) {
    return std::nullopt;
  }
  m.nodes = {r, sub, pow, mean2, add, sqrt, div};
  m.y = g.node(div).output(0);
  const int mul = SoleConsumer(ix, m.y);
  if (Is(g, mul, "Mul", 2) && g.node(mul).input(0) == m.y &&
      IsFloatConstant(ix, g.node(mul).input(1), normalized)) {
    m.gamma = g.node(mul).input(1);
    m.nodes.push_back(mul);
    m.y = g.node(mul).output(0);
    const int bias = SoleConsumer(ix, m.y);
    if (Is(g, bias, "Add", 2) && g.node(bias).input(0) == m.y &&
        IsFloatConstant(ix, g.node(bias).input(1), normalized)) {
      m.beta = g.node(bias).input(1);
      m.nodes.push_back(bias);
      m.y = g.node(bias).output(0);
    }
  }
  if (m.gamma.empty()) {  // no affine part: scale by a new constant of ones
    int64_t n = 1;
    for (int64_t dim : normalized) n *= dim;
    if (n <= 0 || n > (int64_t{1} << 24)) return std::nullopt;
  }
  return m;
}

// A tensor name the graph does not use yet (nor `taken`); added to `taken`.
std::string UniqueName(const GraphIndex& ix, std::set<std::string>& taken,
                       const std::string& base) {
  std::string name = base;
  for (int i = 1; ix.producer.count(name) || ix.constants.count(name) || ix.shapes.count(name) ||
                  ix.consumers.count(name) || taken.count(name);
       ++i) {
    name = base + "_" + std::to_string(i);
  }
  taken.insert(name);
  return name;
}

}  // namespace

int FuseDecomposedLayerNorm(onnx::GraphProto* graph) {
  const GraphIndex ix = Index(*graph);
  std::vector<bool> removed(graph->node_size(), false);
  std::map<int, onnx::NodeProto> replacement;  // at the last node of each match
  std::set<std::string> new_names;
  for (int r = 0; r < graph->node_size(); ++r) {
    if (removed[r]) continue;
    std::optional<Match> m = MatchAt(*graph, ix, r);
    if (!m) continue;
    bool overlaps = false;
    for (int n : m->nodes) overlaps = overlaps || removed[n];
    if (overlaps) continue;
    std::string gamma = m->gamma;
    if (gamma.empty()) {
      const Shape& xs = ix.shapes.at(m->x);
      const Shape normalized(xs.end() - m->k, xs.end());
      gamma = UniqueName(ix, new_names, m->x + "_layernorm_scale");
      onnx::TensorProto* ones = graph->add_initializer();
      ones->set_name(gamma);
      ones->set_data_type(onnx::TensorProto::FLOAT);
      int64_t n = 1;
      for (int64_t d : normalized) {
        ones->add_dims(d);
        n *= d;
      }
      for (int64_t i = 0; i < n; ++i) ones->add_float_data(1.0f);
    }
    // The fused node takes the place of the last matched node: every input
    // (x, gamma, beta) is defined before it.
    const int last = *std::max_element(m->nodes.begin(), m->nodes.end());
    for (int n : m->nodes) removed[n] = true;
    onnx::NodeProto& ln = replacement[last];
    ln.set_op_type("LayerNormalization");
    const std::string& first_name = graph->node(m->nodes[0]).name();
    ln.set_name(first_name.empty() ? m->y + "_layernorm" : first_name);
    ln.add_input(m->x);
    ln.add_input(gamma);
    if (!m->beta.empty()) ln.add_input(m->beta);
    ln.add_output(m->y);
    onnx::AttributeProto* axis = ln.add_attribute();
    axis->set_name("axis");
    axis->set_type(onnx::AttributeProto::INT);
    axis->set_i(-m->k);
    onnx::AttributeProto* eps = ln.add_attribute();
    eps->set_name("epsilon");
    eps->set_type(onnx::AttributeProto::FLOAT);
    eps->set_f(m->eps);
  }
  if (replacement.empty()) return 0;
  std::vector<onnx::NodeProto> kept;
  for (int i = 0; i < graph->node_size(); ++i) {
    auto it = replacement.find(i);
    if (it != replacement.end()) {
      kept.push_back(std::move(it->second));
    } else if (!removed[i]) {
      kept.emplace_back();
      kept.back().Swap(graph->mutable_node(i));
    }
  }
  graph->clear_node();
  for (onnx::NodeProto& n : kept) graph->add_node()->Swap(&n);
  return static_cast<int>(replacement.size());
}

namespace {

// Builds the QDQ replacement of one QLinear node.
class QdqBuilder {
 public:
  QdqBuilder(const GraphIndex& ix, std::set<std::string>* taken, const onnx::NodeProto& node)
      : ix_(ix), taken_(taken), node_(node),
        base_(node.name().empty() ? node.output(0) : node.name()) {}

  const std::string& In(int i) const {
    static const std::string kEmpty;
    return i < node_.input_size() ? node_.input(i) : kEmpty;
  }

  // DequantizeLinear(x, scale, zero_point) with `axis` (nullopt: ONNX's default).
  std::string Dequantize(const std::string& x, const std::string& scale,
                         const std::string& zero_point, std::optional<int64_t> axis) {
    onnx::NodeProto& n = Add("DequantizeLinear", "dequantize_" + x);
    n.add_input(x);
    n.add_input(scale);
    if (!zero_point.empty()) n.add_input(zero_point);
    if (axis) SetInt(&n, "axis", *axis);
    return Output(&n, x + "_dequantized");
  }

  // The float op over `inputs`, with the QLinear node's attributes except
  // those in `drop`.
  std::string Op(const char* op, const std::vector<std::string>& inputs,
                 const std::set<std::string>& drop = {}) {
    onnx::NodeProto& n = Add(op, op);
    for (const std::string& in : inputs) n.add_input(in);
    for (const auto& a : node_.attribute()) {
      if (!drop.count(a.name())) *n.add_attribute() = a;
    }
    return Output(&n, base_ + "_" + op);
  }

  // Mul(a, b) of two scales.
  std::string Mul(const std::string& a, const std::string& b) {
    onnx::NodeProto& n = Add("Mul", "bias_scale");
    n.add_input(a);
    n.add_input(b);
    return Output(&n, base_ + "_bias_scale");
  }

  // QuantizeLinear(x, scale, zero_point) into the node's output.
  void Quantize(const std::string& x, const std::string& scale, const std::string& zero_point) {
    onnx::NodeProto& n = Add("QuantizeLinear", "quantize");
    n.add_input(x);
    n.add_input(scale);
    if (!zero_point.empty()) n.add_input(zero_point);
    n.add_output(node_.output(0));
  }

  // Sets INT attribute `key` of the node added last.
  void SetLastInt(const char* key, int64_t v) { SetInt(&nodes.back(), key, v); }

  std::vector<onnx::NodeProto> nodes;

 private:
  onnx::NodeProto& Add(const char* op, const std::string& suffix) {
    nodes.emplace_back();
    onnx::NodeProto& n = nodes.back();
    n.set_op_type(op);
    n.set_name(UniqueName(ix_, *taken_, base_ + "/" + suffix));
    return n;
  }
  std::string Output(onnx::NodeProto* n, const std::string& base) {
    const std::string name = UniqueName(ix_, *taken_, base);
    n->add_output(name);
    return name;
  }
  static void SetInt(onnx::NodeProto* n, const char* key, int64_t v) {
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name(key);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }

  const GraphIndex& ix_;
  std::set<std::string>* taken_;
  const onnx::NodeProto& node_;
  std::string base_;
};

bool IsMicrosoftDomain(const std::string& domain) { return domain == "com.microsoft"; }

int64_t IntAttr(const onnx::NodeProto& n, const char* key, int64_t fallback) {
  for (const auto& a : n.attribute()) {
    if (a.name() == key && a.type() == onnx::AttributeProto::INT) return a.i();
  }
  return fallback;
}

// The QDQ nodes of `node`, or nothing when it is not a QLinear op Baton
// lowers (it is then reported as unsupported, as written).
std::vector<onnx::NodeProto> LowerQLinear(const GraphIndex& ix, std::set<std::string>* taken,
                                          const onnx::NodeProto& node) {
  const std::string& op = node.op_type();
  const bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
  const bool ms = IsMicrosoftDomain(node.domain());
  if (node.output_size() != 1) return {};
  QdqBuilder b(ix, taken, node);
  const int n = node.input_size();
  if (default_domain && op == "QLinearConv" && (n == 8 || n == 9)) {
    const std::string x = b.Dequantize(b.In(0), b.In(1), b.In(2), std::nullopt);
    const std::string w = b.Dequantize(b.In(3), b.In(4), b.In(5), 0);
    std::vector<std::string> inputs = {x, w};
    if (n == 9 && !b.In(8).empty()) {
      inputs.push_back(b.Dequantize(b.In(8), b.Mul(b.In(1), b.In(4)), "", 0));
    }
    b.Quantize(b.Op("Conv", inputs), b.In(6), b.In(7));
  } else if (default_domain && op == "QLinearMatMul" && n == 8) {
    const std::string a = b.Dequantize(b.In(0), b.In(1), b.In(2), -2);
    const std::string m = b.Dequantize(b.In(3), b.In(4), b.In(5), -1);
    b.Quantize(b.Op("MatMul", {a, m}), b.In(6), b.In(7));
  } else if (ms && (op == "QLinearAdd" || op == "QLinearMul") && (n == 7 || n == 8)) {
    const std::string a = b.Dequantize(b.In(0), b.In(1), b.In(2), std::nullopt);
    const std::string c = b.Dequantize(b.In(3), b.In(4), b.In(5), std::nullopt);
    b.Quantize(b.Op(op == "QLinearAdd" ? "Add" : "Mul", {a, c}), b.In(6), b.In(7));
  } else if (ms && (op == "QLinearSigmoid" || op == "QLinearLeakyRelu" ||
                    ((op == "QLinearGlobalAveragePool" || op == "QLinearAveragePool") &&
                     IntAttr(node, "channels_last", 0) == 0)) &&
             (n == 4 || n == 5)) {
    const std::string x = b.Dequantize(b.In(0), b.In(1), b.In(2), std::nullopt);
    const char* float_op = op == "QLinearSigmoid"            ? "Sigmoid"
                           : op == "QLinearLeakyRelu"        ? "LeakyRelu"
                           : op == "QLinearAveragePool"      ? "AveragePool"
                                                             : "GlobalAveragePool";
    b.Quantize(b.Op(float_op, {x}, {"channels_last"}), b.In(3), b.In(4));
  } else if (ms && op == "QLinearSoftmax" && n == 5 && !node.input(4).empty() &&
             (IntAttr(node, "opset", -1) >= 13 || IntAttr(node, "axis", 1) == -1)) {
    // Opset 13's single axis (or the last axis, where both forms agree); the
    // Softmax gets its axis written out, and FuseQLinear fuses it back.
    const std::string x = b.Dequantize(b.In(0), b.In(1), b.In(2), std::nullopt);
    std::string s = b.Op("Softmax", {x}, {"opset", "axis"});
    b.SetLastInt("axis", IntAttr(node, "axis", -1));
    b.Quantize(s, b.In(3), b.In(4));
  } else if (ms && op == "QLinearConcat" && n >= 5 && (n - 2) % 3 == 0) {
    std::vector<std::string> parts;
    for (int i = 2; i < n; i += 3) {
      parts.push_back(b.Dequantize(b.In(i), b.In(i + 1), b.In(i + 2), std::nullopt));
    }
    b.Quantize(b.Op("Concat", parts), b.In(0), b.In(1));
  } else {
    return {};
  }
  return std::move(b.nodes);
}

}  // namespace

int LowerQLinearOps(onnx::GraphProto* graph) {
  const GraphIndex ix = Index(*graph);
  std::set<std::string> taken;
  std::map<int, std::vector<onnx::NodeProto>> lowered;
  for (int i = 0; i < graph->node_size(); ++i) {
    std::vector<onnx::NodeProto> qdq = LowerQLinear(ix, &taken, graph->node(i));
    if (!qdq.empty()) lowered[i] = std::move(qdq);
  }
  if (lowered.empty()) return 0;
  std::vector<onnx::NodeProto> kept;
  for (int i = 0; i < graph->node_size(); ++i) {
    auto it = lowered.find(i);
    if (it == lowered.end()) {
      kept.emplace_back();
      kept.back().Swap(graph->mutable_node(i));
      continue;
    }
    for (onnx::NodeProto& n : it->second) kept.push_back(std::move(n));
  }
  graph->clear_node();
  for (onnx::NodeProto& n : kept) graph->add_node()->Swap(&n);
  return static_cast<int>(lowered.size());
}

}  // namespace baton::planner::internal
