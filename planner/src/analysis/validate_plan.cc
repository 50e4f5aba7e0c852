// The plan validator: one step per file, run here in the order
// validate_plan.h documents.
//   validate_structure.cc  1. indices, queue programs, writers, reach
//   validate_graph.cc      unrolled instances and happens-before edges
//   validate_deadlock.cc   2. cycles, and the stream length when D forces flushes
//   validate_accesses.cc   3./4. races and read-before-write
// It is independent of the planner's reasoning on purpose: it reads nothing
// but the plan bytes and must not include planner pass headers (passes/,
// memory/, emit/, import/, ops/), so that it can catch their mistakes.
#include "baton/planner/analysis/validate_plan.h"

#include <cstring>
#include <vector>

#include "analysis/validate_accesses.h"
#include "analysis/validate_deadlock.h"
#include "analysis/validate_graph.h"
#include "analysis/validate_structure.h"
#include "baton/checksum.h"
#include "baton/plan_generated.h"

namespace baton::planner {
namespace {

using validate_detail::Access;
using validate_detail::InstanceGraph;
using validate_detail::PlanFacts;

// How many inferences to unroll: `inferences`, or automatically enough for
// every slot of every tensor to be reused at least once in the steady state,
// and every pairing of the slots of two tensors that share bytes to occur.
Result<uint32_t> InferencesToUnroll(const PlanFacts& facts, int inferences) {
  if (inferences < 0) return Fail("inferences must be >= 0");
  const uint64_t automatic = uint64_t{facts.in_flight} + facts.max_stage + facts.slot_period + 2;
  const uint64_t n = inferences == 0 ? automatic : static_cast<uint64_t>(inferences);
  const uint64_t v = n * (uint64_t{facts.num_nodes} + 2);
  if (v > kMaxValidateInstances) {
    return Fail("validating " + std::to_string(n) + " inferences needs " + std::to_string(v) +
                " instances, more than " + std::to_string(kMaxValidateInstances) +
                "; pass fewer inferences");
  }
  return static_cast<uint32_t>(n);
}

// The checks of validate_plan.h, in order, on a verified plan.
Check Validate(const schema::Plan* plan, int inferences, ValidateReport* report) {
  PlanFacts facts;
  BATON_TRY(validate_detail::CheckStructure(plan, &facts));
  BATON_ASSIGN_OR_RETURN(const uint32_t requested, InferencesToUnroll(facts, inferences));
  if (report != nullptr) report->inferences = requested;
  BATON_ASSIGN_OR_RETURN(InstanceGraph graph,
                         validate_detail::ScheduleStream(facts, requested, report));
  const uint32_t length = graph.unrolling().inferences();
  if (report != nullptr) {
    report->stream_length = length;
    report->flushes = length < requested;
  }
  graph.Close();
  const std::vector<Access> accesses = validate_detail::CollectAccesses(graph.unrolling());
  if (report != nullptr) report->accesses = accesses.size();
  size_t pairs = 0;
  const Check result = validate_detail::CheckAccesses(graph, accesses, &pairs);
  if (report != nullptr) report->pairs_checked = pairs;
  return result;
}

}  // namespace

Check ValidatePlanSchedule(const void* data, size_t size, int inferences, ValidateReport* out) {
  if (out != nullptr) *out = ValidateReport();
  if (data == nullptr || size < 8) return Fail("plan is empty or truncated");
  // FlatBuffers reads scalars in place; give it an aligned copy when needed.
  std::vector<uint64_t> copy;
  const uint8_t* bytes = static_cast<const uint8_t*>(data);
  if (reinterpret_cast<uintptr_t>(data) % 16 != 0) {
    copy.resize((size + 7) / 8 + 1);
    // vector<uint64_t> storage is 16-byte aligned with glibc's operator new.
    std::memcpy(copy.data(), data, size);
    bytes = reinterpret_cast<const uint8_t*>(copy.data());
  }
  if (!schema::PlanBufferHasIdentifier(bytes)) {
    return Fail("not a Baton plan (file identifier is not BTN1)");
  }
  // The CRC-32C trailer (docs/formats.md), recomputed bit by bit here rather
  // than with the runtime's table-driven Crc32c.
  if (size < 8 + kPlanTrailerBytes) return Fail("plan is truncated (no checksum trailer)");
  size -= kPlanTrailerBytes;
  uint32_t crc = 0xFFFFFFFFu;
  for (size_t i = 0; i < size; ++i) {
    crc ^= bytes[i];
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
  }
  uint32_t stored = 0;
  for (size_t i = 0; i < kPlanTrailerBytes; ++i) stored |= uint32_t{bytes[size + i]} << (8 * i);
  if (~crc != stored) return Fail("plan checksum (CRC-32C trailer) does not match its bytes");
  flatbuffers::Verifier verifier(bytes, size);
  if (!schema::VerifyPlanBuffer(verifier)) {
    return Fail("plan failed FlatBuffers verification (corrupt or truncated)");
  }
  return Validate(schema::GetPlan(bytes), inferences, out);
}

}  // namespace baton::planner
