#pragma once
// Internal to the plan validator (validate_plan.h), step 2: deadlocks, and
// the stream the executor runs when the in-flight limit forces it to flush.
// Like the rest of the validator it reads only the plan.

#include <cstdint>

#include "analysis/validate_graph.h"
#include "analysis/validate_structure.h"
#include "baton/planner/analysis/validate_plan.h"

namespace baton::planner::validate_detail {

// Fails when the graph's edges (the in-flight limit's only when `with_limit`)
// form a cycle; the message lists one, edge by edge. On success the graph is
// sorted (InstanceGraph::Sort).
Check CheckAcyclic(InstanceGraph* graph, bool with_limit);

// Unrolls `requested` inferences and fails on a deadlock. A cycle that needs
// the in-flight limit is a flush instead: the result is then the graph of the
// longest stream L < requested whose inferences can all be admitted. The
// graph returned is sorted with the limit. `report` (optional) receives the
// instances and edges of each graph built, so on failure those of the last.
Result<InstanceGraph> ScheduleStream(const PlanFacts& facts, uint32_t requested,
                                     ValidateReport* report);

}  // namespace baton::planner::validate_detail
