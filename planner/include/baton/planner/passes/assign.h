#pragma once
// Device assignment (DESIGN §3). Precedence, lowest to highest:
//   1. the target's fallback device (the default);
//   2. the node's `device` annotation in the model;
//   3. --assign rules, in command-line order (a later matching rule wins).
// A rule's PATTERN is an op type ("Conv"), a node name ("@conv1"), or the
// k-th node of an op type in topological order ("Conv#0"). A rule or an
// annotation naming an unknown device is an error. A node whose device cannot
// run its op, or one of its tensors' dtypes, goes to the fallback device and
// is listed in Program::fallbacks; if the fallback cannot run it either, the
// plan fails naming the node. Exception: a custom op ("domain::name") the
// fallback does not list goes to the first device (in target order) that
// lists it and can run it; only devices that list a custom op run it.

#include <string>
#include <vector>

#include "baton/planner/program.h"

namespace baton::planner {

struct AssignRule {
  std::string pattern;
  std::string device;
};

// Parses "PATTERN=DEVICE".
Result<AssignRule> ParseAssignRule(const std::string& text);

// True when `device` runs `node`'s op and handles the dtypes of its
// non-constant tensors (constants are parameters and do not count: Gather
// indices, Reshape shapes, a QLinearConv's float scales and int32 bias on
// an int8-only NPU); otherwise `why` says which.
bool DeviceCanRun(const Graph& graph, const TargetDevice& device, const Node& node,
                  std::string* why);

// Fills program->node_device, node_pinned and fallbacks. Needs graph and
// target.
Check AssignDevices(const std::vector<AssignRule>& rules, Program* program);

}  // namespace baton::planner
