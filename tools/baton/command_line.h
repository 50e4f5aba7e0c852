#pragma once
// Parsing `baton`'s command line with one error convention for every
// subcommand (docs/cli.md "Exit codes"): a usage error (unknown option,
// missing or invalid value, no subcommand) prints
//   baton <cmd>: <what is wrong>
//   Run 'baton <cmd> --help' for usage.
// to stderr and exits with kUsageExit, never CLI11's own codes. --help exits 0.
// An exception escaping a command is reported as an internal error with the
// same prefix and exit code 1 instead of aborting.

#include <CLI/CLI.hpp>

namespace baton::tool {

// Every error of every command, usage errors included, exits with 1.
inline constexpr int kUsageExit = 1;

// Parses argv into `app` (whose subcommands' callbacks run during the
// parse) and returns the process exit code: `command_exit` when the command
// ran, else the usage error's.
int ParseAndRun(CLI::App& app, int argc, char** argv, const int& command_exit);

}  // namespace baton::tool
