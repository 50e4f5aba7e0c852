#pragma once
// The exact search's state and inference (pack_search.cc drives the search;
// the rules are explained at the top of that file). The state records where
// each placed buffer sits, each unplaced buffer's min offset, what is left of
// each section, and each buffer's rank in the static ordering. Place() puts a
// buffer at its min offset and applies the inference; Unplace() undoes it.
// Totals, cut counts and open counts change by arithmetic that Unplace
// reverses; min offsets and witnesses go through an undo log, so placements
// must be undone in reverse order (the search is depth-first).

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "pack_internal.h"

namespace baton::planner::pack_detail {

// What the search solves as one: a run of consecutive sections and the
// buffers in them. The root part is the whole component; dynamic
// decomposition cuts independent pieces off a part.
struct Part {
  int first_sec = 0, last_sec = -1;  // its sections, inclusive
  std::vector<int> buffers;          // unplaced when the part was created
};

class SearchState {
 public:
  // `caps` (units, per buffer) must outlive the state; `heuristic` picks the
  // static ordering Rank() uses.
  SearchState(const Component& c, const std::vector<int64_t>& caps, int heuristic)
      : c_(c), caps_(caps), heuristic_(heuristic) {}

  // Nothing placed, every min offset 0. Returns false when a buffer or a
  // section cannot fit below the caps at all. Needs c.n > 0.
  bool Init();

  // Ranks `buffers` 0, 1, ... by the static ordering, with each buffer's
  // total taken over the sizes still unplaced in its sections.
  void Rank(const std::vector<int>& buffers);

  // Places b at its min offset inside part p. Returns false when inference
  // shows that p cannot be completed; the caller undoes the placement with
  // Unplace(b, mark) either way, where `mark` is Mark() taken just before.
  // *out_split tells whether a boundary inside p lost its last spanning
  // buffer. `max_total` is the largest section total in p before the
  // placement.
  bool Place(int b, const Part& p, int64_t max_total, bool* out_split);
  void Unplace(int b, size_t mark);
  size_t Mark() const { return log_.size(); }

  bool placed(int b) const { return off_[b] >= 0; }
  int64_t min_offset(int b) const { return minoff_[b]; }
  // No unplaced conflict: its min offset can no longer change.
  bool hatless(int b) const { return open_[b] == 0; }
  // The identical buffer that must be placed before b, or -1.
  int twin(int b) const { return twin_[b]; }
  int rank(int b) const { return rank_[b]; }
  void set_rank(int b, int rank) { rank_[b] = rank; }
  // Units still unplaced in section s.
  int64_t total(int s) const { return total_[s]; }
  // Interval-only components: whether an unplaced buffer spans the boundary
  // between sections s and s + 1, and each buffer's run of sections.
  bool spanned(int s) const { return cuts_[s] != 0; }
  int first_sec(int b) const { return first_sec_[b]; }
  int last_sec(int b) const { return last_sec_[b]; }
  // Offsets (units) of the latest placement of each buffer; a packing once
  // every buffer has been placed.
  const std::vector<int64_t>& solution() const { return solution_; }

 private:
  bool InitSections();
  void InitRuns();
  void FindTwins();

  // Place()'s steps, in order.
  bool Occupy(int b, int64_t o, const Part& p);
  bool FindTightSections(int64_t o, const Part& p, int64_t max_total);
  bool KeepWitnesses(int b);
  bool RaiseConflicts(int b, int64_t top);
  bool TightSectionsCanFill(int b, int64_t o) const;
  bool FindWitness(int s);

  void Set(int64_t* where, int64_t value) {
    log_.emplace_back(where, *where);
    *where = value;
  }

  const Component& c_;
  const std::vector<int64_t>& caps_;
  const int heuristic_;
  int64_t cap_max_ = 0;
  int64_t min_size_ = 1;  // smallest buffer, units

  std::vector<int> first_sec_, last_sec_;  // interval-only: each buffer's run
  std::vector<int> rank_;
  std::vector<int> twin_;
  std::vector<int64_t> off_, minoff_, solution_;
  std::vector<int64_t> total_, witness_, cuts_, open_;
  std::vector<std::pair<int64_t*, int64_t>> log_;  // undo log: address, old value
  std::vector<int> tight_;  // Place: sections filled exactly up to the offset
};

}  // namespace baton::planner::pack_detail
