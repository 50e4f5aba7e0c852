#pragma once
// What `baton run` and `baton profile` share: loading a plan file for the
// Linux port, reading its inputs from NAME=FILE.npy arguments, and choosing
// the kernels' instruction set (--isa).

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "baton/linux/linux_port.h"
#include "baton/plan_view.h"
#include "baton/planner/result.h"

namespace baton::tool {

// A plan file's bytes, 64-byte aligned, and the runtime's view of them (the
// runtime loader's checks, checksum included, have passed).
struct LoadedRunPlan {
  linux_port::AlignedBytes bytes;
  PlanView view;
};

// A file's bytes in 64-byte-aligned memory (regular files read straight
// into it); the error names the file.
planner::Result<linux_port::AlignedBytes> ReadAligned(const std::string& path);

// Reads and loads `path`; the error names the file.
planner::Check LoadRunPlan(const std::string& path, LoadedRunPlan* out);

// Per plan input, its bytes for each of `count` inferences.
using InputData = std::vector<std::vector<std::string>>;

// One NAME=FILE.npy per plan input: the dtype must match, and the shape must
// be the input's, or (count > 1) carry one extra leading dimension of size
// `count` giving each inference its own slice. Unknown names, duplicates and
// missing inputs are errors that list the plan's inputs.
planner::Result<InputData> ReadInputs(const PlanView& view, const std::vector<std::string>& specs,
                                      int count);

// --isa auto|portable|avx2|avx512|avx512vnni|neon_dotprod on `cmd`, into
// `isa` (default "auto").
void AddIsaOption(CLI::App* cmd, std::string* isa);

// Makes the kernels use the instruction set `name` names ("auto": the widest
// the CPU has, left as it is); fails, naming the active one, when this build
// or CPU lacks it.
planner::Check SelectIsa(const std::string& name);

}  // namespace baton::tool
