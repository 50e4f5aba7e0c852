// Simulate(): the execution model of sim.h on a virtual clock, and the
// metrics of the run. The renderers are in sim_render.cc.
#include "baton/planner/analysis/sim.h"

#include <algorithm>
#include <utility>

#include "baton/planner/analysis/cost.h"
#include "baton/planner/analysis/inspect.h"

namespace baton::planner {
namespace {

constexpr double kUnknown = -1;
// From this many inferences on, throughput is measured over the middle half.
constexpr uint32_t kSteadyMin = 8;

// The inferences [base, end) of one stream (executor.h). Iterations count
// from base; end is N until the stream is flushed.
struct Stream {
  uint32_t base = 0;
  uint32_t end = 0;
};

// Where each queue is in its program. A queue runs its instances (n, i) in
// (iteration i + stage, position) order; instances outside the current stream
// are skipped.
class QueueCursors {
 public:
  explicit QueueCursors(const PlanView& view)
      : view_(view), cursors_(view.num_queues()), stage_max_(view.num_queues(), 0) {
    for (uint32_t q = 0; q < view.num_queues(); ++q) {
      const auto* program = view.queue(q)->nodes();
      for (uint32_t p = 0; program != nullptr && p < program->size(); ++p) {
        stage_max_[q] = std::max(stage_max_[q], view.node(program->Get(p))->stage());
      }
    }
  }

  // Every queue back to its first iteration, for a new stream.
  void Restart() { cursors_.assign(view_.num_queues(), Cursor()); }

  // The next instance queue q runs in `stream`, skipping instances outside
  // it. False when the queue is done with the stream.
  bool Peek(uint32_t q, const Stream& stream, uint32_t* out_node, uint32_t* out_inference) {
    const auto* program = view_.queue(q)->nodes();
    const uint32_t len = program ? program->size() : 0;
    if (len == 0 || stream.end <= stream.base) return false;
    const uint64_t last = uint64_t{stream.end - 1 - stream.base} + stage_max_[q];
    Cursor& c = cursors_[q];
    while (c.iteration <= last) {
      const uint32_t n = program->Get(c.position);
      const int64_t i =
          int64_t{stream.base} + static_cast<int64_t>(c.iteration) - view_.node(n)->stage();
      if (i >= stream.base && i < stream.end) {
        *out_node = n;
        *out_inference = static_cast<uint32_t>(i);
        return true;
      }
      Advance(q);
    }
    return false;
  }

  void Advance(uint32_t q) {
    Cursor& c = cursors_[q];
    if (++c.position == view_.queue(q)->nodes()->size()) {
      c.position = 0;
      ++c.iteration;
    }
  }

 private:
  struct Cursor {
    uint64_t iteration = 0;  // relative to the stream's first inference
    uint32_t position = 0;
  };

  const PlanView& view_;
  std::vector<Cursor> cursors_;
  std::vector<uint32_t> stage_max_;
};

// The caller: admits inferences in order as soon as the in-flight limit D
// allows (inference i once i - D was retrieved; a new stream's first one once
// the previous stream was retrieved), and retrieves each inference, in order,
// as soon as it has finished. Caller work takes no time.
class Caller {
 public:
  Caller(uint32_t in_flight, uint32_t inferences)
      : in_flight_(in_flight),
        admitted_(inferences, kUnknown),
        finished_(inferences, kUnknown),
        retrieved_(inferences, kUnknown) {}

  bool admitted(uint32_t i) const { return admitted_[i] != kUnknown; }
  double admitted_at(uint32_t i) const { return admitted_[i]; }
  uint32_t next_admitted() const { return admitted_next_; }
  uint32_t next_retrieved() const { return retrieved_next_; }
  const std::vector<double>& admitted_s() const { return admitted_; }
  const std::vector<double>& finished_s() const { return finished_; }

  void Admit(const Stream& stream) {
    while (admitted_next_ < stream.end) {
      const uint32_t i = admitted_next_;
      double t = i == 0 ? 0 : admitted_[i - 1];
      if (i >= in_flight_) {
        if (retrieved_[i - in_flight_] == kUnknown) return;
        t = std::max(t, retrieved_[i - in_flight_]);
      }
      if (i == stream.base && i > 0) t = std::max(t, retrieved_[i - 1]);
      admitted_[i] = t;
      ++admitted_next_;
    }
  }

  // Inference i finished at `at`: retrieves what is now in order, then
  // admits what that allows.
  void Finish(uint32_t i, double at, const Stream& stream) {
    finished_[i] = at;
    while (retrieved_next_ < finished_.size() && finished_[retrieved_next_] != kUnknown) {
      const double previous = retrieved_next_ == 0 ? 0 : retrieved_[retrieved_next_ - 1];
      retrieved_[retrieved_next_] = std::max(previous, finished_[retrieved_next_]);
      ++retrieved_next_;
    }
    Admit(stream);
  }

 private:
  uint32_t in_flight_;
  std::vector<double> admitted_;
  std::vector<double> finished_;
  std::vector<double> retrieved_;
  uint32_t admitted_next_ = 0;
  uint32_t retrieved_next_ = 0;
};

// Queue names, makespan, busy time and utilization.
void SummarizeQueues(const PlanView& view, const std::vector<double>& seconds, SimResult* r) {
  const uint32_t num_queues = view.num_queues();
  for (uint32_t q = 0; q < num_queues; ++q) r->queue_names.push_back(view.queue(q)->name()->str());
  r->queue_busy_s.assign(num_queues, 0);
  for (const SimInstance& s : r->instances) {
    r->makespan_s = std::max(r->makespan_s, s.end_s);
    r->queue_busy_s[s.queue] += seconds[s.node];
  }
  for (uint32_t q = 0; q < num_queues; ++q) {
    r->utilization.push_back(r->makespan_s > 0 ? r->queue_busy_s[q] / r->makespan_s : 0);
  }
}

// Per node: name, op, queue and duration; and the bound the busiest queue
// sets on throughput.
void SummarizeNodes(const PlanView& view, const std::vector<double>& seconds, SimResult* r) {
  std::vector<double> per_inference(view.num_queues(), 0);
  for (uint32_t n = 0; n < view.num_nodes(); ++n) {
    const schema::Node* node = view.node(n);
    r->node_names.push_back(node->name()->str());
    r->node_ops.push_back(PlanNodeOpName(*node));
    r->node_queue.push_back(node->queue());
    r->node_stage.push_back(node->stage());
    // Every instance of a node takes the same time in this model; the
    // cost itself avoids the rounding noise of end - start.
    r->node_duration_s.push_back(seconds[n]);
    per_inference[node->queue()] += seconds[n];
  }
  const double busiest = *std::max_element(per_inference.begin(), per_inference.end());
  r->bound_throughput_per_s = busiest > 0 ? 1 / busiest : 0;
}

// Throughput and latency, from admission and finish times.
void SummarizeRates(SimResult* r) {
  const uint32_t n = r->inferences;
  // Steady state: the rate between finishes, over the middle half of the
  // stream once it is long enough, so that neither the pipeline fill nor
  // the drain (when queues no longer interleave later inferences) biases it.
  const uint32_t first = n >= kSteadyMin ? n / 4 : 0;
  const uint32_t last = n >= kSteadyMin ? n - 1 - n / 4 : n - 1;
  const double span = r->finished_s[last] - r->finished_s[first];
  if (last > first && span > 0) {
    r->throughput_per_s = (last - first) / span;
  } else {
    r->throughput_per_s = r->makespan_s > 0 ? n / r->makespan_s : 0;
  }
  double sum = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const double latency = r->finished_s[i] - r->admitted_s[i];
    sum += latency;
    r->latency_max_s = std::max(r->latency_max_s, latency);
  }
  r->latency_mean_s = sum / n;
}

// Event-driven evaluation of the execution model. Every instance's start time
// is a max over already-known times, so resolving instances in any order that
// respects the dependencies gives the same answer; queues are visited in
// index order for determinism.
//
// Streams (executor.h): when the caller cannot submit because the oldest
// inference can only finish once later inferences arrive (a queue running a
// later stage after an earlier one in its program, with too few inferences in
// flight), the executor flushes: the stream ends after the inferences already
// submitted, and the next inference starts a new stream (iterations counted
// from 0 again) once every inference of the old one was retrieved.
class Simulator {
 public:
  Simulator(const PlanView& view, std::vector<double> seconds, uint32_t inferences)
      : view_(view),
        seconds_(std::move(seconds)),
        n_(inferences),
        cursors_(view),
        caller_(view.in_flight(), inferences),
        end_(size_t{inferences} * view.num_nodes(), kUnknown),
        remaining_(inferences, view.num_nodes()),
        free_at_(view.num_queues(), 0),
        stream_{0, inferences} {}

  Result<SimResult> Run() {
    caller_.Admit(stream_);
    while (caller_.next_retrieved() < n_) {
      if (RunReady() || StartNextStream() || FlushIfBlocked()) continue;
      return Fail(DeadlockText());
    }
    result_.inferences = n_;
    result_.admitted_s = caller_.admitted_s();
    result_.finished_s = caller_.finished_s();
    SummarizeQueues(view_, seconds_, &result_);
    SummarizeNodes(view_, seconds_, &result_);
    SummarizeRates(&result_);
    // Instances ordered by queue, then start (each queue's are already in order).
    std::stable_sort(result_.instances.begin(), result_.instances.end(),
                     [](const SimInstance& a, const SimInstance& b) { return a.queue < b.queue; });
    return std::move(result_);
  }

 private:
  size_t Index(uint32_t n, uint32_t i) const { return size_t{i} * view_.num_nodes() + n; }

  // Runs, queue by queue, every next instance whose predecessors are all
  // known. False when none could run.
  bool RunReady() {
    bool progress = false;
    for (uint32_t q = 0; q < view_.num_queues(); ++q) {
      uint32_t n = 0, i = 0;
      double start = 0;
      while (cursors_.Peek(q, stream_, &n, &i) && ReadyAt(n, i, &start)) {
        RunInstance(q, n, i, std::max(start, free_at_[q]));
        progress = true;
      }
    }
    return progress;
  }

  // True when every predecessor of (n, i) is known; *out = the latest of them.
  bool ReadyAt(uint32_t n, uint32_t i, double* out) const {
    if (!caller_.admitted(i)) return false;
    double t = caller_.admitted_at(i);
    const auto* waits = view_.node(n)->waits();
    if (waits != nullptr) {
      for (const schema::Wait* w : *waits) {
        if (w->lag() > i) continue;
        const double e = end_[Index(w->node(), i - w->lag())];
        if (e == kUnknown) return false;
        t = std::max(t, e);
      }
    }
    *out = t;
    return true;
  }

  void RunInstance(uint32_t q, uint32_t n, uint32_t i, double start) {
    const double end = start + seconds_[n];
    end_[Index(n, i)] = end;
    free_at_[q] = end;
    result_.instances.push_back({q, n, i, start, end});
    cursors_.Advance(q);
    if (--remaining_[i] > 0) return;
    double last = 0;
    for (uint32_t m = 0; m < view_.num_nodes(); ++m) last = std::max(last, end_[Index(m, i)]);
    caller_.Finish(i, last, stream_);
  }

  // Every inference of a flushed stream is back: start the next one.
  bool StartNextStream() {
    if (caller_.next_retrieved() != stream_.end || stream_.end >= n_) return false;
    stream_ = {stream_.end, n_};
    cursors_.Restart();
    caller_.Admit(stream_);
    return true;
  }

  // The caller cannot submit the next inference while a queue waits for it:
  // end the stream after the inferences already submitted.
  bool FlushIfBlocked() {
    const uint32_t next = caller_.next_admitted();
    if (stream_.end != n_ || next >= n_ || next <= caller_.next_retrieved()) return false;
    if (!AdmissionBlocked()) return false;
    stream_.end = next;
    ++result_.flushes;
    return true;
  }

  // Some queue waits for an inference the caller could not submit.
  bool AdmissionBlocked() {
    for (uint32_t q = 0; q < view_.num_queues(); ++q) {
      uint32_t n = 0, i = 0;
      if (cursors_.Peek(q, stream_, &n, &i) && !caller_.admitted(i)) return true;
    }
    return false;
  }

  std::string DeadlockText() {
    std::string text = "deadlock: the schedule cannot finish";
    for (uint32_t q = 0; q < view_.num_queues(); ++q) {
      uint32_t n = 0, i = 0;
      if (!cursors_.Peek(q, stream_, &n, &i)) continue;
      text += "; queue '" + view_.queue(q)->name()->str() + "' is stuck before node '" +
              view_.node(n)->name()->str() + "' for inference " + std::to_string(i);
      if (!caller_.admitted(i)) {
        text += " (not admitted)";
        continue;
      }
      if (view_.node(n)->waits() == nullptr) continue;
      for (const schema::Wait* w : *view_.node(n)->waits()) {
        if (w->lag() > i || end_[Index(w->node(), i - w->lag())] != kUnknown) continue;
        text += " (waits for node '" + view_.node(w->node())->name()->str() + "' inference " +
                std::to_string(i - w->lag()) + ")";
        break;
      }
    }
    return text;
  }

  const PlanView& view_;
  std::vector<double> seconds_;
  uint32_t n_;
  QueueCursors cursors_;
  Caller caller_;
  std::vector<double> end_;          // per (node, inference)
  std::vector<uint32_t> remaining_;  // node instances left per inference
  std::vector<double> free_at_;      // per queue: when it finishes its last instance
  Stream stream_;
  SimResult result_;
};

}  // namespace

Result<SimResult> Simulate(const PlanView& view, const Target& target, uint32_t inferences) {
  if (!view.loaded()) return Fail("simulate: the plan is not loaded");
  if (inferences == 0) return Fail("the number of inferences must be at least 1");
  const uint64_t instances = uint64_t{inferences} * view.num_nodes();
  if (instances > kMaxSimInstances) {
    return Fail(std::to_string(inferences) + " inferences of " + std::to_string(view.num_nodes()) +
                " nodes are " + std::to_string(instances) + " node instances, more than " +
                std::to_string(kMaxSimInstances) + "; simulate fewer inferences");
  }
  BATON_ASSIGN_OR_RETURN(std::vector<double> seconds, NodeSeconds(*view.plan(), target));
  Simulator sim(view, std::move(seconds), inferences);
  return sim.Run();
}

}  // namespace baton::planner
