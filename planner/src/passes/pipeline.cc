#include "baton/planner/passes/pipeline.h"

#include <algorithm>
#include <cmath>

namespace baton::planner {
namespace {

// The busy intervals of one queue on the circle [0, period): each interval
// starts in [0, period) and may run past period (it then wraps).
class Reservations {
 public:
  explicit Reservations(double period) : period_(period) {}

  // Earliest time >= `earliest` at which [t, t + duration) is free modulo the
  // period; reserves it. Returns a negative value when no gap is long enough.
  double Place(double earliest, double duration) {
    if (duration <= 0) return earliest;
    const double eps = 1e-12 * period_;
    const double base = std::floor(earliest / period_) * period_;
    double c = earliest - base;  // in [0, period)
    const double start_c = c;
    // Intervals at -P, 0 and +P cover every wrap seen from c in [0, P + P).
    std::vector<std::pair<double, double>> unrolled;
    unrolled.reserve(intervals_.size() * 3);
    for (double shift : {-period_, 0.0, period_}) {
      for (const auto& iv : intervals_) unrolled.push_back({iv.first + shift, iv.second + shift});
    }
    size_t i = static_cast<size_t>(
        std::upper_bound(unrolled.begin(), unrolled.end(), c,
                         [](double x, const std::pair<double, double>& iv) { return x < iv.second; }) -
        unrolled.begin());
    for (; c <= start_c + period_; ++i) {
      if (i >= unrolled.size() || c + duration <= unrolled[i].first + eps) {
        Insert(std::fmod(c, period_), duration);
        return base + c;
      }
      c = std::max(c, unrolled[i].second);
    }
    return -1;
  }

 private:
  void Insert(double start, double duration) {
    auto it = std::lower_bound(intervals_.begin(), intervals_.end(),
                               std::make_pair(start, start + duration));
    intervals_.insert(it, {start, start + duration});
  }

  double period_;
  std::vector<std::pair<double, double>> intervals_;  // sorted by start
};

struct Dag {
  std::vector<int> topo;
  std::vector<int> topo_pos;
  std::vector<std::vector<int>> preds;  // distinct producer nodes
};

Result<Dag> BuildDag(const Program& p) {
  Dag dag;
  BATON_ASSIGN_OR_RETURN(dag.topo, p.graph.TopologicalOrder());
  dag.topo_pos.assign(p.graph.nodes.size(), 0);
  for (size_t k = 0; k < dag.topo.size(); ++k) dag.topo_pos[dag.topo[k]] = static_cast<int>(k);
  const std::vector<int> producer = p.graph.Producers();
  dag.preds.assign(p.graph.nodes.size(), {});
  for (size_t n = 0; n < p.graph.nodes.size(); ++n) {
    for (int t : p.graph.nodes[n].inputs) {
      if (t < 0 || producer[t] < 0) continue;
      std::vector<int>& preds = dag.preds[n];
      if (std::find(preds.begin(), preds.end(), producer[t]) == preds.end()) {
        preds.push_back(producer[t]);
      }
    }
  }
  return dag;
}

// Start times of a modulo schedule with `period`; empty when some node finds
// no gap.
std::vector<double> TrySchedule(const Program& p, const Dag& dag,
                                const std::vector<double>& seconds, double period) {
  std::vector<Reservations> queues(p.queues.size(), Reservations(period));
  std::vector<double> start(p.graph.nodes.size(), 0.0);
  for (int n : dag.topo) {
    double earliest = 0;
    for (int m : dag.preds[n]) earliest = std::max(earliest, start[m] + seconds[m]);
    const double t = queues[p.node_queue[n]].Place(earliest, seconds[n]);
    if (t < 0) return {};
    start[n] = t;
  }
  return start;
}

ModuloSchedule FromStarts(const Dag& dag, const std::vector<double>& start, double period) {
  ModuloSchedule s;
  s.period_s = period;
  s.stage.assign(start.size(), 0);
  std::vector<double> offset(start.size(), 0.0);
  for (size_t n = 0; n < start.size(); ++n) {
    // A start a hair below a period boundary belongs to the next stage.
    const double q = start[n] / period;
    s.stage[n] = static_cast<int>(std::floor(q + 1e-9));
    offset[n] = std::max(0.0, start[n] - s.stage[n] * period);
    s.num_stages = std::max(s.num_stages, s.stage[n] + 1);
  }
  s.order = dag.topo;
  std::stable_sort(s.order.begin(), s.order.end(), [&](int a, int b) {
    if (offset[a] != offset[b]) return offset[a] < offset[b];
    return dag.topo_pos[a] < dag.topo_pos[b];
  });
  return s;
}

}  // namespace

Result<ModuloSchedule> ModuloStages(const Program& p, const std::vector<double>& seconds,
                                    int max_stages) {
  if (seconds.size() != p.graph.nodes.size()) return Fail("internal: durations do not match");
  BATON_ASSIGN_OR_RETURN(Dag dag, BuildDag(p));
  std::vector<double> load(p.queues.size(), 0.0), free_at(p.queues.size(), 0.0);
  std::vector<double> end(p.graph.nodes.size(), 0.0);
  double bound = 0, latency = 0;
  for (int n : dag.topo) {
    const int q = p.node_queue[n];
    load[q] += seconds[n];
    bound = std::max(bound, load[q]);
    double ready = free_at[q];
    for (int m : dag.preds[n]) ready = std::max(ready, end[m]);
    end[n] = ready + seconds[n];
    free_at[q] = end[n];
    latency = std::max(latency, end[n]);
  }
  ModuloSchedule single;
  single.period_s = latency;
  single.bound_period_s = bound;
  single.stage.assign(p.graph.nodes.size(), 0);
  single.order = dag.topo;
  if (bound <= 0 || max_stages <= 1) return single;
  // 2% steps near the bound, coarser further out: the ladder ends at the
  // single-inference latency, where one stage is as good.
  double period = bound;
  for (int step = 0; period < latency; ++step) {
    std::vector<double> start = TrySchedule(p, dag, seconds, period);
    if (!start.empty()) {
      ModuloSchedule s = FromStarts(dag, start, period);
      if (s.num_stages <= max_stages) {
        s.bound_period_s = bound;
        return s;
      }
    }
    period *= step < 10 ? 1.02 : 1.1;
  }
  return single;
}

Result<std::vector<int>> TimeSliceStages(const Program& p, const std::vector<double>& seconds,
                                         int slices) {
  if (seconds.size() != p.graph.nodes.size()) return Fail("internal: durations do not match");
  BATON_ASSIGN_OR_RETURN(Dag dag, BuildDag(p));
  std::vector<double> free_at(p.queues.size(), 0.0), start(p.graph.nodes.size(), 0.0);
  double latency = 0;
  for (int n : dag.topo) {
    const int q = p.node_queue[n];
    double ready = free_at[q];
    for (int m : dag.preds[n]) ready = std::max(ready, start[m] + seconds[m]);
    start[n] = ready;
    free_at[q] = ready + seconds[n];
    latency = std::max(latency, free_at[q]);
  }
  std::vector<int> stage(p.graph.nodes.size(), 0);
  if (latency <= 0 || slices <= 1) return stage;
  for (int n : dag.topo) {
    stage[n] = std::min(slices - 1, static_cast<int>(std::floor(start[n] * slices / latency)));
    for (int m : dag.preds[n]) stage[n] = std::max(stage[n], stage[m]);
  }
  return stage;
}

Result<std::vector<int>> TopologicalSliceStages(const Program& p,
                                                const std::vector<double>& seconds, int slices) {
  if (seconds.size() != p.graph.nodes.size()) return Fail("internal: durations do not match");
  BATON_ASSIGN_OR_RETURN(Dag dag, BuildDag(p));
  double total = 0;
  for (int n : dag.topo) total += seconds[n];
  std::vector<int> stage(p.graph.nodes.size(), 0);
  if (total <= 0 || slices <= 1) return stage;
  double before = 0;
  for (int n : dag.topo) {
    // The stage of a node's midpoint along the sequential time line.
    const double mid = before + seconds[n] / 2;
    stage[n] = std::min(slices - 1, static_cast<int>(std::floor(mid * slices / total)));
    before += seconds[n];
    for (int m : dag.preds[n]) stage[n] = std::max(stage[n], stage[m]);
  }
  return stage;
}

void ApplyStages(const ModuloSchedule& schedule, Program* p) {
  p->node_stage = schedule.stage;
  p->num_stages = 1;
  for (int s : schedule.stage) p->num_stages = std::max(p->num_stages, s + 1);
}

}  // namespace baton::planner
