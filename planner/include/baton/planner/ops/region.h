#pragma once
// The `__subgraph` op: a region of nodes run by a foreign runtime, formed by
// passes/regions.h (FormRegions) after device assignment. Its IR attributes:
//   "runtime"    kString   the device's runtime ("armnn");
//   "model"      kTensor   uint8 [bytes]: the region as an ONNX ModelProto;
//   "nodes"      kStrings  the names of the nodes it merged;
//   "node_macs", "node_bytes"  kFloats  each node's work (the cost model).
// In the plan: a Subgraph node with CustomParams{name = runtime, attributes =
// the other four} (ops/custom_params.h; docs/formats.md).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "baton/planner/ops/op_def.h"

namespace baton::planner {

inline constexpr const char* kSubgraphOp = "__subgraph";
inline constexpr const char* kRegionRuntimeAttr = "runtime";
inline constexpr const char* kRegionModelAttr = "model";
inline constexpr const char* kRegionNodesAttr = "nodes";
inline constexpr const char* kRegionMacsAttr = "node_macs";
inline constexpr const char* kRegionBytesAttr = "node_bytes";

// The plan parameters of a `__subgraph` node (OpDef::lower).
Result<LoweredParams> LowerSubgraph(flatbuffers::FlatBufferBuilder* builder, const Graph& graph,
                                    const Node& node);

// What a plan's Subgraph node says about its region; nullopt when `node`
// is no Subgraph node or its attributes do not verify.
struct PlanRegion {
  std::string runtime;
  std::vector<std::string> nodes;
  std::vector<float> node_macs;
  std::vector<float> node_bytes;
  uint64_t model_bytes = 0;
};
std::optional<PlanRegion> ReadPlanRegion(const schema::Node& node);

}  // namespace baton::planner
