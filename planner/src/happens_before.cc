#include "baton/planner/happens_before.h"

#include <algorithm>

namespace baton::planner {

HappensBefore::HappensBefore(const Program& p) : p_(p) {
  const size_t nodes = p.graph.nodes.size();
  const size_t queues = p.queues.size();
  position_.assign(nodes, 0);
  length_.assign(queues, 0);
  last_key_.assign(queues, 0);
  for (size_t q = 0; q < queues; ++q) {
    length_[q] = static_cast<int64_t>(p.programs[q].size());
    for (size_t k = 0; k < p.programs[q].size(); ++k) {
      int n = p.programs[q][k];
      position_[n] = static_cast<int>(k);
      last_key_[q] = std::max<int64_t>(last_key_[q], p.node_stage[n] * length_[q] + static_cast<int64_t>(k));
    }
  }
  r_.assign(nodes, std::vector<int64_t>(queues, kNone));
  // Bellman-Ford style rounds to the least fixpoint.
  for (size_t round = 0; round < nodes + 2; ++round) {
    bool changed = false;
    for (int n : p.order) {
      std::vector<int64_t> k = Knowledge(n, p.waits[n]);
      for (size_t q = 0; q < queues; ++q) {
        if (k[q] > r_[n][q]) {
          r_[n][q] = k[q];
          changed = true;
        }
      }
    }
    if (!changed) break;
  }
}

std::vector<int64_t> HappensBefore::Knowledge(int n, const std::vector<WaitEdge>& waits) const {
  const size_t queues = p_.queues.size();
  std::vector<int64_t> k(queues, kNone);
  auto merge_shifted = [&](int from, int64_t delta) {
    for (size_t q = 0; q < queues; ++q) {
      if (r_[from][q] != kNone) k[q] = std::max(k[q], r_[from][q] + delta * length_[q]);
    }
  };
  const int q = p_.node_queue[n];
  const int pos = position_[n];
  const std::vector<int>& program = p_.programs[q];
  // Program order: the previous instance on this queue.
  int prev = pos > 0 ? program[pos - 1] : program.back();
  int64_t d = pos > 0 ? p_.node_stage[n] - p_.node_stage[prev]
                      : p_.node_stage[n] - 1 - p_.node_stage[prev];
  merge_shifted(prev, d);
  k[q] = std::max<int64_t>(k[q], p_.node_stage[n] * length_[q] + pos);
  for (const WaitEdge& w : waits) {
    const int qm = p_.node_queue[w.node];
    k[qm] = std::max(k[qm], Target(w.node, -w.lag));
    merge_shifted(w.node, -w.lag);
  }
  // In-flight limit: inference i - D finished on every queue.
  for (size_t qq = 0; qq < queues; ++qq) {
    if (length_[qq] == 0) continue;
    k[qq] = std::max(k[qq], -p_.in_flight * length_[qq] + last_key_[qq] + 1);
  }
  return k;
}

int64_t HappensBefore::Target(int m, int delta) const {
  const int qm = p_.node_queue[m];
  return (static_cast<int64_t>(delta) + p_.node_stage[m]) * length_[qm] + position_[m] + 1;
}

bool HappensBefore::Completed(int m, int delta, int n) const {
  return r_[n][p_.node_queue[m]] >= Target(m, delta);
}

bool HappensBefore::ImpliedWithout(int n, const std::vector<WaitEdge>& others,
                                   WaitEdge candidate) const {
  std::vector<int64_t> k = Knowledge(n, others);
  return k[p_.node_queue[candidate.node]] >= Target(candidate.node, -candidate.lag);
}

}  // namespace baton::planner
