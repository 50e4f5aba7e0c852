// The executor's async pipeline API (DESIGN §4): Busy, NotReady, order,
// failures that do not poison later inferences, and pipelined results that
// are bit-identical to one-at-a-time execution.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>

#include "common/test_util.h"

namespace baton::test {
namespace {

const std::vector<std::string> kSoc4Rules = {"Conv=npu0", "Sigmoid=gpu0", "MaxPool=gpu0",
                                             "Gemm=dsp0", "Softmax=dsp0"};

std::vector<Tensors> RandomInputs(const PlanView& view, int count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<Tensors> all;
  for (int k = 0; k < count; ++k) {
    Tensors in;
    for (uint32_t i = 0; i < view.num_inputs(); ++i) {
      std::vector<float> v(view.input(i)->bytes() / 4);
      for (float& x : v) x = normal(rng);
      std::vector<uint8_t> bytes(v.size() * 4);
      std::memcpy(bytes.data(), v.data(), bytes.size());
      in.push_back(bytes);
    }
    all.push_back(in);
  }
  return all;
}

TEST(Executor, CooperativeAsyncApi) {
  std::string bytes = PlanBytes(PlanSpec(GraphPath("tiny_cnn"), "soc4", kSoc4Rules, {}, 2));
  linux_port::Options options;
  options.threaded = false;  // nothing runs until Wait drives the queues
  Runner r(bytes, options);
  ASSERT_TRUE(r.ok());
  Executor& e = r.executor();
  auto inputs = RandomInputs(r.view(), 3, 1);
  Tensors out = r.OutputBuffers();
  std::vector<Buffer> outb = {{out[0].data(), out[0].size()}};

  EXPECT_EQ(e.GetOutputs({outb.data(), 1}).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(e.Run().code(), StatusCode::kFailedPrecondition);  // input not set
  ASSERT_TRUE(e.SetInput(0, inputs[0][0].data(), inputs[0][0].size()).ok());
  EXPECT_EQ(e.SetInput(0, inputs[0][0].data(), 3).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(e.Run().ok());
  ASSERT_TRUE(e.SetInput(0, inputs[1][0].data(), inputs[1][0].size()).ok());
  ASSERT_TRUE(e.Run().ok());
  EXPECT_EQ(e.SetInput(0, inputs[2][0].data(), inputs[2][0].size()).code(), StatusCode::kBusy);
  EXPECT_EQ(e.GetOutputs({outb.data(), 1}).code(), StatusCode::kNotReady);
  EXPECT_EQ(e.in_flight(), 2u);

  // Reference: each input alone on the single-CPU plan.
  Runner cpu(PlanBytes(PlanSpec(GraphPath("tiny_cnn"))));
  Tensors expect0, expect1;
  ASSERT_TRUE(cpu.Invoke(inputs[0], &expect0).ok());
  ASSERT_TRUE(cpu.Invoke(inputs[1], &expect1).ok());

  ASSERT_TRUE(e.Wait().ok());
  ASSERT_TRUE(e.GetOutputs({outb.data(), 1}).ok());
  EXPECT_EQ(out[0], expect0[0]);  // submission order
  ASSERT_TRUE(e.Wait().ok());
  ASSERT_TRUE(e.GetOutputs({outb.data(), 1}).ok());
  EXPECT_EQ(out[0], expect1[0]);
  EXPECT_EQ(e.Wait().code(), StatusCode::kFailedPrecondition);
  // A new stream after the flush the last Wait needed.
  ASSERT_TRUE(e.SetInput(0, inputs[0][0].data(), inputs[0][0].size()).ok());
  ASSERT_TRUE(e.Run().ok());
  ASSERT_TRUE(e.Wait().ok());
  ASSERT_TRUE(e.GetOutputs({outb.data(), 1}).ok());
  EXPECT_EQ(out[0], expect0[0]);
}

// A failing node fails its inference only; the queues keep going.
TEST(Executor, FailureIsContainedToItsInference) {
  for (bool threaded : {false, true}) {
    SCOPED_TRACE(threaded ? "threads" : "cooperative");
    std::string bytes = PlanBytes(PlanSpec(GraphPath("tiny_cnn"), "soc4", kSoc4Rules, {}, 3));
    std::atomic<int> pw_calls{0};
    linux_port::Options options;
    options.threaded = threaded;
    options.fail_node = [&](uint32_t, const schema::Node* node) {
      // Fail the 4th execution of the pointwise conv (inference 3).
      if (node->name()->str() == "pw" && pw_calls.fetch_add(1) == 3) {
        return BATON_ERROR(kInternal, "injected device fault");
      }
      return Status::Ok();
    };
    Runner r(bytes, options);
    ASSERT_TRUE(r.ok());
    auto inputs = RandomInputs(r.view(), 8, 2);
    std::vector<Tensors> results;
    std::vector<StatusCode> statuses;
    r.Stream(inputs, &results, &statuses);
    ASSERT_EQ(statuses.size(), 8u);
    Runner cpu(PlanBytes(PlanSpec(GraphPath("tiny_cnn"))));
    for (int k = 0; k < 8; ++k) {
      if (k == 3) {
        EXPECT_EQ(statuses[k], StatusCode::kInternal);
        continue;
      }
      ASSERT_EQ(statuses[k], StatusCode::kOk) << k;
      Tensors expect;
      ASSERT_TRUE(cpu.Invoke(inputs[k], &expect).ok());
      EXPECT_EQ(results[k][0], expect[0]) << "inference " << k;
    }
  }
}

// The simulated accelerators may only touch their own domains.
TEST(Executor, DomainViolationFailsTheNode) {
  std::string bytes = PlanBytes(PlanSpec(GraphPath("residual"), "soc4", {"Conv=npu0"}));
  linux_port::AlignedBytes aligned(bytes.data(), bytes.size());
  PlanView view;
  ASSERT_TRUE(PlanView::Load(aligned.data(), aligned.size(), &view).ok());
  linux_port::Arenas arenas(view);
  // Hand the port a view where the NPU's SRAM lives somewhere else: every
  // NPU node then touches memory outside its domains.
  std::vector<Buffer> lying(arenas.buffers().begin(), arenas.buffers().end());
  std::vector<uint8_t> elsewhere(1024);
  for (uint32_t d = 0; d < view.num_domains(); ++d) {
    if (view.domain(d)->name()->str() == "npu_sram") lying[d] = {elsewhere.data(), elsewhere.size()};
  }
  linux_port::Options options;
  options.threaded = false;
  linux_port::LinuxPort port(view, {lying.data(), lying.size()}, options);
  KernelRegistry registry;
  ASSERT_TRUE(RegisterReferenceKernels(&registry).ok());
  auto executor = std::make_unique<Executor>();
  ASSERT_TRUE(executor->Init(view, registry, &port, arenas.buffers()).ok());
  auto in = LoadNpyBytes(GraphDir() + "/residual.x.npy");
  std::vector<uint8_t> out(view.output(0)->bytes());
  ConstBuffer ib{in.data(), in.size()};
  Buffer ob{out.data(), out.size()};
  EXPECT_EQ(executor->Invoke({&ib, 1}, {&ob, 1}).code(), StatusCode::kFailedPrecondition);
}

// >= 1,000 pipelined inferences on one thread per queue with random delays
// give bit-identical results to one-at-a-time (D = 1) execution. CI also
// runs this under ThreadSanitizer.
TEST(Executor, PipelinedStressMatchesSerial) {
  const int kCount = 1000;
  // m2_add fuses into m1_conv (its sum) and m2_sig into m2_conv (issue 17),
  // so the last stage starts at m2_conv.
  const std::vector<std::string> rules = {"@m0_conv=npu0", "@m1_conv=gpu0", "@m2_conv=dsp0"};
  std::string serial = PlanBytes(PlanSpec(GraphPath("pipeline_topology"), "soc4", rules));
  // Three stages across three devices, three in flight.
  std::string piped = PlanBytes(
      PlanSpec(GraphPath("pipeline_topology"), "soc4", rules, {"m1_add", "m2_conv"}, 3));
  ASSERT_FALSE(piped.empty());
  Runner one(serial);
  ASSERT_TRUE(one.ok());
  auto inputs = RandomInputs(one.view(), kCount, 3);
  std::vector<Tensors> expected;
  std::vector<StatusCode> s1;
  one.Stream(inputs, &expected, &s1);

  linux_port::Options options;
  options.before_node = [](uint32_t queue, const schema::Node*) {
    thread_local std::mt19937 rng(queue * 7919u + 1);
    if (rng() % 4 == 0) std::this_thread::sleep_for(std::chrono::microseconds(rng() % 50));
  };
  Runner r(piped, options);
  ASSERT_TRUE(r.ok());
  std::vector<Tensors> results;
  std::vector<StatusCode> statuses;
  r.Stream(inputs, &results, &statuses);
  ASSERT_EQ(results.size(), static_cast<size_t>(kCount));
  for (int k = 0; k < kCount; ++k) {
    ASSERT_EQ(statuses[k], StatusCode::kOk);
    EXPECT_EQ(AsFloats(results[k][0]), AsFloats(expected[k][0])) << "inference " << k;
  }
}

}  // namespace
}  // namespace baton::test
