#include "analysis/validate_accesses.h"

#include <algorithm>
#include <string>
#include <tuple>

namespace baton::planner::validate_detail {
namespace {

// Accesses of one instance are added together, so a repeat is found among
// the last ones.
void AddAccess(const Unrolling& u, uint32_t instance, uint32_t t, uint32_t i, bool write,
               std::vector<Access>* out) {
  for (auto it = out->rbegin(); it != out->rend() && it->instance == instance; ++it) {
    if (it->tensor == t && it->write == write) return;
  }
  const PlanFacts& f = u.facts();
  const schema::Tensor* ten = f.tensor(t);
  if (ten->storage() != schema::Storage::Arena) return;
  Access a;
  a.instance = instance;
  a.tensor = t;
  a.domain = ten->domain();
  a.begin = ten->offset() + uint64_t{i % ten->slots()} * ten->slot_stride();
  a.end = a.begin + ten->bytes();
  a.write = write;
  a.writer = -1;
  if (!write) {
    if (f.writer[t] == kCallerWrites)
      a.writer = u.WriteInstance(i);
    else if (f.writer[t] >= 0)
      a.writer = u.NodeInstance(static_cast<uint32_t>(f.writer[t]), i);
  }
  out->push_back(a);
}

void AddNodeAccesses(const Unrolling& u, uint32_t n, uint32_t i, std::vector<Access>* out) {
  const schema::Node* nd = u.facts().node(n);
  const uint32_t v = u.NodeInstance(n, i);
  if (nd->inputs() != nullptr) {
    for (int32_t t : *nd->inputs()) {
      if (t >= 0) AddAccess(u, v, static_cast<uint32_t>(t), i, false, out);
    }
  }
  if (nd->outputs() != nullptr) {
    for (uint32_t t : *nd->outputs()) AddAccess(u, v, t, i, true, out);
  }
  if (nd->workspace() != nullptr) {
    for (uint32_t t : *nd->workspace()) AddAccess(u, v, t, i, true, out);
  }
}

std::string AccessText(const PlanFacts& f, const Access& a) {
  return std::string(a.write ? "writes" : "reads") + " tensor '" + f.TensorName(a.tensor) + "' [" +
         f.DomainName(a.domain) + " " + std::to_string(a.begin) + ".." + std::to_string(a.end) +
         ")";
}

// Orders violations: earliest inferences first, then instances.
using Key = std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>;

// The smallest-keyed violation of one kind seen so far; its message is built
// only when it becomes the smallest.
class Earliest {
 public:
  template <typename MakeText>
  void Offer(const Key& key, MakeText make_text) {
    if (found_ && !(key < key_)) return;
    found_ = true;
    key_ = key;
    text_ = make_text();
  }
  bool found() const { return found_; }
  const std::string& text() const { return text_; }

 private:
  bool found_ = false;
  Key key_{};
  std::string text_;
};

struct Findings {
  Earliest race;
  Earliest overwrite;
  size_t pairs = 0;
};

// Read-before-write, part one: every read has a writer.
Check CheckReadsHaveWriters(const Unrolling& u, const std::vector<Access>& accesses) {
  for (const Access& a : accesses) {
    if (a.write || a.writer >= 0) continue;
    return Fail("read before write: " + u.InstanceName(a.instance) + " reads tensor '" +
                u.facts().TensorName(a.tensor) +
                "', which no node writes and which is not a graph input");
  }
  return Check();
}

// Overwrite between a read `r` and its writer: writer -> w -> r.
void CheckOverwrite(const InstanceGraph& g, const Access& w, const Access& r, const Key& key,
                    Earliest* out) {
  if (!w.write || r.write || r.writer < 0 || static_cast<int64_t>(w.instance) == r.writer) return;
  const uint32_t pw = static_cast<uint32_t>(r.writer);
  if (!g.HappensBefore(w.instance, r.instance) || !g.HappensBefore(pw, w.instance)) return;
  const Unrolling& u = g.unrolling();
  out->Offer(key, [&] {
    return "read before write: " + u.InstanceName(r.instance) + " " + AccessText(u.facts(), r) +
           ", but " + u.InstanceName(w.instance) + " " + AccessText(u.facts(), w) + " after " +
           u.InstanceName(pw) + " wrote it";
  });
}

// Two accesses by different instances to overlapping bytes, one a write.
void CheckPair(const InstanceGraph& g, const Access& a, const Access& b, Findings* out) {
  const Unrolling& u = g.unrolling();
  const uint32_t ia = u.InferenceOf(a.instance), ib = u.InferenceOf(b.instance);
  const Key key{std::min(ia, ib), std::max(ia, ib), std::min(a.instance, b.instance),
                std::max(a.instance, b.instance)};
  if (!g.HappensBefore(a.instance, b.instance) && !g.HappensBefore(b.instance, a.instance)) {
    out->race.Offer(key, [&] {
      return "race: " + u.InstanceName(a.instance) + " " + AccessText(u.facts(), a) + " and " +
             u.InstanceName(b.instance) + " " + AccessText(u.facts(), b) +
             " are not ordered by happens-before (a missing wait, too few slots, or "
             "overlapping tensors)";
    });
    return;
  }
  CheckOverwrite(g, a, b, key, &out->overwrite);
  CheckOverwrite(g, b, a, key, &out->overwrite);
}

// Sorting by address makes the overlapping pairs neighbours: the scan from an
// access stops at the first one that starts past its end.
Findings ScanOverlaps(const InstanceGraph& g, const std::vector<Access>& accesses) {
  std::vector<size_t> sorted(accesses.size());
  for (size_t k = 0; k < sorted.size(); ++k) sorted[k] = k;
  std::sort(sorted.begin(), sorted.end(), [&accesses](size_t x, size_t y) {
    const Access& a = accesses[x];
    const Access& b = accesses[y];
    return std::tie(a.domain, a.begin, x) < std::tie(b.domain, b.begin, y);
  });
  Findings found;
  for (size_t x = 0; x < sorted.size(); ++x) {
    const Access& a = accesses[sorted[x]];
    for (size_t y = x + 1; y < sorted.size(); ++y) {
      const Access& b = accesses[sorted[y]];
      if (b.domain != a.domain || b.begin >= a.end) break;
      if (a.instance == b.instance || (!a.write && !b.write) || b.end <= b.begin) continue;
      ++found.pairs;
      CheckPair(g, a, b, &found);
    }
  }
  return found;
}

// Read-before-write, part two: each read's writer happens before it.
Check CheckWritersFirst(const InstanceGraph& g, const std::vector<Access>& accesses) {
  const Unrolling& u = g.unrolling();
  for (const Access& a : accesses) {
    if (a.write || g.HappensBefore(static_cast<uint32_t>(a.writer), a.instance)) continue;
    return Fail("read before write: " + u.InstanceName(a.instance) + " " +
                AccessText(u.facts(), a) + ", but its writer " +
                u.InstanceName(static_cast<uint32_t>(a.writer)) + " does not happen before it");
  }
  return Check();
}

}  // namespace

std::vector<Access> CollectAccesses(const Unrolling& u) {
  const schema::Plan* plan = u.facts().plan;
  std::vector<Access> accesses;
  for (uint32_t i = 0; i < u.inferences(); ++i) {
    for (uint32_t n = 0; n < u.facts().num_nodes; ++n) AddNodeAccesses(u, n, i, &accesses);
    if (plan->inputs() != nullptr) {
      for (uint32_t t : *plan->inputs()) AddAccess(u, u.WriteInstance(i), t, i, true, &accesses);
    }
    if (plan->outputs() != nullptr) {
      for (uint32_t t : *plan->outputs()) AddAccess(u, u.ReadInstance(i), t, i, false, &accesses);
    }
  }
  return accesses;
}

Check CheckAccesses(const InstanceGraph& graph, const std::vector<Access>& accesses,
                    size_t* out_pairs) {
  BATON_TRY(CheckReadsHaveWriters(graph.unrolling(), accesses));
  // The reported violation is the one with the earliest inferences, so the
  // message describes the first thing that goes wrong.
  const Findings found = ScanOverlaps(graph, accesses);
  *out_pairs = found.pairs;
  if (found.race.found()) return Fail(found.race.text());
  BATON_TRY(CheckWritersFirst(graph, accesses));
  if (found.overwrite.found()) return Fail(found.overwrite.text());
  return Check();
}

}  // namespace baton::planner::validate_detail
