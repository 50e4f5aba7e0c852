// `baton inspect PLAN [--json]`: prints a plan (DESIGN §7, docs/cli.md).

#include <iostream>
#include <memory>
#include <string>

#include "baton/planner/analysis/inspect.h"
#include "commands.h"

namespace baton::tool {

void AddInspectCommand(CLI::App& app, int* exit_code) {
  struct Options {
    std::string plan;
    bool json = false;
  };
  auto options = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "inspect", "Print a plan: pipeline configuration, stages, queues and arenas");
  cmd->add_option("PLAN", options->plan, "Plan file (.baton)")->required();
  cmd->add_flag("--json", options->json, "Print the plan as JSON (docs/formats.md)");
  cmd->callback([options, exit_code]() {
    auto plan = planner::LoadedPlan::FromFile(options->plan);
    if (!plan.ok()) {
      std::cerr << "baton inspect: " << plan.error() << "\n";
      *exit_code = 1;
      return;
    }
    std::cout << (options->json ? planner::InspectJson(plan.value())
                                : planner::InspectText(plan.value()));
    std::cout.flush();
    *exit_code = std::cout ? 0 : 1;
  });
}

}  // namespace baton::tool
