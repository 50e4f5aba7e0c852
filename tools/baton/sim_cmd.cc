// `baton sim PLAN --target T.json --inferences N [--json] [--trace TRACE.json]
// [--gantt G.svg]`: simulates a plan on a target's cost model (DESIGN §7,
// docs/cli.md). Every output is rendered before any file is written, and the
// files are written all or nothing, so an error leaves nothing partial.

#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "baton/planner/analysis/inspect.h"
#include "baton/planner/io/npy.h"
#include "baton/planner/analysis/sim.h"
#include "baton/planner/target.h"
#include "commands.h"
#include "output_files.h"

namespace baton::tool {
namespace {

struct SimOptions {
  std::string plan;
  std::string target;
  uint32_t inferences = 0;
  bool json = false;
  std::string trace;
  std::string gantt;
};

planner::Check RunSim(const SimOptions& o) {
  OutputFiles files;
  if (!o.trace.empty()) files.Add(o.trace, "", "--trace");
  if (!o.gantt.empty()) files.Add(o.gantt, "", "--gantt");
  BATON_TRY(files.CheckPaths());
  BATON_ASSIGN_OR_RETURN(planner::LoadedPlan plan, planner::LoadedPlan::FromFile(o.plan));
  BATON_ASSIGN_OR_RETURN(planner::Target target, planner::LoadTarget(o.target));
  auto result = planner::Simulate(plan.view(), target, o.inferences);
  if (!result.ok()) return planner::Fail(o.plan + " on " + o.target + ": " + result.error());
  files = OutputFiles();
  if (!o.trace.empty()) files.Add(o.trace, planner::ChromeTrace(*result), "--trace");
  if (!o.gantt.empty()) files.Add(o.gantt, planner::GanttSvg(*result), "--gantt");
  BATON_TRY(files.Commit());
  std::cout << (o.json ? planner::SimJson(*result) : planner::SimText(*result));
  std::cout.flush();
  if (!std::cout) return planner::Fail("cannot write to standard output");
  return planner::Check();
}

}  // namespace

void AddSimCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<SimOptions>();
  CLI::App* cmd = app.add_subcommand(
      "sim", "Simulate a plan on a target's cost model: throughput, latency, utilization");
  cmd->add_option("PLAN", options->plan, "Plan file (.baton)")->required();
  cmd->add_option("--target", options->target, "Target description (JSON)")->required();
  cmd->add_option("--inferences", options->inferences, "Inferences to simulate")
      ->required()
      ->check(CLI::Range(1u, 1000000u));
  cmd->add_flag("--json", options->json, "Print the result as JSON (docs/cli.md)");
  cmd->add_option("--trace", options->trace, "Write a Chrome trace (Perfetto) to this file");
  cmd->add_option("--gantt", options->gantt, "Write an SVG timeline to this file");
  cmd->callback([options, exit_code]() {
    const planner::Check status = RunSim(*options);
    if (!status.ok()) {
      std::cerr << "baton sim: " << status.error() << "\n";
      *exit_code = 1;
      return;
    }
    *exit_code = 0;
  });
}

}  // namespace baton::tool
