#include "baton/planner/import/simplify.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>

#include "baton/planner/import/shapes.h"
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

}  // namespace

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

Check FoldConstants(Graph* graph) {
  BATON_ASSIGN_OR_RETURN(std::vector<int> order, graph->TopologicalOrder());
  for (int n : order) {
    Node& node = graph->nodes[n];
    bool feeds_output = false;
    for (int t : node.outputs) feeds_output = feeds_output || IsGraphOutput(*graph, t);
    if (feeds_output) continue;
    if (node.op == "Constant") {
      const int out = node.outputs.empty() ? -1 : node.outputs[0];
      if (out < 0 || !graph->tensors[out].is_constant) {
        return Fail("node '" + node.name + "': Constant has no value (run InferShapes first)");
      }
      KillNode(&node);
      continue;
    }
    if (!internal::CanEvaluate(node.op)) continue;
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
    if (!foldable) continue;
    std::vector<Tensor*> outputs;
    for (int t : node.outputs) {
      if (!graph->tensors[t].shape_known) {
        return Fail("node '" + node.name + "': output '" + graph->tensors[t].name +
                    "' has no shape (run InferShapes first)");
      }
      outputs.push_back(&graph->tensors[t]);
    }
    Check evaluated = internal::EvaluateNode(node, inputs, outputs);
    if (!evaluated.ok()) return Fail("node '" + node.name + "': " + evaluated.error());
    for (Tensor* t : outputs) t->is_constant = true;
    KillNode(&node);
  }
  EraseDeadNodes(graph);
  return Check();
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

Check FoldBatchNorm(Graph* graph) {
  BATON_ASSIGN_OR_RETURN(std::vector<int> order, graph->TopologicalOrder());
  for (int b : order) {
    const Node& bn = graph->nodes[b];
    if (bn.op != "BatchNormalization" || bn.inputs.size() != 5 || bn.outputs.size() != 1) continue;
    const int x = bn.inputs[0];
    const int p = graph->Producers()[x];
    if (p < 0) continue;
    const Node& producer = graph->nodes[p];
    if ((producer.op != "Conv" && producer.op != "Gemm") || producer.clamp.has_value() ||
        !SoleConsumer(*graph, x, b)) {
      continue;
    }
    bool params_constant = true;
    for (int i = 1; i < 5; ++i)
      params_constant = params_constant && IsConstant(*graph, bn.inputs[i]);
    const int w = producer.inputs[1];
    const int bias = internal::HasInput(producer, 2) ? producer.inputs[2] : -1;
    if (!params_constant || !IsConstant(*graph, w) || (bias >= 0 && !IsConstant(*graph, bias))) {
      continue;
    }
    const std::vector<float> scale = graph->tensors[bn.inputs[1]].FloatData();
    const std::vector<float> shift = graph->tensors[bn.inputs[2]].FloatData();
    const std::vector<float> mean = graph->tensors[bn.inputs[3]].FloatData();
    const std::vector<float> var = graph->tensors[bn.inputs[4]].FloatData();
    const double eps = static_cast<double>(bn.GetFloat("epsilon", 1e-5f));
    const size_t channels = scale.size();
    if (shift.size() != channels || mean.size() != channels || var.size() != channels) continue;

    const Tensor& wt = graph->tensors[w];
    std::vector<float> weight = wt.FloatData();
    const std::vector<int64_t> w_shape = wt.shape;
    std::vector<float> old_bias(channels, 0.0f);
    double alpha = 1, beta = 1;
    bool trans_b = false;
    if (producer.op == "Conv") {
      if (w_shape.empty() || w_shape[0] != static_cast<int64_t>(channels)) continue;
      if (bias >= 0) old_bias = graph->tensors[bias].FloatData();
    } else {
      // Gemm: Y[m, n] = alpha * (A B)[m, n] + beta * C[n]; BN scales column n.
      trans_b = producer.GetInt("transB", 0) != 0;
      alpha = static_cast<double>(producer.GetFloat("alpha", 1.0f));
      beta = static_cast<double>(producer.GetFloat("beta", 1.0f));
      if (w_shape.size() != 2 || w_shape[trans_b ? 0 : 1] != static_cast<int64_t>(channels)) {
        continue;
      }
      if (bias >= 0) {
        const Tensor& c = graph->tensors[bias];
        std::vector<float> cv = c.FloatData();
        if (cv.size() == 1) {
          old_bias.assign(channels, cv[0]);
        } else if (cv.size() == channels && c.shape.back() == static_cast<int64_t>(channels)) {
          old_bias = cv;
        } else {
          continue;  // a bias that varies along M cannot absorb BN exactly
        }
      }
    }
    if (old_bias.size() != channels) continue;

    // y = s * (conv(x) + b - mean) / sqrt(var + eps) + shift, per channel c:
    // W'[c] = W[c] * a_c, b'[c] = (b[c] - mean[c]) * a_c + shift[c],
    // a_c = s[c] / sqrt(var[c] + eps).
    std::vector<double> a(channels);
    for (size_t c = 0; c < channels; ++c) {
      a[c] = static_cast<double>(scale[c]) / std::sqrt(static_cast<double>(var[c]) + eps);
    }
    const size_t per_channel = weight.size() / channels;
    for (size_t i = 0; i < weight.size(); ++i) {
      size_t c = producer.op == "Conv" ? i / per_channel
                 : trans_b             ? i / static_cast<size_t>(w_shape[1])
                                       : i % channels;
      weight[i] = static_cast<float>(alpha * static_cast<double>(weight[i]) * a[c]);
    }
    std::vector<float> new_bias(channels);
    for (size_t c = 0; c < channels; ++c) {
      new_bias[c] = static_cast<float>(
          (beta * static_cast<double>(old_bias[c]) - static_cast<double>(mean[c])) * a[c] +
          static_cast<double>(shift[c]));
    }
    const std::string base = producer.name;
    const int bn_out = bn.outputs[0];
    // AddTensor may reallocate; the references above are not used below.
    const int new_w = AddFloatConstant(graph, base + "_bn_weight", w_shape, weight);
    const int new_b =
        AddFloatConstant(graph, base + "_bn_bias", {static_cast<int64_t>(channels)}, new_bias);
    Node& prod = graph->nodes[p];
    prod.inputs.resize(3, -1);
    prod.inputs[1] = new_w;
    prod.inputs[2] = new_b;
    if (prod.op == "Gemm") {
      prod.attrs.erase("alpha");
      prod.attrs.erase("beta");
    }
    RedirectOutput(&prod, x, bn_out);
    KillNode(&graph->nodes[b]);
  }
  EraseDeadNodes(graph);
  return Check();
}

Check FuseActivations(Graph* graph) {
  BATON_ASSIGN_OR_RETURN(std::vector<int> order, graph->TopologicalOrder());
  constexpr float kInf = std::numeric_limits<float>::infinity();
  for (int r : order) {
    const Node& act = graph->nodes[r];
    if ((act.op != "Relu" && act.op != "Clip") || act.inputs.empty() || act.inputs[0] < 0) continue;
    const int x = act.inputs[0];
    const int p = graph->Producers()[x];
    if (p < 0) continue;
    const Node& producer = graph->nodes[p];
    const bool fusable_op = producer.op == "Conv" || producer.op == "Gemm" ||
                            (producer.op == "Add" && graph->tensors[x].dtype == DType::Float32);
    if (!fusable_op || producer.outputs.size() != 1 || !SoleConsumer(*graph, x, r)) continue;
    float lo = 0.0f, hi = kInf;
    if (act.op == "Clip") {
      std::optional<float> min_in, max_in;
      if (!ConstScalar(*graph, act, 1, &min_in) || !ConstScalar(*graph, act, 2, &max_in)) continue;
      lo = min_in ? *min_in : act.GetFloat("min", -kInf);
      hi = max_in ? *max_in : act.GetFloat("max", kInf);
    }
    if (producer.clamp) {
      lo = std::max(lo, producer.clamp->first);
      hi = std::min(hi, producer.clamp->second);
    }
    if (!(lo <= hi)) continue;  // an empty range is a constant, not a clamp
    const int out = act.outputs[0];
    Node& prod = graph->nodes[p];
    prod.clamp = std::make_pair(lo, hi);
    RedirectOutput(&prod, x, out);
    KillNode(&graph->nodes[r]);
  }
  EraseDeadNodes(graph);
  return Check();
}

Check FuseHardSwish(Graph* graph) {
  BATON_ASSIGN_OR_RETURN(std::vector<int> order, graph->TopologicalOrder());
  for (int m : order) {
    const Node& mul = graph->nodes[m];
    if (mul.op != "Mul" || mul.inputs.size() != 2 || mul.inputs[0] < 0 || mul.inputs[1] < 0) {
      continue;
    }
    const std::vector<int> producer = graph->Producers();
    for (int k = 0; k < 2; ++k) {
      const int gate = mul.inputs[k];
      const int x = mul.inputs[1 - k];
      const int p = producer[gate];
      if (p < 0) continue;
      const Node& hsig = graph->nodes[p];
      // torch writes alpha as the float nearest 1/6.
      if (hsig.op != "HardSigmoid" || hsig.inputs.size() != 1 || hsig.inputs[0] != x ||
          std::fabs(hsig.GetFloat("alpha", 0.2f) - 1.0f / 6.0f) > 1e-6f ||
          hsig.GetFloat("beta", 0.5f) != 0.5f || !SoleConsumer(*graph, gate, m)) {
        continue;
      }
      Node& fused = graph->nodes[m];
      fused.op = "HardSwish";
      fused.inputs = {x};
      fused.attrs.clear();
      KillNode(&graph->nodes[p]);
      break;
    }
  }
  EraseDeadNodes(graph);
  return Check();
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

Check Simplify(Graph* graph) {
  BATON_TRY(InferShapes(graph));
  BATON_TRY(RemoveIdentities(graph));
  BATON_TRY(FoldConstants(graph));
  BATON_TRY(ResolveAutoPad(graph));
  BATON_TRY(FoldBatchNorm(graph));
  BATON_TRY(FuseHardSwish(graph));
  BATON_TRY(FuseActivations(graph));
  RemoveUnusedTensors(graph);
  BATON_TRY(InferShapes(graph));
  BATON_TRY(Validate(*graph));
  return Check();
}

}  // namespace baton::planner
