// PlanView::Load on valid and broken hand-built plans: every bad plan gets an
// error status and a message, never a crash.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "plan_builder.h"
#include "test_util.h"

namespace baton::testing {
namespace {

using Op = schema::Op;
using DeviceKind = schema::DeviceKind;

struct Options {
  uint32_t version = kPlanFormatVersion;
  uint64_t y_offset = 16;
  uint32_t wait_node = 0;  // the relu waits on node wait_node (0 = itself: forward)
  bool with_wait = false;
};

AlignedPlan SmallPlan(const Options& o = Options()) {
  PlanBuilder b;
  b.Version(o.version);
  const uint32_t dram = b.Domain("dram", 64);
  const uint32_t cpu = b.Queue("cpu0", DeviceKind::Cpu, {dram});
  const uint32_t x = b.Arena("x", {4}, dram, 0);
  const uint32_t y = b.Arena("y", {4}, dram, o.y_offset);
  std::vector<WaitSpec> waits;
  if (o.with_wait) waits.push_back({o.wait_node, 0});
  b.Node("relu", Op::Relu, cpu, {static_cast<int32_t>(x)}, {y}, waits);
  b.Inputs({x});
  b.Outputs({y});
  return b.Finish();
}

Status Load(const AlignedPlan& plan, std::string* text = nullptr, size_t size = 0) {
  PlanView view;
  LoadError error;
  Status s = PlanView::Load(plan.data(), size ? size : plan.size(), &view, &error);
  if (text != nullptr) *text = error.text;
  if (s.ok() != view.loaded()) ADD_FAILURE() << "loaded() disagrees with the status";
  return s;
}

TEST(Loader, AcceptsAValidPlan) {
  const AlignedPlan plan = SmallPlan();
  std::string text;
  EXPECT_TRUE(Load(plan, &text).ok()) << text;
}

TEST(Loader, RejectsTruncatedPlans) {
  const AlignedPlan plan = SmallPlan();
  for (size_t size = 1; size < plan.size(); size += 7) {
    EXPECT_FALSE(Load(plan, nullptr, size).ok()) << "size " << size;
  }
}

TEST(Loader, RejectsAWrongIdentifier) {
  AlignedPlan plan = SmallPlan();
  plan.mutable_data()[4] ^= 0xff;  // identifier follows the root offset
  std::string text;
  EXPECT_EQ(Load(plan, &text).code(), StatusCode::kDataLoss);
  EXPECT_NE(text.find("BTN1"), std::string::npos) << text;
}

TEST(Loader, RejectsAnotherFormatVersion) {
  Options o;
  o.version = kPlanFormatVersion + 1;
  std::string text;
  EXPECT_EQ(Load(SmallPlan(o), &text).code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(text.find("version"), std::string::npos) << text;
}

TEST(Loader, RejectsATensorPastItsArena) {
  Options o;
  o.y_offset = 64;  // 16 bytes at 64 in a 64-byte domain
  std::string text;
  EXPECT_EQ(Load(SmallPlan(o), &text).code(), StatusCode::kOutOfRange);
  EXPECT_NE(text.find("tensor 1"), std::string::npos) << text;
}

TEST(Loader, RejectsAMisalignedTensor) {
  Options o;
  o.y_offset = 20;
  EXPECT_EQ(Load(SmallPlan(o)).code(), StatusCode::kDataLoss);
}

TEST(Loader, RejectsAWaitThatCouldDeadlock) {
  Options o;
  o.with_wait = true;
  o.wait_node = 0;  // waits on itself, same inference
  std::string text;
  EXPECT_EQ(Load(SmallPlan(o), &text).code(), StatusCode::kDataLoss);
  EXPECT_NE(text.find("node 0"), std::string::npos) << text;
}

TEST(Loader, RejectsMisalignedBytes) {
  const AlignedPlan plan = SmallPlan();
  std::vector<uint8_t> shifted(plan.size() + 16);
  uint8_t* p = shifted.data();
  while (reinterpret_cast<uintptr_t>(p) % 16 != 1) ++p;
  memcpy(p, plan.data(), plan.size());
  PlanView view;
  EXPECT_EQ(PlanView::Load(p, plan.size(), &view).code(), StatusCode::kFailedPrecondition);
}

TEST(Loader, SurvivesByteFlips) {
  // Every single-byte corruption, with the checksum recomputed so that it
  // reaches the semantic checks, either loads (then must also run) or is
  // rejected; nothing crashes. A small, deterministic fuzz.
  const AlignedPlan plan = SmallPlan();
  uint32_t loaded = 0;
  for (size_t i = 0; i + kPlanTrailerBytes < plan.size(); ++i) {
    for (uint8_t flip : {0x01, 0x80, 0xff}) {
      std::vector<uint8_t> bytes(plan.data(), plan.data() + plan.size());
      bytes[i] ^= flip;
      ResealPlan(&bytes);
      AlignedPlan copy(bytes.data(), bytes.size());
      PlanView view;
      if (!PlanView::Load(copy.data(), copy.size(), &view).ok()) continue;
      ++loaded;
      bool huge = false;  // a flipped size byte can ask for terabytes
      for (uint32_t d = 0; d < view.num_domains(); ++d)
        huge |= view.domain(d)->bytes() > (1u << 20);
      if (huge) continue;
      linux_port::Arenas arenas(view);
      InlinePort port;
      Executor executor;
      if (!executor.Init(view, ReferenceRegistry(), &port, arenas.buffers()).ok()) continue;
      const size_t in_bytes = view.input(0)->bytes();
      if (in_bytes > 1024 || view.num_inputs() != 1) continue;
      std::vector<uint8_t> in(in_bytes, 0);
      std::vector<std::vector<uint8_t>> outs;
      std::vector<Buffer> out_buffers;
      for (uint32_t o = 0; o < view.num_outputs(); ++o) {
        outs.emplace_back(view.output(o)->bytes());
      }
      for (auto& o : outs) out_buffers.push_back(Buffer{o.data(), o.size()});
      const ConstBuffer input{in.data(), in.size()};
      executor
          .Invoke(Span<const ConstBuffer>(&input, 1),
                  Span<const Buffer>(out_buffers.data(), out_buffers.size()))
          .IgnoreError();
    }
  }
  EXPECT_GT(loaded, 0u);  // some flips only touch names or padding
}


// --- Integrity: the CRC-32C trailer (docs/formats.md, "Checksum") -----------

// A small plan with constants: y = relu(x + c), 4 floats each.
AlignedPlan PlanWithConstants() {
  PlanBuilder b;
  const uint32_t dram = b.Domain("dram", 64);
  const uint32_t cpu = b.Queue("cpu0", DeviceKind::Cpu, {dram});
  const uint32_t x = b.Arena("x", {4}, dram, 0);
  const uint32_t c = b.Constant("c", {4}, {1.0f, -2.0f, 3.0f, -4.0f});
  const uint32_t y = b.Arena("y", {4}, dram, 16);
  const uint32_t z = b.Arena("z", {4}, dram, 32);
  b.Node("add", Op::Add, cpu, {static_cast<int32_t>(x), static_cast<int32_t>(c)}, {y});
  b.Node("relu", Op::Relu, cpu, {static_cast<int32_t>(y)}, {z});
  b.Inputs({x});
  b.Outputs({z});
  return b.Finish();
}

TEST(Checksum, TrailerIsTheCrc32cOfEverythingBefore) {
  const AlignedPlan plan = PlanWithConstants();
  ASSERT_GT(plan.size(), kPlanTrailerBytes);
  const size_t body = plan.size() - kPlanTrailerBytes;
  const uint8_t* t = plan.data() + body;
  const uint32_t stored = t[0] | t[1] << 8 | t[2] << 16 | static_cast<uint32_t>(t[3]) << 24;
  // Independent bitwise CRC-32C (reflected 0x82F63B78), not the runtime's table.
  uint32_t crc = 0xFFFFFFFFu;
  for (size_t i = 0; i < body; ++i) {
    crc ^= plan.data()[i];
    for (int k = 0; k < 8; ++k) crc = (crc & 1) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
  }
  EXPECT_EQ(stored, ~crc);
  PlanView view;
  ASSERT_TRUE(PlanView::Load(plan.data(), plan.size(), &view).ok());
  EXPECT_EQ(view.checksum(), stored);
}

// Issue 13's acceptance test: every single-byte change anywhere in a plan
// (constants, names, offsets, padding, the trailer itself) is rejected.
TEST(Checksum, RejectsEverySingleByteChange) {
#if !BATON_VERIFY_PLAN_CHECKSUM
  GTEST_SKIP() << "built with BATON_VERIFY_PLAN_CHECKSUM=0";
#endif
  const AlignedPlan plan = PlanWithConstants();
  ASSERT_TRUE(Load(plan).ok());
  AlignedPlan copy(plan.data(), plan.size());
  size_t rejected_by_crc = 0;
  for (size_t i = 0; i < plan.size(); ++i) {
    const uint8_t original = plan.data()[i];
    for (const uint8_t changed : {static_cast<uint8_t>(original ^ (1u << (i % 8))),
                                  static_cast<uint8_t>(original + 1)}) {
      copy.mutable_data()[i] = changed;
      std::string text;
      EXPECT_FALSE(Load(copy, &text).ok()) << "byte " << i << " changed to " << int{changed};
      rejected_by_crc += text.find("CRC-32C") != std::string::npos;
    }
    copy.mutable_data()[i] = original;
  }
  // Only the identifier bytes are caught before the CRC.
  EXPECT_GE(rejected_by_crc, 2 * (plan.size() - 4));
}

// --- Adversarial plans with a valid checksum ----------------------------------

struct Adversarial {
  uint32_t stage = 0;
  uint32_t queues = 1;
  uint32_t lag = 0;
  uint64_t y_offset = 16;  // 0: y aliases x
};

// `queues` CPU queues, queue q runs relu_q: x -> y_q; the first queue's
// node is the only one with a wait (on itself, lag `lag` > 0) when asked.
AlignedPlan AdversarialPlan(const Adversarial& a) {
  PlanBuilder b;
  const uint32_t dram = b.Domain("dram", 16 * (a.queues + 1));
  const uint32_t x = b.Arena("x", {4}, dram, 0);
  std::vector<uint32_t> outputs;
  for (uint32_t q = 0; q < a.queues; ++q) {
    const uint32_t cpu = b.Queue("cpu" + std::to_string(q), DeviceKind::Cpu, {dram});
    const uint32_t y = b.Arena("y" + std::to_string(q), {4}, dram, q == 0 ? a.y_offset : 16 * (q + 1));
    std::vector<WaitSpec> waits;
    if (a.lag > 0 && q == 0) waits.push_back({0, a.lag});
    b.Node("relu" + std::to_string(q), Op::Relu, cpu, {static_cast<int32_t>(x)}, {y}, waits,
           a.stage);
    outputs.push_back(y);
  }
  b.Inputs({x});
  b.Outputs(outputs);
  return b.Finish();
}

void ExpectRejected(const AlignedPlan& plan, const char* message) {
  std::string text;
  EXPECT_FALSE(Load(plan, &text).ok());
  EXPECT_NE(text.find(message), std::string::npos) << text;
}

TEST(Adversarial, HugeStagesAreRejectedNamingTheLimit) {
  Adversarial a;
  a.stage = 100000000;  // 1e8: `run` used to spin for 17 s
  ExpectRejected(AdversarialPlan(a), "BATON_MAX_STAGE");
  a.stage = 1u << 31;  // used to give an all-zero output
  ExpectRejected(AdversarialPlan(a), "BATON_MAX_STAGE");
  a.stage = UINT32_MAX;  // on five queues: used to give a wrong output
  a.queues = 5;
  ExpectRejected(AdversarialPlan(a), "BATON_MAX_STAGE");
  a.stage = kMaxStage + 1;
  a.queues = 1;
  ExpectRejected(AdversarialPlan(a), "BATON_MAX_STAGE");
}

TEST(Adversarial, HugeLagsAreRejectedNamingTheLimit) {
  Adversarial a;
  a.lag = UINT32_MAX;
  ExpectRejected(AdversarialPlan(a), "BATON_MAX_LAG");
  a.lag = kMaxLag + 1;
  ExpectRejected(AdversarialPlan(a), "BATON_MAX_LAG");
}

// At the limits the plan runs, and gives relu(x) on every queue.
TEST(Adversarial, LargestStageAndLagRunCorrectly) {
  Adversarial a;
  a.stage = kMaxStage;
  a.lag = kMaxLag;
  a.queues = 5;
  const AlignedPlan plan = AdversarialPlan(a);
  PlanView view;
  LoadError error;
  ASSERT_TRUE(PlanView::Load(plan.data(), plan.size(), &view, &error).ok()) << error.text;
  linux_port::Arenas arenas(view);
  InlinePort port;
  Executor executor;
  ASSERT_TRUE(executor.Init(view, ReferenceRegistry(), &port, arenas.buffers()).ok());
  for (int inference = 0; inference < 3; ++inference) {
    const float x[4] = {-1.0f, 2.0f + inference, -3.0f, 4.0f};
    float y[5][4] = {};
    const ConstBuffer in{x, sizeof(x)};
    Buffer out[5];
    for (int q = 0; q < 5; ++q) out[q] = Buffer{y[q], sizeof(y[q])};
    ASSERT_TRUE(executor.Invoke(Span<const ConstBuffer>(&in, 1), Span<const Buffer>(out, 5)).ok());
    for (int q = 0; q < 5; ++q) {
      EXPECT_EQ(y[q][0], 0.0f);
      EXPECT_EQ(y[q][1], 2.0f + inference);
      EXPECT_EQ(y[q][2], 0.0f);
      EXPECT_EQ(y[q][3], 4.0f);
    }
  }
}

TEST(Adversarial, OutputAliasingAnInputIsRejected) {
  Adversarial a;
  a.y_offset = 0;  // y on top of x
  ExpectRejected(AdversarialPlan(a), "overlaps");
  // The same tensor as input and output.
  PlanBuilder b;
  const uint32_t dram = b.Domain("dram", 64);
  const uint32_t cpu = b.Queue("cpu0", DeviceKind::Cpu, {dram});
  const uint32_t x = b.Arena("x", {8}, dram, 0);
  b.Node("relu", Op::Relu, cpu, {static_cast<int32_t>(x)}, {x});
  b.Inputs({x});
  b.Outputs({x});
  ExpectRejected(b.Finish(), "overlaps");
  PlanBuilder c;
  const uint32_t dram_c = c.Domain("dram", 64);
  const uint32_t cpu_c = c.Queue("cpu0", DeviceKind::Cpu, {dram_c});
  const uint32_t xc = c.Arena("x", {8}, dram_c, 0);
  const uint32_t yc = c.Arena("y", {4}, dram_c, 16);  // inside x's second half
  c.Node("identity", Op::Identity, cpu_c, {static_cast<int32_t>(xc)}, {yc});
  c.Inputs({xc});
  c.Outputs({yc});
  ExpectRejected(c.Finish(), "overlaps");
}

// Split whose second output overlaps its input (the overlapping memcpy of the
// audit), and one whose two outputs overlap each other.
TEST(Adversarial, SplitWithOverlappingTensorsIsRejected) {
  for (uint64_t second : {uint64_t{0}, uint64_t{32}}) {
    PlanBuilder b;
    const uint32_t dram = b.Domain("dram", 64);
    const uint32_t cpu = b.Queue("cpu0", DeviceKind::Cpu, {dram});
    const uint32_t x = b.Arena("x", {8}, dram, 0);
    const uint32_t y0 = b.Arena("y0", {4}, dram, 32);
    const uint32_t y1 = b.Arena("y1", {4}, dram, second);
    auto params = schema::CreateAxisParams(b.fbb(), 0).Union();
    b.Node("split", Op::Split, cpu, {static_cast<int32_t>(x)}, {y0, y1}, {}, 0,
           schema::Params::AxisParams, params);
    b.Inputs({x});
    b.Outputs({y0, y1});
    ExpectRejected(b.Finish(), "overlaps");
  }
}

// A Relu over multi-slot tensors x (xs slots, stride 16) and y (ys slots,
// stride 16, at y_offset), D = max(xs, ys): inference i uses slot i mod S of
// each, so x and y may share bytes in slots no inference uses together.
AlignedPlan SlottedRelu(uint32_t xs, uint32_t ys, uint64_t y_offset, uint32_t in_flight = 0) {
  PlanBuilder b;
  b.InFlight(in_flight != 0 ? in_flight : std::max(xs, ys));
  const uint32_t dram = b.Domain("dram", 1024);
  const uint32_t cpu = b.Queue("cpu0", DeviceKind::Cpu, {dram});
  const uint32_t x = b.Arena("x", {4}, dram, 0, xs, 16);
  const uint32_t y = b.Arena("y", {4}, dram, y_offset, ys, 16);
  b.Node("relu", Op::Relu, cpu, {static_cast<int32_t>(x)}, {y});
  b.Inputs({x});
  b.Outputs({y});
  return b.Finish();
}

// Slot s of x (xs slots) and slot r of y (ys slots) meet at some inference
// exactly when s = r mod gcd(xs, ys) (Chinese remainder theorem): the cases
// below are worked out by hand from that.
TEST(Loader, MultiSlotTensorsOfOneNodeMayShareBytesInSlotsNoInferenceUsesTogether) {
  // x: [0,16) [16,32); y: [16,32) [32,48). x slot 1 = y slot 0: inference i
  // uses both only if i = 1 mod 2 and i = 0 mod 2.
  std::string text;
  EXPECT_TRUE(Load(SlottedRelu(2, 2, 16), &text).ok()) << text;
  // x: [0,16) [16,32); y: [16,32) [32,48) [48,64) [64,80). x slot 1 = y
  // slot 0 (i odd and i = 0 mod 4: never); x slot 1 and y slot 2 are apart.
  EXPECT_TRUE(Load(SlottedRelu(2, 4, 16), &text).ok()) << text;
  // y: [32,48) [48,64) [64,80) [80,96) with x: [0,16) [16,32): apart.
  EXPECT_TRUE(Load(SlottedRelu(2, 4, 32), &text).ok()) << text;
}

TEST(Loader, MultiSlotTensorsOfOneNodeCollidingAtSomeInferenceAreRejected) {
  // x slot 1 = y slot 0 with 2 and 3 slots: inference 3 uses both.
  ExpectRejected(SlottedRelu(2, 3, 16), "overlaps");
  // x: [0,16) [16,32); y (4 slots, stride 16) at 0: y slot 1 = x slot 1 at
  // inference 1.
  ExpectRejected(SlottedRelu(2, 4, 0), "overlaps");
  // Same slot count, same lane: inference 0 (and every one).
  ExpectRejected(SlottedRelu(2, 2, 0), "overlaps");
  // x: 4 slots [0,16) .. [48,64); y: 3 slots at 16. x slot 1 = y slot 0
  // first meet at inference 9 (i = 1 mod 4, i = 0 mod 3).
  ExpectRejected(SlottedRelu(4, 3, 16), "overlaps");
}

// Slot counts are bounded by BATON_MAX_IN_FLIGHT (which bounds the overlap
// check's work), not by the plan's depth: extra slots are only wasteful.
TEST(Loader, SlotCountsAreBoundedByBatonMaxInFlight) {
  std::string text;
  EXPECT_TRUE(Load(SlottedRelu(2, 4, 32, /*in_flight=*/1), &text).ok()) << text;
  EXPECT_FALSE(Load(SlottedRelu(2, kMaxInFlight + 1, 32, /*in_flight=*/1), &text).ok());
  EXPECT_NE(text.find("tensor 1: slots: 0 or > BATON_MAX_IN_FLIGHT"), std::string::npos) << text;
  EXPECT_TRUE(Load(SlottedRelu(2, kMaxInFlight, 32, /*in_flight=*/1), &text).ok()) << text;
}

// Two Relus on two queues; `extra` (queue, node) entries appended to the
// programs.
AlignedPlan TwoQueues(const std::vector<std::pair<uint32_t, uint32_t>>& extra) {
  PlanBuilder b;
  const uint32_t dram = b.Domain("dram", 64);
  const uint32_t q0 = b.Queue("cpu0", DeviceKind::Cpu, {dram});
  const uint32_t q1 = b.Queue("cpu1", DeviceKind::Cpu, {dram});
  const uint32_t x = b.Arena("x", {4}, dram, 0);
  const uint32_t y = b.Arena("y", {4}, dram, 16);
  const uint32_t z = b.Arena("z", {4}, dram, 32);
  b.Node("relu0", Op::Relu, q0, {static_cast<int32_t>(x)}, {y});
  b.Node("relu1", Op::Relu, q1, {static_cast<int32_t>(y)}, {z}, {{0, 0}});
  for (const auto& [queue, node] : extra) b.ProgramEntry(queue, node);
  b.Inputs({x});
  b.Outputs({z});
  return b.Finish();
}

// Every program entry must be a node of that queue, listed once.
TEST(Loader, RejectsForeignRepeatedOrUnknownProgramEntries) {
  std::string text;
  ASSERT_TRUE(Load(TwoQueues({}), &text).ok()) << text;
  ExpectRejected(TwoQueues({{0, 1}}), "!= node count");           // relu1 also on cpu0
  ExpectRejected(TwoQueues({{0, 2}}), "!= node count");           // no node 2
  ExpectRejected(TwoQueues({{1, UINT32_MAX}}), "!= node count");  // no such node
  ExpectRejected(TwoQueues({{0, 0}}), "not increasing");          // relu0 twice
}

// A [long] vector whose elements sit at 4 mod 8: built by hand, since the
// builder aligns 8-byte elements. FlatBuffers' verifier accepts it.
flatbuffers::Offset<flatbuffers::Vector<int64_t>> MisalignedLongs(flatbuffers::FlatBufferBuilder& fbb,
                                                                 const std::vector<int64_t>& v) {
  fbb.StartVector(2 * v.size(), sizeof(uint32_t));
  // The buffer's total size is a multiple of 8, so the data start is at
  // 4 mod 8 from the front when it is at 4 mod 8 from the back.
  if ((fbb.GetSize() + 8 * v.size()) % 8 == 0) fbb.PushElement<uint32_t>(0);
  for (size_t i = v.size(); i-- > 0;) {
    const uint64_t u = static_cast<uint64_t>(v[i]);
    fbb.PushElement(static_cast<uint32_t>(u >> 32));
    fbb.PushElement(static_cast<uint32_t>(u));
  }
  return flatbuffers::Offset<flatbuffers::Vector<int64_t>>(fbb.EndVector(v.size()));
}

TEST(Adversarial, MisalignedShapeIsRejected) {
  PlanBuilder b;
  const uint32_t dram = b.Domain("dram", 64);
  const uint32_t cpu = b.Queue("cpu0", DeviceKind::Cpu, {dram});
  const uint32_t x = b.Arena("x", {4}, dram, 0);
  auto shape = MisalignedLongs(b.fbb(), {4});
  auto name = b.fbb().CreateString("y");
  const uint32_t y = b.AddTensor(schema::CreateTensor(b.fbb(), name, schema::DType::Float32, shape,
                                                      16, schema::Storage::Arena, dram, 16, 1, 0));
  b.Node("relu", Op::Relu, cpu, {static_cast<int32_t>(x)}, {y});
  b.Inputs({x});
  b.Outputs({y});
  const AlignedPlan plan = b.Finish();
  const auto* data = schema::GetPlan(plan.data())->tensors()->Get(y)->shape()->data();
  ASSERT_EQ(reinterpret_cast<uintptr_t>(data) % 8, 4u) << "the test did not misalign the shape";
  ExpectRejected(plan, "misaligned [long] vector");
}

// Slice parameters at 4 mod 8 are read with memcpy: the plan runs correctly.
TEST(Adversarial, MisalignedSliceParamsRunCorrectly) {
  PlanBuilder b;
  const uint32_t dram = b.Domain("dram", 64);
  const uint32_t cpu = b.Queue("cpu0", DeviceKind::Cpu, {dram});
  const uint32_t x = b.Arena("x", {6}, dram, 0);
  const uint32_t y = b.Arena("y", {2}, dram, 32);
  auto starts = MisalignedLongs(b.fbb(), {1});
  auto ends = MisalignedLongs(b.fbb(), {5});
  auto steps = MisalignedLongs(b.fbb(), {3});
  auto params = schema::CreateSliceParams(b.fbb(), starts, ends, 0, steps).Union();
  b.Node("slice", Op::Slice, cpu, {static_cast<int32_t>(x)}, {y}, {}, 0,
         schema::Params::SliceParams, params);
  b.Inputs({x});
  b.Outputs({y});
  const AlignedPlan plan = b.Finish();
  const schema::SliceParams* p = schema::GetPlan(plan.data())->nodes()->Get(0)->params_as_SliceParams();
  ASSERT_EQ(reinterpret_cast<uintptr_t>(p->starts()->data()) % 8, 4u);
  ASSERT_EQ(reinterpret_cast<uintptr_t>(p->steps()->data()) % 8, 4u);
  PlanView view;
  LoadError error;
  ASSERT_TRUE(PlanView::Load(plan.data(), plan.size(), &view, &error).ok()) << error.text;
  linux_port::Arenas arenas(view);
  InlinePort port;
  Executor executor;
  ASSERT_TRUE(executor.Init(view, ReferenceRegistry(), &port, arenas.buffers(), &error).ok())
      << error.text;
  const float in[6] = {10, 11, 12, 13, 14, 15};
  float out[2] = {};
  const ConstBuffer ib{in, sizeof(in)};
  const Buffer ob{out, sizeof(out)};
  ASSERT_TRUE(executor.Invoke(Span<const ConstBuffer>(&ib, 1), Span<const Buffer>(&ob, 1)).ok());
  EXPECT_EQ(out[0], 11.0f);  // x[1], x[4]: start 1, step 3, end 5
  EXPECT_EQ(out[1], 14.0f);
}

// Zero-element tensors in a domain of 0 bytes, given no memory at all: the
// executor never hands memcpy or a kernel a null pointer (UBSan checks).
TEST(Adversarial, ZeroElementTensorsWithoutArenaRun) {
  PlanBuilder b;
  const uint32_t empty = b.Domain("empty", 0);
  const uint32_t cpu = b.Queue("cpu0", DeviceKind::Cpu, {empty});
  const uint32_t x = b.Arena("x", {0, 3}, empty, 0);
  const uint32_t y = b.Arena("y", {0, 3}, empty, 0);
  b.Node("copy", Op::Identity, cpu, {static_cast<int32_t>(x)}, {y});
  b.Inputs({x});
  b.Outputs({y});
  const AlignedPlan plan = b.Finish();
  PlanView view;
  LoadError error;
  ASSERT_TRUE(PlanView::Load(plan.data(), plan.size(), &view, &error).ok()) << error.text;
  const Buffer arena{nullptr, 0};
  InlinePort port;
  Executor executor;
  ASSERT_TRUE(executor.Init(view, ReferenceRegistry(), &port, Span<const Buffer>(&arena, 1), &error).ok())
      << error.text;
  const ConstBuffer in{nullptr, 0};
  const Buffer out{nullptr, 0};
  EXPECT_TRUE(executor.Invoke(Span<const ConstBuffer>(&in, 1), Span<const Buffer>(&out, 1)).ok());
  EXPECT_NE(executor.TensorData(y, 0), nullptr);
}

// Every limit of config.h is enforced with a message naming it (the other
// limits have their own tests above and in the executor tests).
TEST(Adversarial, TooManyGraphInputsNameTheLimit) {
  PlanBuilder b;
  const uint32_t dram = b.Domain("dram", 16 * (kMaxInputs + 2));
  const uint32_t cpu = b.Queue("cpu0", DeviceKind::Cpu, {dram});
  std::vector<uint32_t> inputs;
  for (uint32_t i = 0; i <= kMaxInputs; ++i) inputs.push_back(b.Arena("x", {4}, dram, 16 * i));
  const uint32_t y = b.Arena("y", {4}, dram, 16 * (kMaxInputs + 1));
  b.Node("relu", Op::Relu, cpu, {static_cast<int32_t>(inputs[0])}, {y});
  b.Inputs(inputs);
  b.Outputs({y});
  ExpectRejected(b.Finish(), "BATON_MAX_INPUTS");
}

}  // namespace
}  // namespace baton::testing
