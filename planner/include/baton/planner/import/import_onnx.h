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
// - Shapes known to ONNX's shape inference (value_info, graph outputs) must
//   agree with InferShapes. Exception: ONNX before 1.16 sized ceil_mode pools
//   without the rule that the last window starts inside the input or its
//   begin padding (PyTorch's and onnxruntime's semantics, and Baton's); when
//   that rule changes a pool's output, ONNX's shapes are not checked.
// - Constant nodes become constant tensors. Unnamed nodes get deterministic
//   unique names "<op>_<index>" (index in the ONNX node list).
// - Opset-dependent semantics are normalized to the IR's (opset 13+): e.g.
//   Softmax before opset 13 gets an explicit axis and must reduce a single
//   axis.
// - A node whose "domain::op_type" (the default domain written "ai.onnx")
//   `options` declares becomes a custom op of that name (IsCustomOp), known
//   op or not. Its attributes are kept (ints, floats, strings, tensors and
//   their lists); its outputs take the dtype and static shape the model
//   declares (value_info or graph outputs), and one without is an error
//   naming the tensor. An undeclared unknown op is an error listing every
//   unsupported op and suggesting --custom-op.
// Every error is prefixed with the path and names the node, tensor or field
// at fault. Host only.

#include <string>

#include "baton/planner/graph.h"

namespace baton::planner {

Result<Graph> ImportOnnx(const std::string& path, const ImportOptions& options = {});

}  // namespace baton::planner
