#include "analysis/validate_graph.h"

#include <algorithm>
#include <deque>

namespace baton::planner::validate_detail {

std::string Unrolling::InstanceName(uint32_t v) const {
  const uint32_t i = InferenceOf(v);
  if (v < n_ * nodes_) {
    const uint32_t n = v % nodes_;
    return "node '" + facts_->NodeName(n) + "' (" + facts_->QueueName(facts_->node(n)->queue()) +
           ") for inference " + std::to_string(i);
  }
  if (v < n_ * nodes_ + n_) return "the caller's input write for inference " + std::to_string(i);
  return "the caller's output read for inference " + std::to_string(i);
}

const char* EdgeText(EdgeKind kind) {
  switch (kind) {
    case EdgeKind::kQueueOrder:
      return "queue order";
    case EdgeKind::kWait:
      return "wait";
    case EdgeKind::kCaller:
      return "caller";
    case EdgeKind::kInFlight:
      return "in-flight limit";
  }
  return "?";
}

InstanceGraph::InstanceGraph(const Unrolling& unrolling) : unrolling_(unrolling) {
  succ_.assign(unrolling_.instances(), {});
  AddQueueOrder();
  AddWaits();
  AddCallerOrder();
}

// Each queue runs its instances in (iteration i + stage, position) order,
// across iterations; instances outside [0, N) do not exist.
void InstanceGraph::AddQueueOrder() {
  const PlanFacts& f = unrolling_.facts();
  const uint32_t n_max = unrolling_.inferences();
  for (uint32_t q = 0; q < f.num_queues; ++q) {
    const auto* program = f.plan->queues()->Get(q)->nodes();
    const uint32_t len = Count(program);
    uint32_t stage_max = 0;
    for (uint32_t p = 0; p < len; ++p)
      stage_max = std::max(stage_max, f.node(program->Get(p))->stage());
    int64_t previous = -1;
    for (uint64_t k = 0; k < uint64_t{n_max} + stage_max; ++k) {
      for (uint32_t p = 0; p < len; ++p) {
        const uint32_t n = program->Get(p);
        const int64_t i = static_cast<int64_t>(k) - f.node(n)->stage();
        if (i < 0 || i >= n_max) continue;
        const uint32_t v = unrolling_.NodeInstance(n, static_cast<uint32_t>(i));
        if (previous >= 0) AddEdge(static_cast<uint32_t>(previous), v, EdgeKind::kQueueOrder);
        previous = v;
      }
    }
  }
}

void InstanceGraph::AddWaits() {
  const PlanFacts& f = unrolling_.facts();
  for (uint32_t n = 0; n < f.num_nodes; ++n) {
    const auto* waits = f.node(n)->waits();
    if (waits == nullptr) continue;
    for (const schema::Wait* w : *waits) {
      for (uint32_t i = w->lag(); i < unrolling_.inferences(); ++i) {
        AddEdge(unrolling_.NodeInstance(w->node(), i - w->lag()), unrolling_.NodeInstance(n, i),
                EdgeKind::kWait);
      }
    }
  }
}

// W(i) -> every (n, i) -> R(i); W(i) -> W(i+1); R(i) -> R(i+1); and the
// in-flight limit D: R(i - D) -> W(i).
void InstanceGraph::AddCallerOrder() {
  const Unrolling& u = unrolling_;
  const uint32_t n_max = u.inferences();
  const uint32_t in_flight = u.facts().in_flight;
  for (uint32_t i = 0; i < n_max; ++i) {
    for (uint32_t n = 0; n < u.facts().num_nodes; ++n) {
      AddEdge(u.WriteInstance(i), u.NodeInstance(n, i), EdgeKind::kCaller);
      AddEdge(u.NodeInstance(n, i), u.ReadInstance(i), EdgeKind::kCaller);
    }
    AddEdge(u.WriteInstance(i), u.ReadInstance(i), EdgeKind::kCaller);
    if (i + 1 < n_max) {
      AddEdge(u.WriteInstance(i), u.WriteInstance(i + 1), EdgeKind::kCaller);
      AddEdge(u.ReadInstance(i), u.ReadInstance(i + 1), EdgeKind::kCaller);
    }
    if (i >= in_flight)
      AddEdge(u.ReadInstance(i - in_flight), u.WriteInstance(i), EdgeKind::kInFlight);
  }
}

bool InstanceGraph::Sort(bool with_limit, std::vector<uint32_t>* out_left) {
  const uint32_t v_max = unrolling_.instances();
  std::vector<uint32_t>& indegree = *out_left;
  indegree.assign(v_max, 0);
  for (uint32_t v = 0; v < v_max; ++v) {
    for (const Edge& e : succ_[v]) indegree[e.to] += Counts(e, with_limit);
  }
  std::deque<uint32_t> ready;
  for (uint32_t v = 0; v < v_max; ++v) {
    if (indegree[v] == 0) ready.push_back(v);
  }
  order_.clear();
  while (!ready.empty()) {
    const uint32_t v = ready.front();
    ready.pop_front();
    order_.push_back(v);
    for (const Edge& e : succ_[v]) {
      if (Counts(e, with_limit) && --indegree[e.to] == 0) ready.push_back(e.to);
    }
  }
  return order_.size() == v_max;
}

// In reverse topological order every successor's row is final when it is
// merged, so one pass suffices.
void InstanceGraph::Close() {
  const uint32_t v_max = unrolling_.instances();
  words_ = (v_max + 63) / 64;
  reach_.assign(size_t{v_max} * words_, 0);
  for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
    uint64_t* row = &reach_[size_t{*it} * words_];
    for (const Edge& e : succ_[*it]) {
      const uint64_t* other = &reach_[size_t{e.to} * words_];
      for (size_t w = 0; w < words_; ++w) row[w] |= other[w];
      row[e.to / 64] |= uint64_t{1} << (e.to % 64);
    }
  }
}

}  // namespace baton::planner::validate_detail
