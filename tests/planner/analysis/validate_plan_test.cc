#include "baton/planner/analysis/validate_plan.h"

#include <gtest/gtest.h>

#include <cstring>

#include "baton/plan_view.h"
#include "planner/plan_builder.h"

namespace baton::planner {
namespace {

using schema::DeviceKind;
using schema::Op;
using testing::PlanBuilder;

// Two queues, two stages, one copy:
//
//   cpu0 (dram):        A: x -> a                     stage 0
//   npu0 (dram, sram):  copy: a -> a_s (waits A)      stage 1
//                       B: a_s -> y                   stage 1
//
//   dram: x [0, 64 * x_slots)   a [256, 256 + 64 * a_slots)
//   sram: a_s [a_s_offset, +64) y [128, 128 + 64 * y_slots)
struct Pipeline {
  uint32_t in_flight = 2;
  uint32_t x_slots = 2;
  uint32_t a_slots = 2;
  uint32_t y_slots = 2;
  uint64_t a_s_offset = 0;
  bool copy_waits = true;

  PlanBuilder Build() const {
    PlanBuilder b;
    b.InFlight(in_flight);
    const uint32_t dram = b.Domain("dram", 4096);
    const uint32_t sram = b.Domain("sram", 1024);
    const uint32_t cpu = b.Queue("cpu0", DeviceKind::Cpu, {dram});
    const uint32_t npu = b.Queue("npu0", DeviceKind::Npu, {dram, sram});
    const uint32_t x = b.Tensor("x", {1, 16}, dram, 0, x_slots);
    const uint32_t a = b.Tensor("a", {1, 16}, dram, 256, a_slots);
    const uint32_t a_s = b.Tensor("a_s", {1, 16}, sram, a_s_offset, 1);
    const uint32_t y = b.Tensor("y", {1, 16}, sram, 128, y_slots);
    const uint32_t node_a = b.Node("A", Op::Relu, cpu).In({static_cast<int32_t>(x)}).Out({a});
    auto copy = b.Node("copy_a", Op::Copy, npu).In({static_cast<int32_t>(a)}).Out({a_s}).Stage(1);
    if (copy_waits) copy.Wait(node_a, 0);
    b.Node("B", Op::Relu, npu).In({static_cast<int32_t>(a_s)}).Out({y}).Stage(1);
    b.Inputs({x}).Outputs({y});
    return b;
  }
  std::vector<uint8_t> Bytes() const { return Build().Finish(); }
};

Check Validate(const std::vector<uint8_t>& bytes, ValidateReport* report = nullptr, int n = 0) {
  return ValidatePlanSchedule(bytes.data(), bytes.size(), n, report);
}

TEST(ValidatePlanTest, CorrectTwoQueuePlanWithCopyPasses) {
  const std::vector<uint8_t> bytes = Pipeline().Bytes();
  // The runtime's loader accepts it too, so the plan is well formed.
  std::vector<uint64_t> aligned((bytes.size() + 7) / 8);
  std::memcpy(aligned.data(), bytes.data(), bytes.size());
  PlanView view;
  LoadError error;
  ASSERT_TRUE(PlanView::Load(aligned.data(), bytes.size(), &view, &error).ok()) << error.text;

  ValidateReport report;
  const Check check = Validate(bytes, &report);
  EXPECT_TRUE(check.ok()) << check.error();
  // Automatic N = D + max stage + max slots + 2 = 2 + 1 + 2 + 2.
  EXPECT_EQ(report.inferences, 7u);
  EXPECT_EQ(report.instances, 7u * (3 + 2));
  EXPECT_GT(report.edges, 0u);
  EXPECT_GT(report.pairs_checked, 0u);
}

TEST(ValidatePlanTest, ExplicitInferenceCount) {
  ValidateReport report;
  EXPECT_TRUE(Validate(Pipeline().Bytes(), &report, 12).ok());
  EXPECT_EQ(report.inferences, 12u);
  EXPECT_FALSE(Validate(Pipeline().Bytes(), &report, -1).ok());
}

TEST(ValidatePlanTest, MissingWaitIsARace) {
  Pipeline p;
  p.copy_waits = false;
  const Check check = Validate(p.Bytes());
  ASSERT_FALSE(check.ok());
  EXPECT_NE(check.error().find("race"), std::string::npos) << check.error();
  EXPECT_NE(check.error().find("node 'A'"), std::string::npos) << check.error();
  EXPECT_NE(check.error().find("node 'copy_a'"), std::string::npos) << check.error();
  EXPECT_NE(check.error().find("tensor 'a'"), std::string::npos) << check.error();
  EXPECT_NE(check.error().find("inference 0"), std::string::npos) << check.error();
}

TEST(ValidatePlanTest, OverlappingLiveTensorsFail) {
  Pipeline p;
  p.a_s_offset = 128;  // on top of slot 0 of y, still to be read by the caller
  const Check check = Validate(p.Bytes());
  ASSERT_FALSE(check.ok());
  EXPECT_NE(check.error().find("race"), std::string::npos) << check.error();
  EXPECT_NE(check.error().find("tensor 'a_s'"), std::string::npos) << check.error();
  EXPECT_NE(check.error().find("tensor 'y'"), std::string::npos) << check.error();
}

TEST(ValidatePlanTest, TooFewSlotsForTwoInFlightFail) {
  Pipeline p;
  p.y_slots = 1;  // B writes y for i+1 while the caller may still read y of i
  const Check check = Validate(p.Bytes());
  ASSERT_FALSE(check.ok());
  EXPECT_NE(check.error().find("race"), std::string::npos) << check.error();
  EXPECT_NE(check.error().find("tensor 'y'"), std::string::npos) << check.error();
}

TEST(ValidatePlanTest, WaitCycleIsADeadlock) {
  PlanBuilder b = Pipeline().Build();
  b.node(0).Wait(1, 0);  // A waits for copy_a, which waits for A
  const Check check = Validate(b.Finish());
  ASSERT_FALSE(check.ok());
  EXPECT_NE(check.error().find("deadlock"), std::string::npos) << check.error();
  EXPECT_NE(check.error().find("node 'A'"), std::string::npos) << check.error();
  EXPECT_NE(check.error().find("node 'copy_a'"), std::string::npos) << check.error();
}

TEST(ValidatePlanTest, CycleThroughQueueOrderIsADeadlock) {
  // A (cpu0) waits for B of the same inference; on npu0, B comes after the
  // copy, which waits for A.
  PlanBuilder b = Pipeline().Build();
  b.node(0).Wait(2, 0);
  const Check check = Validate(b.Finish());
  ASSERT_FALSE(check.ok());
  EXPECT_NE(check.error().find("deadlock"), std::string::npos) << check.error();
  EXPECT_NE(check.error().find("queue order"), std::string::npos) << check.error();
}

// One queue runs stage 0 (Y) before stage 2 (X) in each iteration. With
// D = 1, Y of inference 1 cannot start before inference 0 is back, which needs
// X of inference 0, which the queue runs in iteration 2, after Y of
// inference 1: the executor flushes the stream after every inference.
PlanBuilder InterleavedStages(uint32_t in_flight, uint32_t m_slots) {
  PlanBuilder b;
  b.InFlight(in_flight);
  const uint32_t dram = b.Domain("dram", 4096);
  const uint32_t cpu = b.Queue("cpu0", DeviceKind::Cpu, {dram});
  const uint32_t x = b.Tensor("x", {1, 16}, dram, 0, in_flight);
  const uint32_t m = b.Tensor("m", {1, 16}, dram, 1024, m_slots);
  const uint32_t y = b.Tensor("y", {1, 16}, dram, 2048, in_flight);
  b.Node("Y", Op::Relu, cpu).In({static_cast<int32_t>(x)}).Out({m});
  b.Node("X", Op::Relu, cpu).In({static_cast<int32_t>(m)}).Out({y}).Stage(2);
  b.Inputs({x}).Outputs({y});
  return b;
}

TEST(ValidatePlanTest, InFlightStallIsValidatedAsFlushedStreams) {
  ValidateReport report;
  // One slot for m is enough: every stream holds one inference.
  const Check one = Validate(InterleavedStages(1, 1).Finish(), &report);
  EXPECT_TRUE(one.ok()) << one.error();
  EXPECT_TRUE(report.flushes);
  EXPECT_EQ(report.stream_length, 1u);
  EXPECT_GT(report.inferences, 1u);
  // With D = 3 the stream flows, and m, live across three iterations, needs
  // three slots: with two, Y of inference 2 overwrites m while X of 0 may
  // still have to read it.
  const Check three = Validate(InterleavedStages(3, 3).Finish(), &report);
  EXPECT_TRUE(three.ok()) << three.error();
  EXPECT_FALSE(report.flushes);
  EXPECT_EQ(report.stream_length, report.inferences);
  const Check two_slots = Validate(InterleavedStages(3, 2).Finish(), &report);
  ASSERT_FALSE(two_slots.ok());
  EXPECT_NE(two_slots.error().find("tensor 'm'"), std::string::npos) << two_slots.error();
}

TEST(ValidatePlanTest, InFlightLimitMakesSingleSlotsSafe) {
  Pipeline p;
  p.in_flight = 1;
  p.x_slots = p.a_slots = p.y_slots = 1;
  const Check one = Validate(p.Bytes());
  EXPECT_TRUE(one.ok()) << one.error();
  // The same memory with two inferences in flight: the caller writes x of
  // inference 1 while A may still read x of inference 0.
  p.in_flight = 2;
  const Check two = Validate(p.Bytes());
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.error().find("race"), std::string::npos) << two.error();
}

TEST(ValidatePlanTest, OverwriteBetweenWriteAndReadFails) {
  // cpu0: A writes a, then C writes z over the same bytes; the copy waits
  // for C and reads a: ordered, but a was clobbered.
  PlanBuilder b;
  const uint32_t dram = b.Domain("dram", 4096);
  const uint32_t cpu = b.Queue("cpu0", DeviceKind::Cpu, {dram});
  const uint32_t npu = b.Queue("npu0", DeviceKind::Npu, {dram});
  const uint32_t x = b.Tensor("x", {1, 16}, dram, 0);
  const uint32_t a = b.Tensor("a", {1, 16}, dram, 64);
  const uint32_t z = b.Tensor("z", {1, 16}, dram, 64);
  const uint32_t y = b.Tensor("y", {1, 16}, dram, 128);
  const uint32_t w = b.Tensor("w", {1, 16}, dram, 192);
  b.Node("A", Op::Relu, cpu).In({static_cast<int32_t>(x)}).Out({a});
  const uint32_t c = b.Node("C", Op::Relu, cpu).In({static_cast<int32_t>(x)}).Out({z});
  b.Node("D", Op::Relu, cpu).In({static_cast<int32_t>(z)}).Out({w});
  b.Node("B", Op::Relu, npu).In({static_cast<int32_t>(a)}).Out({y}).Wait(c, 0);
  b.Inputs({x}).Outputs({y, w});
  const Check check = Validate(b.Finish());
  ASSERT_FALSE(check.ok());
  EXPECT_NE(check.error().find("read before write"), std::string::npos) << check.error();
  EXPECT_NE(check.error().find("node 'B'"), std::string::npos) << check.error();
  EXPECT_NE(check.error().find("tensor 'z'"), std::string::npos) << check.error();

  // Control: with z elsewhere the plan passes.
  b.tensors[z].offset = 256;
  const Check fixed = Validate(b.Finish());
  EXPECT_TRUE(fixed.ok()) << fixed.error();
}

TEST(ValidatePlanTest, ConsumerBeforeProducerOnAQueueFails) {
  // npu0 runs B before the copy that feeds it: B reads a stale a_s.
  PlanBuilder b = Pipeline().Build();
  std::swap(b.queues[1].nodes[0], b.queues[1].nodes[1]);
  const Check check = Validate(b.Finish());
  ASSERT_FALSE(check.ok());
  EXPECT_NE(check.error().find("read before write"), std::string::npos) << check.error();
  EXPECT_NE(check.error().find("tensor 'a_s'"), std::string::npos) << check.error();
}

TEST(ValidatePlanTest, ReadOfUnwrittenTensorFails) {
  PlanBuilder b = Pipeline().Build();
  const uint32_t ghost = b.Tensor("ghost", {1, 16}, 0, 1024);
  b.nodes[0].inputs.push_back(static_cast<int32_t>(ghost));
  const Check check = Validate(b.Finish());
  ASSERT_FALSE(check.ok());
  EXPECT_NE(check.error().find("'ghost'"), std::string::npos) << check.error();
  EXPECT_NE(check.error().find("no node writes"), std::string::npos) << check.error();
}

TEST(ValidatePlanTest, TensorOutsideQueueDomainsFails) {
  PlanBuilder b = Pipeline().Build();
  b.queues[1].domains = {1};  // npu0 loses dram, but its copy reads a in dram
  const Check check = Validate(b.Finish());
  ASSERT_FALSE(check.ok());
  EXPECT_NE(check.error().find("cannot reach"), std::string::npos) << check.error();
  EXPECT_NE(check.error().find("'copy_a'"), std::string::npos) << check.error();
}

TEST(ValidatePlanTest, OrderThroughTheNextInferenceEndsWithTheStream) {
  // E (gpu0, stage 2) reads d from D (npu0, stage 1) without a wait. Inside
  // the stream E of inference i is still ordered after D of i, through the
  // next inference: D(i) -> B(i+1) on npu0, B(i+1) -> E1(i+1) by a wait, and
  // E1(i+1) -> E(i) on gpu0. The last inference has no successor (its
  // instances are skipped and wait for nothing), so there E races with D.
  PlanBuilder b;
  b.InFlight(3);
  const uint32_t dram = b.Domain("dram", 65536);
  const uint32_t gpu = b.Queue("gpu0", DeviceKind::Gpu, {dram});
  const uint32_t npu = b.Queue("npu0", DeviceKind::Npu, {dram});
  const uint32_t x = b.Tensor("x", {1, 16}, dram, 0, 3);
  const uint32_t d = b.Tensor("d", {1, 16}, dram, 1024, 3);
  const uint32_t t = b.Tensor("t", {1, 16}, dram, 2048, 3);
  const uint32_t e = b.Tensor("e", {1, 16}, dram, 3072, 3);
  const uint32_t e1 = b.Tensor("e1", {1, 16}, dram, 4096, 3);
  const uint32_t node_e =
      b.Node("E", Op::Relu, gpu).In({static_cast<int32_t>(d)}).Out({e}).Stage(2);
  const uint32_t node_d =
      b.Node("D", Op::Relu, npu).In({static_cast<int32_t>(x)}).Out({d}).Stage(1);
  const uint32_t node_b = b.Node("B", Op::Relu, npu).In({static_cast<int32_t>(x)}).Out({t});
  b.Node("E1", Op::Relu, gpu).In({static_cast<int32_t>(t)}).Out({e1}).Wait(node_b);
  b.Inputs({x}).Outputs({e, e1});
  const Check check = Validate(b.Finish(), nullptr, 5);
  ASSERT_FALSE(check.ok());
  EXPECT_NE(check.error().find("race: node 'E' (gpu0) for inference 4 reads tensor 'd'"),
            std::string::npos)
      << check.error();
  EXPECT_NE(check.error().find("node 'D' (npu0) for inference 4 writes"), std::string::npos)
      << check.error();
  // With the wait the order no longer depends on inference i + 1.
  b.node(node_e).Wait(node_d, 0);
  const Check fixed = Validate(b.Finish(), nullptr, 5);
  EXPECT_TRUE(fixed.ok()) << fixed.error();
}

TEST(ValidatePlanTest, CorruptBytesFail) {
  std::vector<uint8_t> bytes = Pipeline().Bytes();
  bytes.resize(bytes.size() / 2);
  EXPECT_FALSE(Validate(bytes).ok());
  EXPECT_FALSE(ValidatePlanSchedule(nullptr, 0).ok());
}

}  // namespace
}  // namespace baton::planner

namespace baton::planner {
namespace {

// Tensors with two slots sharing bytes (docs/packing.md, "Tensors with
// several slots"), D = 2:
//
//   q0: A  x -> t   stage 0
//   q1: B  t -> b   stage 1, waits A      C  b -> u   stage 1
//   q2: E  u -> y   stage 2, waits C
//
// t@i is over (A(i) -> B(i)) before u@i starts (C(i), after B(i) on q1),
// and t@(i +- 2), u@(i +- 2) are ordered by the in-flight limit; but u@(i-1)
// (C at q1's iteration i, E at q2's iteration i + 1) is not ordered with A(i).
// So slot s of u may lie on slot s of t, and never on the other slot.
std::vector<uint8_t> LanePlan(uint64_t u_offset, uint64_t u_stride) {
  PlanBuilder b;
  b.InFlight(2);
  const uint32_t dram = b.Domain("dram", 4096, 64);
  const uint32_t q0 = b.Queue("q0", DeviceKind::Cpu, {dram});
  const uint32_t q1 = b.Queue("q1", DeviceKind::Gpu, {dram});
  const uint32_t q2 = b.Queue("q2", DeviceKind::Dsp, {dram});
  const uint32_t x = b.Tensor("x", {1, 16}, dram, 0, 2);
  const uint32_t y = b.Tensor("y", {1, 16}, dram, 128, 2);
  const uint32_t mid = b.Tensor("b", {1, 16}, dram, 256, 1);
  const uint32_t t = b.Tensor("t", {1, 16}, dram, 512, 2, 64);
  const uint32_t u = b.Tensor("u", {1, 16}, dram, u_offset, 2, u_stride);
  const auto in = [](uint32_t v) { return std::vector<int32_t>{static_cast<int32_t>(v)}; };
  const uint32_t a_node = b.Node("A", Op::Relu, q0).In(in(x)).Out({t});
  const uint32_t b_node = b.Node("B", Op::Relu, q1).In(in(t)).Out({mid}).Stage(1).Wait(a_node, 0);
  const uint32_t c_node = b.Node("C", Op::Relu, q1).In(in(mid)).Out({u}).Stage(1);
  const uint32_t e_node = b.Node("E", Op::Relu, q2).In(in(u)).Out({y}).Stage(2).Wait(c_node, 0);
  // Lag waits: the writer of i + 2 waits for the reader of i.
  b.node(a_node).Wait(b_node, 2);
  b.node(c_node).Wait(e_node, 2);
  b.Inputs({x}).Outputs({y});
  return b.Finish();
}

TEST(ValidatePlanTest, MultiSlotTensorsMayShareSlotForSlot) {
  // u slot s on t slot s (same offset and stride): valid.
  const Check lanes = Validate(LanePlan(512, 64));
  EXPECT_TRUE(lanes.ok()) << lanes.error();
  // Only u's slot 0 on t's slot 0 (u's slot 1 past t): valid too.
  const Check half = Validate(LanePlan(512, 128));
  EXPECT_TRUE(half.ok()) << half.error();
}

TEST(ValidatePlanTest, MultiSlotSharingOnTheWrongSlotIsARace) {
  // One stride up: u slot 0 lies on t slot 1. u@(i-1) and t@i then share
  // bytes without an order between C/E of i - 1 and A of i.
  ValidateReport report;
  const Check shifted = Validate(LanePlan(576, 64), &report);
  ASSERT_FALSE(shifted.ok());
  EXPECT_NE(shifted.error().find("race"), std::string::npos) << shifted.error();
  EXPECT_NE(shifted.error().find("tensor 'u'"), std::string::npos) << shifted.error();
  EXPECT_NE(shifted.error().find("tensor 't'"), std::string::npos) << shifted.error();
}

// Which slot of a 2-slot tensor meets which slot of a 3-slot one repeats
// every lcm(2, 3) = 6 inferences, so when their bytes overlap the automatic
// unrolling covers 6 inferences past the start-up instead of the largest
// slot count: N = D + max stage + 6 + 2 = 12 instead of 3 + 1 + 3 + 2 = 9.
TEST(ValidatePlanTest, AutomaticUnrollingCoversTheSlotPeriod) {
  PlanBuilder b;
  b.InFlight(3);
  const uint32_t dram = b.Domain("dram", 8192, 64);
  const uint32_t q0 = b.Queue("q0", DeviceKind::Cpu, {dram});
  const uint32_t x = b.Tensor("x", {1, 16}, dram, 0, 3);
  const uint32_t y = b.Tensor("y", {1, 16}, dram, 256, 3);
  const uint32_t m = b.Tensor("m", {1, 16}, dram, 1024, 2, 64);
  b.Node("A", Op::Relu, q0).In({static_cast<int32_t>(x)}).Out({m});
  b.Node("B", Op::Relu, q0).In({static_cast<int32_t>(m)}).Out({y}).Stage(1);
  b.Inputs({x}).Outputs({y});
  ValidateReport apart;
  const Check ok = Validate(b.Finish(), &apart);
  EXPECT_TRUE(ok.ok()) << ok.error();
  EXPECT_EQ(apart.inferences, 9u);
  // m (2 slots) over x (3 slots): the caller's write of x for i + 3 may come
  // while B still reads m of i + 2 (or i + 1) from the same bytes.
  b.tensors[m].offset = 0;
  ValidateReport shared;
  const Check bad = Validate(b.Finish(), &shared);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().find("race"), std::string::npos) << bad.error();
  EXPECT_EQ(shared.inferences, 12u);
}

}  // namespace
}  // namespace baton::planner
