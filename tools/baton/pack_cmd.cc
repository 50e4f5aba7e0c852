// `baton pack FILE.csv [--capacity B] [--alignment A] [--time-limit S]
// [-o OUT.csv]`: the arena packer on its own (DESIGN §7, docs/packing.md).
// MiniMalloc CSV in (id,lower,upper,size; half-open lifetimes), the same with
// an offset column out. A summary goes to stderr.

#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "baton/planner/io/npy.h"
#include "baton/planner/memory/pack.h"
#include "commands.h"
#include "output_files.h"

namespace baton::tool {
namespace {

struct PackOptions {
  std::string input;
  std::string output;  // empty: stdout
  int64_t capacity = 0;
  int64_t alignment = 1;
  double time_limit_s = 10.0;
};

int RunPack(const PackOptions& options) {
  auto fail = [](const std::string& message) {
    std::cerr << "baton pack: " << message << "\n";
    return 1;
  };
  if (options.alignment < 1) return fail("--alignment must be at least 1");
  if (options.capacity < 0) return fail("--capacity must not be negative");
  if (!(options.time_limit_s >= 0)) return fail("--time-limit must not be negative");
  const bool to_stdout = options.output.empty() || options.output == "-";
  OutputFiles files;
  if (!to_stdout) {
    files.Add(options.output, "", "-o");
    planner::Check paths = files.CheckPaths();
    if (!paths.ok()) return fail(paths.error());
  }
  planner::Result<std::string> text = planner::ReadFile(options.input);
  if (!text.ok()) return fail(text.error());
  planner::Result<std::vector<planner::PackBuffer>> buffers = planner::ReadPackCsv(*text);
  if (!buffers.ok()) return fail(options.input + ": " + buffers.error());

  planner::PackProblem problem;
  problem.buffers = std::move(buffers.value());
  problem.capacity = options.capacity;
  problem.alignment = options.alignment;
  problem.time_limit_s = options.time_limit_s;
  planner::Result<planner::PackSolution> solution = planner::Pack(problem);
  if (!solution.ok()) {
    std::string message = solution.error();
    if (message.rfind("pack: ", 0) == 0) message.erase(0, 6);
    return fail(options.input + ": " + message);
  }
  // The packer is checked by an independent validator before anything is
  // written; a failure here is a packer bug, never a partial file.
  planner::Check valid = planner::ValidatePacking(problem, *solution);
  if (!valid.ok()) return fail("internal error: invalid packing: " + valid.error());

  const std::string csv = planner::WritePackCsv(problem.buffers, solution->offsets);
  if (to_stdout) {
    std::cout << csv;
    std::cout.flush();
    if (!std::cout) return fail("cannot write to stdout");
  } else {
    files = OutputFiles();
    files.Add(options.output, csv, "-o");
    planner::Check written = files.Commit();
    if (!written.ok()) return fail(written.error());
  }

  const int64_t gap = solution->height - solution->lower_bound;
  const std::string quality = gap == 0 ? "optimal"
                              : solution->optimal
                                  ? "optimal, " + std::to_string(gap) + " above the bound"
                                  : std::to_string(gap) + " bytes above the bound";
  char seconds[32];
  std::snprintf(seconds, sizeof(seconds), "%.3f", solution->seconds);
  std::cerr << "baton pack: " << problem.buffers.size() << " buffers, height " << solution->height
            << " bytes, lower bound " << solution->lower_bound << " bytes (" << quality << "), "
            << seconds << " s\n";
  if (problem.capacity > 0) {
    std::cerr << "baton pack: fits within the capacity of " << problem.capacity << " bytes\n";
  }
  return 0;
}

}  // namespace

void AddPackCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<PackOptions>();
  CLI::App* cmd = app.add_subcommand(
      "pack", "Pack buffers with lifetimes into one arena (MiniMalloc CSV in and out)");
  cmd->add_option("FILE.csv", options->input, "Buffers: id,lower,upper,size (half-open lifetimes)")
      ->required();
  cmd->add_option("--capacity", options->capacity,
                  "Arena bytes to fit within; without it the height is minimized");
  cmd->add_option("--alignment", options->alignment, "Every offset is a multiple of this")
      ->capture_default_str();
  cmd->add_option("--time-limit", options->time_limit_s,
                  "Search budget in seconds; the best packing found by then is written")
      ->capture_default_str();
  cmd->add_option("-o,--output", options->output, "Write the packing here (default: stdout)");
  cmd->callback([options, exit_code]() { *exit_code = RunPack(*options); });
}

}  // namespace baton::tool
