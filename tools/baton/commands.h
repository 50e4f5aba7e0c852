#pragma once
// Each `baton` subcommand lives in its own file and registers itself here:
// Add<Name>Command adds the subcommand and its options to `app` and arranges
// that, when it is selected, `*exit_code` receives its result. Errors go to
// stderr as "baton <cmd>: <message>" and give a non-zero exit; nothing partial
// is written.

#include <CLI/CLI.hpp>

namespace baton::tool {

void AddPlanCommand(CLI::App& app, int* exit_code);
void AddInspectCommand(CLI::App& app, int* exit_code);
void AddRunCommand(CLI::App& app, int* exit_code);
void AddSimCommand(CLI::App& app, int* exit_code);
void AddPackCommand(CLI::App& app, int* exit_code);
void AddProfileCommand(CLI::App& app, int* exit_code);

}  // namespace baton::tool
