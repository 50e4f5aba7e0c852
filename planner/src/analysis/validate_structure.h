#pragma once
// Internal to the plan validator (validate_plan.h), step 1: the plan's
// structure, and what the later steps need to know about it.
//
// The validator is independent of the planner's reasoning: it reads nothing
// but the plan (schema::Plan) and includes no planner pass headers (passes/,
// memory/, emit/, import/, ops/), so that it can catch their mistakes. Keep it
// that way.

#include <cstdint>
#include <string>
#include <vector>

#include "baton/plan_generated.h"
#include "baton/planner/result.h"

namespace baton::planner::validate_detail {

template <typename V>
uint32_t Count(const V* v) {
  return v ? v->size() : 0;
}

// PlanFacts::writer of a graph input: the caller writes it.
inline constexpr int64_t kCallerWrites = -2;

// A plan whose structure was checked, with the facts the later steps use.
// Indices inside the plan may be trusted once CheckStructure succeeded. The
// plan must outlive it.
struct PlanFacts {
  const schema::Plan* plan = nullptr;
  uint32_t num_domains = 0, num_queues = 0, num_tensors = 0, num_nodes = 0;
  uint32_t in_flight = 1;  // D
  uint32_t max_stage = 0;
  uint32_t max_slots = 1;
  // The largest lcm of the slot counts of two tensors whose slots overlap in
  // bytes (at least max_slots).
  uint32_t slot_period = 1;
  std::vector<int64_t> writer;  // per tensor: node, kCallerWrites or -1

  const schema::Node* node(uint32_t n) const { return plan->nodes()->Get(n); }
  const schema::Tensor* tensor(uint32_t t) const { return plan->tensors()->Get(t); }
  std::string NodeName(uint32_t n) const { return node(n)->name()->str(); }
  std::string TensorName(uint32_t t) const { return tensor(t)->name()->str(); }
  std::string QueueName(uint32_t q) const { return plan->queues()->Get(q)->name()->str(); }
  std::string DomainName(uint32_t d) const { return plan->domains()->Get(d)->name()->str(); }
};

// Check 1 of validate_plan.h: indices in range, queue programs consistent
// with node.queue and node.position, each tensor written by at most one node
// (or the caller), every tensor a node touches in a domain its queue reaches
// and inside its domain's arena. Fills `out` as it goes; the first failure is
// returned.
Check CheckStructure(const schema::Plan* plan, PlanFacts* out);

}  // namespace baton::planner::validate_detail
