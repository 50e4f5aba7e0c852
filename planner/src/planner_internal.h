#pragma once
// Steps of PlanGraph shared by planner.cc (rules) and auto_plan.cc (--auto).

#include <string>
#include <vector>

#include "baton/planner/analysis/sim.h"
#include "baton/planner/planner.h"

namespace baton::planner::internal {

// Schedule (in `order` when given), workspace, memory and wait pruning of a
// program whose stages are set.
Result<Program> FinishProgram(const Program& p, const std::vector<int>* order,
                              double pack_time_limit_s);

// Emits `p` and simulates `inferences` inferences on its target.
Result<SimResult> SimulateProgram(const Program& p, uint32_t inferences);

// Seconds of every node of `p` (after InsertCopies) on its own queue, from
// the target's cost model (analysis/cost.h). `p` needs no stages or schedule.
Result<std::vector<double>> ProgramSeconds(const Program& p);

// Multiply-accumulates and bytes of every node of a program (copies
// included), as the cost model counts them, and each node's profile
// signature (analysis/cost.h NodeSignature).
struct NodeWork {
  std::vector<double> macs;
  std::vector<double> bytes;
  std::vector<std::string> signature;
  std::vector<uint64_t> workspace_bytes;
};
Result<NodeWork> ProgramWork(const Program& p);

// Stages for a program with copies when the user gave no --split: the best
// by simulation of device-boundary stages, a modulo schedule within
// p->in_flight stages, and a single stage. Fills node_stage and num_stages;
// `out_order` gets the modulo schedule's node order when that one wins.
Check ChooseStages(Program* p, std::vector<int>* out_order);

// `baton plan --auto`: device assignment, stages and in-flight depth.
Result<Program> PlanAuto(Program assigned, const PlanOptions& options);

// Profile-guided program order (planner.cc): up to three rounds of
// re-ordering every queue by simulated ready times, each kept only when the
// simulation improves. `staged` is the program before FinishProgram, `best`
// the finished one.
Result<Program> RefineOrder(const Program& staged, Program best, double pack_time_limit_s);

}  // namespace baton::planner::internal
