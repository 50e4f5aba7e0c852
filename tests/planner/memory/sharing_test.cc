// The reuse rule for tensors with several slots (sharing.h) and what
// PlanMemory makes of it, on programs built by hand whose happens-before is
// worked out in the comments.

#include "baton/planner/memory/sharing.h"

#include <gtest/gtest.h>

#include "baton/planner/memory/memory.h"

namespace baton::planner {
namespace {

// Queues q0, q1, q2 over one domain; nodes (queue, stage, waits) in the
// order given, each queue's program in that order too.
struct NodeSpec {
  std::string name;
  int queue;
  int stage;
  std::vector<WaitEdge> waits;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
};

// Every tensor is float32 [1, 64] (256 bytes) in "dram" (alignment 64). A
// tensor no node writes is a graph input; `outputs` are graph outputs.
Program Build(int in_flight, const std::vector<NodeSpec>& nodes,
              const std::vector<std::string>& outputs = {}) {
  Program p;
  p.in_flight = in_flight;
  p.target.domains.push_back({"dram", 1 << 20, 64});
  for (int q = 0; q < 3; ++q) {
    QueueInfo info;
    info.name = "q" + std::to_string(q);
    info.domains = {0};
    p.queues.push_back(info);
  }
  p.programs.assign(3, {});
  auto tensor = [&](const std::string& name) {
    for (size_t t = 0; t < p.graph.tensors.size(); ++t) {
      if (p.graph.tensors[t].name == name) return static_cast<int>(t);
    }
    Tensor t;
    t.name = name;
    t.dtype = DType::Float32;
    t.shape = {1, 64};
    t.shape_known = true;
    p.tensor_domain.push_back(0);
    return p.graph.AddTensor(std::move(t));
  };
  std::vector<bool> written;
  for (const NodeSpec& s : nodes) {
    Node n;
    n.name = s.name;
    n.op = s.inputs.size() == 2 ? "Add" : "Relu";
    for (const std::string& i : s.inputs) n.inputs.push_back(tensor(i));
    for (const std::string& o : s.outputs) n.outputs.push_back(tensor(o));
    const int index = static_cast<int>(p.graph.nodes.size());
    p.graph.nodes.push_back(n);
    p.node_queue.push_back(s.queue);
    p.node_stage.push_back(s.stage);
    p.waits.push_back(s.waits);
    p.programs[s.queue].push_back(index);
    p.order.push_back(index);
  }
  written.assign(p.graph.tensors.size(), false);
  for (const Node& n : p.graph.nodes) {
    for (int o : n.outputs) written[o] = true;
  }
  for (size_t t = 0; t < written.size(); ++t) {
    if (!written[t]) p.graph.inputs.push_back(static_cast<int>(t));
  }
  for (const std::string& o : outputs) p.graph.outputs.push_back(tensor(o));
  p.workspace.assign(p.graph.nodes.size(), {});
  return p;
}

// A (q0, stage 0) writes t; B (q1, stage 1, waits A) reads t; C (q1, stage 1,
// after B) writes u; E (q2, stage 2, waits C) reads u.
//   delta 0:  A(i) -> B(i) -> C(i) (q1 order) -> E(i): t@i before u@i.
//   delta -1: u@(i-1) is C(i-1) at q1's iteration i and E(i-1) at q2's
//             iteration i + 1; nothing orders them with A(i) at q0's
//             iteration i (the in-flight limit only orders i - D).
//   delta +1: t@i -> C(i) -> C(i+1) -> E(i+1): ordered.
//   delta -2: E(i-2) and A(i): ordered by the limit only when D <= 2.
std::vector<NodeSpec> Chain() {
  return {{"A", 0, 0, {}, {"x"}, {"t"}},
          {"B", 1, 1, {{0, 0}}, {"t"}, {"b"}},
          {"C", 1, 1, {}, {"b"}, {"u"}},
          {"E", 2, 2, {{2, 0}}, {"u"}, {"y"}}};
}

const std::vector<int> kT = {0, 1};  // accessors of t: A, B
const std::vector<int> kU = {2, 3};  // accessors of u: C, E

TEST(SharingRule, LanesShareWhereOnlyOtherSlotsInterleave) {
  const Program p = Build(2, Chain());
  const HappensBefore hb(p);
  const SharingRule rule(hb, 2);
  EXPECT_TRUE(rule.Ordered(kT, kU, 0));
  EXPECT_FALSE(rule.Ordered(kT, kU, -1));
  EXPECT_TRUE(rule.Ordered(kT, kU, 1));
  // Two slots each: slot s on slot s meets only delta = 0 (mod 2).
  EXPECT_TRUE(rule.LanesMayShare(kT, kU, 2));
  EXPECT_TRUE(rule.SlotsMayShare(kT, 2, 1, kU, 2, 1));
  // Slot 0 of t on slot 1 of u meets delta = -1.
  EXPECT_FALSE(rule.SlotsMayShare(kT, 2, 0, kU, 2, 1));
  // Anywhere (or a single-slot u) meets every delta.
  EXPECT_FALSE(rule.AnySlotsMayShare(kT, kU));
  EXPECT_FALSE(rule.SlotsMayShare(kT, 2, 0, kU, 1, 0));
}

TEST(SharingRule, DeeperPipelinesNeedMoreSlotsToShare) {
  // D = 3: with two slots each, slot s on slot s also meets delta = -2, and
  // E(i-2) is not ordered with A(i) (the limit orders i - 3 only).
  const Program p = Build(3, Chain());
  const HappensBefore hb(p);
  const SharingRule rule(hb, 3);
  EXPECT_FALSE(rule.Ordered(kT, kU, -2));
  EXPECT_FALSE(rule.LanesMayShare(kT, kU, 2));
  // Three slots each: only delta = 0 (mod 3) in (-3, 3).
  EXPECT_TRUE(rule.LanesMayShare(kT, kU, 3));
}

TEST(SharingRule, CallerAccessesFollowTheAsyncApi) {
  // The caller writes x of inference i + 1 while A of i may still run: the
  // input and A's output interleave at delta = 1 unless D = 1.
  const Program p = Build(2, Chain());
  const HappensBefore hb(p);
  const SharingRule rule(hb, 2);
  const std::vector<int> x = {kCallerWrite, 0};
  EXPECT_TRUE(rule.Before(kCallerWrite, 0, 0));
  EXPECT_FALSE(rule.Before(0, kCallerWrite, 1));
  EXPECT_TRUE(rule.Before(0, kCallerWrite, 2));
  EXPECT_TRUE(rule.Before(3, kCallerRead, 0));
  EXPECT_FALSE(rule.AnySlotsMayShare(x, kU));
}

// Offsets of slot s of tensor `name` as [begin, end).
std::pair<uint64_t, uint64_t> SlotRange(const Program& p, const std::string& name, uint32_t s) {
  for (size_t t = 0; t < p.graph.tensors.size(); ++t) {
    if (p.graph.tensors[t].name != name) continue;
    const TensorPlacement& pl = p.placement[t];
    const uint64_t begin = pl.offset + s * pl.slot_stride;
    return {begin, begin + p.graph.tensors[t].bytes()};
  }
  ADD_FAILURE() << name;
  return {0, 0};
}

bool Overlap(std::pair<uint64_t, uint64_t> a, std::pair<uint64_t, uint64_t> b) {
  return a.first < b.second && b.first < a.second;
}

uint32_t Slots(const Program& p, const std::string& name) {
  for (size_t t = 0; t < p.graph.tensors.size(); ++t) {
    if (p.graph.tensors[t].name == name) return p.placement[t].slots;
  }
  return 0;
}

TEST(PlanMemory, TwoSlotTensorsShareTheirLanes) {
  Program p = Build(2, Chain(), {"y"});
  ASSERT_TRUE(PlanMemory(&p, 1.0).ok());
  // x, t, u, y have two slots (D = 2, one stage crossed), b one slot.
  const std::vector<std::string> multi = {"x", "t", "u", "y"};
  for (const std::string& name : multi) ASSERT_EQ(Slots(p, name), 2u) << name;
  ASSERT_EQ(Slots(p, "b"), 1u);
  // Slot s of one never lies on slot 1 - s of another.
  for (const std::string& a : multi) {
    for (const std::string& b : multi) {
      if (a == b) continue;
      for (uint32_t s = 0; s < 2; ++s) {
        EXPECT_FALSE(Overlap(SlotRange(p, a, s), SlotRange(p, b, 1 - s))) << a << " " << b;
      }
    }
  }
  // By hand, at one inference: A touches x and t, E touches u and y, and
  // every other pair is ordered (x, t before u, y). So a lane holds two
  // tensors of 256 bytes (x with u or y, t with u or y): a region of
  // 2 lanes x 512 bytes, plus b (B touches t, C touches u: apart from all).
  EXPECT_EQ(p.domain_report[0].arena_bytes, 2u * 512u + 256u);
  int shared = 0;
  for (const std::string& a : multi) {
    for (const std::string& b : multi) {
      shared += a < b && Overlap(SlotRange(p, a, 0), SlotRange(p, b, 0));
    }
  }
  EXPECT_EQ(shared, 2);
  for (const auto& [a, b] : {std::pair<std::string, std::string>{"x", "t"}, {"u", "y"}}) {
    EXPECT_FALSE(Overlap(SlotRange(p, a, 0), SlotRange(p, b, 0))) << a << " " << b;
  }
}

TEST(PlanMemory, NoLanesWhenADeeperPipelineInterleaves) {
  Program p = Build(3, Chain(), {"y"});
  ASSERT_TRUE(PlanMemory(&p, 1.0).ok());
  ASSERT_EQ(Slots(p, "t"), 2u);
  for (uint32_t s = 0; s < 2; ++s) {
    for (uint32_t r = 0; r < 2; ++r) EXPECT_FALSE(Overlap(SlotRange(p, "t", s), SlotRange(p, "u", r)));
  }
}

TEST(PlanMemory, OneSlotWhenTheReaderRunsBeforeTheNextWrite) {
  // W (q0, stage 0) writes m, R (q0, stage 1) reads it. Listed R first, q0
  // runs R(i) before W(i+1) in iteration i + 1: one slot suffices and no wait
  // is added. Listed W first, W(i+1) runs before R(i): two slots.
  for (bool reader_first : {true, false}) {
    SCOPED_TRACE(reader_first);
    std::vector<NodeSpec> nodes = {{"W", 0, 0, {}, {"x"}, {"m"}}, {"R", 0, 1, {}, {"m"}, {"y"}}};
    if (reader_first) std::swap(nodes[0], nodes[1]);
    Program p = Build(2, nodes, {"y"});
    ASSERT_TRUE(PlanMemory(&p, 1.0).ok());
    EXPECT_EQ(Slots(p, "m"), reader_first ? 1u : 2u);
    EXPECT_EQ(Slots(p, "x"), 2u);  // graph inputs and outputs: D slots
    EXPECT_EQ(Slots(p, "y"), 2u);
    const int w = reader_first ? 1 : 0;
    EXPECT_TRUE(p.waits[w].empty());  // same queue: program order suffices
  }
}

TEST(PlanMemory, LowerBoundStaysBelowTheArena) {
  for (int d : {1, 2, 3, 4}) {
    Program p = Build(d, Chain(), {"y"});
    ASSERT_TRUE(PlanMemory(&p, 1.0).ok());
    const DomainReport& r = p.domain_report[0];
    EXPECT_LE(r.lower_bound_bytes, r.arena_bytes) << d;
    // A(i) reads x and writes t at once: two instances of 256 bytes.
    EXPECT_GE(r.lower_bound_bytes, 512u) << d;
  }
}

}  // namespace
}  // namespace baton::planner
