#pragma once
// Helpers the tool tests share: running the `baton` command line,
// directories of test inputs a generator script writes once per build, and a
// plan's `baton inspect --json` view.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "baton/planner/analysis/inspect.h"
#include "common/process_dir.h"

namespace baton::test {

struct CliResult {
  int code = -1;
  std::string out;  // stdout and stderr
};

// Runs shell command `cmd`, appending what it prints on stdout to `out`;
// returns pclose's wait status, or -1 when the shell could not start.
inline int RunShell(const std::string& cmd, std::string* out) {
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return -1;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out->append(buf.data(), n);
  return pclose(pipe);
}

// Runs `baton ARGS` (BATON_TOOL) through the shell.
inline CliResult RunBaton(const std::string& args) {
  CliResult r;
  const int status = RunShell(std::string(BATON_TOOL) + " " + args + " 2>&1", &r.out);
  r.code = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// test::ProcessScratchDir(name) (this process's own copy), written by
// `python SCRIPT DIR` (SCRIPT relative to the source tree) the first time a
// test of this process asks for it. Call it from one function-local static
// per directory.
inline std::string GeneratedCasesDir(const std::string& script, const std::string& name) {
  const std::string d = test::ProcessScratchDir(name);
  const std::string cmd =
      std::string(BATON_PYTHON) + " " + BATON_SOURCE_DIR + "/" + script + " " + d;
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  return d;
}

// The plan `bytes` as `baton inspect --json` shows it.
inline nlohmann::json Inspect(const std::string& bytes) {
  auto loaded = planner::LoadedPlan::FromBytes(bytes.data(), bytes.size(), "plan");
  EXPECT_TRUE(loaded.ok()) << loaded.error();
  return nlohmann::json::parse(planner::InspectJson(loaded.value()));
}

// The first node of `plan` (Inspect's view) whose op is `op`; null for none.
inline const nlohmann::json* NodeByOp(const nlohmann::json& plan, const std::string& op) {
  for (const auto& n : plan["nodes"]) {
    if (n["op"] == op) return &n;
  }
  return nullptr;
}

}  // namespace baton::test
