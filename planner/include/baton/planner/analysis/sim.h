#pragma once
// Deterministic simulation of a plan on a target (`baton sim`, DESIGN §7).
// Host only.
//
// The simulator follows the execution model of DESIGN §4 exactly, on a
// virtual clock that starts at 0, with node durations from cost.h:
//   - each queue runs its instances (n, i) in (iteration i + stage,
//     position) order, one at a time, skipping i < 0 and i >= N;
//   - (n, i) starts at the latest of: its queue finishing the previous
//     instance, the end of (m, i - L) for each wait (m, L) with i - L >= 0,
//     and the admission of inference i;
//   - the caller admits inference i as soon as inference i - D was retrieved
//     (at time 0 for i < D), in order, and retrieves each inference as soon as
//     all its nodes have finished, in order. Caller work takes no time.
// Streams: when the caller cannot submit the next inference because the
// oldest one can only finish once later ones arrive (a queue that runs a later
// stage after an earlier one in its program, with too few inferences in
// flight), the executor flushes the stream (executor.h) and the simulator does
// the same: the stream ends after the inferences already submitted, and the
// next inference starts a new stream, iterations counted from 0 again, once
// all of the old one were retrieved. SimResult::flushes counts them; a plan
// that needs flushes does not pipeline. Waits that can never be satisfied are
// reported as a deadlock naming the blocked queues.
//
// Metrics:
//   finish(i)     = end of the last node instance of inference i
//   latency(i)    = finish(i) - admission(i)
//   throughput    = the steady-state rate (b - a) / (finish(b) - finish(a)):
//                   over the middle half of the inferences, a = N / 4 and
//                   b = N - 1 - N / 4, when N >= 8, so that neither the
//                   pipeline fill nor the drain biases it; a = 0, b = N - 1
//                   for 1 < N < 8 (the fill then shows); N / makespan when
//                   N == 1 (0 if the makespan is 0)
//   bound         = 1 / (largest per-inference busy time of any queue),
//                   the best any schedule of these queues could reach (0
//                   when every cost is 0)
//   utilization   = busy time of a queue / makespan (0 if the makespan is 0)

#include <cstdint>
#include <string>
#include <vector>

#include "baton/plan_view.h"
#include "baton/planner/result.h"
#include "baton/planner/target.h"

namespace baton::planner {

struct SimInstance {
  uint32_t queue = 0;
  uint32_t node = 0;
  uint32_t inference = 0;
  double start_s = 0;
  double end_s = 0;
};

struct SimResult {
  uint32_t inferences = 0;
  uint32_t flushes = 0;  // stream flushes forced by the in-flight limit
  double makespan_s = 0;
  double throughput_per_s = 0;
  double bound_throughput_per_s = 0;
  double latency_mean_s = 0;
  double latency_max_s = 0;
  std::vector<double> admitted_s;  // per inference
  std::vector<double> finished_s;  // per inference
  // Per queue, in plan order.
  std::vector<std::string> queue_names;
  std::vector<double> queue_busy_s;
  std::vector<double> utilization;
  // Per node, in plan order.
  std::vector<std::string> node_names;
  std::vector<std::string> node_ops;  // "__copy" or the ONNX name
  std::vector<uint32_t> node_queue;
  std::vector<uint32_t> node_stage;
  std::vector<double> node_duration_s;  // per instance (all instances of a node take the same time)
  // Every node instance, ordered by queue, then start time.
  std::vector<SimInstance> instances;
};

// Node instances (inferences x nodes) one simulation may record.
inline constexpr uint64_t kMaxSimInstances = 10000000;

// Simulates `inferences` (>= 1) inferences of a loaded plan. Errors: a target
// that does not describe the plan's queues or copies (cost.h), a deadlock,
// more than kMaxSimInstances node instances.
Result<SimResult> Simulate(const PlanView& plan, const Target& target, uint32_t inferences);

// Renderers. All are deterministic (fixed number formatting).
// DESIGN §7 `baton sim --json` object, with a trailing newline.
std::string SimJson(const SimResult& result);
// A short human-readable summary.
std::string SimText(const SimResult& result);
// Chrome trace-event JSON (Perfetto, chrome://tracing): one thread per queue
// (tid = queue index, named by "thread_name" metadata), one complete event
// ("ph": "X", ts/dur in microseconds) per node instance with the inference
// number in args.
std::string ChromeTrace(const SimResult& result);
// An SVG timeline of the steady state: a window from the first start of the
// middle inference over three periods (at least that inference's latency),
// wide enough that the shortest node in it is 3 px (1000-6000 px). One row
// per queue (a <g class="row"> element), one box per node instance coloured
// by inference (a repeating palette) with a bar under it coloured by stage;
// time axis in ms. Fewer than 4 inferences: the whole run.
std::string GanttSvg(const SimResult& result);

}  // namespace baton::planner
