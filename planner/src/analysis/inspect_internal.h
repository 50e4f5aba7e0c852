#pragma once
// Internal to `baton inspect` (inspect.h): names of plan elements, and the
// pipeline structure the text printer shows (inspect_structure.cc): which
// node produces each tensor, the subgraphs, their ports, and where a tensor
// comes from through __copy nodes.

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "baton/plan_view.h"

namespace baton::planner::inspect_detail {

// "0x" and 8 lowercase hex digits: the plan's CRC-32C trailer as `baton
// inspect` prints it (text and --json "checksum").
std::string ChecksumHex(uint32_t checksum);

template <typename V>
uint32_t Count(const V* v) {
  return v ? v->size() : 0;
}

// "-" for an absent optional tensor (t < 0).
inline std::string TensorName(const PlanView& view, int64_t t) {
  if (t < 0) return "-";
  return view.tensor(static_cast<uint32_t>(t))->name()->str();
}
inline std::string NodeName(const PlanView& view, uint32_t n) {
  return view.node(n)->name()->str();
}
inline std::string QueueName(const PlanView& view, uint32_t q) {
  return view.queue(q)->name()->str();
}
inline std::string DomainName(const PlanView& view, uint32_t d) {
  return view.domain(d)->name()->str();
}

// A Custom or Subgraph node's attributes, name -> value (docs/formats.md,
// "baton inspect --json"), verified by CustomAttributes::Load first;
// {"error": message} when the buffer is malformed.
nlohmann::ordered_json CustomAttributesJson(const schema::Node& node);

// Whether `t` is in a graph input or output list (which may be absent).
bool IsGraphTensor(const flatbuffers::Vector<uint32_t>* list, uint32_t t);

// The pipeline's structure: producers, subgraphs and their ports. A subgraph
// is the set of non-copy nodes of one queue with one stage (inspect.h).
struct Structure {
  std::vector<int> producer;     // per tensor, -1 = none
  std::vector<int> subgraph_of;  // per node, -1 for copies
  struct Subgraph {
    uint32_t queue = 0;
    uint32_t stage = 0;
    uint32_t index = 0;  // k in <queue>.sub<k>
    std::vector<uint32_t> nodes;
    std::vector<uint32_t> inputs;   // tensors, in order of first use
    std::vector<uint32_t> outputs;  // tensors, in order of production
    std::string name;
  };
  std::vector<Subgraph> subgraphs;  // queue-major, then stage
};

Structure Analyze(const PlanView& view);

// Where a tensor comes from, following it back through __copy nodes.
struct Source {
  std::string endpoint;           // "input x", "npu0.sub0.out1", "constant w", ...
  std::vector<std::string> hops;  // "[q copy]" per copy, in data-flow order
  uint32_t tensor = 0;            // the tensor at the source
  bool from_graph_input = false;
};

Source TraceSource(const PlanView& view, const Structure& s, uint32_t t);

// The plan's summary (analysis/summary.h) for `baton inspect`
// (inspect_summary.cc): as the text section "Prediction", and as the JSON
// text of the "summary" value (null when the plan has none, {"error": ...}
// when it is corrupt).
// `data` and `size` are the plan file's bytes (the summary is a section of
// the file outside the FlatBuffer, analysis/summary.h).
std::string SummaryText(const PlanView& view, const void* data, size_t size);
std::string SummaryJsonText(const PlanView& view, const void* data, size_t size);

}  // namespace baton::planner::inspect_detail
