#pragma once
// Emitters: the plan FlatBuffer, the C header, the JSON report and the dot
// graph. All are pure functions of the Program, so plans are deterministic.

#include <string>

#include "baton/planner/program.h"

namespace baton::planner {

// The plan (schema/plan.fbs). Before PlanMemory it still builds, with zero
// offsets and sizes (used to size workspaces). A constant whose data is empty
// (the planner elides weights in the candidate plans it only simulates) is
// placed at offset 0 of a zero-filled constant section at least as long as
// the largest such constant: the plan loads and simulates, but computes
// nothing useful.
Result<std::string> EmitPlan(const Program& program);

// C header: BATON_PLAN_BYTES, BATON_IN_FLIGHT, per domain
// BATON_<DOMAIN>_ARENA_BYTES and BATON_<DOMAIN>_ARENA_ALIGN, and the plan as
// `static const unsigned char baton_plan_data[]`, 64-byte aligned.
std::string EmitHeader(const Program& program, const std::string& plan_bytes,
                       const std::string& source);

// JSON report (DESIGN §7 plus details): per domain arena_bytes,
// lower_bound_bytes, capacity_bytes; per device nodes; copies; stages;
// fallbacks; warnings.
std::string EmitReport(const Program& program, const std::string& source);

// Graphviz: nodes colored by device, copies as dashed boxes on their queue.
std::string EmitDot(const Program& program);

// "npu_sram" -> "NPU_SRAM" (letters, digits, underscores).
std::string MacroName(const std::string& name);

}  // namespace baton::planner
