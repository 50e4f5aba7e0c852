#include "baton/planner/passes/regions.h"

#include <algorithm>
#include <deque>
#include <set>

namespace baton::planner {
namespace {

bool OnRuntime(const Program& p, int n) {
  const int d = p.node_device[n];
  return d >= 0 && !p.target.devices[d].runtime.empty();
}

// Groups of nodes being merged: group[n] is n's group id, members[id] its
// nodes. Merging keeps the graph of groups acyclic.
class Grouping {
 public:
  Grouping(const Graph& g, const std::vector<int>& producer) : group_(g.nodes.size()) {
    succ_.resize(g.nodes.size());
    members_.resize(g.nodes.size());
    for (size_t n = 0; n < g.nodes.size(); ++n) {
      group_[n] = static_cast<int>(n);
      members_[n] = {static_cast<int>(n)};
      for (int t : g.nodes[n].inputs) {
        if (t >= 0 && producer[t] >= 0) succ_[producer[t]].push_back(static_cast<int>(n));
      }
    }
    for (auto& s : succ_) {
      std::sort(s.begin(), s.end());
      s.erase(std::unique(s.begin(), s.end()), s.end());
    }
  }

  int group(int n) const { return group_[n]; }
  const std::vector<int>& members(int id) const { return members_[id]; }

  // Group a has an edge to group b. Merging them creates a cycle exactly
  // when another path of groups leads from a to b: search for one.
  bool CanMerge(int a, int b) const {
    std::vector<bool> seen(group_.size(), false);
    std::deque<int> queue;
    seen[a] = true;
    queue.push_back(a);
    while (!queue.empty()) {
      const int id = queue.front();
      queue.pop_front();
      for (int x : members_[id]) {
        for (int y : succ_[x]) {
          const int gy = group_[y];
          if (gy == b) {
            if (id == a) continue;  // the direct edge
            return false;
          }
          if (!seen[gy]) {
            seen[gy] = true;
            queue.push_back(gy);
          }
        }
      }
    }
    return true;
  }

  void Merge(int a, int b) {
    for (int n : members_[b]) group_[n] = a;
    members_[a].insert(members_[a].end(), members_[b].begin(), members_[b].end());
    members_[b].clear();
  }

 private:
  std::vector<int> group_;
  std::vector<std::vector<int>> members_;
  std::vector<std::vector<int>> succ_;
};

std::string NewNodeName(const Graph& g, int k) {
  std::string base = "__subgraph_" + std::to_string(k);
  std::string name = base;
  for (int i = 1;; ++i) {
    bool taken = false;
    for (const Node& n : g.nodes) taken = taken || n.name == name;
    if (!taken) return name;
    name = base + "_" + std::to_string(i);
  }
}

Attr StringAttr(std::string s) {
  Attr a;
  a.kind = Attr::Kind::kString;
  a.s = std::move(s);
  return a;
}

Attr FloatsAttr(std::vector<float> v) {
  Attr a;
  a.kind = Attr::Kind::kFloats;
  a.floats = std::move(v);
  return a;
}

// Drops tensors no node, graph input or output refers to any more (the
// region-internal values and the constants only regions read), remapping
// indices.
void DropUnusedTensors(Graph* g) {
  std::vector<bool> used(g->tensors.size(), false);
  for (const Node& node : g->nodes) {
    for (int t : node.inputs) {
      if (t >= 0) used[t] = true;
    }
    for (int t : node.outputs) used[t] = true;
  }
  for (int t : g->inputs) used[t] = true;
  for (int t : g->outputs) used[t] = true;
  std::vector<int> remap(g->tensors.size(), -1);
  std::vector<Tensor> kept;
  for (size_t t = 0; t < g->tensors.size(); ++t) {
    if (!used[t]) continue;
    remap[t] = static_cast<int>(kept.size());
    kept.push_back(std::move(g->tensors[t]));
  }
  g->tensors = std::move(kept);
  for (Node& node : g->nodes) {
    for (int& t : node.inputs) {
      if (t >= 0) t = remap[t];
    }
    for (int& t : node.outputs) t = remap[t];
  }
  for (int& t : g->inputs) t = remap[t];
  for (int& t : g->outputs) t = remap[t];
}

}  // namespace

Check FormRegions(const std::vector<double>& node_macs, const std::vector<double>& node_bytes,
                  Program* p) {
  Graph& g = p->graph;
  const size_t n_nodes = g.nodes.size();
  bool any = false;
  for (size_t n = 0; n < n_nodes; ++n) any = any || OnRuntime(*p, static_cast<int>(n));
  if (!any) return Check();
  if (p->node_device.size() != n_nodes || node_macs.size() < n_nodes ||
      node_bytes.size() < n_nodes) {
    return Fail("internal: FormRegions needs every node's device and work");
  }
  BATON_ASSIGN_OR_RETURN(std::vector<int> topo, g.TopologicalOrder());
  std::vector<int> pos(n_nodes);
  for (size_t k = 0; k < topo.size(); ++k) pos[topo[k]] = static_cast<int>(k);
  const std::vector<int> producer = g.Producers();

  // Grow regions along edges, consumers in topological order, producers in
  // input order.
  Grouping grouping(g, producer);
  for (int v : topo) {
    if (!OnRuntime(*p, v)) continue;
    for (int t : g.nodes[v].inputs) {
      const int u = t >= 0 ? producer[t] : -1;
      if (u < 0 || !OnRuntime(*p, u) || p->node_device[u] != p->node_device[v]) continue;
      const int a = grouping.group(u), b = grouping.group(v);
      if (a == b || !grouping.CanMerge(a, b)) continue;
      grouping.Merge(a, b);
    }
  }

  // Regions in the topological order of their first node; members likewise.
  std::vector<int> region_of(n_nodes, -1);
  std::vector<std::vector<int>> regions;
  for (int n : topo) {
    if (!OnRuntime(*p, n) || region_of[n] >= 0) continue;
    std::vector<int> members = grouping.members(grouping.group(n));
    std::sort(members.begin(), members.end(), [&](int a, int b) { return pos[a] < pos[b]; });
    for (int m : members) region_of[m] = static_cast<int>(regions.size());
    regions.push_back(std::move(members));
  }

  std::vector<bool> graph_output(g.tensors.size(), false);
  for (int t : g.outputs) graph_output[t] = true;
  std::vector<std::vector<int>> readers(g.tensors.size());
  for (size_t n = 0; n < n_nodes; ++n) {
    for (int t : g.nodes[n].inputs) {
      if (t >= 0) readers[t].push_back(static_cast<int>(n));
    }
  }

  std::vector<Node> region_nodes;
  for (size_t r = 0; r < regions.size(); ++r) {
    const std::vector<int>& members = regions[r];
    std::vector<int> inputs, outputs;
    for (int m : members) {
      for (int t : g.nodes[m].inputs) {
        if (t < 0 || g.tensors[t].is_constant) continue;
        if (producer[t] >= 0 && region_of[producer[t]] == static_cast<int>(r)) continue;
        if (std::find(inputs.begin(), inputs.end(), t) == inputs.end()) inputs.push_back(t);
      }
    }
    for (int m : members) {
      for (int t : g.nodes[m].outputs) {
        bool outside = graph_output[t];
        for (int reader : readers[t]) outside = outside || region_of[reader] != static_cast<int>(r);
        if (outside) outputs.push_back(t);
      }
    }
    Node node;
    node.name = NewNodeName(g, static_cast<int>(r));
    node.op = kSubgraphOp;
    node.inputs = inputs;
    node.outputs = outputs;
    BATON_ASSIGN_OR_RETURN(std::string model,
                           SerializeRegion(g, members, inputs, outputs, node.name));
    const TargetDevice& dev = p->target.devices[p->node_device[members[0]]];
    node.attrs[kRegionRuntimeAttr] = StringAttr(dev.runtime);
    Attr model_attr;
    model_attr.kind = Attr::Kind::kTensor;
    model_attr.t.dtype = DType::UInt8;
    model_attr.t.shape = {static_cast<int64_t>(model.size())};
    model_attr.t.shape_known = true;
    model_attr.t.data.assign(model.begin(), model.end());
    node.attrs[kRegionModelAttr] = std::move(model_attr);
    Attr names;
    names.kind = Attr::Kind::kStrings;
    std::vector<float> macs, bytes;
    for (int m : members) {
      names.strings.push_back(g.nodes[m].name);
      macs.push_back(static_cast<float>(node_macs[m]));
      bytes.push_back(static_cast<float>(node_bytes[m]));
    }
    node.attrs[kRegionNodesAttr] = std::move(names);
    node.attrs[kRegionMacsAttr] = FloatsAttr(std::move(macs));
    node.attrs[kRegionBytesAttr] = FloatsAttr(std::move(bytes));
    region_nodes.push_back(std::move(node));
  }

  // The new node list: every other node, and each region where its first
  // node was; then sorted topologically (below).
  std::vector<Node> nodes;
  std::vector<int> device;
  std::vector<bool> pinned;
  std::vector<bool> region_pinned(regions.size(), false);
  for (size_t n = 0; n < n_nodes; ++n) {
    if (region_of[n] >= 0 && p->node_pinned.size() > n && p->node_pinned[n]) {
      region_pinned[region_of[n]] = true;
    }
  }
  std::vector<bool> emitted(regions.size(), false);
  for (int n : topo) {
    const int r = region_of[n];
    if (r < 0) {
      nodes.push_back(std::move(g.nodes[n]));
      device.push_back(p->node_device[n]);
      pinned.push_back(p->node_pinned.size() > static_cast<size_t>(n) && p->node_pinned[n]);
    } else if (!emitted[r]) {
      emitted[r] = true;
      nodes.push_back(std::move(region_nodes[r]));
      device.push_back(p->node_device[n]);
      pinned.push_back(region_pinned[r]);
    }
  }
  g.nodes = std::move(nodes);
  // A region placed at its first node may come before the producer of a
  // later node's input: sort once more (merges keep the graph of regions
  // acyclic, so an order exists; an error here is a bug in the merge rule).
  Result<std::vector<int>> order = g.TopologicalOrder();
  if (!order.ok()) return Fail("internal: regions form a cycle: " + order.error());
  std::vector<Node> sorted;
  std::vector<int> sorted_device;
  std::vector<bool> sorted_pinned;
  for (int n : order.value()) {
    sorted.push_back(std::move(g.nodes[n]));
    sorted_device.push_back(device[n]);
    sorted_pinned.push_back(pinned[n]);
  }
  g.nodes = std::move(sorted);
  p->node_device = std::move(sorted_device);
  p->node_pinned = std::move(sorted_pinned);
  DropUnusedTensors(&g);
  return Check();
}

std::string RegionHolding(const Graph& g, const std::string& name) {
  for (const Node& n : g.nodes) {
    if (n.op != kSubgraphOp) continue;
    const Attr* names = n.FindAttr(kRegionNodesAttr);
    if (names == nullptr) continue;
    for (const std::string& merged : names->strings) {
      if (merged == name) return n.name;
    }
  }
  return "";
}

}  // namespace baton::planner
