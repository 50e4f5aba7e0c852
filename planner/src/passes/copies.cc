#include "baton/planner/passes/copies.h"

#include <algorithm>
#include <deque>
#include <map>

namespace baton::planner {
namespace {

// Fewest-hop route of domains from -> to (inclusive), empty if none.
std::vector<int> Route(const Target& t, int from, int to) {
  std::vector<int> previous(t.domains.size(), -2);
  std::deque<int> frontier{from};
  previous[from] = -1;
  while (!frontier.empty()) {
    int d = frontier.front();
    frontier.pop_front();
    if (d == to) break;
    for (const TargetLink& l : t.links) {  // target order: deterministic
      if (l.from == d && previous[l.to] == -2) {
        previous[l.to] = d;
        frontier.push_back(l.to);
      }
    }
  }
  if (previous[to] == -2) return {};
  std::vector<int> path;
  for (int d = to; d != -1; d = previous[d]) path.push_back(d);
  std::reverse(path.begin(), path.end());
  return path;
}

void AddDomain(std::vector<int>* list, int d) {
  if (std::find(list->begin(), list->end(), d) == list->end()) list->push_back(d);
}

}  // namespace

Check InsertCopies(Program* p) {
  Graph& g = p->graph;
  const Target& t = p->target;
  // Queues.
  p->queues.clear();
  for (size_t d = 0; d < t.devices.size(); ++d) {
    p->queues.push_back({t.devices[d].name, t.devices[d].kind, static_cast<int>(d), t.devices[d].domains});
  }
  for (const TargetLink& l : t.links) {
    if (l.queue.empty()) continue;
    auto it = std::find_if(p->queues.begin(), p->queues.end(),
                           [&](const QueueInfo& q) { return q.name == l.queue; });
    if (it == p->queues.end()) {
      p->queues.push_back({l.queue, schema::DeviceKind::Dma, -1, {}});
      it = p->queues.end() - 1;
    }
    AddDomain(&it->domains, l.from);
    AddDomain(&it->domains, l.to);
  }
  const int fallback_domain = t.devices[t.fallback].domains[0];
  const size_t original_nodes = g.nodes.size();
  p->node_queue.assign(original_nodes, 0);
  for (size_t n = 0; n < original_nodes; ++n) p->node_queue[n] = p->node_device[n];
  // Homes.
  p->tensor_domain.assign(g.tensors.size(), -1);
  std::vector<int> producer = g.Producers();
  for (size_t ti = 0; ti < g.tensors.size(); ++ti) {
    if (g.tensors[ti].is_constant) continue;
    p->tensor_domain[ti] =
        producer[ti] >= 0 ? t.devices[p->node_device[producer[ti]]].domains[0] : fallback_domain;
  }
  BATON_ASSIGN_OR_RETURN(std::vector<int> topo, g.TopologicalOrder());

  // (tensor, domain) -> tensor holding that tensor's value there.
  std::map<std::pair<int, int>, int> located;
  // Returns the tensor holding `ti`'s value in `domain`, adding copies.
  // `device` is the device that needs it (-1: graph output delivery).
  auto fetch = [&](int ti, int domain, int device) -> Result<int> {
    int home = p->tensor_domain[ti];
    if (home == domain) return ti;
    auto found = located.find({ti, domain});
    if (found != located.end()) return found->second;
    std::vector<int> path = Route(t, home, domain);
    if (path.empty()) {
      return Fail("tensor '" + g.tensors[ti].name + "': no link or route from domain '" +
                  t.domains[home].name + "' to domain '" + t.domains[domain].name +
                  "' (add a link to the target)");
    }
    int current = ti;
    for (size_t h = 1; h < path.size(); ++h) {
      auto hop = located.find({ti, path[h]});
      if (hop != located.end()) {
        current = hop->second;
        continue;
      }
      const TargetLink* link = t.FindLink(path[h - 1], path[h]);
      int queue = -1;
      if (!link->queue.empty()) {
        for (size_t q = 0; q < p->queues.size(); ++q) {
          if (p->queues[q].name == link->queue) queue = static_cast<int>(q);
        }
      } else {
        // The destination device's queue performs the copy (its driver
        // programs the transfer); intermediate hops use any device that
        // reaches the hop's destination, preferring the requesting device.
        int dev = device >= 0 && t.devices[device].Reaches(path[h]) ? device : -1;
        if (dev < 0 && t.devices[t.fallback].Reaches(path[h])) dev = t.fallback;
        for (size_t d = 0; dev < 0 && d < t.devices.size(); ++d) {
          if (t.devices[d].Reaches(path[h])) dev = static_cast<int>(d);
        }
        if (dev < 0) {
          return Fail("no device reaches domain '" + t.domains[path[h]].name +
                      "' to run the copy of '" + g.tensors[ti].name + "'");
        }
        queue = dev;
        AddDomain(&p->queues[queue].domains, path[h - 1]);
      }
      Tensor copy = g.tensors[ti];
      copy.name = g.tensors[ti].name + "@" + t.domains[path[h]].name;
      copy.is_constant = false;
      copy.data.clear();
      int out = g.AddTensor(std::move(copy));
      p->tensor_domain.push_back(path[h]);
      Node node;
      node.name = "__copy_" + g.tensors[ti].name + "_to_" + t.domains[path[h]].name;
      node.op = kCopyOp;
      node.inputs = {current};
      node.outputs = {out};
      g.nodes.push_back(std::move(node));
      p->node_device.push_back(-1);
      p->node_queue.push_back(queue);
      located[{ti, path[h]}] = out;
      current = out;
    }
    return current;
  };

  for (int n : topo) {
    const int dev = p->node_device[n];
    for (size_t k = 0; k < g.nodes[n].inputs.size(); ++k) {
      int ti = g.nodes[n].inputs[k];
      if (ti < 0 || g.tensors[ti].is_constant) continue;
      if (t.devices[dev].Reaches(p->tensor_domain[ti])) continue;
      BATON_ASSIGN_OR_RETURN(int moved, fetch(ti, t.devices[dev].domains[0], dev));
      g.nodes[n].inputs[k] = moved;
    }
  }
  // Deliver graph outputs to the fallback device's domain under their name.
  for (int& out : g.outputs) {
    if (p->tensor_domain[out] == fallback_domain) continue;
    const std::string name = g.tensors[out].name;
    BATON_ASSIGN_OR_RETURN(int moved, fetch(out, fallback_domain, -1));
    g.tensors[out].name = name + "@" + t.domains[p->tensor_domain[out]].name;
    g.tensors[moved].name = name;
    out = moved;
  }
  return {};
}

}  // namespace baton::planner
