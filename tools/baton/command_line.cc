#include "command_line.h"

#include <cstdio>
#include <exception>
#include <string>

namespace baton::tool {
namespace {

// "baton plan", or "baton" before a subcommand was named: the first
// argument that names a subcommand.
std::string Prefix(CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.empty() || arg[0] == '-') continue;
    for (const CLI::App* sub : app.get_subcommands({})) {
      if (sub->get_name() == arg) return "baton " + arg;
    }
    break;
  }
  return "baton";
}

}  // namespace

int ParseAndRun(CLI::App& app, int argc, char** argv, const int& command_exit) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    const std::string prefix = Prefix(app, argc, argv);
    std::fprintf(stderr, "%s: %s\nRun '%s --help' for usage.\n", prefix.c_str(), e.what(),
                 prefix.c_str());
    return kUsageExit;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: internal error: %s\n", Prefix(app, argc, argv).c_str(), e.what());
    return 1;
  }
  return command_exit;
}

}  // namespace baton::tool
