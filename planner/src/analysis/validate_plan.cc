#include "baton/planner/analysis/validate_plan.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <tuple>
#include <vector>

#include "baton/plan_generated.h"

namespace baton::planner {
namespace {

template <typename V>
uint32_t Count(const V* v) {
  return v ? v->size() : 0;
}

// Why an edge exists, for cycle reports.
enum class EdgeKind : uint8_t { kQueueOrder, kWait, kCaller, kInFlight };

const char* EdgeText(EdgeKind kind) {
  switch (kind) {
    case EdgeKind::kQueueOrder:
      return "queue order";
    case EdgeKind::kWait:
      return "wait";
    case EdgeKind::kCaller:
      return "caller";
    case EdgeKind::kInFlight:
      return "in-flight limit";
  }
  return "?";
}

struct Edge {
  uint32_t to;
  EdgeKind kind;
};

struct Access {
  uint32_t instance;
  uint32_t tensor;
  uint32_t domain;
  uint64_t begin;
  uint64_t end;
  bool write;
  int64_t writer;  // reads: the instance that writes this tensor for the same inference
};

class Validator {
 public:
  Validator(const schema::Plan* plan, ValidateReport* report) : plan_(plan), report_(report) {}

  Check Run(int inferences) {
    BATON_TRY(CheckStructure());
    BATON_TRY(Unroll(inferences));
    const uint32_t requested = n_;
    BuildEdges();
    BATON_TRY(TopologicalOrder(false));
    if (!TopologicalOrder(true).ok()) {
      // The in-flight limit closes a cycle: the caller cannot submit some
      // inference j before j - D is back, which needs j. The executor then
      // flushes the stream after the inferences already submitted, and each
      // later stream repeats the pattern after the previous one was fully
      // retrieved (so streams never overlap). The stream length L is the
      // largest count for which the first L inferences can all be admitted.
      uint32_t length = 1;
      while (length + 1 < requested) {
        SetInferences(length + 1);
        BuildEdges();
        if (!TopologicalOrder(true).ok()) break;
        ++length;
      }
      SetInferences(length);
      BuildEdges();
      BATON_TRY(TopologicalOrder(true));
    }
    if (report_ != nullptr) {
      report_->stream_length = n_;
      report_->flushes = n_ < requested;
    }
    BuildReachability();
    BuildAccesses();
    return CheckAccesses();
  }

 private:
  // --- names ---------------------------------------------------------------
  std::string NodeName(uint32_t n) const { return plan_->nodes()->Get(n)->name()->str(); }
  std::string TensorName(uint32_t t) const { return plan_->tensors()->Get(t)->name()->str(); }
  std::string QueueName(uint32_t q) const { return plan_->queues()->Get(q)->name()->str(); }
  std::string DomainName(uint32_t d) const { return plan_->domains()->Get(d)->name()->str(); }
  const schema::Node* node(uint32_t n) const { return plan_->nodes()->Get(n); }
  const schema::Tensor* tensor(uint32_t t) const { return plan_->tensors()->Get(t); }

  // Instance ids: node instances i * nodes + n, then W(i), then R(i).
  uint32_t NodeInstance(uint32_t n, uint32_t i) const { return i * num_nodes_ + n; }
  uint32_t WriteInstance(uint32_t i) const { return n_ * num_nodes_ + i; }
  uint32_t ReadInstance(uint32_t i) const { return n_ * num_nodes_ + n_ + i; }
  uint32_t InferenceOf(uint32_t v) const {
    if (v < n_ * num_nodes_) return v / num_nodes_;
    return (v - n_ * num_nodes_) % n_;
  }

  std::string InstanceName(uint32_t v) const {
    const uint32_t i = InferenceOf(v);
    if (v < n_ * num_nodes_) {
      const uint32_t n = v % num_nodes_;
      return "node '" + NodeName(n) + "' (" + QueueName(node(n)->queue()) + ") for inference " +
             std::to_string(i);
    }
    if (v < n_ * num_nodes_ + n_)
      return "the caller's input write for inference " + std::to_string(i);
    return "the caller's output read for inference " + std::to_string(i);
  }

  std::string AccessText(const Access& a) const {
    return std::string(a.write ? "writes" : "reads") + " tensor '" + TensorName(a.tensor) + "' [" +
           DomainName(a.domain) + " " + std::to_string(a.begin) + ".." + std::to_string(a.end) +
           ")";
  }

  // --- 1. structure ---------------------------------------------------------
  Check CheckTensorIndex(uint32_t n, int64_t t, const char* what) const {
    if (t < 0 || t >= static_cast<int64_t>(num_tensors_)) {
      return Fail("node '" + NodeName(n) + "': " + what + " tensor index " + std::to_string(t) +
                  " out of range");
    }
    return Check();
  }

  Check CheckReach(uint32_t n, uint32_t t) const {
    const schema::Tensor* ten = tensor(t);
    if (ten->storage() != schema::Storage::Arena) return Check();
    const schema::Queue* q = plan_->queues()->Get(node(n)->queue());
    if (q->domains() != nullptr) {
      for (uint32_t d : *q->domains()) {
        if (d == ten->domain()) return Check();
      }
    }
    return Fail("node '" + NodeName(n) + "' on queue '" + QueueName(node(n)->queue()) +
                "' touches tensor '" + TensorName(t) + "' in domain '" + DomainName(ten->domain()) +
                "', which the queue cannot reach");
  }

  Check CheckStructure() {
    num_domains_ = Count(plan_->domains());
    num_queues_ = Count(plan_->queues());
    num_tensors_ = Count(plan_->tensors());
    num_nodes_ = Count(plan_->nodes());
    in_flight_ = plan_->inferences_in_flight();
    if (in_flight_ == 0) return Fail("inferences_in_flight is 0");
    if (num_nodes_ == 0) return Fail("plan has no nodes");
    for (uint32_t t = 0; t < num_tensors_; ++t) {
      const schema::Tensor* ten = tensor(t);
      if (ten->storage() != schema::Storage::Arena) continue;
      if (ten->domain() >= num_domains_) {
        return Fail("tensor '" + TensorName(t) + "': domain index out of range");
      }
      if (ten->slots() == 0) return Fail("tensor '" + TensorName(t) + "': zero slots");
      const unsigned __int128 end =
          static_cast<unsigned __int128>(ten->offset()) +
          static_cast<unsigned __int128>(ten->slots() - 1) * ten->slot_stride() + ten->bytes();
      if (end > plan_->domains()->Get(ten->domain())->bytes()) {
        return Fail("tensor '" + TensorName(t) + "': slots end past domain '" +
                    DomainName(ten->domain()) + "' (" +
                    std::to_string(plan_->domains()->Get(ten->domain())->bytes()) + " bytes)");
      }
      max_slots_ = std::max(max_slots_, ten->slots());
    }
    std::vector<int> seen(num_nodes_, 0);
    for (uint32_t q = 0; q < num_queues_; ++q) {
      const schema::Queue* queue = plan_->queues()->Get(q);
      if (queue->domains() != nullptr) {
        for (uint32_t d : *queue->domains()) {
          if (d >= num_domains_)
            return Fail("queue '" + QueueName(q) + "': domain index out of range");
        }
      }
      for (uint32_t p = 0; p < Count(queue->nodes()); ++p) {
        const uint32_t n = queue->nodes()->Get(p);
        if (n >= num_nodes_) return Fail("queue '" + QueueName(q) + "': node index out of range");
        if (node(n)->queue() != q || node(n)->position() != p) {
          return Fail("queue '" + QueueName(q) + "' lists node '" + NodeName(n) + "' at position " +
                      std::to_string(p) + ", but the node says queue " +
                      std::to_string(node(n)->queue()) + " position " +
                      std::to_string(node(n)->position()));
        }
        ++seen[n];
      }
    }
    writer_.assign(num_tensors_, -1);
    for (uint32_t n = 0; n < num_nodes_; ++n) {
      if (seen[n] != 1)
        return Fail("node '" + NodeName(n) + "' is not in exactly one queue program");
      const schema::Node* nd = node(n);
      max_stage_ = std::max(max_stage_, nd->stage());
      if (nd->inputs() != nullptr) {
        for (int32_t t : *nd->inputs()) {
          if (t == -1) continue;
          BATON_TRY(CheckTensorIndex(n, t, "input"));
          BATON_TRY(CheckReach(n, static_cast<uint32_t>(t)));
        }
      }
      for (int pass = 0; pass < 2; ++pass) {
        const auto* list = pass == 0 ? nd->outputs() : nd->workspace();
        if (list == nullptr) continue;
        for (uint32_t t : *list) {
          BATON_TRY(CheckTensorIndex(n, t, pass == 0 ? "output" : "workspace"));
          if (tensor(t)->storage() != schema::Storage::Arena) {
            return Fail("node '" + NodeName(n) + "' writes constant tensor '" + TensorName(t) +
                        "'");
          }
          BATON_TRY(CheckReach(n, t));
          if (pass == 1) continue;
          if (writer_[t] >= 0) {
            return Fail("tensor '" + TensorName(t) + "' is written by both node '" +
                        NodeName(static_cast<uint32_t>(writer_[t])) + "' and node '" + NodeName(n) +
                        "'");
          }
          writer_[t] = n;
        }
      }
      if (nd->waits() != nullptr) {
        for (const schema::Wait* w : *nd->waits()) {
          if (w->node() >= num_nodes_) {
            return Fail("node '" + NodeName(n) + "': wait names node index " +
                        std::to_string(w->node()) + ", out of range");
          }
        }
      }
    }
    for (int pass = 0; pass < 2; ++pass) {
      const auto* list = pass == 0 ? plan_->inputs() : plan_->outputs();
      const char* what = pass == 0 ? "graph input" : "graph output";
      if (list == nullptr) continue;
      for (uint32_t t : *list) {
        if (t >= num_tensors_ || tensor(t)->storage() != schema::Storage::Arena) {
          return Fail(std::string(what) + " " + std::to_string(t) + " is not an arena tensor");
        }
        if (pass == 1) continue;
        if (writer_[t] >= 0) {
          return Fail("graph input '" + TensorName(t) + "' is also written by node '" +
                      NodeName(static_cast<uint32_t>(writer_[t])) + "'");
        }
        writer_[t] = kCallerWrites;
      }
    }
    return Check();
  }

  // --- 2. unrolling and happens-before --------------------------------------
  Check Unroll(int inferences) {
    if (inferences < 0) return Fail("inferences must be >= 0");
    const uint64_t automatic = uint64_t{in_flight_} + max_stage_ + max_slots_ + 2;
    const uint64_t n = inferences == 0 ? automatic : static_cast<uint64_t>(inferences);
    const uint64_t v = n * (uint64_t{num_nodes_} + 2);
    if (v > kMaxValidateInstances) {
      return Fail("validating " + std::to_string(n) + " inferences needs " + std::to_string(v) +
                  " instances, more than " + std::to_string(kMaxValidateInstances) +
                  "; pass fewer inferences");
    }
    SetInferences(static_cast<uint32_t>(n));
    if (report_ != nullptr) report_->inferences = n_;
    return Check();
  }

  void SetInferences(uint32_t n) {
    n_ = n;
    v_ = n * (num_nodes_ + 2);
    if (report_ != nullptr) report_->instances = v_;
  }

  void AddEdge(uint32_t from, uint32_t to, EdgeKind kind) {
    succ_[from].push_back({to, kind});
    ++edges_;
  }

  void BuildEdges() {
    succ_.assign(v_, {});
    edges_ = 0;
    for (uint32_t q = 0; q < num_queues_; ++q) {
      const auto* program = plan_->queues()->Get(q)->nodes();
      const uint32_t len = Count(program);
      uint32_t stage_max = 0;
      for (uint32_t p = 0; p < len; ++p)
        stage_max = std::max(stage_max, node(program->Get(p))->stage());
      int64_t previous = -1;
      for (uint64_t k = 0; k < uint64_t{n_} + stage_max; ++k) {
        for (uint32_t p = 0; p < len; ++p) {
          const uint32_t n = program->Get(p);
          const int64_t i = static_cast<int64_t>(k) - node(n)->stage();
          if (i < 0 || i >= n_) continue;
          const uint32_t v = NodeInstance(n, static_cast<uint32_t>(i));
          if (previous >= 0) AddEdge(static_cast<uint32_t>(previous), v, EdgeKind::kQueueOrder);
          previous = v;
        }
      }
    }
    for (uint32_t n = 0; n < num_nodes_; ++n) {
      const auto* waits = node(n)->waits();
      if (waits == nullptr) continue;
      for (const schema::Wait* w : *waits) {
        for (uint32_t i = w->lag(); i < n_; ++i) {
          AddEdge(NodeInstance(w->node(), i - w->lag()), NodeInstance(n, i), EdgeKind::kWait);
        }
      }
    }
    for (uint32_t i = 0; i < n_; ++i) {
      for (uint32_t n = 0; n < num_nodes_; ++n) {
        AddEdge(WriteInstance(i), NodeInstance(n, i), EdgeKind::kCaller);
        AddEdge(NodeInstance(n, i), ReadInstance(i), EdgeKind::kCaller);
      }
      AddEdge(WriteInstance(i), ReadInstance(i), EdgeKind::kCaller);
      if (i + 1 < n_) {
        AddEdge(WriteInstance(i), WriteInstance(i + 1), EdgeKind::kCaller);
        AddEdge(ReadInstance(i), ReadInstance(i + 1), EdgeKind::kCaller);
      }
      if (i >= in_flight_)
        AddEdge(ReadInstance(i - in_flight_), WriteInstance(i), EdgeKind::kInFlight);
    }
    if (report_ != nullptr) report_->edges = edges_;
  }

  // Kahn's algorithm over the edges (without the in-flight limit's when
  // `with_limit` is false), filling order_. On a cycle, reports one.
  Check TopologicalOrder(bool with_limit) {
    auto used = [with_limit](const Edge& e) { return with_limit || e.kind != EdgeKind::kInFlight; };
    std::vector<uint32_t> indegree(v_, 0);
    for (uint32_t v = 0; v < v_; ++v) {
      for (const Edge& e : succ_[v]) indegree[e.to] += used(e);
    }
    std::deque<uint32_t> ready;
    for (uint32_t v = 0; v < v_; ++v) {
      if (indegree[v] == 0) ready.push_back(v);
    }
    order_.clear();
    while (!ready.empty()) {
      const uint32_t v = ready.front();
      ready.pop_front();
      order_.push_back(v);
      for (const Edge& e : succ_[v]) {
        if (used(e) && --indegree[e.to] == 0) ready.push_back(e.to);
      }
    }
    if (order_.size() == v_) return Check();
    // Every vertex left has a predecessor that is also left: walk backwards
    // until a vertex repeats, then report that loop forwards.
    std::vector<std::vector<Edge>> pred(v_);
    for (uint32_t v = 0; v < v_; ++v) {
      if (indegree[v] == 0) continue;
      for (const Edge& e : succ_[v]) {
        if (used(e) && indegree[e.to] > 0) pred[e.to].push_back({v, e.kind});
      }
    }
    uint32_t start = 0;
    while (indegree[start] == 0) ++start;
    std::vector<int64_t> visited_at(v_, -1);
    std::vector<uint32_t> walk;  // vertices, walking backwards along edges
    uint32_t v = start;
    while (visited_at[v] < 0) {
      visited_at[v] = static_cast<int64_t>(walk.size());
      walk.push_back(v);
      v = pred[v].front().to;
    }
    // The cycle is walk[visited_at[v]..], reversed into data-flow order:
    // cycle[k] -> cycle[k+1], and the last back to cycle[0], are edges.
    std::vector<uint32_t> cycle(walk.begin() + visited_at[v], walk.end());
    std::reverse(cycle.begin(), cycle.end());
    std::string path;
    for (size_t k = 0; k < cycle.size(); ++k) {
      const uint32_t next = cycle[(k + 1) % cycle.size()];
      EdgeKind kind = EdgeKind::kWait;
      for (const Edge& e : succ_[cycle[k]]) {
        if (used(e) && e.to == next) kind = e.kind;
      }
      path += InstanceName(cycle[k]) + " -(" + EdgeText(kind) + ")-> ";
    }
    path += InstanceName(cycle[0]);
    if (!with_limit) return Fail("deadlock: the schedule has a cycle: " + path);
    return Fail("deadlock through the in-flight limit (D = " + std::to_string(in_flight_) +
                "): the stream cannot progress, so the executor would have to flush it and "
                "the plan would not pipeline; raise inferences_in_flight above the stages a "
                "queue spans, or reorder its program: " +
                path);
  }

  void BuildReachability() {
    words_ = (v_ + 63) / 64;
    reach_.assign(size_t{v_} * words_, 0);
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
      uint64_t* row = &reach_[size_t{*it} * words_];
      for (const Edge& e : succ_[*it]) {
        const uint64_t* other = &reach_[size_t{e.to} * words_];
        for (size_t w = 0; w < words_; ++w) row[w] |= other[w];
        row[e.to / 64] |= uint64_t{1} << (e.to % 64);
      }
    }
  }

  bool HappensBefore(uint32_t a, uint32_t b) const {
    return (reach_[size_t{a} * words_ + b / 64] >> (b % 64)) & 1;
  }

  // --- 3./4. accesses ---------------------------------------------------------
  void BuildAccesses() {
    accesses_.clear();
    for (uint32_t i = 0; i < n_; ++i) {
      for (uint32_t n = 0; n < num_nodes_; ++n) {
        const schema::Node* nd = node(n);
        const uint32_t v = NodeInstance(n, i);
        if (nd->inputs() != nullptr) {
          for (int32_t t : *nd->inputs()) {
            if (t >= 0) AddAccess(v, static_cast<uint32_t>(t), i, false);
          }
        }
        if (nd->outputs() != nullptr) {
          for (uint32_t t : *nd->outputs()) AddAccess(v, t, i, true);
        }
        if (nd->workspace() != nullptr) {
          for (uint32_t t : *nd->workspace()) AddAccess(v, t, i, true);
        }
      }
      if (plan_->inputs() != nullptr) {
        for (uint32_t t : *plan_->inputs()) AddAccess(WriteInstance(i), t, i, true);
      }
      if (plan_->outputs() != nullptr) {
        for (uint32_t t : *plan_->outputs()) AddAccess(ReadInstance(i), t, i, false);
      }
    }
    if (report_ != nullptr) report_->accesses = accesses_.size();
  }

  // One instance's accesses are added together; a tensor read (or written)
  // twice by one instance counts once.
  void AddAccess(uint32_t instance, uint32_t t, uint32_t i, bool write) {
    for (auto it = accesses_.rbegin(); it != accesses_.rend() && it->instance == instance; ++it) {
      if (it->tensor == t && it->write == write) return;
    }
    const schema::Tensor* ten = tensor(t);
    if (ten->storage() != schema::Storage::Arena) return;
    Access a;
    a.instance = instance;
    a.tensor = t;
    a.domain = ten->domain();
    a.begin = ten->offset() + uint64_t{i % ten->slots()} * ten->slot_stride();
    a.end = a.begin + ten->bytes();
    a.write = write;
    a.writer = -1;
    if (!write) {
      if (writer_[t] == kCallerWrites)
        a.writer = WriteInstance(i);
      else if (writer_[t] >= 0)
        a.writer = NodeInstance(static_cast<uint32_t>(writer_[t]), i);
    }
    accesses_.push_back(a);
  }

  Check CheckAccesses() {
    // Read-before-write, part one: every read has a writer that happens
    // before it.
    for (const Access& a : accesses_) {
      if (a.write) continue;
      if (a.writer < 0) {
        return Fail("read before write: " + InstanceName(a.instance) + " reads tensor '" +
                    TensorName(a.tensor) +
                    "', which no node writes and which is not a graph input");
      }
    }
    std::vector<size_t> sorted(accesses_.size());
    for (size_t k = 0; k < sorted.size(); ++k) sorted[k] = k;
    std::sort(sorted.begin(), sorted.end(), [this](size_t x, size_t y) {
      const Access& a = accesses_[x];
      const Access& b = accesses_[y];
      return std::tie(a.domain, a.begin, x) < std::tie(b.domain, b.begin, y);
    });
    // The reported violation is the one with the earliest inferences, so the
    // message describes the first thing that goes wrong.
    using Key = std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>;
    bool have_race = false, have_overwrite = false;
    Key race_key{}, overwrite_key{};
    std::string race_text, overwrite_text;
    size_t pairs = 0;
    for (size_t x = 0; x < sorted.size(); ++x) {
      const Access& a = accesses_[sorted[x]];
      for (size_t y = x + 1; y < sorted.size(); ++y) {
        const Access& b = accesses_[sorted[y]];
        if (b.domain != a.domain || b.begin >= a.end) break;
        if (a.instance == b.instance || (!a.write && !b.write) || b.end <= b.begin) continue;
        ++pairs;
        const uint32_t ia = InferenceOf(a.instance), ib = InferenceOf(b.instance);
        const Key key{std::min(ia, ib), std::max(ia, ib), std::min(a.instance, b.instance),
                      std::max(a.instance, b.instance)};
        const bool ab = HappensBefore(a.instance, b.instance);
        const bool ba = HappensBefore(b.instance, a.instance);
        if (!ab && !ba) {
          if (!have_race || key < race_key) {
            have_race = true;
            race_key = key;
            race_text = "race: " + InstanceName(a.instance) + " " + AccessText(a) + " and " +
                        InstanceName(b.instance) + " " + AccessText(b) +
                        " are not ordered by happens-before (a missing wait, too few slots, or "
                        "overlapping tensors)";
          }
          continue;
        }
        // Overwrite between a read and its writer: writer -> w -> read.
        for (int orient = 0; orient < 2; ++orient) {
          const Access& w = orient == 0 ? a : b;
          const Access& r = orient == 0 ? b : a;
          if (!w.write || r.write || r.writer < 0 || static_cast<int64_t>(w.instance) == r.writer) {
            continue;
          }
          const uint32_t pw = static_cast<uint32_t>(r.writer);
          if (HappensBefore(w.instance, r.instance) && HappensBefore(pw, w.instance)) {
            if (!have_overwrite || key < overwrite_key) {
              have_overwrite = true;
              overwrite_key = key;
              overwrite_text = "read before write: " + InstanceName(r.instance) + " " +
                               AccessText(r) + ", but " + InstanceName(w.instance) + " " +
                               AccessText(w) + " after " + InstanceName(pw) + " wrote it";
            }
          }
        }
      }
    }
    if (report_ != nullptr) report_->pairs_checked = pairs;
    if (have_race) return Fail(race_text);
    for (const Access& a : accesses_) {
      if (a.write || HappensBefore(static_cast<uint32_t>(a.writer), a.instance)) continue;
      return Fail("read before write: " + InstanceName(a.instance) + " " + AccessText(a) +
                  ", but its writer " + InstanceName(static_cast<uint32_t>(a.writer)) +
                  " does not happen before it");
    }
    if (have_overwrite) return Fail(overwrite_text);
    return Check();
  }

  static constexpr int64_t kCallerWrites = -2;

  const schema::Plan* plan_;
  ValidateReport* report_;
  uint32_t num_domains_ = 0, num_queues_ = 0, num_tensors_ = 0, num_nodes_ = 0;
  uint32_t in_flight_ = 1, max_stage_ = 0, max_slots_ = 1;
  std::vector<int64_t> writer_;  // per tensor: node, kCallerWrites or -1
  uint32_t n_ = 0;               // inferences unrolled
  uint32_t v_ = 0;               // instances
  size_t edges_ = 0;
  std::vector<std::vector<Edge>> succ_;
  std::vector<uint32_t> order_;
  size_t words_ = 0;
  std::vector<uint64_t> reach_;
  std::vector<Access> accesses_;
};

}  // namespace

Check ValidatePlanSchedule(const void* data, size_t size, int inferences, ValidateReport* out) {
  if (out != nullptr) *out = ValidateReport();
  if (data == nullptr || size < 8) return Fail("plan is empty or truncated");
  // FlatBuffers reads scalars in place; give it an aligned copy when needed.
  std::vector<uint64_t> copy;
  const uint8_t* bytes = static_cast<const uint8_t*>(data);
  if (reinterpret_cast<uintptr_t>(data) % 16 != 0) {
    copy.resize((size + 7) / 8 + 1);
    // vector<uint64_t> storage is 16-byte aligned with glibc's operator new.
    std::memcpy(copy.data(), data, size);
    bytes = reinterpret_cast<const uint8_t*>(copy.data());
  }
  if (!schema::PlanBufferHasIdentifier(bytes)) {
    return Fail("not a Baton plan (file identifier is not BTN1)");
  }
  flatbuffers::Verifier verifier(bytes, size);
  if (!schema::VerifyPlanBuffer(verifier)) {
    return Fail("plan failed FlatBuffers verification (corrupt or truncated)");
  }
  Validator validator(schema::GetPlan(bytes), out);
  return validator.Run(inferences);
}

}  // namespace baton::planner
