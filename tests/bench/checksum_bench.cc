// google-benchmark for the plan checksum (docs/execution.md, "Trust model").
//   Crc32c/<bytes>:    baton::Crc32c (the runtime's 16-entry-table CRC-32C)
//   Crc32cBitwise/<b>: the table-free bitwise loop, for comparison
//   Load/<bytes>:      PlanView::Load of a plan whose constant section makes it
//                      <bytes> long: the CRC plus the verifier and checks
// Throughput is reported as bytes/s. Run:
//   build/tests/baton_checksum_bench

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "baton/checksum.h"
#include "baton/plan_view.h"
#include "flatbuffers/flatbuffers.h"

namespace {

std::vector<uint8_t> Bytes(size_t n) {
  std::vector<uint8_t> v(n);
  uint32_t x = 12345;
  for (auto& b : v) {
    x = x * 1664525u + 1013904223u;
    b = static_cast<uint8_t>(x >> 24);
  }
  return v;
}

void BM_Crc32c(benchmark::State& state) {
  const std::vector<uint8_t> data = Bytes(static_cast<size_t>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(baton::Crc32c(data.data(), data.size()));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_Crc32c)->Arg(4096)->Arg(1 << 20)->Arg(16 << 20);

uint32_t Bitwise(const uint8_t* p, size_t n) {
  uint32_t crc = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) {
    crc ^= p[i];
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
  }
  return ~crc;
}

void BM_Crc32cBitwise(benchmark::State& state) {
  const std::vector<uint8_t> data = Bytes(static_cast<size_t>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(Bitwise(data.data(), data.size()));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_Crc32cBitwise)->Arg(1 << 20);

// One CPU queue, x -> Relu -> y, and `constants` bytes of constant section.
std::vector<uint8_t> PlanOfSize(size_t constants) {
  namespace s = baton::schema;
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<s::Domain>> domains = {s::CreateDomainDirect(b, "dram", 64, 16)};
  std::vector<uint32_t> qd = {0}, program = {0};
  std::vector<flatbuffers::Offset<s::Queue>> queues = {
      s::CreateQueueDirect(b, "cpu0", s::DeviceKind::Cpu, &qd, &program)};
  std::vector<int64_t> shape = {4};
  std::vector<flatbuffers::Offset<s::Tensor>> tensors = {
      s::CreateTensorDirect(b, "x", s::DType::Float32, &shape, 16, s::Storage::Arena, 0, 0, 1, 0),
      s::CreateTensorDirect(b, "y", s::DType::Float32, &shape, 16, s::Storage::Arena, 0, 16, 1, 0)};
  std::vector<int32_t> in = {0};
  std::vector<uint32_t> out = {1};
  std::vector<flatbuffers::Offset<s::Node>> nodes = {
      s::CreateNodeDirect(b, "relu", s::Op::Relu, 0, 0, 0, &in, &out)};
  std::vector<uint32_t> gin = {0}, gout = {1};
  const std::vector<uint8_t> weights = Bytes(constants);
  b.ForceVectorAlignment(weights.size(), 1, 32);
  auto c = b.CreateVector(weights);
  auto plan = s::CreatePlan(b, baton::kPlanFormatVersion, b.CreateString("bench"), 1,
                            b.CreateVector(domains), b.CreateVector(queues), b.CreateVector(tensors),
                            b.CreateVector(nodes), b.CreateVector(gin), b.CreateVector(gout), c);
  s::FinishPlanBuffer(b, plan);
  std::vector<uint8_t> bytes(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  baton::AppendPlanTrailer(&bytes);
  return bytes;
}

void BM_Load(benchmark::State& state) {
  const std::vector<uint8_t> bytes = PlanOfSize(static_cast<size_t>(state.range(0)));
  std::vector<uint64_t> aligned((bytes.size() + 7) / 8 + 2);  // 16-byte aligned (glibc)
  std::memcpy(aligned.data(), bytes.data(), bytes.size());
  baton::PlanView view;
  for (auto _ : state) {
    if (!baton::PlanView::Load(aligned.data(), bytes.size(), &view).ok()) {
      state.SkipWithError("plan rejected");
      break;
    }
    benchmark::DoNotOptimize(view);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(bytes.size()));
}
BENCHMARK(BM_Load)->Arg(4096)->Arg(1 << 20)->Arg(16 << 20);

}  // namespace

BENCHMARK_MAIN();
