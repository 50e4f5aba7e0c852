#include "baton/planner/passes/partition.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <functional>
#include <map>

namespace baton::planner {
namespace {

constexpr double kEps = 1e-12;

// Relative comparison for loads that are sums of the same terms in another
// order: a difference below 1e-9 of the magnitude is no difference.
int Compare(double a, double b) {
  const double tol = 1e-9 * std::max(std::fabs(a), std::fabs(b)) + kEps;
  if (a < b - tol) return -1;
  if (a > b + tol) return 1;
  return 0;
}

// Evaluations the local search may spend: about 3e7 node or tensor visits,
// whatever the graph size, so the search ends in seconds and the result does
// not depend on the machine's speed.
int64_t EvaluationBudget(size_t nodes, size_t transfers) {
  const int64_t work = static_cast<int64_t>(nodes + transfers) + 1;
  return std::max<int64_t>(200, 30000000 / work);
}

}  // namespace

bool Better(const PartitionEval& a, const PartitionEval& b, Objective objective) {
  if (a.fits != b.fits) return a.fits;
  if (objective == Objective::kThroughput) {
    if (int c = Compare(a.period_s, b.period_s); c != 0) return c < 0;
  }
  const double a1 = objective == Objective::kThroughput ? a.bottleneck_s : a.latency_s;
  const double b1 = objective == Objective::kThroughput ? b.bottleneck_s : b.latency_s;
  const double a2 = objective == Objective::kThroughput ? a.latency_s : a.bottleneck_s;
  const double b2 = objective == Objective::kThroughput ? b.latency_s : b.bottleneck_s;
  if (int c = Compare(a1, b1); c != 0) return c < 0;
  if (int c = Compare(a2, b2); c != 0) return c < 0;
  return Compare(a.total_s, b.total_s) < 0;
}

Result<PartitionModel> PartitionModel::Build(const Program& p,
                                             std::vector<std::vector<double>> node_seconds,
                                             std::vector<uint64_t> workspace_bytes) {
  const Graph& g = p.graph;
  const Target& t = p.target;
  PartitionModel m;
  m.target_ = &p.target;
  m.node_seconds_ = std::move(node_seconds);
  m.workspace_bytes_ = std::move(workspace_bytes);
  if (m.node_seconds_.size() != g.nodes.size() || m.workspace_bytes_.size() != g.nodes.size()) {
    return Fail("internal: partition costs do not match the graph");
  }
  m.pinned_.assign(g.nodes.size(), false);
  m.pin_device_.assign(g.nodes.size(), -1);
  for (size_t n = 0; n < g.nodes.size() && n < p.node_pinned.size(); ++n) {
    m.pinned_[n] = p.node_pinned[n];
    if (m.pinned_[n]) {
      if (n >= p.node_device.size() || p.node_device[n] < 0) {
        return Fail("internal: pinned node '" + g.nodes[n].name + "' has no device");
      }
      m.pin_device_[n] = p.node_device[n];
    }
  }
  BATON_ASSIGN_OR_RETURN(m.topo_, g.TopologicalOrder());
  m.topo_pos_.assign(g.nodes.size(), 0);
  for (size_t k = 0; k < m.topo_.size(); ++k) m.topo_pos_[m.topo_[k]] = static_cast<int>(k);

  // Transfers: every non-constant tensor, its producer and its consumers.
  std::vector<int> transfer_of(g.tensors.size(), -1);
  const std::vector<int> producer = g.Producers();
  for (size_t ti = 0; ti < g.tensors.size(); ++ti) {
    if (g.tensors[ti].is_constant) continue;
    transfer_of[ti] = static_cast<int>(m.transfers_.size());
    Transfer tr;
    tr.bytes = g.tensors[ti].bytes();
    tr.producer = producer[ti];
    m.transfers_.push_back(tr);
  }
  for (int out : g.outputs) {
    if (transfer_of[out] >= 0) m.transfers_[transfer_of[out]].is_output = true;
  }
  m.node_inputs_.assign(g.nodes.size(), {});
  m.node_outputs_.assign(g.nodes.size(), {});
  for (int n : m.topo_) {
    for (int ti : g.nodes[n].inputs) {
      if (ti < 0 || transfer_of[ti] < 0) continue;
      std::vector<int>& ins = m.node_inputs_[n];
      if (std::find(ins.begin(), ins.end(), transfer_of[ti]) != ins.end()) continue;
      ins.push_back(transfer_of[ti]);
      m.transfers_[transfer_of[ti]].consumers.push_back(n);
    }
    for (int ti : g.nodes[n].outputs) {
      if (transfer_of[ti] >= 0) m.node_outputs_[n].push_back(transfer_of[ti]);
    }
  }

  // Queues as InsertCopies makes them: devices, then each link's DMA engine.
  for (const TargetDevice& d : t.devices) m.queue_names_.push_back(d.name);
  for (const TargetLink& l : t.links) {
    int q = -1;
    if (!l.queue.empty()) {
      auto it = std::find(m.queue_names_.begin(), m.queue_names_.end(), l.queue);
      q = static_cast<int>(it - m.queue_names_.begin());
      if (it == m.queue_names_.end()) m.queue_names_.push_back(l.queue);
    }
    m.link_queue_.push_back(q);
  }
  // Fewest-hop routes, links in target order (the same BFS as InsertCopies).
  const size_t nd = t.domains.size();
  m.routes_.assign(nd, std::vector<std::vector<Hop>>(nd));
  for (size_t from = 0; from < nd; ++from) {
    std::vector<int> previous(nd, -2), via(nd, -1);
    std::deque<int> frontier{static_cast<int>(from)};
    previous[from] = -1;
    while (!frontier.empty()) {
      const int d = frontier.front();
      frontier.pop_front();
      for (size_t l = 0; l < t.links.size(); ++l) {
        const TargetLink& link = t.links[l];
        if (link.from != d || previous[link.to] != -2) continue;
        previous[link.to] = d;
        via[link.to] = static_cast<int>(l);
        frontier.push_back(link.to);
      }
    }
    for (size_t to = 0; to < nd; ++to) {
      if (to == from || previous[to] == -2) continue;
      std::vector<Hop> hops;
      for (int d = static_cast<int>(to); d != static_cast<int>(from); d = previous[d]) {
        hops.push_back({d, via[d]});
      }
      std::reverse(hops.begin(), hops.end());
      m.routes_[from][to] = std::move(hops);
    }
  }
  m.fallback_domain_ = t.devices[t.fallback].domains[0];
  m.SetMemoryFraction(1.0);

  // Values crossing each cut of the topological order (difference arrays).
  const size_t n_pos = m.topo_.size();
  std::vector<int64_t> bytes_diff(n_pos + 2, 0), values_diff(n_pos + 2, 0);
  for (const Transfer& tr : m.transfers_) {
    const int first = tr.producer >= 0 ? m.topo_pos_[tr.producer] + 1 : 0;
    int last = tr.is_output ? static_cast<int>(n_pos) : -1;
    for (int c : tr.consumers) last = std::max(last, m.topo_pos_[c]);
    if (last < first) continue;  // never read after it is produced
    bytes_diff[first] += static_cast<int64_t>(tr.bytes);
    bytes_diff[last + 1] -= static_cast<int64_t>(tr.bytes);
    ++values_diff[first];
    --values_diff[last + 1];
  }
  m.cut_bytes_.assign(n_pos + 1, 0);
  m.cut_values_.assign(n_pos + 1, 0);
  int64_t bytes = 0, values = 0;
  for (size_t k = 0; k <= n_pos; ++k) {
    bytes += bytes_diff[k];
    values += values_diff[k];
    m.cut_bytes_[k] = static_cast<uint64_t>(std::max<int64_t>(bytes, 0));
    m.cut_values_[k] = static_cast<int>(values);
  }
  return m;
}

double PartitionModel::CopySeconds(int from, int to, uint64_t bytes, int values) const {
  const Target& t = *target_;
  const int a = t.devices[from].domains[0], b = t.devices[to].domains[0];
  if (a == b || values <= 0) return 0;
  const std::vector<Hop>& route = routes_[a][b];
  if (route.empty()) return std::numeric_limits<double>::infinity();
  double seconds = 0;
  for (const Hop& hop : route) {
    const TargetLink& link = t.links[hop.link];
    seconds += link.latency_s * values + static_cast<double>(bytes) / link.bytes_per_s;
  }
  return seconds;
}

void PartitionModel::SetMemoryFraction(double fraction) {
  domain_limit_.clear();
  for (const TargetDomain& d : target_->domains) {
    domain_limit_.push_back(static_cast<uint64_t>(static_cast<double>(d.bytes) * fraction));
  }
}

std::vector<int> PartitionModel::SingleDevice(int device) const {
  std::vector<int> assignment(num_nodes(), target_->fallback);
  for (size_t n = 0; n < num_nodes(); ++n) {
    const int node = static_cast<int>(n);
    if (pinned_[n]) {
      // Pins keep the device AssignDevices gave them: the first device
      // that can run the node among the pinned one and the fallback.
      assignment[n] = pin_device_[n];
      continue;
    }
    if (CanRun(node, device)) {
      assignment[n] = device;
    } else if (!CanRun(node, target_->fallback)) {
      for (size_t d = 0; d < num_devices(); ++d) {
        if (CanRun(node, static_cast<int>(d))) {
          assignment[n] = static_cast<int>(d);
          break;
        }
      }
    }
  }
  return assignment;
}

// One inference, walked in topological order: node loads and list-scheduled
// times, copies created at their first consumer as InsertCopies creates them,
// and the live range of every value in every domain it occupies.
// (About 110 lines, over the usual limit on purpose: the list schedule, the
// copy routing and the live ranges follow the same walk and share the
// per-transfer location state; split apart, each would repeat the walk on the
// search's hottest path.)
PartitionEval PartitionModel::Evaluate(const std::vector<int>& device) const {
  const Target& t = *target_;
  const size_t num_positions = topo_.size() + 2;
  PartitionEval e;
  e.queue_load_s.assign(num_queues(), 0.0);
  // Per transfer: domain -> time the value is there, and its last use there.
  // At most one entry per domain, in one flat array (no allocation per
  // transfer: this is the search's hottest path). The arrays are reused
  // from call to call (one set per thread).
  struct Located {
    int domain;
    double ready;
    size_t first, last;
  };
  struct Scratch {
    std::vector<double> queue_free, node_end;
    std::vector<int64_t> live;  // [domain][position], flat
    std::vector<Located> located_at;
    std::vector<uint8_t> located_count;
  };
  thread_local Scratch scratch;
  const size_t nd = t.domains.size();
  std::vector<double>& queue_free = scratch.queue_free;
  std::vector<double>& node_end = scratch.node_end;
  std::vector<int64_t>& live = scratch.live;
  std::vector<Located>& located_at = scratch.located_at;
  std::vector<uint8_t>& located_count = scratch.located_count;
  queue_free.assign(num_queues(), 0.0);
  node_end.assign(num_nodes(), 0.0);
  live.assign(nd * num_positions, 0);
  located_at.resize(transfers_.size() * nd);
  located_count.assign(transfers_.size(), 0);
  auto add_live = [&](int domain, size_t from, size_t to, uint64_t bytes) {
    live[static_cast<size_t>(domain) * num_positions + from] += static_cast<int64_t>(bytes);
    live[static_cast<size_t>(domain) * num_positions + to + 1] -= static_cast<int64_t>(bytes);
  };
  auto located_begin = [&](int tr) { return located_at.data() + static_cast<size_t>(tr) * nd; };
  auto add_located = [&](int tr, Located l) {
    located_begin(tr)[located_count[tr]++] = l;
  };
  auto home_of = [&](const Transfer& tr) {
    return tr.producer >= 0 ? t.devices[device[tr.producer]].domains[0] : fallback_domain_;
  };
  auto find = [&](int tr, int domain) -> Located* {
    Located* l = located_begin(tr);
    for (int k = 0; k < located_count[tr]; ++k) {
      if (l[k].domain == domain) return &l[k];
    }
    return nullptr;
  };
  // Brings transfer `tr` to `domain` for `requester` (-1: the caller) at
  // topological position `pos`; returns when it is there.
  auto fetch = [&](int tr, int domain, int requester, size_t pos) -> double {
    const Transfer& x = transfers_[tr];
    const int home = home_of(x);
    if (Located* there = find(tr, domain)) {
      there->last = std::max(there->last, pos);
      return there->ready;
    }
    Located* from = find(tr, home);
    double ready = from->ready;
    from->last = std::max(from->last, pos);
    for (const Hop& hop : routes_[home][domain]) {
      if (Located* there = find(tr, hop.to_domain)) {
        ready = there->ready;
        there->last = std::max(there->last, pos);
        continue;
      }
      const TargetLink& link = t.links[hop.link];
      int q = link_queue_[hop.link];
      if (q < 0) {  // the requesting device, the fallback, or any reaching it
        q = requester >= 0 && t.devices[requester].Reaches(hop.to_domain) ? requester : -1;
        if (q < 0 && t.devices[t.fallback].Reaches(hop.to_domain)) q = t.fallback;
        for (size_t d = 0; q < 0 && d < t.devices.size(); ++d) {
          if (t.devices[d].Reaches(hop.to_domain)) q = static_cast<int>(d);
        }
        if (q < 0) q = t.fallback;
      }
      const double seconds = link.latency_s + static_cast<double>(x.bytes) / link.bytes_per_s;
      e.queue_load_s[q] += seconds;
      const double start = std::max(ready, queue_free[q]);
      ready = start + seconds;
      queue_free[q] = ready;
      add_located(tr, {hop.to_domain, ready, pos, pos});
    }
    return ready;
  };

  for (size_t tr = 0; tr < transfers_.size(); ++tr) {
    if (transfers_[tr].producer < 0) add_located(static_cast<int>(tr), {fallback_domain_, 0.0, 0, 0});
  }
  for (size_t k = 0; k < topo_.size(); ++k) {
    const int n = topo_[k];
    const int d = device[n];
    const size_t pos = k + 1;
    double ready = 0;
    for (int tr : node_inputs_[n]) {
      const int home = home_of(transfers_[tr]);
      const int want = t.devices[d].Reaches(home) ? home : t.devices[d].domains[0];
      ready = std::max(ready, fetch(tr, want, d, pos));
    }
    const double seconds = node_seconds_[n][d];
    e.queue_load_s[d] += seconds;
    const double start = std::max(ready, queue_free[d]);
    node_end[n] = start + seconds;
    queue_free[d] = node_end[n];
    e.latency_s = std::max(e.latency_s, node_end[n]);
    if (workspace_bytes_[n] > 0) add_live(t.devices[d].domains[0], pos, pos, workspace_bytes_[n]);
    for (int tr : node_outputs_[n]) add_located(tr, {t.devices[d].domains[0], node_end[n], pos, pos});
  }
  for (size_t tr = 0; tr < transfers_.size(); ++tr) {
    if (!transfers_[tr].is_output) continue;
    e.latency_s = std::max(e.latency_s, fetch(static_cast<int>(tr), fallback_domain_, -1,
                                              num_positions - 2));
    find(static_cast<int>(tr), fallback_domain_)->last = num_positions - 2;
  }
  for (size_t tr = 0; tr < transfers_.size(); ++tr) {
    const Located* l = located_begin(static_cast<int>(tr));
    for (int k = 0; k < located_count[tr]; ++k) {
      add_live(l[k].domain, l[k].first, l[k].last, transfers_[tr].bytes);
    }
  }
  e.domain_peak.assign(t.domains.size(), 0);
  for (size_t dom = 0; dom < t.domains.size(); ++dom) {
    int64_t sum = 0;
    for (size_t k = 0; k < num_positions; ++k) {
      sum += live[dom * num_positions + k];
      e.domain_peak[dom] = std::max(e.domain_peak[dom], static_cast<uint64_t>(std::max<int64_t>(sum, 0)));
    }
    if (e.domain_peak[dom] > domain_limit_[dom]) e.fits = false;
  }
  for (double load : e.queue_load_s) {
    e.bottleneck_s = std::max(e.bottleneck_s, load);
    e.total_s += load;
  }
  return e;
}

namespace {

struct Candidate {
  std::vector<int> device;
  PartitionEval eval;
};

// A contiguous pipeline: the topological order cut at increasing positions
// into cuts.size() + 1 segments, segment s on device devs[s] (a node that
// device cannot run goes where SingleDevice(devs[s]) puts it).
struct Segments {
  std::vector<size_t> cuts;
  std::vector<size_t> devs;
};

class Search {
 public:
  Search(const PartitionModel& m, const SearchOptions& o)
      : m_(m), o_(o), budget_(EvaluationBudget(m.num_nodes(), m.num_nodes())) {}

  std::vector<std::vector<int>> Run() {
    Singles();
    if (!Exhaustive()) {
      Chains();
      ContiguousSegments();
      // The local search starts from the best few candidates, before and
      // after the contiguous pipelines' cuts are refined.
      std::vector<Candidate> before = Best(6);
      RefineSegments();
      std::vector<Candidate> seeds = Best(6);
      for (Candidate& c : before) {
        bool have = false;
        for (const Candidate& s : seeds) have = have || s.device == c.device;
        if (!have) seeds.push_back(std::move(c));
      }
      for (Candidate& seed : seeds) Add(LocalSearch(std::move(seed)));
    }
    std::vector<Candidate> best = Best(static_cast<size_t>(std::max(1, o_.max_candidates)));
    std::vector<std::vector<int>> out;
    for (Candidate& c : best) out.push_back(std::move(c.device));
    // The best few contiguous pipelines are always candidates too: the
    // model's bound ranks interleaved assignments first, whose device
    // crossings inside each stage can leave the simulated pipeline far below
    // that bound (mobilenet_v2 on twin_npu_f32: bound 214/s, simulated 155/s),
    // while a contiguous pipeline's stages reach theirs.
    std::stable_sort(contiguous_.begin(), contiguous_.end(),
                     [this](const Candidate& a, const Candidate& b) { return Better(a.eval, b.eval); });
    for (size_t i = 0, added = 0; i < contiguous_.size() && added < kContiguousCandidates; ++i) {
      if (std::find(out.begin(), out.end(), contiguous_[i].device) != out.end()) continue;
      out.push_back(contiguous_[i].device);
      ++added;
    }
    // The best single device is always a candidate: the planner's
    // simulation then guarantees --auto never falls below it.
    if (std::find(out.begin(), out.end(), best_single_.device) == out.end()) {
      out.push_back(best_single_.device);
    }
    return out;
  }

 private:
  bool Better(const PartitionEval& a, const PartitionEval& b) const {
    return planner::Better(a, b, o_.objective);
  }

  Candidate Make(std::vector<int> device) {
    --budget_;
    PartitionEval eval = m_.Evaluate(device);
    // One inference must fit in max_in_flight periods for the pipeline to
    // reach the bound; a deeper chain is capped by its latency.
    eval.period_s = std::max(eval.bottleneck_s,
                             eval.latency_s / std::max(1, o_.max_in_flight));
    return {std::move(device), std::move(eval)};
  }

  // A contiguous pipeline: a candidate, and kept aside for Run().
  void AddContiguous(Candidate c) {
    contiguous_.push_back(c);
    Add(std::move(c));
  }

  void Add(Candidate c) {
    for (const Candidate& have : all_) {
      if (have.device == c.device) return;
    }
    all_.push_back(std::move(c));
  }

  std::vector<Candidate> Best(size_t count) const {
    std::vector<Candidate> sorted = all_;
    std::stable_sort(sorted.begin(), sorted.end(), [this](const Candidate& a, const Candidate& b) {
      return Better(a.eval, b.eval);
    });
    if (sorted.size() > count) sorted.resize(count);
    return sorted;
  }

  // Every assignment, when there are at most exact_limit of them; keeps the
  // best few. False when there are more.
  bool Exhaustive() {
    std::vector<int> free_nodes;
    double count = 1;
    for (int n : m_.topo()) {
      if (m_.Pinned(n)) continue;
      int choices = 0;
      for (size_t d = 0; d < m_.num_devices(); ++d) choices += m_.CanRun(n, static_cast<int>(d));
      if (choices > 1) free_nodes.push_back(n);
      count *= std::max(choices, 1);
    }
    if (count > static_cast<double>(o_.exact_limit)) return false;
    std::vector<int> device = m_.SingleDevice(0);
    std::vector<Candidate> kept;
    const size_t keep = static_cast<size_t>(std::max(1, o_.max_candidates));
    std::function<void(size_t)> walk = [&](size_t k) {
      if (k == free_nodes.size()) {
        Candidate c = Make(device);
        if (kept.size() < keep || Better(c.eval, kept.back().eval)) {
          kept.push_back(std::move(c));
          std::stable_sort(kept.begin(), kept.end(), [this](const Candidate& a, const Candidate& b) {
            return Better(a.eval, b.eval);
          });
          if (kept.size() > keep) kept.pop_back();
        }
        return;
      }
      const int n = free_nodes[k];
      for (size_t d = 0; d < m_.num_devices(); ++d) {
        if (!m_.CanRun(n, static_cast<int>(d))) continue;
        device[n] = static_cast<int>(d);
        walk(k + 1);
      }
    };
    walk(0);
    for (Candidate& c : kept) AddContiguous(std::move(c));
    return true;
  }

  void Singles() {
    for (size_t d = 0; d < m_.num_devices(); ++d) {
      Candidate c = Make(m_.SingleDevice(static_cast<int>(d)));
      if (d == 0 || Better(c.eval, best_single_.eval)) best_single_ = c;
      Add(std::move(c));
    }
  }

  // Fills the devices of `order` along the topological order, moving on to
  // the next once the current one would exceed `period` seconds of compute.
  // A node the current device cannot run goes to the least loaded device
  // that can (the previous chain device first, to save copies).
  std::vector<int> Fill(const std::vector<int>& order, double period, bool advance) const {
    std::vector<int> device = m_.SingleDevice(0);
    std::vector<double> load(m_.num_devices(), 0.0);
    size_t j = 0;
    std::vector<int> filled(order.size(), 0);
    for (int n : m_.topo()) {
      if (m_.Pinned(n)) {
        load[device[n]] += m_.Seconds(n, device[n]);
        continue;
      }
      while (m_.CanRun(n, order[j]) && filled[j] > 0 && j + 1 < order.size() &&
             load[order[j]] + m_.Seconds(n, order[j]) > period) {
        ++j;
      }
      if (advance && !m_.CanRun(n, order[j])) {
        // Move on to the next chain device that runs the node, if any.
        size_t k = j + 1;
        while (k < order.size() && !m_.CanRun(n, order[k])) ++k;
        if (k < order.size() && filled[j] > 0) j = k;
      }
      int d = order[j];
      if (!m_.CanRun(n, d)) {
        d = -1;
        if (j > 0 && m_.CanRun(n, order[j - 1])) d = order[j - 1];
        for (size_t k = 0; d < 0 && k < m_.num_devices(); ++k) {
          if (!m_.CanRun(n, static_cast<int>(k))) continue;
          if (d < 0 || load[k] + m_.Seconds(n, static_cast<int>(k)) <
                           load[d] + m_.Seconds(n, d)) {
            d = static_cast<int>(k);
          }
        }
      } else {
        ++filled[j];
      }
      device[n] = d;
      load[d] += m_.Seconds(n, d);
    }
    return device;
  }

  void Chains() {
    double lo = 0, sum_min = 0;
    for (size_t n = 0; n < m_.num_nodes(); ++n) {
      double best = std::numeric_limits<double>::infinity();
      for (size_t d = 0; d < m_.num_devices(); ++d) {
        if (m_.CanRun(static_cast<int>(n), static_cast<int>(d))) {
          best = std::min(best, m_.Seconds(static_cast<int>(n), static_cast<int>(d)));
        }
      }
      lo = std::max(lo, best);
      sum_min += best;
    }
    lo = std::max(lo, sum_min / static_cast<double>(m_.num_devices()));
    const double hi = std::max(lo, best_single_.eval.bottleneck_s);
    constexpr int kSteps = 24;
    std::vector<int> order(m_.num_devices());
    for (size_t d = 0; d < order.size(); ++d) order[d] = static_cast<int>(d);
    int permutations = 0;
    do {
      for (int s = 0; s <= kSteps; ++s) {
        const double period = lo * std::pow(hi / lo, static_cast<double>(s) / kSteps);
        Add(Make(Fill(order, period, false)));
        Add(Make(Fill(order, period, true)));
      }
    } while (std::next_permutation(order.begin(), order.end()) && ++permutations < 120);
  }

  // Piper-style dynamic program over contiguous segments of the topological
  // order: segment [i, j) runs on one device (nodes it cannot run on the
  // fallback, counted in the segment's load), each device holds at most one
  // segment, and the copies at a cut (the values crossing it, along the
  // route between the two devices) are charged to the segment after it. It
  // minimizes the largest segment load over (end, devices used, last device);
  // every end state over the whole order becomes a candidate (the model then
  // judges it exactly). Graphs over kMaxBlocks nodes are cut into blocks of
  // about equal fastest-device time, and segments end at block boundaries.
  void ContiguousSegments() {
    constexpr size_t kMaxBlocks = 160;
    constexpr size_t kMaxDevices = 6;
    const size_t nd = m_.num_devices();
    if (nd < 2 || nd > kMaxDevices) return;
    const std::vector<int>& topo = m_.topo();
    const size_t n = topo.size();
    // A node device d cannot run goes where SingleDevice(d) puts it.
    single_.resize(nd);
    for (size_t d = 0; d < nd; ++d) single_[d] = m_.SingleDevice(static_cast<int>(d));
    const std::vector<std::vector<int>>& single = single_;
    // Prefix sums of each device's seconds along the order (pinned nodes
    // count on their own device only).
    std::vector<std::vector<double>> prefix(nd, std::vector<double>(n + 1, 0.0));
    std::vector<double> fastest(n + 1, 0.0);
    for (size_t k = 0; k < n; ++k) {
      const int node = topo[k];
      double best = std::numeric_limits<double>::infinity();
      for (size_t d = 0; d < nd; ++d) {
        const int dev = static_cast<int>(d);
        const double s = m_.Pinned(node) ? 0.0 : m_.Seconds(node, single[d][node]);
        prefix[d][k + 1] = prefix[d][k] + s;
        if (m_.CanRun(node, dev)) best = std::min(best, m_.Seconds(node, dev));
      }
      fastest[k + 1] = fastest[k] + (std::isfinite(best) ? best : 0);
    }
    // Block boundaries: positions 0 = b_0 < ... < b_B = n.
    std::vector<size_t> bound = {0};
    if (n <= kMaxBlocks) {
      for (size_t k = 1; k <= n; ++k) bound.push_back(k);
    } else {
      for (size_t k = 1; k < n; ++k) {
        const double share = fastest[n] * static_cast<double>(bound.size()) / kMaxBlocks;
        if (fastest[k] >= share && k > bound.back()) bound.push_back(k);
      }
      bound.push_back(n);
    }
    const size_t blocks = bound.size() - 1;
    const size_t masks = size_t{1} << nd;
    const double inf = std::numeric_limits<double>::infinity();
    // best[j][mask][last]: the smallest largest-segment load of positions
    // [0, bound[j]) in segments on the devices of `mask`, the last on `last`.
    auto at = [&](size_t j, size_t mask, size_t last) { return (j * masks + mask) * nd + last; };
    std::vector<double> best((blocks + 1) * masks * nd, inf);
    std::vector<int32_t> from((blocks + 1) * masks * nd, -1);
    auto segment = [&](size_t d, size_t i, size_t j) { return prefix[d][bound[j]] - prefix[d][bound[i]]; };
    for (size_t j = 1; j <= blocks; ++j) {
      for (size_t d = 0; d < nd; ++d) {
        const size_t s = at(j, size_t{1} << d, d);
        best[s] = segment(d, 0, j);
      }
    }
    for (size_t i = 1; i < blocks; ++i) {
      const size_t cut = bound[i];
      for (size_t mask = 1; mask < masks; ++mask) {
        for (size_t a = 0; a < nd; ++a) {
          const double here = best[at(i, mask, a)];
          if (!std::isfinite(here)) continue;
          for (size_t b = 0; b < nd; ++b) {
            if (mask & (size_t{1} << b)) continue;
            const double copy = m_.CopySeconds(static_cast<int>(a), static_cast<int>(b),
                                               m_.CutBytes()[cut], m_.CutValues()[cut]);
            if (!std::isfinite(copy)) continue;
            const size_t next_mask = mask | (size_t{1} << b);
            for (size_t j = i + 1; j <= blocks; ++j) {
              const double v = std::max(here, segment(b, i, j) + copy);
              const size_t s = at(j, next_mask, b);
              if (v < best[s]) {
                best[s] = v;
                from[s] = static_cast<int32_t>(at(i, mask, a));
              }
            }
          }
        }
      }
    }
    for (size_t mask = 1; mask < masks; ++mask) {
      for (size_t last = 0; last < nd; ++last) {
        size_t s = at(blocks, mask, last);
        if (!std::isfinite(best[s]) || (mask & (size_t{1} << last)) == 0) continue;
        Segments seg;
        size_t d = last;
        for (;;) {
          const int32_t prev = from[s];
          const size_t i = prev < 0 ? 0 : static_cast<size_t>(prev) / nd / masks;
          seg.devs.insert(seg.devs.begin(), d);
          if (prev < 0) break;
          seg.cuts.insert(seg.cuts.begin(), bound[i]);
          s = static_cast<size_t>(prev);
          d = s % nd;
        }
        OfferSegments(std::move(seg));
      }
    }
    SplitSegments(bound);
  }

  // The assignment of a contiguous pipeline.
  std::vector<int> Assign(const Segments& seg) const {
    const std::vector<int>& topo = m_.topo();
    std::vector<int> device = m_.SingleDevice(0);
    for (size_t s = 0; s < seg.devs.size(); ++s) {
      const size_t from = s == 0 ? 0 : seg.cuts[s - 1];
      const size_t to = s < seg.cuts.size() ? seg.cuts[s] : topo.size();
      for (size_t k = from; k < to; ++k) {
        if (!m_.Pinned(topo[k])) device[topo[k]] = single_[seg.devs[s]][topo[k]];
      }
    }
    return device;
  }

  // A contiguous pipeline: a candidate, kept with its cuts for RefineSegments.
  void OfferSegments(Segments seg) {
    Candidate c = Make(Assign(seg));
    segmented_.push_back({std::move(seg), c});
    AddContiguous(std::move(c));
  }

  // The dynamic program charges a segment's fallback nodes to the segment
  // and copies only at its cuts, so its best cut points are approximate.
  // Pattern search on the exact model: for the best few contiguous
  // pipelines (up to kRefine, on at most half the evaluation budget), move
  // each cut by 1, 2, 4... positions either way while that
  // improves the objective (efficientnet_b0 on soc4: its SE blocks' Sigmoid
  // and Mul fall back to the CPU inside the NPU's segment).
  std::vector<Candidate> RefineSegments() {
    constexpr size_t kRefine = 64;
    const size_t n = m_.topo().size();
    // At most half of the budget: the local search after it needs the rest.
    const int64_t keep = budget_ / 2;
    std::vector<Candidate> refined;
    std::stable_sort(segmented_.begin(), segmented_.end(),
                     [this](const auto& a, const auto& b) { return Better(a.second.eval, b.second.eval); });
    std::vector<std::vector<int>> done;
    for (size_t r = 0; r < segmented_.size() && done.size() < kRefine && budget_ > keep; ++r) {
      if (std::find(done.begin(), done.end(), segmented_[r].second.device) != done.end()) continue;
      done.push_back(segmented_[r].second.device);
      Segments seg = segmented_[r].first;
      Candidate best = segmented_[r].second;
      bool improved = true;
      while (improved && budget_ > keep) {
        improved = false;
        for (size_t ci = 0; ci < seg.cuts.size() && budget_ > keep; ++ci) {
          const size_t lo = ci == 0 ? 1 : seg.cuts[ci - 1] + 1;
          const size_t hi = ci + 1 < seg.cuts.size() ? seg.cuts[ci + 1] - 1 : n - 1;
          for (int dir = -1; dir <= 1 && budget_ > keep; dir += 2) {
            for (size_t step = 1; step < n && budget_ > keep; step *= 2) {
              const size_t at = seg.cuts[ci];
              if (dir < 0 ? at < lo + step : at + step > hi) break;
              Segments next = seg;
              next.cuts[ci] = dir < 0 ? at - step : at + step;
              Candidate c = Make(Assign(next));
              if (Better(c.eval, best.eval)) {
                seg = std::move(next);
                best = std::move(c);
                improved = true;
                break;
              }
            }
          }
        }
      }
      refined.push_back(best);
      AddContiguous(std::move(best));
    }
    std::stable_sort(refined.begin(), refined.end(), [this](const Candidate& a, const Candidate& b) {
      return Better(a.eval, b.eval);
    });
    return refined;
  }

  // Every split of the order (at block boundaries) into two segments, and
  // into three when there are at most kThreeSegmentBlocks blocks, each
  // segment on one device (adjacent ones different), judged exactly by the
  // model: the dynamic program above ignores memory capacities, these do
  // not. The best few become candidates.
  void SplitSegments(const std::vector<size_t>& bound) {
    constexpr size_t kThreeSegmentBlocks = 24;
    constexpr size_t kKeep = 4;
    const size_t nd = m_.num_devices(), blocks = bound.size() - 1;
    std::vector<std::pair<Segments, Candidate>> kept;
    auto offer = [&](const std::vector<size_t>& cuts, const std::vector<size_t>& devs) {
      Segments seg;
      for (size_t c : cuts) seg.cuts.push_back(bound[c]);
      seg.devs = devs;
      Candidate c = Make(Assign(seg));
      if (kept.size() == kKeep && !Better(c.eval, kept.back().second.eval)) return;
      for (const auto& have : kept) {
        if (have.second.device == c.device) return;
      }
      kept.push_back({std::move(seg), std::move(c)});
      std::stable_sort(kept.begin(), kept.end(), [this](const auto& a, const auto& b) {
        return Better(a.second.eval, b.second.eval);
      });
      if (kept.size() > kKeep) kept.pop_back();
    };
    for (size_t a = 0; a < nd; ++a) {
      for (size_t b = 0; b < nd; ++b) {
        if (b == a) continue;
        for (size_t i = 1; i < blocks; ++i) offer({i}, {a, b});
        if (blocks > kThreeSegmentBlocks) continue;
        for (size_t c = 0; c < nd; ++c) {
          if (c == b) continue;
          for (size_t i = 1; i < blocks; ++i) {
            for (size_t j = i + 1; j < blocks; ++j) offer({i, j}, {a, b, c});
          }
        }
      }
    }
    for (auto& k : kept) {
      segmented_.push_back(k);
      AddContiguous(std::move(k.second));
    }
  }

  // Moves a run of up to kRun nodes, consecutive in topological order and
  // starting at a free node, to the device that improves the objective most;
  // sweeps until a sweep changes nothing or the evaluation budget is spent.
  Candidate LocalSearch(Candidate c) {
    constexpr size_t kRun = 4;
    const std::vector<int>& topo = m_.topo();
    bool improved = true;
    while (improved && budget_ > 0) {
      improved = false;
      for (size_t k = 0; k < topo.size() && budget_ > 0; ++k) {
        if (m_.Pinned(topo[k])) continue;
        Candidate best = c;
        for (size_t d = 0; d < m_.num_devices(); ++d) {
          const int dev = static_cast<int>(d);
          std::vector<int> moved = c.device;
          for (size_t r = 0; r < kRun && k + r < topo.size(); ++r) {
            const int n = topo[k + r];
            if (m_.Pinned(n) || !m_.CanRun(n, dev)) break;
            if (moved[n] == dev) continue;
            moved[n] = dev;
            Candidate next = Make(moved);
            if (Better(next.eval, best.eval)) best = std::move(next);
          }
        }
        if (best.device != c.device) {
          c = std::move(best);
          improved = true;
        }
      }
    }
    return c;
  }

  const PartitionModel& m_;
  const SearchOptions& o_;
  int64_t budget_;
  std::vector<Candidate> all_;
  std::vector<Candidate> contiguous_;  // ContiguousSegments' and SplitSegments' candidates
  std::vector<std::pair<Segments, Candidate>> segmented_;  // the same, with their cuts
  std::vector<std::vector<int>> single_;  // SingleDevice(d) for every device d
  static constexpr size_t kContiguousCandidates = 2;
  Candidate best_single_;
};

}  // namespace

std::vector<std::vector<int>> SearchPartitions(const PartitionModel& model,
                                               const SearchOptions& options) {
  return Search(model, options).Run();
}

}  // namespace baton::planner
