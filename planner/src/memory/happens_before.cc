#include "baton/planner/memory/happens_before.h"

#include <algorithm>

namespace baton::planner {

HappensBefore::HappensBefore(const Program& p) : p_(p) {
  const size_t nodes = p.graph.nodes.size();
  const size_t queues = p.queues.size();
  position_.assign(nodes, 0);
  length_.assign(queues, 0);
  last_key_.assign(queues, 0);
  int max_stage = 0;
  for (size_t q = 0; q < queues; ++q) {
    length_[q] = static_cast<int64_t>(p.programs[q].size());
    for (size_t k = 0; k < p.programs[q].size(); ++k) {
      const int n = p.programs[q][k];
      position_[n] = static_cast<int>(k);
      max_stage = std::max(max_stage, p.node_stage[n]);
      last_key_[q] = std::max<int64_t>(last_key_[q], p.node_stage[n] * length_[q] + static_cast<int64_t>(k));
    }
  }
  // Queries look at inferences up to D + 2 past the first.
  iterations_ = max_stage + p.in_flight + 3;
  max_stage_ = max_stage;
  margin_.assign(nodes * queues * static_cast<size_t>(2 * iterations_ + 1) *
                     static_cast<size_t>(max_stage + 1),
                 kUnsetMargin);
  // One flat array (one allocation, not one per instance): the constructor
  // fills iterations^2 * nodes vectors, the memory pass's largest cost on
  // big graphs.
  c_.assign(static_cast<size_t>(iterations_ * iterations_) * nodes * queues, kNone);
  Vec c;
  for (int64_t h = 0; h < iterations_; ++h) {
    for (int64_t k = 0; k < iterations_; ++k) {
      for (int n : p.order) {
        Knowledge(n, k, p.waits[n], h, &c);
        std::copy(c.begin(), c.end(), c_.begin() + static_cast<std::ptrdiff_t>(Index(h, n, k)));
      }
    }
  }
}

int64_t HappensBefore::Target(int m, int64_t inference) const {
  const int qm = p_.node_queue[m];
  return (inference + p_.node_stage[m]) * length_[qm] + position_[m] + 1;
}

void HappensBefore::Knowledge(int n, int64_t k, const std::vector<WaitEdge>& waits,
                              int64_t horizon, Vec* out) const {
  const size_t queues = p_.queues.size();
  Vec& c = *out;
  c.assign(queues, kNone);
  auto merge = [&](const int64_t* other) {
    for (size_t q = 0; q < queues; ++q) c[q] = std::max(c[q], other[q]);
  };
  const int q = p_.node_queue[n];
  const int pos = position_[n];
  const std::vector<int>& program = p_.programs[q];
  if (pos > 0) {
    merge(At(horizon, program[pos - 1], k));
  } else if (k > 0) {
    merge(At(horizon, program.back(), k - 1));
  }
  c[q] = std::max<int64_t>(c[q], k * length_[q] + pos);
  const int64_t i = k - p_.node_stage[n];
  if (i < 0 || i > horizon) return;  // skipped: it waits for nothing
  for (const WaitEdge& w : waits) {
    const int64_t j = i - w.lag;
    if (j < 0) continue;
    const int qm = p_.node_queue[w.node];
    c[qm] = std::max(c[qm], Target(w.node, j));
    merge(At(horizon, w.node, j + p_.node_stage[w.node]));
  }
  if (i - p_.in_flight >= 0) {
    for (size_t qq = 0; qq < queues; ++qq) {
      if (length_[qq] == 0) continue;
      c[qq] = std::max(c[qq], (i - p_.in_flight) * length_[qq] + last_key_[qq] + 1);
    }
  }
}

bool HappensBefore::Completed(int m, int delta, int n) const {
  // m completed inference i + delta when n's knowledge of m's queue reaches
  // Target(m, i + delta) = (i + delta + stage(m)) * length + position(m) + 1
  // for every i checked. The smallest margin over i, knowledge minus
  // (i + delta + stage(m)) * length, depends on m only through its queue and
  // stage: it is memoized per (n, queue, delta, stage), and the question is
  // then whether it reaches position(m) + 1.
  const int qm = p_.node_queue[m];
  const int sm = p_.node_stage[m];
  const int64_t deltas = 2 * iterations_ + 1;
  if (delta <= -iterations_ || delta >= iterations_) return Margin(qm, sm, delta, n) > position_[m];
  const size_t key =
      ((static_cast<size_t>(n) * p_.queues.size() + static_cast<size_t>(qm)) *
           static_cast<size_t>(deltas) +
       static_cast<size_t>(delta + iterations_)) *
          static_cast<size_t>(max_stage_ + 1) +
      static_cast<size_t>(sm);
  if (margin_[key] == kUnsetMargin) {
    // Stored in 32 bits (the memo is the pass's largest array, and each
    // question touches it at random): clamped, it compares the same with
    // any position.
    margin_[key] = static_cast<int32_t>(std::clamp<int64_t>(
        Margin(qm, sm, delta, n), int64_t{INT32_MIN} + 1, int64_t{INT32_MAX}));
  }
  return margin_[key] > position_[m];
}

int64_t HappensBefore::Margin(int qm, int sm, int delta, int n) const {
  int64_t margin = INT64_MAX;
  for (int64_t i = std::max(0, -delta); i + p_.node_stage[n] < iterations_; ++i) {
    if (i + delta + sm < 0) continue;  // m's instance precedes iteration 0
    // Both instances exist only in streams longer than the later of the two.
    const int64_t horizon = std::max<int64_t>(i, i + delta);
    if (horizon >= iterations_) break;
    margin = std::min(margin, At(horizon, n, i + p_.node_stage[n])[qm] - (i + delta + sm) * length_[qm]);
  }
  return margin;
}

bool HappensBefore::ImpliedWithout(int n, const std::vector<WaitEdge>& others,
                                   WaitEdge candidate) const {
  const int qm = p_.node_queue[candidate.node];
  for (int64_t i = candidate.lag; i + p_.node_stage[n] < iterations_; ++i) {
    Vec c;
    Knowledge(n, i + p_.node_stage[n], others, i, &c);
    if (c[qm] < Target(candidate.node, i - candidate.lag)) return false;
  }
  return true;
}

}  // namespace baton::planner
