#pragma once
// Helpers shared by the op families' LowerFns (ONNX attributes to plan
// params) and MacsFns (reading a planned node's tensors). Internal to the
// planner's ops/ and the passes that use them. Host only; may allocate.

#include <flatbuffers/flatbuffers.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "baton/plan_generated.h"
#include "baton/planner/graph.h"
#include "baton/planner/ops/op_def.h"

namespace baton::planner::internal {

// ---- Lowering ----

// The prefix of a lowering error: "node 'conv1' (Conv)".
std::string NodeWhere(const Node& node);

// Plan params store int32 lists.
std::vector<int32_t> I32(const std::vector<int64_t>& v);

// Input `k` of `node`; it must be present.
const Tensor& InputTensor(const Graph& graph, const Node& node, int k);

// Input `k` when it is present and constant, else null.
const Tensor* ConstInput(const Graph& graph, const Node& node, int k);

// The activation fused into the node (Node::clamp), or null.
std::unique_ptr<schema::Clamp> FusedClamp(const Node& node);

// Node::activation as the plan's enum (None when "").
schema::FusedActivation FusedActivationOf(const Node& node);

// The window of a Conv or pool node as plan params: kernel, strides,
// explicit pads (auto_pad resolved against the input) and dilations.
struct Window {
  std::vector<int32_t> kernel, strides, pads, dilations;
};
Result<Window> LowerWindow(const Graph& graph, const Node& node,
                           const std::vector<int64_t>& kernel);

// AxisParams with the node's `axis` attribute (`default_axis` when absent),
// made non-negative; when `check_range`, it must lie inside input 0's rank.
Result<LoweredParams> LowerAxis(flatbuffers::FlatBufferBuilder* builder, const Graph& graph,
                                const Node& node, int64_t default_axis, bool check_range);

// ---- Cost ----

// Input `index` of a planned node, or null when absent.
const schema::Tensor* PlanInput(const schema::Plan& plan, const schema::Node& node, uint32_t index);

// Dim `index` of `t` (negative counts from the back); 0 when `t` is null or
// has no such dim.
double PlanDim(const schema::Tensor* t, int index);

}  // namespace baton::planner::internal
