#pragma once
// Internal to the plan validator (validate_plan.h): N inferences unrolled into
// instances, and the happens-before graph over them (the model described in
// validate_plan.h). Like the rest of the validator it reads only the plan,
// never the planner's own reasoning.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/validate_structure.h"

namespace baton::planner::validate_detail {

// Instance numbering of N unrolled inferences: node instances (n, i) are
// i * nodes + n, then come the caller's input writes W(i), then its output
// reads R(i). Copyable; `facts` must outlive it.
class Unrolling {
 public:
  Unrolling(const PlanFacts& facts, uint32_t inferences)
      : facts_(&facts), nodes_(facts.num_nodes), n_(inferences) {}

  const PlanFacts& facts() const { return *facts_; }
  uint32_t inferences() const { return n_; }
  uint32_t instances() const { return n_ * (nodes_ + 2); }

  uint32_t NodeInstance(uint32_t n, uint32_t i) const { return i * nodes_ + n; }
  uint32_t WriteInstance(uint32_t i) const { return n_ * nodes_ + i; }
  uint32_t ReadInstance(uint32_t i) const { return n_ * nodes_ + n_ + i; }
  uint32_t InferenceOf(uint32_t v) const {
    if (v < n_ * nodes_) return v / nodes_;
    return (v - n_ * nodes_) % n_;
  }
  // "node 'x' (queue) for inference i", or the caller's event, for messages.
  std::string InstanceName(uint32_t v) const;

 private:
  const PlanFacts* facts_;
  uint32_t nodes_;
  uint32_t n_;
};

// Why an edge exists, for cycle reports.
enum class EdgeKind : uint8_t { kQueueOrder, kWait, kCaller, kInFlight };
const char* EdgeText(EdgeKind kind);

struct Edge {
  uint32_t to;
  EdgeKind kind;
};

// Whether an edge counts in an order taken with or without the in-flight
// limit (a cycle through the limit means a flush, not a deadlock).
inline bool Counts(const Edge& e, bool with_limit) {
  return with_limit || e.kind != EdgeKind::kInFlight;
}

// The direct happens-before edges of an unrolling, a topological order of
// them and, once closed, their transitive closure as one bitset row per
// instance: O(V^2 / 8) bytes.
class InstanceGraph {
 public:
  // Adds every edge of the model: queue program order, waits, the caller's
  // order and the in-flight limit.
  explicit InstanceGraph(const Unrolling& unrolling);

  const Unrolling& unrolling() const { return unrolling_; }
  size_t edges() const { return edges_; }
  const std::vector<Edge>& successors(uint32_t v) const { return succ_[v]; }

  // Kahn's algorithm over the edges that count (Counts). True when it ordered
  // every instance. Otherwise `out_left` holds each instance's indegree left
  // over: non-zero exactly for the instances on a cycle or behind one.
  bool Sort(bool with_limit, std::vector<uint32_t>* out_left);

  // Builds the transitive closure in the order of the last complete Sort().
  void Close();
  // After Close(): whether a happens-before b (a path leads from a to b).
  bool HappensBefore(uint32_t a, uint32_t b) const {
    return (reach_[size_t{a} * words_ + b / 64] >> (b % 64)) & 1;
  }

 private:
  void AddEdge(uint32_t from, uint32_t to, EdgeKind kind) {
    succ_[from].push_back({to, kind});
    ++edges_;
  }
  void AddQueueOrder();
  void AddWaits();
  void AddCallerOrder();

  Unrolling unrolling_;
  size_t edges_ = 0;
  std::vector<std::vector<Edge>> succ_;
  std::vector<uint32_t> order_;
  size_t words_ = 0;  // per row of reach_
  std::vector<uint64_t> reach_;
};

}  // namespace baton::planner::validate_detail
