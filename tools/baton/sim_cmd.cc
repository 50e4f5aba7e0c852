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

// Writes every (path, bytes) pair, all or nothing: each file goes to a
// temporary name first and is renamed into place only when all were written.
planner::Check WriteAll(const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<std::string> written;
  auto discard = [&written]() {
    for (const std::string& part : written) std::remove(part.c_str());
  };
  for (const auto& [path, bytes] : files) {
    const planner::Check check = planner::WriteFileAtomic(path + ".part", bytes);
    if (!check.ok()) {
      discard();
      return planner::Fail(check.error());
    }
    written.push_back(path + ".part");
  }
  for (size_t k = 0; k < files.size(); ++k) {
    if (std::rename(written[k].c_str(), files[k].first.c_str()) != 0) {
      discard();
      return planner::Fail(files[k].first + ": cannot rename the temporary file into place");
    }
  }
  return planner::Check();
}

planner::Check RunSim(const SimOptions& o) {
  BATON_ASSIGN_OR_RETURN(planner::LoadedPlan plan, planner::LoadedPlan::FromFile(o.plan));
  BATON_ASSIGN_OR_RETURN(planner::Target target, planner::LoadTarget(o.target));
  auto result = planner::Simulate(plan.view(), target, o.inferences);
  if (!result.ok()) return planner::Fail(o.plan + " on " + o.target + ": " + result.error());
  std::vector<std::pair<std::string, std::string>> files;
  if (!o.trace.empty()) files.emplace_back(o.trace, planner::ChromeTrace(*result));
  if (!o.gantt.empty()) files.emplace_back(o.gantt, planner::GanttSvg(*result));
  BATON_TRY(WriteAll(files));
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
