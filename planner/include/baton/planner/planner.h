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
  // --auto: choose devices (rules become pins), stages and the in-flight
  // depth (1..max_in_flight) by the objective; `in_flight` is then ignored.
  bool auto_partition = false;
  std::string objective = "throughput";  // or "latency"
  int max_in_flight = 4;
  // Largest assignment space --auto enumerates exhaustively (0: always use
  // the heuristic search; tests use it to measure the heuristic alone).
  int64_t auto_exact_limit = 60000;
  // --auto-time-limit: wall seconds after which --auto stops planning
  // candidates and finishes the best so far (AutoReport::time_limit_hit). The
  // search is bounded by work counts first; this is a safety net, and when it
  // triggers the plan may depend on the machine's speed.
  double auto_time_limit_s = 60.0;
  // --auto-threads: threads that plan --auto's candidates (1 or 2). The
  // results are consumed in the order one thread would produce them, so the
  // plan is byte-identical whatever this is.
  int auto_threads = 2;
  // Graphs with more nodes than this get their --auto candidates' arenas
  // estimated instead of packed (docs/partitioning.md); the written plan is
  // always packed. Tests lower it to exercise the estimate on small graphs.
  size_t auto_estimate_memory_nodes = 1500;
  // --winograd-weights: give every Conv that the runtime runs on Winograd its
  // transformed weights (passes/winograd_weights.h): a larger plan, faster
  // 3x3 layers.
  bool winograd_weights = false;
};

Result<Program> PlanGraph(Graph graph, Target target, const PlanOptions& options);

// Loads the plan with the runtime's loader and runs every kernel's prepare
// check, so a plan the planner writes is one the runtime accepts.
Check VerifyWithRuntime(const std::string& plan_bytes);

}  // namespace baton::planner
