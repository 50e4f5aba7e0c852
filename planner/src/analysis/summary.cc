#include "baton/planner/analysis/summary.h"

#include <string>

namespace baton::planner {

Result<const schema::PlanSummary*> ReadPlanSummary(const schema::Plan& plan) {
  const flatbuffers::Vector<uint8_t>* bytes = plan.summary();
  if (bytes == nullptr || bytes->size() == 0) return static_cast<const schema::PlanSummary*>(nullptr);
  // The nested buffer gets its own verifier: the runtime's loader checked
  // only that it is a byte vector.
  flatbuffers::Verifier::Options options;
  options.max_depth = 16;
  options.max_tables = 1u << 20;
  flatbuffers::Verifier verifier(bytes->data(), bytes->size(), options);
  if (!verifier.VerifyBuffer<schema::PlanSummary>(kPlanSummaryIdentifier)) {
    return Fail("the plan's summary is corrupt (not a valid PlanSummary buffer)");
  }
  const auto* s = flatbuffers::GetRoot<schema::PlanSummary>(bytes->data());
  const uint32_t num_queues = plan.queues() ? plan.queues()->size() : 0;
  const uint32_t num_nodes = plan.nodes() ? plan.nodes()->size() : 0;
  auto bad = [](const std::string& what) {
    return Fail("the plan's summary is corrupt: " + what + " out of range");
  };
  if (s->bottleneck_queue() >= static_cast<int32_t>(num_queues)) return bad("bottleneck_queue");
  if (s->queues() != nullptr) {
    for (const schema::QueueLoad* q : *s->queues()) {
      if (q->queue() >= num_queues) return bad("queues[].queue");
    }
  }
  if (s->pinned() != nullptr) {
    for (uint32_t n : *s->pinned()) {
      if (n >= num_nodes) return bad("pinned[]");
    }
  }
  if (s->fallbacks() != nullptr) {
    for (const schema::FallbackNode* f : *s->fallbacks()) {
      if (f->node() >= num_nodes) return bad("fallbacks[].node");
    }
  }
  if (s->node_cost() != nullptr && s->node_cost()->size() != num_nodes) {
    return Fail("the plan's summary is corrupt: node_cost has " +
                std::to_string(s->node_cost()->size()) + " entries for " +
                std::to_string(num_nodes) + " nodes");
  }
  return s;
}

}  // namespace baton::planner
