#pragma once
// Shape and dtype inference for every supported op, with ONNX semantics.
// Fills Tensor::shape/shape_known/dtype for every node output, in topological
// order, and checks inputs: rank, matching dims, broadcastability, dtypes,
// attribute ranges. An error names the node and the offending tensor or
// attribute. Output tensors that already carry a shape (e.g. from ONNX) must
// agree with the inferred one.

#include "baton/planner/graph.h"

namespace baton::planner {

Check InferShapes(Graph* graph);

// Imported graphs (ONNX, graph JSON) only: ops whose planner form takes more
// inputs than ONNX's (the simplifier's fused Conv has a fourth input, `sum`)
// must arrive with ONNX's count. An error names the node.
Check CheckImportedArity(const Graph& graph);

}  // namespace baton::planner
