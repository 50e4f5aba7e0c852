#include "baton/planner/memory/memory.h"

#include <algorithm>
#include <set>

#include "baton/kernels.h"
#include "baton/planner/emit/emit.h"
#include "baton/planner/emit/lower.h"
#include "baton/planner/memory/happens_before.h"
#include "baton/planner/memory/pack.h"

namespace baton::planner {
namespace {

uint64_t AlignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// Who touches each arena tensor. kCaller stands for the application (it
// writes graph inputs and reads graph outputs).
constexpr int kCaller = -1;

struct Accesses {
  int writer = kCaller;
  std::vector<int> readers;  // may contain kCaller
  bool io = false;
};

std::vector<Accesses> CollectAccesses(const Program& p) {
  const Graph& g = p.graph;
  std::vector<Accesses> acc(g.tensors.size());
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    for (int t : RuntimeInputs(g, g.nodes[n])) {
      if (t < 0) continue;
      std::vector<int>& readers = acc[t].readers;
      if (std::find(readers.begin(), readers.end(), static_cast<int>(n)) == readers.end()) {
        readers.push_back(static_cast<int>(n));
      }
    }
    for (int t : g.nodes[n].outputs) acc[t].writer = static_cast<int>(n);
    if (n < p.workspace.size()) {
      for (int t : p.workspace[n]) {
        acc[t].writer = static_cast<int>(n);
        acc[t].readers.push_back(static_cast<int>(n));
      }
    }
  }
  for (int t : g.inputs) acc[t].io = true;
  for (int t : g.outputs) {
    acc[t].io = true;
    acc[t].readers.push_back(kCaller);
  }
  return acc;
}

// Accessors of a tensor: its nodes, plus the caller's write of a graph
// input (kCallerWrite) or read of a graph output (kCallerRead).
constexpr int kCallerWrite = -2;
constexpr int kCallerRead = -3;

std::vector<int> Accessors(const Accesses& a) {
  std::vector<int> out;
  out.push_back(a.writer == kCaller ? kCallerWrite : a.writer);
  for (int r : a.readers) {
    int who = r == kCaller ? kCallerRead : r;
    if (std::find(out.begin(), out.end(), who) == out.end()) out.push_back(who);
  }
  return out;
}

// Does access x at inference i happen-before access y at inference i + delta?
// The caller's accesses are ordered by the async API: inputs of i are written
// before any node of i runs, outputs of i are read after all of i finished,
// and inference i + D is admitted only after inference i was retrieved.
bool Before(const HappensBefore& hb, int in_flight, int x, int y, int delta) {
  const bool x_caller = x < 0, y_caller = y < 0;
  if (!x_caller && !y_caller) return hb.Completed(x, -delta, y);
  if (x == kCallerWrite) return delta >= (y == kCallerWrite ? 1 : 0);
  if (x == kCallerRead) return y == kCallerRead ? delta >= 1 : delta >= in_flight;
  // x is a node.
  return y == kCallerRead ? delta >= 0 : delta >= in_flight;
}

// Every access of A at inference i ends before every access of B at i + delta.
bool AllBefore(const HappensBefore& hb, int in_flight, const std::vector<int>& a,
               const std::vector<int>& b, int delta) {
  for (int x : a) {
    for (int y : b) {
      if (!Before(hb, in_flight, x, y, delta)) return false;
    }
  }
  return true;
}

// Largest total weight of a set of pairwise-conflicting buffers: no packing
// can be lower. Branch and bound with a node budget; whatever clique it has
// found when the budget runs out is still a valid lower bound.
int64_t MaxWeightClique(const std::vector<int64_t>& weight,
                        const std::vector<std::vector<bool>>& conflict) {
  const size_t n = weight.size();
  std::vector<int> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(),
            [&](int a, int b) { return weight[a] != weight[b] ? weight[a] > weight[b] : a < b; });
  int64_t best = 0;
  long budget = 200000;
  std::vector<int> candidates = order;
  auto search = [&](auto&& self, std::vector<int>& cand, int64_t current) -> void {
    if (current > best) best = current;
    if (--budget < 0) return;
    int64_t rest = 0;
    for (int c : cand) rest += weight[c];
    for (size_t k = 0; k < cand.size(); ++k) {
      if (current + rest <= best) return;
      const int v = cand[k];
      rest -= weight[v];
      std::vector<int> next;
      for (size_t j = k + 1; j < cand.size(); ++j) {
        if (conflict[v][cand[j]]) next.push_back(cand[j]);
      }
      self(self, next, current + weight[v]);
      if (budget < 0) return;
    }
  };
  search(search, candidates, 0);
  return best;
}

// What the node's kernel asks for (WorkspaceBytes), given the plan's tensors.
Result<size_t> NodeWorkspaceBytes(const schema::Plan& plan, const schema::Node& node) {
  TensorArg args[kMaxNodeTensors];
  uint32_t used = 0;
  KernelCall call;
  call.node = &node;
  call.inputs = args;
  auto too_many = [&] { return Fail("node '" + node.name()->str() + "': too many tensors"); };
  if (node.inputs()) {
    for (int32_t t : *node.inputs()) {
      if (used >= kMaxNodeTensors) return too_many();
      args[used] = TensorArg();
      if (t >= 0) args[used].tensor = plan.tensors()->Get(static_cast<uint32_t>(t));
      ++used;
      ++call.num_inputs;
    }
  }
  call.outputs = args + used;
  for (uint32_t t : *node.outputs()) {
    if (used >= kMaxNodeTensors) return too_many();
    args[used] = TensorArg();
    args[used].tensor = plan.tensors()->Get(t);
    ++used;
    ++call.num_outputs;
  }
  return WorkspaceBytes(call);
}

// Node n's workspace tensor of `bytes`, in its queue's first domain.
void AddWorkspace(Program* p, int n, size_t bytes) {
  Tensor ws;
  ws.name = p->graph.nodes[n].name + ".workspace";
  ws.dtype = DType::UInt8;
  ws.shape = {static_cast<int64_t>(bytes)};
  ws.shape_known = true;
  const int t = p->graph.AddTensor(std::move(ws));
  const QueueInfo& q = p->queues[p->node_queue[n]];
  p->tensor_domain.push_back(q.device >= 0 ? p->target.devices[q.device].domains[0] : q.domains[0]);
  p->workspace[n].push_back(t);
}

// The arena tensors: not constants, and touched by someone.
std::set<int> EmittedTensors(const Graph& g, const std::vector<Accesses>& acc) {
  std::set<int> emitted;
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    if (!g.tensors[t].is_constant &&
        (acc[t].writer != kCaller || !acc[t].readers.empty() || acc[t].io)) {
      emitted.insert(static_cast<int>(t));
    }
  }
  return emitted;
}

// Per tensor: graph inputs and outputs get one slot per inference in flight,
// others one more than the stages between the writer and the last reader.
std::vector<uint32_t> ChooseSlots(const Program& p, const std::vector<Accesses>& acc,
                                  const std::set<int>& emitted) {
  std::vector<uint32_t> slots(p.graph.tensors.size(), 1);
  for (int t : emitted) {
    if (acc[t].io) {
      slots[t] = static_cast<uint32_t>(p.in_flight);
      continue;
    }
    int span = 0;
    for (int r : acc[t].readers) {
      if (r != kCaller) span = std::max(span, p.node_stage[r] - p.node_stage[acc[t].writer]);
    }
    slots[t] = static_cast<uint32_t>(std::min(p.in_flight, span + 1));
  }
  return slots;
}

// Lag waits: the writer of inference i + slots must start after each reader
// of inference i completed. Adds those the schedule does not already imply
// (judged on the schedule as it was before any of them was added).
void AddLagWaits(Program* p, const std::vector<Accesses>& acc, const std::set<int>& emitted,
                 const std::vector<uint32_t>& slots) {
  HappensBefore hb(*p);
  bool added = false;
  for (int t : emitted) {
    if (acc[t].io || acc[t].writer == kCaller) continue;
    const int w = acc[t].writer;
    const int s = static_cast<int>(slots[t]);
    for (int r : acc[t].readers) {
      if (r == kCaller || r == w) continue;
      if (hb.Completed(r, -s, w)) continue;
      WaitEdge edge{r, s};
      auto& waits = p->waits[w];
      if (std::find(waits.begin(), waits.end(), edge) == waits.end()) {
        waits.push_back(edge);
        added = true;
      }
    }
  }
  if (added) {
    for (auto& waits : p->waits) std::sort(waits.begin(), waits.end());
  }
}

// What the memory pass knows once slots and waits are settled.
struct MemoryFacts {
  const Program& p;
  const std::vector<Accesses>& acc;
  const std::set<int>& emitted;
  const std::vector<uint32_t>& slots;
  const HappensBefore& hb;
  std::vector<int> order_pos;  // per node: its position in the plan order
};

// One domain's tensors as a packing problem.
struct DomainProblem {
  std::vector<int> members;                 // tensors, ascending
  std::vector<std::vector<int>> accessors;  // per member (Accessors)
  std::vector<bool> exclusive;              // multi-slot: keeps its bytes to itself
  std::vector<std::vector<bool>> conflict;  // per pair of members, from happens-before
  PackProblem problem;                      // one buffer per member
};

// A member's buffer: all its slots, live on the plan order from its first
// to its last access, or for ever when exclusive. Time 0 is the caller's
// write of the inputs, horizon - 1 its read of the outputs.
PackBuffer MemberBuffer(const MemoryFacts& f, const DomainProblem& dp, size_t k, uint64_t align) {
  const int t = dp.members[k];
  const Tensor& tensor = f.p.graph.tensors[t];
  const int horizon = static_cast<int>(f.p.order.size()) + 2;
  PackBuffer buf;
  buf.id = tensor.name;
  const uint64_t stride = AlignUp(tensor.bytes(), align);
  buf.size = static_cast<int64_t>(std::max<uint64_t>(stride * f.slots[t], align));
  if (dp.exclusive[k]) {
    buf.lower = 0;
    buf.upper = horizon;
    return buf;
  }
  int lo = horizon, hi = 0;
  for (int n : dp.accessors[k]) {
    const int at = n == kCallerWrite ? 0 : n == kCallerRead ? horizon - 1 : f.order_pos[n] + 1;
    lo = std::min(lo, at);
    hi = std::max(hi, at + 1);
  }
  buf.lower = lo;
  buf.upper = std::max(hi, lo + 1);
  return buf;
}

// True conflicts from happens-before: two single-slot tensors may share bytes
// when, at every inference, all accesses of one come before all accesses of
// the other, and those before the first's accesses at the next inference.
// When the conflicts are exactly the interval intersections on the plan
// order (the single-queue case), the packer gets intervals alone; otherwise
// every buffer gets its own unit interval and the conflicts are listed.
void SetConflicts(const MemoryFacts& f, DomainProblem* dp) {
  const HappensBefore& hb = f.hb;
  const int in_flight = f.p.in_flight;
  const auto& acs = dp->accessors;
  const size_t m = dp->members.size();
  dp->conflict.assign(m, std::vector<bool>(m, false));
  bool interval_exact = true;
  for (size_t a = 0; a < m; ++a) {
    for (size_t b = a + 1; b < m; ++b) {
      const bool compatible = !dp->exclusive[a] && !dp->exclusive[b] &&
                              ((AllBefore(hb, in_flight, acs[a], acs[b], 0) &&
                                AllBefore(hb, in_flight, acs[b], acs[a], 1)) ||
                               (AllBefore(hb, in_flight, acs[b], acs[a], 0) &&
                                AllBefore(hb, in_flight, acs[a], acs[b], 1)));
      dp->conflict[a][b] = dp->conflict[b][a] = !compatible;
      const PackBuffer& x = dp->problem.buffers[a];
      const PackBuffer& y = dp->problem.buffers[b];
      const bool intersect = x.lower < y.upper && y.lower < x.upper;
      if (intersect != !compatible) interval_exact = false;
    }
  }
  if (interval_exact) return;
  for (size_t a = 0; a < m; ++a) {
    dp->problem.buffers[a].lower = static_cast<int64_t>(a);
    dp->problem.buffers[a].upper = static_cast<int64_t>(a) + 1;
    for (size_t b = a + 1; b < m; ++b) {
      if (dp->conflict[a][b]) {
        dp->problem.extra_conflicts.emplace_back(static_cast<int>(a), static_cast<int>(b));
      }
    }
  }
}

DomainProblem BuildDomainProblem(const MemoryFacts& f, int d, double pack_time_limit_s) {
  const uint64_t align = f.p.target.domains[d].alignment;
  DomainProblem dp;
  for (int t : f.emitted) {
    if (f.p.tensor_domain[t] == d) dp.members.push_back(t);
  }
  dp.problem.alignment = static_cast<int64_t>(align);
  dp.problem.time_limit_s = pack_time_limit_s;
  dp.accessors.resize(dp.members.size());
  dp.exclusive.assign(dp.members.size(), false);
  for (size_t k = 0; k < dp.members.size(); ++k) {
    const int t = dp.members[k];
    dp.accessors[k] = Accessors(f.acc[t]);
    dp.exclusive[k] = f.slots[t] > 1;
    dp.problem.buffers.push_back(MemberBuffer(f, dp, k, align));
  }
  SetConflicts(f, &dp);
  return dp;
}

// Is the instance of inference i + j of a tensor live while node n runs
// inference i? It is when n touches it, or when it was written before n
// started and is read after n ended.
bool MustBeLive(const HappensBefore& hb, const Accesses& a, const std::vector<int>& accessors,
                int n, int j) {
  const bool touched =
      j == 0 && std::find(accessors.begin(), accessors.end(), n) != accessors.end();
  const bool written = a.writer == kCaller ? j <= 0 : hb.Completed(a.writer, j, n);
  bool read_later = false;
  for (int r : a.readers) {
    if (r == kCaller) {
      read_later |= j >= 0;
    } else {
      read_later |= hb.Completed(n, -j, r);
    }
  }
  return touched || (written && read_later);
}

// The peak of the must-live bound: the node, the total, and the members live
// there (with the bytes they hold).
struct Peak {
  int node = -1;
  uint64_t bytes = 0;
  std::vector<std::pair<uint64_t, int>> live;  // (bytes, member)
};

// The largest total of single-slot tensor instances that must all be live
// while one node runs. (Multi-slot tensors are counted whole in LowerBound.)
Peak MustLivePeak(const MemoryFacts& f, const DomainProblem& dp, uint64_t align) {
  const Graph& g = f.p.graph;
  const int in_flight = f.p.in_flight;
  Peak best;
  std::vector<uint64_t> member_bytes;  // aligned, hoisted out of the nodes x members loop
  for (int t : dp.members) member_bytes.push_back(AlignUp(g.tensors[t].bytes(), align));
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    Peak here;
    here.node = static_cast<int>(n);
    for (size_t k = 0; k < dp.members.size(); ++k) {
      if (dp.exclusive[k]) continue;
      const int t = dp.members[k];
      const uint64_t bytes = member_bytes[k];
      uint64_t held = 0;
      for (int j = -in_flight; j <= in_flight; ++j) {
        if (MustBeLive(f.hb, f.acc[t], dp.accessors[k], static_cast<int>(n), j)) held += bytes;
      }
      if (held == 0) continue;
      here.bytes += held;
      here.live.push_back({held, static_cast<int>(k)});
    }
    if (best.node < 0 || here.bytes > best.bytes) best = std::move(here);
  }
  return best;
}

// The clique bound over single-slot tensors: for them a conflict means no
// two instances may ever share a byte.
uint64_t CliqueBound(const DomainProblem& dp) {
  std::vector<int64_t> weights;
  for (size_t k = 0; k < dp.members.size(); ++k) {
    weights.push_back(dp.exclusive[k] ? 0 : dp.problem.buffers[k].size);
  }
  return static_cast<uint64_t>(MaxWeightClique(weights, dp.conflict));
}

// The report's lower bound: every slot of every multi-slot tensor (the plan
// keeps them apart from everything, for the whole stream) plus the larger of
// the single-slot must-live peak and clique bound. So bound <= arena always.
uint64_t LowerBound(const DomainProblem& dp, const Peak& peak) {
  uint64_t exclusive = 0;
  for (size_t k = 0; k < dp.members.size(); ++k) {
    if (dp.exclusive[k]) exclusive += static_cast<uint64_t>(dp.problem.buffers[k].size);
  }
  return exclusive + std::max(peak.bytes, CliqueBound(dp));
}

// Names what holds the memory when a domain overflows: the node at the
// single-slot peak, the largest tensors there and the largest multi-slot
// tensors, and what to do about it.
std::string OverflowMessage(const Program& p, const DomainProblem& dp, const Peak& peak, int d,
                            uint64_t arena, uint64_t bound) {
  const TargetDomain& domain = p.target.domains[d];
  std::string out = "domain '" + domain.name + "': arena needs " + std::to_string(arena) +
                    " bytes but the capacity is " + std::to_string(domain.bytes) +
                    " (lower bound " + std::to_string(bound) + ")";
  std::vector<std::pair<uint64_t, int>> largest = peak.live;
  for (size_t k = 0; k < dp.members.size(); ++k) {
    if (dp.exclusive[k]) {
      largest.push_back({static_cast<uint64_t>(dp.problem.buffers[k].size), static_cast<int>(k)});
    }
  }
  std::stable_sort(largest.begin(), largest.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  if (peak.node >= 0) out += "; at the peak, node '" + p.graph.nodes[peak.node].name + "' runs";
  out += "; largest tensors held:";
  for (size_t i = 0; i < largest.size() && i < 3; ++i) {
    const int t = dp.members[largest[i].second];
    out += std::string(i ? "," : "") + " '" + p.graph.tensors[t].name + "' (" +
           std::to_string(largest[i].first) + " bytes" +
           (dp.exclusive[largest[i].second]
                ? ", " + std::to_string(p.placement[t].slots) + " slots"
                : "") +
           ")";
  }
  std::string devices;
  for (const TargetDevice& dev : p.target.devices) {
    if (!dev.domains.empty() && dev.domains[0] == d) devices += (devices.empty() ? "" : ", ") + dev.name;
  }
  out += "; try --auto, fewer nodes on " + (devices.empty() ? std::string("its devices") : devices) +
         (p.in_flight > 1 ? ", or a smaller --in-flight" : "");
  return out;
}

// Packs domain d, places its tensors and fills its report; fails when the
// arena exceeds the domain's capacity.
Check PlanDomain(Program* p, const MemoryFacts& f, int d, double pack_time_limit_s,
                 bool with_bounds) {
  const DomainProblem dp = BuildDomainProblem(f, d, pack_time_limit_s);
  if (dp.members.empty()) return {};
  const TargetDomain& domain = p->target.domains[d];
  const uint64_t align = domain.alignment;
  BATON_ASSIGN_OR_RETURN(PackSolution solution, Pack(dp.problem));
  for (size_t k = 0; k < dp.members.size(); ++k) {
    const int t = dp.members[k];
    TensorPlacement& place = p->placement[t];
    place.domain = d;
    place.offset = static_cast<uint64_t>(solution.offsets[k]);
    place.slots = f.slots[t];
    place.slot_stride = f.slots[t] > 1 ? AlignUp(p->graph.tensors[t].bytes(), align) : 0;
  }
  DomainReport& report = p->domain_report[d];
  report.arena_bytes = AlignUp(static_cast<uint64_t>(solution.height), align);
  if (!with_bounds && report.arena_bytes <= domain.bytes) return {};
  const Peak peak = MustLivePeak(f, dp, align);
  report.lower_bound_bytes = LowerBound(dp, peak);
  if (report.arena_bytes > domain.bytes) {
    return Fail(OverflowMessage(*p, dp, peak, d, report.arena_bytes, report.lower_bound_bytes));
  }
  return {};
}

}  // namespace

Check PlanWorkspace(Program* p) {
  p->workspace.assign(p->graph.nodes.size(), {});
  // The kernels size their workspace from the plan's view of a node, so ask
  // them about a plan emitted without one.
  BATON_ASSIGN_OR_RETURN(std::string bytes, EmitPlan(*p));
  const schema::Plan* plan = schema::GetPlan(bytes.data());
  // Plan node k is p->order[k].
  for (uint32_t k = 0; k < plan->nodes()->size(); ++k) {
    BATON_ASSIGN_OR_RETURN(size_t need, NodeWorkspaceBytes(*plan, *plan->nodes()->Get(k)));
    if (need == 0) continue;
    AddWorkspace(p, p->order[k], need);
  }
  return {};
}

Check PlanMemory(Program* p, double pack_time_limit_s, bool with_bounds) {
  const std::vector<Accesses> acc = CollectAccesses(*p);
  const std::set<int> emitted = EmittedTensors(p->graph, acc);
  p->placement.assign(p->graph.tensors.size(), TensorPlacement());
  const std::vector<uint32_t> slots = ChooseSlots(*p, acc, emitted);
  AddLagWaits(p, acc, emitted, slots);
  // Conflicts and bounds are judged with the lag waits in place.
  const HappensBefore hb(*p);
  MemoryFacts facts{*p, acc, emitted, slots, hb, std::vector<int>(p->graph.nodes.size(), 0)};
  for (size_t k = 0; k < p->order.size(); ++k) facts.order_pos[p->order[k]] = static_cast<int>(k);
  p->domain_report.assign(p->target.domains.size(), DomainReport());
  for (size_t d = 0; d < p->target.domains.size(); ++d) {
    BATON_TRY(PlanDomain(p, facts, static_cast<int>(d), pack_time_limit_s, with_bounds));
  }
  return {};
}

}  // namespace baton::planner
