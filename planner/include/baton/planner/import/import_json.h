#pragma once
// Graph JSON importer (DESIGN §7). Initializers are inline ("data") or come
// from a .npy file ("file", relative to the JSON file). Runs Validate and
// InferShapes, so the result is ready for planning. Errors name the file and
// the node, tensor or field.

#include <string>

#include "baton/planner/graph.h"

namespace baton::planner {

// A node whose op is "domain::name" (IsCustomOp) must be declared in
// `options` and give its outputs' types in "output_types" (docs/formats.md).
Result<Graph> ImportJson(const std::string& path, const ImportOptions& options = {});
// `base_dir` resolves relative .npy paths; `what` names the source in errors.
Result<Graph> ParseGraphJson(const std::string& text, const std::string& base_dir,
                             const std::string& what, const ImportOptions& options = {});

// Imports by extension: .onnx -> ImportOnnx, otherwise graph JSON.
Result<Graph> ImportModel(const std::string& path, const ImportOptions& options = {});

}  // namespace baton::planner
