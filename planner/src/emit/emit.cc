#include "baton/planner/emit/emit.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <iomanip>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "baton/plan_view.h"
#include "baton/planner/analysis/summary.h"
#include "baton/planner/emit/lower.h"

namespace baton::planner {
namespace {

constexpr size_t kConstantAlignment = 64;

struct Indexing {
  std::vector<int> tensor;  // graph tensor -> plan tensor (-1: not emitted)
  std::vector<int> tensor_order;
  std::vector<int> node;  // graph node -> plan node
};

Indexing Index(const Program& p) {
  const Graph& g = p.graph;
  Indexing ix;
  std::vector<bool> used(g.tensors.size(), false);
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    for (int t : RuntimeInputs(g, g.nodes[n])) {
      if (t >= 0) used[t] = true;
    }
    for (int t : g.nodes[n].outputs) used[t] = true;
    if (n < p.workspace.size()) {
      for (int t : p.workspace[n]) used[t] = true;
    }
  }
  for (int t : g.inputs) used[t] = true;
  for (int t : g.outputs) used[t] = true;
  ix.tensor.assign(g.tensors.size(), -1);
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    if (!used[t]) continue;
    ix.tensor[t] = static_cast<int>(ix.tensor_order.size());
    ix.tensor_order.push_back(static_cast<int>(t));
  }
  ix.node.assign(g.nodes.size(), -1);
  for (size_t k = 0; k < p.order.size(); ++k) ix.node[p.order[k]] = static_cast<int>(k);
  return ix;
}

// The constants' bytes, each aligned for the kernels that read them in place;
// sets *out_offset[t] for each constant tensor t.
std::vector<uint8_t> PackConstants(const Graph& g, const Indexing& ix,
                                   std::vector<uint64_t>* out_offset) {
  std::vector<uint8_t> constants;
  out_offset->assign(g.tensors.size(), 0);
  size_t elided = 0;  // the largest constant without data (emit.h)
  for (int t : ix.tensor_order) {
    const Tensor& tensor = g.tensors[t];
    if (!tensor.is_constant) continue;
    if (tensor.data.empty() && tensor.bytes() > 0) {
      elided = std::max(elided, tensor.bytes());
      continue;
    }
    constants.resize((constants.size() + kConstantAlignment - 1) / kConstantAlignment *
                     kConstantAlignment);
    (*out_offset)[t] = constants.size();
    constants.insert(constants.end(), tensor.data.begin(), tensor.data.end());
  }
  if (constants.size() < elided) constants.resize(elided, 0);
  return constants;
}

using Builder = flatbuffers::FlatBufferBuilder;

std::vector<flatbuffers::Offset<schema::Domain>> EmitDomains(Builder& b, const Program& p) {
  std::vector<flatbuffers::Offset<schema::Domain>> domains;
  for (size_t d = 0; d < p.target.domains.size(); ++d) {
    const TargetDomain& dom = p.target.domains[d];
    uint64_t bytes = d < p.domain_report.size() ? p.domain_report[d].arena_bytes : 0;
    domains.push_back(schema::CreateDomainDirect(b, dom.name.c_str(), bytes, dom.alignment));
  }
  return domains;
}

std::vector<flatbuffers::Offset<schema::Queue>> EmitQueues(Builder& b, const Program& p,
                                                           const Indexing& ix) {
  std::vector<flatbuffers::Offset<schema::Queue>> queues;
  for (size_t q = 0; q < p.queues.size(); ++q) {
    std::vector<uint32_t> qd(p.queues[q].domains.begin(), p.queues[q].domains.end());
    std::vector<uint32_t> program;
    for (int n : p.programs[q]) program.push_back(static_cast<uint32_t>(ix.node[n]));
    queues.push_back(schema::CreateQueueDirect(b, p.queues[q].name.c_str(), p.queues[q].kind, &qd,
                                               &program, p.QueueThreads(static_cast<int>(q))));
  }
  return queues;
}

std::vector<flatbuffers::Offset<schema::Tensor>> EmitTensors(
    Builder& b, const Program& p, const Indexing& ix,
    const std::vector<uint64_t>& constant_offset) {
  const Graph& g = p.graph;
  std::vector<flatbuffers::Offset<schema::Tensor>> tensors;
  for (int t : ix.tensor_order) {
    const Tensor& tensor = g.tensors[t];
    std::vector<int64_t> shape_values = tensor.shape;
    // A scalar has no shape vector: FlatBuffers does not 8-align the data of
    // an empty [long] vector, which the loader requires of every shape.
    const std::vector<int64_t>* shape = shape_values.empty() ? nullptr : &shape_values;
    if (tensor.is_constant) {
      tensors.push_back(schema::CreateTensorDirect(b, tensor.name.c_str(), tensor.dtype, shape,
                                                   tensor.bytes(), schema::Storage::Constant, 0,
                                                   constant_offset[t], 1, 0));
      continue;
    }
    TensorPlacement place;
    if (static_cast<size_t>(t) < p.placement.size()) place = p.placement[t];
    uint32_t domain = p.tensor_domain[t] >= 0 ? static_cast<uint32_t>(p.tensor_domain[t]) : 0;
    tensors.push_back(schema::CreateTensorDirect(b, tensor.name.c_str(), tensor.dtype, shape,
                                                 tensor.bytes(), schema::Storage::Arena, domain,
                                                 place.offset, place.slots, place.slot_stride));
  }
  return tensors;
}

// The node's waits in plan indices, sorted so that the plan does not depend
// on the order the passes added them in.
std::vector<schema::Wait> PlanWaits(const Program& p, const Indexing& ix, int n) {
  std::vector<schema::Wait> waits;
  for (const WaitEdge& w : p.waits[n]) {
    waits.emplace_back(static_cast<uint32_t>(ix.node[w.node]), static_cast<uint32_t>(w.lag));
  }
  std::sort(waits.begin(), waits.end(), [](const schema::Wait& a, const schema::Wait& c) {
    return a.node() != c.node() ? a.node() < c.node() : a.lag() < c.lag();
  });
  return waits;
}

Result<flatbuffers::Offset<schema::Node>> EmitNode(Builder& b, const Program& p, const Indexing& ix,
                                                   int n) {
  const Graph& g = p.graph;
  const Node& node = g.nodes[n];
  BATON_ASSIGN_OR_RETURN(schema::Op op, OpFromName(node.op));
  BATON_ASSIGN_OR_RETURN(LoweredParams params, LowerParams(&b, g, node));
  std::vector<int32_t> inputs;
  for (int t : RuntimeInputs(g, node)) inputs.push_back(t < 0 ? -1 : ix.tensor[t]);
  std::vector<uint32_t> outputs;
  for (int t : node.outputs) outputs.push_back(static_cast<uint32_t>(ix.tensor[t]));
  std::vector<uint32_t> workspace;
  if (static_cast<size_t>(n) < p.workspace.size()) {
    for (int t : p.workspace[n]) workspace.push_back(static_cast<uint32_t>(ix.tensor[t]));
  }
  std::vector<schema::Wait> waits = PlanWaits(p, ix, n);
  const int q = p.node_queue[n];
  uint32_t position = 0;
  for (size_t k = 0; k < p.programs[q].size(); ++k) {
    if (p.programs[q][k] == n) position = static_cast<uint32_t>(k);
  }
  return schema::CreateNodeDirect(b, node.name.c_str(), op, static_cast<uint32_t>(q), position,
                                  static_cast<uint32_t>(p.node_stage[n]), &inputs, &outputs,
                                  &workspace, &waits, params.type, params.offset);
}

// The PlanSummary buffer (schema/plan_summary.fbs) for the plan file's
// summary section, or empty when the program has no summary yet (candidates
// during planning).
std::vector<uint8_t> EmitSummary(const Program& p, const Indexing& ix) {
  const PlanSummary& s = p.summary;
  if (!s.present) return {};
  const AutoReport& a = p.auto_report;
  Builder b(1024);
  std::vector<flatbuffers::Offset<schema::QueueLoad>> queues;
  for (size_t q = 0; q < s.queue_busy_s.size(); ++q) {
    queues.push_back(schema::CreateQueueLoad(b, static_cast<uint32_t>(q), s.queue_busy_s[q],
                                             s.utilization[q]));
  }
  std::vector<uint32_t> pinned;
  for (size_t n = 0; n < p.node_pinned.size() && n < ix.node.size(); ++n) {
    if (p.node_pinned[n] && ix.node[n] >= 0) pinned.push_back(static_cast<uint32_t>(ix.node[n]));
  }
  std::sort(pinned.begin(), pinned.end());
  std::map<std::string, int> by_name;
  for (size_t n = 0; n < p.graph.nodes.size(); ++n) by_name[p.graph.nodes[n].name] = ix.node[n];
  std::vector<flatbuffers::Offset<schema::FallbackNode>> fallbacks;
  for (const Fallback& f : p.fallbacks) {
    auto it = by_name.find(f.node);
    if (it == by_name.end() || it->second < 0) continue;
    const schema::FallbackCause cause = f.cause == "dtype"      ? schema::FallbackCause::Dtype
                                        : f.cause == "capacity" ? schema::FallbackCause::Capacity
                                                                : schema::FallbackCause::Op;
    fallbacks.push_back(schema::CreateFallbackNodeDirect(
        b, static_cast<uint32_t>(it->second), f.requested.c_str(), cause, f.reason.c_str()));
  }
  std::vector<schema::NodeCostSource> node_cost(p.order.size(), schema::NodeCostSource::Target);
  for (size_t k = 0; k < p.order.size(); ++k) {
    const int n = p.order[k];
    if (static_cast<size_t>(n) >= s.node_cost_source.size()) continue;
    const std::string& src = s.node_cost_source[n];
    if (src == "profile") node_cost[k] = schema::NodeCostSource::Profile;
    if (src == "link") node_cost[k] = schema::NodeCostSource::Link;
  }
  const bool best_known = a.ran && !a.best_single_device.empty();
  auto method = b.CreateString(a.ran ? "auto" : "rules");
  flatbuffers::Offset<flatbuffers::String> objective, best_name;
  if (a.ran) objective = b.CreateString(a.objective);
  auto queue_vec = b.CreateVector(queues);
  if (best_known) best_name = b.CreateString(a.best_single_device);
  auto pinned_vec = b.CreateVector(pinned);
  auto fallback_vec = b.CreateVector(fallbacks);
  auto cost_vec = b.CreateVector(node_cost);
  schema::PlanSummaryBuilder sb(b);
  sb.add_method(method);
  if (a.ran) sb.add_objective(objective);
  sb.add_simulated_inferences(s.simulated_inferences);
  sb.add_throughput_per_s(s.throughput_per_s);
  sb.add_latency_s(s.latency_s);
  sb.add_bound_throughput_per_s(s.bound_throughput_per_s);
  sb.add_bottleneck_queue(s.bottleneck_queue);
  sb.add_queues(queue_vec);
  if (best_known) {
    sb.add_best_single_device(best_name);
    sb.add_best_single_throughput_per_s(a.best_single_throughput_per_s);
    sb.add_best_single_latency_s(a.best_single_latency_s);
    sb.add_best_single_in_flight(static_cast<uint32_t>(a.best_single_in_flight));
  }
  sb.add_pinned(pinned_vec);
  sb.add_fallbacks(fallback_vec);
  sb.add_node_cost(cost_vec);
  b.Finish(sb.Finish(), kPlanSummaryIdentifier);
  return std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
}

}  // namespace

std::string MacroName(const std::string& name) {
  std::string out;
  for (char c : name) {
    out += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::toupper(c)) : '_';
  }
  return out;
}

// The builder lays objects out in the order they are created, so the order
// below (domains, queues, tensors, nodes, then the plan with its constants)
// is part of the plan's bytes.
Result<std::string> EmitPlan(const Program& p) {
  const Graph& g = p.graph;
  if (p.order.size() != g.nodes.size()) return Fail("internal: plan emitted before scheduling");
  Indexing ix = Index(p);
  Builder b(1 << 16);
  std::vector<uint64_t> constant_offset;
  std::vector<uint8_t> constants = PackConstants(g, ix, &constant_offset);
  auto domains = EmitDomains(b, p);
  auto queues = EmitQueues(b, p, ix);
  auto tensors = EmitTensors(b, p, ix, constant_offset);
  std::vector<flatbuffers::Offset<schema::Node>> nodes;
  for (int n : p.order) {
    BATON_ASSIGN_OR_RETURN(flatbuffers::Offset<schema::Node> node, EmitNode(b, p, ix, n));
    nodes.push_back(node);
  }
  const std::vector<uint8_t> summary = EmitSummary(p, ix);
  std::vector<uint32_t> inputs, outputs;
  for (int t : g.inputs) inputs.push_back(static_cast<uint32_t>(ix.tensor[t]));
  for (int t : g.outputs) outputs.push_back(static_cast<uint32_t>(ix.tensor[t]));
  auto plan = schema::CreatePlanDirect(
      b, kPlanFormatVersion, g.name.c_str(), static_cast<uint32_t>(p.in_flight), &domains, &queues,
      &tensors, &nodes, &inputs, &outputs, constants.empty() ? nullptr : &constants);
  schema::FinishPlanBuffer(b, plan);
  std::string bytes(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
  // The summary section sits outside the FlatBuffer the runtime verifies,
  // inside the checksummed bytes (analysis/summary.h, docs/formats.md).
  AppendPlanSummary(&bytes, summary);
  AppendPlanTrailer(&bytes);  // CRC-32C of everything before it (docs/formats.md)
  return bytes;
}

std::string EmitHeader(const Program& p, const std::string& bytes, const std::string& source) {
  std::ostringstream o;
  std::string guard = "BATON_PLAN_" + MacroName(p.graph.name) + "_H_";
  o << "/* Generated by `baton plan` from " << source << " for target '" << p.target.name
    << "'. Do not edit. */\n";
  o << "#ifndef " << guard << "\n#define " << guard << "\n\n";
  o << "#define BATON_PLAN_BYTES " << bytes.size() << "u\n";
  o << "#define BATON_PLAN_ALIGN 64u\n";
  o << "#define BATON_IN_FLIGHT " << p.in_flight << "u\n";
  o << "#define BATON_NUM_DOMAINS " << p.target.domains.size() << "u\n";
  for (size_t d = 0; d < p.target.domains.size(); ++d) {
    const std::string m = MacroName(p.target.domains[d].name);
    uint64_t arena = d < p.domain_report.size() ? p.domain_report[d].arena_bytes : 0;
    o << "#define BATON_" << m << "_ARENA_BYTES " << arena << "u\n";
    o << "#define BATON_" << m << "_ARENA_ALIGN " << p.target.domains[d].alignment << "u\n";
    o << "#define BATON_" << m << "_DOMAIN_INDEX " << d << "u\n";
  }
  o << "\n/* The plan, read in place (constants included): keep it 64-byte aligned. */\n";
  o << "static const unsigned char baton_plan_data[" << bytes.size()
    << "] __attribute__((aligned(64))) = {\n";
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i % 16 == 0) o << "  ";
    o << "0x" << std::hex << std::setw(2) << std::setfill('0')
      << static_cast<unsigned>(static_cast<uint8_t>(bytes[i])) << std::dec << ",";
    o << (i % 16 == 15 || i + 1 == bytes.size() ? "\n" : " ");
  }
  o << "};\n\n#endif  /* " << guard << " */\n";
  return o.str();
}

namespace {

// The report's "auto" object (docs/partitioning.md).
nlohmann::ordered_json AutoReportJson(const AutoReport& a, bool profiled) {
  nlohmann::ordered_json j;
  j["objective"] = a.objective;
  j["throughput_per_s"] = a.throughput_per_s;
  j["latency_s"] = a.latency_s;
  j["bound_throughput_per_s"] = a.bound_throughput_per_s;
  j["bottleneck_queue"] = a.bottleneck_queue;
  j["best_single_device"] = a.best_single_device;
  j["best_single_throughput_per_s"] = a.best_single_throughput_per_s;
  j["best_single_latency_s"] = a.best_single_latency_s;
  j["best_single_in_flight"] = a.best_single_in_flight;
  j["speedup_over_best_single"] =
      a.best_single_throughput_per_s > 0 ? a.throughput_per_s / a.best_single_throughput_per_s : 0;
  nlohmann::ordered_json queues = nlohmann::ordered_json::object();
  for (size_t q = 0; q < a.queues.size(); ++q) {
    queues[a.queues[q]] = {{"busy_s_per_inference", a.queue_busy_s[q]},
                           {"utilization", a.utilization[q]}};
  }
  j["queues"] = queues;
  j["pinned"] = a.pinned;
  j["candidates_planned"] = a.candidates_planned;
  j["time_limit_hit"] = a.time_limit_hit;
  j["memory_fraction"] = a.memory_fraction;
  j["cost_source"] = profiled ? "profile" : "target";
  return j;
}

// The report's "summary" object (docs/partitioning.md, "Reading the result").
nlohmann::ordered_json SummaryJson(const Program& p) {
  const PlanSummary& s = p.summary;
  nlohmann::ordered_json j;
  j["method"] = p.auto_report.ran ? "auto" : "rules";
  j["inferences_in_flight"] = p.in_flight;
  j["throughput_per_s"] = s.throughput_per_s;
  j["latency_s"] = s.latency_s;
  j["bound_throughput_per_s"] = s.bound_throughput_per_s;
  j["bottleneck_queue"] = s.bottleneck_queue >= 0 ? nlohmann::ordered_json(p.queues[s.bottleneck_queue].name)
                                                  : nlohmann::ordered_json(nullptr);
  nlohmann::ordered_json queues = nlohmann::ordered_json::object();
  for (size_t q = 0; q < s.queue_busy_s.size() && q < p.queues.size(); ++q) {
    queues[p.queues[q].name] = {{"busy_s_per_inference", s.queue_busy_s[q]},
                                {"utilization", s.utilization[q]}};
  }
  j["queues"] = queues;
  std::vector<std::string> pinned;
  for (int n : p.order) {
    if (static_cast<size_t>(n) < p.node_pinned.size() && p.node_pinned[n]) {
      pinned.push_back(p.graph.nodes[n].name);
    }
  }
  j["pinned"] = pinned;
  int counts[3] = {0, 0, 0};  // target, profile, link
  nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
  for (int n : p.order) {
    const std::string& src = s.node_cost_source[n];
    ++counts[src == "profile" ? 1 : src == "link" ? 2 : 0];
    nodes.push_back({{"node", p.graph.nodes[n].name},
                     {"queue", p.queues[p.node_queue[n]].name},
                     {"seconds", s.node_seconds[n]},
                     {"source", src}});
  }
  j["cost_sources"] = {{"target", counts[0]}, {"profile", counts[1]}, {"link", counts[2]}};
  if (p.target.profile != nullptr) {
    j["profile"] = {{"files", p.target.profile->source},
                    {"kernels", p.target.profile->kernels},
                    {"entries", s.profile_entries},
                    {"matched_entries", s.profile_entries_matched},
                    {"unused_entries", s.profile_entries - s.profile_entries_matched}};
  } else {
    j["profile"] = nullptr;
  }
  j["nodes"] = nodes;
  return j;
}

}  // namespace

std::string EmitReport(const Program& p, const std::string& source) {
  nlohmann::ordered_json r;
  r["model"] = source;
  r["graph"] = p.graph.name;
  r["target"] = p.target.name;
  r["inferences_in_flight"] = p.in_flight;
  r["stages"] = p.num_stages;
  r["copies"] = p.NumCopies();
  nlohmann::ordered_json domains = nlohmann::ordered_json::object();
  for (size_t d = 0; d < p.target.domains.size(); ++d) {
    nlohmann::ordered_json e;
    e["arena_bytes"] = d < p.domain_report.size() ? p.domain_report[d].arena_bytes : 0;
    e["lower_bound_bytes"] = d < p.domain_report.size() ? p.domain_report[d].lower_bound_bytes : 0;
    e["capacity_bytes"] = p.target.domains[d].bytes;
    domains[p.target.domains[d].name] = e;
  }
  r["domains"] = domains;
  nlohmann::ordered_json devices = nlohmann::ordered_json::object();
  for (size_t q = 0; q < p.queues.size(); ++q) {
    int nodes = 0, copies = 0;
    for (int n : p.programs[q]) (p.graph.nodes[n].op == kCopyOp ? copies : nodes)++;
    devices[p.queues[q].name] = {
        {"kind", DeviceKindName(p.queues[q].kind)}, {"nodes", nodes}, {"copies", copies}};
  }
  r["devices"] = devices;
  nlohmann::ordered_json fallbacks = nlohmann::ordered_json::array();
  for (const Fallback& f : p.fallbacks) {
    fallbacks.push_back({{"node", f.node},
                         {"op", f.op},
                         {"requested", f.requested},
                         {"placed", f.placed},
                         {"reason", f.reason},
                         {"cause", f.cause}});
  }
  r["fallbacks"] = fallbacks;
  r["warnings"] = p.warnings;
  if (p.auto_report.ran) r["auto"] = AutoReportJson(p.auto_report, p.target.profile != nullptr);
  if (p.summary.present) r["summary"] = SummaryJson(p);
  return r.dump(2) + "\n";
}

std::string EmitDot(const Program& p) {
  static const char* kColors[] = {"#8dd3c7", "#fdb462", "#bebada", "#fb8072",
                                  "#80b1d3", "#b3de69", "#fccde5", "#d9d9d9"};
  const Graph& g = p.graph;
  std::ostringstream o;
  o << "digraph \"" << g.name
    << "\" {\n  rankdir=TB;\n  node [style=filled, fontname=Helvetica];\n";
  for (size_t q = 0; q < p.queues.size(); ++q) {
    o << "  subgraph \"cluster_" << p.queues[q].name << "\" { label=\"" << p.queues[q].name << " ("
      << DeviceKindName(p.queues[q].kind) << ")\"; color=\"" << kColors[q % 8] << "\";\n";
    for (int n : p.programs[q]) {
      const Node& node = g.nodes[n];
      bool copy = node.op == kCopyOp;
      o << "    n" << n << " [label=\"" << node.name << "\\n"
        << node.op << " s" << p.node_stage[n] << "\", fillcolor=\"" << kColors[q % 8] << "\""
        << (copy ? ", shape=box, style=\"filled,dashed\"" : "") << "];\n";
    }
    o << "  }\n";
  }
  std::vector<int> producer = g.Producers();
  for (int t : g.inputs) {
    o << "  t" << t << " [label=\"" << g.tensors[t].name << "\", shape=plaintext, style=\"\"];\n";
  }
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    for (int t : g.nodes[n].inputs) {
      if (t < 0 || g.tensors[t].is_constant) continue;
      if (producer[t] >= 0) {
        o << "  n" << producer[t] << " -> n" << n << " [label=\"" << g.tensors[t].name << "\"];\n";
      } else {
        o << "  t" << t << " -> n" << n << ";\n";
      }
    }
  }
  for (int t : g.outputs) {
    o << "  o" << t << " [label=\"" << g.tensors[t].name << "\", shape=plaintext, style=\"\"];\n";
    if (producer[t] >= 0) o << "  n" << producer[t] << " -> o" << t << ";\n";
  }
  o << "}\n";
  return o.str();
}

}  // namespace baton::planner
