// PlanView::Load and Executor::Init on good and bad plans: every bad plan
// must give an error status and a message, never a crash.

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "common/test_util.h"

namespace baton::test {
namespace {

std::string GoodPlan() {
  static const std::string bytes = PlanBytes(PlanSpec(GraphPath("tiny_cnn"), "soc4",
                                                      {"Conv=npu0", "Gemm=dsp0", "Sigmoid=gpu0"}));
  return bytes;
}

Status Load(const std::string& bytes, LoadError* error, PlanView* view = nullptr) {
  linux_port::AlignedBytes aligned(bytes.data(), bytes.size());
  PlanView local;
  return PlanView::Load(aligned.data(), aligned.size(), view ? view : &local, error);
}

TEST(Loader, AcceptsPlannerOutput) {
  LoadError error;
  Status s = Load(GoodPlan(), &error);
  EXPECT_TRUE(s.ok()) << error.text;
}

TEST(Loader, RejectsWrongIdentifier) {
  std::string bytes = GoodPlan();
  std::memcpy(&bytes[4], "XXXX", 4);
  LoadError error;
  Status s = Load(bytes, &error);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(std::string(error.text).find("identifier"), std::string::npos) << error.text;
}

TEST(Loader, RejectsEveryTruncation) {
  const std::string bytes = GoodPlan();
  for (size_t n = 0; n < bytes.size(); n += 1 + n / 64) {
    LoadError error;
    Status s = Load(bytes.substr(0, n), &error);
    EXPECT_FALSE(s.ok()) << "accepted a plan truncated to " << n << " bytes";
    EXPECT_GT(std::strlen(error.text), 0u);
  }
}

TEST(Loader, RejectsMisalignedBuffer) {
  const std::string bytes = GoodPlan();
  linux_port::AlignedBytes aligned(bytes.data(), bytes.size() + 1);
  std::vector<uint8_t> shifted(bytes.size() + 64);
  uint8_t* p = shifted.data() + (16 - reinterpret_cast<uintptr_t>(shifted.data()) % 16) % 16 + 1;
  std::memcpy(p, bytes.data(), bytes.size());
  PlanView view;
  EXPECT_EQ(PlanView::Load(p, bytes.size(), &view).code(), StatusCode::kFailedPrecondition);
}

// Flip bytes all over the plan and recompute the checksum. Either the loader
// (or kernel preparation) rejects it, or it is a plan that runs: both without
// crashing (ASan and UBSan builds make this strict).
TEST(Loader, SurvivesFlippedBytes) {
  const std::string good = GoodPlan();
  std::mt19937 rng(7);
  const Tensors inputs = {LoadNpyBytes(GraphDir() + "/tiny_cnn.x.npy")};
  int rejected = 0, ran = 0;
  for (int trial = 0; trial < 600; ++trial) {
    std::string bytes = good;
    const int flips = 1 + static_cast<int>(rng() % 3);
    for (int f = 0; f < flips; ++f) {
      bytes[rng() % (bytes.size() - kPlanTrailerBytes)] ^= static_cast<char>(1u << (rng() % 8));
    }
    ResealPlan(&bytes);  // past the checksum, into the semantic checks
    linux_port::AlignedBytes aligned(bytes.data(), bytes.size());
    PlanView view;
    LoadError error;
    if (!PlanView::Load(aligned.data(), aligned.size(), &view, &error).ok()) {
      ++rejected;
      EXPECT_GT(std::strlen(error.text), 0u);
      continue;
    }
    linux_port::Arenas arenas(view);
    if (!arenas.ok()) {
      ++rejected;  // a flipped domain size asks for more memory than exists
      continue;
    }
    linux_port::Options options;
    options.threaded = false;
    linux_port::LinuxPort port(view, arenas.buffers(), options);
    KernelRegistry registry;
    ASSERT_TRUE(RegisterReferenceKernels(&registry).ok());
    auto executor = std::make_unique<Executor>();
    if (!executor->Init(view, registry, &port, arenas.buffers(), &error).ok()) {
      ++rejected;
      continue;
    }
    std::vector<ConstBuffer> in;
    if (view.num_inputs() != 1 || view.input(0)->bytes() != inputs[0].size()) {
      ++rejected;
      continue;
    }
    in.push_back({inputs[0].data(), inputs[0].size()});
    std::vector<std::vector<uint8_t>> out(view.num_outputs());
    std::vector<Buffer> outb;
    for (uint32_t o = 0; o < view.num_outputs(); ++o) {
      out[o].resize(view.output(o)->bytes());
      outb.push_back({out[o].data(), out[o].size()});
    }
    executor->Invoke({in.data(), in.size()}, {outb.data(), outb.size()}).IgnoreError();
    ++ran;
  }
  EXPECT_GT(rejected, 0);
  EXPECT_GT(ran, 0);  // flips in weights give valid plans that still run
}

TEST(Loader, RejectsWrongVersion) {
  // The version field is the first scalar of the root table; find it by
  // re-encoding: flip it through the generated accessor's offset.
  std::string bytes = GoodPlan();
  const auto* table = reinterpret_cast<const flatbuffers::Table*>(schema::GetPlan(bytes.data()));
  const flatbuffers::voffset_t offset = table->GetOptionalFieldOffset(schema::Plan::VT_VERSION);
  ASSERT_NE(offset, 0);
  const uint8_t* field = reinterpret_cast<const uint8_t*>(table) + offset;
  const size_t at = static_cast<size_t>(field - reinterpret_cast<const uint8_t*>(bytes.data()));
  uint32_t version = 99;
  std::memcpy(&bytes[at], &version, 4);
  ResealPlan(&bytes);
  LoadError error;
  EXPECT_EQ(Load(bytes, &error).code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(std::string(error.text).find("version"), std::string::npos) << error.text;
}

// Hand-built plans with one bad index each.
class BadIndex : public ::testing::Test {
 protected:
  // One CPU queue, one dram domain of 256 bytes, x[4] -> Relu -> y[4].
  std::string Build(int input_index, uint32_t out_domain, uint32_t wait_node, uint64_t offset,
                    uint32_t queue) {
    flatbuffers::FlatBufferBuilder b;
    std::vector<flatbuffers::Offset<schema::Domain>> domains = {
        schema::CreateDomainDirect(b, "dram", 256, 16)};
    std::vector<uint32_t> qd = {0}, program = {0};
    std::vector<flatbuffers::Offset<schema::Queue>> queues = {
        schema::CreateQueueDirect(b, "cpu0", schema::DeviceKind::Cpu, &qd, &program)};
    std::vector<int64_t> shape = {4};
    std::vector<flatbuffers::Offset<schema::Tensor>> tensors = {
        schema::CreateTensorDirect(b, "x", schema::DType::Float32, &shape, 16, schema::Storage::Arena, 0, 0, 1, 0),
        schema::CreateTensorDirect(b, "y", schema::DType::Float32, &shape, 16, schema::Storage::Arena,
                                   out_domain, offset, 1, 0)};
    std::vector<int32_t> inputs = {input_index};
    std::vector<uint32_t> outputs = {1};
    std::vector<schema::Wait> waits;
    if (wait_node != UINT32_MAX) waits.emplace_back(wait_node, 1);
    std::vector<flatbuffers::Offset<schema::Node>> nodes = {schema::CreateNodeDirect(
        b, "relu", schema::Op::Relu, queue, 0, 0, &inputs, &outputs, nullptr, &waits)};
    std::vector<uint32_t> gin = {0}, gout = {1};
    auto plan = schema::CreatePlanDirect(b, kPlanFormatVersion, "bad", 1, &domains, &queues, &tensors,
                                         &nodes, &gin, &gout);
    schema::FinishPlanBuffer(b, plan);
    std::string bytes(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
    AppendPlanTrailer(&bytes);
    return bytes;
  }
};

TEST_F(BadIndex, ValidHandBuiltPlanRuns) {
  std::string bytes = Build(0, 0, UINT32_MAX, 64, 0);
  Runner runner(bytes);
  ASSERT_TRUE(runner.ok());
  std::vector<float> x = {-1, 2, -3, 4};
  Tensors in = {std::vector<uint8_t>(16)}, out;
  std::memcpy(in[0].data(), x.data(), 16);
  ASSERT_TRUE(runner.Invoke(in, &out).ok());
  EXPECT_EQ(AsFloats(out[0]), (std::vector<float>{0, 2, 0, 4}));
}

TEST_F(BadIndex, TensorIndexOutOfRange) {
  LoadError e;
  EXPECT_EQ(Load(Build(7, 0, UINT32_MAX, 64, 0), &e).code(), StatusCode::kOutOfRange);
  EXPECT_NE(std::string(e.text).find("node 0"), std::string::npos) << e.text;
}

TEST_F(BadIndex, DomainIndexOutOfRange) {
  LoadError e;
  EXPECT_EQ(Load(Build(0, 3, UINT32_MAX, 64, 0), &e).code(), StatusCode::kOutOfRange);
  EXPECT_NE(std::string(e.text).find("tensor 1"), std::string::npos) << e.text;
}

TEST_F(BadIndex, OffsetPastArena) {
  LoadError e;
  EXPECT_EQ(Load(Build(0, 0, UINT32_MAX, 256, 0), &e).code(), StatusCode::kOutOfRange);
}

TEST_F(BadIndex, WaitNodeOutOfRange) {
  LoadError e;
  EXPECT_EQ(Load(Build(0, 0, 5, 64, 0), &e).code(), StatusCode::kOutOfRange);
}

TEST_F(BadIndex, QueueIndexOutOfRange) {
  LoadError e;
  // The node names queue 2 of 1 (queue 0's program lists it too: programs are
  // checked by counting once every node found itself at its position).
  EXPECT_EQ(Load(Build(0, 0, UINT32_MAX, 64, 2), &e).code(), StatusCode::kOutOfRange);
  EXPECT_NE(std::string(e.text).find("node 0: bad queue index"), std::string::npos) << e.text;
}

TEST(Executor, RejectsSmallOrMisalignedArena) {
  std::string bytes = GoodPlan();
  linux_port::AlignedBytes aligned(bytes.data(), bytes.size());
  PlanView view;
  ASSERT_TRUE(PlanView::Load(aligned.data(), aligned.size(), &view).ok());
  linux_port::Arenas arenas(view);
  std::vector<Buffer> buffers(arenas.buffers().begin(), arenas.buffers().end());
  KernelRegistry registry;
  ASSERT_TRUE(RegisterReferenceKernels(&registry).ok());
  InlinePort port;
  auto executor = std::make_unique<Executor>();
  buffers[0].bytes -= 1;
  EXPECT_EQ(executor->Init(view, registry, &port, {buffers.data(), buffers.size()}).code(),
            StatusCode::kResourceExhausted);
  buffers[0].bytes += 1;
  buffers[0].data = static_cast<uint8_t*>(buffers[0].data) + 8;
  EXPECT_EQ(executor->Init(view, registry, &port, {buffers.data(), buffers.size()}).code(),
            StatusCode::kFailedPrecondition);
}

TEST(Executor, RejectsMissingKernel) {
  std::string bytes = GoodPlan();
  linux_port::AlignedBytes aligned(bytes.data(), bytes.size());
  PlanView view;
  ASSERT_TRUE(PlanView::Load(aligned.data(), aligned.size(), &view).ok());
  linux_port::Arenas arenas(view);
  KernelRegistry empty;
  InlinePort port;
  auto executor = std::make_unique<Executor>();
  LoadError error;
  EXPECT_EQ(executor->Init(view, empty, &port, arenas.buffers(), &error).code(), StatusCode::kUnimplemented);
  EXPECT_NE(std::string(error.text).find("no kernel"), std::string::npos);
}

}  // namespace
}  // namespace baton::test
