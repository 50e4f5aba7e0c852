#include "baton/planner/analysis/summary.h"

#include <cstring>
#include <string>

#include "baton/checksum.h"

namespace baton::planner {
namespace {

uint32_t ReadU32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

}  // namespace

Result<PlanFileParts> FindPlanParts(const void* data, size_t size) {
  PlanFileParts parts;
  const auto* bytes = static_cast<const uint8_t*>(data);
  const size_t body = size >= kPlanTrailerBytes ? size - kPlanTrailerBytes : 0;
  parts.flatbuffer_bytes = body;
  // The smallest FlatBuffer is 8 bytes (root offset + identifier).
  if (body < 8 + kPlanSummaryFooterBytes ||
      std::memcmp(bytes + body - 4, kPlanSummaryIdentifier, 4) != 0) {
    return parts;
  }
  const size_t length = ReadU32(bytes + body - kPlanSummaryFooterBytes);
  const size_t room = body - kPlanSummaryFooterBytes - 8;
  if (length == 0 || length % kPlanSummaryAlignment != 0 || length > room ||
      (body - kPlanSummaryFooterBytes - length) % kPlanSummaryAlignment != 0) {
    return Fail("the plan's summary section is malformed (length " + std::to_string(length) +
                " in a file of " + std::to_string(size) + " bytes)");
  }
  parts.summary_bytes = length;
  parts.summary_offset = body - kPlanSummaryFooterBytes - length;
  parts.flatbuffer_bytes = parts.summary_offset;
  return parts;
}

void AppendPlanSummary(std::string* plan, const std::vector<uint8_t>& summary) {
  if (summary.empty()) return;
  while (plan->size() % kPlanSummaryAlignment != 0) plan->push_back('\0');
  const size_t start = plan->size();
  plan->append(reinterpret_cast<const char*>(summary.data()), summary.size());
  // FlatBuffers pads a buffer with doubles to 8 already; zeros after a
  // FlatBuffer are harmless either way.
  while (plan->size() % kPlanSummaryAlignment != 0) plan->push_back('\0');
  const auto length = static_cast<uint32_t>(plan->size() - start);
  for (int i = 0; i < 4; ++i) plan->push_back(static_cast<char>((length >> (8 * i)) & 0xFF));
  plan->append(kPlanSummaryIdentifier, 4);
}

Result<const schema::PlanSummary*> ReadPlanSummary(const void* data, size_t size,
                                                   const schema::Plan& plan) {
  BATON_ASSIGN_OR_RETURN(PlanFileParts parts, FindPlanParts(data, size));
  if (parts.summary_bytes == 0) return static_cast<const schema::PlanSummary*>(nullptr);
  const uint8_t* bytes = static_cast<const uint8_t*>(data) + parts.summary_offset;
  if (reinterpret_cast<uintptr_t>(bytes) % kPlanSummaryAlignment != 0) {
    return Fail("the plan's summary is not 8-byte aligned in memory");
  }
  flatbuffers::Verifier::Options options;
  options.max_depth = 16;
  options.max_tables = 1u << 20;
  flatbuffers::Verifier verifier(bytes, parts.summary_bytes, options);
  if (!verifier.VerifyBuffer<schema::PlanSummary>(kPlanSummaryIdentifier)) {
    return Fail("the plan's summary is corrupt (not a valid PlanSummary buffer)");
  }
  const auto* s = flatbuffers::GetRoot<schema::PlanSummary>(bytes);
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
