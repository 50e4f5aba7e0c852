// google-benchmark for the arena packer (docs/packing.md).
//   MiniMalloc/<X>:      the challenging set at its capacity of 1,048,576 bytes
//   MiniMallocMin/<X>:   the same without a capacity (minimize, 5 s limit)
//   Synthetic/<n>/<s>:   n buffers of a model-like profile, s seconds of search
//   Tiling/<n>/<c>:      guillotine tilings of a 2^20-byte arena (perfect packings),
//                        at that capacity (c = 1) or minimized (c = 0), 10 s limit
// Counters: height, lower_bound, capacity (bytes) and excess = height /
// max(capacity, lower bound) - 1. Run:
//   build/tests/baton_pack_bench --benchmark_filter=MiniMalloc/
// Instances missing from ../shared are skipped with an error message.

#include <benchmark/benchmark.h>

#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "baton/planner/memory/pack.h"

namespace {

using baton::planner::PackBuffer;
using baton::planner::PackProblem;
using baton::planner::PackSolution;

constexpr int64_t kMiniMallocCapacity = 1048576;

bool LoadMiniMalloc(const std::string& name, PackProblem* p) {
  std::ifstream in(std::string(BATON_SOURCE_DIR) + "/../shared/bench/minimalloc/" + name +
                   ".1048576.csv");
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  auto buffers = baton::planner::ReadPackCsv(ss.str());
  if (!buffers.ok()) return false;
  p->buffers = std::move(buffers.value());
  return true;
}

void Run(benchmark::State& state, const PackProblem& p) {
  PackSolution last;
  for (auto _ : state) {
    auto r = baton::planner::Pack(p);
    if (!r.ok()) {
      state.SkipWithError(r.error().c_str());
      return;
    }
    last = std::move(r).value();
    benchmark::DoNotOptimize(last.height);
  }
  if (!baton::planner::ValidatePacking(p, last).ok()) {
    state.SkipWithError("invalid packing");
    return;
  }
  const double reference = static_cast<double>(std::max(p.capacity, last.lower_bound));
  state.counters["buffers"] = static_cast<double>(p.buffers.size());
  state.counters["height"] = static_cast<double>(last.height);
  state.counters["lower_bound"] = static_cast<double>(last.lower_bound);
  state.counters["capacity"] = static_cast<double>(p.capacity);
  state.counters["excess"] = static_cast<double>(last.height) / reference - 1.0;
}

void BM_MiniMalloc(benchmark::State& state, const char* name, bool with_capacity) {
  PackProblem p;
  if (!LoadMiniMalloc(name, &p)) {
    state.SkipWithError("../shared/bench/minimalloc not found");
    for (auto _ : state) {
    }
    return;
  }
  p.capacity = with_capacity ? kMiniMallocCapacity : 0;
  p.time_limit_s = with_capacity ? 30 : 5;
  Run(state, p);
}

// Model-like lifetimes: most buffers short-lived activations, one in fifty
// long-lived (skip connections, weights kept in RAM); sizes 1-64 KiB.
PackProblem Synthetic(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> kib(1, 64);
  PackProblem p;
  for (int i = 0; i < n; ++i) {
    const int64_t length = rng() % 50 == 0 ? 1 + static_cast<int64_t>(rng() % (n / 5 + 1))
                                           : 1 + static_cast<int64_t>(rng() % 8);
    p.buffers.push_back({"t" + std::to_string(i), i, i + length, 1024 * kib(rng)});
  }
  return p;
}

void BM_Synthetic(benchmark::State& state) {
  PackProblem p = Synthetic(static_cast<int>(state.range(0)), 1);
  p.time_limit_s = static_cast<double>(state.range(1));
  Run(state, p);
}

// Guillotine tilings: the optimum equals the lower bound (2^20).
PackProblem Tiling(int n, uint64_t seed) {
  struct Rect {
    int64_t t0, t1, m0, m1;
  };
  std::mt19937_64 rng(seed);
  std::vector<Rect> rects = {{0, 1 << 20, 0, 1 << 20}};
  while (static_cast<int>(rects.size()) < n) {
    const size_t pick = rng() % rects.size();
    Rect r = rects[pick], a = r, b = r;
    if (rng() % 2 == 0 && r.t1 - r.t0 >= 2048) {
      a.t1 = b.t0 = r.t0 + 1024 * (1 + static_cast<int64_t>(rng() % ((r.t1 - r.t0) / 1024 - 1)));
    } else if (r.m1 - r.m0 >= 2048) {
      a.m1 = b.m0 = r.m0 + 1024 * (1 + static_cast<int64_t>(rng() % ((r.m1 - r.m0) / 1024 - 1)));
    } else {
      continue;
    }
    rects[pick] = a;
    rects.push_back(b);
  }
  PackProblem p;
  for (size_t k = 0; k < rects.size(); ++k) {
    p.buffers.push_back({std::to_string(k), rects[k].t0, rects[k].t1, rects[k].m1 - rects[k].m0});
  }
  return p;
}

void BM_Tiling(benchmark::State& state) {
  PackProblem p = Tiling(static_cast<int>(state.range(0)), 7);
  p.capacity = state.range(1) ? int64_t{1} << 20 : 0;
  p.time_limit_s = 10;
  Run(state, p);
}

const char* const kInstances[] = {"A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K"};

void RegisterAll() {
  for (const char* name : kInstances) {
    benchmark::RegisterBenchmark((std::string("MiniMalloc/") + name).c_str(), BM_MiniMalloc, name,
                                 true)
        ->Unit(benchmark::kMillisecond)
        ->Iterations(1);
  }
  for (const char* name : kInstances) {
    benchmark::RegisterBenchmark((std::string("MiniMallocMin/") + name).c_str(), BM_MiniMalloc,
                                 name, false)
        ->Unit(benchmark::kMillisecond)
        ->Iterations(1);
  }
  benchmark::RegisterBenchmark("Synthetic", BM_Synthetic)
      ->Args({1000, 0})
      ->Args({1000, 1})
      ->Args({10000, 0})
      ->Args({10000, 2})
      ->Unit(benchmark::kMillisecond)
      ->Iterations(1);
  benchmark::RegisterBenchmark("Tiling", BM_Tiling)
      ->Args({100, 1})
      ->Args({300, 1})
      ->Args({1000, 1})
      ->Args({1000, 0})
      ->Unit(benchmark::kMillisecond)
      ->Iterations(1);
}

}  // namespace

int main(int argc, char** argv) {
  RegisterAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
