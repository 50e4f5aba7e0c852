// The pipeline structure `baton inspect` prints (inspect_internal.h).
#include <algorithm>
#include <map>

#include "analysis/inspect_internal.h"

namespace baton::planner::inspect_detail {
namespace {

std::vector<int> Producers(const PlanView& view) {
  std::vector<int> producer(view.num_tensors(), -1);
  for (uint32_t n = 0; n < view.num_nodes(); ++n) {
    const schema::Node* node = view.node(n);
    if (node->outputs() == nullptr) continue;
    for (uint32_t t : *node->outputs()) {
      if (producer[t] < 0) producer[t] = static_cast<int>(n);
    }
  }
  return producer;
}

// Adds queue q's subgraphs, numbered in stage order, and assigns its non-copy
// nodes to them.
void AddQueueSubgraphs(const PlanView& view, uint32_t q, Structure* s) {
  const auto* program = view.queue(q)->nodes();
  if (program == nullptr) return;
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
    index = s->subgraphs.size();
    s->subgraphs.push_back(g);
  }
  for (uint32_t n : *program) {
    if (view.node(n)->op() == schema::Op::Copy) continue;
    const size_t g = by_stage.at(view.node(n)->stage());
    s->subgraphs[g].nodes.push_back(n);
    s->subgraph_of[n] = static_cast<int>(g);
  }
}

std::vector<std::vector<uint32_t>> Consumers(const PlanView& view) {
  std::vector<std::vector<uint32_t>> consumers(view.num_tensors());
  for (uint32_t n = 0; n < view.num_nodes(); ++n) {
    const schema::Node* node = view.node(n);
    if (node->inputs() == nullptr) continue;
    for (int32_t t : *node->inputs()) {
      if (t >= 0) consumers[t].push_back(n);
    }
  }
  return consumers;
}

void AddOnce(std::vector<uint32_t>* list, uint32_t t) {
  if (std::find(list->begin(), list->end(), t) == list->end()) list->push_back(t);
}

// Subgraph g's ports: arena tensors it reads but does not produce, and
// tensors it produces that leave it (read by another subgraph or a copy, or
// a graph output).
void FindPorts(const PlanView& view, const std::vector<std::vector<uint32_t>>& consumers, size_t g,
               Structure* s) {
  Structure::Subgraph& sub = s->subgraphs[g];
  for (uint32_t n : sub.nodes) {
    const schema::Node* node = view.node(n);
    if (node->inputs() != nullptr) {
      for (int32_t t : *node->inputs()) {
        if (t < 0 || view.tensor(t)->storage() == schema::Storage::Constant) continue;
        const int p = s->producer[t];
        if (p < 0 || s->subgraph_of[p] != static_cast<int>(g)) AddOnce(&sub.inputs, t);
      }
    }
    if (node->outputs() != nullptr) {
      for (uint32_t t : *node->outputs()) {
        bool leaves = IsGraphTensor(view.plan()->outputs(), t);
        for (uint32_t c : consumers[t]) leaves |= s->subgraph_of[c] != static_cast<int>(g);
        if (leaves) AddOnce(&sub.outputs, t);
      }
    }
  }
}

size_t IndexOf(const std::vector<uint32_t>& list, uint32_t t) {
  return static_cast<size_t>(std::find(list.begin(), list.end(), t) - list.begin());
}

// The endpoint a tensor that no copy produced comes from.
std::string Endpoint(const PlanView& view, const Structure& s, uint32_t t, bool* from_input) {
  const int p = s.producer[t];
  if (p >= 0) {
    const Structure::Subgraph& g = s.subgraphs[s.subgraph_of[p]];
    return g.name + ".out" + std::to_string(IndexOf(g.outputs, t));
  }
  if (IsGraphTensor(view.plan()->inputs(), t)) {
    *from_input = true;
    return "input " + TensorName(view, t);
  }
  if (view.tensor(t)->storage() == schema::Storage::Constant) {
    return "constant " + TensorName(view, t);
  }
  return "(never written) " + TensorName(view, t);
}

}  // namespace

bool IsGraphTensor(const flatbuffers::Vector<uint32_t>* list, uint32_t t) {
  if (list == nullptr) return false;
  for (uint32_t x : *list) {
    if (x == t) return true;
  }
  return false;
}

Structure Analyze(const PlanView& view) {
  Structure s;
  s.producer = Producers(view);
  s.subgraph_of.assign(view.num_nodes(), -1);
  for (uint32_t q = 0; q < view.num_queues(); ++q) AddQueueSubgraphs(view, q, &s);
  // Consumers per tensor, to decide which produced tensors leave a subgraph.
  const std::vector<std::vector<uint32_t>> consumers = Consumers(view);
  for (size_t g = 0; g < s.subgraphs.size(); ++g) FindPorts(view, consumers, g, &s);
  return s;
}

Source TraceSource(const PlanView& view, const Structure& s, uint32_t t) {
  Source source;
  uint32_t cur = t;
  // The guard stops a (malformed) loop of copies.
  for (uint32_t guard = 0; guard <= view.num_nodes(); ++guard) {
    const int p = s.producer[cur];
    if (p < 0 || view.node(p)->op() != schema::Op::Copy) {
      source.tensor = cur;
      source.endpoint = Endpoint(view, s, cur, &source.from_graph_input);
      return source;
    }
    source.hops.insert(source.hops.begin(),
                       "[" + QueueName(view, view.node(p)->queue()) + " copy]");
    const auto* in = view.node(p)->inputs();
    if (in == nullptr || in->size() == 0 || in->Get(0) < 0) break;
    cur = static_cast<uint32_t>(in->Get(0));
  }
  source.tensor = cur;
  source.endpoint = "(copy without input)";
  return source;
}

}  // namespace baton::planner::inspect_detail
