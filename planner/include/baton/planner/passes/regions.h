#pragma once
// Foreign-runtime regions (issue 16, `__subgraph`; docs/formats.md).
//
// A target device with "runtime": "armnn" is executed by a runtime plugin,
// not by Baton's kernels. After device assignment and before copies,
// FormRegions merges the nodes placed on such a device into `__subgraph`
// nodes, one per region:
//
//   A(cpu) ─► B(rt) ─► C(rt) ─► D(cpu)        A ─► [__subgraph_0: B, C] ─► D
//
// A region holds nodes of one runtime device and is convex: no path leaves
// it and re-enters it, so the graph of regions and other nodes stays acyclic
// (A(rt) → B(cpu) → C(rt) with A → C gives two regions, {A} and {C}).
// Regions grow along data edges, consumers in topological order, each merge
// kept only when no other path joins the two sides; a region is therefore
// connected. The result is deterministic.
//
// Each region becomes a self-contained ONNX ModelProto (the imported opset;
// 13 for graph JSON): its graph inputs are the tensors it reads that are
// produced outside it (graph inputs and passthrough values alike), its
// graph outputs every value it produces that a node outside reads or that
// is a graph output, both in first-use order; the constants it reads are
// initializers. What the simplifier fused is expanded back: a fused clamp
// becomes Relu or Clip after the node, Swish Sigmoid + Mul, HardSwish
// HardSwish (opset >= 14) or HardSigmoid + Mul, Mish Softplus + Tanh + Mul.
// The plan's Subgraph node carries CustomParams{name = the runtime,
// attributes "model" (uint8 tensor: the ModelProto bytes), "nodes" (the
// region's node names), "node_macs" and "node_bytes" (each node's work, for
// the cost model)}, inputs and outputs in the model's order.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "baton/planner/ops/op_def.h"
#include "baton/planner/ops/region.h"
#include "baton/planner/program.h"

namespace baton::planner {

// Whether a region can carry planner op `op` (an ONNX op whose planner form
// is ONNX's, or a fused op expanded back); RegionOpSerializableWhy says why
// not.
bool RegionOpSerializable(const std::string& op);
std::string RegionOpSerializableWhy(const std::string& op);

// Merges the nodes of `p` placed on runtime devices into `__subgraph` nodes
// (see above). `node_macs` and `node_bytes` are each node's work as the cost
// model counts it (internal::BaseWork). Needs AssignDevices; run before
// InsertCopies. Keeps node_device and node_pinned (a region is pinned when
// one of its nodes is) in step, and drops tensors only regions read.
// Errors name the node that cannot be serialized.
Check FormRegions(const std::vector<double>& node_macs, const std::vector<double>& node_bytes,
                  Program* p);

// The name of the `__subgraph` node of `g` that merged node `name`, or ""
// (for --split names, which may name a node inside a region).
std::string RegionHolding(const Graph& g, const std::string& name);

// The ONNX ModelProto bytes of the region of `g` made of `nodes` (in
// topological order), whose graph inputs and outputs are `inputs` and
// `outputs`, named `name`.
Result<std::string> SerializeRegion(const Graph& g, const std::vector<int>& nodes,
                                    const std::vector<int>& inputs, const std::vector<int>& outputs,
                                    const std::string& name);

}  // namespace baton::planner
