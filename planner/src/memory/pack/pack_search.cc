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
// see SearchState::Place). Identical buffers go in index order.
// Decomposition (interval-only components). When no unplaced buffer spans the
// boundary between two consecutive sections, the two sides are independent:
// each is solved on its own, re-ranked by what is left in its sections.
//
// Every branch is determined by the input, the static ordering and the node
// budget; a time-out only cuts the search short.

// This file holds the search's control: the explicit stack of node and split
// frames, candidate selection, decomposition and the budget. The state it
// changes and the inference live in pack_search_state.cc.

#include <algorithm>
#include <deque>
#include <limits>
#include <vector>

#include "pack_internal.h"
#include "pack_search_state.h"

namespace baton::planner::pack_detail {
namespace {

constexpr int64_t kInf = std::numeric_limits<int64_t>::max() / 4;
// Enter()'s "no outcome yet": a value no search returns.
constexpr SearchOutcome kGoOn = static_cast<SearchOutcome>(-1);

// ---- Branching: the candidates for the next placement ----------------------

// What the unplaced buffers of a part allow for the next placement.
struct Frontier {
  int64_t min_height = kInf;    // lowest top an unplaced buffer reaches at its min offset
  int64_t fixed_offset = kInf;  // the earliest hatless buffer, in canonical order ...
  int fixed_rank = 0;           // ... and its rank
};

Frontier ScanFrontier(const Component& c, const SearchState& state, const Part& p) {
  Frontier fr;
  for (int b : p.buffers) {
    if (state.placed(b)) continue;
    const int64_t o = state.min_offset(b);
    fr.min_height = std::min(fr.min_height, o + c.size[b]);
    if (state.hatless(b) &&
        (o < fr.fixed_offset || (o == fr.fixed_offset && state.rank(b) < fr.fixed_rank))) {
      fr.fixed_offset = o;
      fr.fixed_rank = state.rank(b);
    }
  }
  return fr;
}

// Appends the candidates to *out_cand, in the order they are tried: lowest
// min offset first, then by rank. A candidate follows the last placement
// (cur, last_rank) in canonical order, lies below every unplaced buffer's
// top (dominance), does not pass the earliest hatless buffer, and waits for
// its twin.
void CollectCandidates(const SearchState& state, const Part& p, int64_t cur, int last_rank,
                       const Frontier& fr, std::vector<int>* out_cand) {
  const size_t base = out_cand->size();
  for (int b : p.buffers) {
    if (state.placed(b)) continue;
    const int64_t o = state.min_offset(b);
    const int rank = state.rank(b);
    if (o < cur || (o == cur && rank < last_rank) || o >= fr.min_height) continue;
    if (o > fr.fixed_offset || (o == fr.fixed_offset && rank > fr.fixed_rank)) continue;
    const int twin = state.twin(b);
    if (twin >= 0 && !state.placed(twin)) continue;  // its twin goes first
    out_cand->push_back(b);
  }
  std::sort(out_cand->begin() + base, out_cand->end(), [&](int a, int b) {
    const int64_t oa = state.min_offset(a), ob = state.min_offset(b);
    return oa != ob ? oa < ob : state.rank(a) < state.rank(b);
  });
}

// ---- The depth-first search -------------------------------------------------

// The search keeps an explicit stack so that its depth (one level per placed
// buffer) costs heap, not thread stack. A node frame tries its candidates in
// turn; a split frame solves the independent pieces of its part one after
// the other. A frame that finishes pops and hands its outcome to the frame
// below.
class Search {
 public:
  Search(const Component& c, const std::vector<int64_t>& caps, int heuristic, int64_t budget,
         Clock::time_point deadline)
      : c_(c), state_(c, caps, heuristic), budget_(budget), deadline_(deadline) {}

  SearchOutcome Run(std::vector<int64_t>* out_offsets);
  int64_t nodes() const { return nodes_; }

 private:
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
  // The outcome a popped frame hands to the frame below it.
  struct Unwind {
    bool returned = false;  // a frame was just popped and `result` is its outcome
    SearchOutcome result = SearchOutcome::kInfeasible;
  };

  SearchOutcome Dfs(const Part& root);
  void StepNode(Unwind* unwind);
  void StepSplit(Unwind* unwind);
  SearchOutcome Enter(Frame& f);
  bool PushNextCandidate(Frame& f);
  bool NextPiece(Frame& f, SplitState& split);
  void PushNode(const Part* part, int64_t cur, int last_rank);
  void PushSplit(const Part* part, int64_t cur);
  void Pop(SearchOutcome result, Unwind* unwind);

  const Component& c_;
  SearchState state_;
  const int64_t budget_;
  const Clock::time_point deadline_;
  int64_t nodes_ = 0;

  std::vector<int> cand_;
  std::vector<Frame> frames_;
  std::deque<SplitState> splits_;
  size_t split_depth_ = 0;
};

SearchOutcome Search::Run(std::vector<int64_t>* out_offsets) {
  if (c_.n == 0) {
    out_offsets->clear();
    return SearchOutcome::kFound;
  }
  if (!state_.Init()) return SearchOutcome::kInfeasible;
  Part root;
  root.first_sec = 0;
  root.last_sec = c_.sections() - 1;
  for (int i = 0; i < c_.n; ++i) root.buffers.push_back(i);
  state_.Rank(root.buffers);
  frames_.reserve(c_.n + 16);
  const SearchOutcome outcome = Dfs(root);
  if (outcome == SearchOutcome::kFound) *out_offsets = state_.solution();
  return outcome;
}

SearchOutcome Search::Dfs(const Part& root) {
  frames_.clear();
  split_depth_ = 0;
  frames_.emplace_back();
  frames_.back().part = &root;
  Unwind unwind;
  while (!frames_.empty()) {
    if (frames_.back().split) {
      StepSplit(&unwind);
    } else {
      StepNode(&unwind);
    }
  }
  return unwind.result;
}

// A node frame: on entry, collect the candidates; when the subtree of the
// candidate being tried returns, take that placement back, and go on to the
// next candidate only if the subtree was infeasible.
void Search::StepNode(Unwind* unwind) {
  Frame& f = frames_.back();
  if (!f.entered) {
    f.entered = true;
    const SearchOutcome r = Enter(f);
    if (r != kGoOn) {
      Pop(r, unwind);
      return;
    }
  } else if (unwind->returned) {
    unwind->returned = false;
    state_.Unplace(f.placed, f.mark);
    if (unwind->result != SearchOutcome::kInfeasible) {
      cand_.resize(f.base);
      Pop(unwind->result, unwind);
      return;
    }
  }
  if (!PushNextCandidate(f)) {
    cand_.resize(f.base);
    Pop(SearchOutcome::kInfeasible, unwind);
  }
}

// A split frame: when a piece returns, restore the ranks it changed; a piece
// without a packing fails the split. Then on to the next piece, or done
// (kFound) when none is left.
void Search::StepSplit(Unwind* unwind) {
  Frame& f = frames_.back();
  SplitState& split = splits_[split_depth_ - 1];
  if (unwind->returned) {
    unwind->returned = false;
    for (size_t k = 0; k < split.saved_ranks.size(); ++k) {
      state_.set_rank(split.piece.buffers[k], split.saved_ranks[k]);
    }
    if (unwind->result != SearchOutcome::kFound) {
      --split_depth_;
      Pop(unwind->result, unwind);
      return;
    }
  }
  if (!NextPiece(f, split)) {
    --split_depth_;
    Pop(SearchOutcome::kFound, unwind);
    return;
  }
  PushNode(&split.piece, f.cur, -1);
}

// A node's entry: budget and clock, then the candidates for the next
// placement, into cand_[f.base, f.end). Returns kGoOn to try them, or the
// node's outcome (a leaf is kFound).
SearchOutcome Search::Enter(Frame& f) {
  if (++nodes_ > budget_) return SearchOutcome::kBudget;
  if ((nodes_ & 1023) == 0 && Clock::now() >= deadline_) return SearchOutcome::kTimeout;
  const Part& p = *f.part;
  const Frontier frontier = ScanFrontier(c_, state_, p);
  if (frontier.min_height == kInf) return SearchOutcome::kFound;
  if (frontier.fixed_offset < f.cur ||
      (frontier.fixed_offset == f.cur && frontier.fixed_rank < f.last_rank)) {
    return SearchOutcome::kInfeasible;  // a hatless buffer was passed over
  }
  f.base = cand_.size();
  CollectCandidates(state_, p, f.cur, f.last_rank, frontier, &cand_);
  f.next = f.base;
  f.end = cand_.size();
  f.max_total = 0;
  for (int s = p.first_sec; s <= p.last_sec; ++s) {
    f.max_total = std::max(f.max_total, state_.total(s));
  }
  return kGoOn;
}

// Places the node's next candidate that inference does not reject and
// pushes the frame that continues from it; false when none is left.
bool Search::PushNextCandidate(Frame& f) {
  while (f.next < f.end) {
    const int b = cand_[f.next++];
    const int64_t o = state_.min_offset(b);
    const size_t mark = state_.Mark();
    bool split = false;
    if (state_.Place(b, *f.part, f.max_total, &split)) {
      f.placed = b;
      f.mark = mark;
      const Part* part = f.part;  // f dies when the stack grows
      if (split) {
        PushSplit(part, o);
      } else {
        PushNode(part, o, state_.rank(b));
      }
      return true;
    }
    state_.Unplace(b, mark);
  }
  return false;
}

// Cuts the next independent piece off a split frame's part: the unplaced
// buffers between two boundaries that no unplaced buffer spans. Re-ranks it
// by what is left in its sections, as MiniMalloc does (the ordering that
// suits the whole rarely suits a piece). Every piece's buffers go at or
// above cur (they follow the last placement in canonical order), but the
// ranks change, so the order restarts at rank -1.
bool Search::NextPiece(Frame& f, SplitState& split) {
  const Part& p = *f.part;
  Part& piece = split.piece;
  while (f.scan <= p.last_sec) {
    const int start = f.scan;
    int s = start;
    while (s < p.last_sec && state_.spanned(s)) ++s;
    f.scan = s + 1;
    piece.first_sec = start;
    piece.last_sec = s;
    piece.buffers.clear();
    for (int b : p.buffers) {
      if (!state_.placed(b) && state_.first_sec(b) >= start && state_.last_sec(b) <= s) {
        piece.buffers.push_back(b);
      }
    }
    if (piece.buffers.empty()) continue;
    split.saved_ranks.clear();
    for (int b : piece.buffers) split.saved_ranks.push_back(state_.rank(b));
    state_.Rank(piece.buffers);
    return true;
  }
  return false;
}

void Search::PushNode(const Part* part, int64_t cur, int last_rank) {
  frames_.emplace_back();
  Frame& f = frames_.back();
  f.part = part;
  f.cur = cur;
  f.last_rank = last_rank;
}

void Search::PushSplit(const Part* part, int64_t cur) {
  frames_.emplace_back();
  Frame& f = frames_.back();
  f.split = true;
  f.part = part;
  f.cur = cur;
  f.scan = part->first_sec;
  if (++split_depth_ > splits_.size()) splits_.emplace_back();
}

void Search::Pop(SearchOutcome result, Unwind* unwind) {
  frames_.pop_back();
  unwind->result = result;
  unwind->returned = true;
}

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
