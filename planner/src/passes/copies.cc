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

// One queue per device (same index), then one per DMA engine a link names.
std::vector<QueueInfo> MakeQueues(const Target& t) {
  std::vector<QueueInfo> queues;
  for (size_t d = 0; d < t.devices.size(); ++d) {
    queues.push_back(
        {t.devices[d].name, t.devices[d].kind, static_cast<int>(d), t.devices[d].domains});
  }
  for (const TargetLink& l : t.links) {
    if (l.queue.empty()) continue;
    auto it = std::find_if(queues.begin(), queues.end(),
                           [&](const QueueInfo& q) { return q.name == l.queue; });
    if (it == queues.end()) {
      queues.push_back({l.queue, schema::DeviceKind::Dma, -1, {}});
      it = queues.end() - 1;
    }
    AddDomain(&it->domains, l.from);
    AddDomain(&it->domains, l.to);
  }
  return queues;
}

// Each tensor's home: its producer's device's first domain; graph inputs
// arrive in `input_domain`; constants have none (-1).
std::vector<int> HomeDomains(const Program& p, int input_domain) {
  const Graph& g = p.graph;
  std::vector<int> home(g.tensors.size(), -1);
  std::vector<int> producer = g.Producers();
  for (size_t ti = 0; ti < g.tensors.size(); ++ti) {
    if (g.tensors[ti].is_constant) continue;
    home[ti] =
        producer[ti] >= 0 ? p.target.devices[p.node_device[producer[ti]]].domains[0] : input_domain;
  }
  return home;
}

// Adds the __copy nodes that bring tensors to other domains, at most one per
// (tensor, domain), shared by every consumer there.
class CopyInserter {
 public:
  explicit CopyInserter(Program* p) : p_(p), g_(p->graph), t_(p->target) {}

  // The tensor holding `ti`'s value in `domain`, adding copies along the
  // fewest-hop route. `device` is the device that needs it (-1: graph output
  // delivery).
  Result<int> Fetch(int ti, int domain, int device) {
    int home = p_->tensor_domain[ti];
    if (home == domain) return ti;
    auto found = located_.find({ti, domain});
    if (found != located_.end()) return found->second;
    std::vector<int> path = Route(t_, home, domain);
    if (path.empty()) {
      return Fail("tensor '" + g_.tensors[ti].name + "': no link or route from domain '" +
                  t_.domains[home].name + "' to domain '" + t_.domains[domain].name +
                  "' (add a link to the target)");
    }
    int current = ti;
    for (size_t h = 1; h < path.size(); ++h) {
      auto hop = located_.find({ti, path[h]});
      if (hop != located_.end()) {
        current = hop->second;
        continue;
      }
      BATON_ASSIGN_OR_RETURN(int queue, HopQueue(ti, path[h - 1], path[h], device));
      current = AddCopy(ti, current, path[h], queue);
      located_[{ti, path[h]}] = current;
    }
    return current;
  }

 private:
  // The queue that copies `ti` over the link from -> to.
  Result<int> HopQueue(int ti, int from, int to, int device) {
    const TargetLink* link = t_.FindLink(from, to);
    int queue = -1;
    if (!link->queue.empty()) {
      for (size_t q = 0; q < p_->queues.size(); ++q) {
        if (p_->queues[q].name == link->queue) queue = static_cast<int>(q);
      }
      return queue;
    }
    // The destination device's queue performs the copy (its driver programs
    // the transfer); intermediate hops use any device that reaches the hop's
    // destination, preferring the requesting device.
    int dev = device >= 0 && t_.devices[device].Reaches(to) ? device : -1;
    if (dev < 0 && t_.devices[t_.fallback].Reaches(to)) dev = t_.fallback;
    for (size_t d = 0; dev < 0 && d < t_.devices.size(); ++d) {
      if (t_.devices[d].Reaches(to)) dev = static_cast<int>(d);
    }
    if (dev < 0) {
      return Fail("no device reaches domain '" + t_.domains[to].name + "' to run the copy of '" +
                  g_.tensors[ti].name + "'");
    }
    queue = dev;
    AddDomain(&p_->queues[queue].domains, from);
    return queue;
  }

  // A __copy of `source` (a copy of `ti`) into `domain` on `queue`; returns
  // the new tensor.
  int AddCopy(int ti, int source, int domain, int queue) {
    Tensor copy = g_.tensors[ti];
    copy.name = g_.tensors[ti].name + "@" + t_.domains[domain].name;
    copy.is_constant = false;
    copy.data.clear();
    int out = g_.AddTensor(std::move(copy));
    p_->tensor_domain.push_back(domain);
    Node node;
    node.name = "__copy_" + g_.tensors[ti].name + "_to_" + t_.domains[domain].name;
    node.op = kCopyOp;
    node.inputs = {source};
    node.outputs = {out};
    g_.nodes.push_back(std::move(node));
    p_->node_device.push_back(-1);
    p_->node_queue.push_back(queue);
    return out;
  }

  Program* p_;
  Graph& g_;
  const Target& t_;
  // (tensor, domain) -> tensor holding that tensor's value there.
  std::map<std::pair<int, int>, int> located_;
};

}  // namespace

Check InsertCopies(Program* p) {
  Graph& g = p->graph;
  const Target& t = p->target;
  p->queues = MakeQueues(t);
  const int fallback_domain = t.devices[t.fallback].domains[0];
  const size_t original_nodes = g.nodes.size();
  p->node_queue.assign(original_nodes, 0);
  for (size_t n = 0; n < original_nodes; ++n) p->node_queue[n] = p->node_device[n];
  p->tensor_domain = HomeDomains(*p, fallback_domain);
  BATON_ASSIGN_OR_RETURN(std::vector<int> topo, g.TopologicalOrder());

  CopyInserter copies(p);
  for (int n : topo) {
    const int dev = p->node_device[n];
    for (size_t k = 0; k < g.nodes[n].inputs.size(); ++k) {
      int ti = g.nodes[n].inputs[k];
      if (ti < 0 || g.tensors[ti].is_constant) continue;
      if (t.devices[dev].Reaches(p->tensor_domain[ti])) continue;
      BATON_ASSIGN_OR_RETURN(int moved, copies.Fetch(ti, t.devices[dev].domains[0], dev));
      g.nodes[n].inputs[k] = moved;
    }
  }
  // Deliver graph outputs to the fallback device's domain under their name.
  for (int& out : g.outputs) {
    if (p->tensor_domain[out] == fallback_domain) continue;
    const std::string name = g.tensors[out].name;
    BATON_ASSIGN_OR_RETURN(int moved, copies.Fetch(out, fallback_domain, -1));
    g.tensors[out].name = name + "@" + t.domains[p->tensor_domain[out]].name;
    g.tensors[moved].name = name;
    out = moved;
  }
  return {};
}

}  // namespace baton::planner
