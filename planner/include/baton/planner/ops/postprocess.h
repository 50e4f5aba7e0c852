#pragma once
// The planner's view of Baton's ready-made post-processing custom ops
// ("baton::DecodeBoxes", "baton::NonMaxSuppression"; runtime
// baton/postprocess.h, docs/operators.md): their output dtypes and shapes from
// the input specs and the node's attributes. The rule itself is the runtime's
// (InferDecodeBoxes / InferNonMaxSuppression, which the kernels' prepare also
// applies), so planner and kernels agree by construction; this layer reads
// the planner's attribute map with the same strictness as the kernels (the
// kinds of docs/operators.md, no unknown names).
//
// The custom-op import path calls it for a node whose op is one of these
// names, in place of an OpDef's infer. Host only; may allocate.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "baton/planner/graph.h"
#include "baton/planner/result.h"

namespace baton::planner {

struct TensorSpec {
  DType dtype = DType::Float32;
  std::vector<int64_t> shape;
};

// True for "baton::DecodeBoxes" and "baton::NonMaxSuppression".
bool IsPostprocessOp(const std::string& op);

// The output specs of post-processing op `op` (one for DecodeBoxes; boxes,
// scores, classes, count for NonMaxSuppression). Errors start "node
// '<node_name>': <op>: " and say which input or attribute is wrong.
Result<std::vector<TensorSpec>> InferPostprocessOutputs(const std::string& node_name,
                                                        const std::string& op,
                                                        const std::vector<TensorSpec>& inputs,
                                                        const std::map<std::string, Attr>& attrs);

}  // namespace baton::planner
