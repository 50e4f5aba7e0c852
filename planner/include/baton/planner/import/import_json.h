#pragma once
// Graph JSON importer (DESIGN §7). Initializers are inline ("data") or come
// from a .npy file ("file", relative to the JSON file). Runs Validate and
// InferShapes, so the result is ready for planning. Errors name the file and
// the node, tensor or field.

#include <string>

#include "baton/planner/graph.h"

namespace baton::planner {

Result<Graph> ImportJson(const std::string& path);
// `base_dir` resolves relative .npy paths; `what` names the source in errors.
Result<Graph> ParseGraphJson(const std::string& text, const std::string& base_dir,
                             const std::string& what);

// Imports by extension: .onnx -> ImportOnnx, otherwise graph JSON.
Result<Graph> ImportModel(const std::string& path);

}  // namespace baton::planner
