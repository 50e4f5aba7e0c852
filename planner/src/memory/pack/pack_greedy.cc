// The packer's fast engine: greedy placement under several orderings and two
// placement rules, then hill climbing over the ordering (after Vela's
// hillclimb allocator). Everything here is deterministic.

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <numeric>
#include <utility>
#include <vector>

#include "pack_internal.h"

namespace baton::planner::pack_detail {
namespace {

// Places order[from..] given that order[..from) are placed at `offsets`
// (units); `pos` is the inverse of `order`. The caller measures the height.
class Placer {
 public:
  explicit Placer(const Component& c) : c_(c) {}

  void PlaceFrom(const std::vector<int>& order, const std::vector<int>& pos, int from, Fit fit,
                 std::vector<int64_t>* offsets) {
    if (!c_.has_adjacency) return PlaceDense(order, from, fit, offsets);
    for (int t = from; t < c_.n; ++t) {
      const int i = order[t];
      busy_.clear();
      for (int k = c_.adj_begin[i]; k < c_.adj_begin[i + 1]; ++k) {
        const int j = c_.adj[k];
        if (pos[j] < t) busy_.emplace_back((*offsets)[j], (*offsets)[j] + c_.size[j]);
      }
      std::sort(busy_.begin(), busy_.end());
      (*offsets)[i] = Gap(c_.size[i], fit);
    }
  }

 private:
  // Without adjacency lists: keep the placed buffers sorted by offset and
  // scan them all, so each placement costs O(n) and needs no sorting.
  void PlaceDense(const std::vector<int>& order, int from, Fit fit, std::vector<int64_t>* offsets) {
    placed_.clear();
    for (int t = 0; t < from; ++t) placed_.emplace_back((*offsets)[order[t]], order[t]);
    std::sort(placed_.begin(), placed_.end());
    extra_mark_.assign(c_.n, -1);
    for (int t = from; t < c_.n; ++t) {
      const int i = order[t];
      for (int k = c_.extra_begin[i]; k < c_.extra_begin[i + 1]; ++k) extra_mark_[c_.extra[k]] = i;
      busy_.clear();
      for (const auto& [offset, j] : placed_) {
        if (c_.Overlap(i, j) || extra_mark_[j] == i) {
          busy_.emplace_back(offset, offset + c_.size[j]);
        }
      }
      (*offsets)[i] = Gap(c_.size[i], fit);
      const std::pair<int64_t, int> entry((*offsets)[i], i);
      placed_.insert(std::upper_bound(placed_.begin(), placed_.end(), entry), entry);
    }
  }

  // Lowest offset of the first (kFirst) or tightest (kBest) free gap in busy_
  // (sorted by offset) that holds `size`; the top of everything if none does.
  int64_t Gap(int64_t size, Fit fit) {
    int64_t reach = 0;
    int64_t best = -1, best_gap = std::numeric_limits<int64_t>::max();
    for (const auto& [lo, hi] : busy_) {
      if (lo > reach) {
        const int64_t gap = lo - reach;
        if (gap >= size) {
          if (fit == Fit::kFirst) return reach;
          if (gap < best_gap) best_gap = gap, best = reach;
        }
      }
      reach = std::max(reach, hi);
    }
    return best >= 0 ? best : reach;
  }

  const Component& c_;
  std::vector<std::pair<int64_t, int64_t>> busy_;
  std::vector<std::pair<int64_t, int>> placed_;
  std::vector<int> extra_mark_;
};

std::vector<int> Inverse(const std::vector<int>& order) {
  std::vector<int> pos(order.size());
  for (size_t t = 0; t < order.size(); ++t) pos[order[t]] = static_cast<int>(t);
  return pos;
}

// Per buffer: the largest total of units live at any instant of its lifetime
// (MiniMalloc's "total"), via a sparse table over the live profile.
std::vector<int64_t> MaxLiveOverLifetime(const Component& c) {
  std::vector<int64_t> times;
  times.reserve(2 * c.n);
  for (int i = 0; i < c.n; ++i) {
    times.push_back(c.lower[i]);
    times.push_back(c.upper[i]);
  }
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  const int m = static_cast<int>(times.size());
  auto index = [&](int64_t t) {
    return static_cast<int>(std::lower_bound(times.begin(), times.end(), t) - times.begin());
  };
  std::vector<int64_t> live(m + 1, 0);  // live[k]: over [times[k], times[k+1])
  for (int i = 0; i < c.n; ++i) {
    live[index(c.lower[i])] += c.size[i];
    live[index(c.upper[i])] -= c.size[i];
  }
  for (int k = 1; k < m; ++k) live[k] += live[k - 1];
  std::vector<std::vector<int64_t>> table{std::vector<int64_t>(live.begin(), live.begin() + m)};
  for (int w = 1; 2 * w <= m; w *= 2) {
    const auto& prev = table.back();
    std::vector<int64_t> next(m - 2 * w + 1);
    for (int k = 0; k + 2 * w <= m; ++k) next[k] = std::max(prev[k], prev[k + w]);
    table.push_back(std::move(next));
  }
  std::vector<int64_t> result(c.n);
  for (int i = 0; i < c.n; ++i) {
    const int a = index(c.lower[i]), b = index(c.upper[i]);  // segments [a, b)
    int level = 0;
    while ((2 << level) <= b - a) ++level;
    result[i] = std::max(table[level][a], table[level][b - (1 << level)]);
  }
  return result;
}

uint64_t NextRandom(uint64_t* state) {  // splitmix64
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// A move of the hill climb: a buffer that reaches the top, and an
// earlier-placed buffer that conflicts with it (any earlier one if none
// does, any other if it comes first). Swapping them in the order lets the
// critical buffer claim space first. `critical` and `earlier` are scratch.
std::pair<int, int> PickSwap(const Component& c, const std::vector<int>& order,
                             const std::vector<int>& pos, const std::vector<int64_t>& offsets,
                             int64_t height, uint64_t* rng, std::vector<int>* critical,
                             std::vector<int>* earlier) {
  critical->clear();
  for (int i = 0; i < c.n; ++i) {
    if (offsets[i] * c.alignment + c.bytes[i] == height) critical->push_back(i);
  }
  const int a = (*critical)[NextRandom(rng) % critical->size()];
  earlier->clear();
  if (c.has_adjacency) {
    for (int k = c.adj_begin[a]; k < c.adj_begin[a + 1]; ++k) {
      if (pos[c.adj[k]] < pos[a]) earlier->push_back(c.adj[k]);
    }
  }
  int b;
  if (!earlier->empty()) {
    b = (*earlier)[NextRandom(rng) % earlier->size()];
  } else if (pos[a] > 0) {
    b = order[NextRandom(rng) % pos[a]];
  } else {
    b = order[1 + NextRandom(rng) % (c.n - 1)];
  }
  return {a, b};
}

}  // namespace

int64_t GreedyPack(const Component& c, const std::vector<int>& order, Fit fit,
                   std::vector<int64_t>* out_offsets) {
  out_offsets->assign(c.n, 0);
  Placer placer(c);
  placer.PlaceFrom(order, Inverse(order), 0, fit, out_offsets);
  return c.HeightBytes(*out_offsets);
}

GreedyResult GreedyPortfolio(const Component& c) {
  const std::vector<int64_t> total = MaxLiveOverLifetime(c);
  // Orderings, each sorted by a descending key (the index breaks the
  // remaining ties): greedy by size, busiest instant first, by area, longest
  // first, and in time (online first fit).
  constexpr int kOrderings = 5;
  auto key = [&](int ordering, int i) -> std::array<int64_t, 3> {
    const int64_t length = c.upper[i] - c.lower[i];
    switch (ordering) {
      case 0:
        return {c.size[i], length, 0};
      case 1:
        return {total[i], c.size[i], length};
      case 2:
        return {Area(length, c.size[i]), c.size[i], 0};
      case 3:
        return {length, c.size[i], 0};
      default:
        return {-c.lower[i], c.size[i], 0};
    }
  };
  GreedyResult best;
  best.height = -1;
  std::vector<int64_t> offsets;
  std::vector<std::array<int64_t, 3>> k(c.n);
  for (int ordering = 0; ordering < kOrderings; ++ordering) {
    for (int i = 0; i < c.n; ++i) k[i] = key(ordering, i);
    std::vector<int> order(c.n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return k[a] > k[b]; });
    for (Fit fit : {Fit::kBest, Fit::kFirst}) {
      const int64_t height = GreedyPack(c, order, fit, &offsets);
      if (best.height < 0 || height < best.height) {
        best.height = height;
        best.offsets = offsets;
        best.order = order;
        best.fit = fit;
      }
    }
  }
  return best;
}

GreedyResult HillClimb(const Component& c, GreedyResult start, int64_t floor_bytes,
                       int64_t max_iterations, Clock::time_point deadline) {
  GreedyResult best = start;
  if (c.n < 2) return best;
  std::vector<int> order = start.order;
  std::vector<int> pos = Inverse(order);
  std::vector<int64_t> offsets = start.offsets;
  int64_t height = start.height;
  Placer placer(c);
  uint64_t rng = 0x5EEDBA7011ull + static_cast<uint64_t>(c.n);
  std::vector<int> critical, earlier;
  int64_t since_best = 0;
  for (int64_t it = 0; it < max_iterations && best.height > floor_bytes; ++it) {
    if ((it & 7) == 0 && Clock::now() >= deadline) break;
    const auto [a, b] = PickSwap(c, order, pos, offsets, height, &rng, &critical, &earlier);
    const int from = std::min(pos[a], pos[b]);
    std::swap(order[pos[a]], order[pos[b]]);
    std::swap(pos[a], pos[b]);
    std::vector<int64_t> trial = offsets;
    placer.PlaceFrom(order, pos, from, start.fit, &trial);
    const int64_t trial_height = c.HeightBytes(trial);
    if (trial_height <= height) {
      offsets.swap(trial);
      height = trial_height;
      if (height < best.height) {
        best.height = height;
        best.offsets = offsets;
        best.order = order;
        since_best = 0;
        continue;
      }
    } else {
      std::swap(order[pos[a]], order[pos[b]]);
      std::swap(pos[a], pos[b]);
    }
    // Long plateaus: go back to the best ordering seen.
    if (++since_best % 256 == 0) {
      order = best.order;
      pos = Inverse(order);
      offsets = best.offsets;
      height = best.height;
    }
  }
  return best;
}

}  // namespace baton::planner::pack_detail
