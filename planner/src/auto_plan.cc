// `baton plan --auto` and the stage choice for rule-placed pipelines. The
// partition model proposes (passes/partition.h); every candidate is then
// planned for real (copies, stages, schedule, packed arenas) and simulated,
// and the simulator decides.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <optional>
#include <thread>

#include "baton/config.h"
#include "baton/planner/analysis/cost.h"
#include "baton/planner/emit/emit.h"
#include "baton/planner/memory/memory.h"
#include "baton/planner/passes/assign.h"
#include "baton/planner/passes/copies.h"
#include "baton/planner/passes/partition.h"
#include "baton/planner/passes/pipeline.h"
#include "baton/planner/passes/regions.h"
#include "baton/planner/passes/schedule.h"
#include "planner_internal.h"

namespace baton::planner::internal {
namespace {

constexpr uint32_t kJudgeInferences = 48;
// Simulated throughputs within this fraction count as equal; the smaller
// in-flight depth then wins (less memory, lower latency).
constexpr double kTie = 0.005;
// Shares of each domain's capacity the search aims at, tried in turn when
// the packed arenas of every candidate exceed a capacity.
constexpr double kMemoryFractions[] = {1.0, 0.75, 0.5, 0.35, 0.25, 0.15};
// The search's work budget: candidate stage options (each one scheduled,
// packed and simulated) times the graph's nodes. About 400 options for a
// 150-node model, 120 for 500 nodes; never fewer than kMinOptions (which
// graphs over 600 nodes get: enough for the single devices, the search's
// candidates and part of the shortlist). A count, not a clock, so that plans
// do not depend on the machine.
constexpr int64_t kOptionNodeBudget = 60000;
constexpr int64_t kMinOptions = 100;


struct Judged {
  Program program;
  SimResult sim;
  int in_flight = 1;
};

// Device changes along the topological order (copies skipped): the places
// where a --split cut separates one device's run from the next.
Result<std::vector<std::string>> BoundaryNodes(const Program& p) {
  BATON_ASSIGN_OR_RETURN(std::vector<int> topo, p.graph.TopologicalOrder());
  std::vector<std::string> names;
  int previous = -1;
  for (int n : topo) {
    if (p.graph.nodes[n].op == kCopyOp) continue;
    if (previous >= 0 && p.node_queue[n] != p.node_queue[previous]) {
      names.push_back(p.graph.nodes[n].name);
    }
    previous = n;
  }
  return names;
}

// Every set of 1..depth-1 device-change cuts (as --split would make them),
// when there are at most kMaxCutSets such sets.
template <typename AddFn>
Check AddBoundaryCuts(const Program& p, const AddFn& add) {
  constexpr double kMaxCutSets = 40;
  BATON_ASSIGN_OR_RETURN(std::vector<std::string> cuts, BoundaryNodes(p));
  const int b = static_cast<int>(cuts.size());
  double sets = 0, choose = 1;
  for (int k = 1; k < p.in_flight && k <= b; ++k) {
    choose = choose * (b - k + 1) / k;
    sets += choose;
  }
  if (b == 0 || sets > kMaxCutSets) return Check();
  std::vector<int> pick;
  std::function<Check(int)> walk = [&](int from) -> Check {
    if (!pick.empty()) {
      std::vector<std::string> split;
      for (int i : pick) split.push_back(cuts[i]);
      Program staged = p;
      BATON_TRY(AssignStages(split, &staged));
      add({staged.node_stage, {}});
    }
    if (static_cast<int>(pick.size()) + 1 >= p.in_flight) return Check();
    for (int i = from; i < b; ++i) {
      pick.push_back(i);
      BATON_TRY(walk(i + 1));
      pick.pop_back();
    }
    return Check();
  };
  return walk(0);
}

// One way to cut a program into stages, with the program order it needs
// (empty: Schedule's default).
struct StageOption {
  std::vector<int> stage;
  std::vector<int> order;
};

// The stage cuts worth simulating for `p` (copies inserted) at its
// in_flight depth: modulo schedules within 2..depth stages, time slices of
// one inference's list schedule and of the topological order (2..depth of
// each), device boundaries (AssignStages), and a single stage. Duplicates
// are dropped.
// `quick`: only the modulo schedule at full depth, the time slices at full
// depth and a single stage (the screening of many candidates).
Result<std::vector<StageOption>> StageOptions(const Program& p, const NodeWork& work, bool quick) {
  std::vector<StageOption> options;
  auto add = [&](StageOption o) {
    for (const StageOption& have : options) {
      if (have.stage == o.stage && have.order == o.order) return;
    }
    options.push_back(std::move(o));
  };
  const int depth = p.in_flight;
  if (depth > 1) {
    BATON_ASSIGN_OR_RETURN(std::vector<double> seconds, ProgramSeconds(p, work));
    for (int stages = depth; stages >= (quick ? depth : 2); --stages) {
      BATON_ASSIGN_OR_RETURN(ModuloSchedule s, ModuloStages(p, seconds, stages));
      if (s.num_stages > 1) add({s.stage, s.order});
    }
    for (int slices = quick ? depth : 2; slices <= depth; ++slices) {
      BATON_ASSIGN_OR_RETURN(std::vector<int> by_time, TimeSliceStages(p, seconds, slices));
      add({std::move(by_time), {}});
      BATON_ASSIGN_OR_RETURN(std::vector<int> by_topo, TopologicalSliceStages(p, seconds, slices));
      add({std::move(by_topo), {}});
    }
    if (!quick) {
      Program boundary = p;
      BATON_TRY(AssignStages({}, &boundary));
      add({boundary.node_stage, {}});
      BATON_TRY(AddBoundaryCuts(p, add));
    }
  }
  add({std::vector<int>(p.graph.nodes.size(), 0), {}});
  return options;
}

struct Staged {
  Program program;
  SimResult sim;
};

// Plans and simulates every stage option of `p` (copies inserted), then
// applies the profile-guided queue order (RefineOrder) to the best few: it
// often matters as much as the cut itself, so the ranking before it is only
// a shortlist. The highest simulated throughput wins (the first of equals:
// options come in order of preference).
Result<Staged> BestStaging(const Program& p, const NodeWork& work, double pack_time_limit_s,
                           bool quick, std::string* out_error, int64_t* out_planned = nullptr,
                           bool estimate_memory = false) {
  const size_t refined_count = quick ? 1 : 3;
  BATON_ASSIGN_OR_RETURN(std::vector<StageOption> options, StageOptions(p, work, quick));
  if (out_planned != nullptr) *out_planned += static_cast<int64_t>(options.size());
  std::vector<std::pair<Staged, Program>> planned;  // finished, and staged before finishing
  for (const StageOption& o : options) {
    Program staged = p;
    staged.node_stage = o.stage;
    staged.num_stages = 1 + *std::max_element(o.stage.begin(), o.stage.end());
    Result<Program> done = FinishProgram(staged, o.order.empty() ? nullptr : &o.order,
                                         pack_time_limit_s, /*with_bounds=*/false,
                                         &work.workspace_bytes, estimate_memory);
    Result<SimResult> sim = done.ok() ? SimulateProgram(done.value(), kJudgeInferences)
                                      : Result<SimResult>(Fail(done.error()));
    if (!sim.ok()) {
      if (out_error->empty()) *out_error = sim.error();
      continue;
    }
    planned.push_back({Staged{std::move(done).value(), std::move(sim).value()}, std::move(staged)});
  }
  if (planned.empty()) return Fail(*out_error);
  std::stable_sort(planned.begin(), planned.end(), [](const auto& a, const auto& b) {
    return a.first.sim.throughput_per_s > b.first.sim.throughput_per_s * (1 + kTie);
  });
  std::optional<Staged> best;
  for (size_t i = 0; i < planned.size() && i < refined_count; ++i) {
    Staged candidate = std::move(planned[i].first);
    if (candidate.program.num_stages > 1) {
      if (out_planned != nullptr) ++*out_planned;
      BATON_ASSIGN_OR_RETURN(Program refined,
                             RefineOrder(planned[i].second, candidate.program, pack_time_limit_s,
                                         /*with_bounds=*/false, &work.workspace_bytes,
                                         estimate_memory));
      if (refined.order != candidate.program.order) {
        BATON_ASSIGN_OR_RETURN(SimResult sim, SimulateProgram(refined, kJudgeInferences));
        candidate = Staged{std::move(refined), std::move(sim)};
      }
    }
    if (!best || candidate.sim.throughput_per_s > best->sim.throughput_per_s * (1 + kTie)) {
      best = std::move(candidate);
    }
  }
  return std::move(*best);
}

// Plans `p` (devices assigned, copies not yet inserted) with `in_flight`
// inferences in flight and the best of its stage options.
Result<Judged> PlanCandidate(Program p, const NodeWork& work, int in_flight,
                             double pack_time_limit_s, bool quick, int64_t* out_planned,
                             bool estimate_memory) {
  p.in_flight = in_flight;
  BATON_TRY(InsertCopies(&p));
  if (p.queues.size() > kMaxQueues) return Fail("too many queues");
  std::string error;
  BATON_ASSIGN_OR_RETURN(Staged best, BestStaging(p, work, pack_time_limit_s, quick, &error,
                                                  out_planned, estimate_memory));
  return Judged{std::move(best.program), std::move(best.sim), in_flight};
}

bool BetterJudged(const Judged& a, const Judged& b, Objective objective) {
  if (objective == Objective::kLatency) {
    if (a.sim.latency_mean_s != b.sim.latency_mean_s) {
      return a.sim.latency_mean_s < b.sim.latency_mean_s;
    }
    return a.sim.throughput_per_s > b.sim.throughput_per_s;
  }
  const double ta = a.sim.throughput_per_s, tb = b.sim.throughput_per_s;
  if (ta > tb * (1 + kTie)) return true;
  if (tb > ta * (1 + kTie)) return false;
  if (a.in_flight != b.in_flight) return a.in_flight < b.in_flight;
  return a.sim.latency_mean_s < b.sim.latency_mean_s;
}

// Plans jobs 0..count-1 in order, as one thread would: before each,
// `wanted(k)` says whether the sequential search would plan job k now (it
// reads the state earlier jobs left); `plan(k)` plans it (pure: no shared
// state); `consume(k, result)` records it. With two threads, job k + 1 is
// planned on the second thread while job k is, and dropped unused when
// `wanted(k + 1)` turns false once job k is consumed: the results, and so the
// plan, are the same for any thread count.
template <typename R, typename Plan, typename Wanted, typename Consume>
void PlanInOrder(size_t count, int threads, const Plan& plan, const Wanted& wanted,
                 const Consume& consume) {
  size_t k = 0;
  while (k < count) {
    if (!wanted(k)) {
      ++k;
      continue;
    }
    std::optional<R> second;
    std::thread helper;
    if (threads > 1 && k + 1 < count) helper = std::thread([&, next = k + 1] { second = plan(next); });
    R first = plan(k);
    if (helper.joinable()) helper.join();
    consume(k, std::move(first));
    ++k;
    if (second) {
      if (wanted(k)) consume(k, std::move(*second));
      ++k;
    }
  }
}

// Node seconds on every device (negative where a device cannot run the
// node), from the work the cost model counts on an all-fallback plan, or
// measured (target.profile) where a profile entry matches the node and the
// device, exactly as NodeSeconds will cost the emitted plan.
Result<std::vector<std::vector<double>>> DeviceSeconds(const Program& p, NodeWork* out_work) {
  BATON_ASSIGN_OR_RETURN(NodeWork work, BaseWork(p));
  const size_t n_nodes = p.graph.nodes.size();
  std::vector<std::vector<double>> seconds(n_nodes,
                                           std::vector<double>(p.target.devices.size(), -1.0));
  for (size_t n = 0; n < n_nodes; ++n) {
    for (size_t d = 0; d < p.target.devices.size(); ++d) {
      const TargetDevice& dev = p.target.devices[d];
      std::string why;
      if (!DeviceCanRun(p.graph, dev, p.graph.nodes[n], &why)) continue;
      std::optional<double> measured;
      if (p.target.profile != nullptr && p.graph.nodes[n].op != kCopyOp) {
        measured = p.target.profile->Seconds(work.signature[n], dev.kind, dev.name);
      }
      seconds[n][d] =
          measured ? *measured
                   : DeviceSeconds(dev.cost, work.macs[n], work.bytes[n],
                                   dev.ThreadsFor(p.graph.nodes[n].op));
    }
  }
  *out_work = std::move(work);
  return seconds;
}

class AutoPlanner {
 public:
  AutoPlanner(Program assigned, const PlanOptions& o)
      : base_(std::move(assigned)),
        light_(WithoutWeights(base_)),
        options_(o),
        objective_(o.objective == "latency" ? Objective::kLatency : Objective::kThroughput),
        option_budget_(std::max<int64_t>(
            kMinOptions, kOptionNodeBudget / std::max<int64_t>(1, static_cast<int64_t>(
                                                                      base_.graph.nodes.size())))),
        deadline_(std::chrono::steady_clock::now() +
                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                      std::chrono::duration<double>(std::min(o.auto_time_limit_s, 1e7)))),
        // Big graphs: candidates' arenas estimated (PlanMemory's `estimate`),
        // not packed: packing decides which tensors may share bytes pair by
        // pair, quadratic in the tensors, and would leave a 5,000-node graph
        // a handful of candidates within the budget. The written plan is
        // packed exactly; if it does not fit, the best single device is
        // written instead.
        estimate_memory_(base_.graph.nodes.size() > o.auto_estimate_memory_nodes) {}

  Result<Program> Run() {
    BATON_ASSIGN_OR_RETURN(auto seconds, DeviceSeconds(light_, &work_));
    BATON_ASSIGN_OR_RETURN(PartitionModel model,
                           PartitionModel::Build(base_, std::move(seconds), work_.workspace_bytes));
    JudgeSingles(model);
    double fraction = 1;
    for (double f : kMemoryFractions) {
      fraction = f;
      model.SetMemoryFraction(f);
      SearchOptions search;
      search.objective = objective_;
      search.exact_limit = options_.auto_exact_limit;
      search.max_in_flight = objective_ == Objective::kLatency ? 1 : options_.max_in_flight;
      JudgeAll(SearchPartitions(model, search), /*always=*/false);
      if (best_) break;
    }
    if (!best_) return Fail(NoPlanMessage());
    Shortlist();
    return Finish(model, fraction);
  }

 private:
  // Depths the screening tries: 1, 2 and the deepest allowed; the
  // shortlist then tries every depth for the best assignments.
  std::vector<int> Depths() const {
    const int max_depth = objective_ == Objective::kLatency ? 1 : options_.max_in_flight;
    std::vector<int> depths = {1};
    if (max_depth >= 2) depths.push_back(2);
    if (max_depth > 2) depths.push_back(max_depth);
    return depths;
  }

  // One candidate planned: its result and the stage options it cost.
  struct Planned {
    Result<Judged> judged = Fail("not planned");
    int64_t options = 0;
  };

  Planned PlanJob(const std::vector<int>& devices, int depth, bool quick) const {
    Program p = light_;
    p.node_device = devices;
    Planned out;
    out.judged = PlanCandidate(std::move(p), work_, depth, /*pack_time_limit_s=*/0.0, quick,
                               &out.options, estimate_memory_);
    return out;
  }

  // Plans every assignment of `candidates` at every depth of Depths() and
  // keeps the best plan overall; returns each assignment's best (empty where
  // none could be planned). `always`: at depth 1 even when the work budget
  // is spent (the single devices: the baseline the result must not fall
  // below). Within one assignment, depths stop once the budget is spent.
  std::vector<std::optional<Judged>> JudgeAll(const std::vector<std::vector<int>>& candidates,
                                              bool always) {
    const std::vector<int> depths = Depths();
    const size_t per = depths.size();
    std::vector<std::optional<Judged>> best_of(candidates.size());
    PlanInOrder<Planned>(
        candidates.size() * per, options_.auto_threads,
        [&](size_t job) { return PlanJob(candidates[job / per], depths[job % per], true); },
        [&](size_t job) { return (always && depths[job % per] == 1) || !OutOfWork(); },
        [&](size_t job, Planned planned) {
          ++planned_;
          options_planned_ += planned.options;
          if (!planned.judged.ok()) {
            if (first_error_.empty()) first_error_ = planned.judged.error();
            return;
          }
          Judged& judged = planned.judged.value();
          std::optional<Judged>& best_here = best_of[job / per];
          screened_.push_back({candidates[job / per], depths[job % per],
                               judged.sim.throughput_per_s, judged.sim.latency_mean_s});
          if (!best_here || BetterJudged(judged, *best_here, objective_)) {
            best_here = std::move(judged);
          }
        });
    for (const std::optional<Judged>& best_here : best_of) {
      if (best_here && (!best_ || BetterJudged(*best_here, *best_, objective_))) best_ = best_here;
    }
    return best_of;
  }

  // Re-plans the best few screened assignments at every depth with every
  // stage option and the profile-guided order; the best of those wins.
  void Shortlist() {
    constexpr size_t kShortlist = 2;
    std::vector<Screened> sorted = screened_;
    std::stable_sort(sorted.begin(), sorted.end(), [this](const Screened& a, const Screened& b) {
      if (objective_ == Objective::kLatency) return a.latency_s < b.latency_s;
      return a.throughput > b.throughput;
    });
    std::vector<std::vector<int>> done;
    const int max_depth = objective_ == Objective::kLatency ? 1 : options_.max_in_flight;
    for (size_t i = 0; i < sorted.size() && done.size() < kShortlist; ++i) {
      if (std::find(done.begin(), done.end(), sorted[i].devices) != done.end()) continue;
      done.push_back(sorted[i].devices);
    }
    const size_t per = static_cast<size_t>(max_depth);
    PlanInOrder<Planned>(
        done.size() * per, options_.auto_threads,
        [&](size_t job) {
          return PlanJob(done[job / per], static_cast<int>(job % per) + 1, /*quick=*/false);
        },
        [&](size_t) { return !OutOfWork(); },
        [&](size_t, Planned planned) {
          ++planned_;
          options_planned_ += planned.options;
          if (planned.judged.ok() && BetterJudged(planned.judged.value(), *best_, objective_)) {
            best_ = std::move(planned.judged).value();
          }
        });
  }

  // Every device alone (where it can run the nodes): the baseline the
  // result must beat, and the report's reference.
  void JudgeSingles(const PartitionModel& model) {
    std::vector<std::vector<int>> singles;
    for (size_t d = 0; d < base_.target.devices.size(); ++d) {
      singles.push_back(model.SingleDevice(static_cast<int>(d)));
    }
    std::vector<std::optional<Judged>> judged = JudgeAll(singles, /*always=*/true);
    for (size_t d = 0; d < base_.target.devices.size(); ++d) {
      std::optional<Judged>& j = judged[d];
      if (!j) continue;
      if (!best_single_ || BetterJudged(*j, *best_single_, objective_)) {
        best_single_ = std::move(j);
        best_single_name_ = base_.target.devices[d].name;
      }
    }
  }

  // The work budget is spent (the search stops; deterministic), or the
  // --auto-time-limit passed (the best plan so far wins; recorded).
  bool OutOfWork() {
    if (options_planned_ >= option_budget_) return true;
    if (!time_limit_hit_ && std::chrono::steady_clock::now() >= deadline_) time_limit_hit_ = true;
    return time_limit_hit_;
  }

  std::string NoPlanMessage() const {
    return "--auto: no placement fits the target's memories (every candidate failed; first: " +
           first_error_ + ")";
  }

  // Re-packs the winner's arenas with the full packing time (same devices,
  // stages and order), and fills the report.
  Result<Program> Finish(const PartitionModel& model, double fraction) {
    Result<Program> written = FinishJudged(*best_);
    if (!written.ok() && estimate_memory_ && best_single_) {
      // The estimate let through a plan the packer cannot fit: the best
      // single device (a candidate the search always has) instead.
      written = FinishJudged(*best_single_);
      if (written.ok()) best_ = best_single_;
    }
    if (!written.ok()) return Fail(written.error());
    Program out = std::move(written).value();
    BATON_ASSIGN_OR_RETURN(SimResult sim, SimulateProgram(out, kJudgeInferences));
    FillReport(model, fraction, sim, &out);
    return out;
  }

  // `j` (devices, depth, stages and order) planned from base_ (weights
  // included) with the full packing time.
  Result<Program> FinishJudged(const Judged& j) const {
    Program staged = base_;
    staged.node_device = j.program.node_device;
    staged.node_device.resize(base_.graph.nodes.size());
    staged.in_flight = j.in_flight;
    BATON_TRY(InsertCopies(&staged));
    staged.node_stage = j.program.node_stage;
    staged.num_stages = j.program.num_stages;
    return FinishProgram(staged, &j.program.order, options_.pack_time_limit_s);
  }

  void FillReport(const PartitionModel& model, double fraction, const SimResult& sim,
                  Program* out) const {
    AutoReport& r = out->auto_report;
    r.ran = true;
    r.objective = objective_ == Objective::kLatency ? "latency" : "throughput";
    r.throughput_per_s = sim.throughput_per_s;
    r.latency_s = sim.latency_mean_s;
    r.bound_throughput_per_s = sim.bound_throughput_per_s;
    size_t bottleneck = 0;
    for (size_t q = 0; q < sim.queue_busy_s.size(); ++q) {
      if (sim.queue_busy_s[q] > sim.queue_busy_s[bottleneck]) bottleneck = q;
    }
    if (!sim.queue_names.empty()) r.bottleneck_queue = sim.queue_names[bottleneck];
    if (best_single_) {
      r.best_single_device = best_single_name_;
      r.best_single_throughput_per_s = best_single_->sim.throughput_per_s;
      r.best_single_latency_s = best_single_->sim.latency_mean_s;
      r.best_single_in_flight = best_single_->in_flight;
    }
    r.queues = sim.queue_names;
    r.utilization = sim.utilization;
    for (double busy : sim.queue_busy_s) {
      r.queue_busy_s.push_back(sim.inferences > 0 ? busy / sim.inferences : 0.0);
    }
    r.candidates_planned = planned_;
    r.time_limit_hit = time_limit_hit_;
    r.memory_fraction = fraction;
    for (size_t n = 0; n < model.num_nodes(); ++n) {
      if (model.Pinned(static_cast<int>(n))) r.pinned.push_back(base_.graph.nodes[n].name);
    }
  }

  Program base_;
  Program light_;  // base_ without weights: what candidates are planned from
  NodeWork work_;  // per node of base_, for the stage options
  const PlanOptions& options_;
  Objective objective_;
  int64_t option_budget_;         // stage options the search may plan
  int64_t options_planned_ = 0;
  std::chrono::steady_clock::time_point deadline_;
  bool estimate_memory_;  // candidates' arenas estimated, not packed
  bool time_limit_hit_ = false;
  struct Screened {
    std::vector<int> devices;
    int depth;
    double throughput, latency_s;
  };
  std::vector<Screened> screened_;
  std::optional<Judged> best_;
  std::optional<Judged> best_single_;
  std::string best_single_name_;
  std::string first_error_;
  int planned_ = 0;
};

}  // namespace

namespace {

// `p` scheduled as one stage at depth 1 (and with its workspaces when
// asked), emitted: the plan the cost model reads node times from. Plan node
// k is emitted.program.order[k].
struct SingleStage {
  Program program;
  std::string bytes;
};

Result<SingleStage> EmitSingleStage(const Program& p, bool with_workspace) {
  SingleStage s{p, {}};
  s.program.in_flight = 1;
  BATON_TRY(AssignStages({}, &s.program));
  BATON_TRY(Schedule(&s.program));
  if (with_workspace) BATON_TRY(PlanWorkspace(&s.program));
  BATON_ASSIGN_OR_RETURN(s.bytes, EmitPlan(s.program));
  return s;
}

}  // namespace

Result<NodeWork> ProgramWork(const Program& p) {
  BATON_ASSIGN_OR_RETURN(SingleStage s, EmitSingleStage(p, /*with_workspace=*/true));
  const Program& c = s.program;
  const schema::Plan* plan = schema::GetPlan(s.bytes.data());
  NodeWork work;
  const size_t n_nodes = c.graph.nodes.size();
  work.macs.assign(n_nodes, 0);
  work.bytes.assign(n_nodes, 0);
  work.workspace_bytes.assign(n_nodes, 0);
  work.signature.assign(n_nodes, std::string());
  for (size_t k = 0; k < c.order.size(); ++k) {
    const int n = c.order[k];
    if (c.target.profile != nullptr) work.signature[n] = NodeSignature(*plan, static_cast<uint32_t>(k));
    work.macs[n] = NodeMacs(*plan, static_cast<uint32_t>(k));
    work.bytes[n] = NodeBytes(*plan, static_cast<uint32_t>(k));
    for (int t : c.workspace[n]) work.workspace_bytes[n] += c.graph.tensors[t].bytes();
    // One thread's share: PlanWorkspace scales it again for the node.
    work.workspace_bytes[n] /= c.NodeThreads(n);
  }
  return work;
}

Result<NodeWork> BaseWork(const Program& p) {
  Program cpu = p;
  cpu.node_device.assign(p.graph.nodes.size(), p.target.fallback);
  BATON_TRY(InsertCopies(&cpu));
  BATON_ASSIGN_OR_RETURN(NodeWork work, ProgramWork(cpu));
  const size_t n_nodes = p.graph.nodes.size();
  work.macs.resize(n_nodes);
  work.bytes.resize(n_nodes);
  work.workspace_bytes.resize(n_nodes);
  return work;
}

Program WithoutWeights(const Program& p) {
  Program light = p;
  for (Tensor& t : light.graph.tensors) {
    if (t.is_constant && t.dtype == DType::Float32 && t.data.size() > kElideConstantBytes) {
      std::vector<uint8_t>().swap(t.data);
    }
  }
  return light;
}

Result<std::vector<double>> ProgramSeconds(const Program& p, const NodeWork& work) {
  // The cost model's formulas (analysis/cost.h) on the counts of `work`: the
  // same numbers NodeSeconds reads from an emitted plan, without emitting.
  const Graph& g = p.graph;
  std::vector<double> seconds(g.nodes.size(), 0.0);
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& node = g.nodes[n];
    if (node.op != kCopyOp) {
      // A region's cost is its nodes' (analysis/cost.cc): ask the cost model.
      if (n >= work.macs.size() || p.node_device[n] < 0 || node.op == kSubgraphOp) {
        return ProgramSeconds(p);
      }
      const TargetDevice& dev = p.target.devices[p.node_device[n]];
      seconds[n] = DeviceSeconds(dev.cost, work.macs[n], work.bytes[n], dev.ThreadsFor(node.op));
      continue;
    }
    const int from = p.tensor_domain[node.inputs[0]], to = p.tensor_domain[node.outputs[0]];
    const TargetLink* link = from >= 0 && to >= 0 ? p.target.FindLink(from, to) : nullptr;
    if (link == nullptr) return ProgramSeconds(p);  // the cost model's special cases
    seconds[n] = link->latency_s +
                 static_cast<double>(g.tensors[node.outputs[0]].bytes()) / link->bytes_per_s;
  }
  return seconds;
}

Result<std::vector<double>> ProgramSeconds(const Program& p) {
  BATON_ASSIGN_OR_RETURN(SingleStage s, EmitSingleStage(p, /*with_workspace=*/false));
  BATON_ASSIGN_OR_RETURN(std::vector<double> by_plan_node,
                         NodeSeconds(*schema::GetPlan(s.bytes.data()), s.program.target));
  std::vector<double> seconds(s.program.graph.nodes.size(), 0.0);
  for (size_t k = 0; k < s.program.order.size(); ++k) seconds[s.program.order[k]] = by_plan_node[k];
  return seconds;
}

Check ChooseStages(Program* p, std::vector<int>* out_order) {
  // The simulator decides; an option that cannot be planned (arenas over
  // capacity) drops out. With none left, device boundaries stay, and the
  // caller's FinishProgram reports the error. Options are planned without
  // weights: only their shapes count.
  std::string error;
  Program light = WithoutWeights(*p);
  Result<NodeWork> work = ProgramWork(light);
  Result<Staged> best = work.ok() ? BestStaging(light, work.value(), 0.0, /*quick=*/false, &error)
                                  : Result<Staged>(Fail(work.error()));
  if (!best.ok()) {
    out_order->clear();
    return AssignStages({}, p);
  }
  p->node_stage = best->program.node_stage;
  p->num_stages = best->program.num_stages;
  *out_order = best->program.order;
  return Check();
}

Result<Program> PlanAuto(Program assigned, const PlanOptions& options) {
  return AutoPlanner(std::move(assigned), options).Run();
}

}  // namespace baton::planner::internal
