#pragma once
// The whole planner: model + target + options -> Program, ready to emit.
//   simplify -> assign -> copies -> stages -> schedule -> workspace -> memory
//   -> prune waits -> verify (the runtime's own loader and kernels accept it).

#include <string>
#include <vector>

#include "baton/planner/passes/assign.h"
#include "baton/planner/program.h"

namespace baton::planner {

struct PlanOptions {
  std::vector<AssignRule> rules;
  std::vector<std::string> split;
  int in_flight = 1;
  double pack_time_limit_s = 2.0;
};

Result<Program> PlanGraph(Graph graph, Target target, const PlanOptions& options);

// Loads the plan with the runtime's loader and runs every kernel's prepare
// check, so a plan the planner writes is one the runtime accepts.
Check VerifyWithRuntime(const std::string& plan_bytes);

}  // namespace baton::planner
