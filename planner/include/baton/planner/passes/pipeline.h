#pragma once
// Pipeline stages from a modulo schedule.
//
// With D inferences in flight, a plan reaches the bound 1 / P (P = the
// largest per-inference load of any queue) when every queue can run its
// nodes back to back, iteration after iteration, without waiting for another
// queue. Stage cuts at device boundaries (one more stage per crossing) get
// there only when D is at least the number of crossings on the longest path;
// hand placements that alternate devices need far more stages than D, and
// squeezing them into D stages leaves same-iteration waits that serialize
// the queues (58-62% of the bound in the measurements of docs/partitioning.md).
//
// ModuloStages instead builds one periodic schedule of a single inference
// with period P' >= P: every node n gets a start time t_n after all its
// producers end, such that on each queue the intervals [t_n, t_n + d_n)
// taken modulo P' never overlap (iterative modulo scheduling, first fit). Then
//   stage(n)    = floor(t_n / P')
//   program order of each queue = by t_n mod P' (ties: topological order).
// Run periodically, iteration k starting at k * P', that schedule meets every
// dependency, so the self-timed executor is at least as fast: throughput
// 1 / P' once D >= the number of stages. P' grows from P in 2% steps until the
// schedule fits within `max_stages` stages (or a first-fit gap is found for
// every node). Copies are nodes of their queues like any other.

#include <vector>

#include "baton/planner/program.h"

namespace baton::planner {

struct ModuloSchedule {
  double period_s = 0;        // P'
  double bound_period_s = 0;  // P
  std::vector<int> stage;     // per node
  std::vector<int> order;     // all nodes, by (t mod P', topological position)
  int num_stages = 1;
};

// `seconds[n]` is node n's duration on its queue (copies included), for the
// program after InsertCopies. Fails only on a cycle or when no period up to
// the single-inference latency fits `max_stages` (then a caller uses one
// stage).
Result<ModuloSchedule> ModuloStages(const Program& program, const std::vector<double>& seconds,
                                    int max_stages);

// Stages by time slices of one inference's list schedule (every queue runs
// its nodes as soon as their producers end, in topological order): with L the
// single-inference latency, stage(n) = floor(start(n) * slices / L). Stages
// never decrease along an edge. The program order is the default (Schedule
// with no order).
Result<std::vector<int>> TimeSliceStages(const Program& program,
                                         const std::vector<double>& seconds, int slices);

// Contiguous cuts in topological order, as --split makes them: the nodes'
// seconds summed along the topological order are cut into `slices` equal
// parts; copies take their producer's stage (AssignStages' rule) and stages
// never decrease along an edge.
Result<std::vector<int>> TopologicalSliceStages(const Program& program,
                                                const std::vector<double>& seconds, int slices);

// Applies a modulo schedule: node_stage, num_stages; the caller passes
// `schedule.order` to Schedule().
void ApplyStages(const ModuloSchedule& schedule, Program* program);

}  // namespace baton::planner
