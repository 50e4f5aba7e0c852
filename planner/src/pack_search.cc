// The packer's exact engine: depth-first search over canonical packings, in
// the spirit of MiniMalloc (Moffitt, ASPLOS 2023).
//
// Canonical packings. Take any packing and keep moving a buffer to a lower
// free offset while one exists. In the result every buffer sits exactly on
// the top of a conflicting buffer (or at 0), so listing the buffers by
// (offset, rank) and placing each at the lowest offset above its already
// placed conflicts rebuilds it. The search therefore only
//   - places buffers in increasing (offset, rank) order ("canonical"),
//   - at the buffer's min offset: the top of its highest placed conflict,
//   - never above the top any unplaced buffer would reach at its own min
//     offset (that buffer could be dropped into the gap: "dominance").
// Inference. Sections are the maximal sets of buffers live at one instant
// (one per distinct upper time); their buffers pairwise conflict, so the
// unplaced ones of a section stack above the section floor (the least min
// offset among them, and no lower than the current offset): the floor plus
// their total must stay within the capacity.
// Decomposition. When no unplaced buffer spans the boundary between two
// sections, the two sides are independent and are solved one after the other.
//
// Every node and every branch is determined by the input, the static
// ordering and the node budget; a time-out only cuts the search short.

#include <algorithm>
#include <array>
#include <limits>
#include <utility>
#include <vector>

#include "pack_internal.h"

namespace baton::planner::pack_detail {
namespace {

constexpr int64_t kInf = std::numeric_limits<int64_t>::max() / 4;

class Search {
 public:
  Search(const Component& c, const std::vector<int64_t>& caps, int heuristic, int64_t budget,
         Clock::time_point deadline)
      : c_(c), caps_(caps), budget_(budget), deadline_(deadline) {
    BuildSections();
    BuildRanks(heuristic);
  }

  SearchOutcome Run(std::vector<int64_t>* out_offsets) {
    const int n = c_.n;
    for (int i = 0; i < n; ++i) {
      if (caps_[i] < c_.size[i]) return SearchOutcome::kInfeasible;
      cap_max_ = std::max(cap_max_, caps_[i]);
    }
    for (int s = 0; s < sections_; ++s) {
      if (total_[s] > cap_max_) return SearchOutcome::kInfeasible;
    }
    off_.assign(n, -1);
    minoff_.assign(n, 0);
    solution_.assign(n, 0);
    stamp_.assign(sections_, 0);
    Part root;
    root.first_sec = 0;
    root.last_sec = sections_ - 1;
    for (int i = 0; i < n; ++i) root.buffers.push_back(i);
    const SearchOutcome outcome = n == 0 ? SearchOutcome::kFound : Dfs(root, 0, -1);
    if (outcome == SearchOutcome::kFound) *out_offsets = solution_;
    return outcome;
  }

  int64_t nodes() const { return nodes_; }

 private:
  struct Part {
    int first_sec = 0, last_sec = 0;  // inclusive section range
    std::vector<int> buffers;         // unplaced when the part was created
  };

  void BuildSections() {
    std::vector<int64_t> times(c_.upper.begin(), c_.upper.end());
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());
    sections_ = static_cast<int>(times.size());
    first_sec_.resize(c_.n);
    last_sec_.resize(c_.n);
    std::vector<int> count(sections_ + 1, 0);
    for (int i = 0; i < c_.n; ++i) {
      // Buffer i is live just before times[s] iff lower < times[s] <= upper.
      first_sec_[i] = static_cast<int>(
          std::upper_bound(times.begin(), times.end(), c_.lower[i]) - times.begin());
      last_sec_[i] = static_cast<int>(
          std::lower_bound(times.begin(), times.end(), c_.upper[i]) - times.begin());
      for (int s = first_sec_[i]; s <= last_sec_[i]; ++s) ++count[s + 1];
    }
    sec_begin_.assign(sections_ + 1, 0);
    for (int s = 0; s < sections_; ++s) sec_begin_[s + 1] = sec_begin_[s] + count[s + 1];
    sec_buf_.resize(sec_begin_[sections_]);
    std::vector<int> fill(sec_begin_.begin(), sec_begin_.end() - 1);
    total_.assign(sections_, 0);
    need_.assign(sections_, 0);
    cuts_.assign(sections_, 0);
    for (int i = 0; i < c_.n; ++i) {
      for (int s = first_sec_[i]; s <= last_sec_[i]; ++s) {
        sec_buf_[fill[s]++] = i;
        total_[s] += c_.size[i];
        if (s < last_sec_[i]) ++cuts_[s];  // spans the boundary s | s+1
      }
    }
  }

  void BuildRanks(int heuristic) {
    const int n = c_.n;
    std::vector<int64_t> total(n, 0);
    for (int i = 0; i < n; ++i) {
      for (int s = first_sec_[i]; s <= last_sec_[i]; ++s) total[i] = std::max(total[i], total_[s]);
    }
    std::vector<std::array<int64_t, 3>> key(n);
    for (int i = 0; i < n; ++i) {
      const int64_t width = c_.upper[i] - c_.lower[i];
      const int64_t area = width * c_.size[i];
      switch (heuristic) {
        case 0: key[i] = {width, area, total[i]}; break;
        case 1: key[i] = {total[i], area, width}; break;
        default: key[i] = {total[i], width, area}; break;
      }
    }
    std::vector<int> order(n);
    for (int i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return key[a] > key[b]; });
    rank_.resize(n);
    for (int r = 0; r < n; ++r) rank_[order[r]] = r;
  }

  void Set(int64_t* where, int64_t value) {
    log_.emplace_back(where, *where);
    *where = value;
  }
  void Undo(size_t mark) {
    while (log_.size() > mark) {
      *log_.back().first = log_.back().second;
      log_.pop_back();
    }
  }
  void MarkDirty(int s) {
    if (stamp_[s] != epoch_) {
      stamp_[s] = epoch_;
      dirty_.push_back(s);
    }
  }

  // Places b at its min offset inside part p, updating (with undo records)
  // min offsets, section totals and floors and cut counts. Returns false when
  // inference shows the part cannot be completed; *out_split tells whether a
  // boundary inside p lost its last spanning buffer.
  bool Place(int b, const Part& p, bool* out_split) {
    const int64_t o = minoff_[b];
    const int64_t top = o + c_.size[b];
    Set(&off_[b], o);
    solution_[b] = o;
    ++epoch_;
    dirty_.clear();
    for (int s = first_sec_[b]; s <= last_sec_[b]; ++s) {
      Set(&total_[s], total_[s] - c_.size[b]);
      MarkDirty(s);
    }
    *out_split = false;
    if (c_.interval_only) {
      for (int s = first_sec_[b]; s < last_sec_[b]; ++s) {
        Set(&cuts_[s], cuts_[s] - 1);
        if (cuts_[s] == 0 && s >= p.first_sec && s < p.last_sec) *out_split = true;
      }
    }
    for (int k = c_.adj_begin[b]; k < c_.adj_begin[b + 1]; ++k) {
      const int j = c_.adj[k];
      if (off_[j] >= 0 || minoff_[j] >= top) continue;
      Set(&minoff_[j], top);
      if (top + c_.size[j] > caps_[j]) return false;
      for (int s = first_sec_[j]; s <= last_sec_[j]; ++s) MarkDirty(s);
    }
    for (int s : dirty_) {
      const int64_t need = Need(s);
      if (need > cap_max_) return false;
      if (need != need_[s]) Set(&need_[s], need);
    }
    for (int s = p.first_sec; s <= p.last_sec; ++s) {
      if (total_[s] > 0 && o + total_[s] > cap_max_) return false;
    }
    return true;
  }

  // The lowest top the unplaced buffers of section s can reach: they stack,
  // each no lower than its min offset (a one-machine schedule with release
  // times, optimal in order of release): max over k of minoff_k plus the
  // sizes of all buffers released no earlier than k.
  int64_t Need(int s) {
    tmp_.clear();
    for (int k = sec_begin_[s]; k < sec_begin_[s + 1]; ++k) {
      const int j = sec_buf_[k];
      if (off_[j] < 0) tmp_.emplace_back(minoff_[j], c_.size[j]);
    }
    std::sort(tmp_.begin(), tmp_.end());
    int64_t above = 0, need = 0;
    for (auto it = tmp_.rbegin(); it != tmp_.rend(); ++it) {
      above += it->second;
      need = std::max(need, it->first + above);
    }
    return need;
  }

  SearchOutcome Dfs(const Part& p, int64_t cur, int last_rank) {
    if (++nodes_ > budget_) return SearchOutcome::kBudget;
    if ((nodes_ & 1023) == 0 && Clock::now() >= deadline_) return SearchOutcome::kTimeout;
    int64_t min_height = kInf;
    for (int b : p.buffers) {
      if (off_[b] < 0) min_height = std::min(min_height, minoff_[b] + c_.size[b]);
    }
    if (min_height == kInf) return SearchOutcome::kFound;
    const size_t base = cand_.size();
    for (int b : p.buffers) {
      if (off_[b] >= 0) continue;
      const int64_t o = minoff_[b];
      if (o < cur || (o == cur && rank_[b] < last_rank) || o >= min_height) continue;
      cand_.push_back(b);
    }
    std::sort(cand_.begin() + base, cand_.end(), [&](int a, int b) {
      return minoff_[a] != minoff_[b] ? minoff_[a] < minoff_[b] : rank_[a] < rank_[b];
    });
    const size_t end = cand_.size();
    SearchOutcome result = SearchOutcome::kInfeasible;
    for (size_t k = base; k < end; ++k) {
      const int b = cand_[k];
      const int64_t o = minoff_[b];
      const size_t mark = log_.size();
      bool split = false;
      SearchOutcome r = SearchOutcome::kInfeasible;
      if (Place(b, p, &split)) {
        r = split ? SolveSplit(p, o, rank_[b]) : Dfs(p, o, rank_[b]);
      }
      Undo(mark);
      if (r != SearchOutcome::kInfeasible) {
        result = r;
        break;
      }
    }
    cand_.resize(base);
    return result;
  }

  // Solves the independent pieces of p one after the other.
  SearchOutcome SolveSplit(const Part& p, int64_t cur, int last_rank) {
    int start = p.first_sec;
    for (int s = p.first_sec; s <= p.last_sec; ++s) {
      if (s < p.last_sec && cuts_[s] != 0) continue;
      Part sub;
      sub.first_sec = start;
      sub.last_sec = s;
      for (int b : p.buffers) {
        if (off_[b] < 0 && first_sec_[b] >= start && last_sec_[b] <= s) sub.buffers.push_back(b);
      }
      start = s + 1;
      if (sub.buffers.empty()) continue;
      const SearchOutcome r = Dfs(sub, cur, last_rank);
      if (r != SearchOutcome::kFound) return r;
    }
    return SearchOutcome::kFound;
  }

  const Component& c_;
  const std::vector<int64_t>& caps_;
  int64_t cap_max_ = 0;
  const int64_t budget_;
  const Clock::time_point deadline_;
  int64_t nodes_ = 0;

  int sections_ = 0;
  std::vector<int> sec_begin_, sec_buf_;
  std::vector<int> first_sec_, last_sec_;
  std::vector<int> rank_;

  std::vector<int64_t> off_, minoff_, solution_;
  std::vector<int64_t> total_, need_, cuts_;
  std::vector<std::pair<int64_t, int64_t>> tmp_;
  std::vector<std::pair<int64_t*, int64_t>> log_;
  std::vector<int64_t> stamp_;
  int64_t epoch_ = 0;
  std::vector<int> dirty_;
  std::vector<int> cand_;
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
