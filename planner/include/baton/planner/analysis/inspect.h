#pragma once
// Reading a plan back: `baton inspect` (DESIGN §7). Host only.
//
// LoadedPlan owns a copy of the plan's bytes at a 64-byte aligned address
// (PlanView requires 16; constants are 64-byte aligned inside the plan) and the
// PlanView over them, verified with PlanView::Load. The renderers below only
// read a loaded view and return text; they never fail.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "baton/plan_view.h"
#include "baton/planner/result.h"

namespace baton::planner {

class LoadedPlan {
 public:
  // Copies `size` bytes and verifies them. Errors start with `what` (a path
  // or a description) followed by the loader's message.
  static Result<LoadedPlan> FromBytes(const void* data, size_t size, const std::string& what);
  // Reads and verifies a plan file; errors name the path.
  static Result<LoadedPlan> FromFile(const std::string& path);

  LoadedPlan(LoadedPlan&&) = default;  // the heap block moves, the view stays valid
  LoadedPlan& operator=(LoadedPlan&&) = default;
  LoadedPlan(const LoadedPlan&) = delete;
  LoadedPlan& operator=(const LoadedPlan&) = delete;

  const PlanView& view() const { return view_; }
  const schema::Plan& plan() const { return *view_.plan(); }
  const void* data() const { return storage_.data(); }
  size_t size() const { return size_; }

 private:
  struct alignas(64) Block {
    uint8_t bytes[64];
  };
  LoadedPlan() = default;
  std::vector<Block> storage_;
  size_t size_ = 0;
  PlanView view_;
};

// The printable op name of a node: "__copy" for schema::Op::Copy, otherwise
// the ONNX name (schema::EnumNameOp).
const char* PlanOpName(schema::Op op);
// The printable op name of a plan node: a Custom node's CustomParams.name
// ("com.example::MyOp"), else PlanOpName ("__subgraph" for a Subgraph node,
// whose runtime inspect reports as the node's region).
std::string PlanNodeOpName(const schema::Node& node);
// "float32", "int32", "int64", "uint8", "int8".
const char* PlanDTypeName(schema::DType dtype);

// DESIGN §7 `baton inspect --json`, keys in the documented order, two-space
// indentation, trailing newline. An absent optional input (-1 in the plan) is
// printed as null so that input positions keep their meaning
// (docs/formats.md, "baton inspect --json").
std::string InspectJson(const LoadedPlan& plan);

// Human-readable description for firmware engineers: the pipeline
// configuration (graph inputs, outputs and the connections between device
// subgraphs, with __copy nodes shown as the transport), stages, queue
// programs and arenas. A *subgraph* is the set of non-copy nodes of one queue
// with one stage, named `<queue>.sub<k>` with k counting that queue's
// subgraphs in increasing stage order; its inputs `in<j>` and outputs
// `out<j>` are numbered in program order of first use / production. See
// docs/cli.md, "baton inspect".
std::string InspectText(const LoadedPlan& plan);

}  // namespace baton::planner
