#include "baton/planner/analysis/inspect.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "baton/planner/io/npy.h"
#include "baton/planner/target.h"

namespace baton::planner {
namespace {

using ojson = nlohmann::ordered_json;

template <typename V>
uint32_t Count(const V* v) {
  return v ? v->size() : 0;
}

std::string TensorName(const PlanView& view, int64_t t) {
  if (t < 0) return "-";
  return view.tensor(static_cast<uint32_t>(t))->name()->str();
}

std::string NodeName(const PlanView& view, uint32_t n) { return view.node(n)->name()->str(); }

std::string QueueName(const PlanView& view, uint32_t q) { return view.queue(q)->name()->str(); }

std::string Join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += sep;
    out += parts[i];
  }
  return out;
}

// Left-aligned columns separated by two spaces; the last column is not padded.
std::string Table(const std::vector<std::vector<std::string>>& rows, const std::string& indent) {
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

// The pipeline's structure: producers, subgraphs and their ports.
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

bool IsGraphTensor(const flatbuffers::Vector<uint32_t>* list, uint32_t t) {
  if (list == nullptr) return false;
  for (uint32_t x : *list) {
    if (x == t) return true;
  }
  return false;
}

Structure Analyze(const PlanView& view) {
  Structure s;
  s.producer.assign(view.num_tensors(), -1);
  s.subgraph_of.assign(view.num_nodes(), -1);
  for (uint32_t n = 0; n < view.num_nodes(); ++n) {
    const schema::Node* node = view.node(n);
    if (node->outputs() == nullptr) continue;
    for (uint32_t t : *node->outputs()) {
      if (s.producer[t] < 0) s.producer[t] = static_cast<int>(n);
    }
  }
  for (uint32_t q = 0; q < view.num_queues(); ++q) {
    const auto* program = view.queue(q)->nodes();
    if (program == nullptr) continue;
    // Subgraphs of a queue are numbered in stage order.
    std::map<uint32_t, size_t> by_stage;  // stage -> subgraph index
    for (uint32_t n : *program) {
      if (view.node(n)->op() != schema::Op::Copy) by_stage.emplace(view.node(n)->stage(), 0);
    }
    uint32_t k = 0;
    for (auto& [stage, index] : by_stage) {
      Structure::Subgraph g;
      g.queue = q;
      g.stage = stage;
      g.index = k;
      g.name = QueueName(view, q) + ".sub" + std::to_string(k++);
      index = s.subgraphs.size();
      s.subgraphs.push_back(g);
    }
    for (uint32_t n : *program) {
      if (view.node(n)->op() == schema::Op::Copy) continue;
      const size_t g = by_stage.at(view.node(n)->stage());
      s.subgraphs[g].nodes.push_back(n);
      s.subgraph_of[n] = static_cast<int>(g);
    }
  }
  // Consumers per tensor, to decide which produced tensors leave a subgraph.
  std::vector<std::vector<uint32_t>> consumers(view.num_tensors());
  for (uint32_t n = 0; n < view.num_nodes(); ++n) {
    const schema::Node* node = view.node(n);
    if (node->inputs() == nullptr) continue;
    for (int32_t t : *node->inputs()) {
      if (t >= 0) consumers[t].push_back(n);
    }
  }
  for (size_t g = 0; g < s.subgraphs.size(); ++g) {
    Structure::Subgraph& sub = s.subgraphs[g];
    auto add = [](std::vector<uint32_t>* list, uint32_t t) {
      if (std::find(list->begin(), list->end(), t) == list->end()) list->push_back(t);
    };
    for (uint32_t n : sub.nodes) {
      const schema::Node* node = view.node(n);
      if (node->inputs() != nullptr) {
        for (int32_t t : *node->inputs()) {
          if (t < 0 || view.tensor(t)->storage() == schema::Storage::Constant) continue;
          const int p = s.producer[t];
          if (p < 0 || s.subgraph_of[p] != static_cast<int>(g)) add(&sub.inputs, t);
        }
      }
      if (node->outputs() != nullptr) {
        for (uint32_t t : *node->outputs()) {
          bool leaves = IsGraphTensor(view.plan()->outputs(), t);
          for (uint32_t c : consumers[t]) leaves |= s.subgraph_of[c] != static_cast<int>(g);
          if (leaves) add(&sub.outputs, t);
        }
      }
    }
  }
  return s;
}

size_t IndexOf(const std::vector<uint32_t>& list, uint32_t t) {
  return static_cast<size_t>(std::find(list.begin(), list.end(), t) - list.begin());
}

// Follows tensor `t` back through __copy nodes. Returns the source endpoint
// ("input x", "npu0.sub0.out1") and fills `hops` with "[q copy]" per copy,
// in data-flow order, and `source_tensor` with the tensor at the source.
std::string TraceSource(const PlanView& view, const Structure& s, uint32_t t,
                        std::vector<std::string>* hops, uint32_t* source_tensor,
                        bool* from_graph_input) {
  *from_graph_input = false;
  uint32_t cur = t;
  for (uint32_t guard = 0; guard <= view.num_nodes(); ++guard) {
    const int p = s.producer[cur];
    if (p >= 0 && view.node(p)->op() == schema::Op::Copy) {
      hops->insert(hops->begin(), "[" + QueueName(view, view.node(p)->queue()) + " copy]");
      const auto* in = view.node(p)->inputs();
      if (in == nullptr || in->size() == 0 || in->Get(0) < 0) break;
      cur = static_cast<uint32_t>(in->Get(0));
      continue;
    }
    *source_tensor = cur;
    if (p >= 0) {
      const Structure::Subgraph& g = s.subgraphs[s.subgraph_of[p]];
      return g.name + ".out" + std::to_string(IndexOf(g.outputs, cur));
    }
    if (IsGraphTensor(view.plan()->inputs(), cur)) {
      *from_graph_input = true;
      return "input " + TensorName(view, cur);
    }
    if (view.tensor(cur)->storage() == schema::Storage::Constant) {
      return "constant " + TensorName(view, cur);
    }
    return "(never written) " + TensorName(view, cur);
  }
  *source_tensor = cur;
  return "(copy without input)";
}

std::string Arrow(const std::string& from, const std::vector<std::string>& hops,
                  const std::string& to) {
  std::string out = from;
  for (const std::string& h : hops) out += " -> " + h;
  return out + " -> " + to;
}

std::string TensorNote(const PlanView& view, uint32_t source, uint32_t dest) {
  if (source == dest) return "(" + TensorName(view, source) + ")";
  return "(" + TensorName(view, source) + " => " + TensorName(view, dest) + ")";
}

std::string DomainName(const PlanView& view, uint32_t d) { return view.domain(d)->name()->str(); }

std::string PipelineSection(const PlanView& view, const Structure& s) {
  std::ostringstream out;
  out << "Pipeline configuration\n";
  out << "  subgraphs (non-copy nodes of one queue and one stage):\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& g : s.subgraphs) {
    std::vector<std::string> names;
    for (uint32_t n : g.nodes) names.push_back(NodeName(view, n));
    rows.push_back({g.name, "stage " + std::to_string(g.stage),
                    std::to_string(g.nodes.size()) + (g.nodes.size() == 1 ? " node" : " nodes"),
                    Join(names, ", ")});
  }
  if (rows.empty()) out << "    (none)\n";
  out << Table(rows, "    ");

  std::vector<std::vector<std::string>> inputs, connections, outputs;
  std::vector<bool> input_used(view.num_tensors(), false);
  for (const auto& g : s.subgraphs) {
    for (size_t j = 0; j < g.inputs.size(); ++j) {
      std::vector<std::string> hops;
      uint32_t source = g.inputs[j];
      bool from_input = false;
      const std::string from = TraceSource(view, s, g.inputs[j], &hops, &source, &from_input);
      const std::string line = Arrow(from, hops, g.name + ".in" + std::to_string(j));
      const std::string note = TensorNote(view, source, g.inputs[j]);
      if (from_input) {
        input_used[source] = true;
        inputs.push_back({line, note});
      } else {
        connections.push_back({line, note});
      }
    }
  }
  for (uint32_t i = 0; i < view.num_inputs(); ++i) {
    const uint32_t t = view.plan()->inputs()->Get(i);
    if (!input_used[t]) {
      bool is_output = IsGraphTensor(view.plan()->outputs(), t);
      inputs.push_back({"input " + TensorName(view, t) + (is_output ? "" : " -> (unused)"), ""});
    }
  }
  for (uint32_t o = 0; o < view.num_outputs(); ++o) {
    const uint32_t t = view.plan()->outputs()->Get(o);
    std::vector<std::string> hops;
    uint32_t source = t;
    bool from_input = false;
    const std::string from = TraceSource(view, s, t, &hops, &source, &from_input);
    outputs.push_back(
        {Arrow(from, hops, "output " + TensorName(view, t)), TensorNote(view, source, t)});
  }
  out << "  inputs:\n" << (inputs.empty() ? "    (none)\n" : Table(inputs, "    "));
  out << "  connections:\n" << (connections.empty() ? "    (none)\n" : Table(connections, "    "));
  out << "  outputs:\n" << (outputs.empty() ? "    (none)\n" : Table(outputs, "    "));
  return out.str();
}

std::string StagesSection(const PlanView& view, const Structure& s) {
  uint32_t max_stage = 0;
  for (uint32_t n = 0; n < view.num_nodes(); ++n)
    max_stage = std::max(max_stage, view.node(n)->stage());
  std::ostringstream out;
  out << "Stages\n";
  std::vector<std::vector<std::string>> rows;
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

std::string QueuesSection(const PlanView& view) {
  std::ostringstream out;
  out << "Queues (program order; a queue runs iteration k = inference + stage)\n";
  for (uint32_t q = 0; q < view.num_queues(); ++q) {
    const schema::Queue* queue = view.queue(q);
    std::vector<std::string> domains;
    if (queue->domains() != nullptr) {
      for (uint32_t d : *queue->domains()) domains.push_back(DomainName(view, d));
    }
    const uint32_t count = Count(queue->nodes());
    out << "  " << QueueName(view, q) << " (" << DeviceKindName(queue->kind()) << "; domains "
        << (domains.empty() ? "none" : Join(domains, ", ")) << "): " << count
        << (count == 1 ? " node\n" : " nodes\n");
    if (count == 0) continue;
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"pos", "node", "op", "stage", "reads", "writes", "waits"});
    for (uint32_t p = 0; p < count; ++p) {
      const uint32_t n = queue->nodes()->Get(p);
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
      rows.push_back({std::to_string(p), node->name()->str(), PlanOpName(node->op()),
                      std::to_string(node->stage()), Join(reads, ", "), Join(writes, ", "),
                      waits.empty() ? "-" : Join(waits, ", ")});
    }
    out << Table(rows, "    ");
  }
  return out.str();
}

std::string ArenasSection(const PlanView& view) {
  // Role of each tensor, for the arena listing.
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
  std::ostringstream out;
  out << "Arenas (inference i uses slot i mod slots at offset + slot * stride)\n";
  for (uint32_t d = 0; d < view.num_domains(); ++d) {
    std::vector<uint32_t> placed;
    for (uint32_t t = 0; t < view.num_tensors(); ++t) {
      const schema::Tensor* tensor = view.tensor(t);
      if (tensor->storage() == schema::Storage::Arena && tensor->domain() == d) placed.push_back(t);
    }
    std::stable_sort(placed.begin(), placed.end(), [&view](uint32_t a, uint32_t b) {
      return view.tensor(a)->offset() < view.tensor(b)->offset();
    });
    out << "  " << DomainName(view, d) << ": " << view.domain(d)->bytes() << " bytes, alignment "
        << view.domain(d)->alignment() << ", " << placed.size()
        << (placed.size() == 1 ? " tensor\n" : " tensors\n");
    if (placed.empty()) continue;
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"offset", "end", "bytes", "slots", "stride", "tensor", "role"});
    for (uint32_t t : placed) {
      const schema::Tensor* tensor = view.tensor(t);
      const uint64_t end = tensor->offset() +
                           uint64_t{tensor->slots() - 1} * tensor->slot_stride() + tensor->bytes();
      rows.push_back({std::to_string(tensor->offset()), std::to_string(end),
                      std::to_string(tensor->bytes()), std::to_string(tensor->slots()),
                      tensor->slots() > 1 ? std::to_string(tensor->slot_stride()) : "-",
                      tensor->name()->str(), role[t]});
    }
    out << Table(rows, "    ");
  }
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"offset", "bytes", "tensor"});
  for (uint32_t t = 0; t < view.num_tensors(); ++t) {
    const schema::Tensor* tensor = view.tensor(t);
    if (tensor->storage() != schema::Storage::Constant) continue;
    rows.push_back(
        {std::to_string(tensor->offset()), std::to_string(tensor->bytes()), tensor->name()->str()});
  }
  const uint32_t section = Count(view.plan()->constants());
  out << "  constants (read in place from the plan): " << section << " bytes, " << rows.size() - 1
      << (rows.size() == 2 ? " tensor\n" : " tensors\n");
  if (rows.size() > 1) out << Table(rows, "    ");
  return out.str();
}

}  // namespace

Result<LoadedPlan> LoadedPlan::FromBytes(const void* data, size_t size, const std::string& what) {
  LoadedPlan plan;
  plan.storage_.resize((size + sizeof(Block) - 1) / sizeof(Block));
  if (size > 0) std::memcpy(plan.storage_.data(), data, size);
  plan.size_ = size;
  LoadError error;
  const Status status = PlanView::Load(plan.storage_.data(), size, &plan.view_, &error);
  if (!status.ok()) return Fail(what + ": invalid plan: " + error.text);
  return plan;
}

Result<LoadedPlan> LoadedPlan::FromFile(const std::string& path) {
  BATON_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  return FromBytes(bytes.data(), bytes.size(), path);
}

const char* PlanOpName(schema::Op op) {
  return op == schema::Op::Copy ? "__copy" : schema::EnumNameOp(op);
}

const char* PlanDTypeName(schema::DType dtype) {
  switch (dtype) {
    case schema::DType::Float32:
      return "float32";
    case schema::DType::Int32:
      return "int32";
    case schema::DType::Int64:
      return "int64";
    case schema::DType::UInt8:
      return "uint8";
    case schema::DType::Int8:
      return "int8";
  }
  return "?";
}

std::string InspectJson(const PlanView& view) {
  const schema::Plan* plan = view.plan();
  ojson root;
  root["format"] = "baton-plan";
  root["version"] = 1;
  root["inferences_in_flight"] = view.in_flight();
  root["domains"] = ojson::array();
  for (uint32_t d = 0; d < view.num_domains(); ++d) {
    const schema::Domain* domain = view.domain(d);
    ojson o;
    o["name"] = domain->name()->str();
    o["bytes"] = domain->bytes();
    o["alignment"] = domain->alignment();
    root["domains"].push_back(o);
  }
  root["queues"] = ojson::array();
  for (uint32_t q = 0; q < view.num_queues(); ++q) {
    const schema::Queue* queue = view.queue(q);
    ojson o;
    o["name"] = queue->name()->str();
    o["kind"] = DeviceKindName(queue->kind());
    o["domains"] = ojson::array();
    if (queue->domains() != nullptr) {
      for (uint32_t d : *queue->domains()) o["domains"].push_back(DomainName(view, d));
    }
    root["queues"].push_back(o);
  }
  root["tensors"] = ojson::array();
  for (uint32_t t = 0; t < view.num_tensors(); ++t) {
    const schema::Tensor* tensor = view.tensor(t);
    const bool arena = tensor->storage() == schema::Storage::Arena;
    ojson o;
    o["id"] = t;
    o["name"] = tensor->name()->str();
    o["dtype"] = PlanDTypeName(tensor->dtype());
    o["shape"] = ojson::array();
    if (tensor->shape() != nullptr) {
      for (int64_t dim : *tensor->shape()) o["shape"].push_back(dim);
    }
    o["bytes"] = tensor->bytes();
    o["storage"] = arena ? "arena" : "constant";
    o["domain"] = arena ? ojson(DomainName(view, tensor->domain())) : ojson(nullptr);
    o["offset"] = arena ? ojson(tensor->offset()) : ojson(nullptr);
    o["slots"] = tensor->slots();
    o["slot_stride"] = tensor->slot_stride();
    root["tensors"].push_back(o);
  }
  root["nodes"] = ojson::array();
  for (uint32_t n = 0; n < view.num_nodes(); ++n) {
    const schema::Node* node = view.node(n);
    ojson o;
    o["id"] = n;
    o["name"] = node->name()->str();
    o["op"] = PlanOpName(node->op());
    o["queue"] = QueueName(view, node->queue());
    o["position"] = node->position();
    o["stage"] = node->stage();
    o["inputs"] = ojson::array();
    if (node->inputs() != nullptr) {
      for (int32_t t : *node->inputs()) o["inputs"].push_back(t < 0 ? ojson(nullptr) : ojson(t));
    }
    o["outputs"] = ojson::array();
    if (node->outputs() != nullptr) {
      for (uint32_t t : *node->outputs()) o["outputs"].push_back(t);
    }
    o["workspace"] = ojson::array();
    if (node->workspace() != nullptr) {
      for (uint32_t t : *node->workspace()) o["workspace"].push_back(t);
    }
    o["waits"] = ojson::array();
    if (node->waits() != nullptr) {
      for (const schema::Wait* w : *node->waits()) {
        ojson wait;
        wait["node"] = w->node();
        wait["lag"] = w->lag();
        o["waits"].push_back(wait);
      }
    }
    root["nodes"].push_back(o);
  }
  root["inputs"] = ojson::array();
  for (uint32_t i = 0; i < view.num_inputs(); ++i) root["inputs"].push_back(plan->inputs()->Get(i));
  root["outputs"] = ojson::array();
  for (uint32_t i = 0; i < view.num_outputs(); ++i) {
    root["outputs"].push_back(plan->outputs()->Get(i));
  }
  return root.dump(2) + "\n";
}

std::string InspectText(const PlanView& view) {
  const Structure s = Analyze(view);
  std::ostringstream out;
  const std::string name = view.plan()->name() ? view.plan()->name()->str() : "";
  out << "plan" << (name.empty() ? "" : " \"" + name + "\"") << " (format version "
      << view.plan()->version() << "): " << view.in_flight()
      << (view.in_flight() == 1 ? " inference" : " inferences") << " in flight, "
      << view.num_queues() << " queues, " << view.num_domains() << " domains, "
      << view.num_tensors() << " tensors, " << view.num_nodes() << " nodes\n\n";
  out << PipelineSection(view, s) << "\n";
  out << StagesSection(view, s) << "\n";
  out << QueuesSection(view) << "\n";
  out << ArenasSection(view);
  return out.str();
}

}  // namespace baton::planner
