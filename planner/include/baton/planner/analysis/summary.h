#pragma once
// The plan's optional summary (schema/plan_summary.fbs PlanSummary): the
// planner's prediction and explanation. It is a second FlatBuffer in the plan
// file, after the plan FlatBuffer and before the CRC-32C trailer, found from
// the end of the file (docs/formats.md, "File layout"):
//
//   [plan FlatBuffer, BTN1][0-7 zero bytes: summary 8-byte aligned]
//   [summary FlatBuffer, BTNS, zero-padded to a multiple of 8 bytes]
//   [u32 LE: those summary bytes]["BTNS"][u32 LE CRC-32C of all before it]
//
// The runtime verifies the plan FlatBuffer over every byte before the
// trailer; it follows offsets only, so the summary section is trailing bytes
// to it (covered by the CRC, never read). Written by emit, read by `baton
// inspect`. Host only.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "baton/plan_generated.h"
#include "baton/plan_summary_generated.h"
#include "baton/planner/result.h"

namespace baton::planner {

// File identifier of the summary FlatBuffer, and the magic that ends the
// summary section (just before the CRC-32C trailer).
inline constexpr const char* kPlanSummaryIdentifier = "BTNS";
// The section's fixed end: u32 length + 4-byte magic.
inline constexpr size_t kPlanSummaryFooterBytes = 8;
// The summary FlatBuffer's start and length are multiples of this.
inline constexpr size_t kPlanSummaryAlignment = 8;

// Where a plan file's parts lie. `size` everywhere is the file's size,
// trailer included.
struct PlanFileParts {
  size_t flatbuffer_bytes = 0;  // [0, flatbuffer_bytes): the plan FlatBuffer (+ padding)
  size_t summary_offset = 0;    // the summary FlatBuffer (summary_bytes == 0: none)
  size_t summary_bytes = 0;
};

// Splits a plan file. A file whose 4 bytes before the trailer are not "BTNS"
// has no summary (plans from planners before the summary section). A "BTNS"
// magic with a length that does not fit (not a multiple of 8, past the start
// of the file, leaving under 8 bytes of plan) is an error naming it. Checks
// nothing else (PlanView::Load checks the checksum and the plan).
Result<PlanFileParts> FindPlanParts(const void* data, size_t size);

// Appends the summary section (padding, `summary`, its length, the magic) to
// `plan`, a finished plan FlatBuffer without its trailer. `summary` is a
// finished PlanSummary buffer; nothing is appended when it is empty.
void AppendPlanSummary(std::string* plan, const std::vector<uint8_t>& summary);

// The summary of the plan file `data` (`size` bytes, 8-byte aligned, already
// loaded as `plan` by PlanView::Load), verified: FlatBuffers verifier,
// identifier, and every index within the plan's queues and nodes. nullptr
// when the file has none.
Result<const schema::PlanSummary*> ReadPlanSummary(const void* data, size_t size,
                                                   const schema::Plan& plan);

}  // namespace baton::planner
