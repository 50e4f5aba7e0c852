#pragma once
// ONNX importer. Reads a model (opset 11-17 of the default domain) into the
// graph IR, then validates, infers shapes and simplifies it, so the returned
// graph is ready for device assignment.
//
// - Initializers become constant tensors (float32, int64, int32, uint8, int8;
//   raw_data or typed fields); a graph input that is also an initializer is a
//   constant. Weights must be embedded: external data is an error.
// - Graph inputs need static shapes; a symbolic or unknown dim is an error
//   naming the input and the dim.
// - Shapes known to ONNX's shape inference (value_info, graph outputs) are
//   kept as declared shapes and cross-checked by InferShapes.
// - Constant nodes become constant tensors. Unnamed nodes get deterministic
//   unique names "<op>_<index>" (index in the ONNX node list).
// - Opset-dependent semantics are normalized to the IR's (opset 13+): e.g.
//   Softmax before opset 13 gets an explicit axis and must reduce a single
//   axis.
// Every error is prefixed with the path and names the node, tensor or field
// at fault. Host only.

#include <string>

#include "baton/planner/graph.h"

namespace baton::planner {

Result<Graph> ImportOnnx(const std::string& path);

}  // namespace baton::planner
