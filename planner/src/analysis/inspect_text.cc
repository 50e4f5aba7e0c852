// InspectText (inspect.h): the plan described for firmware engineers, one
// section per function below.
#include <algorithm>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "analysis/inspect_internal.h"
#include "baton/planner/analysis/inspect.h"
#include "baton/planner/ops/region.h"
#include "baton/planner/target.h"

namespace baton::planner {
namespace {

using inspect_detail::ChecksumHex;
using inspect_detail::Count;
using inspect_detail::DomainName;
using inspect_detail::IsGraphTensor;
using inspect_detail::NodeName;
using inspect_detail::QueueName;
using inspect_detail::Source;
using inspect_detail::Structure;
using inspect_detail::TensorName;
using inspect_detail::TraceSource;

using Rows = std::vector<std::vector<std::string>>;

std::string Join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += sep;
    out += parts[i];
  }
  return out;
}

// Left-aligned columns separated by two spaces; the last column is not padded.
std::string Table(const Rows& rows, const std::string& indent) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line = indent;
    for (size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line.append(width[c] - row[c].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string TableOrNone(const Rows& rows, const std::string& indent) {
  return rows.empty() ? indent + "(none)\n" : Table(rows, indent);
}

// --- Pipeline configuration ------------------------------------------------

Rows SubgraphRows(const PlanView& view, const Structure& s) {
  Rows rows;
  for (const auto& g : s.subgraphs) {
    std::vector<std::string> names;
    for (uint32_t n : g.nodes) names.push_back(NodeName(view, n));
    rows.push_back({g.name, "stage " + std::to_string(g.stage),
                    std::to_string(g.nodes.size()) + (g.nodes.size() == 1 ? " node" : " nodes"),
                    Join(names, ", ")});
  }
  return rows;
}

// "from -> [q copy] -> ... -> to" and the tensors at both ends.
std::vector<std::string> PathRow(const PlanView& view, const Source& from, uint32_t t,
                                 const std::string& to) {
  std::string path = from.endpoint;
  for (const std::string& h : from.hops) path += " -> " + h;
  path += " -> " + to;
  if (from.tensor == t) return {path, "(" + TensorName(view, t) + ")"};
  return {path, "(" + TensorName(view, from.tensor) + " => " + TensorName(view, t) + ")"};
}

// Every subgraph input, as a row of `inputs` when it comes from a graph input
// (marked in `input_used`) and of `connections` otherwise.
void AddSubgraphInputs(const PlanView& view, const Structure& s, Rows* inputs, Rows* connections,
                       std::vector<bool>* input_used) {
  for (const auto& g : s.subgraphs) {
    for (size_t j = 0; j < g.inputs.size(); ++j) {
      const Source from = TraceSource(view, s, g.inputs[j]);
      std::vector<std::string> row =
          PathRow(view, from, g.inputs[j], g.name + ".in" + std::to_string(j));
      if (from.from_graph_input) {
        (*input_used)[from.tensor] = true;
        inputs->push_back(std::move(row));
      } else {
        connections->push_back(std::move(row));
      }
    }
  }
}

// Graph inputs no subgraph reads: passed straight out, or unused.
void AddOtherInputs(const PlanView& view, const std::vector<bool>& input_used, Rows* inputs) {
  for (uint32_t i = 0; i < view.num_inputs(); ++i) {
    const uint32_t t = view.plan()->inputs()->Get(i);
    if (input_used[t]) continue;
    const bool is_output = IsGraphTensor(view.plan()->outputs(), t);
    inputs->push_back({"input " + TensorName(view, t) + (is_output ? "" : " -> (unused)"), ""});
  }
}

Rows OutputRows(const PlanView& view, const Structure& s) {
  Rows rows;
  for (uint32_t o = 0; o < view.num_outputs(); ++o) {
    const uint32_t t = view.plan()->outputs()->Get(o);
    rows.push_back(PathRow(view, TraceSource(view, s, t), t, "output " + TensorName(view, t)));
  }
  return rows;
}

std::string PipelineSection(const PlanView& view, const Structure& s) {
  std::ostringstream out;
  out << "Pipeline configuration\n";
  out << "  subgraphs (non-copy nodes of one queue and one stage):\n";
  out << TableOrNone(SubgraphRows(view, s), "    ");
  Rows inputs, connections;
  std::vector<bool> input_used(view.num_tensors(), false);
  AddSubgraphInputs(view, s, &inputs, &connections, &input_used);
  AddOtherInputs(view, input_used, &inputs);
  out << "  inputs:\n" << TableOrNone(inputs, "    ");
  out << "  connections:\n" << TableOrNone(connections, "    ");
  out << "  outputs:\n" << TableOrNone(OutputRows(view, s), "    ");
  return out.str();
}

// --- Stages -----------------------------------------------------------------

std::string StagesSection(const PlanView& view, const Structure& s) {
  uint32_t max_stage = 0;
  for (uint32_t n = 0; n < view.num_nodes(); ++n)
    max_stage = std::max(max_stage, view.node(n)->stage());
  std::ostringstream out;
  out << "Stages\n";
  Rows rows;
  for (uint32_t st = 0; st <= max_stage; ++st) {
    std::vector<std::string> parts;
    for (const auto& g : s.subgraphs) {
      if (g.stage == st) parts.push_back(g.name);
    }
    for (uint32_t q = 0; q < view.num_queues(); ++q) {
      std::vector<std::string> copies;
      const auto* program = view.queue(q)->nodes();
      if (program == nullptr) continue;
      for (uint32_t n : *program) {
        if (view.node(n)->op() == schema::Op::Copy && view.node(n)->stage() == st) {
          copies.push_back(NodeName(view, n));
        }
      }
      if (!copies.empty())
        parts.push_back(QueueName(view, q) + " copies (" + Join(copies, ", ") + ")");
    }
    rows.push_back(
        {"stage " + std::to_string(st) + ":", parts.empty() ? "(empty)" : Join(parts, ", ")});
  }
  out << Table(rows, "  ");
  return out.str();
}

// --- Queues -----------------------------------------------------------------

// Position p of a queue program: node n, what it reads, writes and waits for.
std::vector<std::string> ProgramRow(const PlanView& view, uint32_t p, uint32_t n) {
  const schema::Node* node = view.node(n);
  std::vector<std::string> reads, writes, waits;
  if (node->inputs() != nullptr) {
    for (int32_t t : *node->inputs()) reads.push_back(TensorName(view, t));
  }
  if (node->outputs() != nullptr) {
    for (uint32_t t : *node->outputs()) writes.push_back(TensorName(view, t));
  }
  if (node->workspace() != nullptr) {
    for (uint32_t t : *node->workspace()) writes.push_back(TensorName(view, t) + " (ws)");
  }
  if (node->waits() != nullptr) {
    for (const schema::Wait* w : *node->waits()) {
      std::string text =
          NodeName(view, w->node()) + "@" + QueueName(view, view.node(w->node())->queue());
      if (w->lag() != 0) text += " lag " + std::to_string(w->lag());
      waits.push_back(text);
    }
  }
  return {std::to_string(p),
          node->name()->str(),
          PlanNodeOpName(*node),
          std::to_string(node->stage()),
          Join(reads, ", "),
          Join(writes, ", "),
          waits.empty() ? "-" : Join(waits, ", ")};
}

std::string QueueListing(const PlanView& view, uint32_t q) {
  const schema::Queue* queue = view.queue(q);
  std::vector<std::string> domains;
  if (queue->domains() != nullptr) {
    for (uint32_t d : *queue->domains()) domains.push_back(DomainName(view, d));
  }
  const uint32_t count = Count(queue->nodes());
  std::string out = "  " + QueueName(view, q) + " (" + DeviceKindName(queue->kind()) +
                    "; domains " + (domains.empty() ? "none" : Join(domains, ", ")) +
                    (queue->threads() > 1 ? "; " + std::to_string(queue->threads()) + " threads"
                                          : std::string()) +
                    "): " + std::to_string(count) + (count == 1 ? " node\n" : " nodes\n");
  if (count == 0) return out;
  Rows rows;
  rows.push_back({"pos", "node", "op", "stage", "reads", "writes", "waits"});
  for (uint32_t p = 0; p < count; ++p) rows.push_back(ProgramRow(view, p, queue->nodes()->Get(p)));
  return out + Table(rows, "    ");
}

// Foreign-runtime regions (`__subgraph` nodes); empty when there are none.
std::string RegionsSection(const PlanView& view) {
  std::string out;
  for (uint32_t n = 0; n < view.num_nodes(); ++n) {
    std::optional<PlanRegion> region = ReadPlanRegion(*view.node(n));
    if (!region) continue;
    const size_t count = region->nodes.size();
    out += "  " + NodeName(view, n) + " on " + QueueName(view, view.node(n)->queue()) +
           ": runtime " + region->runtime + ", " + std::to_string(count) +
           (count == 1 ? " node (" : " nodes (") + Join(region->nodes, ", ") + "), model " +
           std::to_string(region->model_bytes) + " bytes\n";
  }
  if (out.empty()) return out;
  return "Foreign-runtime regions (__subgraph nodes run by a runtime plugin)\n" + out;
}

std::string QueuesSection(const PlanView& view) {
  std::string out = "Queues (program order; a queue runs iteration k = inference + stage)\n";
  for (uint32_t q = 0; q < view.num_queues(); ++q) out += QueueListing(view, q);
  return out;
}

// --- Arenas -----------------------------------------------------------------

// Per tensor: graph input, graph output, workspace of a node (comma-separated).
std::vector<std::string> TensorRoles(const PlanView& view) {
  std::vector<std::string> role(view.num_tensors());
  auto add_role = [&role](uint32_t t, const std::string& r) {
    role[t] += role[t].empty() ? r : ", " + r;
  };
  for (uint32_t i = 0; i < view.num_inputs(); ++i)
    add_role(view.plan()->inputs()->Get(i), "graph input");
  for (uint32_t i = 0; i < view.num_outputs(); ++i) {
    add_role(view.plan()->outputs()->Get(i), "graph output");
  }
  for (uint32_t n = 0; n < view.num_nodes(); ++n) {
    const auto* ws = view.node(n)->workspace();
    if (ws == nullptr) continue;
    for (uint32_t t : *ws) add_role(t, "workspace of " + NodeName(view, n));
  }
  return role;
}

// Domain d's arena tensors by offset.
std::string DomainListing(const PlanView& view, uint32_t d, const std::vector<std::string>& role) {
  std::vector<uint32_t> placed;
  for (uint32_t t = 0; t < view.num_tensors(); ++t) {
    const schema::Tensor* tensor = view.tensor(t);
    if (tensor->storage() == schema::Storage::Arena && tensor->domain() == d) placed.push_back(t);
  }
  std::stable_sort(placed.begin(), placed.end(), [&view](uint32_t a, uint32_t b) {
    return view.tensor(a)->offset() < view.tensor(b)->offset();
  });
  std::ostringstream out;
  out << "  " << DomainName(view, d) << ": " << view.domain(d)->bytes() << " bytes, alignment "
      << view.domain(d)->alignment() << ", " << placed.size()
      << (placed.size() == 1 ? " tensor\n" : " tensors\n");
  if (placed.empty()) return out.str();
  Rows rows;
  rows.push_back({"offset", "end", "bytes", "slots", "stride", "tensor", "role"});
  for (uint32_t t : placed) {
    const schema::Tensor* tensor = view.tensor(t);
    const uint64_t end =
        tensor->offset() + uint64_t{tensor->slots() - 1} * tensor->slot_stride() + tensor->bytes();
    rows.push_back({std::to_string(tensor->offset()), std::to_string(end),
                    std::to_string(tensor->bytes()), std::to_string(tensor->slots()),
                    tensor->slots() > 1 ? std::to_string(tensor->slot_stride()) : "-",
                    tensor->name()->str(), role[t]});
  }
  out << Table(rows, "    ");
  return out.str();
}

std::string ConstantsListing(const PlanView& view) {
  Rows rows;
  rows.push_back({"offset", "bytes", "tensor"});
  for (uint32_t t = 0; t < view.num_tensors(); ++t) {
    const schema::Tensor* tensor = view.tensor(t);
    if (tensor->storage() != schema::Storage::Constant) continue;
    rows.push_back(
        {std::to_string(tensor->offset()), std::to_string(tensor->bytes()), tensor->name()->str()});
  }
  const uint32_t section = Count(view.plan()->constants());
  std::ostringstream out;
  out << "  constants (read in place from the plan): " << section << " bytes, " << rows.size() - 1
      << (rows.size() == 2 ? " tensor\n" : " tensors\n");
  if (rows.size() > 1) out << Table(rows, "    ");
  return out.str();
}

std::string ArenasSection(const PlanView& view) {
  const std::vector<std::string> role = TensorRoles(view);
  std::string out = "Arenas (inference i uses slot i mod slots at offset + slot * stride)\n";
  for (uint32_t d = 0; d < view.num_domains(); ++d) out += DomainListing(view, d, role);
  return out + ConstantsListing(view);
}

// The attributes of every Custom and Subgraph node; empty without any.
std::string CustomOpsSection(const PlanView& view) {
  std::string out;
  for (uint32_t n = 0; n < view.num_nodes(); ++n) {
    const schema::Node* node = view.node(n);
    if (node->params_as_CustomParams() == nullptr) continue;
    if (out.empty()) out = "Custom ops (node, op, attributes)\n";
    out += "  " + node->name()->str() + "  " + PlanNodeOpName(*node) + "  " +
           inspect_detail::CustomAttributesJson(*node).dump() + "\n";
  }
  return out.empty() ? out : out + "\n";
}

}  // namespace

std::string InspectText(const LoadedPlan& loaded) {
  const PlanView& view = loaded.view();
  const Structure s = inspect_detail::Analyze(view);
  std::ostringstream out;
  const std::string name = view.plan()->name() ? view.plan()->name()->str() : "";
  out << "plan" << (name.empty() ? "" : " \"" + name + "\"") << " (format version "
      << view.plan()->version() << "): " << view.in_flight()
      << (view.in_flight() == 1 ? " inference" : " inferences") << " in flight, "
      << view.num_queues() << " queues, " << view.num_domains() << " domains, "
      << view.num_tensors() << " tensors, " << view.num_nodes() << " nodes\n";
  out << "checksum (CRC-32C trailer): " << ChecksumHex(view.checksum()) << "\n\n";
  out << inspect_detail::SummaryText(view, loaded.data(), loaded.size()) << "\n";
  out << PipelineSection(view, s) << "\n";
  out << StagesSection(view, s) << "\n";
  const std::string regions = RegionsSection(view);
  if (!regions.empty()) out << regions << "\n";
  out << QueuesSection(view) << "\n";
  out << CustomOpsSection(view);
  out << ArenasSection(view);
  return out.str();
}

}  // namespace baton::planner
