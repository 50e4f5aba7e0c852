#pragma once
// Lowering from ONNX attributes to the plan's normalized operator parameters
// (schema Params): explicit pads, non-negative axes, per-dimension slices,
// constant operands folded into parameters. Kernels then need no ONNX
// knowledge. Each op's lowering is its OpDef::lower (planner/src/ops/);
// this is the emitter's entry point. Errors name the node.

#include <flatbuffers/flatbuffers.h>

#include <map>
#include <string>
#include <vector>

#include "baton/planner/ops/op_def.h"
#include "baton/planner/program.h"

namespace baton::planner {

// The plan op of IR op `op`: its OpDef's kernel op, or Op::Custom for a
// custom op (IsCustomOp).
Result<schema::Op> OpFromName(const std::string& op);

// The inputs the runtime kernel receives (constant operands that became
// parameters are dropped; -1 keeps an absent optional input's place).
std::vector<int> RuntimeInputs(const Graph& graph, const Node& node);

// The node's params built into `builder` by its OpDef::lower; for a custom
// op, LowerCustomParams(builder, node.op, node.attrs); type NONE (nothing
// built) for ops without params and for unknown ops.
Result<LoweredParams> LowerParams(flatbuffers::FlatBufferBuilder* builder, const Graph& graph,
                                  const Node& node);

// CustomParams{name, attributes} of a Custom or Subgraph node: `attrs` as a
// nested CustomAttributes FlatBuffer (sorted by name; omitted when empty),
// built on its own so the bytes depend only on `name` and `attrs`
// (deterministic). Every Attr kind maps to its AttributeKind; kString is
// String, kStrings Strings, kTensor Tensor (dtype, shape, data 8-aligned).
// Errors: an empty name, a tensor whose data does not match its shape.
Result<LoweredParams> LowerCustomParams(flatbuffers::FlatBufferBuilder* builder,
                                        const std::string& name,
                                        const std::map<std::string, Attr>& attrs);

}  // namespace baton::planner
