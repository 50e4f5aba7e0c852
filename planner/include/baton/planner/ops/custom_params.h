#pragma once
// The plan parameters of ops that carry CustomParams: custom ops (their
// lowering in emit/lower.cc) and `__subgraph` regions (ops/region.h).

#include <flatbuffers/flatbuffers.h>

#include <map>
#include <string>

#include "baton/planner/ops/op_def.h"

namespace baton::planner {

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
