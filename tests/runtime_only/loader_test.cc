// PlanView::Load on valid and broken hand-built plans: every bad plan gets an
// error status and a message, never a crash.

#include <gtest/gtest.h>

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
  // Every single-byte corruption either loads (then must also run) or is
  // rejected; nothing crashes. A small, deterministic fuzz.
  const AlignedPlan plan = SmallPlan();
  uint32_t loaded = 0;
  for (size_t i = 0; i < plan.size(); ++i) {
    for (uint8_t flip : {0x01, 0x80, 0xff}) {
      AlignedPlan copy(plan.data(), plan.size());
      copy.mutable_data()[i] ^= flip;
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

}  // namespace
}  // namespace baton::testing
