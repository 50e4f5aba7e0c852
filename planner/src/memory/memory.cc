#include "baton/planner/memory/memory.h"

#include <algorithm>
#include <set>

#include "baton/kernels.h"
#include "baton/planner/emit/emit.h"
#include "baton/planner/memory/happens_before.h"
#include "baton/planner/emit/lower.h"
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
      if (t >= 0 && std::find(acc[t].readers.begin(), acc[t].readers.end(), static_cast<int>(n)) == acc[t].readers.end()) {
        acc[t].readers.push_back(static_cast<int>(n));
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
  if (x == kCallerWrite) return y == kCallerWrite || y == kCallerRead ? delta >= (y == kCallerWrite ? 1 : 0) : delta >= 0;
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
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return weight[a] != weight[b] ? weight[a] > weight[b] : a < b;
  });
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

}  // namespace

Check PlanWorkspace(Program* p) {
  p->workspace.assign(p->graph.nodes.size(), {});
  BATON_ASSIGN_OR_RETURN(std::string bytes, EmitPlan(*p));
  const schema::Plan* plan = schema::GetPlan(bytes.data());
  std::vector<int> ids(plan->nodes()->size());
  // Plan node k is p->order[k].
  for (uint32_t k = 0; k < plan->nodes()->size(); ++k) {
    const schema::Node* node = plan->nodes()->Get(k);
    TensorArg args[kMaxNodeTensors];
    uint32_t used = 0;
    KernelCall call;
    call.node = node;
    call.inputs = args;
    if (node->inputs()) {
      for (int32_t t : *node->inputs()) {
        if (used >= kMaxNodeTensors) return Fail("node '" + node->name()->str() + "': too many tensors");
        args[used] = TensorArg();
        if (t >= 0) args[used].tensor = plan->tensors()->Get(static_cast<uint32_t>(t));
        ++used;
        ++call.num_inputs;
      }
    }
    call.outputs = args + used;
    for (uint32_t t : *node->outputs()) {
      if (used >= kMaxNodeTensors) return Fail("node '" + node->name()->str() + "': too many tensors");
      args[used] = TensorArg();
      args[used].tensor = plan->tensors()->Get(t);
      ++used;
      ++call.num_outputs;
    }
    size_t need = WorkspaceBytes(call);
    if (need == 0) continue;
    const int n = p->order[k];
    Tensor ws;
    ws.name = p->graph.nodes[n].name + ".workspace";
    ws.dtype = DType::UInt8;
    ws.shape = {static_cast<int64_t>(need)};
    ws.shape_known = true;
    int t = p->graph.AddTensor(std::move(ws));
    const QueueInfo& q = p->queues[p->node_queue[n]];
    p->tensor_domain.push_back(q.device >= 0 ? p->target.devices[q.device].domains[0] : q.domains[0]);
    p->workspace[n].push_back(t);
  }
  return {};
}

Check PlanMemory(Program* p, double pack_time_limit_s) {
  const Graph& g = p->graph;
  const size_t num_tensors = g.tensors.size();
  std::vector<Accesses> acc = CollectAccesses(*p);
  const std::set<int> emitted = [&] {
    std::set<int> s;
    for (size_t t = 0; t < num_tensors; ++t) {
      if (!g.tensors[t].is_constant && (acc[t].writer != kCaller || !acc[t].readers.empty() || acc[t].io)) s.insert(static_cast<int>(t));
    }
    return s;
  }();

  // 1. Slots, and lag waits where the schedule does not already protect them.
  p->placement.assign(num_tensors, TensorPlacement());
  std::vector<uint32_t> slots(num_tensors, 1);
  for (int t : emitted) {
    if (acc[t].io) {
      slots[t] = static_cast<uint32_t>(p->in_flight);
      continue;
    }
    int span = 0;
    for (int r : acc[t].readers) {
      if (r != kCaller) span = std::max(span, p->node_stage[r] - p->node_stage[acc[t].writer]);
    }
    slots[t] = static_cast<uint32_t>(std::min(p->in_flight, span + 1));
  }
  {
    HappensBefore hb(*p);
    bool added = false;
    for (int t : emitted) {
      if (acc[t].io || acc[t].writer == kCaller) continue;
      const int w = acc[t].writer;
      const int s = static_cast<int>(slots[t]);
      for (int r : acc[t].readers) {
        if (r == kCaller || r == w) continue;
        // Writer of inference i + s must start after reader of i completed.
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
  HappensBefore hb(*p);

  // 2. Per domain: pack with conflicts.
  p->domain_report.assign(p->target.domains.size(), DomainReport());
  std::vector<int> order_pos(g.nodes.size(), 0);
  for (size_t k = 0; k < p->order.size(); ++k) order_pos[p->order[k]] = static_cast<int>(k);
  const int horizon = static_cast<int>(p->order.size()) + 2;
  const int D = p->in_flight;
  for (size_t d = 0; d < p->target.domains.size(); ++d) {
    const uint64_t align = p->target.domains[d].alignment;
    std::vector<int> members;
    for (int t : emitted) if (p->tensor_domain[t] == static_cast<int>(d)) members.push_back(t);
    if (members.empty()) continue;
    PackProblem problem;
    problem.alignment = static_cast<int64_t>(align);
    problem.time_limit_s = pack_time_limit_s;
    std::vector<std::vector<int>> accessors(members.size());
    std::vector<bool> exclusive(members.size(), false);
    for (size_t k = 0; k < members.size(); ++k) {
      const int t = members[k];
      accessors[k] = Accessors(acc[t]);
      exclusive[k] = slots[t] > 1;
      PackBuffer buf;
      buf.id = g.tensors[t].name;
      const uint64_t stride = AlignUp(g.tensors[t].bytes(), align);
      buf.size = static_cast<int64_t>(std::max<uint64_t>(stride * slots[t], align));
      if (exclusive[k]) {
        buf.lower = 0;
        buf.upper = horizon;
      } else {
        int lo = horizon, hi = 0;
        for (int n : accessors[k]) {
          // The caller writes inputs before the first node and reads
          // outputs after the last.
          const int at = n == kCallerWrite ? 0 : n == kCallerRead ? horizon - 1 : order_pos[n] + 1;
          lo = std::min(lo, at);
          hi = std::max(hi, at + 1);
        }
        buf.lower = lo;
        buf.upper = std::max(hi, lo + 1);
      }
      problem.buffers.push_back(buf);
    }
    // True conflicts from happens-before. When they are exactly the
    // interval intersections on the plan order (the single-queue case), the
    // packer gets intervals alone; otherwise every buffer gets its own unit
    // interval and the conflicts are listed.
    const size_t m = members.size();
    std::vector<std::vector<bool>> conflict(m, std::vector<bool>(m, false));
    bool interval_exact = true;
    for (size_t a = 0; a < m; ++a) {
      for (size_t b = a + 1; b < m; ++b) {
        bool compatible = !exclusive[a] && !exclusive[b] &&
            ((AllBefore(hb, D, accessors[a], accessors[b], 0) && AllBefore(hb, D, accessors[b], accessors[a], 1)) ||
             (AllBefore(hb, D, accessors[b], accessors[a], 0) && AllBefore(hb, D, accessors[a], accessors[b], 1)));
        conflict[a][b] = conflict[b][a] = !compatible;
        const PackBuffer& x = problem.buffers[a];
        const PackBuffer& y = problem.buffers[b];
        const bool intersect = x.lower < y.upper && y.lower < x.upper;
        if (intersect != !compatible) interval_exact = false;
      }
    }
    if (!interval_exact) {
      for (size_t a = 0; a < m; ++a) {
        problem.buffers[a].lower = static_cast<int64_t>(a);
        problem.buffers[a].upper = static_cast<int64_t>(a) + 1;
        for (size_t b = a + 1; b < m; ++b) {
          if (conflict[a][b]) problem.extra_conflicts.emplace_back(static_cast<int>(a), static_cast<int>(b));
        }
      }
    }
    BATON_ASSIGN_OR_RETURN(PackSolution solution, Pack(problem));
    for (size_t k = 0; k < members.size(); ++k) {
      const int t = members[k];
      TensorPlacement& place = p->placement[t];
      place.domain = static_cast<int>(d);
      place.offset = static_cast<uint64_t>(solution.offsets[k]);
      place.slots = slots[t];
      place.slot_stride = slots[t] > 1 ? AlignUp(g.tensors[t].bytes(), align) : 0;
    }
    DomainReport& report = p->domain_report[d];
    report.arena_bytes = AlignUp(static_cast<uint64_t>(solution.height), align);

    // 3. Lower bound: instances that must be live while some node runs.
    uint64_t best = 0;
    for (size_t n = 0; n < g.nodes.size(); ++n) {
      uint64_t live = 0;
      for (size_t k = 0; k < members.size(); ++k) {
        const int t = members[k];
        const uint64_t bytes = AlignUp(g.tensors[t].bytes(), align);
        for (int j = -D; j <= D; ++j) {
          // Instance of inference i + j while n runs inference i.
          bool touched = j == 0 && std::find(accessors[k].begin(), accessors[k].end(), static_cast<int>(n)) != accessors[k].end();
          bool written = acc[t].writer == kCaller ? j <= 0 : hb.Completed(acc[t].writer, j, static_cast<int>(n));
          bool read_later = false;
          for (int r : acc[t].readers) {
            if (r == kCaller) read_later |= j >= 0;
            else read_later |= hb.Completed(static_cast<int>(n), -j, r);
          }
          if (touched || (written && read_later)) live += bytes;
        }
      }
      best = std::max(best, live);
    }
    // The clique bound counts single-slot tensors only: for them a conflict
    // means no two instances may ever share a byte. (Multi-slot tensors keep
    // their bytes to themselves by the planner's choice, not by necessity,
    // so they only enter the bound through the must-live instances above.)
    std::vector<int64_t> weights;
    for (size_t k = 0; k < m; ++k) weights.push_back(exclusive[k] ? 0 : problem.buffers[k].size);
    report.lower_bound_bytes = std::max<uint64_t>(best, static_cast<uint64_t>(MaxWeightClique(weights, conflict)));
    if (report.arena_bytes > p->target.domains[d].bytes) {
      return Fail("domain '" + p->target.domains[d].name + "': arena needs " +
                  std::to_string(report.arena_bytes) + " bytes but the capacity is " +
                  std::to_string(p->target.domains[d].bytes) + " (lower bound " +
                  std::to_string(report.lower_bound_bytes) + ")");
    }
  }
  return {};
}

}  // namespace baton::planner
