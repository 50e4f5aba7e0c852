#include "baton/planner/passes/assign.h"

#include <cstdlib>

namespace baton::planner {
namespace {

// The nodes an --assign PATTERN selects.
struct Selector {
  enum class Kind { kName, kOpRank, kOp };
  Kind kind = Kind::kOp;
  std::string text;  // node name or op type
  long rank = 0;     // kOpRank: the k of "Op#k"
};

Result<Selector> ParseSelector(const std::string& pattern) {
  Selector s;
  if (!pattern.empty() && pattern[0] == '@') {
    s.kind = Selector::Kind::kName;
    s.text = pattern.substr(1);
    if (s.text.empty()) return Fail("--assign " + pattern + ": expected @NODE with a node name");
  } else if (size_t hash = pattern.find('#'); hash != std::string::npos) {
    s.kind = Selector::Kind::kOpRank;
    s.text = pattern.substr(0, hash);
    const std::string k_text = pattern.substr(hash + 1);
    // Digits only: strtol alone would take "+1", " 1" and overflow.
    const bool digits = !k_text.empty() && k_text.size() <= 9 &&
                        k_text.find_first_not_of("0123456789") == std::string::npos;
    if (s.text.empty() || !digits) {
      return Fail("--assign " + pattern + ": expected Op#k with an op type and k a number >= 0");
    }
    s.rank = std::strtol(k_text.c_str(), nullptr, 10);
  } else {
    s.text = pattern;
  }
  return s;
}

// `op_rank`: the node's position among the nodes of its op type, in
// topological order.
bool Selects(const Selector& s, const Node& node, int op_rank) {
  switch (s.kind) {
    case Selector::Kind::kName:
      return node.name == s.text;
    case Selector::Kind::kOpRank:
      return node.op == s.text && op_rank == s.rank;
    case Selector::Kind::kOp:
      return node.op == s.text;
  }
  return false;
}

// The k-th node of each op type, in topological order.
Result<std::vector<int>> OpRanks(const Graph& g) {
  BATON_ASSIGN_OR_RETURN(std::vector<int> topo, g.TopologicalOrder());
  std::vector<int> op_rank(g.nodes.size(), 0);
  std::map<std::string, int> seen;
  for (int n : topo) op_rank[n] = seen[g.nodes[n].op]++;
  return op_rank;
}

// The fallback device, or the device a node's annotation names.
Result<std::vector<int>> AnnotatedDevices(const Graph& g, const Target& t) {
  std::vector<int> device(g.nodes.size(), t.fallback);
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& node = g.nodes[n];
    if (node.device.empty()) continue;
    int d = t.FindDevice(node.device);
    if (d < 0) {
      return Fail("node '" + node.name + "': annotation names unknown device '" + node.device +
                  "' (target '" + t.name + "')");
    }
    device[n] = d;
  }
  return device;
}

// Moves the nodes `rule` selects to its device and pins them; a rule that
// selects nothing adds a warning to `p`.
Check ApplyRule(const AssignRule& rule, const std::vector<int>& op_rank, Program* p,
                std::vector<int>* device, std::vector<bool>* pinned) {
  const Graph& g = p->graph;
  const Target& t = p->target;
  int d = t.FindDevice(rule.device);
  if (d < 0) {
    return Fail("--assign " + rule.pattern + "=" + rule.device + ": unknown device '" +
                rule.device + "' (target '" + t.name + "')");
  }
  BATON_ASSIGN_OR_RETURN(Selector selector, ParseSelector(rule.pattern));
  bool matched = false;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    if (Selects(selector, g.nodes[n], op_rank[n])) {
      (*device)[n] = d;
      (*pinned)[n] = true;
      matched = true;
    }
  }
  if (!matched) {
    // Not an error: a rule set is often shared between models. The report
    // lists it so a typo does not go unnoticed.
    p->warnings.push_back("--assign " + rule.pattern + "=" + rule.device + " matched no node");
  }
  return {};
}

// Moves nodes their device cannot run to the fallback device (a custom op
// the fallback does not list: to the first device that lists it), listing them
// in p->fallbacks.
Check ApplyFallbacks(Program* p, std::vector<int>* device) {
  const Graph& g = p->graph;
  const Target& t = p->target;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& node = g.nodes[n];
    int& dev = (*device)[n];
    std::string why;
    if (DeviceCanRun(g, t.devices[dev], node, &why)) continue;
    std::string fallback_why;
    int placed = t.fallback;
    if (!DeviceCanRun(g, t.devices[t.fallback], node, &fallback_why)) {
      // A custom op runs only where a device lists it: the first such
      // device (in target order) when the fallback does not.
      placed = -1;
      std::string ignored;
      for (size_t d = 0; IsCustomOp(node.op) && d < t.devices.size() && placed < 0; ++d) {
        if (DeviceCanRun(g, t.devices[d], node, &ignored)) placed = static_cast<int>(d);
      }
      if (placed < 0) {
        return Fail("node '" + node.name + "' (op " + node.op +
                    "): no device can run it: " + t.devices[dev].name + ": " + why + "; fallback " +
                    t.devices[t.fallback].name + ": " + fallback_why +
                    (IsCustomOp(node.op) ? "; a custom op runs only on devices that list it in "
                                           "\"ops\" (or on the fallback with --custom-op)"
                                         : ""));
      }
    }
    if (dev != placed) {
      p->fallbacks.push_back({node.name, node.op, t.devices[dev].name, t.devices[placed].name, why,
                              why.rfind("device does not run op", 0) == 0 ? "op" : "dtype"});
    }
    dev = placed;
  }
  return {};
}

}  // namespace

bool DeviceCanRun(const Graph& g, const TargetDevice& dev, const Node& node, std::string* why) {
  if (!dev.Runs(node.op)) {
    *why = "device does not run op " + node.op;
    return false;
  }
  // A foreign runtime receives a fused node back as the ONNX nodes it came
  // from (region_onnx.cc), so its op list must name those too. (Baton's own
  // devices run the fused kernel: the node's op decides, as for the clamp.)
  if (!dev.runtime.empty()) {
    if (!node.activation.empty() && !dev.Runs(node.activation)) {
      *why = "device does not run op " + node.activation + " (fused into " + node.op + ")";
      return false;
    }
    if (node.op == "Conv" && node.inputs.size() > 3 && node.inputs[3] >= 0 && !dev.Runs("Add")) {
      *why = "device does not run op Add (a residual Add fused into Conv)";
      return false;
    }
  }
  for (const auto* list : {&node.inputs, &node.outputs}) {
    for (int ti : *list) {
      if (ti < 0) continue;
      const Tensor& tensor = g.tensors[ti];
      // Constants are parameters, not data the device computes on: index
      // and shape operands (Gather indices, Reshape shapes) and quantization
      // parameters (a QLinearConv's float32 scales and int32 bias on an
      // int8-only NPU). The activations decide.
      if (tensor.is_constant) continue;
      if (!dev.Handles(DTypeName(tensor.dtype))) {
        *why = std::string("device does not handle dtype ") + DTypeName(tensor.dtype) +
               " of tensor '" + tensor.name + "'";
        return false;
      }
    }
  }
  return true;
}

Result<AssignRule> ParseAssignRule(const std::string& text) {
  size_t eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    return Fail("--assign '" + text + "': expected PATTERN=DEVICE");
  }
  return AssignRule{text.substr(0, eq), text.substr(eq + 1)};
}

Check AssignDevices(const std::vector<AssignRule>& rules, Program* p) {
  BATON_ASSIGN_OR_RETURN(std::vector<int> op_rank, OpRanks(p->graph));
  BATON_ASSIGN_OR_RETURN(std::vector<int> device, AnnotatedDevices(p->graph, p->target));
  // Annotated nodes are pinned as well as rule-matched ones.
  std::vector<bool> pinned(p->graph.nodes.size(), false);
  for (size_t n = 0; n < p->graph.nodes.size(); ++n) pinned[n] = !p->graph.nodes[n].device.empty();
  for (const AssignRule& rule : rules) BATON_TRY(ApplyRule(rule, op_rank, p, &device, &pinned));
  BATON_TRY(ApplyFallbacks(p, &device));
  p->node_device = std::move(device);
  p->node_pinned = std::move(pinned);
  return {};
}

}  // namespace baton::planner
