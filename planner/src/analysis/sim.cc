#include "baton/planner/analysis/sim.h"

#include <algorithm>
#include <set>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "baton/planner/analysis/cost.h"
#include "baton/planner/analysis/inspect.h"

namespace baton::planner {
namespace {

using ojson = nlohmann::ordered_json;

constexpr double kUnknown = -1;
// From this many inferences on, throughput is measured over the middle half.
constexpr uint32_t kSteadyMin = 8;

std::string Format(const char* fmt, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), fmt, value);
  return buffer;
}

std::string XmlEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
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
      : view_(view), seconds_(std::move(seconds)), n_(inferences) {}

  Result<SimResult> Run() {
    const uint32_t num_queues = view_.num_queues();
    const uint32_t num_nodes = view_.num_nodes();
    end_.assign(size_t{n_} * num_nodes, kUnknown);
    remaining_.assign(n_, num_nodes);
    result_.inferences = n_;
    result_.admitted_s.assign(n_, kUnknown);
    result_.finished_s.assign(n_, kUnknown);
    retrieved_.assign(n_, kUnknown);
    cursors_.assign(num_queues, Cursor());
    stage_max_.assign(num_queues, 0);
    for (uint32_t q = 0; q < num_queues; ++q) {
      const auto* program = view_.queue(q)->nodes();
      for (uint32_t p = 0; program != nullptr && p < program->size(); ++p) {
        stage_max_[q] = std::max(stage_max_[q], view_.node(program->Get(p))->stage());
      }
    }
    std::vector<double> free_at(num_queues, 0);
    stream_base_ = 0;
    stream_end_ = n_;
    Admit();
    while (retrieved_next_ < n_) {
      bool progress = false;
      for (uint32_t q = 0; q < num_queues; ++q) {
        uint32_t n = 0, i = 0;
        while (Peek(q, &n, &i)) {
          double start = 0;
          if (!ReadyAt(n, i, &start)) break;
          start = std::max(start, free_at[q]);
          const double end = start + seconds_[n];
          end_[Index(n, i)] = end;
          free_at[q] = end;
          result_.instances.push_back({q, n, i, start, end});
          Advance(q);
          progress = true;
          if (--remaining_[i] == 0) Finish(i);
        }
      }
      if (progress) continue;
      if (retrieved_next_ == stream_end_ && stream_end_ < n_) {
        // Every inference of the flushed stream is back: start the next one.
        stream_base_ = stream_end_;
        stream_end_ = n_;
        cursors_.assign(num_queues, Cursor());
        Admit();
        continue;
      }
      if (stream_end_ == n_ && admitted_next_ < n_ && admitted_next_ > retrieved_next_ &&
          AdmissionBlocked()) {
        stream_end_ = admitted_next_;
        ++result_.flushes;
        continue;
      }
      return Fail(DeadlockText());
    }
    Summarize();
    return std::move(result_);
  }

 private:
  struct Cursor {
    uint64_t iteration = 0;  // relative to the stream's first inference
    uint32_t position = 0;
  };

  size_t Index(uint32_t n, uint32_t i) const { return size_t{i} * view_.num_nodes() + n; }

  // The next instance queue q runs in the current stream, skipping instances
  // outside it. False when the queue is done with the stream.
  bool Peek(uint32_t q, uint32_t* out_node, uint32_t* out_inference) {
    const auto* program = view_.queue(q)->nodes();
    const uint32_t len = program ? program->size() : 0;
    if (len == 0 || stream_end_ <= stream_base_) return false;
    const uint64_t last = uint64_t{stream_end_ - 1 - stream_base_} + stage_max_[q];
    Cursor& c = cursors_[q];
    while (c.iteration <= last) {
      const uint32_t n = program->Get(c.position);
      const int64_t i =
          int64_t{stream_base_} + static_cast<int64_t>(c.iteration) - view_.node(n)->stage();
      if (i >= stream_base_ && i < stream_end_) {
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

  // True when every predecessor of (n, i) is known; *out = the latest of them.
  bool ReadyAt(uint32_t n, uint32_t i, double* out) const {
    if (result_.admitted_s[i] == kUnknown) return false;
    double t = result_.admitted_s[i];
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

  // Some queue waits for an inference the caller could not submit.
  bool AdmissionBlocked() {
    for (uint32_t q = 0; q < view_.num_queues(); ++q) {
      uint32_t n = 0, i = 0;
      if (Peek(q, &n, &i) && result_.admitted_s[i] == kUnknown) return true;
    }
    return false;
  }

  void Finish(uint32_t i) {
    double last = 0;
    for (uint32_t n = 0; n < view_.num_nodes(); ++n) last = std::max(last, end_[Index(n, i)]);
    result_.finished_s[i] = last;
    // Retrieve in order, as soon as possible.
    while (retrieved_next_ < n_ && result_.finished_s[retrieved_next_] != kUnknown) {
      const double previous = retrieved_next_ == 0 ? 0 : retrieved_[retrieved_next_ - 1];
      retrieved_[retrieved_next_] = std::max(previous, result_.finished_s[retrieved_next_]);
      ++retrieved_next_;
    }
    Admit();
  }

  // Submits inferences in order as soon as the in-flight limit allows (and,
  // after a flush, once the new stream has started).
  void Admit() {
    const uint32_t in_flight = view_.in_flight();
    while (admitted_next_ < stream_end_) {
      const uint32_t i = admitted_next_;
      double t = i == 0 ? 0 : result_.admitted_s[i - 1];
      if (i >= in_flight) {
        if (retrieved_[i - in_flight] == kUnknown) return;
        t = std::max(t, retrieved_[i - in_flight]);
      }
      if (i == stream_base_ && i > 0) t = std::max(t, retrieved_[i - 1]);
      result_.admitted_s[i] = t;
      ++admitted_next_;
    }
  }

  std::string DeadlockText() {
    std::string text = "deadlock: the schedule cannot finish";
    for (uint32_t q = 0; q < view_.num_queues(); ++q) {
      uint32_t n = 0, i = 0;
      if (!Peek(q, &n, &i)) continue;
      text += "; queue '" + view_.queue(q)->name()->str() + "' is stuck before node '" +
              view_.node(n)->name()->str() + "' for inference " + std::to_string(i);
      if (result_.admitted_s[i] == kUnknown) {
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

  void Summarize() {
    const uint32_t num_queues = view_.num_queues();
    const uint32_t num_nodes = view_.num_nodes();
    SimResult& r = result_;
    for (uint32_t q = 0; q < num_queues; ++q)
      r.queue_names.push_back(view_.queue(q)->name()->str());
    r.queue_busy_s.assign(num_queues, 0);
    for (const SimInstance& s : r.instances) {
      r.makespan_s = std::max(r.makespan_s, s.end_s);
      r.queue_busy_s[s.queue] += seconds_[s.node];
    }
    std::vector<double> per_inference(num_queues, 0);
    for (uint32_t n = 0; n < num_nodes; ++n) {
      const schema::Node* node = view_.node(n);
      r.node_names.push_back(node->name()->str());
      r.node_ops.push_back(PlanOpName(node->op()));
      r.node_queue.push_back(node->queue());
      r.node_stage.push_back(node->stage());
      // Every instance of a node takes the same time in this model; the
      // cost itself avoids the rounding noise of end - start.
      r.node_duration_s.push_back(seconds_[n]);
      per_inference[node->queue()] += seconds_[n];
    }
    for (uint32_t q = 0; q < num_queues; ++q) {
      r.utilization.push_back(r.makespan_s > 0 ? r.queue_busy_s[q] / r.makespan_s : 0);
    }
    const double busiest = *std::max_element(per_inference.begin(), per_inference.end());
    r.bound_throughput_per_s = busiest > 0 ? 1 / busiest : 0;
    // Steady state: the rate between finishes, over the middle half of the
    // stream once it is long enough, so that neither the pipeline fill nor
    // the drain (when queues no longer interleave later inferences) biases it.
    const uint32_t first = n_ >= kSteadyMin ? n_ / 4 : 0;
    const uint32_t last = n_ >= kSteadyMin ? n_ - 1 - n_ / 4 : n_ - 1;
    const double span = r.finished_s[last] - r.finished_s[first];
    if (last > first && span > 0) {
      r.throughput_per_s = (last - first) / span;
    } else {
      r.throughput_per_s = r.makespan_s > 0 ? n_ / r.makespan_s : 0;
    }
    double sum = 0;
    for (uint32_t i = 0; i < n_; ++i) {
      const double latency = r.finished_s[i] - r.admitted_s[i];
      sum += latency;
      r.latency_max_s = std::max(r.latency_max_s, latency);
    }
    r.latency_mean_s = sum / n_;
    // Instances ordered by queue, then start (each queue's are already in order).
    std::stable_sort(r.instances.begin(), r.instances.end(),
                     [](const SimInstance& a, const SimInstance& b) { return a.queue < b.queue; });
  }

  const PlanView& view_;
  std::vector<double> seconds_;
  uint32_t n_;
  std::vector<double> end_;          // per (node, inference)
  std::vector<uint32_t> remaining_;  // node instances left per inference
  std::vector<double> retrieved_;
  std::vector<Cursor> cursors_;
  std::vector<uint32_t> stage_max_;
  uint32_t stream_base_ = 0;  // first inference of the current stream
  uint32_t stream_end_ = 0;   // one past its last (n_ until flushed)
  uint32_t retrieved_next_ = 0;
  uint32_t admitted_next_ = 0;
  SimResult result_;
};

// A "nice" axis step (1, 2 or 5 times a power of ten) for about `ticks` ticks.
double NiceStep(double span, int ticks) {
  if (!(span > 0)) return 1;
  const double raw = span / ticks;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * power >= raw) return m * power;
  }
  return 10 * power;
}

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

std::string SimJson(const SimResult& r) {
  ojson root;
  root["inferences"] = r.inferences;
  root["throughput_per_s"] = r.throughput_per_s;
  root["bound_throughput_per_s"] = r.bound_throughput_per_s;
  root["latency_s"] = {{"mean", r.latency_mean_s}, {"max", r.latency_max_s}};
  root["utilization"] = ojson::object();
  for (size_t q = 0; q < r.queue_names.size(); ++q)
    root["utilization"][r.queue_names[q]] = r.utilization[q];
  root["nodes"] = ojson::array();
  for (size_t n = 0; n < r.node_names.size(); ++n) {
    ojson node;
    node["id"] = n;
    node["queue"] = r.queue_names[r.node_queue[n]];
    node["duration_s"] = r.node_duration_s[n];
    root["nodes"].push_back(node);
  }
  return root.dump(2) + "\n";
}

std::string SimText(const SimResult& r) {
  std::string out;
  out += "simulated " + std::to_string(r.inferences) +
         (r.inferences == 1 ? " inference" : " inferences") + " on " +
         std::to_string(r.queue_names.size()) + " queues: makespan " +
         Format("%.3f", r.makespan_s * 1e3) + " ms\n";
  out += "  throughput  " + Format("%.2f", r.throughput_per_s) + " inferences/s (bound " +
         Format("%.2f", r.bound_throughput_per_s) + "/s";
  if (r.bound_throughput_per_s > 0) {
    out += ", " + Format("%.1f", 100 * r.throughput_per_s / r.bound_throughput_per_s) + "% of it";
  }
  out += ")\n";
  if (r.flushes > 0) {
    out += "  flushes     " + std::to_string(r.flushes) +
           " (the caller had to end the stream: the plan cannot pipeline with " +
           "this many inferences in flight)\n";
  }
  out += "  latency     mean " + Format("%.3f", r.latency_mean_s * 1e3) + " ms, max " +
         Format("%.3f", r.latency_max_s * 1e3) + " ms\n";
  out += "  utilization\n";
  size_t width = 0;
  for (const std::string& q : r.queue_names) width = std::max(width, q.size());
  for (size_t q = 0; q < r.queue_names.size(); ++q) {
    out += "    " + r.queue_names[q] + std::string(width - r.queue_names[q].size() + 2, ' ') +
           Format("%5.1f", 100 * r.utilization[q]) + "%  busy " +
           Format("%.3f", r.queue_busy_s[q] * 1e3) + " ms\n";
  }
  out += "  nodes (duration per inference)\n";
  width = 0;
  for (const std::string& n : r.node_names) width = std::max(width, n.size());
  for (size_t n = 0; n < r.node_names.size(); ++n) {
    out += "    " + r.node_names[n] + std::string(width - r.node_names[n].size() + 2, ' ') +
           Format("%10.3f", r.node_duration_s[n] * 1e6) + " us  " + r.queue_names[r.node_queue[n]] +
           "  " + r.node_ops[n] + "\n";
  }
  return out;
}

std::string ChromeTrace(const SimResult& r) {
  ojson events = ojson::array();
  events.push_back({{"name", "process_name"},
                    {"ph", "M"},
                    {"pid", 0},
                    {"tid", 0},
                    {"args", {{"name", "baton sim"}}}});
  for (size_t q = 0; q < r.queue_names.size(); ++q) {
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", 0},
                      {"tid", q},
                      {"args", {{"name", r.queue_names[q]}}}});
    events.push_back({{"name", "thread_sort_index"},
                      {"ph", "M"},
                      {"pid", 0},
                      {"tid", q},
                      {"args", {{"sort_index", q}}}});
  }
  for (const SimInstance& s : r.instances) {
    ojson e;
    e["name"] = r.node_names[s.node];
    e["cat"] = r.node_ops[s.node];
    e["ph"] = "X";
    e["ts"] = s.start_s * 1e6;
    e["dur"] = (s.end_s - s.start_s) * 1e6;
    e["pid"] = 0;
    e["tid"] = s.queue;
    e["args"] = {{"inference", s.inference}, {"node", s.node}};
    events.push_back(e);
  }
  ojson root;
  root["traceEvents"] = events;
  root["displayTimeUnit"] = "ms";
  return root.dump() + "\n";
}

namespace {

// The steady-state window the chart shows: from the first start of the
// middle inference over `count` periods (at least its own latency), so a
// few inferences overlap at a scale where every node is visible.
std::pair<double, double> GanttWindow(const SimResult& r, uint32_t count) {
  if (r.inferences < 4 || r.throughput_per_s <= 0) return {0.0, r.makespan_s};
  const uint32_t mid = r.inferences / 2;
  double start = r.makespan_s, end = 0;
  for (const SimInstance& s : r.instances) {
    if (s.inference != mid) continue;
    start = std::min(start, s.start_s);
    end = std::max(end, s.end_s);
  }
  const double period = 1.0 / r.throughput_per_s;
  end = std::max(end, start + count * period);
  return {start, std::min(end, r.makespan_s)};
}

}  // namespace

std::string GanttSvg(const SimResult& r) {
  static const char* const kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                         "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
  static const char* const kStageColors[] = {"#222222", "#888888", "#d62728", "#1f77b4",
                                             "#2ca02c", "#9467bd", "#8c564b", "#e377c2"};
  constexpr int kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);
  constexpr int kStageSize = sizeof(kStageColors) / sizeof(kStageColors[0]);
  constexpr double kLeft = 100, kRight = 30, kTop = 56, kRow = 36, kBox = 24;
  const auto [t0, t1] = GanttWindow(r, 3);
  const double span_ms = (t1 - t0) * 1e3;
  // Wide enough that the shortest node in the window is at least 3 px.
  double shortest = 0;
  for (const SimInstance& s : r.instances) {
    if (s.end_s <= t0 || s.start_s >= t1 || s.end_s <= s.start_s) continue;
    const double d = s.end_s - s.start_s;
    if (shortest == 0 || d < shortest) shortest = d;
  }
  double plot = 1000;
  if (shortest > 0 && span_ms > 0) plot = std::clamp(3.0 * span_ms / (shortest * 1e3), 1000.0, 6000.0);
  const double scale = span_ms > 0 ? plot / span_ms : 0;
  const double rows = static_cast<double>(r.queue_names.size());
  const double width = kLeft + plot + kRight;
  const double height = kTop + rows * kRow + 44;
  auto x_of = [&](double seconds) { return kLeft + (seconds - t0) * 1e3 * scale; };

  std::string out;
  out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Format("%.0f", width) +
         "\" height=\"" + Format("%.0f", height) + "\" viewBox=\"0 0 " + Format("%.0f", width) +
         " " + Format("%.0f", height) + "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  out += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  out += "<text x=\"" + Format("%.0f", kLeft) + "\" y=\"20\" font-size=\"13\">baton sim: " +
         Format("%.2f", r.throughput_per_s) + " inferences/s; steady state of " +
         std::to_string(r.inferences) + " inferences, " + Format("%.3f", t0 * 1e3) + "-" +
         Format("%.3f", t1 * 1e3) + " ms (box colour = inference, bar under it = stage)</text>\n";
  // Legends: inference colours (the palette repeats), stage bars.
  std::set<uint32_t> shown;
  for (const SimInstance& s : r.instances) {
    if (s.end_s > t0 && s.start_s < t1) shown.insert(s.inference);
  }
  double lx = kLeft;
  for (uint32_t i : shown) {
    if (lx > kLeft + plot - 60) break;
    out += "<rect x=\"" + Format("%.0f", lx) + "\" y=\"30\" width=\"12\" height=\"12\" fill=\"" +
           kPalette[i % kPaletteSize] + "\"/><text x=\"" + Format("%.0f", lx + 15) +
           "\" y=\"40\">#" + std::to_string(i) + "</text>\n";
    lx += 48;
  }
  uint32_t stages = 1;
  for (uint32_t st : r.node_stage) stages = std::max(stages, st + 1);
  for (uint32_t st = 0; st < stages && st < static_cast<uint32_t>(kStageSize); ++st) {
    const double x = kLeft + plot - (stages - st) * 64.0;
    out += "<rect x=\"" + Format("%.0f", x) + "\" y=\"36\" width=\"14\" height=\"4\" fill=\"" +
           kStageColors[st] + "\"/><text x=\"" + Format("%.0f", x + 17) + "\" y=\"40\">stage " +
           std::to_string(st) + "</text>\n";
  }
  // Time axis: grid lines and labels in ms.
  const double step = NiceStep(span_ms, 10);
  const double axis_y = kTop + rows * kRow;
  const double first = std::ceil(t0 * 1e3 / step) * step;
  out += "<g class=\"axis\" stroke=\"#ddd\">\n";
  for (int k = 0; span_ms > 0 && first + k * step <= t1 * 1e3 * (1 + 1e-9); ++k) {
    const double x = x_of((first + k * step) / 1e3);
    out += "<line x1=\"" + Format("%.2f", x) + "\" y1=\"" + Format("%.0f", kTop) + "\" x2=\"" +
           Format("%.2f", x) + "\" y2=\"" + Format("%.0f", axis_y + 4) + "\"/>\n";
    out += "<text x=\"" + Format("%.2f", x) + "\" y=\"" + Format("%.0f", axis_y + 18) +
           "\" stroke=\"none\" fill=\"#333\" text-anchor=\"middle\">" +
           Format("%g", first + k * step) + "</text>\n";
  }
  out += "<text x=\"" + Format("%.0f", kLeft + plot) + "\" y=\"" + Format("%.0f", axis_y + 34) +
         "\" stroke=\"none\" fill=\"#333\" text-anchor=\"end\">time (ms)</text>\n";
  out += "</g>\n";
  for (size_t q = 0; q < r.queue_names.size(); ++q) {
    const double y = kTop + static_cast<double>(q) * kRow;
    out += "<g class=\"row\" data-queue=\"" + XmlEscape(r.queue_names[q]) + "\">\n";
    out += "<rect x=\"" + Format("%.0f", kLeft) + "\" y=\"" + Format("%.0f", y) + "\" width=\"" +
           Format("%.0f", plot) + "\" height=\"" + Format("%.0f", kRow) + "\" fill=\"" +
           (q % 2 ? "#f7f7f7" : "#ffffff") + "\"/>\n";
    out += "<text x=\"" + Format("%.0f", kLeft - 8) + "\" y=\"" + Format("%.1f", y + kRow / 2 + 4) +
           "\" text-anchor=\"end\">" + XmlEscape(r.queue_names[q]) + "</text>\n";
    for (const SimInstance& s : r.instances) {
      if (s.queue != q || s.end_s <= t0 || s.start_s >= t1) continue;
      const double x0 = x_of(std::max(s.start_s, t0));
      const double w = std::max(1.0, x_of(std::min(s.end_s, t1)) - x0);
      const std::string& name = r.node_names[s.node];
      const uint32_t stage = s.node < r.node_stage.size() ? r.node_stage[s.node] : 0;
      const double by = y + (kRow - kBox) / 2 - 2;
      out += "<rect x=\"" + Format("%.2f", x0) + "\" y=\"" + Format("%.1f", by) + "\" width=\"" +
             Format("%.2f", w) + "\" height=\"" + Format("%.0f", kBox) + "\" fill=\"" +
             kPalette[s.inference % kPaletteSize] +
             "\" stroke=\"white\" stroke-width=\"0.5\"><title>" + XmlEscape(name) + " #" +
             std::to_string(s.inference) + ", stage " + std::to_string(stage) + ": " +
             Format("%.3f", s.start_s * 1e3) + "-" + Format("%.3f", s.end_s * 1e3) +
             " ms</title></rect>\n";
      out += "<rect x=\"" + Format("%.2f", x0) + "\" y=\"" + Format("%.1f", by + kBox + 1) +
             "\" width=\"" + Format("%.2f", w) + "\" height=\"4\" fill=\"" +
             kStageColors[stage % kStageSize] + "\"/>\n";
      // A label only where it fits (about 6 px per character).
      if (w > 6.0 * static_cast<double>(name.size()) + 4) {
        out += "<text x=\"" + Format("%.2f", x0 + w / 2) + "\" y=\"" +
               Format("%.1f", by + kBox / 2 + 4) + "\" text-anchor=\"middle\" fill=\"white\">" +
               XmlEscape(name) + "</text>\n";
      }
    }
    out += "</g>\n";
  }
  out += "</svg>\n";
  return out;
}

}  // namespace baton::planner
