#pragma once
// Memory planning (DESIGN §5).
//
// Slots: a graph input or output has inferences_in_flight slots (the caller
// writes and reads them). Any other tensor gets one more slot than the
// number of stages between its producer and its last consumer (at most
// inferences_in_flight); when program order, waits and the in-flight limit do
// not already keep inference i + slots from overwriting inference i while it
// is read, the producer waits on each reader with that lag.
// Reuse: two tensors may share bytes only if, for every inference i, all
// accesses of one at i happen-before all accesses of the other at i, and
// those happen-before all accesses of the first at i + 1 (HappensBefore);
// graph inputs/outputs and multi-slot tensors keep their bytes to
// themselves. Each domain is packed by Pack() with those conflicts.
// Lower bound: the largest total size of tensor instances that must all be
// live while one node runs: those it touches, and those written before it
// starts and read after it ends.

#include "baton/planner/program.h"

namespace baton::planner {

// Adds each node's workspace tensor (sized by the kernel's WorkspaceBytes)
// in its queue's first domain. Needs Schedule.
Check PlanWorkspace(Program* program);

// Fills placement and domain_report, may add waits. Fails when a domain's
// arena exceeds its capacity.
Check PlanMemory(Program* program, double pack_time_limit_s);

}  // namespace baton::planner
