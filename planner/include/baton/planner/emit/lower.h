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

#include "baton/planner/ops/custom_params.h"
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
// op, LowerCustomParams(builder, node.op, node.attrs) (ops/custom_params.h); type NONE (nothing
// built) for ops without params and for unknown ops.
Result<LoweredParams> LowerParams(flatbuffers::FlatBufferBuilder* builder, const Graph& graph,
                                  const Node& node);

}  // namespace baton::planner
