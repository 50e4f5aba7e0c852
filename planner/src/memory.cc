#include "baton/planner/memory.h"

#include <algorithm>
#include <set>

#include "baton/kernels.h"
#include "baton/planner/emit.h"
#include "baton/planner/happens_before.h"
#include "baton/planner/lower.h"
#include "baton/planner/pack.h"

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

// Node accesses of a tensor (writer and readers, without the caller).
std::vector<int> NodeAccessors(const Accesses& a) {
  std::vector<int> out;
  if (a.writer != kCaller) out.push_back(a.writer);
  for (int r : a.readers) {
    if (r != kCaller && std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
  }
  return out;
}

// Every access of A at inference i ends before every access of B at i + delta.
bool AllBefore(const HappensBefore& hb, const std::vector<int>& a, const std::vector<int>& b,
               int delta) {
  for (int x : a) {
    for (int y : b) {
      // y starts inference i + delta; x must have completed inference i.
      if (!hb.Completed(x, -delta, y)) return false;
    }
  }
  return true;
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
  const int horizon = static_cast<int>(p->order.size()) + 1;
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
      accessors[k] = NodeAccessors(acc[t]);
      exclusive[k] = acc[t].io || slots[t] > 1;
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
          lo = std::min(lo, order_pos[n]);
          hi = std::max(hi, order_pos[n] + 1);
        }
        buf.lower = lo;
        buf.upper = std::max(hi, lo + 1);
      }
      problem.buffers.push_back(buf);
    }
    for (size_t a = 0; a < members.size(); ++a) {
      for (size_t b = a + 1; b < members.size(); ++b) {
        const PackBuffer& x = problem.buffers[a];
        const PackBuffer& y = problem.buffers[b];
        if (x.lower < y.upper && y.lower < x.upper) continue;  // conflict anyway
        bool compatible = !exclusive[a] && !exclusive[b] &&
            ((AllBefore(hb, accessors[a], accessors[b], 0) && AllBefore(hb, accessors[b], accessors[a], 1)) ||
             (AllBefore(hb, accessors[b], accessors[a], 0) && AllBefore(hb, accessors[a], accessors[b], 1)));
        if (!compatible) problem.extra_conflicts.emplace_back(static_cast<int>(a), static_cast<int>(b));
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
    const int D = p->in_flight;
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
    report.lower_bound_bytes = best;
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
