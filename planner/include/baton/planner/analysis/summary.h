#pragma once
// The plan's optional summary (schema/plan.fbs PlanSummary): the planner's
// prediction and explanation, stored in Plan.summary as a nested FlatBuffer
// so that the runtime only sees a byte vector. Written by emit, read by
// `baton inspect`. Host only.

#include "baton/plan_generated.h"
#include "baton/planner/result.h"

namespace baton::planner {

// File identifier of the nested PlanSummary buffer.
inline constexpr const char* kPlanSummaryIdentifier = "BTNS";

// The summary of `plan`, verified (FlatBuffers verifier, identifier, and
// every index within the plan's queues and nodes); nullptr when the plan
// has none (plans from older planners). `plan` passed PlanView::Load.
Result<const schema::PlanSummary*> ReadPlanSummary(const schema::Plan& plan);

}  // namespace baton::planner
