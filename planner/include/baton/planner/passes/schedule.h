#pragma once
// Stages and queue programs (DESIGN §3-4).
//
// Stages. With --split A,B,...: walk the graph in topological order; a node's
// stage is the number of split nodes at or before it. Otherwise, with
// in_flight > 1, stages follow device boundaries: a node's stage is the
// largest of its producers' stages, plus one when a producer ran on another
// device; if that gives more than in_flight stages, consecutive stages are
// merged evenly down to in_flight. With in_flight == 1 and no --split, all
// stages are 0. Copies take their producer's stage (graph-input copies their
// first consumer's). Stages never decrease along a data edge.
//
// Programs. The plan's node order sorts nodes by (stage descending, then
// topological position); each queue's program is that order restricted to
// the queue. Within one iteration a queue thus serves its oldest inference
// first, and it never waits on an inference it does not yet need.
// Cross-queue data edges become waits with lag 0. Every wait points
// backwards in (iteration, node order), so the schedule is deadlock-free by
// construction; the runtime's loader re-checks this.

#include <string>
#include <vector>

#include "baton/planner/program.h"

namespace baton::planner {

// Needs node_queue. Fills node_stage, num_stages.
Check AssignStages(const std::vector<std::string>& split, Program* program);

// Needs node_stage. Fills order, programs, waits (data dependencies only).
// With `order` (a permutation of the nodes), that order is used instead of
// (stage descending, topological), after checking that every same-stage
// data dependency points forward in it.
Check Schedule(Program* program, const std::vector<int>* order = nullptr);

// Drops every wait that the others (with program order and the in-flight
// limit) already imply. Needs order, programs, waits.
void PruneWaits(Program* program);

}  // namespace baton::planner
