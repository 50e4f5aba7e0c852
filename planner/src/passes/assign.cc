#include "baton/planner/passes/assign.h"

#include <cstdlib>

namespace baton::planner {

Result<AssignRule> ParseAssignRule(const std::string& text) {
  size_t eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    return Fail("--assign '" + text + "': expected PATTERN=DEVICE");
  }
  return AssignRule{text.substr(0, eq), text.substr(eq + 1)};
}

bool DeviceCanRun(const Graph& g, const TargetDevice& dev, const Node& node, std::string* why) {
  if (!dev.Runs(node.op)) {
    *why = "device does not run op " + node.op;
    return false;
  }
  for (const auto* list : {&node.inputs, &node.outputs}) {
    for (int ti : *list) {
      if (ti < 0) continue;
      const Tensor& tensor = g.tensors[ti];
      // Constant index/shape operands (e.g. Gather indices) are parameters,
      // not data the device computes on.
      if (tensor.is_constant && tensor.dtype != DType::Float32) continue;
      if (!dev.Handles(DTypeName(tensor.dtype))) {
        *why = std::string("device does not handle dtype ") + DTypeName(tensor.dtype) +
               " of tensor '" + tensor.name + "'";
        return false;
      }
    }
  }
  return true;
}

Check AssignDevices(const std::vector<AssignRule>& rules, Program* p) {
  const Graph& g = p->graph;
  const Target& t = p->target;
  BATON_ASSIGN_OR_RETURN(std::vector<int> topo, g.TopologicalOrder());
  // k-th node of each op type, in topological order.
  std::vector<int> op_rank(g.nodes.size(), 0);
  std::map<std::string, int> seen;
  for (int n : topo) op_rank[n] = seen[g.nodes[n].op]++;

  std::vector<int> device(g.nodes.size(), t.fallback);
  std::vector<bool> pinned(g.nodes.size(), false);
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& node = g.nodes[n];
    if (node.device.empty()) continue;
    int d = t.FindDevice(node.device);
    if (d < 0) {
      return Fail("node '" + node.name + "': annotation names unknown device '" + node.device +
                  "' (target '" + t.name + "')");
    }
    device[n] = d;
    pinned[n] = true;
  }
  for (const AssignRule& rule : rules) {
    int d = t.FindDevice(rule.device);
    if (d < 0) {
      return Fail("--assign " + rule.pattern + "=" + rule.device + ": unknown device '" +
                  rule.device + "' (target '" + t.name + "')");
    }
    bool matched = false;
    if (!rule.pattern.empty() && rule.pattern[0] == '@') {
      const std::string name = rule.pattern.substr(1);
      for (size_t n = 0; n < g.nodes.size(); ++n) {
        if (g.nodes[n].name == name) {
          device[n] = d;
          pinned[n] = true;
          matched = true;
        }
      }
    } else if (size_t hash = rule.pattern.find('#'); hash != std::string::npos) {
      const std::string op = rule.pattern.substr(0, hash);
      const std::string k_text = rule.pattern.substr(hash + 1);
      char* end = nullptr;
      long k = std::strtol(k_text.c_str(), &end, 10);
      if (k_text.empty() || *end != '\0' || k < 0) {
        return Fail("--assign " + rule.pattern + ": expected Op#k with k >= 0");
      }
      for (size_t n = 0; n < g.nodes.size(); ++n) {
        if (g.nodes[n].op == op && op_rank[n] == k) {
          device[n] = d;
          pinned[n] = true;
          matched = true;
        }
      }
    } else {
      for (size_t n = 0; n < g.nodes.size(); ++n) {
        if (g.nodes[n].op == rule.pattern) {
          device[n] = d;
          pinned[n] = true;
          matched = true;
        }
      }
    }
    if (!matched) {
      // Not an error: a rule set is often shared between models. The report
      // lists it so a typo does not go unnoticed.
      p->warnings.push_back("--assign " + rule.pattern + "=" + rule.device +
                            " matched no node");
    }
  }
  // Fallback for ops or dtypes the chosen device cannot handle.
  auto can_run = [&](const TargetDevice& dev, const Node& node, std::string* why) {
    return DeviceCanRun(g, dev, node, why);
  };
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& node = g.nodes[n];
    std::string why;
    if (can_run(t.devices[device[n]], node, &why)) continue;
    std::string fallback_why;
    if (!can_run(t.devices[t.fallback], node, &fallback_why)) {
      return Fail("node '" + node.name + "' (op " + node.op + "): no device can run it: " +
                  t.devices[device[n]].name + ": " + why + "; fallback " +
                  t.devices[t.fallback].name + ": " + fallback_why);
    }
    if (device[n] != t.fallback) {
      p->fallbacks.push_back({node.name, node.op, t.devices[device[n]].name,
                              t.devices[t.fallback].name, why});
    }
    device[n] = t.fallback;
  }
  p->node_device = std::move(device);
  p->node_pinned = std::move(pinned);
  return {};
}

}  // namespace baton::planner
