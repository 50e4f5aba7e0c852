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
// those happen-before all accesses of the first at i + 1 (HappensBefore;
// the caller's writes of inputs and reads of outputs take part, ordered by
// the async API). Multi-slot tensors keep their bytes to themselves. Each
// domain is packed by Pack() with exactly those conflicts.
// Lower bound (reported per domain): the larger of
//   - the largest total size of tensor instances that must all be live while
//     one node runs: those it touches, and those written before it starts
//     and read after it ends (DESIGN §5), and
//   - the heaviest set of single-slot tensors that pairwise conflict: with
//     several queues, tensors on concurrent queues are live at the same time
//     without either being "live across" the other's node.
// No packing of this schedule can be smaller than either.

#include "baton/planner/program.h"

namespace baton::planner {

// Adds each node's workspace tensor (sized by the kernel's WorkspaceBytes)
// in its queue's first domain. Needs Schedule.
// `known_bytes` (optional): each node's workspace bytes from an earlier
// PlanWorkspace of the same graph (indexed by node; copies added since
// need none), instead of emitting the plan to ask the kernels.
Check PlanWorkspace(Program* program, const std::vector<uint64_t>* known_bytes = nullptr);

// Fills placement and domain_report, may add waits. Fails when a domain's
// arena exceeds its capacity. Without `with_bounds` the lower bounds (the
// costliest part on large graphs) are left at 0 unless a domain overflows
// (its error names the peak): for candidate plans that are only simulated.
// `estimate`: no packing (every tensor gets bytes of its own, so the plan
// still loads and simulates) and the capacities are checked against an
// estimate of the packed arenas (interval peaks along the plan order; see
// EstimateDomain in memory.cc): --auto's candidates on graphs too big to
// pack each one. The written plan is always packed.
Check PlanMemory(Program* program, double pack_time_limit_s, bool with_bounds = true,
                 bool estimate = false);

}  // namespace baton::planner
