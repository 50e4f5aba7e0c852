// The exact search's state and inference; see pack_search_state.h, and
// pack_search.cc for the rules.

#include "pack_search_state.h"

#include <algorithm>
#include <array>
#include <tuple>

namespace baton::planner::pack_detail {
namespace {

uint64_t Mix(uint64_t z) {  // splitmix64's finalizer
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
uint64_t Mix(int64_t z) { return Mix(static_cast<uint64_t>(z)); }

}  // namespace

bool SearchState::Init() {
  const int n = c_.n;
  for (int i = 0; i < n; ++i) {
    if (caps_[i] < c_.size[i]) return false;
    cap_max_ = std::max(cap_max_, caps_[i]);
  }
  if (!InitSections()) return false;
  InitRuns();
  min_size_ = *std::min_element(c_.size.begin(), c_.size.end());
  FindTwins();
  off_.assign(n, -1);
  minoff_.assign(n, 0);
  solution_.assign(n, 0);
  open_.resize(n);
  for (int i = 0; i < n; ++i) open_[i] = c_.adj_begin[i + 1] - c_.adj_begin[i];
  rank_.resize(n);
  log_.reserve(1 << 12);
  return true;
}

// Section totals, and each section's first witness (any member will do while
// nothing is placed and the total fits).
bool SearchState::InitSections() {
  const int sections = c_.sections();
  total_.assign(sections, 0);
  witness_.assign(sections, -1);
  for (int s = 0; s < sections; ++s) {
    for (int k = c_.sec_begin[s]; k < c_.sec_begin[s + 1]; ++k) {
      total_[s] += c_.size[c_.sec_buf[k]];
    }
    if (total_[s] > cap_max_) return false;
    witness_[s] = c_.sec_buf[c_.sec_begin[s]];
  }
  return true;
}

// Each buffer's run of sections, and for interval-only components how many
// buffers span each boundary (decomposition happens where none is left).
void SearchState::InitRuns() {
  const int n = c_.n;
  first_sec_.assign(n, 0);
  last_sec_.assign(n, -1);
  cuts_.assign(std::max(c_.sections(), 1), 0);
  for (int i = 0; i < n; ++i) {
    if (c_.mem_begin[i] == c_.mem_begin[i + 1]) continue;
    first_sec_[i] = c_.mem_sec[c_.mem_begin[i]];
    last_sec_[i] = c_.mem_sec[c_.mem_begin[i + 1] - 1];
    if (c_.interval_only) {
      for (int s = first_sec_[i]; s < last_sec_[i]; ++s) ++cuts_[s];  // spans s | s+1
    }
  }
}

// Identical buffers (same lifetime and bytes, interval-only) are
// interchangeable: place them in index order, which every ranking keeps (the
// index breaks ties between equal keys).
void SearchState::FindTwins() {
  const int n = c_.n;
  twin_.assign(n, -1);
  if (!c_.interval_only) return;
  std::vector<int> by_key(n);
  for (int i = 0; i < n; ++i) by_key[i] = i;
  auto key = [&](int i) { return std::make_tuple(c_.lower[i], c_.upper[i], c_.bytes[i], i); };
  std::sort(by_key.begin(), by_key.end(), [&](int a, int b) { return key(a) < key(b); });
  for (int k = 1; k < n; ++k) {
    const int a = by_key[k - 1], b = by_key[k];
    if (c_.lower[a] == c_.lower[b] && c_.upper[a] == c_.upper[b] && c_.bytes[a] == c_.bytes[b]) {
      twin_[b] = a;
    }
  }
}

// "Width" is the lifetime, or the degree when intervals do not describe the
// conflicts. Orderings 0-2 are MiniMalloc's; the others add diversity for
// restarts, the last three by jittering the total with a hash of the
// buffer's shape. Identical buffers always get equal keys, so the index
// orders them.
void SearchState::Rank(const std::vector<int>& buffers) {
  std::vector<std::array<int64_t, 4>> key;
  key.reserve(buffers.size());
  for (int i : buffers) {
    int64_t total = 0;
    for (int k = c_.mem_begin[i]; k < c_.mem_begin[i + 1]; ++k) {
      total = std::max(total, total_[c_.mem_sec[k]]);
    }
    const int64_t width =
        c_.interval_only ? c_.upper[i] - c_.lower[i] : c_.adj_begin[i + 1] - c_.adj_begin[i];
    const int64_t area = Area(width, c_.size[i]);
    switch (heuristic_) {
      case 0:
        key.push_back({width, area, total, -i});
        break;
      case 1:
        key.push_back({total, area, width, -i});
        break;
      case 2:
        key.push_back({total, width, area, -i});
        break;
      case 3:
        key.push_back({c_.size[i], width, total, -i});
        break;
      case 4:
        key.push_back({area, total, width, -i});
        break;
      default: {
        const uint64_t h = Mix(static_cast<uint64_t>(heuristic_) ^ Mix(c_.lower[i]) ^
                               Mix(c_.upper[i] + 1) ^ Mix(c_.size[i] + 2));
        const int64_t jitter = static_cast<int64_t>(h % 512);
        key.push_back({total + (total >> 10) * jitter, area, width, -i});
        break;
      }
    }
  }
  std::vector<int> order(buffers.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = static_cast<int>(k);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return key[a] > key[b]; });
  for (size_t r = 0; r < order.size(); ++r) rank_[buffers[order[r]]] = static_cast<int>(r);
}

// The checks run in this order, and each may stop early: RaiseConflicts
// looks for witnesses given the min offsets raised so far, and the tight
// sections are checked last, once every conflict of b has been raised.
bool SearchState::Place(int b, const Part& p, int64_t max_total, bool* out_split) {
  const int64_t o = minoff_[b];
  *out_split = Occupy(b, o, p);
  return FindTightSections(o, p, max_total) && KeepWitnesses(b) &&
         RaiseConflicts(b, o + c_.size[b]) && TightSectionsCanFill(b, o);
}

// The bookkeeping of putting b at o; returns whether a boundary inside p lost
// its last spanning buffer.
bool SearchState::Occupy(int b, int64_t o, const Part& p) {
  off_[b] = o;
  solution_[b] = o;
  for (int k = c_.mem_begin[b]; k < c_.mem_begin[b + 1]; ++k) total_[c_.mem_sec[k]] -= c_.size[b];
  bool split = false;
  if (c_.interval_only) {
    for (int s = first_sec_[b]; s < last_sec_[b]; ++s) {
      if (--cuts_[s] == 0 && s >= p.first_sec && s < p.last_sec) split = true;
    }
  }
  for (int k = c_.adj_begin[b]; k < c_.adj_begin[b + 1]; ++k) --open_[c_.adj[k]];
  return split;
}

// Every unplaced buffer goes at or above o: a section whose remaining total
// no longer fits above o is lost. One whose total exactly fills [o,
// capacity) goes into tight_, to be checked by TightSectionsCanFill.
bool SearchState::FindTightSections(int64_t o, const Part& p, int64_t max_total) {
  tight_.clear();
  if (o + max_total + min_size_ <= cap_max_) return true;  // none can be tight
  for (int s = p.first_sec; s <= p.last_sec; ++s) {
    if (total_[s] == 0 || o + total_[s] + min_size_ <= cap_max_) continue;
    if (o + total_[s] > cap_max_) return false;
    tight_.push_back(s);
  }
  return true;
}

// The sections b was the witness of need another.
bool SearchState::KeepWitnesses(int b) {
  for (int k = c_.mem_begin[b]; k < c_.mem_begin[b + 1]; ++k) {
    const int s = c_.mem_sec[k];
    if (witness_[s] == b && !FindWitness(s)) return false;
  }
  return true;
}

// The unplaced conflicts of b now go at `top` or above: each must still fit
// its cap, and a section one of them witnessed needs another once that
// buffer's min offset exceeds what the section can spare.
bool SearchState::RaiseConflicts(int b, int64_t top) {
  for (int k = c_.adj_begin[b]; k < c_.adj_begin[b + 1]; ++k) {
    const int j = c_.adj[k];
    if (off_[j] >= 0 || minoff_[j] >= top) continue;
    Set(&minoff_[j], top);
    if (top + c_.size[j] > caps_[j]) return false;
    for (int m = c_.mem_begin[j]; m < c_.mem_begin[j + 1]; ++m) {
      const int s = c_.mem_sec[m];
      if (witness_[s] == j && top > cap_max_ - total_[s] && !FindWitness(s)) return false;
    }
  }
  return true;
}

// A tight section, with less than the smallest buffer of room to spare above
// o, must continue with a buffer the canonical order can still put at its
// min offset, low enough. One that comes earlier in that order (min offset
// below o, or at o with a lower rank than b) can only be lifted onto a later
// buffer, which puts it at least o + min_size_ high.
bool SearchState::TightSectionsCanFill(int b, int64_t o) const {
  for (int s : tight_) {
    const int64_t slack = cap_max_ - total_[s];
    bool found = false;
    for (int k = c_.sec_begin[s]; k < c_.sec_begin[s + 1] && !found; ++k) {
      const int j = c_.sec_buf[k];
      found = off_[j] < 0 && minoff_[j] <= slack &&
              (minoff_[j] > o || (minoff_[j] == o && rank_[j] > rank_[b]));
    }
    if (!found) return false;
  }
  return true;
}

// Section inference without maintained floors: each section keeps a witness,
// an unplaced member whose min offset is at most capacity - total (so the
// floor is low enough); only a lost witness makes us look for another, and
// finding none proves the section cannot fit.
bool SearchState::FindWitness(int s) {
  const int64_t slack = cap_max_ - total_[s];
  for (int k = c_.sec_begin[s]; k < c_.sec_begin[s + 1]; ++k) {
    const int j = c_.sec_buf[k];
    if (off_[j] < 0 && minoff_[j] <= slack) {
      Set(&witness_[s], j);
      return true;
    }
  }
  return total_[s] == 0;
}

void SearchState::Unplace(int b, size_t mark) {
  while (log_.size() > mark) {
    *log_.back().first = log_.back().second;
    log_.pop_back();
  }
  for (int k = c_.adj_begin[b]; k < c_.adj_begin[b + 1]; ++k) ++open_[c_.adj[k]];
  if (c_.interval_only) {
    for (int s = first_sec_[b]; s < last_sec_[b]; ++s) ++cuts_[s];
  }
  for (int k = c_.mem_begin[b]; k < c_.mem_begin[b + 1]; ++k) total_[c_.mem_sec[k]] += c_.size[b];
  off_[b] = -1;
}

}  // namespace baton::planner::pack_detail
