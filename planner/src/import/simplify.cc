#include "baton/planner/import/simplify.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "baton/planner/import/shapes.h"
#include "baton/planner/ops/op_def.h"
#include "ops/eval_host.h"

namespace baton::planner {
namespace {

// A removed node keeps its slot (so indices stay valid during a pass) with no
// op, inputs or outputs; EraseDeadNodes drops it at the end of the pass.
void KillNode(Node* node) {
  node->op.clear();
  node->inputs.clear();
  node->outputs.clear();
}

void EraseDeadNodes(Graph* graph) {
  auto& nodes = graph->nodes;
  nodes.erase(
      std::remove_if(nodes.begin(), nodes.end(), [](const Node& n) { return n.op.empty(); }),
      nodes.end());
}

bool IsGraphOutput(const Graph& graph, int t) {
  return std::find(graph.outputs.begin(), graph.outputs.end(), t) != graph.outputs.end();
}

bool IsGraphInput(const Graph& graph, int t) {
  return std::find(graph.inputs.begin(), graph.inputs.end(), t) != graph.inputs.end();
}

// Distinct consumer nodes of each tensor, in node order.
std::vector<std::vector<int>> Consumers(const Graph& graph) {
  std::vector<std::vector<int>> consumers(graph.tensors.size());
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    for (int t : graph.nodes[n].inputs) {
      if (t < 0) continue;
      auto& list = consumers[t];
      if (list.empty() || list.back() != static_cast<int>(n)) list.push_back(static_cast<int>(n));
    }
  }
  return consumers;
}

// True if node `only` is the single consumer of `t` and `t` is not a graph
// output, i.e. the producer of `t` may write somewhere else instead.
bool SoleConsumer(const Graph& graph, int t, int only) {
  if (IsGraphOutput(graph, t)) return false;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    if (static_cast<int>(n) == only) continue;
    const auto& in = graph.nodes[n].inputs;
    if (std::find(in.begin(), in.end(), t) != in.end()) return false;
  }
  return true;
}

void ReplaceUses(Graph* graph, int from, int to) {
  for (Node& node : graph->nodes) {
    for (int& t : node.inputs) {
      if (t == from) t = to;
    }
  }
}

// Makes `producer` write `to` in place of its output `from`.
void RedirectOutput(Node* producer, int from, int to) {
  for (int& t : producer->outputs) {
    if (t == from) t = to;
  }
}

std::string UniqueTensorName(const Graph& graph, const std::string& base) {
  if (graph.FindTensor(base) < 0) return base;
  for (int i = 1;; ++i) {
    std::string name = base + "_" + std::to_string(i);
    if (graph.FindTensor(name) < 0) return name;
  }
}

int AddFloatConstant(Graph* graph, const std::string& base, const std::vector<int64_t>& shape,
                     const std::vector<float>& values) {
  Tensor t;
  t.name = UniqueTensorName(*graph, base);
  t.dtype = DType::Float32;
  t.shape = shape;
  t.shape_known = true;
  t.is_constant = true;
  t.data.resize(values.size() * sizeof(float));
  if (!values.empty()) std::memcpy(t.data.data(), values.data(), t.data.size());
  return graph->AddTensor(std::move(t));
}

bool IsConstant(const Graph& graph, int t) { return t >= 0 && graph.tensors[t].is_constant; }

// Constant float scalar value of optional input i; nullopt if absent.
// Returns false if present but not a constant float scalar.
bool ConstScalar(const Graph& graph, const Node& node, int i, std::optional<float>* out) {
  if (!internal::HasInput(node, i)) return true;
  const Tensor& t = graph.tensors[node.inputs[i]];
  std::vector<float> v = t.FloatData();
  if (!t.is_constant || v.size() != 1) return false;
  *out = v[0];
  return true;
}

// `consumer`, the sole reader of its input 0, disappears: the node producing
// that input writes the consumer's output instead.
void AbsorbConsumer(Graph* graph, int producer, int consumer) {
  Node& c = graph->nodes[consumer];
  RedirectOutput(&graph->nodes[producer], c.inputs[0], c.outputs[0]);
  KillNode(&c);
}

// Calls `rewrite(graph, n)` for every node n in topological order, then drops
// the nodes it killed. Stops at the first error.
template <typename Rewrite>
Check RewriteEachNode(Graph* graph, Rewrite rewrite) {
  BATON_ASSIGN_OR_RETURN(std::vector<int> order, graph->TopologicalOrder());
  for (int n : order) BATON_TRY(rewrite(graph, n));
  EraseDeadNodes(graph);
  return Check();
}

// Folds Constant node `n` away, or evaluates it when all its inputs are known.
Check FoldConstantAt(Graph* graph, int n) {
  Node& node = graph->nodes[n];
  bool feeds_output = false;
  for (int t : node.outputs) feeds_output = feeds_output || IsGraphOutput(*graph, t);
  if (feeds_output) return Check();
  if (node.op == "Constant") {
    const int out = node.outputs.empty() ? -1 : node.outputs[0];
    if (out < 0 || !graph->tensors[out].is_constant) {
      return Fail("node '" + node.name + "': Constant has no value (run InferShapes first)");
    }
    KillNode(&node);
    return Check();
  }
  if (!internal::CanEvaluate(node.op)) return Check();
  bool foldable = true;
  std::vector<const Tensor*> inputs;
  for (int t : node.inputs) {
    if (t < 0) {
      inputs.push_back(nullptr);
      continue;
    }
    const Tensor& tensor = graph->tensors[t];
    const bool known = tensor.is_constant || (node.op == "Shape" && tensor.shape_known);
    foldable = foldable && known;
    inputs.push_back(&tensor);
  }
  if (!foldable) return Check();
  const OpDef* def = FindOp(node.op);
  std::vector<Tensor*> outputs;
  for (int t : node.outputs) {
    const Tensor& out = graph->tensors[t];
    if (!out.shape_known) {
      return Fail("node '" + node.name + "': output '" + out.name +
                  "' has no shape (run InferShapes first)");
    }
    // elements() cannot overflow: inference keeps every shape within ShapeFits.
    if (out.bytes() > kMaxFoldedBytes) {
      if (def->has_kernel) return Check();  // runs at inference instead
      return Fail("node '" + node.name + "': folding " + node.op + " would make '" + out.name +
                  "' " + DTypeName(out.dtype) + " " + internal::ShapeString(out.shape) + " of " +
                  std::to_string(out.bytes()) + " bytes, over the folding limit of " +
                  std::to_string(kMaxFoldedBytes) + " bytes (64 MiB)");
    }
    outputs.push_back(&graph->tensors[t]);
  }
  std::vector<Tensor> saved;  // outputs as they were, should evaluation fail
  for (Tensor* t : outputs) saved.push_back(*t);
  Check evaluated = internal::EvaluateNode(node, inputs, outputs);
  if (!evaluated.ok()) {
    const bool integer = std::all_of(outputs.begin(), outputs.end(), [](const Tensor* t) {
      return t->dtype == DType::Int64 || t->dtype == DType::Int32;
    });
    if (!def->has_kernel || integer) {
      return Fail("node '" + node.name + "': " + evaluated.error());
    }
    for (size_t i = 0; i < outputs.size(); ++i) *outputs[i] = std::move(saved[i]);
    return Check();
  }
  for (Tensor* t : outputs) t->is_constant = true;
  KillNode(&node);
  return Check();
}

// The Conv or Gemm that may absorb BatchNormalization node `b` (see
// FoldBatchNorm), or -1.
int BatchNormFoldTarget(const Graph& graph, int b) {
  const Node& bn = graph.nodes[b];
  if (bn.op != "BatchNormalization" || bn.inputs.size() != 5 || bn.outputs.size() != 1) return -1;
  const int x = bn.inputs[0];
  const int p = graph.Producers()[x];
  if (p < 0) return -1;
  const Node& producer = graph.nodes[p];
  if ((producer.op != "Conv" && producer.op != "Gemm") || producer.clamp.has_value() ||
      !producer.activation.empty() || producer.inputs.size() > 3 || !SoleConsumer(graph, x, b)) {
    return -1;
  }
  bool params_constant = true;
  for (int i = 1; i < 5; ++i) params_constant = params_constant && IsConstant(graph, bn.inputs[i]);
  const int w = producer.inputs[1];
  const int bias = internal::HasInput(producer, 2) ? producer.inputs[2] : -1;
  if (!params_constant || !IsConstant(graph, w) || (bias >= 0 && !IsConstant(graph, bias))) {
    return -1;
  }
  return p;
}

// BatchNormalization's parameters, one value per channel.
struct BatchNormParams {
  std::vector<float> scale, shift, mean, var;
  double eps = 0;
};

// nullopt unless every parameter has one value per channel.
std::optional<BatchNormParams> ReadBatchNormParams(const Graph& graph, const Node& bn) {
  BatchNormParams p;
  p.scale = graph.tensors[bn.inputs[1]].FloatData();
  p.shift = graph.tensors[bn.inputs[2]].FloatData();
  p.mean = graph.tensors[bn.inputs[3]].FloatData();
  p.var = graph.tensors[bn.inputs[4]].FloatData();
  p.eps = static_cast<double>(bn.GetFloat("epsilon", 1e-5f));
  const size_t channels = p.scale.size();
  if (p.shift.size() != channels || p.mean.size() != channels || p.var.size() != channels) {
    return std::nullopt;
  }
  return p;
}

// A Conv's or Gemm's weights and per-output-channel bias, as BN folding
// rescales them.
struct LinearParams {
  bool conv = true;
  std::vector<float> weight;
  std::vector<int64_t> w_shape;
  std::vector<float> bias;     // one per output channel
  double alpha = 1, beta = 1;  // Gemm's
  bool trans_b = false;
};

// nullopt when the weights or bias are not laid out per output channel (so
// BN cannot be absorbed exactly).
std::optional<LinearParams> ReadLinearParams(const Graph& graph, const Node& producer,
                                             size_t channels) {
  const int bias = internal::HasInput(producer, 2) ? producer.inputs[2] : -1;
  LinearParams lin;
  lin.conv = producer.op == "Conv";
  lin.weight = graph.tensors[producer.inputs[1]].FloatData();
  lin.w_shape = graph.tensors[producer.inputs[1]].shape;
  lin.bias.assign(channels, 0.0f);
  const std::vector<int64_t>& w_shape = lin.w_shape;
  if (lin.conv) {
    if (w_shape.empty() || w_shape[0] != static_cast<int64_t>(channels)) return std::nullopt;
    if (bias >= 0) lin.bias = graph.tensors[bias].FloatData();
  } else {
    // Gemm: Y[m, n] = alpha * (A B)[m, n] + beta * C[n]; BN scales column n.
    lin.trans_b = producer.GetInt("transB", 0) != 0;
    lin.alpha = static_cast<double>(producer.GetFloat("alpha", 1.0f));
    lin.beta = static_cast<double>(producer.GetFloat("beta", 1.0f));
    if (w_shape.size() != 2 || w_shape[lin.trans_b ? 0 : 1] != static_cast<int64_t>(channels)) {
      return std::nullopt;
    }
    if (bias >= 0) {
      const Tensor& c = graph.tensors[bias];
      std::vector<float> cv = c.FloatData();
      if (cv.size() == 1) {
        lin.bias.assign(channels, cv[0]);
      } else if (cv.size() == channels && c.shape.back() == static_cast<int64_t>(channels)) {
        lin.bias = cv;
      } else {
        return std::nullopt;  // a bias that varies along M cannot absorb BN exactly
      }
    }
  }
  if (lin.bias.size() != channels) return std::nullopt;
  return lin;
}

// Rescales the weights and bias so that, with alpha = beta = 1, they compute
// BN(lin(x)).
void ScaleByBatchNorm(const BatchNormParams& bn, LinearParams* lin) {
  // y = s * (conv(x) + b - mean) / sqrt(var + eps) + shift, per channel c:
  // W'[c] = W[c] * a_c, b'[c] = (b[c] - mean[c]) * a_c + shift[c],
  // a_c = s[c] / sqrt(var[c] + eps).
  const size_t channels = bn.scale.size();
  std::vector<double> a(channels);
  for (size_t c = 0; c < channels; ++c) {
    a[c] = static_cast<double>(bn.scale[c]) / std::sqrt(static_cast<double>(bn.var[c]) + bn.eps);
  }
  std::vector<float>& weight = lin->weight;
  const size_t per_channel = weight.size() / channels;
  for (size_t i = 0; i < weight.size(); ++i) {
    size_t c = lin->conv      ? i / per_channel
               : lin->trans_b ? i / static_cast<size_t>(lin->w_shape[1])
                              : i % channels;
    weight[i] = static_cast<float>(lin->alpha * static_cast<double>(weight[i]) * a[c]);
  }
  for (size_t c = 0; c < channels; ++c) {
    lin->bias[c] = static_cast<float>(
        (lin->beta * static_cast<double>(lin->bias[c]) - static_cast<double>(bn.mean[c])) * a[c] +
        static_cast<double>(bn.shift[c]));
  }
}

Check FoldBatchNormAt(Graph* graph, int b) {
  const int p = BatchNormFoldTarget(*graph, b);
  if (p < 0) return Check();
  std::optional<BatchNormParams> bn = ReadBatchNormParams(*graph, graph->nodes[b]);
  if (!bn) return Check();
  const size_t channels = bn->scale.size();
  if (channels == 0) return Check();  // nothing to fold (and no per-channel stride)
  std::optional<LinearParams> lin = ReadLinearParams(*graph, graph->nodes[p], channels);
  if (!lin) return Check();
  ScaleByBatchNorm(*bn, &*lin);
  const std::string base = graph->nodes[p].name;
  const int new_w = AddFloatConstant(graph, base + "_bn_weight", lin->w_shape, lin->weight);
  const int new_b =
      AddFloatConstant(graph, base + "_bn_bias", {static_cast<int64_t>(channels)}, lin->bias);
  Node& prod = graph->nodes[p];
  prod.inputs.resize(3, -1);
  prod.inputs[1] = new_w;
  prod.inputs[2] = new_b;
  if (prod.op == "Gemm") {
    prod.attrs.erase("alpha");
    prod.attrs.erase("beta");
  }
  AbsorbConsumer(graph, p, b);
  return Check();
}

// The clamp [lo, hi] of a Relu or Clip node (Clip's bounds from constant
// inputs or attributes), or nullopt when it is neither or a bound is not a
// constant scalar.
std::optional<std::pair<float, float>> ActivationRange(const Graph& graph, const Node& act) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  if (act.op == "Relu") return std::make_pair(0.0f, kInf);
  if (act.op != "Clip") return std::nullopt;
  std::optional<float> min_in, max_in;
  if (!ConstScalar(graph, act, 1, &min_in) || !ConstScalar(graph, act, 2, &max_in)) {
    return std::nullopt;
  }
  return std::make_pair(min_in ? *min_in : act.GetFloat("min", -kInf),
                        max_in ? *max_in : act.GetFloat("max", kInf));
}

// Fuses Relu or Clip node `r` into its producer's clamp.
Check FuseActivationAt(Graph* graph, int r) {
  const Node& act = graph->nodes[r];
  if ((act.op != "Relu" && act.op != "Clip") || act.inputs.empty() || act.inputs[0] < 0) {
    return Check();
  }
  const int x = act.inputs[0];
  const int p = graph->Producers()[x];
  if (p < 0) return Check();
  const Node& producer = graph->nodes[p];
  const bool fusable_op = producer.op == "Conv" || producer.op == "Gemm" ||
                          (producer.op == "Add" && graph->tensors[x].dtype == DType::Float32);
  if (!fusable_op || producer.outputs.size() != 1 || !producer.activation.empty() ||
      !SoleConsumer(*graph, x, r)) {
    return Check();  // (the clamp goes before a fused activation, not after)
  }
  const std::optional<std::pair<float, float>> range = ActivationRange(*graph, act);
  if (!range) return Check();
  float lo = range->first, hi = range->second;
  if (producer.clamp) {
    lo = std::max(lo, producer.clamp->first);
    hi = std::min(hi, producer.clamp->second);
  }
  if (!(lo <= hi)) return Check();  // an empty range is a constant, not a clamp
  graph->nodes[p].clamp = std::make_pair(lo, hi);
  AbsorbConsumer(graph, p, r);
  return Check();
}

// Fuses float Add(conv_out, other) into Conv node `a`'s producer as its
// fourth input `sum`, when conv_out has no other consumer and is not a graph
// output, the Conv has no fused clamp, activation or sum yet, and `other` has
// exactly conv_out's shape (no broadcast). The Add's clamp moves along. The
// fused Conv takes the Add's place in the node list (both its operands are
// ready there); the Add's input 0 is tried first, then input 1 (deterministic).
Check FuseConvAddAt(Graph* graph, int a) {
  const Node& add = graph->nodes[a];
  if (add.op != "Add" || add.inputs.size() != 2 || add.outputs.size() != 1) return Check();
  for (int k = 0; k < 2; ++k) {
    const int t = graph->nodes[a].inputs[k];
    const int other = graph->nodes[a].inputs[1 - k];
    if (t < 0 || other < 0 || t == other) continue;
    const int p = graph->Producers()[t];
    if (p < 0) continue;
    const Node& conv = graph->nodes[p];
    const Tensor& tt = graph->tensors[t];
    const Tensor& ot = graph->tensors[other];
    if (conv.op != "Conv" || conv.outputs.size() != 1 || conv.clamp || !conv.activation.empty() ||
        conv.inputs.size() > 3 || conv.device != graph->nodes[a].device ||
        tt.dtype != DType::Float32 || ot.dtype != DType::Float32 || tt.shape.empty() ||
        ot.shape != tt.shape || graph->tensors[graph->nodes[a].outputs[0]].shape != tt.shape ||
        !SoleConsumer(*graph, t, a)) {
      continue;
    }
    Node fused = graph->nodes[p];
    fused.inputs.resize(4, -1);  // no bias: input 2 stays absent
    fused.inputs[3] = other;
    fused.outputs[0] = graph->nodes[a].outputs[0];
    fused.clamp = graph->nodes[a].clamp;
    KillNode(&graph->nodes[p]);
    graph->nodes[a] = std::move(fused);
    return Check();
  }
  return Check();
}

// The fused activation of node `act` (Node::activation with alpha, beta),
// or false when it is none of HardSwish, Swish, HardSigmoid, Sigmoid.
bool FusableActivation(const Node& act, std::string* out_op, float* out_alpha, float* out_beta) {
  *out_alpha = 0.0f;
  *out_beta = 0.0f;
  if (act.op == "HardSwish") {  // ONNX's (and FuseHardSwish's) fixed 1/6, 0.5
    *out_alpha = 1.0f / 6.0f;
    *out_beta = 0.5f;
  } else if (act.op == "HardSigmoid") {
    *out_alpha = act.GetFloat("alpha", 0.2f);
    *out_beta = act.GetFloat("beta", 0.5f);
  } else if (act.op == "Swish") {
    if (act.GetFloat("alpha", 1.0f) != 1.0f) return false;
  } else if (act.op != "Sigmoid") {
    return false;
  }
  *out_op = act.op;
  return true;
}

// Fuses HardSwish, Swish, HardSigmoid or Sigmoid node `r` into the float32
// Conv or Gemm that produces its input (after that node's clamp), when the
// input has no other consumer and is not a graph output.
Check FuseConvActivationAt(Graph* graph, int r) {
  const Node& act = graph->nodes[r];
  if (act.inputs.size() != 1 || act.inputs[0] < 0 || act.outputs.size() != 1) return Check();
  std::string op;
  float alpha = 0.0f, beta = 0.0f;
  if (!FusableActivation(act, &op, &alpha, &beta)) return Check();
  const int x = act.inputs[0];
  const int p = graph->Producers()[x];
  if (p < 0) return Check();
  const Node& producer = graph->nodes[p];
  if ((producer.op != "Conv" && producer.op != "Gemm") || producer.outputs.size() != 1 ||
      !producer.activation.empty() || producer.device != act.device ||
      graph->tensors[x].dtype != DType::Float32 || !SoleConsumer(*graph, x, r)) {
    return Check();
  }
  Node& fused = graph->nodes[p];
  fused.activation = op;
  fused.activation_alpha = alpha;
  fused.activation_beta = beta;
  AbsorbConsumer(graph, p, r);
  return Check();
}

// The value of tensor `t` when it is a one-element float32 constant whose
// rank does not exceed `max_rank` (so it cannot widen a broadcast).
std::optional<float> ScalarConstant(const Graph& graph, int t, size_t max_rank) {
  if (!IsConstant(graph, t)) return std::nullopt;
  const Tensor& c = graph.tensors[t];
  if (c.dtype != DType::Float32 || c.elements() != 1 || c.shape.size() > max_rank) {
    return std::nullopt;
  }
  return c.FloatData()[0];
}

// The other input of binary node `n` when one of its inputs is `t`, else -1.
int OtherInput(const Node& n, int t) {
  if (n.inputs.size() != 2) return -1;
  if (n.inputs[0] == t) return n.inputs[1];
  if (n.inputs[1] == t) return n.inputs[0];
  return -1;
}

// The single node reading `t` (not a graph output), or -1.
int SoleReader(const Graph& graph, int t) {
  if (IsGraphOutput(graph, t)) return -1;
  int reader = -1;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const auto& in = graph.nodes[n].inputs;
    if (std::find(in.begin(), in.end(), t) == in.end()) continue;
    if (reader >= 0) return -1;
    reader = static_cast<int>(n);
  }
  return reader;
}

// Rewrites the exact GELU torch exports at opsets 11-17 (and its reorderings)
// into one Gelu node:
//   d = Div(x, sqrt(2))  or  Mul(x, 1/sqrt(2))
//   a = Add(Erf(d), 1)
//   y = x * a * 0.5, as any two Muls: Mul(Mul(x, a), 0.5), Mul(Mul(x, 0.5), a),
//       Mul(x, Mul(a, 0.5)), operands in either order.
// The constants are checked exactly, but for the float rounding of sqrt(2).
Check FuseGeluAt(Graph* graph, int e) {
  const Node& erf = graph->nodes[e];
  if (erf.op != "Erf" || erf.inputs.size() != 1 || erf.outputs.size() != 1) return Check();
  const std::vector<int> producer = graph->Producers();
  const int d_out = erf.inputs[0];
  const int d = producer[d_out];
  if (d < 0 || SoleReader(*graph, d_out) != e) return Check();
  const Node& div = graph->nodes[d];
  if ((div.op != "Div" && div.op != "Mul") || div.inputs.size() != 2) return Check();
  int x = -1;
  for (int k = 0; k < 2 && x < 0; ++k) {
    if (div.op == "Div" && k == 1) break;  // Div(x, c) only
    const int cand = div.inputs[k];
    const Tensor& xt = graph->tensors[cand];
    if (xt.dtype != DType::Float32 || IsConstant(*graph, cand)) continue;
    const std::optional<float> c = ScalarConstant(*graph, div.inputs[1 - k], xt.shape.size());
    if (!c) continue;
    const double want = div.op == "Div" ? std::sqrt(2.0) : std::sqrt(0.5);
    if (std::fabs(static_cast<double>(*c) - want) <= 1e-6) x = cand;
  }
  if (x < 0) return Check();
  const size_t rank = graph->tensors[x].shape.size();
  const int erf_out = erf.outputs[0];
  const int a = SoleReader(*graph, erf_out);
  if (a < 0 || graph->nodes[a].op != "Add" || graph->nodes[a].outputs.size() != 1) return Check();
  const std::optional<float> one =
      ScalarConstant(*graph, OtherInput(graph->nodes[a], erf_out), rank);
  if (!one || *one != 1.0f) return Check();
  const int a_out = graph->nodes[a].outputs[0];
  auto is_half = [&](int t) {
    const std::optional<float> v = ScalarConstant(*graph, t, rank);
    return v && *v == 0.5f;
  };
  // n1: the Mul reading a. Either it multiplies a by x or 0.5 (then the
  // outer Mul n2 multiplies by the remaining factor) or by Mul(x, 0.5).
  const int n1 = SoleReader(*graph, a_out);
  if (n1 < 0 || graph->nodes[n1].op != "Mul" || graph->nodes[n1].outputs.size() != 1) {
    return Check();
  }
  const int o1 = OtherInput(graph->nodes[n1], a_out);
  if (o1 < 0) return Check();
  int root = -1, inner = -1;
  if (o1 == x || is_half(o1)) {
    const int n1_out = graph->nodes[n1].outputs[0];
    const int n2 = SoleReader(*graph, n1_out);
    if (n2 < 0 || graph->nodes[n2].op != "Mul") return Check();
    const int o2 = OtherInput(graph->nodes[n2], n1_out);
    if (o2 < 0 || !(o1 == x ? is_half(o2) : o2 == x)) return Check();
    root = n2;
    inner = n1;
  } else {
    const int q = producer[o1];
    if (q < 0 || graph->nodes[q].op != "Mul" || SoleReader(*graph, o1) != n1) return Check();
    const int oq = OtherInput(graph->nodes[q], x);
    if (oq < 0 || oq == x || !is_half(oq)) return Check();
    root = n1;
    inner = q;
  }
  const int y = graph->nodes[root].outputs.size() == 1 ? graph->nodes[root].outputs[0] : -1;
  if (y < 0 || graph->tensors[y].shape != graph->tensors[x].shape) return Check();
  Node& fused = graph->nodes[root];
  fused.op = "Gelu";
  fused.inputs = {x};
  fused.attrs.clear();
  fused.clamp.reset();
  for (int dead : {d, e, a, inner}) KillNode(&graph->nodes[dead]);
  return Check();
}

// Mul node `m` as y = x * g, where g = ops[0](ops[1](...ops[k-1](x))) is a
// chain of unary nodes, each read only by the next: x and the chain's nodes,
// outermost first.
struct GatedMul {
  int x = -1;
  std::vector<int> chain;
};

std::optional<GatedMul> MatchGatedMul(const Graph& graph, const std::vector<int>& producer, int m,
                                      const std::vector<const char*>& ops) {
  const Node& mul = graph.nodes[m];
  if (mul.op != "Mul" || mul.inputs.size() != 2 || mul.outputs.size() != 1 || mul.inputs[0] < 0 ||
      mul.inputs[1] < 0) {
    return std::nullopt;
  }
  for (int k = 0; k < 2; ++k) {
    GatedMul match;
    match.x = mul.inputs[1 - k];
    int t = mul.inputs[k], reader = m;
    for (const char* op : ops) {
      const int p = producer[t];
      if (p < 0 || graph.nodes[p].op != op || graph.nodes[p].inputs.size() != 1 ||
          graph.nodes[p].outputs.size() != 1 || SoleReader(graph, t) != reader) {
        break;
      }
      match.chain.push_back(p);
      reader = p;
      t = graph.nodes[p].inputs[0];
    }
    if (match.chain.size() == ops.size() && t == match.x) return match;
  }
  return std::nullopt;
}

// Rewrites every Mul(x, ops...(x)) that `accept` agrees to into one `fused`
// node reading x. Producers are computed once: a rewrite kills chain nodes
// (their op cleared, so they never match again) and keeps the Mul's output.
template <typename Accept>
Check FuseGatedMuls(Graph* graph, const std::vector<const char*>& ops, const char* fused,
                    Accept accept) {
  BATON_ASSIGN_OR_RETURN(std::vector<int> order, graph->TopologicalOrder());
  const std::vector<int> producer = graph->Producers();
  for (int m : order) {
    const std::optional<GatedMul> match = MatchGatedMul(*graph, producer, m, ops);
    if (!match || !accept(*match, m)) continue;
    Node& node = graph->nodes[m];
    node.op = fused;
    node.inputs = {match->x};
    node.attrs.clear();
    for (int p : match->chain) KillNode(&graph->nodes[p]);
  }
  EraseDeadNodes(graph);
  return Check();
}

// A float tensor named after `base`, shape to be inferred.
int AddFloatTensor(Graph* graph, const std::string& base) {
  Tensor t;
  t.name = UniqueTensorName(*graph, base);
  t.dtype = DType::Float32;
  return graph->AddTensor(std::move(t));
}

// ---- Integer ops from QDQ groups (issue 15) ----

// A DequantizeLinear that produced tensor `t`, with constant scale and zero
// point: `q` the quantized tensor, scale/zero the (possibly absent: -1)
// inputs, `axis` normalized.
struct DqSource {
  int node = -1;
  int q = -1, scale = -1, zero = -1;
  int64_t axis = 1;
};

std::optional<DqSource> DequantizedFrom(const Graph& graph, const std::vector<int>& producer,
                                        int t) {
  if (t < 0 || producer[t] < 0) return std::nullopt;
  const Node& dq = graph.nodes[producer[t]];
  if (dq.op != "DequantizeLinear" || dq.inputs.size() < 2 || dq.inputs[0] < 0 || dq.inputs[1] < 0) {
    return std::nullopt;
  }
  DqSource s;
  s.node = producer[t];
  s.q = dq.inputs[0];
  s.scale = dq.inputs[1];
  s.zero = internal::HasInput(dq, 2) ? dq.inputs[2] : -1;
  if (!IsConstant(graph, s.scale) || (s.zero >= 0 && !IsConstant(graph, s.zero))) {
    return std::nullopt;
  }
  const DType d = graph.tensors[s.q].dtype;
  if (d != DType::UInt8 && d != DType::Int8 && d != DType::Int32) return std::nullopt;
  s.axis = internal::NormalizeAxis(dq.GetInt("axis", 1), graph.tensors[s.q].shape.size());
  return s;
}

// A one-element constant zero point of `dtype`, or `zero` itself.
int ZeroPointOr(Graph* graph, int zero, DType dtype, int64_t count, const std::string& base) {
  if (zero >= 0) return zero;
  Tensor t;
  t.name = UniqueTensorName(*graph, base);
  t.dtype = dtype;
  t.shape = count == 1 ? std::vector<int64_t>{} : std::vector<int64_t>{count};
  t.shape_known = true;
  t.is_constant = true;
  t.data.assign(static_cast<size_t>(count) * DTypeBytes(dtype), 0);
  return graph->AddTensor(std::move(t));
}

// The weight side of a fusion: a constant 8-bit weight dequantized per
// tensor or per output channel (`channel_axis` of the weight, `channels`
// of them). Returns false when the pattern does not hold.
bool QuantizedWeight(const Graph& graph, const DqSource& w, int64_t channel_axis,
                     int64_t channels) {
  const Tensor& q = graph.tensors[w.q];
  if (!q.is_constant || (q.dtype != DType::Int8 && q.dtype != DType::UInt8)) return false;
  const int64_t n = graph.tensors[w.scale].elements();
  return n == 1 || (n == channels && w.axis == channel_axis);
}

// A constant int32 bias dequantized with zero point 0 and scale x_scale *
// w_scale (per channel), which the integer kernels add to the accumulator.
bool QuantizedBias(const Graph& graph, const DqSource& b, float x_scale,
                   const std::vector<float>& w_scale, int64_t channels) {
  const Tensor& q = graph.tensors[b.q];
  if (!q.is_constant || q.dtype != DType::Int32 || q.shape != std::vector<int64_t>{channels}) {
    return false;
  }
  if (b.zero >= 0) {
    bool all_zero = true;
    internal::VisitDType(graph.tensors[b.zero].dtype, [&](auto zero) {
      for (auto z : internal::Values<decltype(zero)>(graph.tensors[b.zero])) {
        all_zero = all_zero && z == 0;
      }
    });
    if (!all_zero) return false;
  }
  const std::vector<float> bs = graph.tensors[b.scale].FloatData();
  if (bs.size() != 1 && static_cast<int64_t>(bs.size()) != channels) return false;
  for (int64_t c = 0; c < channels; ++c) {
    const float want = x_scale * w_scale[w_scale.size() == 1 ? 0 : c];
    const float got = bs[bs.size() == 1 ? 0 : c];
    if (std::fabs(got - want) > 1e-6f * std::fabs(want)) return false;
  }
  return true;
}

// A per-tensor quantized activation: DequantizeLinear of a uint8/int8 tensor
// with one-element constant scale and zero point.
std::optional<DqSource> QuantizedActivation(const Graph& graph, const std::vector<int>& producer,
                                            int t) {
  std::optional<DqSource> s = DequantizedFrom(graph, producer, t);
  if (!s) return std::nullopt;
  const DType d = graph.tensors[s->q].dtype;
  if ((d != DType::UInt8 && d != DType::Int8) || graph.tensors[s->scale].elements() != 1 ||
      (s->zero >= 0 && graph.tensors[s->zero].elements() != 1)) {
    return std::nullopt;
  }
  return s;
}

// DequantizeLinear(a) + DequantizeLinear(b) [-> Relu | Clip] -> QuantizeLinear
// => QLinearAdd (com.microsoft's inputs), and DequantizeLinear(a) *
// DequantizeLinear(b) -> QuantizeLinear => QLinearMul, when a, b and the
// output share one 8-bit dtype. Node `add` is the Add or Mul, `act` the
// activation or -1.
Check FuseQLinearAdd(Graph* graph, int qn, int add, int act,
                     std::optional<std::pair<float, float>> clamp) {
  const std::vector<int> producer = graph->Producers();
  const Node& op = graph->nodes[add];
  if (op.inputs.size() != 2 || op.outputs.size() != 1 || op.clamp) return Check();
  const std::optional<DqSource> a = QuantizedActivation(*graph, producer, op.inputs[0]);
  const std::optional<DqSource> b = QuantizedActivation(*graph, producer, op.inputs[1]);
  if (!a || !b) return Check();
  const Node& q = graph->nodes[qn];
  const DType dtype = graph->tensors[a->q].dtype;
  const int y = q.outputs[0];
  if (graph->tensors[b->q].dtype != dtype || graph->tensors[y].dtype != dtype) return Check();
  const std::string name = op.name;
  Node fused;
  fused.op = op.op == "Mul" ? "QLinearMul" : "QLinearAdd";
  fused.name = name;
  fused.clamp = clamp;
  const int y_scale = q.inputs[1];
  const int y_zero = internal::HasInput(q, 2) ? q.inputs[2] : -1;
  fused.inputs = {a->q,
                  a->scale,
                  ZeroPointOr(graph, a->zero, dtype, 1, name + "_a_zero_point"),
                  b->q,
                  b->scale,
                  ZeroPointOr(graph, b->zero, dtype, 1, name + "_b_zero_point"),
                  y_scale,
                  ZeroPointOr(graph, y_zero, dtype, 1, name + "_y_zero_point")};
  fused.outputs = {y};
  KillNode(&graph->nodes[add]);
  if (act >= 0) KillNode(&graph->nodes[act]);
  graph->nodes[qn] = std::move(fused);
  return Check();
}

// True when ONNX Runtime's QLinearGlobalAveragePool arithmetic (which its
// QLinearAveragePool also takes when the window is the whole unpadded
// plane) accepts these parameters: the plane has fewer than 2^24 elements
// and x_scale / (y_scale * size) lies in [2^-32, 256).
bool GlobalPoolScaleInRange(float x_scale, float y_scale, int64_t size) {
  if (size <= 0 || size >= (int64_t{1} << 24)) return false;
  const float scale = x_scale / (y_scale * static_cast<float>(size));
  return scale >= 0x1.0p-32f && scale < 256.0f;
}

// The input of a group DequantizeLinear(x) -> node `op` -> QuantizeLinear
// (node `qn`) that can run on x's bytes: `op` has one input and one output
// and no fused clamp, x is a per-tensor 8-bit activation with a known shape,
// and the QuantizeLinear writes x's dtype.
std::optional<DqSource> QuantizedUnaryInput(const Graph& graph, int qn, int op) {
  const Node& n = graph.nodes[op];
  if (n.inputs.size() != 1 || n.outputs.size() != 1 || n.clamp) return std::nullopt;
  const std::optional<DqSource> x = QuantizedActivation(graph, graph.Producers(), n.inputs[0]);
  if (!x) return std::nullopt;
  const Tensor& xq = graph.tensors[x->q];
  if (graph.tensors[graph.nodes[qn].outputs[0]].dtype != xq.dtype || !xq.shape_known) {
    return std::nullopt;
  }
  return x;
}

// Replaces such a group by `fused`, whose first five inputs become the
// QLinear operands x, x_scale, x_zero_point, y_scale, y_zero_point (absent
// zero points as zeros of x's dtype), followed by `extra`.
void ReplaceQuantizedUnary(Graph* graph, int qn, int op, const DqSource& x, Node fused,
                           const std::vector<int>& extra) {
  const DType dtype = graph->tensors[x.q].dtype;
  const Node& q = graph->nodes[qn];
  const int y_scale = q.inputs[1];
  const int y_zero = internal::HasInput(q, 2) ? q.inputs[2] : -1;
  const int y = q.outputs[0];
  const std::string name = fused.name;
  fused.inputs = {x.q, x.scale, ZeroPointOr(graph, x.zero, dtype, 1, name + "_x_zero_point"),
                  y_scale, ZeroPointOr(graph, y_zero, dtype, 1, name + "_y_zero_point")};
  fused.inputs.insert(fused.inputs.end(), extra.begin(), extra.end());
  fused.outputs = {y};
  KillNode(&graph->nodes[op]);
  graph->nodes[qn] = std::move(fused);
}

// DequantizeLinear(x) -> AveragePool | GlobalAveragePool -> QuantizeLinear
// => QLinearAveragePool | QLinearGlobalAveragePool (com.microsoft's inputs),
// when x and the output share one 8-bit dtype and the pool is what ONNX
// Runtime fuses: 1-D or 2-D windows, no dilation. Node `pool` is the pool.
Check FuseQLinearPool(Graph* graph, int qn, int pool) {
  using internal::Shape;
  const std::optional<DqSource> x = QuantizedUnaryInput(*graph, qn, pool);
  if (!x) return Check();
  const Node& op = graph->nodes[pool];
  const Node& q = graph->nodes[qn];
  const Tensor& xq = graph->tensors[x->q];
  if (xq.shape.size() < 3) return Check();
  const Shape spatial(xq.shape.begin() + 2, xq.shape.end());
  const float x_scale = graph->tensors[x->scale].FloatData()[0];
  const float y_scale = graph->tensors[q.inputs[1]].FloatData()[0];
  int64_t plane = 1;
  for (int64_t d : spatial) plane *= d;
  const bool global = op.op == "GlobalAveragePool";
  if (!global) {
    const size_t r = spatial.size();
    if ((r != 1 && r != 2) || op.FindAttr("kernel_shape") == nullptr) return Check();
    const Shape kernel = op.GetInts("kernel_shape");
    const Attr* dil = op.FindAttr("dilations");
    if (dil != nullptr) {
      for (int64_t d : op.GetInts("dilations")) {
        if (d != 1) return Check();
      }
    }
    const Attr* st = op.FindAttr("strides");
    const Shape strides = st != nullptr ? op.GetInts("strides") : Shape(r, 1);
    auto pads = internal::ResolvePads(op, spatial, kernel, strides, Shape(r, 1));
    if (!pads.ok()) return Check();
    const bool whole_plane = kernel == spatial && std::all_of(pads->begin(), pads->end(),
                                                              [](int64_t p) { return p == 0; });
    if (whole_plane && !GlobalPoolScaleInRange(x_scale, y_scale, plane)) return Check();
  } else if (!GlobalPoolScaleInRange(x_scale, y_scale, plane)) {
    return Check();
  }
  Node fused;
  fused.op = global ? "QLinearGlobalAveragePool" : "QLinearAveragePool";
  fused.name = op.name;
  if (!global) fused.attrs = op.attrs;
  ReplaceQuantizedUnary(graph, qn, pool, *x, std::move(fused), {});
  return Check();
}

// ONNX Runtime's exponentials for QLinearSoftmax over `len` elements:
// e[d] = exp((shift - d) * x_scale) rounded to float, for d = max - x in
// 0..255 (the distance of an 8-bit x from its row's maximum). The shift
// keeps a sum of `len` terms finite: shift * x_scale = max(0, ln(FLT_MAX /
// len) - 5), the quotient and its log in float (the C library's logf: ONNX
// Runtime's `log` call takes the float overload; a double log changes some
// outputs by an LSB), the rest and the exp in double, as ONNX Runtime builds
// its table (qlinear_softmax.cc), so the bytes are its.
std::vector<float> SoftmaxExpTable(float x_scale, int64_t len) {
  const float quotient = std::numeric_limits<float>::max() / static_cast<float>(len);
  const float log_quotient = std::log(quotient);  // float overload
  const double shift =
      std::max(0.0, static_cast<double>(log_quotient) - 5.0) / static_cast<double>(x_scale);
  std::vector<float> table(256);
  for (int d = 0; d < 256; ++d) {
    table[d] = static_cast<float>(
        std::exp((static_cast<double>(-d) + shift) * static_cast<double>(x_scale)));
  }
  return table;
}

// DequantizeLinear(x) -> Softmax -> QuantizeLinear => QLinearSoftmax(x,
// x_scale, x_zero_point, y_scale, y_zero_point, table) with the Softmax's
// axis, when x and the output share one 8-bit dtype (what ONNX Runtime
// fuses into com.microsoft's QLinearSoftmax, whose bytes the kernel
// reproduces). The kernel computes round(e[d] * floor(1 / y_scale) / sum)
// in float; parameters for which that product can overflow (y_scale below
// about 1 / (148 * axis length), where ONNX Runtime's own result depends on
// the CPU's conversion of infinity) stay unfused. Node `sm` is the Softmax.
Check FuseQLinearSoftmax(Graph* graph, int qn, int sm) {
  const std::optional<DqSource> x = QuantizedUnaryInput(*graph, qn, sm);
  if (!x) return Check();
  const Node& op = graph->nodes[sm];
  const Node& q = graph->nodes[qn];
  const Tensor& xq = graph->tensors[x->q];
  if (xq.shape.empty()) return Check();
  const int64_t axis = internal::NormalizeAxis(op.GetInt("axis", -1), xq.shape.size());
  if (axis < 0 || axis >= static_cast<int64_t>(xq.shape.size())) return Check();
  const int64_t len = xq.shape[static_cast<size_t>(axis)];
  const float x_scale = graph->tensors[x->scale].FloatData()[0];
  const float y_scale = graph->tensors[q.inputs[1]].FloatData()[0];
  if (len < 1 || !(x_scale > 0.0f) || !std::isfinite(x_scale) || !(y_scale > 0.0f) ||
      !(1.0f / y_scale < 16777216.0f)) {
    return Check();
  }
  std::vector<float> table = SoftmaxExpTable(x_scale, len);
  if (!std::isfinite(table[0] * std::floor(1.0f / y_scale))) return Check();
  const std::string name = op.name;
  Tensor t;
  t.name = UniqueTensorName(*graph, name + "_exp_table");
  t.dtype = DType::Float32;
  t.shape = {256};
  t.shape_known = true;
  t.is_constant = true;
  t.data.resize(256 * sizeof(float));
  std::memcpy(t.data.data(), table.data(), t.data.size());
  const int table_t = graph->AddTensor(std::move(t));
  Node fused;
  fused.op = "QLinearSoftmax";
  fused.name = name;
  Attr a;
  a.kind = Attr::Kind::kInt;
  a.i = axis;
  fused.attrs["axis"] = a;
  ReplaceQuantizedUnary(graph, qn, sm, *x, std::move(fused), {table_t});
  return Check();
}

// A QuantizeLinear node with one constant scale and (if any) one constant
// zero point: the output side of every per-tensor fusion below.
bool IsPerTensorQuantize(const Graph& graph, const Node& q) {
  const auto scalar_constant = [&graph](int t) {
    return IsConstant(graph, t) && graph.tensors[t].elements() == 1;
  };
  return q.op == "QuantizeLinear" && q.inputs.size() >= 2 && q.outputs.size() == 1 &&
         q.inputs[0] >= 0 && scalar_constant(q.inputs[1]) &&
         (!internal::HasInput(q, 2) || scalar_constant(q.inputs[2]));
}

// The value of zero point tensor `t` (0 when absent: -1), or nullopt when
// it is not one element.
std::optional<int64_t> ZeroPointValue(const Graph& graph, int t) {
  if (t < 0) return int64_t{0};
  std::optional<int64_t> v;
  internal::VisitDType(graph.tensors[t].dtype, [&](auto zero) {
    const auto values = internal::Values<decltype(zero)>(graph.tensors[t]);
    if (values.size() == 1) v = static_cast<int64_t>(values[0]);
  });
  return v;
}

// QuantizeLinear node `q` applied to the one float `value` (the host
// evaluator's arithmetic, as the kernel's): its output byte, or nullopt.
std::optional<uint8_t> QuantizeOne(const Graph& graph, const Node& q, float value) {
  Tensor x;
  x.dtype = DType::Float32;
  x.shape_known = true;
  x.data.resize(sizeof(float));
  std::memcpy(x.data.data(), &value, sizeof(float));
  Tensor y;
  y.dtype = graph.tensors[q.outputs[0]].dtype;
  y.shape_known = true;
  std::vector<const Tensor*> inputs = {&x};
  for (size_t i = 1; i < q.inputs.size(); ++i) {
    inputs.push_back(q.inputs[i] >= 0 ? &graph.tensors[q.inputs[i]] : nullptr);
  }
  if (!internal::EvaluateNode(q, inputs, {&y}).ok() || y.data.size() != 1) return std::nullopt;
  return y.data[0];
}

// DequantizeLinear(x) -> Flatten | Reshape | Squeeze | Unsqueeze | Transpose
// | Slice | Pad | Resize (nearest) | MaxPool | GlobalMaxPool -> QuantizeLinear
// with the same dtype, scale and zero point on both sides => the op on the
// 8-bit x. Exact: quantizing (x - z) * s with s and z gives x back (the float
// error of the round trip is far below half an LSB), the layout ops only move
// elements (a constant Pad fills with the quantized fill value), and the
// maximum of dequantized values (s > 0) is the dequantized maximum. Node `op`
// is the op (a MaxPool's optional indices output stops the rewrite).
Check DropQdqAround(Graph* graph, int qn, int op_node) {
  const std::vector<int> producer = graph->Producers();
  const Node& op = graph->nodes[op_node];
  if (op.inputs.empty() || op.outputs.size() != 1) return Check();
  const std::optional<DqSource> x = QuantizedActivation(*graph, producer, op.inputs[0]);
  if (!x) return Check();
  const Node& q = graph->nodes[qn];
  const int y = q.outputs[0];
  const DType dtype = graph->tensors[x->q].dtype;
  if (graph->tensors[y].dtype != dtype) return Check();
  const float xs = graph->tensors[x->scale].FloatData()[0];
  const float ys = graph->tensors[q.inputs[1]].FloatData()[0];
  if (!(xs == ys) || !(xs >= 1e-30f && xs <= 1e30f)) return Check();
  const int y_zero = internal::HasInput(q, 2) ? q.inputs[2] : -1;
  if (y_zero >= 0 && graph->tensors[y_zero].dtype != dtype) return Check();
  const std::optional<int64_t> xz = ZeroPointValue(*graph, x->zero);
  const std::optional<int64_t> yz = ZeroPointValue(*graph, y_zero);
  if (!xz || !yz || *xz != *yz) return Check();
  Node moved = op;
  moved.inputs[0] = x->q;
  moved.outputs = {y};
  if (op.op == "Pad" && op.GetString("mode", "constant") == "constant") {
    // The fill value c becomes QuantizeLinear(c), which is what the float
    // graph writes there: a constant of x's dtype (an attribute before opset 11).
    float c = op.GetFloat("value", 0.0f);
    if (internal::HasInput(op, 2)) {
      const Tensor& v = graph->tensors[op.inputs[2]];
      if (!v.is_constant || v.dtype != DType::Float32 || v.elements() != 1) return Check();
      c = v.FloatData()[0];
    }
    if (!(c == c)) return Check();
    const std::optional<uint8_t> fill = QuantizeOne(*graph, q, c);
    if (!fill) return Check();
    if (internal::HasInput(op, 1)) {
      Tensor t;
      t.name = UniqueTensorName(*graph, op.name + "_fill");
      t.dtype = dtype;
      t.shape_known = true;
      t.is_constant = true;
      t.data = {*fill};
      moved.inputs.resize(std::max<size_t>(moved.inputs.size(), 3), -1);
      moved.inputs[2] = graph->AddTensor(std::move(t));
    } else {
      Attr value;
      value.kind = Attr::Kind::kFloat;
      value.f = static_cast<float>(dtype == DType::Int8 ? static_cast<int8_t>(*fill) : *fill);
      moved.attrs["value"] = value;
    }
  }
  KillNode(&graph->nodes[op_node]);
  graph->nodes[qn] = std::move(moved);
  return Check();
}

// ---- Table lookups: DequantizeLinear -> elementwise float ops -> QuantizeLinear ----

// Float ops that act on each element alone (with one-element constants).
bool IsElementwiseFloatOp(const std::string& op) {
  static const std::set<std::string> kOps = {
      "Relu", "Clip", "Sigmoid",    "Tanh",  "HardSigmoid", "HardSwish", "LeakyRelu",
      "Elu",  "Exp",  "Log",        "Neg",   "Abs",         "Softplus",  "Erf",
      "Gelu", "Sqrt", "Reciprocal", "Swish", "Mish",        "Add",       "Sub",
      "Mul",  "Div",  "Pow",        "Max",   "Min"};
  return kOps.count(op) != 0 && internal::CanEvaluate(op);
}

// The nodes between one per-tensor 8-bit DequantizeLinear and the input of
// QuantizeLinear `qn` when they compute y = f(x) element by element: every
// node is an elementwise float op, reads only the dequantized x, tensors of
// the region and one-element float constants, and every tensor the region
// writes is read only inside it (the last one only by QuantizeLinear nodes,
// each of which gets its own table). At most 8 nodes. `nodes` are in graph
// (topological) order.
struct LookupRegion {
  DqSource x;
  std::vector<int> nodes;
};

std::optional<LookupRegion> FindLookupRegion(const Graph& graph, const std::vector<int>& producer,
                                             const std::vector<std::vector<int>>& consumers,
                                             int qn) {
  constexpr size_t kMaxNodes = 8;
  const int out = graph.nodes[qn].inputs[0];
  LookupRegion region;
  int source = -1;  // the dequantized float tensor
  std::set<int> members;
  std::vector<int> stack = {producer[out]};
  while (!stack.empty()) {
    const int n = stack.back();
    stack.pop_back();
    if (n < 0 || members.count(n)) continue;
    const Node& node = graph.nodes[n];
    if (!IsElementwiseFloatOp(node.op) || node.outputs.size() != 1 || node.clamp ||
        members.size() == kMaxNodes) {
      return std::nullopt;
    }
    members.insert(n);
    for (int t : node.inputs) {
      if (t < 0) continue;
      const Tensor& tensor = graph.tensors[t];
      if (tensor.is_constant) {
        if (tensor.dtype != DType::Float32 || tensor.elements() != 1) return std::nullopt;
        continue;
      }
      if (t == source) continue;
      const int p = producer[t];
      if (p >= 0 && graph.nodes[p].op == "DequantizeLinear") {
        if (source >= 0) return std::nullopt;  // a second non-constant operand
        std::optional<DqSource> x = QuantizedActivation(graph, producer, t);
        if (!x) return std::nullopt;
        source = t;
        region.x = *x;
        continue;
      }
      if (p < 0) return std::nullopt;  // a graph input
      stack.push_back(p);
    }
  }
  if (source < 0) return std::nullopt;
  const std::vector<int64_t>& shape = graph.tensors[source].shape;
  for (int n : members) {
    const int t = graph.nodes[n].outputs[0];
    if (IsGraphOutput(graph, t) || graph.tensors[t].dtype != DType::Float32 ||
        graph.tensors[t].shape != shape) {
      return std::nullopt;
    }
    for (int c : consumers[t]) {
      if (t == out ? graph.nodes[c].op != "QuantizeLinear" : members.count(c) == 0) {
        return std::nullopt;
      }
    }
  }
  region.nodes.assign(members.begin(), members.end());  // std::set: graph order
  return region;
}

// The 256 values of QuantizeLinear(f(DequantizeLinear(v))) for every v of
// x's 8-bit dtype, lowest first, evaluated with the planner's host
// evaluator: the same float arithmetic as the unfused nodes (up to the
// rounding of the float functions themselves). Nullopt when an op cannot be
// evaluated.
std::optional<std::vector<uint8_t>> LookupTable(const Graph& graph, const LookupRegion& region,
                                                int qn) {
  const DType x_dtype = graph.tensors[region.x.q].dtype;
  std::map<int, Tensor> values;  // region tensors (and the source) over the 256 inputs
  // A tensor of the 256 values, shaped [256], or one-element constants as scalars.
  const auto input = [&](int t) -> const Tensor* {
    if (t < 0) return nullptr;
    auto it = values.find(t);
    if (it != values.end()) return &it->second;
    Tensor scalar = graph.tensors[t];
    scalar.shape = {};
    return &values.emplace(t, std::move(scalar)).first->second;
  };
  const auto evaluate = [&](const Node& node, DType out_dtype) -> bool {
    Tensor out;
    out.name = graph.tensors[node.outputs[0]].name;
    out.dtype = out_dtype;
    out.shape = {256};
    out.shape_known = true;
    std::vector<const Tensor*> ins;
    for (int t : node.inputs) ins.push_back(input(t));
    if (!internal::EvaluateNode(node, ins, {&out}).ok()) return false;
    values[node.outputs[0]] = std::move(out);
    return true;
  };
  Tensor codes;
  codes.name = graph.tensors[region.x.q].name;
  codes.dtype = x_dtype;
  codes.shape = {256};
  codes.shape_known = true;
  codes.data.resize(256);
  for (int i = 0; i < 256; ++i) {
    codes.data[i] = static_cast<uint8_t>(x_dtype == DType::Int8 ? i ^ 0x80 : i);
  }
  values[region.x.q] = std::move(codes);
  if (!evaluate(graph.nodes[region.x.node], DType::Float32)) return std::nullopt;
  for (int n : region.nodes) {
    if (!evaluate(graph.nodes[n], DType::Float32)) return std::nullopt;
  }
  // The QuantizeLinear reads the region's last tensor (a requantization:
  // the dequantized x).
  Node q = graph.nodes[qn];
  q.inputs[0] = graph.nodes[region.nodes.empty() ? region.x.node : region.nodes.back()].outputs[0];
  if (!evaluate(q, graph.tensors[q.outputs[0]].dtype)) return std::nullopt;
  return values[q.outputs[0]].data;
}

// A constant [256] table of `dtype` named after `base`.
int AddTable(Graph* graph, const std::string& base, DType dtype, std::vector<uint8_t> data) {
  Tensor t;
  t.name = UniqueTensorName(*graph, base + "_table");
  t.dtype = dtype;
  t.shape = {256};
  t.shape_known = true;
  t.is_constant = true;
  t.data = std::move(data);
  return graph->AddTensor(std::move(t));
}

// DequantizeLinear(x) -> elementwise float ops -> QuantizeLinear(y) =>
// QLinearLookup(x, table): see FindLookupRegion. Node `qn` is the
// QuantizeLinear.
Check FuseQLinearLookup(Graph* graph, int qn) {
  const Node& q = graph->nodes[qn];
  if (!IsPerTensorQuantize(*graph, q)) return Check();
  const DType y_dtype = graph->tensors[q.outputs[0]].dtype;
  if (y_dtype != DType::UInt8 && y_dtype != DType::Int8) return Check();
  const std::vector<int> producer = graph->Producers();
  const std::optional<LookupRegion> region =
      FindLookupRegion(*graph, producer, Consumers(*graph), qn);
  if (!region) return Check();
  const std::optional<std::vector<uint8_t>> table = LookupTable(*graph, *region, qn);
  if (!table) return Check();
  // The region's last node names the table lookup, unless other
  // QuantizeLinear readers keep the region: then the QuantizeLinear does.
  const int out = graph->nodes[qn].inputs[0];
  const bool sole = SoleReader(*graph, out) == qn;
  const std::string name = sole ? graph->nodes[region->nodes.back()].name : graph->nodes[qn].name;
  const int table_t = AddTable(graph, name, y_dtype, *table);
  Node fused;
  fused.op = "QLinearLookup";
  fused.name = name;
  fused.inputs = {region->x.q, table_t};
  fused.outputs = {graph->nodes[qn].outputs[0]};
  // With other QuantizeLinear readers the region stays for them, and
  // RemoveUnread drops it once they are all fused.
  if (sole) {
    for (int n : region->nodes) KillNode(&graph->nodes[n]);
  }
  graph->nodes[qn] = std::move(fused);
  return Check();
}

// Fuses the QDQ group ending at QuantizeLinear node `qn`:
//   DequantizeLinear(x) -> Conv(., DequantizeLinear(w const)[, DequantizeLinear(b const)])
//     [-> Relu | Clip] -> QuantizeLinear  =>  QLinearConv
//   DequantizeLinear(a) -> MatMul(., DequantizeLinear(w const)) or
//     Gemm(., DequantizeLinear(w const)[, DequantizeLinear(b const)]) (alpha = beta = 1,
//     transA = 0) [-> Relu | Clip] -> QuantizeLinear  =>  QLinearMatMul
// with per-tensor activations, per-tensor or per-output-channel weights. The
// DequantizeLinear nodes stay for their other readers (FoldConstants and
// RemoveUnread take the rest).
Check FuseQLinearGroupAt(Graph* graph, int qn) {
  const Node& q = graph->nodes[qn];
  // (A zero point has its scale's shape: shape inference checked it.)
  if (!IsPerTensorQuantize(*graph, q)) return Check();
  const std::vector<int> producer = graph->Producers();
  int op_out = q.inputs[0];
  int p = producer[op_out];
  if (p < 0 || SoleReader(*graph, op_out) != qn) return Check();
  std::optional<std::pair<float, float>> clamp;
  int act = -1;
  if (graph->nodes[p].op == "Relu" || graph->nodes[p].op == "Clip") {
    const Node& a = graph->nodes[p];
    clamp = ActivationRange(*graph, a);
    if (!clamp || !(clamp->first <= clamp->second) || a.inputs.empty() || a.inputs[0] < 0) {
      return Check();
    }
    act = p;
    op_out = a.inputs[0];
    p = producer[op_out];
    if (p < 0 || SoleReader(*graph, op_out) != act) return Check();
  }
  if (graph->nodes[p].op == "Add") return FuseQLinearAdd(graph, qn, p, act, clamp);
  if (graph->nodes[p].op == "Mul" && act < 0) return FuseQLinearAdd(graph, qn, p, -1, clamp);
  const std::string& kind = graph->nodes[p].op;
  if (act < 0 && (kind == "AveragePool" || kind == "GlobalAveragePool")) {
    return FuseQLinearPool(graph, qn, p);
  }
  if (act < 0 && kind == "Softmax") return FuseQLinearSoftmax(graph, qn, p);
  if (act < 0 &&
      (kind == "Flatten" || kind == "Reshape" || kind == "Squeeze" || kind == "Unsqueeze" ||
       kind == "Transpose" || kind == "MaxPool" || kind == "GlobalMaxPool" || kind == "Slice" ||
       kind == "Pad" ||
       (kind == "Resize" && graph->nodes[p].GetString("mode", "nearest") == "nearest"))) {
    return DropQdqAround(graph, qn, p);
  }
  const Node& op = graph->nodes[p];
  const bool conv = op.op == "Conv";
  const bool gemm = op.op == "Gemm";
  if ((!conv && !gemm && op.op != "MatMul") || op.outputs.size() != 1 || op.clamp) {
    return Check();
  }
  if (gemm && (op.GetFloat("alpha", 1.0f) != 1.0f || op.GetFloat("beta", 1.0f) != 1.0f ||
               op.GetInt("transA", 0) != 0)) {
    return Check();
  }
  const std::optional<DqSource> x = DequantizedFrom(*graph, producer, op.inputs[0]);
  const std::optional<DqSource> w =
      op.inputs.size() > 1 ? DequantizedFrom(*graph, producer, op.inputs[1]) : std::nullopt;
  if (!x || !w) return Check();
  const Tensor& xq = graph->tensors[x->q];
  if ((xq.dtype != DType::UInt8 && xq.dtype != DType::Int8) ||
      graph->tensors[x->scale].elements() != 1) {
    return Check();
  }
  // The integer kernels: 1-D and 2-D convolutions; products of a [.., M, K].
  if (conv ? (xq.shape.size() != 3 && xq.shape.size() != 4) : xq.shape.size() < 2) return Check();
  const Tensor& wq = graph->tensors[w->q];
  const bool trans_b = gemm && op.GetInt("transB", 0) != 0;
  if (!conv && wq.shape.size() != 2) return Check();
  const int64_t channel_axis = conv ? 0 : (trans_b ? 0 : 1);
  const int64_t channels = wq.shape.empty() ? 0 : wq.shape[static_cast<size_t>(channel_axis)];
  if (!QuantizedWeight(*graph, *w, channel_axis, channels)) return Check();
  int bias = -1;
  if (op.inputs.size() > 2 && op.inputs[2] >= 0) {
    const std::optional<DqSource> b = DequantizedFrom(*graph, producer, op.inputs[2]);
    if (!b || !QuantizedBias(*graph, *b, graph->tensors[x->scale].FloatData()[0],
                             graph->tensors[w->scale].FloatData(), channels)) {
      return Check();
    }
    bias = b->q;
  }
  const int y = q.outputs[0];
  const std::string name = op.name;
  Node fused;
  fused.op = conv ? "QLinearConv" : "QLinearMatMul";
  fused.name = name;
  if (conv) {
    fused.attrs = op.attrs;
  } else if (trans_b) {
    Attr t;
    t.kind = Attr::Kind::kInt;
    t.i = 1;
    fused.attrs["transB"] = t;
  }
  fused.clamp = clamp;
  const int y_scale = q.inputs[1];
  const int y_zero = internal::HasInput(q, 2) ? q.inputs[2] : -1;
  const int xs = x->scale, xz = x->zero, xqi = x->q, wqi = w->q, ws = w->scale, wz = w->zero;
  const DType x_dtype = xq.dtype, w_dtype = wq.dtype;
  const int64_t w_count = graph->tensors[ws].elements();
  const int act_node = act;
  fused.inputs = {xqi,
                  xs,
                  ZeroPointOr(graph, xz, x_dtype, 1, name + "_x_zero_point"),
                  wqi,
                  ws,
                  ZeroPointOr(graph, wz, w_dtype, w_count, name + "_w_zero_point"),
                  y_scale,
                  ZeroPointOr(graph, y_zero, DType::UInt8, 1, name + "_y_zero_point")};
  if (bias >= 0) fused.inputs.push_back(bias);
  fused.outputs = {y};
  // `graph->nodes` may not grow here (RewriteEachNode holds indices): the
  // fused node replaces the QuantizeLinear; the op and activation die.
  KillNode(&graph->nodes[p]);
  if (act_node >= 0) KillNode(&graph->nodes[act_node]);
  graph->nodes[qn] = std::move(fused);
  return Check();
}

// Concat(DequantizeLinear(a), DequantizeLinear(b), ...) -> QuantizeLinear(y),
// every operand and y per-tensor quantized with one 8-bit dtype => Concat of
// the 8-bit operands into y, each operand whose scale or zero point differs
// from y's first requantized by a QLinearLookup (the QuantizeLinear of its
// DequantizeLinear: what the float graph computes, and ONNX Runtime's
// QLinearConcat). Inserts nodes, so it is a pass of its own.
Check FuseQLinearConcat(Graph* graph) {
  const std::vector<int> producer = graph->Producers();
  const auto consumers = Consumers(*graph);
  // Scale bits and zero point of a per-tensor quantization.
  const auto params = [graph](int scale, int zero) {
    float s = graph->tensors[scale].FloatData()[0];
    uint32_t bits;
    std::memcpy(&bits, &s, sizeof bits);
    return std::make_pair(bits, ZeroPointValue(*graph, zero));
  };
  std::vector<Node> nodes;
  nodes.reserve(graph->nodes.size());
  std::vector<bool> dead(graph->nodes.size(), false);
  for (size_t c = 0; c < graph->nodes.size(); ++c) {
    if (dead[c]) continue;
    if (graph->nodes[c].op != "Concat") {
      nodes.push_back(graph->nodes[c]);
      continue;
    }
    // Copies: the DequantizeLinear nodes before `c` are still read.
    const Node& concat = graph->nodes[c];
    const int out = concat.outputs.size() == 1 ? concat.outputs[0] : -1;
    if (out < 0 || IsGraphOutput(*graph, out) || consumers[out].size() != 1) {
      nodes.push_back(concat);
      continue;
    }
    const int qn = consumers[out][0];
    const Node& q = graph->nodes[qn];
    bool ok = IsPerTensorQuantize(*graph, q) && q.inputs[0] == out;
    const DType dtype = ok ? graph->tensors[q.outputs[0]].dtype : DType::Float32;
    std::vector<DqSource> operands;
    for (size_t i = 0; ok && i < concat.inputs.size(); ++i) {
      std::optional<DqSource> x = QuantizedActivation(*graph, producer, concat.inputs[i]);
      ok = x && graph->tensors[x->q].dtype == dtype;
      if (ok) operands.push_back(*x);
    }
    if (!ok || operands.empty()) {
      nodes.push_back(concat);
      continue;
    }
    const auto y_params = params(q.inputs[1], internal::HasInput(q, 2) ? q.inputs[2] : -1);
    std::vector<int> inputs;
    for (size_t i = 0; i < operands.size(); ++i) {
      const DqSource& x = operands[i];
      if (params(x.scale, x.zero) == y_params) {
        inputs.push_back(x.q);
        continue;
      }
      LookupRegion requant;
      requant.x = x;
      const std::optional<std::vector<uint8_t>> table = LookupTable(*graph, requant, qn);
      if (!table) return Fail("node '" + concat.name + "': cannot requantize an operand");
      // Per operand position: Concat(x, x) requantizes x twice.
      const std::string base = concat.name + "_requant" + std::to_string(i);
      Node lookup;
      lookup.op = "QLinearLookup";
      lookup.name = base;
      Tensor r = graph->tensors[x.q];
      r.name = UniqueTensorName(*graph, base);
      r.dtype = dtype;
      r.data.clear();
      const int rq = graph->AddTensor(std::move(r));
      lookup.inputs = {x.q, AddTable(graph, base, dtype, *table)};
      lookup.outputs = {rq};
      nodes.push_back(std::move(lookup));
      inputs.push_back(rq);
    }
    Node fused = concat;
    fused.inputs = inputs;
    fused.outputs = {graph->nodes[qn].outputs[0]};
    nodes.push_back(std::move(fused));
    dead[qn] = true;
  }
  graph->nodes = std::move(nodes);
  return Check();
}

// The integer op of the QDQ group ending at node `qn` (FuseQLinearGroupAt),
// or else its table lookup (FuseQLinearLookup).
Check FuseQLinearAt(Graph* graph, int qn) {
  if (graph->nodes[qn].op != "QuantizeLinear") return Check();
  BATON_TRY(FuseQLinearGroupAt(graph, qn));
  return FuseQLinearLookup(graph, qn);
}

// A Cast to the dtype its input already has is an Identity (torch exports
// QuantizeLinear -> Cast(uint8) -> DequantizeLinear).
void RenameNoOpCasts(Graph* graph) {
  for (Node& node : graph->nodes) {
    if (node.op != "Cast" || node.inputs.empty() || node.inputs[0] < 0 ||
        node.outputs.size() != 1) {
      continue;
    }
    if (graph->tensors[node.inputs[0]].dtype == graph->tensors[node.outputs[0]].dtype) {
      node.op = "Identity";
      node.attrs.clear();
    }
  }
}

// A Pad whose pads are all zero is an Identity (torch exports a quantized
// AvgPool2d(padding=0) as Pad -> AveragePool; ONNX Runtime folds such a Pad
// into the pool before fusing it). Runs after constant folding.
void RenameNoOpPads(Graph* graph) {
  for (Node& node : graph->nodes) {
    if (node.op != "Pad" || node.inputs.empty() || node.inputs[0] < 0 || node.outputs.size() != 1) {
      continue;
    }
    std::vector<int64_t> pads;
    if (internal::HasInput(node, 1)) {
      if (!IsConstant(*graph, node.inputs[1])) continue;
      pads = graph->tensors[node.inputs[1]].IntData();
    } else if (node.FindAttr("pads") != nullptr) {
      pads = node.GetInts("pads");
    }
    if (pads.empty() || std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; })) {
      continue;
    }
    node.op = "Identity";
    node.attrs.clear();
    node.inputs.resize(1);
  }
}

// Drops DequantizeLinear and elementwise float nodes no one reads any more
// (after FuseQLinear), last first, so that chains go at once.
void RemoveUnread(Graph* graph) {
  std::vector<int> readers(graph->tensors.size(), 0);
  for (const Node& node : graph->nodes) {
    for (int t : node.inputs) {
      if (t >= 0) ++readers[t];
    }
  }
  for (size_t n = graph->nodes.size(); n-- > 0;) {
    Node& node = graph->nodes[n];
    if ((node.op != "DequantizeLinear" && !IsElementwiseFloatOp(node.op)) ||
        node.outputs.size() != 1) {
      continue;
    }
    const int out = node.outputs[0];
    if (readers[out] != 0 || IsGraphOutput(*graph, out)) continue;
    for (int t : node.inputs) {
      if (t >= 0) --readers[t];
    }
    KillNode(&node);
  }
  EraseDeadNodes(graph);
}

}  // namespace

Check FuseQLinear(Graph* graph) {
  RenameNoOpCasts(graph);
  BATON_TRY(RemoveIdentities(graph));
  // Everything but DequantizeLinear folds first (torch's zero points are
  // Cast(ConstantOfShape) chains), so that the weights stay quantized.
  BATON_TRY(RewriteEachNode(graph, [](Graph* g, int n) {
    return g->nodes[n].op == "DequantizeLinear" ? Check() : FoldConstantAt(g, n);
  }));
  RenameNoOpPads(graph);
  BATON_TRY(RemoveIdentities(graph));
  BATON_TRY(FuseQLinearConcat(graph));
  BATON_TRY(RewriteEachNode(graph, FuseQLinearAt));
  RemoveUnread(graph);
  return Check();
}

Check RemoveIdentities(Graph* graph) {
  for (size_t n = 0; n < graph->nodes.size(); ++n) {
    Node& node = graph->nodes[n];
    if (node.op != "Identity" && node.op != "Dropout") continue;
    if (node.inputs.empty() || node.outputs.empty() || node.inputs[0] < 0) {
      return Fail("node '" + node.name + "': " + node.op + " needs an input and an output");
    }
    if (node.outputs.size() > 1) {
      const int mask = node.outputs[1];
      const auto consumers = Consumers(*graph);
      if (IsGraphOutput(*graph, mask) || !consumers[mask].empty()) {
        return Fail("node '" + node.name + "': the Dropout mask '" + graph->tensors[mask].name +
                    "' is used; training-mode Dropout is not supported");
      }
    }
    const int in = node.inputs[0];
    const int out = node.outputs[0];
    if (!IsGraphOutput(*graph, out)) {
      KillNode(&node);
      ReplaceUses(graph, out, in);
      continue;
    }
    // The output name must survive: let the producer of `in` write `out`.
    const int producer = graph->Producers()[in];
    if (producer >= 0 && !IsGraphOutput(*graph, in) && !IsGraphInput(*graph, in) &&
        !graph->tensors[in].is_constant) {
      KillNode(&node);
      ReplaceUses(graph, in, out);
      RedirectOutput(&graph->nodes[producer], in, out);
      continue;
    }
    node.op = "Identity";
    node.inputs.resize(1);
    node.outputs.resize(1);
    node.attrs.clear();
  }
  EraseDeadNodes(graph);
  return Check();
}

Check FoldConstants(Graph* graph) { return RewriteEachNode(graph, FoldConstantAt); }

Check CheckFoldOnlyOps(const Graph& graph) {
  std::vector<std::string> problems;
  std::set<std::string> reported;  // one line per op type: its first node
  for (const Node& node : graph.nodes) {
    const OpDef* def = FindOp(node.op);
    if (def == nullptr || def->has_kernel || node.op == "Dropout" || reported.count(node.op)) {
      continue;
    }
    reported.insert(node.op);
    std::string why;
    for (int t : node.inputs) {
      if (t >= 0 && !graph.tensors[t].is_constant) {
        why = "its input '" + graph.tensors[t].name + "' is not constant";
        break;
      }
    }
    if (why.empty()) {
      for (int t : node.outputs) {
        if (IsGraphOutput(graph, t))
          why = "its output '" + graph.tensors[t].name + "' is a graph output";
      }
    }
    problems.push_back("node '" + node.name + "': " + (why.empty() ? "it was not folded" : why) +
                       "; Baton folds " + node.op + " only at plan time");
  }
  if (problems.empty()) return Check();
  std::sort(problems.begin(), problems.end());
  std::string message =
      problems.size() == 1 ? "" : std::to_string(problems.size()) + " ops cannot run: ";
  for (size_t i = 0; i < problems.size(); ++i) message += (i ? "; " : "") + problems[i];
  return Fail(message);
}

Check ResolveAutoPad(Graph* graph) {
  for (Node& node : graph->nodes) {
    if (node.op != "Conv" && node.op != "MaxPool" && node.op != "AveragePool") continue;
    const std::string auto_pad = node.GetString("auto_pad", "NOTSET");
    if (auto_pad == "NOTSET") {
      node.attrs.erase("auto_pad");
      continue;
    }
    const Tensor& x = graph->tensors[node.inputs[0]];
    if (!x.shape_known || x.shape.size() < 3) {
      return Fail("node '" + node.name + "': input '" + x.name + "' has no spatial shape");
    }
    const size_t r = x.shape.size() - 2;
    std::vector<int64_t> kernel;
    if (node.op == "Conv") {
      const Tensor& w = graph->tensors[node.inputs[1]];
      kernel.assign(w.shape.begin() + 2, w.shape.end());
    } else {
      kernel = node.GetInts("kernel_shape");
    }
    std::vector<int64_t> strides = node.GetInts("strides");
    std::vector<int64_t> dilations = node.GetInts("dilations");
    if (strides.empty()) strides.assign(r, 1);
    if (dilations.empty()) dilations.assign(r, 1);
    if (kernel.size() != r || strides.size() != r || dilations.size() != r) {
      return Fail("node '" + node.name + "': kernel, strides or dilations do not match the input");
    }
    auto pads = internal::ResolvePads(
        node, std::vector<int64_t>(x.shape.begin() + 2, x.shape.end()), kernel, strides, dilations);
    if (!pads.ok()) return Fail("node '" + node.name + "': " + pads.error());
    Attr attr;
    attr.kind = Attr::Kind::kInts;
    attr.ints = *pads;
    node.attrs["pads"] = attr;
    node.attrs.erase("auto_pad");
  }
  return Check();
}

Check FoldBatchNorm(Graph* graph) { return RewriteEachNode(graph, FoldBatchNormAt); }

Check FuseActivations(Graph* graph) { return RewriteEachNode(graph, FuseActivationAt); }

Check FuseConvAdds(Graph* graph) { return RewriteEachNode(graph, FuseConvAddAt); }

Check FuseConvActivations(Graph* graph) { return RewriteEachNode(graph, FuseConvActivationAt); }

// HardSwish(x) = x * HardSigmoid(x), with torch's alpha (the float nearest
// 1/6) and beta 0.5.
Check FuseHardSwish(Graph* graph) {
  return FuseGatedMuls(graph, {"HardSigmoid"}, "HardSwish", [&](const GatedMul& g, int) {
    const Node& hsig = graph->nodes[g.chain[0]];
    return std::fabs(hsig.GetFloat("alpha", 0.2f) - 1.0f / 6.0f) <= 1e-6f &&
           hsig.GetFloat("beta", 0.5f) == 0.5f;
  });
}

Check LowerSmallestTopK(Graph* graph) {
  std::vector<Node> nodes;
  nodes.reserve(graph->nodes.size());
  for (Node& node : graph->nodes) {
    if (node.op != "TopK" || node.GetInt("largest", 1) != 0 || node.inputs.empty() ||
        node.outputs.empty()) {
      nodes.push_back(std::move(node));
      continue;
    }
    const int x = node.inputs[0];
    const int values = node.outputs[0];
    const int neg_x = AddFloatTensor(graph, graph->tensors[x].name + "_neg");
    const int neg_values = AddFloatTensor(graph, graph->tensors[values].name + "_neg");
    Node before;
    before.op = "Neg";
    before.name = node.name + "_neg_in";
    before.inputs = {x};
    before.outputs = {neg_x};
    Node after;
    after.op = "Neg";
    after.name = node.name + "_neg_out";
    after.inputs = {neg_values};
    after.outputs = {values};
    node.inputs[0] = neg_x;
    node.outputs[0] = neg_values;
    node.attrs.erase("largest");
    nodes.push_back(std::move(before));
    nodes.push_back(std::move(node));
    nodes.push_back(std::move(after));
  }
  graph->nodes = std::move(nodes);
  return Check();
}

Check FuseGelu(Graph* graph) { return RewriteEachNode(graph, FuseGeluAt); }

// Mish(x) = x * Tanh(Softplus(x)), on float32 without broadcasting.
Check FuseMish(Graph* graph) {
  return FuseGatedMuls(graph, {"Tanh", "Softplus"}, "Mish", [&](const GatedMul& g, int m) {
    return graph->tensors[g.x].dtype == DType::Float32 &&
           graph->tensors[graph->nodes[m].outputs[0]].shape == graph->tensors[g.x].shape;
  });
}

// Swish(x) = x * Sigmoid(x) (SiLU: EfficientNet, YOLO), on float32 without
// broadcasting. A squeeze-excitation gate, Mul(y, Sigmoid(x)) with y != x,
// does not match.
Check FuseSwish(Graph* graph) {
  return FuseGatedMuls(graph, {"Sigmoid"}, "Swish", [&](const GatedMul& g, int m) {
    return graph->tensors[g.x].dtype == DType::Float32 &&
           graph->tensors[graph->nodes[m].outputs[0]].shape == graph->tensors[g.x].shape;
  });
}

void RemoveUnusedTensors(Graph* graph) {
  std::vector<bool> used(graph->tensors.size(), false);
  for (const Node& node : graph->nodes) {
    for (int t : node.inputs) {
      if (t >= 0) used[t] = true;
    }
    for (int t : node.outputs) used[t] = true;
  }
  for (int t : graph->inputs) used[t] = true;
  for (int t : graph->outputs) used[t] = true;
  std::vector<int> remap(graph->tensors.size(), -1);
  std::vector<Tensor> kept;
  for (size_t t = 0; t < graph->tensors.size(); ++t) {
    if (!used[t]) continue;
    remap[t] = static_cast<int>(kept.size());
    kept.push_back(std::move(graph->tensors[t]));
  }
  graph->tensors = std::move(kept);
  for (Node& node : graph->nodes) {
    for (int& t : node.inputs) {
      if (t >= 0) t = remap[t];
    }
    for (int& t : node.outputs) t = remap[t];
  }
  for (int& t : graph->inputs) t = remap[t];
  for (int& t : graph->outputs) t = remap[t];
}

// Upsample (opsets 7 to 9) is Resize in its legacy form; one op serves both.
void RenameUpsample(Graph* graph) {
  for (Node& node : graph->nodes) {
    if (node.op == "Upsample") node.op = "Resize";
  }
}

Check Simplify(Graph* graph) {
  BATON_TRY(InferShapes(graph));
  RenameUpsample(graph);
  bool lowered = false;
  BATON_TRY(LowerEinsum(graph, &lowered));
  if (lowered) BATON_TRY(InferShapes(graph));
  BATON_TRY(RemoveIdentities(graph));
  BATON_TRY(FuseQLinear(graph));
  BATON_TRY(FoldConstants(graph));
  BATON_TRY(CheckFoldOnlyOps(*graph));
  BATON_TRY(ResolveAutoPad(graph));
  BATON_TRY(FoldBatchNorm(graph));
  BATON_TRY(FuseHardSwish(graph));
  BATON_TRY(FuseGelu(graph));
  BATON_TRY(FuseMish(graph));
  BATON_TRY(FuseSwish(graph));
  BATON_TRY(LowerSmallestTopK(graph));
  BATON_TRY(FuseActivations(graph));
  BATON_TRY(FuseConvAdds(graph));
  BATON_TRY(FuseConvActivations(graph));
  RemoveUnusedTensors(graph);
  BATON_TRY(InferShapes(graph));
  BATON_TRY(Validate(*graph));
  return Check();
}

}  // namespace baton::planner
