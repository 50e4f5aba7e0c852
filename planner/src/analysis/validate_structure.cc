#include "analysis/validate_structure.h"

#include <algorithm>
#include <numeric>
#include <tuple>

namespace baton::planner::validate_detail {
namespace {

Check CheckTensorIndex(const PlanFacts& f, uint32_t n, int64_t t, const char* what) {
  if (t < 0 || t >= static_cast<int64_t>(f.num_tensors)) {
    return Fail("node '" + f.NodeName(n) + "': " + what + " tensor index " + std::to_string(t) +
                " out of range");
  }
  return Check();
}

Check CheckReach(const PlanFacts& f, uint32_t n, uint32_t t) {
  const schema::Tensor* ten = f.tensor(t);
  if (ten->storage() != schema::Storage::Arena) return Check();
  const schema::Queue* q = f.plan->queues()->Get(f.node(n)->queue());
  if (q->domains() != nullptr) {
    for (uint32_t d : *q->domains()) {
      if (d == ten->domain()) return Check();
    }
  }
  return Fail("node '" + f.NodeName(n) + "' on queue '" + f.QueueName(f.node(n)->queue()) +
              "' touches tensor '" + f.TensorName(t) + "' in domain '" +
              f.DomainName(ten->domain()) + "', which the queue cannot reach");
}

// The largest lcm(slots of t, slots of u) over arena tensors t and u whose
// slot ranges overlap in one domain (at least max_slots): which slot of t
// meets which slot of u repeats with that period, so unrolling it covers
// every pair. Called once every tensor was checked to lie in its domain.
uint32_t SlotPeriod(const PlanFacts& f) {
  struct Extent {
    uint32_t domain;
    uint64_t begin, end;
    uint32_t slots;
  };
  std::vector<Extent> extents;
  for (uint32_t t = 0; t < f.num_tensors; ++t) {
    const schema::Tensor* ten = f.tensor(t);
    if (ten->storage() != schema::Storage::Arena || ten->bytes() == 0) continue;
    extents.push_back({ten->domain(), ten->offset(),
                       ten->offset() + uint64_t{ten->slots() - 1} * ten->slot_stride() + ten->bytes(),
                       ten->slots()});
  }
  std::sort(extents.begin(), extents.end(), [](const Extent& a, const Extent& b) {
    return std::tie(a.domain, a.begin, a.end) < std::tie(b.domain, b.begin, b.end);
  });
  uint64_t period = f.max_slots;
  for (size_t x = 0; x < extents.size(); ++x) {
    for (size_t y = x + 1; y < extents.size(); ++y) {
      if (extents[y].domain != extents[x].domain || extents[y].begin >= extents[x].end) break;
      period = std::max<uint64_t>(period, std::lcm<uint64_t>(extents[x].slots, extents[y].slots));
    }
  }
  // Beyond this the unrolling is refused anyway (kMaxValidateInstances).
  return static_cast<uint32_t>(std::min<uint64_t>(period, UINT32_MAX / 4));
}

// Every slot of an arena tensor lies inside its domain.
Check CheckArenaTensors(PlanFacts* f) {
  for (uint32_t t = 0; t < f->num_tensors; ++t) {
    const schema::Tensor* ten = f->tensor(t);
    if (ten->storage() != schema::Storage::Arena) continue;
    if (ten->domain() >= f->num_domains) {
      return Fail("tensor '" + f->TensorName(t) + "': domain index out of range");
    }
    if (ten->slots() == 0) return Fail("tensor '" + f->TensorName(t) + "': zero slots");
    // 128 bits: a corrupt offset or stride must not wrap around into range.
    const unsigned __int128 end =
        static_cast<unsigned __int128>(ten->offset()) +
        static_cast<unsigned __int128>(ten->slots() - 1) * ten->slot_stride() + ten->bytes();
    const uint64_t domain_bytes = f->plan->domains()->Get(ten->domain())->bytes();
    if (end > domain_bytes) {
      return Fail("tensor '" + f->TensorName(t) + "': slots end past domain '" +
                  f->DomainName(ten->domain()) + "' (" + std::to_string(domain_bytes) + " bytes)");
    }
    f->max_slots = std::max(f->max_slots, ten->slots());
  }
  f->slot_period = SlotPeriod(*f);
  return Check();
}

// Queue programs agree with node.queue and node.position. `out_listed`
// receives per node how many programs list it; the caller requires exactly
// one, node by node, so that the first failure stays the first node's.
Check CheckQueuePrograms(const PlanFacts& f, std::vector<int>* out_listed) {
  out_listed->assign(f.num_nodes, 0);
  for (uint32_t q = 0; q < f.num_queues; ++q) {
    const schema::Queue* queue = f.plan->queues()->Get(q);
    if (queue->domains() != nullptr) {
      for (uint32_t d : *queue->domains()) {
        if (d >= f.num_domains)
          return Fail("queue '" + f.QueueName(q) + "': domain index out of range");
      }
    }
    for (uint32_t p = 0; p < Count(queue->nodes()); ++p) {
      const uint32_t n = queue->nodes()->Get(p);
      if (n >= f.num_nodes) return Fail("queue '" + f.QueueName(q) + "': node index out of range");
      if (f.node(n)->queue() != q || f.node(n)->position() != p) {
        return Fail("queue '" + f.QueueName(q) + "' lists node '" + f.NodeName(n) +
                    "' at position " + std::to_string(p) + ", but the node says queue " +
                    std::to_string(f.node(n)->queue()) + " position " +
                    std::to_string(f.node(n)->position()));
      }
      ++(*out_listed)[n];
    }
  }
  return Check();
}

Check CheckNodeReads(const PlanFacts& f, uint32_t n) {
  const auto* inputs = f.node(n)->inputs();
  if (inputs == nullptr) return Check();
  for (int32_t t : *inputs) {
    if (t == -1) continue;  // an absent optional input
    BATON_TRY(CheckTensorIndex(f, n, t, "input"));
    BATON_TRY(CheckReach(f, n, static_cast<uint32_t>(t)));
  }
  return Check();
}

// An output or workspace tensor: in range, in the arena, reachable.
Check CheckWrite(const PlanFacts& f, uint32_t n, uint32_t t, const char* what) {
  BATON_TRY(CheckTensorIndex(f, n, t, what));
  if (f.tensor(t)->storage() != schema::Storage::Arena) {
    return Fail("node '" + f.NodeName(n) + "' writes constant tensor '" + f.TensorName(t) + "'");
  }
  return CheckReach(f, n, t);
}

// Outputs have one writer each, recorded in f->writer; workspace is the
// node's own scratch and has none.
Check CheckNodeWrites(PlanFacts* f, uint32_t n) {
  const schema::Node* nd = f->node(n);
  if (nd->outputs() != nullptr) {
    for (uint32_t t : *nd->outputs()) {
      BATON_TRY(CheckWrite(*f, n, t, "output"));
      if (f->writer[t] >= 0) {
        return Fail("tensor '" + f->TensorName(t) + "' is written by both node '" +
                    f->NodeName(static_cast<uint32_t>(f->writer[t])) + "' and node '" +
                    f->NodeName(n) + "'");
      }
      f->writer[t] = n;
    }
  }
  if (nd->workspace() != nullptr) {
    for (uint32_t t : *nd->workspace()) BATON_TRY(CheckWrite(*f, n, t, "workspace"));
  }
  return Check();
}

Check CheckNodeWaits(const PlanFacts& f, uint32_t n) {
  const auto* waits = f.node(n)->waits();
  if (waits == nullptr) return Check();
  for (const schema::Wait* w : *waits) {
    if (w->node() >= f.num_nodes) {
      return Fail("node '" + f.NodeName(n) + "': wait names node index " +
                  std::to_string(w->node()) + ", out of range");
    }
  }
  return Check();
}

Check CheckNodes(PlanFacts* f, const std::vector<int>& listed) {
  f->writer.assign(f->num_tensors, -1);
  for (uint32_t n = 0; n < f->num_nodes; ++n) {
    if (listed[n] != 1)
      return Fail("node '" + f->NodeName(n) + "' is not in exactly one queue program");
    f->max_stage = std::max(f->max_stage, f->node(n)->stage());
    BATON_TRY(CheckNodeReads(*f, n));
    BATON_TRY(CheckNodeWrites(f, n));
    BATON_TRY(CheckNodeWaits(*f, n));
  }
  return Check();
}

// Graph inputs and outputs are arena tensors; the caller is the only writer
// of a graph input.
Check CheckGraphPorts(PlanFacts* f) {
  auto in_arena = [f](uint32_t t) {
    return t < f->num_tensors && f->tensor(t)->storage() == schema::Storage::Arena;
  };
  if (f->plan->inputs() != nullptr) {
    for (uint32_t t : *f->plan->inputs()) {
      if (!in_arena(t)) return Fail("graph input " + std::to_string(t) + " is not an arena tensor");
      if (f->writer[t] >= 0) {
        return Fail("graph input '" + f->TensorName(t) + "' is also written by node '" +
                    f->NodeName(static_cast<uint32_t>(f->writer[t])) + "'");
      }
      f->writer[t] = kCallerWrites;
    }
  }
  if (f->plan->outputs() != nullptr) {
    for (uint32_t t : *f->plan->outputs()) {
      if (!in_arena(t))
        return Fail("graph output " + std::to_string(t) + " is not an arena tensor");
    }
  }
  return Check();
}

}  // namespace

Check CheckStructure(const schema::Plan* plan, PlanFacts* out) {
  PlanFacts& f = *out;
  f.plan = plan;
  f.num_domains = Count(plan->domains());
  f.num_queues = Count(plan->queues());
  f.num_tensors = Count(plan->tensors());
  f.num_nodes = Count(plan->nodes());
  f.in_flight = plan->inferences_in_flight();
  if (f.in_flight == 0) return Fail("inferences_in_flight is 0");
  if (f.num_nodes == 0) return Fail("plan has no nodes");
  BATON_TRY(CheckArenaTensors(&f));
  std::vector<int> listed;
  BATON_TRY(CheckQueuePrograms(f, &listed));
  BATON_TRY(CheckNodes(&f, listed));
  return CheckGraphPorts(&f);
}

}  // namespace baton::planner::validate_detail
