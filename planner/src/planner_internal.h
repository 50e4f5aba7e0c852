#pragma once
// Steps of PlanGraph shared by planner.cc (rules) and auto_plan.cc (--auto).

#include <string>
#include <vector>

#include "baton/planner/analysis/sim.h"
#include "baton/planner/planner.h"

namespace baton::planner::internal {

// Schedule (in `order` when given), workspace, memory and wait pruning of a
// program whose stages are set. `with_bounds`: PlanMemory's lower bounds
// (false for candidates that are only simulated). `workspace_bytes`: each
// node's workspace when already known (NodeWork::workspace_bytes; see
// PlanWorkspace), which saves emitting the plan to ask the kernels.
// `estimate_memory`: PlanMemory's estimate instead of packing.
Result<Program> FinishProgram(const Program& p, const std::vector<int>* order,
                              double pack_time_limit_s, bool with_bounds = true,
                              const std::vector<uint64_t>* workspace_bytes = nullptr,
                              bool estimate_memory = false);

// Emits `p` and simulates `inferences` inferences on its target.
Result<SimResult> SimulateProgram(const Program& p, uint32_t inferences);

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

// The work of every node of `p` (devices assigned, no copies yet), counted
// on the all-fallback plan: a node's MACs and bytes do not depend on its
// device.
Result<NodeWork> BaseWork(const Program& p);

// Seconds of every node of `p` (after InsertCopies) on its own queue, from
// the target's cost model (analysis/cost.h). `p` needs no stages or schedule.
// The first emits `p` and reads the plan; the second computes the same
// numbers from `work` (BaseWork or ProgramWork of `p`'s own nodes) and the
// links, without emitting (it falls back to the first for a copy the cost
// model treats specially).
Result<std::vector<double>> ProgramSeconds(const Program& p);
Result<std::vector<double>> ProgramSeconds(const Program& p, const NodeWork& work);

// Float constants larger than this lose their data in the programs the
// planner only packs and simulates (candidates, stage options).
inline constexpr size_t kElideConstantBytes = 4096;

// `p` without the data of its large float constants (weights): emitted, it
// loads and simulates like `p` (emit.h), and copying it is cheap. Lowerings
// read only small constants (shapes, pads, axes, clip bounds).
Program WithoutWeights(const Program& p);

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
Result<Program> RefineOrder(const Program& staged, Program best, double pack_time_limit_s,
                            bool with_bounds = true,
                            const std::vector<uint64_t>* workspace_bytes = nullptr,
                            bool estimate_memory = false);

}  // namespace baton::planner::internal
