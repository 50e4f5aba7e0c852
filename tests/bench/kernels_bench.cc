// Benchmarks of the float32 reference kernels (single thread), through the
// same registry path the runtime uses (prepare once, eval per iteration).
//
//   baton_kernels_bench [--benchmark_filter=Conv]
//
// Benchmarks run with the kernels' default instruction set (the widest the
// CPU has, see KernelIsa); the */isa:NAME ones first select NAME, one per
// instruction set this build and CPU have, to compare them in one run.
//
// Conv/Gemm report GFLOP/s (2 FLOPs per multiply-accumulate). The *_Net
// benchmarks run every convolution (and the classifier) of a 224x224
// network in sequence: their time approximates the network's latency minus
// the cheap ops (pools, adds, activations that are not fused).

#include <benchmark/benchmark.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernel_test_util.h"

namespace baton {
namespace {

using schema::DType;
using testing::KernelHarness;

void Fill(KernelHarness* h, int id, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  float* p = h->F32(id);
  for (int64_t i = 0; i < h->Elements(id); ++i) p[i] = dist(rng);
}

// pad -1: "same" padding k / 2; hardswish: a fused HardSwish (1/6, 1/2).
struct ConvSpec {
  int64_t c, h, w, m, k, stride, group;
  bool relu6;
  int64_t pad = -1;
  bool hardswish = false;
  int64_t Pad() const { return pad < 0 ? k / 2 : pad; }
};

int64_t OutSize(int64_t in, int64_t k, int64_t s, int64_t p) { return (in + 2 * p - k) / s + 1; }

double ConvFlops(const ConvSpec& s) {
  const int64_t oh = OutSize(s.h, s.k, s.stride, s.Pad()),
                ow = OutSize(s.w, s.k, s.stride, s.Pad());
  return 2.0 * static_cast<double>(s.m * (s.c / s.group) * s.k * s.k * oh * ow);
}

// A prepared Conv node ("same" padding k/2, bias, optional ReLU6 clamp).
std::unique_ptr<KernelHarness> MakeConv(const ConvSpec& s, int64_t workspace_override = -1) {
  auto h = std::make_unique<KernelHarness>();
  h->OverrideWorkspace(workspace_override);
  const int64_t oh = OutSize(s.h, s.k, s.stride, s.Pad()),
                ow = OutSize(s.w, s.k, s.stride, s.Pad());
  const int x = h->AddTensor(DType::Float32, {1, s.c, s.h, s.w});
  const int w = h->AddTensor(DType::Float32, {s.m, s.c / s.group, s.k, s.k});
  const int b = h->AddTensor(DType::Float32, {s.m});
  const int y = h->AddTensor(DType::Float32, {1, s.m, oh, ow});
  Fill(h.get(), x, 1);
  Fill(h.get(), w, 2);
  Fill(h.get(), b, 3);
  const int32_t k = static_cast<int32_t>(s.k), st = static_cast<int32_t>(s.stride),
                p = static_cast<int32_t>(s.Pad()), g = static_cast<int32_t>(s.group);
  const bool relu6 = s.relu6, hardswish = s.hardswish;
  h->SetNode(
      schema::Op::Conv, {x, w, b}, {y}, schema::Params::ConvParams,
      [k, st, p, g, relu6, hardswish](flatbuffers::FlatBufferBuilder& fbb) {
        const std::vector<int32_t> kernel{k, k}, strides{st, st}, pads{p, p, p, p}, dil{1, 1};
        const schema::Clamp clamp(0.0f, 6.0f);
        return schema::CreateConvParamsDirect(
                   fbb, &kernel, &strides, &pads, &dil, g, relu6 ? &clamp : nullptr,
                   hardswish ? schema::FusedActivation::HardSwish : schema::FusedActivation::None,
                   hardswish ? 1.0f / 6.0f : 0.0f, hardswish ? 0.5f : 0.0f)
            .Union();
      });
  if (!h->Prepare().ok()) return nullptr;
  return h;
}

std::unique_ptr<KernelHarness> MakeGemm(int64_t m, int64_t n, int64_t k, bool trans_b) {
  auto h = std::make_unique<KernelHarness>();
  const int a = h->AddTensor(DType::Float32, {m, k});
  const int b = h->AddTensor(DType::Float32,
                             trans_b ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n});
  const int c = h->AddTensor(DType::Float32, {n});
  const int y = h->AddTensor(DType::Float32, {m, n});
  Fill(h.get(), a, 4);
  Fill(h.get(), b, 5);
  Fill(h.get(), c, 6);
  h->SetNode(schema::Op::Gemm, {a, b, c}, {y}, schema::Params::GemmParams,
             [trans_b](flatbuffers::FlatBufferBuilder& fbb) {
               return schema::CreateGemmParams(fbb, 1.0f, 1.0f, false, trans_b).Union();
             });
  if (!h->Prepare().ok()) return nullptr;
  return h;
}

// workspace_override 0: no workspace (a depthwise layer then takes its row
// path, as in a plan from before the phase-plane path).
void RunConv(benchmark::State& state, ConvSpec spec, int64_t workspace_override = -1) {
  auto h = MakeConv(spec, workspace_override);
  if (!h) {
    state.SkipWithError("Conv prepare failed");
    return;
  }
  for (auto _ : state) {
    if (!h->Eval().ok()) state.SkipWithError("Conv eval failed");
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(ConvFlops(spec) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["workspace_KiB"] = static_cast<double>(h->workspace_bytes()) / 1024.0;
}

void RunGemm(benchmark::State& state, int64_t m, int64_t n, int64_t k, bool trans_b) {
  auto h = MakeGemm(m, n, k, trans_b);
  if (!h) {
    state.SkipWithError("Gemm prepare failed");
    return;
  }
  for (auto _ : state) {
    if (!h->Eval().ok()) state.SkipWithError("Gemm eval failed");
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * static_cast<double>(m * n * k) * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

// Softmax over `axis` of a [rows, len] (axis 1: attention scores, rows
// contiguous) or [len, rows] (axis 0: the axis is not innermost) tensor.
void RunSoftmax(benchmark::State& state, int64_t rows, int64_t len, int axis) {
  KernelHarness h;
  const std::vector<int64_t> shape =
      axis == 1 ? std::vector<int64_t>{rows, len} : std::vector<int64_t>{len, rows};
  const int x = h.AddTensor(DType::Float32, shape);
  const int y = h.AddTensor(DType::Float32, shape);
  Fill(&h, x, 7);
  for (int64_t i = 0; i < h.Elements(x); ++i) h.F32(x)[i] *= 8.0f;
  h.SetNode(schema::Op::Softmax, {x}, {y}, schema::Params::AxisParams,
            [axis](flatbuffers::FlatBufferBuilder& fbb) {
              return schema::CreateAxisParams(fbb, axis).Union();
            });
  if (!h.Prepare().ok()) {
    state.SkipWithError("Softmax prepare failed");
    return;
  }
  for (auto _ : state) {
    if (!h.Eval().ok()) state.SkipWithError("Softmax eval failed");
  }
  state.counters["Gelem/s"] = benchmark::Counter(static_cast<double>(rows * len) * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

// A unary activation over n floats (EfficientNet's largest SiLU: 96x112x112).
void RunUnary(benchmark::State& state, schema::Op op, int64_t n) {
  KernelHarness h;
  const int x = h.AddTensor(DType::Float32, {n});
  const int y = h.AddTensor(DType::Float32, {n});
  Fill(&h, x, 9);
  for (int64_t i = 0; i < n; ++i) h.F32(x)[i] *= 6.0f;
  h.SetNode(op, {x}, {y}, schema::Params::NONE, nullptr);
  if (!h.Prepare().ok()) {
    state.SkipWithError("prepare failed");
    return;
  }
  for (auto _ : state) {
    if (!h.Eval().ok()) state.SkipWithError("eval failed");
  }
  state.counters["Gelem/s"] = benchmark::Counter(static_cast<double>(n) * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

// MaxPool k x k, stride s, pads p on a c x h x w float plane stack (the
// output size follows ceil_mode, as torchvision's googlenet and squeezenet
// pools use it).
void RunMaxPool(benchmark::State& state, int64_t c, int64_t hw, int k, int s, int p, bool ceil) {
  KernelHarness h;
  const int64_t span = hw + 2 * p - k;
  int64_t o = (ceil ? (span + s - 1) / s : span / s) + 1;
  if (ceil && (o - 1) * s >= hw + p) --o;
  const int x = h.AddTensor(DType::Float32, {1, c, hw, hw});
  const int y = h.AddTensor(DType::Float32, {1, c, o, o});
  Fill(&h, x, 11);
  h.SetNode(schema::Op::MaxPool, {x}, {y}, schema::Params::PoolParams,
            [k, s, p, ceil](flatbuffers::FlatBufferBuilder& fbb) {
              const std::vector<int32_t> kernel = {k, k}, strides = {s, s}, pads = {p, p, p, p};
              return schema::CreatePoolParamsDirect(fbb, &kernel, &strides, &pads, nullptr, ceil,
                                                    false)
                  .Union();
            });
  if (!h.Prepare().ok()) {
    state.SkipWithError("MaxPool prepare failed");
    return;
  }
  for (auto _ : state) {
    if (!h.Eval().ok()) state.SkipWithError("MaxPool eval failed");
  }
  state.counters["Gelem/s"] = benchmark::Counter(static_cast<double>(c * o * o) * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

// ------------------------------------------------------------ single layers
// googlenet's stem and inception-branch pools, squeezenet's first pool.
BENCHMARK_CAPTURE(RunMaxPool, s2_64x112x112, 64, 112, 3, 2, 0, true)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(RunMaxPool, s1p1_192x28x28, 192, 28, 3, 1, 1, false)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(RunMaxPool, s1p1_512x14x14, 512, 14, 3, 1, 1, true)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(RunMaxPool, s1p1_832x7x7, 832, 7, 3, 1, 1, true)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(RunMaxPool, s2_64x111x111, 64, 111, 3, 2, 0, true)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(RunMaxPool, k2s2_64x112x112, 64, 112, 2, 2, 0, false)
    ->Unit(benchmark::kMicrosecond);
// resnet18's pool; squeezenet1_1's second and third.
BENCHMARK_CAPTURE(RunMaxPool, s2p1_64x112x112, 64, 112, 3, 2, 1, false)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(RunMaxPool, s2_128x55x55, 128, 55, 3, 2, 0, true)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(RunMaxPool, s2_256x27x27, 256, 27, 3, 2, 0, true)->Unit(benchmark::kMicrosecond);
// googlenet's strided pools on small planes (maxpool2-4).
BENCHMARK_CAPTURE(RunMaxPool, s2_192x56x56, 192, 56, 3, 2, 0, true)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(RunMaxPool, s2_480x28x28, 480, 28, 3, 2, 0, true)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(RunMaxPool, s2_832x14x14, 832, 14, 3, 2, 0, true)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(RunMaxPool, k2s2_832x14x14, 832, 14, 2, 2, 0, true)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(RunUnary, Sigmoid_1204224, schema::Op::Sigmoid, 96 * 112 * 112)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(RunUnary, Swish_1204224, schema::Op::Swish, 96 * 112 * 112)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(RunUnary, Tanh_1204224, schema::Op::Tanh, 96 * 112 * 112)
    ->Unit(benchmark::kMicrosecond);
// In cache (a 112 x 112 plane): the activation's arithmetic alone, as in
// the fused epilogues.
BENCHMARK_CAPTURE(RunUnary, Swish_12544, schema::Op::Swish, 112 * 112)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(RunUnary, Sigmoid_12544, schema::Op::Sigmoid, 112 * 112)
    ->Unit(benchmark::kMicrosecond);
// ViT-B/16 at 224: 12 heads x 197 queries, 197 keys; axis 0 of [1000, 64].
BENCHMARK_CAPTURE(RunSoftmax, Softmax_vit_12x197x197, 12 * 197, 197, 1)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(RunSoftmax, Softmax_axis0_1000x64, 64, 1000, 0)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(RunConv, Conv3x3_64x56x56, ConvSpec{64, 56, 56, 64, 3, 1, 1, false})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(RunConv, Conv3x3_128x28x28, ConvSpec{128, 28, 28, 128, 3, 1, 1, false})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(RunConv, Conv3x3_128to256x14x14, ConvSpec{128, 14, 14, 256, 3, 1, 1, false})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(RunConv, Conv3x3_64to256x13x13, ConvSpec{64, 13, 13, 256, 3, 1, 1, false})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(RunConv, Conv3x3_256x14x14, ConvSpec{256, 14, 14, 256, 3, 1, 1, false})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(RunConv, Conv3x3_512x7x7, ConvSpec{512, 7, 7, 512, 3, 1, 1, false})
    ->Unit(benchmark::kMillisecond);
// ResNet-50's strided 3x3 layers (the first block of stages 2 and 3).
BENCHMARK_CAPTURE(RunConv, Conv3x3s2_128x56x56, ConvSpec{128, 56, 56, 128, 3, 2, 1, false})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(RunConv, Conv3x3s2_256x28x28, ConvSpec{256, 28, 28, 256, 3, 2, 1, false})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(RunConv, Conv7x7s2_stem, ConvSpec{3, 224, 224, 64, 7, 2, 1, false})
    ->Unit(benchmark::kMillisecond);
// The first convolutions of mobilenet_v2, squeezenet1_1 (no padding) and
// mobilenet_v3_small (fused HardSwish).
BENCHMARK_CAPTURE(RunConv, Conv3x3s2_stem_mbv2, ConvSpec{3, 224, 224, 32, 3, 2, 1, false})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(RunConv, Conv3x3s2_stem_squeezenet, ConvSpec{3, 224, 224, 64, 3, 2, 1, false, 0})
    ->Unit(benchmark::kMicrosecond);
// mnasnet0_5's (16 channels, Relu).
BENCHMARK_CAPTURE(RunConv, Conv3x3s2_stem_mnasnet, ConvSpec{3, 224, 224, 16, 3, 2, 1, true})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(RunConv, Conv3x3s2_stem_mbv3s,
                  ConvSpec{3, 224, 224, 16, 3, 2, 1, false, -1, true})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(RunConv, Conv1x1_144to24_56x56, ConvSpec{144, 56, 56, 24, 1, 1, 1, false})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(RunConv, Conv1x1_24to144_56x56, ConvSpec{24, 56, 56, 144, 1, 1, 1, true})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(RunConv, Conv1x1_64to256_56x56, ConvSpec{64, 56, 56, 256, 1, 1, 1, false})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(RunConv, Conv1x1_960to160_7x7, ConvSpec{960, 7, 7, 160, 1, 1, 1, false})
    ->Unit(benchmark::kMillisecond);
// ResNet-50's bottleneck 1x1 layers: n = 49 and 196 with large m and k.
BENCHMARK_CAPTURE(RunConv, Conv1x1_512to2048_7x7, ConvSpec{512, 7, 7, 2048, 1, 1, 1, false})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(RunConv, Conv1x1_256to1024_14x14, ConvSpec{256, 14, 14, 1024, 1, 1, 1, false})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(RunConv, Conv1x1_1024to256_14x14, ConvSpec{1024, 14, 14, 256, 1, 1, 1, false})
    ->Unit(benchmark::kMicrosecond);
// squeezenet1_1's classifier: 512 -> 1000 at 13x13 (n = 169).
BENCHMARK_CAPTURE(RunConv, Conv1x1_512to1000_13x13, ConvSpec{512, 13, 13, 1000, 1, 1, 1, false})
    ->Unit(benchmark::kMicrosecond);
// Narrow outputs (n = 49, 196) and small k: MobileNet v3-small's 1x1 layers.
BENCHMARK_CAPTURE(RunConv, Conv1x1_96to576_7x7, ConvSpec{96, 7, 7, 576, 1, 1, 1, false})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(RunConv, Conv1x1_288to96_7x7, ConvSpec{288, 7, 7, 96, 1, 1, 1, false})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(RunConv, Conv1x1_576to96_7x7, ConvSpec{576, 7, 7, 96, 1, 1, 1, false})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(RunConv, Conv1x1_40to240_14x14, ConvSpec{40, 14, 14, 240, 1, 1, 1, false})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(RunConv, Conv1x1_16to16_56x56, ConvSpec{16, 56, 56, 16, 1, 1, 1, true})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(RunConv, Conv1x1_16to72_56x56, ConvSpec{16, 56, 56, 72, 1, 1, 1, true})
    ->Unit(benchmark::kMicrosecond);
// squeezenet1_1's expand1x1 layers at 55x55 and 27x27.
BENCHMARK_CAPTURE(RunConv, Conv1x1_16to64_55x55, ConvSpec{16, 55, 55, 64, 1, 1, 1, false})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(RunConv, Conv1x1_32to128_27x27, ConvSpec{32, 27, 27, 128, 1, 1, 1, false})
    ->Unit(benchmark::kMicrosecond);
// Depthwise layers of MobileNet v2/v3 and EfficientNet, each on the path
// plans run (channel blocks or phase planes, by shape) and on the row path
// (_rows).
#define BATON_DW_BENCH(name, ...)                                                         \
  BENCHMARK_CAPTURE(RunConv, name, ConvSpec{__VA_ARGS__})->Unit(benchmark::kMicrosecond); \
  BENCHMARK_CAPTURE(RunConv, name##_rows, ConvSpec{__VA_ARGS__}, 0)->Unit(benchmark::kMicrosecond)
BATON_DW_BENCH(Depthwise3x3_32x112x112, 32, 112, 112, 32, 3, 1, 32, true);
BATON_DW_BENCH(Depthwise3x3_144x56x56, 144, 56, 56, 144, 3, 1, 144, true);
BATON_DW_BENCH(Depthwise3x3s2_144x56x56, 144, 56, 56, 144, 3, 2, 144, true);
BATON_DW_BENCH(Depthwise3x3_192x28x28, 192, 28, 28, 192, 3, 1, 192, true);
BATON_DW_BENCH(Depthwise3x3s2_192x28x28, 192, 28, 28, 192, 3, 2, 192, true);
BATON_DW_BENCH(Depthwise3x3_576x14x14, 576, 14, 14, 576, 3, 1, 576, true);
BATON_DW_BENCH(Depthwise3x3s2_576x14x14, 576, 14, 14, 576, 3, 2, 576, true);
BATON_DW_BENCH(Depthwise3x3s2_96x112x112, 96, 112, 112, 96, 3, 2, 96, true);
BATON_DW_BENCH(Depthwise3x3_384x14x14, 384, 14, 14, 384, 3, 1, 384, true);
BATON_DW_BENCH(Depthwise3x3_960x7x7, 960, 7, 7, 960, 3, 1, 960, true);
BATON_DW_BENCH(Depthwise5x5_240x14x14, 240, 14, 14, 240, 5, 1, 240, false);
BATON_DW_BENCH(Depthwise5x5s2_96x28x28, 96, 28, 28, 96, 5, 2, 96, false);
BATON_DW_BENCH(Depthwise5x5_576x7x7, 576, 7, 7, 576, 5, 1, 576, false);
BATON_DW_BENCH(Depthwise5x5s2_240x28x28, 240, 28, 28, 240, 5, 2, 240, false);
// mnasnet0_5's: 5x5 at stride 2 from 56x56 and 28x28, 5x5 at 14x14, 3x3 at 56x56.
BATON_DW_BENCH(Depthwise5x5s2_48x56x56, 48, 56, 56, 48, 5, 2, 48, true);
BATON_DW_BENCH(Depthwise5x5s2_144x28x28, 144, 28, 28, 144, 5, 2, 144, true);
BATON_DW_BENCH(Depthwise5x5_288x14x14, 288, 14, 14, 288, 5, 1, 288, true);
BATON_DW_BENCH(Depthwise3x3_48x56x56, 48, 56, 56, 48, 3, 1, 48, true);
BENCHMARK_CAPTURE(RunGemm, Gemm_512x512x512, 512, 512, 512, false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(RunGemm, Gemm_256x3136x576, 256, 3136, 576, false)->Unit(benchmark::kMillisecond);
// Conv7x7s2_stem's GEMM with a plain B: the stem's time less its im2col
// packing.
BENCHMARK_CAPTURE(RunGemm, Gemm_stem_64x12544x147, 64, 12544, 147, false)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(RunGemm, Gemm_classifier_1x1000x512_tb, 1, 1000, 512, true)
    ->Unit(benchmark::kMicrosecond);

// ---------------------------------------------------------- whole networks
struct Net {
  std::vector<ConvSpec> convs;
  int64_t fc_in = 0, fc_out = 0;  // classifier Gemm (0: none)
};

Net Resnet18() {
  Net net;
  net.convs.push_back({3, 224, 224, 64, 7, 2, 1, true});
  const int64_t widths[4] = {64, 128, 256, 512};
  int64_t c = 64, hw = 56;
  for (int stage = 0; stage < 4; ++stage) {
    const int64_t m = widths[stage];
    const int64_t s = stage == 0 ? 1 : 2;
    const int64_t ohw = hw / s;
    net.convs.push_back({c, hw, hw, m, 3, s, 1, true});
    net.convs.push_back({m, ohw, ohw, m, 3, 1, 1, false});
    if (s == 2) net.convs.push_back({c, hw, hw, m, 1, 2, 1, false});  // downsample
    net.convs.push_back({m, ohw, ohw, m, 3, 1, 1, true});
    net.convs.push_back({m, ohw, ohw, m, 3, 1, 1, false});
    c = m;
    hw = ohw;
  }
  net.fc_in = 512;
  net.fc_out = 1000;
  return net;
}

Net MobilenetV2() {
  Net net;
  net.convs.push_back({3, 224, 224, 32, 3, 2, 1, true});
  struct Block {
    int64_t t, c, n, s;
  };
  const Block blocks[] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                          {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  int64_t c = 32, hw = 112;
  for (const Block& b : blocks) {
    for (int64_t i = 0; i < b.n; ++i) {
      const int64_t s = i == 0 ? b.s : 1;
      const int64_t hidden = c * b.t;
      if (b.t != 1) net.convs.push_back({c, hw, hw, hidden, 1, 1, 1, true});
      net.convs.push_back({hidden, hw, hw, hidden, 3, s, hidden, true});
      hw = (hw + s - 1) / s;
      net.convs.push_back({hidden, hw, hw, b.c, 1, 1, 1, false});
      c = b.c;
    }
  }
  net.convs.push_back({320, 7, 7, 1280, 1, 1, 1, true});
  net.fc_in = 1280;
  net.fc_out = 1000;
  return net;
}

Net Squeezenet11() {
  Net net;
  // conv1 has no padding in squeezenet (224 -> 111); "same" padding here
  // gives 112, within 2% of the work.
  net.convs.push_back({3, 224, 224, 64, 3, 2, 1, true});
  struct Fire {
    int64_t in, squeeze, expand, hw;
  };
  const Fire fires[] = {{64, 16, 64, 55},   {128, 16, 64, 55},  {128, 32, 128, 27},
                        {256, 32, 128, 27}, {256, 48, 192, 13}, {384, 48, 192, 13},
                        {384, 64, 256, 13}, {512, 64, 256, 13}};
  for (const Fire& f : fires) {
    net.convs.push_back({f.in, f.hw, f.hw, f.squeeze, 1, 1, 1, true});
    net.convs.push_back({f.squeeze, f.hw, f.hw, f.expand, 1, 1, 1, true});
    net.convs.push_back({f.squeeze, f.hw, f.hw, f.expand, 3, 1, 1, true});
  }
  net.convs.push_back({512, 13, 13, 1000, 1, 1, 1, true});
  return net;
}

void RunNet(benchmark::State& state, Net (*make)()) {
  const Net net = make();
  std::vector<std::unique_ptr<KernelHarness>> nodes;
  double flops = 0.0;
  for (const ConvSpec& s : net.convs) {
    nodes.push_back(MakeConv(s));
    flops += ConvFlops(s);
    if (!nodes.back()) {
      state.SkipWithError("Conv prepare failed");
      return;
    }
  }
  if (net.fc_out > 0) {
    nodes.push_back(MakeGemm(1, net.fc_out, net.fc_in, true));
    flops += 2.0 * static_cast<double>(net.fc_in * net.fc_out);
  }
  size_t max_ws = 0;
  for (const auto& n : nodes)
    max_ws = n->workspace_bytes() > max_ws ? n->workspace_bytes() : max_ws;
  for (auto _ : state) {
    for (auto& n : nodes) {
      if (!n->Eval().ok()) state.SkipWithError("eval failed");
    }
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["max_workspace_KiB"] = static_cast<double>(max_ws) / 1024.0;
}

BENCHMARK_CAPTURE(RunNet, Resnet18_Net, Resnet18)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(RunNet, MobilenetV2_Net, MobilenetV2)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(RunNet, Squeezenet11_Net, Squeezenet11)->Unit(benchmark::kMillisecond);

// ------------------------------------------------- per instruction set
// Selects `isa` for the benchmark, then restores the default.
template <typename Fn>
void WithIsa(benchmark::State& state, KernelIsa isa, Fn fn) {
  const testing::IsaGuard restore;
  SelectKernelIsa(isa);
  fn(state);
}

// Registers RunConv(spec) as `name` + "/isa:<isa>".
void RegisterConvWithIsa(const std::string& name, ConvSpec spec, KernelIsa isa,
                         benchmark::TimeUnit unit) {
  benchmark::RegisterBenchmark((name + "/isa:" + KernelIsaName(isa)).c_str(),
                               [isa, spec](benchmark::State& st) {
                                 WithIsa(st, isa,
                                         [spec](benchmark::State& s) { RunConv(s, spec); });
                               })
      ->Unit(unit);
}

void RegisterPerIsa() {
  static const struct {
    const char* name;
    ConvSpec spec;
    benchmark::TimeUnit unit;
  } kConvs[] = {
      {"RunConv/Conv3x3_64x56x56", {64, 56, 56, 64, 3, 1, 1, false}, benchmark::kMillisecond},
      {"RunConv/Conv3x3_128x28x28", {128, 28, 28, 128, 3, 1, 1, false}, benchmark::kMillisecond},
      {"RunConv/Conv3x3_256x14x14", {256, 14, 14, 256, 3, 1, 1, false}, benchmark::kMillisecond},
      {"RunConv/Conv1x1_64to256_56x56", {64, 56, 56, 256, 1, 1, 1, false}, benchmark::kMillisecond},
      // Narrow n (7x7) and small k (16 channels): mobilenet_v3_small's 1x1s.
      {"RunConv/Conv1x1_96to576_7x7", {96, 7, 7, 576, 1, 1, 1, false}, benchmark::kMicrosecond},
      {"RunConv/Conv1x1_16to72_56x56", {16, 56, 56, 72, 1, 1, 1, true}, benchmark::kMicrosecond},
      // mobilenet_v2's pointwise layers at 56x56 and 14x14 (k = 144, 384, 96).
      {"RunConv/Conv1x1_144to24_56x56", {144, 56, 56, 24, 1, 1, 1, false}, benchmark::kMicrosecond},
      {"RunConv/Conv1x1_384to64_14x14", {384, 14, 14, 64, 1, 1, 1, false}, benchmark::kMicrosecond},
      {"RunConv/Conv1x1_96to576_14x14", {96, 14, 14, 576, 1, 1, 1, true}, benchmark::kMicrosecond},
      // resnet50's bottleneck 1x1 layers: large k and m on 56-, 28- and 14-wide planes.
      {"RunConv/Conv1x1_256to64_56x56", {256, 56, 56, 64, 1, 1, 1, false}, benchmark::kMicrosecond},
      {"RunConv/Conv1x1_128to512_28x28",
       {128, 28, 28, 512, 1, 1, 1, false},
       benchmark::kMicrosecond},
      {"RunConv/Conv1x1_256to1024_14x14",
       {256, 14, 14, 1024, 1, 1, 1, false},
       benchmark::kMicrosecond},
      {"RunConv/Conv1x1_1024to256_14x14",
       {1024, 14, 14, 256, 1, 1, 1, false},
       benchmark::kMicrosecond},
      // mnasnet0_5's 8 -> 24 at 112x112: k = 8 on a wide plane.
      {"RunConv/Conv1x1_8to24_112x112", {8, 112, 112, 24, 1, 1, 1, true}, benchmark::kMicrosecond},
      // Depthwise: channel blocks at stride 1 and 2 (one zmm, two ymm or the
      // portable width per 16 channels).
      {"RunConv/Depthwise3x3_144x56x56",
       {144, 56, 56, 144, 3, 1, 144, true},
       benchmark::kMicrosecond},
      {"RunConv/Depthwise3x3s2_144x56x56",
       {144, 56, 56, 144, 3, 2, 144, true},
       benchmark::kMicrosecond},
      // Stride 1: 112, 28 and 14 wide planes (a 5x5).
      {"RunConv/Depthwise3x3_32x112x112",
       {32, 112, 112, 32, 3, 1, 32, true},
       benchmark::kMicrosecond},
      {"RunConv/Depthwise3x3_192x28x28",
       {192, 28, 28, 192, 3, 1, 192, true},
       benchmark::kMicrosecond},
      {"RunConv/Depthwise5x5_240x14x14",
       {240, 14, 14, 240, 5, 1, 240, false},
       benchmark::kMicrosecond},
      {"RunConv/Depthwise5x5_240x28x28",
       {240, 28, 28, 240, 5, 1, 240, false},
       benchmark::kMicrosecond},
      // Stride 2 from 112, 28 and 14 wide planes, and a 5x5.
      {"RunConv/Depthwise3x3s2_96x112x112",
       {96, 112, 112, 96, 3, 2, 96, true},
       benchmark::kMicrosecond},
      {"RunConv/Depthwise3x3s2_192x28x28",
       {192, 28, 28, 192, 3, 2, 192, true},
       benchmark::kMicrosecond},
      {"RunConv/Depthwise3x3s2_576x14x14",
       {576, 14, 14, 576, 3, 2, 576, true},
       benchmark::kMicrosecond},
      {"RunConv/Depthwise5x5s2_240x28x28",
       {240, 28, 28, 240, 5, 2, 240, false},
       benchmark::kMicrosecond},
      // mnasnet0_5's 5x5 layers: stride 2 from 56x56 and 28x28, stride 1 at 14x14.
      {"RunConv/Depthwise5x5s2_48x56x56", {48, 56, 56, 48, 5, 2, 48, true}, benchmark::kMicrosecond},
      {"RunConv/Depthwise5x5s2_144x28x28",
       {144, 28, 28, 144, 5, 2, 144, true},
       benchmark::kMicrosecond},
      {"RunConv/Depthwise5x5_288x14x14", {288, 14, 14, 288, 5, 1, 288, true}, benchmark::kMicrosecond},
      // efficientnet_b0's: stride 2 from 56x56 and 14x14, stride 1 at 14x14 and 7x7.
      {"RunConv/Depthwise5x5s2_144x56x56",
       {144, 56, 56, 144, 5, 2, 144, true},
       benchmark::kMicrosecond},
      {"RunConv/Depthwise5x5s2_672x14x14",
       {672, 14, 14, 672, 5, 2, 672, true},
       benchmark::kMicrosecond},
      {"RunConv/Depthwise5x5_672x14x14", {672, 14, 14, 672, 5, 1, 672, true}, benchmark::kMicrosecond},
      {"RunConv/Depthwise5x5_1152x7x7", {1152, 7, 7, 1152, 5, 1, 1152, true}, benchmark::kMicrosecond},
      // Stems (ConvDirect on AVX2 and AVX-512, im2col + GEMM elsewhere).
      {"RunConv/Conv7x7s2_stem", {3, 224, 224, 64, 7, 2, 1, false}, benchmark::kMicrosecond},
      {"RunConv/Conv3x3s2_stem_squeezenet",
       {3, 224, 224, 64, 3, 2, 1, false, 0},
       benchmark::kMicrosecond},
      {"RunConv/Conv3x3s2_stem_mbv2", {3, 224, 224, 32, 3, 2, 1, false}, benchmark::kMicrosecond},
  };
  for (KernelIsa isa : kAllKernelIsas) {
    if (!KernelIsaAvailable(isa)) continue;
    const std::string suffix = std::string("/isa:") + KernelIsaName(isa);
    for (const auto& conv : kConvs) RegisterConvWithIsa(conv.name, conv.spec, isa, conv.unit);
    // Swish in cache and out of it (efficientnet's activation).
    for (const int64_t n : {int64_t{112 * 112}, int64_t{96 * 112 * 112}}) {
      benchmark::RegisterBenchmark(
          ("RunUnary/Swish_" + std::to_string(n) + suffix).c_str(),
          [isa, n](benchmark::State& st) {
            WithIsa(st, isa, [n](benchmark::State& s) { RunUnary(s, schema::Op::Swish, n); });
          })
          ->Unit(benchmark::kMicrosecond);
    }
    // The im2col + GEMM layers with the largest excess over ONNX Runtime
    // (tools/profile_vs_ort.py --nodes): 3x3 layers on planes too small for
    // Winograd (14x14, 13x13, 7x7: n = 196, 169, 49), few input channels
    // (squeezenet's expand layers, googlenet's branch3), and stride 2.
    static const struct {
      const char* name;
      ConvSpec spec;
    } kIm2col[] = {
        {"Conv3x3_256x14x14", {256, 14, 14, 256, 3, 1, 1, false}},
        {"Conv3x3_512x7x7", {512, 7, 7, 512, 3, 1, 1, false}},
        {"Conv3x3_160to320_14x14", {160, 14, 14, 320, 3, 1, 1, true}},
        {"Conv3x3_96to208_14x14", {96, 14, 14, 208, 3, 1, 1, true}},
        {"Conv3x3_192to384_7x7", {192, 7, 7, 384, 3, 1, 1, true}},
        {"Conv3x3_32to128_14x14", {32, 14, 14, 128, 3, 1, 1, true}},
        {"Conv3x3_16to32_28x28", {16, 28, 28, 32, 3, 1, 1, true}},
        {"Conv3x3_16to64_55x55", {16, 55, 55, 64, 3, 1, 1, true}},
        {"Conv3x3_32to128_27x27", {32, 27, 27, 128, 3, 1, 1, true}},
        {"Conv3x3_48to192_13x13", {48, 13, 13, 192, 3, 1, 1, true}},
        {"Conv3x3_64to256_13x13", {64, 13, 13, 256, 3, 1, 1, true}},
        {"Conv3x3s2_64to128_56x56", {64, 56, 56, 128, 3, 2, 1, true}},
        {"Conv3x3s2_128to256_28x28", {128, 28, 28, 256, 3, 2, 1, true}},
        {"Conv3x3s2_256to512_14x14", {256, 14, 14, 512, 3, 2, 1, true}},
    };
    for (const auto& layer : kIm2col) {
      RegisterConvWithIsa(std::string("RunConv/Im2col/") + layer.name, layer.spec, isa,
                          benchmark::kMicrosecond);
    }
    const struct {
      const char* name;
      Net (*make)();
    } nets[] = {{"Resnet18_Net", Resnet18},
                {"MobilenetV2_Net", MobilenetV2},
                {"Squeezenet11_Net", Squeezenet11}};
    for (const auto& net : nets) {
      auto make = net.make;
      benchmark::RegisterBenchmark((std::string("RunNet/") + net.name + suffix).c_str(),
                                   [isa, make](benchmark::State& st) {
                                     WithIsa(st, isa,
                                             [make](benchmark::State& s) { RunNet(s, make); });
                                   })
          ->Unit(benchmark::kMillisecond);
    }
  }
}

}  // namespace
}  // namespace baton

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  baton::RegisterPerIsa();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
