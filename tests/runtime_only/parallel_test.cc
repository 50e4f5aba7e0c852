// Intra-node parallelism (baton/parallel.h, issue 17): a CPU queue with
// Queue.threads = N splits its GEMMs, convolutions and depthwise filters over
// a worker pool. Every output must be bitwise the serial kernel's, on every
// ISA the machine offers: the reference here is the same kernel run on one
// thread (no runner installed), itself checked against torch/ORT elsewhere.

#include "baton/parallel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <random>
#include <vector>

#include "baton/kernels.h"
#include "baton/linux/worker_pool.h"
#include "gemm_core.h"
#include "isa_util.h"
#include "parallel.h"
#include "plan_builder.h"
#include "test_util.h"

namespace baton::testing {
namespace {

using Op = schema::Op;
using DeviceKind = schema::DeviceKind;

// Installs a pool of `threads` on the calling thread for the scope, behind
// a runner that counts the splits (so a test can tell that the parallel path
// ran at all).
class ScopedPool {
 public:
  explicit ScopedPool(int threads) : pool_(threads, {}) {
    counting_.threads = threads;
    counting_.self = this;
    counting_.run = [](void* self, int parts, void (*task)(void*, int), void* ctx) {
      auto* me = static_cast<ScopedPool*>(self);
      me->splits_.fetch_add(1);
      const ParallelRunner* inner = me->pool_.runner();
      inner->run(inner->self, parts, task, ctx);
    };
    SetThreadParallelRunner(&counting_);
  }
  ~ScopedPool() { SetThreadParallelRunner(nullptr); }
  int splits() const { return splits_.load(); }

 private:
  linux_port::WorkerPool pool_;
  ParallelRunner counting_;
  std::atomic<int> splits_{0};
};

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(Parallel, ForCoversEveryItemOnceInWholeGrains) {
  for (int threads : {1, 2, 3}) {
    ScopedPool pool(threads);
    for (int64_t n : {1, 5, 31, 32, 33, 100, 1000}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      struct Ctx {
        std::vector<std::atomic<int>>* hits;
        std::atomic<int> short_ranges{0};
        std::atomic<int> ranges{0};
        int64_t n;
      } ctx{&hits, {}, {}, n};
      kernels::ParallelFor(
          n, 8, 16,
          [](void* c, int64_t begin, int64_t end, int slot) {
            auto& x = *static_cast<Ctx*>(c);
            EXPECT_GE(slot, 0);
            x.ranges.fetch_add(1);
            if (end - begin < 8 && x.n >= 8) x.short_ranges.fetch_add(1);
            for (int64_t i = begin; i < end; ++i) (*x.hits)[static_cast<size_t>(i)].fetch_add(1);
          },
          &ctx);
      for (int64_t i = 0; i < n; ++i) EXPECT_EQ(hits[static_cast<size_t>(i)].load(), 1) << i;
      EXPECT_EQ(ctx.short_ranges.load(), 0) << "n " << n;
      const int64_t want = std::min<int64_t>(threads, n / 8 > 0 ? n / 8 : 1);
      EXPECT_EQ(ctx.ranges.load(), want) << "n " << n << " threads " << threads;
    }
  }
}

TEST(Parallel, WorkspaceSlices) {
  EXPECT_EQ(ParallelWorkspaceBytes(100, 1), 100u);  // threads 1: the serial size, unrounded
  EXPECT_EQ(ParallelWorkspaceBytes(100, 3), 3u * 128u);
  EXPECT_EQ(ParallelWorkspaceBytes(0, 4), 0u);
  EXPECT_EQ(kernels::ParallelWorkspaceSlices(100, 100), 1);
  EXPECT_EQ(kernels::ParallelWorkspaceSlices(384, 100), 3);
  EXPECT_EQ(kernels::ParallelWorkspaceSlices(0, 100), 1);
}

struct GemmCase {
  int64_t m, n, k;
  float alpha;
  bool bias, clamp;
};

// GemmPackedSliced / GemmDirect with 2 and 3 threads against one thread,
// bitwise, on column splits (wide n), row splits (tall m) and tiles that do
// not divide the sizes.
TEST(Parallel, GemmBitwiseEqualAcrossThreadCounts) {
  IsaRestore restore;
  const GemmCase cases[] = {{37, 300, 129, 1.0f, true, true},
                            {200, 40, 70, 1.0f, true, false},
                            {64, 97, 600, 0.5f, false, true},
                            {3, 500, 64, 1.0f, true, false},
                            // Fewer rows than the 12-row tile (AVX-512: an
                            // 8-row block and a shifted 4-row block).
                            {11, 700, 40, 1.0f, true, true},
                            // A part sizes its blocks from its own extent and
                            // needed more than its slice (review, issue 17):
                            // columns 3136 in 3 parts (an im2col Conv 64->64,
                            // 3x3 s2, 56x56 out), rows 260 in 2 parts.
                            {64, 3136, 576, 1.0f, true, false},
                            {260, 64, 256, 1.0f, true, true},
                            // Row splits whose parts end on the 4- and
                            // 8-row kernels (AVX-512), n = 49 and 70 (a
                            // full and a shifted column tile), two k blocks.
                            {52, 49, 300, 1.0f, true, true},
                            // Five column tiles would split 2:3 (AVX-512):
                            // rows instead (squeezenet's classifier shape;
                            // AVX-512: 48-column panels on one thread and,
                            // in 24-row grains, on every part).
                            {1000, 169, 96, 1.0f, true, true},
                            // m % 8 = 4: one thread on 32-column panels,
                            // a part of 504 rows on 48-column ones.
                            {1012, 169, 96, 1.0f, true, true},
                            // A wide B of 16 rows (AVX-512: 48-column
                            // panels over all of it on one thread, on
                            // each part's columns on several).
                            {64, 3025, 16, 1.0f, true, true},
                            // 7x7 planes (AVX-512: GemmDirect's 8 x 48
                            // tiles, two k blocks): rows split into parts
                            // of 24 (8 x 48 tiles) or 12 (12 x 32 ones),
                            // the same bits either way.
                            {48, 49, 1100, 1.0f, true, true},
                            {96, 50, 200, 1.0f, false, true},
                            {44, 70, 40, 1.0f, true, false},
                            // Last columns as dot products (GemmPacked's
                            // DotTail): n % 32 and n % 24 = 1 in a column
                            // split, 2 in a row split.
                            {40, 289, 300, 1.0f, true, true},
                            {60, 50, 300, 1.0f, true, false}};
  for (KernelIsa isa : Isas()) {
    ASSERT_TRUE(SelectKernelIsa(isa));
    for (const GemmCase& g : cases) {
      const std::vector<float> a = Random(static_cast<size_t>(g.m * g.k), 1);
      const std::vector<float> b = Random(static_cast<size_t>(g.k * g.n), 2);
      const std::vector<float> bias = Random(static_cast<size_t>(g.m), 3);
      // A fused residual sum (with the bias): each split part must read the
      // sum of its own rows or columns.
      const std::vector<float> sum = Random(static_cast<size_t>(g.m * g.n), 8);
      kernels::GemmEpilogue epi;
      epi.row_bias = g.bias ? bias.data() : nullptr;
      epi.sum = g.bias ? sum.data() : nullptr;
      epi.ldsum = g.n;
      epi.clamp = g.clamp;
      epi.lo = -0.5f;
      epi.hi = 0.75f;
      const kernels::StridedMatrix am{a.data(), g.k, 1};
      const kernels::StridedMatrix bm{b.data(), g.n, 1};
      const size_t slice = kernels::GemmWorkspaceBytes(g.m, g.n, g.k);
      std::vector<float> ws(ParallelWorkspaceBytes(slice, 3) / sizeof(float) + 16);
      std::vector<float> packed1(static_cast<size_t>(g.m * g.n));
      std::vector<float> direct1(packed1.size());
      kernels::GemmPacked(g.m, g.n, g.k, g.alpha, am, kernels::PackBStrided, &bm, packed1.data(),
                          g.n, epi, ws.data());
      kernels::GemmDirect(g.m, g.n, g.k, a.data(), g.k, b.data(), g.n, direct1.data(), g.n, epi);
      // The serial result is a GEMM (outside reference: a plain loop).
      {
        const int64_t i = g.m - 1, j = g.n / 2;
        double want = 0;
        for (int64_t p = 0; p < g.k; ++p) {
          want += static_cast<double>(a[i * g.k + p]) * static_cast<double>(b[p * g.n + j]);
        }
        want = want * static_cast<double>(g.alpha) +
               static_cast<double>(g.bias ? bias[static_cast<size_t>(i)] : 0.0f) +
               static_cast<double>(g.bias ? sum[static_cast<size_t>(i * g.n + j)] : 0.0f);
        if (g.clamp) want = std::min(std::max(want, -0.5), 0.75);
        EXPECT_NEAR(packed1[static_cast<size_t>(i * g.n + j)], want, 1e-4);
      }
      for (int threads : {2, 3}) {
        ScopedPool pool(threads);
        std::vector<float> packed(packed1.size(), -7.0f), direct(packed1.size(), -7.0f);
        // Exactly the planned workspace, then a canary the parts must not touch.
        const size_t planned =
            ParallelWorkspaceBytes(slice, static_cast<uint32_t>(threads)) / sizeof(float);
        std::vector<float> sliced_ws(planned + 256, 0.0f);
        const float kCanary = -123.25f;
        std::fill(sliced_ws.begin() + static_cast<std::ptrdiff_t>(planned), sliced_ws.end(),
                  kCanary);
        kernels::GemmPackedSliced(g.m, g.n, g.k, g.alpha, am, kernels::PackBStrided, &bm,
                                  packed.data(), g.n, epi, sliced_ws.data(), threads);
        EXPECT_TRUE(std::all_of(sliced_ws.begin() + static_cast<std::ptrdiff_t>(planned),
                                sliced_ws.end(), [&](float v) { return v == kCanary; }))
            << KernelIsaName(isa) << " workspace overrun, m " << g.m << " n " << g.n << " threads "
            << threads;
        kernels::GemmDirect(g.m, g.n, g.k, a.data(), g.k, b.data(), g.n, direct.data(), g.n, epi);
        EXPECT_EQ(pool.splits(), 2) << "both GEMMs split: " << KernelIsaName(isa) << " m " << g.m
                                    << " n " << g.n << " threads " << threads;
        EXPECT_TRUE(SameBits(packed, packed1))
            << KernelIsaName(isa) << " packed m " << g.m << " n " << g.n << " threads " << threads;
        if (g.alpha == 1.0f) {
          EXPECT_TRUE(SameBits(direct, direct1)) << KernelIsaName(isa) << " direct m " << g.m
                                                 << " n " << g.n << " threads " << threads;
        }
      }
    }
  }
}

// Gemv (a batch-1 Gemm or MatMul, a recurrence) splits its columns over 2
// and 3 threads: bitwise the serial result, which is the dot products (a
// loop here), for B read along rows and transposed, with a residual sum,
// the clamp and alpha; n = 1000 ends in a partial 64-column grain.
TEST(Parallel, GemvBitwiseEqualAcrossThreadCounts) {
  IsaRestore restore;
  const int64_t n = 1000, k = 300;
  const std::vector<float> x = Random(static_cast<size_t>(k), 11);
  const std::vector<float> b = Random(static_cast<size_t>(k * n), 12);
  const std::vector<float> sum = Random(static_cast<size_t>(n), 13);
  kernels::GemmEpilogue epi;
  epi.sum = sum.data();
  epi.clamp = true;
  epi.lo = -1.5f;
  epi.hi = 1.25f;
  for (KernelIsa isa : Isas()) {
    ASSERT_TRUE(SelectKernelIsa(isa));
    for (const bool trans : {false, true}) {
      // B is k x n: row stride n; transposed, the same values stored n x k.
      std::vector<float> bt(b.size());
      for (int64_t p = 0; p < k; ++p) {
        for (int64_t j = 0; j < n; ++j)
          bt[static_cast<size_t>(j * k + p)] = b[static_cast<size_t>(p * n + j)];
      }
      const kernels::StridedMatrix bm =
          trans ? kernels::StridedMatrix{bt.data(), 1, k} : kernels::StridedMatrix{b.data(), n, 1};
      std::vector<float> one(static_cast<size_t>(n));
      kernels::Gemv(n, k, 0.5f, x.data(), 1, bm, one.data(), epi);
      for (const int64_t j : {int64_t{0}, int64_t{517}, n - 1}) {
        double want = 0;
        for (int64_t p = 0; p < k; ++p) {
          want += static_cast<double>(x[static_cast<size_t>(p)]) *
                  static_cast<double>(b[static_cast<size_t>(p * n + j)]);
        }
        want = std::min(
            std::max(0.5 * want + static_cast<double>(sum[static_cast<size_t>(j)]), -1.5), 1.25);
        EXPECT_NEAR(one[static_cast<size_t>(j)], want, 1e-4) << KernelIsaName(isa) << " " << j;
      }
      for (int threads : {2, 3}) {
        ScopedPool pool(threads);
        std::vector<float> y(one.size(), -7.0f);
        kernels::Gemv(n, k, 0.5f, x.data(), 1, bm, y.data(), epi);
        EXPECT_EQ(pool.splits(), 1);
        EXPECT_TRUE(SameBits(y, one))
            << KernelIsaName(isa) << " trans " << trans << " threads " << threads;
      }
    }
  }
}

// One Conv node on a CPU queue of `threads`, its workspace sized like the
// planner does (ParallelWorkspaceBytes), run through the Linux port
// (threaded: the queue's pool).
struct ConvSpec {
  int64_t c, h, w, m, k, stride, pad, group;
};

// `fused`: a residual sum (input 3) and a HardSwish after the clamp, so the
// fused epilogue runs on every split part at the right offsets. `u`: Winograd
// weights as input 4 (any values: the parts must agree with one thread).
std::vector<float> RunConv(const ConvSpec& s, uint32_t threads, const std::vector<float>& x,
                           const std::vector<float>& wt, const std::vector<float>& bias,
                           bool fused = false, const std::vector<float>* u = nullptr) {
  const int64_t oh = (s.h + 2 * s.pad - s.k) / s.stride + 1;
  const int64_t ow = (s.w + 2 * s.pad - s.k) / s.stride + 1;
  auto build = [&](uint64_t ws_bytes) {
    PlanBuilder b;
    const std::vector<int64_t> xs = {1, s.c, s.h, s.w}, ys = {1, s.m, oh, ow};
    const uint64_t xb = PlanBuilder::Bytes(xs, schema::DType::Float32);
    const uint64_t yb = PlanBuilder::Bytes(ys, schema::DType::Float32);
    auto round = [](uint64_t v) { return (v + 63) / 64 * 64; };
    const uint32_t dram = b.Domain("dram", round(xb) + round(yb) + round(ws_bytes) + 64, 64);
    const uint32_t cpu = b.Queue("cpu0", DeviceKind::Cpu, {dram}, threads);
    const uint32_t xt = b.Arena("x", xs, dram, 0);
    const uint32_t wt_t = b.Constant("w", {s.m, s.c / s.group, s.k, s.k}, wt);
    const uint32_t bt = b.Constant("b", {s.m}, bias);
    const uint32_t yt = b.Arena("y", ys, dram, round(xb));
    std::vector<uint32_t> ws;
    if (ws_bytes > 0) {
      ws.push_back(b.Arena("ws", {static_cast<int64_t>(ws_bytes)}, dram, round(xb) + round(yb), 1,
                           0, schema::DType::UInt8));
    }
    const std::vector<int32_t> kernel = {static_cast<int32_t>(s.k), static_cast<int32_t>(s.k)};
    const std::vector<int32_t> strides = {static_cast<int32_t>(s.stride),
                                          static_cast<int32_t>(s.stride)};
    const int32_t p = static_cast<int32_t>(s.pad);
    const std::vector<int32_t> pads = {p, p, p, p}, dil = {1, 1};
    const schema::Clamp clamp(-3.0f, 3.0f);
    std::vector<int32_t> inputs = {static_cast<int32_t>(xt), static_cast<int32_t>(wt_t),
                                   static_cast<int32_t>(bt)};
    if (fused) {
      const std::vector<float> sum = Random(static_cast<size_t>(s.m * oh * ow), 7);
      inputs.push_back(static_cast<int32_t>(b.Constant("sum", ys, sum)));
    }
    if (u != nullptr) {
      if (!fused) inputs.push_back(-1);
      inputs.push_back(static_cast<int32_t>(b.Constant("u", {16, s.m, s.c}, *u)));
    }
    auto params = schema::CreateConvParamsDirect(
        b.fbb(), &kernel, &strides, &pads, &dil, static_cast<int32_t>(s.group), &clamp,
        fused ? schema::FusedActivation::HardSwish : schema::FusedActivation::None,
        fused ? 1.0f / 6 : 0.0f, fused ? 0.5f : 0.0f);
    b.Node("conv", Op::Conv, cpu, inputs, {yt}, {}, 0, schema::Params::ConvParams, params.Union(),
           ws);
    b.Inputs({xt});
    b.Outputs({yt});
    return b.Finish();
  };
  const size_t serial = WorkspaceFor(build(0), 0);
  const AlignedPlan plan = build(ParallelWorkspaceBytes(serial, threads));
  const auto out = RunStream(plan, Mode::kLinuxThreaded, {x});
  return out.empty() ? std::vector<float>() : out[0];
}

TEST(Parallel, ConvDepthwiseWinogradBitwiseEqualAcrossThreadCounts) {
  IsaRestore restore;
  const ConvSpec specs[] = {
      {24, 30, 30, 40, 3, 2, 1, 1},    // im2col + GemmPacked
      {3, 47, 45, 16, 3, 2, 1, 1},     // stem: ConvDirect's bands of output rows
      {3, 40, 38, 64, 7, 2, 3, 1},     // 7x7 stem, 64 rows (12-row blocks + 4)
      {3, 21, 223, 32, 3, 2, 0, 1},    // stem, rows of 111 (AVX-512: 48-column panels)
      {48, 20, 20, 64, 1, 1, 0, 1},    // pointwise: GemmDirect
      {300, 1, 1, 150, 1, 1, 0, 1},    // pointwise on a 1x1 image: dot products
      {64, 20, 20, 64, 3, 1, 1, 1},    // Winograd F(2x2, 3x3), one tile block
      {16, 27, 27, 64, 3, 1, 1, 1},    // Winograd over 16 channels (AVX-512: 8 x 48 tiles)
      {64, 29, 27, 72, 3, 1, 1, 1},    // Winograd, tile blocks of 96, 64 and 50 tiles
      {128, 13, 13, 132, 3, 1, 1, 1},  // Winograd, U in blocks of output channels
      {64, 13, 13, 64, 3, 1, 1, 1},    // given U below: one tile block split by channels
      {8, 60, 60, 8, 3, 1, 1, 8},      // depthwise, a large unit-stride plane (phase
                                       // planes; AVX2 and AVX-512: the direct path)
      {32, 40, 40, 32, 3, 1, 1, 32},   // depthwise, channel blocks in bands of rows
      {40, 48, 46, 40, 3, 2, 1, 40},   // depthwise stride 2 (rows of 23: AVX-512's
                                       // direct path, else bands and a partial block)
      {24, 60, 58, 24, 3, 2, 1, 24},   // depthwise stride 2, rows of 29: the direct
                                       // path on AVX2 and AVX-512
      {328, 9, 9, 328, 3, 1, 1, 328},  // depthwise, channel blocks (small planes)
      {96, 28, 28, 96, 5, 2, 2, 96},   // depthwise 5x5 stride 2
      {32, 20, 20, 32, 3, 1, 1, 4},    // grouped
  };
  for (KernelIsa isa : Isas()) {
    ASSERT_TRUE(SelectKernelIsa(isa));
    for (const ConvSpec& s : specs) {
      const std::vector<float> x = Random(static_cast<size_t>(s.c * s.h * s.w), 4);
      const std::vector<float> w =
          Random(static_cast<size_t>(s.m * (s.c / s.group) * s.k * s.k), 5);
      const std::vector<float> bias = Random(static_cast<size_t>(s.m), 6);
      // Winograd weights given (input 4) on the dense 3x3 stride-1 layers.
      const bool winograd = s.k == 3 && s.stride == 1 && s.group == 1 && s.c >= 16;
      const std::vector<float> u = Random(static_cast<size_t>(16 * s.m * s.c), 8);
      for (const bool fused : {false, true}) {
        for (const bool given : {false, true}) {
          if (given && !winograd) continue;
          const std::vector<float>* up = given ? &u : nullptr;
          const std::vector<float> one = RunConv(s, 1, x, w, bias, fused, up);
          ASSERT_FALSE(one.empty());
          for (uint32_t threads : {2u, 3u}) {
            EXPECT_TRUE(SameBits(RunConv(s, threads, x, w, bias, fused, up), one))
                << KernelIsaName(isa) << " c " << s.c << " m " << s.m << " k " << s.k
                << " group " << s.group << " threads " << threads << " fused " << fused
                << " U given " << given;
          }
        }
      }
    }
  }
}

// x (1 x c x h x h) split along the channels into its first ca and the
// other channels, concatenated back in swapped order, then a 3x3 stride-2
// MaxPool (no padding), on a CPU queue of `threads`: the copies' bytes and
// the pool's planes are split over the queue's pool.
std::vector<float> RunSplitConcatPool(uint32_t threads, const std::vector<float>& x, int64_t c,
                                      int64_t h, int64_t ca) {
  const int64_t cb = c - ca, oh = (h - 3) / 2 + 1;
  PlanBuilder b;
  const std::vector<int64_t> xs = {1, c, h, h}, ys = {1, c, oh, oh};
  const std::vector<int64_t> as = {1, ca, h, h}, bs = {1, cb, h, h};
  auto bytes = [](const std::vector<int64_t>& shape) {
    return (PlanBuilder::Bytes(shape, schema::DType::Float32) + 63) / 64 * 64;
  };
  const uint32_t dram =
      b.Domain("dram", 2 * bytes(xs) + bytes(ys) + bytes(as) + bytes(bs) + 64, 64);
  const uint32_t cpu = b.Queue("cpu0", DeviceKind::Cpu, {dram}, threads);
  uint64_t at = 0;
  auto arena = [&](const char* name, const std::vector<int64_t>& shape) {
    const uint32_t t = b.Arena(name, shape, dram, at);
    at += bytes(shape);
    return t;
  };
  const uint32_t xt = arena("x", xs), first = arena("first", as), rest = arena("rest", bs),
                 cat = arena("cat", xs), yt = arena("y", ys);
  const std::vector<int32_t> kernel = {3, 3}, strides = {2, 2}, pads = {0, 0, 0, 0}, dil = {1, 1};
  b.Node("split", Op::Split, cpu, {static_cast<int32_t>(xt)}, {first, rest}, {}, 0,
         schema::Params::AxisParams, schema::CreateAxisParams(b.fbb(), 1).Union());
  b.Node("cat", Op::Concat, cpu, {static_cast<int32_t>(rest), static_cast<int32_t>(first)}, {cat},
         {}, 0, schema::Params::AxisParams, schema::CreateAxisParams(b.fbb(), 1).Union());
  b.Node("pool", Op::MaxPool, cpu, {static_cast<int32_t>(cat)}, {yt}, {}, 0,
         schema::Params::PoolParams,
         schema::CreatePoolParamsDirect(b.fbb(), &kernel, &strides, &pads, &dil).Union());
  b.Inputs({xt});
  b.Outputs({yt});
  const AlignedPlan plan = b.Finish();
  const auto out = RunStream(plan, Mode::kLinuxThreaded, {x});
  return out.empty() ? std::vector<float>() : out[0];
}

// Split, Concat and MaxPool split over 2 and 3 threads give the serial
// kernels' bits, and these are the definitions: the maximum of each window
// (a loop here) over the channels in swapped order.
TEST(Parallel, SplitConcatPoolAcrossThreadCounts) {
  IsaRestore restore;
  // 312 KiB: past the copies' and the pool's thresholds for a split.
  const int64_t c = 24, h = 57, ca = 10, oh = (h - 3) / 2 + 1;
  const std::vector<float> x = Random(static_cast<size_t>(c * h * h), 8);
  std::vector<float> want(static_cast<size_t>(c * oh * oh));
  for (int64_t ch = 0; ch < c; ++ch) {
    const int64_t from = ch < c - ca ? ca + ch : ch - (c - ca);  // the swapped order
    for (int64_t oy = 0; oy < oh; ++oy) {
      for (int64_t ox = 0; ox < oh; ++ox) {
        float m = -__builtin_huge_valf();
        for (int64_t ky = 0; ky < 3; ++ky) {
          for (int64_t kx = 0; kx < 3; ++kx) {
            m = std::max(m, x[static_cast<size_t>((from * h + 2 * oy + ky) * h + 2 * ox + kx)]);
          }
        }
        want[static_cast<size_t>((ch * oh + oy) * oh + ox)] = m;
      }
    }
  }
  for (KernelIsa isa : Isas()) {
    ASSERT_TRUE(SelectKernelIsa(isa));
    for (uint32_t threads : {1u, 2u, 3u}) {
      EXPECT_TRUE(SameBits(RunSplitConcatPool(threads, x, c, h, ca), want))
          << KernelIsaName(isa) << " threads " << threads;
    }
  }
  // The pool's planes do go to the runner's threads.
  ScopedPool pool(2);
  const kernels::PoolPlane g{h, h, oh, oh, 3, 3, 2, 2, 1, 0, 0};
  std::vector<float> y(want.size());
  std::vector<float> swapped(x.size());
  const size_t plane = static_cast<size_t>(h * h);
  std::copy(x.begin() + static_cast<std::ptrdiff_t>(ca * plane), x.end(), swapped.begin());
  std::copy(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(ca * plane),
            swapped.begin() + static_cast<std::ptrdiff_t>((c - ca) * plane));
  kernels::MaxPoolPlanes(g, c, swapped.data(), y.data());
  EXPECT_GE(pool.splits(), 1);
  EXPECT_TRUE(SameBits(y, want));
}

}  // namespace
}  // namespace baton::testing
