// The packer's exact engine: depth-first search over canonical packings, in
// the spirit of MiniMalloc (Moffitt, ASPLOS 2023).
//
// Canonical packings. Take any packing and keep moving a buffer to a lower
// free offset while one exists. In the result every buffer sits exactly on
// the top of a conflicting buffer (or at 0), so listing the buffers by
// (offset, rank) and placing each at the lowest offset above its already
// placed conflicts rebuilds it. The search therefore only
//   - places buffers in increasing (offset, rank) order ("canonical"),
//   - each at its min offset: the top of its highest placed conflict,
//   - never at or above the top some unplaced buffer would reach at its own
//     min offset (that buffer could drop into the gap: "dominance"),
//   - never past a buffer with no unplaced conflict: its min offset can no
//     longer change, so its place in the order is fixed ("hatless").
// Inference. A section is a clique of the conflict graph (see Component). Its
// unplaced buffers stack above the section's floor, the least of their min
// offsets and no lower than the current offset, so floor + their total must
// stay within the capacity. A section filled up to the current offset needs
// a buffer the canonical order can still put right there ("tight sections",
// see Place). Identical buffers go in index order.
// Decomposition (interval-only components). When no unplaced buffer spans the
// boundary between two consecutive sections, the two sides are independent:
// each is solved on its own, re-ranked by what is left in its sections.
//
// Every branch is determined by the input, the static ordering and the node
// budget; a time-out only cuts the search short.

#include <algorithm>
#include <array>
#include <deque>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

#include "pack_internal.h"

namespace baton::planner::pack_detail {
namespace {

constexpr int64_t kInf = std::numeric_limits<int64_t>::max() / 4;
// Enter()'s "no outcome yet": a value no search returns.
constexpr SearchOutcome kGoOn = static_cast<SearchOutcome>(-1);

class Search {
 public:
  Search(const Component& c, const std::vector<int64_t>& caps, int heuristic, int64_t budget,
         Clock::time_point deadline)
      : c_(c), caps_(caps), heuristic_(heuristic), budget_(budget), deadline_(deadline) {}

  SearchOutcome Run(std::vector<int64_t>* out_offsets) {
    const int n = c_.n;
    if (n == 0) {
      out_offsets->clear();
      return SearchOutcome::kFound;
    }
    for (int i = 0; i < n; ++i) {
      if (caps_[i] < c_.size[i]) return SearchOutcome::kInfeasible;
      cap_max_ = std::max(cap_max_, caps_[i]);
    }
    const int sections = c_.sections();
    total_.assign(sections, 0);
    witness_.assign(sections, -1);
    for (int s = 0; s < sections; ++s) {
      for (int k = c_.sec_begin[s]; k < c_.sec_begin[s + 1]; ++k) {
        total_[s] += c_.size[c_.sec_buf[k]];
      }
      if (total_[s] > cap_max_) return SearchOutcome::kInfeasible;
      witness_[s] = c_.sec_buf[c_.sec_begin[s]];
    }
    first_sec_.assign(n, 0);
    last_sec_.assign(n, -1);
    cuts_.assign(std::max(sections, 1), 0);
    for (int i = 0; i < n; ++i) {
      if (c_.mem_begin[i] == c_.mem_begin[i + 1]) continue;
      first_sec_[i] = c_.mem_sec[c_.mem_begin[i]];
      last_sec_[i] = c_.mem_sec[c_.mem_begin[i + 1] - 1];
      if (c_.interval_only) {
        for (int s = first_sec_[i]; s < last_sec_[i]; ++s) ++cuts_[s];  // spans s | s+1
      }
    }
    min_size_ = *std::min_element(c_.size.begin(), c_.size.end());
    // Identical buffers (same lifetime and bytes, interval-only) are
    // interchangeable: place them in index order, which every ranking keeps
    // (the index breaks ties between equal keys).
    twin_.assign(n, -1);
    if (c_.interval_only) {
      std::vector<int> by_key(n);
      for (int i = 0; i < n; ++i) by_key[i] = i;
      auto key = [&](int i) { return std::make_tuple(c_.lower[i], c_.upper[i], c_.bytes[i], i); };
      std::sort(by_key.begin(), by_key.end(), [&](int a, int b) { return key(a) < key(b); });
      for (int k = 1; k < n; ++k) {
        const int a = by_key[k - 1], b = by_key[k];
        if (c_.lower[a] == c_.lower[b] && c_.upper[a] == c_.upper[b] &&
            c_.bytes[a] == c_.bytes[b]) {
          twin_[b] = a;
        }
      }
    }
    off_.assign(n, -1);
    minoff_.assign(n, 0);
    solution_.assign(n, 0);
    open_.resize(n);
    for (int i = 0; i < n; ++i) open_[i] = c_.adj_begin[i + 1] - c_.adj_begin[i];
    rank_.resize(n);
    Part root;
    root.first_sec = 0;
    root.last_sec = sections - 1;
    for (int i = 0; i < n; ++i) root.buffers.push_back(i);
    RankBuffers(root.buffers);
    log_.reserve(1 << 12);
    frames_.reserve(n + 16);
    const SearchOutcome outcome = Dfs(root);
    if (outcome == SearchOutcome::kFound) *out_offsets = solution_;
    return outcome;
  }

  int64_t nodes() const { return nodes_; }

 private:
  struct Part {
    int first_sec = 0, last_sec = -1;  // its sections, inclusive
    std::vector<int> buffers;          // unplaced when the part was created
  };

  // Ranks `buffers` 0, 1, ... by the static ordering, with each buffer's
  // total taken over the sizes still unplaced in its sections. "Width" is the
  // lifetime, or the degree when intervals do not describe the conflicts.
  // Orderings 0-2 are MiniMalloc's; the others add diversity for restarts,
  // the last three by jittering the total with a hash of the buffer's shape.
  // Identical buffers always get equal keys, so the index orders them.
  void RankBuffers(const std::vector<int>& buffers) {
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

  static uint64_t Mix(uint64_t z) {  // splitmix64's finalizer
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  static uint64_t Mix(int64_t z) { return Mix(static_cast<uint64_t>(z)); }

  void Set(int64_t* where, int64_t value) {
    log_.emplace_back(where, *where);
    *where = value;
  }

  // Places b at its min offset inside part p. Totals, cut counts and open
  // counts change by arithmetic that Unplace reverses; min offsets and
  // witnesses go through the undo log. Returns false when inference shows
  // the part cannot be completed; *out_split tells whether a boundary inside
  // p lost its last spanning buffer. `max_total` is the largest section total
  // in p before the placement.
  bool Place(int b, const Part& p, int64_t max_total, bool* out_split) {
    const int64_t o = minoff_[b];
    const int64_t top = o + c_.size[b];
    off_[b] = o;
    solution_[b] = o;
    for (int k = c_.mem_begin[b]; k < c_.mem_begin[b + 1]; ++k) total_[c_.mem_sec[k]] -= c_.size[b];
    *out_split = false;
    if (c_.interval_only) {
      for (int s = first_sec_[b]; s < last_sec_[b]; ++s) {
        if (--cuts_[s] == 0 && s >= p.first_sec && s < p.last_sec) *out_split = true;
      }
    }
    for (int k = c_.adj_begin[b]; k < c_.adj_begin[b + 1]; ++k) --open_[c_.adj[k]];
    // Every unplaced buffer goes at or above o: a section whose remaining
    // total no longer fits above o is lost. One whose total exactly fills
    // [o, capacity) needs a buffer at o itself (checked below, once the
    // conflicts of b have been raised).
    tight_.clear();
    if (o + max_total + min_size_ > cap_max_) {
      for (int s = p.first_sec; s <= p.last_sec; ++s) {
        if (total_[s] == 0 || o + total_[s] + min_size_ <= cap_max_) continue;
        if (o + total_[s] > cap_max_) return false;
        tight_.push_back(s);
      }
    }
    for (int k = c_.mem_begin[b]; k < c_.mem_begin[b + 1]; ++k) {
      const int s = c_.mem_sec[k];
      if (witness_[s] == b && !FindWitness(s)) return false;
    }
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
    // A tight section, with less than the smallest buffer of room to spare
    // above o, must continue with a buffer the canonical order can still put
    // at its min offset, low enough. One that comes earlier in that order
    // (min offset below o, or at o with a lower rank than b) can only be
    // lifted onto a later buffer, which puts it at least o + min_size_ high.
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

  void Unplace(int b, size_t mark) {
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

  // Section inference without maintained floors: each section keeps a
  // witness, an unplaced member whose min offset is at most capacity - total
  // (so the floor is low enough); only a lost witness makes us look for
  // another, and finding none proves the section cannot fit.
  bool FindWitness(int s) {
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

  // The depth-first search, with an explicit stack so that its depth (one
  // level per placed buffer) costs heap, not thread stack. A node frame
  // tries its candidates in turn; a split frame solves the independent
  // pieces of its part one after the other. A frame that finishes pops and
  // hands its outcome to the frame below.
  struct Frame {
    bool split = false;
    const Part* part = nullptr;          // node: the part searched; split: the part cut
    int64_t cur = 0;                     // canonical order: offset of the last placement
    int last_rank = -1;                  // ... and its rank (node frames)
    bool entered = false;                // node: candidates collected
    size_t base = 0, next = 0, end = 0;  // node: candidates in cand_
    int64_t max_total = 0;               // node: largest section total
    int placed = -1;                     // node: candidate being tried
    size_t mark = 0;                     // node: undo-log mark for `placed`
    int scan = 0;                        // split: first section not yet cut off
  };
  // What a split frame owns, kept apart so that frames stay trivially
  // copyable: one per nesting level, reused, in a deque so that the pieces
  // node frames point to never move.
  struct SplitState {
    Part piece;                    // the piece being solved
    std::vector<int> saved_ranks;  // its buffers' ranks before re-ranking
  };

  SearchOutcome Dfs(const Part& root) {
    frames_.clear();
    split_depth_ = 0;
    frames_.emplace_back();
    frames_.back().part = &root;
    SearchOutcome result = SearchOutcome::kInfeasible;
    bool returned = false;  // `result` comes from a frame just popped
    while (!frames_.empty()) {
      Frame& f = frames_.back();
      if (f.split) {
        SplitState& state = splits_[split_depth_ - 1];
        if (returned) {
          returned = false;
          for (size_t k = 0; k < state.saved_ranks.size(); ++k) {
            rank_[state.piece.buffers[k]] = state.saved_ranks[k];
          }
          if (result != SearchOutcome::kFound) {
            frames_.pop_back();
            --split_depth_;
            returned = true;
            continue;
          }
        }
        if (!NextPiece(f, state)) {
          frames_.pop_back();
          --split_depth_;
          result = SearchOutcome::kFound;
          returned = true;
          continue;
        }
        PushNode(&state.piece, f.cur, -1);
        continue;
      }
      if (!f.entered) {
        f.entered = true;
        const SearchOutcome r = Enter(f);
        if (r != kGoOn) {
          frames_.pop_back();
          result = r;
          returned = true;
          continue;
        }
      } else if (returned) {
        returned = false;
        Unplace(f.placed, f.mark);
        if (result != SearchOutcome::kInfeasible) {
          cand_.resize(f.base);
          frames_.pop_back();
          returned = true;
          continue;
        }
      }
      bool pushed = false;
      while (f.next < f.end) {
        const int b = cand_[f.next++];
        const int64_t o = minoff_[b];
        const size_t mark = log_.size();
        bool split = false;
        if (Place(b, *f.part, f.max_total, &split)) {
          f.placed = b;
          f.mark = mark;
          const Part* part = f.part;  // f dies when the stack grows
          if (split) {
            PushSplit(part, o);
          } else {
            PushNode(part, o, rank_[b]);
          }
          pushed = true;
          break;
        }
        Unplace(b, mark);
      }
      if (!pushed) {
        cand_.resize(f.base);
        frames_.pop_back();
        result = SearchOutcome::kInfeasible;
        returned = true;
      }
    }
    return result;
  }

  void PushNode(const Part* part, int64_t cur, int last_rank) {
    frames_.emplace_back();
    Frame& f = frames_.back();
    f.part = part;
    f.cur = cur;
    f.last_rank = last_rank;
  }

  void PushSplit(const Part* part, int64_t cur) {
    frames_.emplace_back();
    Frame& f = frames_.back();
    f.split = true;
    f.part = part;
    f.cur = cur;
    f.scan = part->first_sec;
    if (++split_depth_ > splits_.size()) splits_.emplace_back();
  }

  // Cuts the next independent piece off a split frame's part: the unplaced
  // buffers between two boundaries that no unplaced buffer spans. Re-ranks
  // it by what is left in its sections, as MiniMalloc does (the ordering
  // that suits the whole rarely suits a piece). Every piece's buffers go at
  // or above cur (they follow the last placement in canonical order), but
  // the ranks change, so the order restarts at rank -1.
  bool NextPiece(Frame& f, SplitState& state) {
    const Part& p = *f.part;
    Part& piece = state.piece;
    while (f.scan <= p.last_sec) {
      const int start = f.scan;
      int s = start;
      while (s < p.last_sec && cuts_[s] != 0) ++s;
      f.scan = s + 1;
      piece.first_sec = start;
      piece.last_sec = s;
      piece.buffers.clear();
      for (int b : p.buffers) {
        if (off_[b] < 0 && first_sec_[b] >= start && last_sec_[b] <= s) piece.buffers.push_back(b);
      }
      if (piece.buffers.empty()) continue;
      state.saved_ranks.clear();
      for (int b : piece.buffers) state.saved_ranks.push_back(rank_[b]);
      RankBuffers(piece.buffers);
      return true;
    }
    return false;
  }

  // A node's entry: budget and clock, then the candidates for the next
  // placement, into cand_[f.base, f.end). Returns kGoOn to try them, or the
  // node's outcome (a leaf is kFound).
  SearchOutcome Enter(Frame& f) {
    if (++nodes_ > budget_) return SearchOutcome::kBudget;
    if ((nodes_ & 1023) == 0 && Clock::now() >= deadline_) return SearchOutcome::kTimeout;
    const Part& p = *f.part;
    const int64_t cur = f.cur;
    const int last_rank = f.last_rank;
    int64_t min_height = kInf;
    int64_t fixed_offset = kInf;  // the earliest hatless buffer, in canonical order
    int fixed_rank = 0;
    for (int b : p.buffers) {
      if (off_[b] >= 0) continue;
      min_height = std::min(min_height, minoff_[b] + c_.size[b]);
      if (open_[b] == 0 &&
          (minoff_[b] < fixed_offset || (minoff_[b] == fixed_offset && rank_[b] < fixed_rank))) {
        fixed_offset = minoff_[b];
        fixed_rank = rank_[b];
      }
    }
    if (min_height == kInf) return SearchOutcome::kFound;
    if (fixed_offset < cur || (fixed_offset == cur && fixed_rank < last_rank)) {
      return SearchOutcome::kInfeasible;  // a hatless buffer was passed over
    }
    f.base = cand_.size();
    for (int b : p.buffers) {
      if (off_[b] >= 0) continue;
      const int64_t o = minoff_[b];
      if (o < cur || (o == cur && rank_[b] < last_rank) || o >= min_height) continue;
      if (o > fixed_offset || (o == fixed_offset && rank_[b] > fixed_rank)) continue;
      if (twin_[b] >= 0 && off_[twin_[b]] < 0) continue;  // its twin goes first
      cand_.push_back(b);
    }
    std::sort(cand_.begin() + f.base, cand_.end(), [&](int a, int b) {
      return minoff_[a] != minoff_[b] ? minoff_[a] < minoff_[b] : rank_[a] < rank_[b];
    });
    f.next = f.base;
    f.end = cand_.size();
    f.max_total = 0;
    for (int s = p.first_sec; s <= p.last_sec; ++s) f.max_total = std::max(f.max_total, total_[s]);
    return kGoOn;
  }

  const Component& c_;
  const std::vector<int64_t>& caps_;
  const int heuristic_;
  const int64_t budget_;
  const Clock::time_point deadline_;
  int64_t cap_max_ = 0;
  int64_t min_size_ = 1;  // smallest buffer, units
  int64_t nodes_ = 0;

  std::vector<int> first_sec_, last_sec_;  // interval-only: each buffer's run
  std::vector<int> rank_;
  std::vector<int> twin_;  // the identical buffer placed before this one, or -1
  std::vector<int64_t> off_, minoff_, solution_;
  std::vector<int64_t> total_, witness_, cuts_, open_;
  std::vector<std::pair<int64_t*, int64_t>> log_;
  std::vector<int> cand_;
  std::vector<Frame> frames_;
  std::deque<SplitState> splits_;
  size_t split_depth_ = 0;
  std::vector<int> tight_;  // Place: sections filled exactly up to the offset
};

}  // namespace

SearchOutcome ExactSearch(const Component& c, const std::vector<int64_t>& caps, int heuristic,
                          int64_t node_budget, Clock::time_point deadline,
                          std::vector<int64_t>* out_offsets, SearchStats* stats) {
  Search search(c, caps, heuristic, node_budget, deadline);
  const SearchOutcome outcome = search.Run(out_offsets);
  if (stats != nullptr) stats->nodes += search.nodes();
  return outcome;
}

}  // namespace baton::planner::pack_detail
