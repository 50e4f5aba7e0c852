#include "baton/planner/memory/memory.h"

#include <algorithm>
#include <set>

#include "baton/kernels.h"
#include "baton/parallel.h"
#include "baton/postprocess.h"
#include "baton/planner/emit/emit.h"
#include "baton/planner/emit/lower.h"
#include "baton/planner/memory/happens_before.h"
#include "baton/planner/memory/pack.h"
#include "baton/planner/memory/sharing.h"

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

// Accessors of a tensor (sharing.h): its nodes, plus the caller's write of a
// graph input (kCallerWrite) or read of a graph output (kCallerRead).
std::vector<int> Accessors(const Accesses& a) {
  std::vector<int> out;
  out.push_back(a.writer == kCaller ? kCallerWrite : a.writer);
  for (int r : a.readers) {
    int who = r == kCaller ? kCallerRead : r;
    if (std::find(out.begin(), out.end(), who) == out.end()) out.push_back(who);
  }
  return out;
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
  // Baton's post-processing ops are custom kernels outside the core's
  // WorkspaceBytes; baton_postprocess sizes them (0 for other nodes).
  const size_t postprocess = PostprocessWorkspaceBytes(call);
  return postprocess > 0 ? postprocess : WorkspaceBytes(call);
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
// Does the schedule (program order, waits, the in-flight limit) already keep
// the writer of inference i + s from starting before every reader of
// inference i completed? Then s slots need no lag wait.
bool ReuseOrdered(const HappensBefore& hb, const Accesses& a, int s) {
  for (int r : a.readers) {
    if (r == kCaller || r == a.writer) continue;
    if (!hb.Completed(r, -s, a.writer)) return false;
  }
  return true;
}

// Per tensor: graph inputs and outputs get one slot per inference in flight
// (the caller writes and reads them whenever the async API lets it). Any
// other tensor gets the fewest slots whose reuse the schedule already orders,
// and at most one more than the stages between the writer and the last
// reader (AddLagWaits then orders that many). A tensor whose reader of
// inference i always runs before its writer of i + 1 (both on one queue,
// the later stage first) keeps one slot although it crosses a stage.
std::vector<uint32_t> ChooseSlots(const Program& p, const HappensBefore& hb,
                                  const std::vector<Accesses>& acc, const std::set<int>& emitted) {
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
    const int most = std::min(p.in_flight, span + 1);
    int s = 1;
    while (s < most && !ReuseOrdered(hb, acc[t], s)) ++s;
    slots[t] = static_cast<uint32_t>(s);
  }
  return slots;
}

// Lag waits: the writer of inference i + slots must start after each reader
// of inference i completed. Adds those the schedule does not already imply
// (judged by `hb`, the schedule before any of them was added).
void AddLagWaits(Program* p, const HappensBefore& hb, const std::vector<Accesses>& acc,
                 const std::set<int>& emitted, const std::vector<uint32_t>& slots) {
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
  const SharingRule& rule;
  std::vector<int> order_pos;  // per node: its position in the plan order
};

// One domain's tensors as a packing problem. Single-slot tensors are packer
// buffers of their own. The tensors with S >= 2 slots form one buffer, a
// region of S lanes: lane s holds slot s of each of them, at the same offset
// in every lane, so the region is S * (lane height) bytes and each tensor's
// slot stride is the lane height.
//
//   region (S = 2):  | lane 0: t slot 0 | u slot 0 ... | lane 1: t slot 1 | u slot 1 ... |
//                    ^ offset(t)                        ^ offset(t) + stride
//
// In a lane only slot s of one tensor meets slot s of another, so two of
// them may overlap in the lane when SharingRule::LanesMayShare allows it;
// each lane is packed once for all S lanes.
struct DomainProblem {
  std::vector<int> members;                 // tensors, ascending
  std::vector<std::vector<int>> accessors;  // per member (Accessors)
  std::vector<int> slots;                   // per member
  std::vector<uint64_t> bytes;              // per member: one instance, aligned
  std::vector<int> item;                    // per member: its packer buffer
  std::vector<int64_t> lane_offset;         // per member: offset inside its lane
  std::vector<std::vector<int>> items;      // per packer buffer: its members
  std::vector<int64_t> lane_height;         // per buffer: slot stride (regions)
  std::vector<int64_t> lane_clique;         // per buffer: clique bound of its lane
  std::vector<std::vector<bool>> conflict;  // per pair of buffers
  PackProblem problem;                      // one buffer per item
};

// A single-slot buffer is live on the plan order from its first to its last
// access; a region for ever. Time 0 is the caller's write of the inputs,
// horizon - 1 its read of the outputs.
PackBuffer ItemBuffer(const MemoryFacts& f, const DomainProblem& dp, size_t item, uint64_t align) {
  const int first = dp.items[item][0];
  const int horizon = static_cast<int>(f.p.order.size()) + 2;
  PackBuffer buf;
  buf.id = f.p.graph.tensors[dp.members[first]].name;
  const int slots = dp.slots[first];
  if (slots > 1) {
    buf.id += dp.items[item].size() > 1 ? " (+" + std::to_string(dp.items[item].size() - 1) + ")" : "";
    buf.size = static_cast<int64_t>(std::max<uint64_t>(
        static_cast<uint64_t>(dp.lane_height[item]) * static_cast<uint64_t>(slots), align));
    buf.lower = 0;
    buf.upper = horizon;
    return buf;
  }
  buf.size = static_cast<int64_t>(std::max<uint64_t>(dp.bytes[first], align));
  int lo = horizon, hi = 0;
  for (int n : dp.accessors[first]) {
    const int at = n == kCallerWrite ? 0 : n == kCallerRead ? horizon - 1 : f.order_pos[n] + 1;
    lo = std::min(lo, at);
    hi = std::max(hi, at + 1);
  }
  buf.lower = lo;
  buf.upper = std::max(hi, lo + 1);
  return buf;
}

// Packs the lanes of region `item`: one buffer per member, conflicts where
// LanesMayShare refuses. Sets the members' lane offsets, the lane height and
// the lane's clique bound.
Check PackLanes(const MemoryFacts& f, size_t item, uint64_t align, double time_limit_s,
                DomainProblem* dp) {
  const std::vector<int>& ms = dp->items[item];
  const int slots = dp->slots[ms[0]];
  PackProblem lanes;
  lanes.alignment = static_cast<int64_t>(align);
  lanes.time_limit_s = time_limit_s;
  std::vector<int64_t> weight;
  std::vector<std::vector<bool>> conflict(ms.size(), std::vector<bool>(ms.size(), false));
  for (size_t a = 0; a < ms.size(); ++a) {
    const int ta = dp->members[ms[a]];
    lanes.buffers.push_back({f.p.graph.tensors[ta].name, static_cast<int64_t>(a),
                             static_cast<int64_t>(a) + 1, static_cast<int64_t>(dp->bytes[ms[a]])});
    weight.push_back(static_cast<int64_t>(dp->bytes[ms[a]]));
    for (size_t b = a + 1; b < ms.size(); ++b) {
      if (f.rule.LanesMayShare(dp->accessors[ms[a]], dp->accessors[ms[b]], slots)) continue;
      conflict[a][b] = conflict[b][a] = true;
      lanes.extra_conflicts.emplace_back(static_cast<int>(a), static_cast<int>(b));
    }
  }
  BATON_ASSIGN_OR_RETURN(PackSolution solution, Pack(lanes));
  for (size_t a = 0; a < ms.size(); ++a) dp->lane_offset[ms[a]] = solution.offsets[a];
  dp->lane_height[item] = static_cast<int64_t>(AlignUp(static_cast<uint64_t>(solution.height), align));
  dp->lane_clique[item] = MaxWeightClique(weight, conflict);
  return {};
}

// May no byte of buffer x be shared with buffer y? Two single-slot tensors
// use SingleSlotMayShare; a region shares with another buffer only where no
// slot of any member can meet any slot of the other's members badly.
bool ItemsConflict(const MemoryFacts& f, const DomainProblem& dp, size_t x, size_t y) {
  const std::vector<int>& mx = dp.items[x];
  const std::vector<int>& my = dp.items[y];
  if (dp.slots[mx[0]] == 1 && dp.slots[my[0]] == 1) {
    return !f.rule.SingleSlotMayShare(dp.accessors[mx[0]], dp.accessors[my[0]]);
  }
  for (int a : mx) {
    for (int b : my) {
      if (!f.rule.AnySlotsMayShare(dp.accessors[a], dp.accessors[b])) return true;
    }
  }
  return false;
}

// Conflicts between buffers. When they are exactly the interval
// intersections on the plan order (the single-queue case), the packer gets
// intervals alone; otherwise every buffer gets its own unit interval and the
// conflicts are listed.
void SetConflicts(const MemoryFacts& f, DomainProblem* dp) {
  const size_t m = dp->items.size();
  dp->conflict.assign(m, std::vector<bool>(m, false));
  bool interval_exact = true;
  for (size_t a = 0; a < m; ++a) {
    for (size_t b = a + 1; b < m; ++b) {
      const bool conflict = ItemsConflict(f, *dp, a, b);
      dp->conflict[a][b] = dp->conflict[b][a] = conflict;
      const PackBuffer& x = dp->problem.buffers[a];
      const PackBuffer& y = dp->problem.buffers[b];
      const bool intersect = x.lower < y.upper && y.lower < x.upper;
      if (intersect != conflict) interval_exact = false;
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

Result<DomainProblem> BuildDomainProblem(const MemoryFacts& f, int d, double pack_time_limit_s) {
  const uint64_t align = f.p.target.domains[d].alignment;
  DomainProblem dp;
  for (int t : f.emitted) {
    if (f.p.tensor_domain[t] == d) dp.members.push_back(t);
  }
  dp.problem.alignment = static_cast<int64_t>(align);
  dp.problem.time_limit_s = pack_time_limit_s;
  std::vector<int> region_of_slots;  // slots -> item
  for (size_t k = 0; k < dp.members.size(); ++k) {
    const int t = dp.members[k];
    dp.accessors.push_back(Accessors(f.acc[t]));
    dp.slots.push_back(static_cast<int>(f.slots[t]));
    dp.bytes.push_back(AlignUp(f.p.graph.tensors[t].bytes(), align));
    dp.lane_offset.push_back(0);
    const int s = dp.slots[k];
    if (s > 1 && static_cast<size_t>(s) < region_of_slots.size() && region_of_slots[s] >= 0) {
      dp.item.push_back(region_of_slots[s]);
      dp.items[region_of_slots[s]].push_back(static_cast<int>(k));
      continue;
    }
    dp.item.push_back(static_cast<int>(dp.items.size()));
    if (s > 1) {
      if (region_of_slots.size() <= static_cast<size_t>(s)) region_of_slots.resize(s + 1, -1);
      region_of_slots[s] = static_cast<int>(dp.items.size());
    }
    dp.items.push_back({static_cast<int>(k)});
  }
  dp.lane_height.assign(dp.items.size(), 0);
  dp.lane_clique.assign(dp.items.size(), 0);
  for (size_t i = 0; i < dp.items.size(); ++i) {
    // Lanes get the greedy portfolio only: they are small, and a search per
    // region and stage candidate would multiply the planning time.
    if (dp.slots[dp.items[i][0]] > 1) BATON_TRY(PackLanes(f, i, align, 0.0, &dp));
    dp.problem.buffers.push_back(ItemBuffer(f, dp, i, align));
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

// The largest total of tensor instances (every slot of every tensor) that
// must all be live while one node runs: they hold distinct bytes in any
// correct plan of this schedule.
Peak MustLivePeak(const MemoryFacts& f, const DomainProblem& dp) {
  const Graph& g = f.p.graph;
  const int in_flight = f.p.in_flight;
  Peak best;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    Peak here;
    here.node = static_cast<int>(n);
    for (size_t k = 0; k < dp.members.size(); ++k) {
      const int t = dp.members[k];
      uint64_t held = 0;
      for (int j = -in_flight; j <= in_flight; ++j) {
        if (MustBeLive(f.hb, f.acc[t], dp.accessors[k], static_cast<int>(n), j)) held += dp.bytes[k];
      }
      if (held == 0) continue;
      here.bytes += held;
      here.live.push_back({held, static_cast<int>(k)});
    }
    if (best.node < 0 || here.bytes > best.bytes) best = std::move(here);
  }
  return best;
}

// The clique bound over the packer's buffers: pairwise-conflicting buffers
// never share a byte. A region weighs its slots times its lane's clique.
uint64_t CliqueBound(const DomainProblem& dp) {
  std::vector<int64_t> weights;
  for (size_t i = 0; i < dp.items.size(); ++i) {
    const int slots = dp.slots[dp.items[i][0]];
    weights.push_back(slots > 1 ? slots * dp.lane_clique[i] : dp.problem.buffers[i].size);
  }
  return static_cast<uint64_t>(MaxWeightClique(weights, dp.conflict));
}

// The report's lower bound: the larger of the must-live peak and the clique
// bound. Both are at most the arena, so bound <= arena always.
uint64_t LowerBound(const DomainProblem& dp, const Peak& peak) {
  return std::max(peak.bytes, CliqueBound(dp));
}

// Names what holds the memory when a domain overflows: the node at the
// must-live peak, the largest tensors there and the largest multi-slot
// tensors, and what to do about it.
std::string OverflowMessage(const Program& p, const DomainProblem& dp, const Peak& peak, int d,
                            uint64_t arena, uint64_t bound) {
  const TargetDomain& domain = p.target.domains[d];
  std::string out = "domain '" + domain.name + "': arena needs " + std::to_string(arena) +
                    " bytes but the capacity is " + std::to_string(domain.bytes) +
                    " (lower bound " + std::to_string(bound) + ")";
  std::vector<std::pair<uint64_t, int>> largest = peak.live;
  for (size_t k = 0; k < dp.members.size(); ++k) {
    const bool listed = std::any_of(largest.begin(), largest.end(),
                                    [&](const auto& e) { return e.second == static_cast<int>(k); });
    if (dp.slots[k] > 1 && !listed) {
      largest.push_back({dp.bytes[k] * static_cast<uint64_t>(dp.slots[k]), static_cast<int>(k)});
    }
  }
  std::stable_sort(largest.begin(), largest.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  if (peak.node >= 0) out += "; at the peak, node '" + p.graph.nodes[peak.node].name + "' runs";
  out += "; largest tensors held:";
  for (size_t i = 0; i < largest.size() && i < 3; ++i) {
    const int k = largest[i].second;
    out += std::string(i ? "," : "") + " '" + p.graph.tensors[dp.members[k]].name + "' (" +
           std::to_string(largest[i].first) + " bytes" +
           (dp.slots[k] > 1 ? ", " + std::to_string(dp.slots[k]) + " slots" : "") + ")";
  }
  std::string devices;
  for (const TargetDevice& dev : p.target.devices) {
    if (!dev.domains.empty() && dev.domains[0] == d) devices += (devices.empty() ? "" : ", ") + dev.name;
  }
  out += "; try --auto, fewer nodes on " + (devices.empty() ? std::string("its devices") : devices) +
         (p.in_flight > 1 ? ", or a smaller --in-flight" : "");
  return out;
}

// Domain d without packing (PlanMemory's `estimate`): every tensor gets
// bytes of its own (the plan loads and simulates like a packed one; only
// shapes and the schedule count), and the domain fits when an estimate of
// the packed arena does: the peak over the plan order of the single-slot
// tensors live from their first to their last access, plus, per slot count
// S, S times the same peak over the S-slot tensors (the lanes), with a
// tenth more for what packing loses to fragmentation. On one queue the peak
// is a lower bound of any packing; with several, lanes and concurrent queues
// may need more or less. The written plan is always packed exactly.
Check EstimateDomain(Program* p, const std::vector<Accesses>& acc, const std::set<int>& emitted,
                     const std::vector<uint32_t>& slot_counts, int d) {
  const TargetDomain& domain = p->target.domains[d];
  std::vector<int> order_pos(p->graph.nodes.size(), 0);
  for (size_t k = 0; k < p->order.size(); ++k) order_pos[p->order[k]] = static_cast<int>(k);
  const uint64_t align = domain.alignment;
  const int horizon = static_cast<int>(p->order.size()) + 2;
  // Live-byte differences along the order, per slot count (index 0: single).
  std::vector<std::vector<int64_t>> diff;
  uint64_t offset = 0;
  for (int t : emitted) {
    if (p->tensor_domain[t] != d) continue;
    const uint32_t slots = slot_counts[t];
    const uint64_t bytes = std::max<uint64_t>(AlignUp(p->graph.tensors[t].bytes(), align), align);
    TensorPlacement& place = p->placement[t];
    place.domain = d;
    place.offset = offset;
    place.slots = slots;
    place.slot_stride = slots > 1 ? bytes : 0;
    offset += bytes * slots;
    int lo = horizon, hi = 0;
    for (int n : Accessors(acc[t])) {
      const int at = n == kCallerWrite ? 0 : n == kCallerRead ? horizon - 1 : order_pos[n] + 1;
      lo = std::min(lo, at);
      hi = std::max(hi, at + 1);
    }
    hi = std::max(hi, lo + 1);
    const size_t lane = slots > 1 ? slots : 0;
    if (diff.size() <= lane) diff.resize(lane + 1);
    if (diff[lane].empty()) diff[lane].assign(static_cast<size_t>(horizon) + 1, 0);
    diff[lane][static_cast<size_t>(lo)] += static_cast<int64_t>(bytes);
    diff[lane][static_cast<size_t>(hi)] -= static_cast<int64_t>(bytes);
  }
  uint64_t estimate = 0;
  for (size_t lane = 0; lane < diff.size(); ++lane) {
    int64_t live = 0, peak = 0;
    for (int64_t change : diff[lane]) {
      live += change;
      peak = std::max(peak, live);
    }
    estimate += static_cast<uint64_t>(peak) * std::max<uint64_t>(lane, 1);
  }
  p->domain_report[d].arena_bytes = offset;
  estimate += estimate / 10;
  if (estimate > domain.bytes) {
    return Fail("domain '" + domain.name + "': arena needs about " + std::to_string(estimate) +
                " bytes but the capacity is " + std::to_string(domain.bytes));
  }
  return {};
}

// Packs domain d, places its tensors and fills its report; fails when the
// arena exceeds the domain's capacity.
Check PlanDomain(Program* p, const MemoryFacts& f, int d, double pack_time_limit_s,
                 bool with_bounds) {
  BATON_ASSIGN_OR_RETURN(const DomainProblem dp, BuildDomainProblem(f, d, pack_time_limit_s));
  if (dp.members.empty()) return {};
  const TargetDomain& domain = p->target.domains[d];
  const uint64_t align = domain.alignment;
  BATON_ASSIGN_OR_RETURN(PackSolution solution, Pack(dp.problem));
  for (size_t k = 0; k < dp.members.size(); ++k) {
    const int t = dp.members[k];
    const int item = dp.item[k];
    TensorPlacement& place = p->placement[t];
    place.domain = d;
    place.offset = static_cast<uint64_t>(solution.offsets[item] + dp.lane_offset[k]);
    place.slots = f.slots[t];
    place.slot_stride = f.slots[t] > 1 ? static_cast<uint64_t>(dp.lane_height[item]) : 0;
  }
  DomainReport& report = p->domain_report[d];
  report.arena_bytes = AlignUp(static_cast<uint64_t>(solution.height), align);
  if (!with_bounds && report.arena_bytes <= domain.bytes) return {};
  const Peak peak = MustLivePeak(f, dp);
  report.lower_bound_bytes = LowerBound(dp, peak);
  if (report.arena_bytes > domain.bytes) {
    return Fail(OverflowMessage(*p, dp, peak, d, report.arena_bytes, report.lower_bound_bytes));
  }
  return {};
}

}  // namespace

Check PlanWorkspace(Program* p, const std::vector<uint64_t>* known_bytes) {
  p->workspace.assign(p->graph.nodes.size(), {});
  if (known_bytes != nullptr) {
    // Sizes from an earlier plan of the same nodes: a kernel's workspace
    // depends on its node's op, attributes and shapes, not on the device;
    // copies (the nodes past known_bytes) need none.
    for (int n : p->order) {
      const size_t need = static_cast<size_t>(n) < known_bytes->size() ? (*known_bytes)[n] : 0;
      if (need > 0) AddWorkspace(p, n, ParallelWorkspaceBytes(need, p->NodeThreads(n)));
    }
    return {};
  }
  // The kernels size their workspace from the plan's view of a node, so ask
  // them about a plan emitted without one.
  BATON_ASSIGN_OR_RETURN(std::string bytes, EmitPlan(*p));
  const schema::Plan* plan = schema::GetPlan(bytes.data());
  // Plan node k is p->order[k].
  for (uint32_t k = 0; k < plan->nodes()->size(); ++k) {
    BATON_ASSIGN_OR_RETURN(size_t need, NodeWorkspaceBytes(*plan, *plan->nodes()->Get(k)));
    if (need == 0) continue;
    // A node on a CPU queue with threads > 1 gets one slice per thread.
    AddWorkspace(p, p->order[k], ParallelWorkspaceBytes(need, p->NodeThreads(p->order[k])));
  }
  return {};
}

Check PlanMemory(Program* p, double pack_time_limit_s, bool with_bounds, bool estimate) {
  const std::vector<Accesses> acc = CollectAccesses(*p);
  const std::set<int> emitted = EmittedTensors(p->graph, acc);
  p->placement.assign(p->graph.tensors.size(), TensorPlacement());
  std::vector<uint32_t> slots;
  {
    const HappensBefore before_lag_waits(*p);
    slots = ChooseSlots(*p, before_lag_waits, acc, emitted);
    AddLagWaits(p, before_lag_waits, acc, emitted, slots);
  }
  p->domain_report.assign(p->target.domains.size(), DomainReport());
  if (estimate) {
    for (size_t d = 0; d < p->target.domains.size(); ++d) {
      BATON_TRY(EstimateDomain(p, acc, emitted, slots, static_cast<int>(d)));
    }
    return {};
  }
  // Conflicts and bounds are judged with the lag waits in place.
  const HappensBefore hb(*p);
  const SharingRule rule(hb, p->in_flight);
  MemoryFacts facts{*p, acc, emitted, slots, hb, rule, std::vector<int>(p->graph.nodes.size(), 0)};
  for (size_t k = 0; k < p->order.size(); ++k) facts.order_pos[p->order[k]] = static_cast<int>(k);
  for (size_t d = 0; d < p->target.domains.size(); ++d) {
    BATON_TRY(PlanDomain(p, facts, static_cast<int>(d), pack_time_limit_s, with_bounds));
  }
  return {};
}

}  // namespace baton::planner
