#pragma once
// Test helpers for the arena packer: random problems, and reference answers
// computed without any of the packer's code (brute force, a plain first-fit
// greedy, a time sweep for the lower bound).

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "baton/planner/memory/pack.h"

namespace baton::pack_test {

using planner::PackBuffer;
using planner::PackProblem;

// n buffers, lifetimes within [0, horizon), sizes in [1, max_size]; each
// pair is listed as an extra conflict with probability extra_p.
inline PackProblem RandomProblem(std::mt19937_64& rng, int n, int64_t horizon, int64_t max_size,
                                 int64_t alignment = 1, double extra_p = 0.0) {
  PackProblem p;
  p.alignment = alignment;
  std::uniform_int_distribution<int64_t> time(0, horizon - 1), size(1, max_size);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  for (int i = 0; i < n; ++i) {
    int64_t a = time(rng), b = time(rng);
    if (a > b) std::swap(a, b);
    p.buffers.push_back({"b" + std::to_string(i), a, b + 1, size(rng)});
  }
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) {
      if (coin(rng) < extra_p) p.extra_conflicts.emplace_back(i, j);
    }
  }
  return p;
}

// A perfect packing: the rectangle [0, horizon) x [0, height) cut by
// guillotine cuts into n buffers (time x bytes), as MiniMalloc's benchmark
// instances are made. Its optimum is `height` and so is its lower bound.
inline PackProblem TiledProblem(std::mt19937_64& rng, int n, int64_t horizon, int64_t height) {
  struct Rect {
    int64_t t0, t1, m0, m1;
  };
  std::vector<Rect> rects = {{0, horizon, 0, height}};
  while (static_cast<int>(rects.size()) < n) {
    // Cut the largest piece that can be cut, along a random axis.
    size_t pick = 0;
    for (size_t k = 1; k < rects.size(); ++k) {
      const auto area = [](const Rect& r) { return (r.t1 - r.t0) * (r.m1 - r.m0); };
      if (area(rects[k]) > area(rects[pick])) pick = k;
    }
    Rect r = rects[pick];
    const bool by_time = (rng() % 2 == 0 && r.t1 - r.t0 > 1) || r.m1 - r.m0 < 2;
    if (by_time && r.t1 - r.t0 < 2) break;
    Rect a = r, b = r;
    if (by_time) {
      a.t1 = b.t0 = r.t0 + 1 + static_cast<int64_t>(rng() % (r.t1 - r.t0 - 1));
    } else {
      a.m1 = b.m0 = r.m0 + 1 + static_cast<int64_t>(rng() % (r.m1 - r.m0 - 1));
    }
    rects[pick] = a;
    rects.push_back(b);
  }
  PackProblem p;
  for (size_t k = 0; k < rects.size(); ++k) {
    p.buffers.push_back(
        {"r" + std::to_string(k), rects[k].t0, rects[k].t1, rects[k].m1 - rects[k].m0});
  }
  return p;
}

inline std::vector<std::vector<bool>> ConflictMatrix(const PackProblem& p) {
  const size_t n = p.buffers.size();
  std::vector<std::vector<bool>> c(n, std::vector<bool>(n, false));
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) {
      const PackBuffer& x = p.buffers[i];
      const PackBuffer& y = p.buffers[j];
      c[i][j] = i != j && x.lower < y.upper && y.lower < x.upper;
    }
  }
  for (const auto& [a, b] : p.extra_conflicts) c[a][b] = c[b][a] = true;
  return c;
}

inline int64_t AlignUp(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

// First fit in decreasing size order (TFLM's greedy): each buffer at the
// lowest aligned offset clear of every conflicting buffer placed before it.
inline int64_t FirstFitHeight(const PackProblem& p) {
  const size_t n = p.buffers.size();
  const auto conflict = ConflictMatrix(p);
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return p.buffers[a].size > p.buffers[b].size; });
  std::vector<int64_t> offset(n, -1);
  int64_t height = 0;
  for (size_t t = 0; t < n; ++t) {
    const size_t i = order[t];
    std::vector<size_t> placed;  // conflicting buffers placed before i
    std::vector<int64_t> tries = {0};
    for (size_t s = 0; s < t; ++s) {
      const size_t j = order[s];
      if (!conflict[i][j]) continue;
      placed.push_back(j);
      tries.push_back(AlignUp(offset[j] + p.buffers[j].size, p.alignment));
    }
    std::sort(tries.begin(), tries.end());
    for (int64_t o : tries) {
      bool clear = true;
      for (size_t j : placed) {
        clear = clear && (o + p.buffers[i].size <= offset[j] || offset[j] + p.buffers[j].size <= o);
      }
      if (clear) {
        offset[i] = o;
        break;
      }
    }
    height = std::max(height, offset[i] + p.buffers[i].size);
  }
  return height;
}

// Largest total size live at one integer time (lifetimes are half-open).
inline int64_t SweepLowerBound(const PackProblem& p) {
  int64_t lo = INT64_MAX, hi = INT64_MIN, best = 0;
  for (const PackBuffer& b : p.buffers) lo = std::min(lo, b.lower), hi = std::max(hi, b.upper);
  for (int64_t t = lo; t < hi; ++t) {
    int64_t live = 0;
    for (const PackBuffer& b : p.buffers) live += (b.lower <= t && t < b.upper) ? b.size : 0;
    best = std::max(best, live);
  }
  return best;
}

// Whether every buffer fits below `height` at aligned offsets: plain
// backtracking over all offsets, largest buffers first.
inline bool BruteFits(const PackProblem& p, const std::vector<std::vector<bool>>& conflict,
                      int64_t height) {
  const size_t n = p.buffers.size();
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return p.buffers[a].size > p.buffers[b].size; });
  std::vector<int64_t> offset(n, -1);
  struct Rec {
    const PackProblem& p;
    const std::vector<std::vector<bool>>& conflict;
    const std::vector<size_t>& order;
    std::vector<int64_t>& offset;
    int64_t height;
    bool Go(size_t t) {
      if (t == order.size()) return true;
      const size_t i = order[t];
      const int64_t size = p.buffers[i].size;
      for (int64_t o = 0; o + size <= height; o += p.alignment) {
        bool clear = true;
        for (size_t s = 0; s < t && clear; ++s) {
          const size_t j = order[s];
          clear = !conflict[i][j] || o + size <= offset[j] || offset[j] + p.buffers[j].size <= o;
        }
        if (!clear) continue;
        offset[i] = o;
        if (Go(t + 1)) return true;
      }
      return false;
    }
  };
  return Rec{p, conflict, order, offset, height}.Go(0);
}

inline int64_t BruteOptimum(const PackProblem& p) {
  const auto conflict = ConflictMatrix(p);
  int64_t height = 0;
  for (const PackBuffer& b : p.buffers) height = std::max(height, b.size);
  while (!BruteFits(p, conflict, height)) ++height;
  return height;
}

inline std::string MiniMallocDir() {
  return std::string(BATON_SOURCE_DIR) + "/../shared/bench/minimalloc/";
}

inline bool ReadText(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

}  // namespace baton::pack_test
