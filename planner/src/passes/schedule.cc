#include "baton/planner/passes/schedule.h"

#include <algorithm>
#include <set>

#include "baton/planner/memory/happens_before.h"

namespace baton::planner {

namespace {

bool IsCopy(const Graph& g, int n) { return g.nodes[n].op == kCopyOp; }

// --split: a node's stage counts the split nodes at or before it in
// topological order.
Check SplitStages(const std::vector<std::string>& split, const Graph& g,
                  const std::vector<int>& topo, const std::vector<int>& producer,
                  std::vector<int>* stage) {
  std::set<std::string> names(split.begin(), split.end());
  for (const std::string& s : split) {
    if (s.empty()) return Fail("--split: an empty node name (give NAME[,NAME...])");
    bool found = false;
    for (const Node& n : g.nodes) found |= n.name == s && n.op != kCopyOp;
    if (!found) return Fail("--split: no node named '" + s + "'");
  }
  int current = 0;
  for (int n : topo) {
    if (IsCopy(g, n)) continue;
    if (names.count(g.nodes[n].name)) ++current;
    (*stage)[n] = current;
  }
  // Stages must not decrease along an edge (a later split node may sit on
  // a side branch that is topologically earlier than its consumer).
  for (int n : topo) {
    for (int ti : g.nodes[n].inputs) {
      if (ti >= 0 && producer[ti] >= 0 && !IsCopy(g, producer[ti])) {
        (*stage)[n] = std::max((*stage)[n], (*stage)[producer[ti]]);
      }
    }
  }
  return {};
}

// A new stage at every device boundary, merged evenly down to in_flight.
void DeviceBoundaryStages(const Program& p, const std::vector<int>& topo,
                          const std::vector<int>& producer, std::vector<int>* stage) {
  const Graph& g = p.graph;
  // Copies are transparent (they carry the producer).
  auto source = [&](int ti) {
    int m = producer[ti];
    while (m >= 0 && IsCopy(g, m)) m = producer[g.nodes[m].inputs[0]];
    return m;
  };
  for (int n : topo) {
    if (IsCopy(g, n)) continue;
    for (int ti : g.nodes[n].inputs) {
      if (ti < 0) continue;
      int m = source(ti);
      if (m < 0) continue;
      int s = (*stage)[m] + (p.node_queue[m] != p.node_queue[n] ? 1 : 0);
      (*stage)[n] = std::max((*stage)[n], s);
    }
  }
  int max_stage = 0;
  for (size_t n = 0; n < g.nodes.size(); ++n) max_stage = std::max(max_stage, (*stage)[n]);
  if (max_stage + 1 > p.in_flight) {
    for (int& s : *stage) s = s * p.in_flight / (max_stage + 1);
  }
}

// Copies: the producer's stage; graph-input copies: the first consumer's.
// Then copy chains (routes) catch up with the copies they read.
void CopyStages(const Graph& g, const std::vector<int>& topo, const std::vector<int>& producer,
                std::vector<int>* stage) {
  for (int n : topo) {
    if (!IsCopy(g, n)) continue;
    int src = producer[g.nodes[n].inputs[0]];
    if (src >= 0) {
      (*stage)[n] = (*stage)[src];
    } else {
      int s = INT32_MAX;
      for (int c : topo) {
        for (int ti : g.nodes[c].inputs) {
          if (ti == g.nodes[n].outputs[0] && !IsCopy(g, c)) s = std::min(s, (*stage)[c]);
        }
      }
      (*stage)[n] = s == INT32_MAX ? 0 : s;
    }
  }
  for (int n : topo) {
    for (int ti : g.nodes[n].inputs) {
      if (ti >= 0 && producer[ti] >= 0 && (*stage)[producer[ti]] > (*stage)[n]) {
        (*stage)[n] = (*stage)[producer[ti]];
      }
    }
  }
}

}  // namespace

Check AssignStages(const std::vector<std::string>& split, Program* p) {
  const Graph& g = p->graph;
  BATON_ASSIGN_OR_RETURN(std::vector<int> topo, g.TopologicalOrder());
  std::vector<int> producer = g.Producers();
  std::vector<int> stage(g.nodes.size(), 0);
  if (!split.empty()) {
    BATON_TRY(SplitStages(split, g, topo, producer, &stage));
  } else if (p->in_flight > 1) {
    DeviceBoundaryStages(*p, topo, producer, &stage);
  }
  CopyStages(g, topo, producer, &stage);
  p->node_stage = stage;
  p->num_stages = 1 + *std::max_element(stage.begin(), stage.end());
  return {};
}

Check Schedule(Program* p, const std::vector<int>* order) {
  const Graph& g = p->graph;
  std::vector<int> producer = g.Producers();
  if (order != nullptr) {
    if (order->size() != g.nodes.size()) return Fail("internal: order is not a permutation");
    std::vector<int> pos(g.nodes.size(), -1);
    for (size_t k = 0; k < order->size(); ++k) pos[(*order)[k]] = static_cast<int>(k);
    for (size_t n = 0; n < g.nodes.size(); ++n) {
      if (pos[n] < 0) return Fail("internal: order is not a permutation");
      for (int ti : g.nodes[n].inputs) {
        if (ti < 0 || producer[ti] < 0) continue;
        const int m = producer[ti];
        if (p->node_stage[m] == p->node_stage[n] && pos[m] > pos[static_cast<int>(n)]) {
          return Fail("internal: order puts '" + g.nodes[n].name + "' before its producer");
        }
      }
    }
    p->order = *order;
  } else {
    BATON_ASSIGN_OR_RETURN(std::vector<int> topo, g.TopologicalOrder());
    std::vector<int> topo_pos(g.nodes.size());
    for (size_t k = 0; k < topo.size(); ++k) topo_pos[topo[k]] = static_cast<int>(k);
    p->order.assign(topo.begin(), topo.end());
    std::stable_sort(p->order.begin(), p->order.end(), [&](int a, int b) {
      if (p->node_stage[a] != p->node_stage[b]) return p->node_stage[a] > p->node_stage[b];
      return topo_pos[a] < topo_pos[b];
    });
  }
  p->programs.assign(p->queues.size(), {});
  for (int n : p->order) p->programs[p->node_queue[n]].push_back(n);
  p->waits.assign(g.nodes.size(), {});
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    std::set<WaitEdge> waits;
    for (int ti : g.nodes[n].inputs) {
      if (ti < 0) continue;
      int m = producer[ti];
      if (m < 0 || p->node_queue[m] == p->node_queue[n]) continue;
      waits.insert({m, 0});
    }
    p->waits[n].assign(waits.begin(), waits.end());
  }
  return {};
}

void PruneWaits(Program* p) {
  const std::vector<std::vector<WaitEdge>> original = p->waits;
  HappensBefore full(*p);
  for (size_t n = 0; n < p->waits.size(); ++n) {
    std::vector<WaitEdge>& waits = p->waits[n];
    for (size_t k = 0; k < waits.size();) {
      WaitEdge candidate = waits[k];
      waits.erase(waits.begin() + static_cast<std::ptrdiff_t>(k));
      if (full.ImpliedWithout(static_cast<int>(n), waits, candidate)) continue;
      waits.insert(waits.begin() + static_cast<std::ptrdiff_t>(k), candidate);
      ++k;
    }
  }
  // Pruning relied on knowledge computed with every wait present; make sure
  // the pruned set still implies each original wait, else keep them all.
  HappensBefore pruned(*p);
  for (size_t n = 0; n < original.size(); ++n) {
    for (const WaitEdge& w : original[n]) {
      if (!pruned.Completed(w.node, -w.lag, static_cast<int>(n))) {
        p->waits = original;
        return;
      }
    }
  }
}

}  // namespace baton::planner
