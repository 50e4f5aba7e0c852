// baton: plan, inspect, run, simulate, pack and profile. See docs/cli.md.

#include <CLI/CLI.hpp>

#include "command_line.h"
#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{"baton: run one neural network across every compute unit of an SoC"};
  app.require_subcommand(1);
  int exit_code = 0;
  baton::tool::AddPlanCommand(app, &exit_code);
  baton::tool::AddInspectCommand(app, &exit_code);
  baton::tool::AddRunCommand(app, &exit_code);
  baton::tool::AddSimCommand(app, &exit_code);
  baton::tool::AddPackCommand(app, &exit_code);
  baton::tool::AddProfileCommand(app, &exit_code);
  return baton::tool::ParseAndRun(app, argc, argv, exit_code);
}
