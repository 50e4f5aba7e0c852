#pragma once
// Internal to the arena packer (planner/src/memory/pack/*.cc). Pack() splits
// a problem into independent components, moves each into alignment units,
// and runs two engines on each component: a greedy portfolio with hill
// climbing (pack_greedy.cc) and an exact branch-and-bound (pack_search.cc,
// with its state and inference in pack_search_state.h).
//
// Units: with alignment A, a buffer of b bytes occupies ceil(b / A) units and
// every offset is a whole number of units. This loses nothing: for offsets that
// are multiples of A, o1 + b1 <= o2 holds iff o1 + ceil(b1 / A) * A <= o2.
// Only the top of the arena is measured in bytes: height = max(o * A + b).

#include <chrono>
#include <cstdint>
#include <vector>

namespace baton::planner::pack_detail {

using Clock = std::chrono::steady_clock;

// Above this many conflict-graph entries (both directions) a component keeps
// no adjacency lists: the greedy scans placed buffers instead and the exact
// search is skipped. 2^24 entries are 64 MiB.
inline constexpr int64_t kMaxAdjacencyEntries = int64_t{1} << 24;

// One independent component: no buffer of it conflicts with a buffer outside.
struct Component {
  int n = 0;
  int64_t alignment = 1;
  std::vector<int> ids;               // index into PackProblem::buffers
  std::vector<int64_t> lower, upper;  // lifetimes, half-open
  std::vector<int64_t> bytes;         // real sizes
  std::vector<int64_t> size;          // sizes in units
  bool interval_only = true;          // no extra conflicts inside
  // Conflict graph, CSR, sorted and free of duplicates: interval
  // intersections plus extra conflicts. Empty when has_adjacency is false.
  bool has_adjacency = false;
  std::vector<int> adj_begin, adj;
  // Extra conflicts alone (CSR), always present; used without adjacency.
  std::vector<int> extra_begin, extra;
  // Sections: cliques of the conflict graph, for the exact search's
  // inference and for the lower bound; built only for components the exact
  // search takes on. Interval-only components use the maximal sets of buffers
  // live at one instant, one per distinct upper time, in time order, so each
  // buffer's sections form a contiguous run. Other components use those plus
  // a greedy clique grown from each buffer.
  std::vector<int> sec_begin, sec_buf;  // members of each section
  std::vector<int> mem_begin, mem_sec;  // sections of each buffer, ascending
  int sections() const { return static_cast<int>(sec_begin.size()) - 1; }
  // Largest total of bytes live at one time, or in one section.
  int64_t lower_bound_bytes = 0;

  bool Overlap(int i, int j) const { return lower[i] < upper[j] && lower[j] < upper[i]; }
  // Height in bytes of a placement given in units.
  int64_t HeightBytes(const std::vector<int64_t>& offsets) const;
  // Largest offset + size (units) each buffer may reach so that its top stays
  // within `target_bytes`; negative when a buffer cannot fit at all.
  std::vector<int64_t> UnitCaps(int64_t target_bytes) const;
};

// Builds the components of `problem` (already validated).
struct PackProblemView {
  const std::vector<int64_t>* lower;
  const std::vector<int64_t>* upper;
  const std::vector<int64_t>* bytes;
  const std::vector<std::pair<int, int>>* extra_conflicts;
  int64_t alignment;
};
std::vector<Component> BuildComponents(const PackProblemView& view);

// width * size for ordering keys, saturated instead of overflowing.
inline int64_t Area(int64_t width, int64_t size) {
  return width > INT64_MAX / size ? INT64_MAX : width * size;
}

// ---- Greedy (pack_greedy.cc) ----------------------------------------------

enum class Fit { kFirst, kBest };

// Places buffers in `order`, each at the lowest offset (kFirst) or in the
// tightest gap that holds it (kBest), among already placed conflicting
// buffers. Returns the height in bytes; offsets are in units.
int64_t GreedyPack(const Component& c, const std::vector<int>& order, Fit fit,
                   std::vector<int64_t>* out_offsets);

struct GreedyResult {
  int64_t height = 0;            // bytes
  std::vector<int64_t> offsets;  // units
  std::vector<int> order;        // the order that produced it
  Fit fit = Fit::kFirst;
};
// Every ordering x fit of the portfolio; returns the lowest.
GreedyResult GreedyPortfolio(const Component& c);

// Vela-style hill climbing over greedy orderings, starting from `start`.
// Deterministic (fixed seed); stops after `max_iterations`, at the deadline,
// or when the height reaches `floor_bytes`.
GreedyResult HillClimb(const Component& c, GreedyResult start, int64_t floor_bytes,
                       int64_t max_iterations, Clock::time_point deadline);

// ---- Exact search (pack_search.cc) ----------------------------------------

// Largest component the exact search takes on (recursion depth = buffers).
inline constexpr int kMaxExactBuffers = 3000;

enum class SearchOutcome { kFound, kInfeasible, kBudget, kTimeout };

// Static orderings that break ties among equally low candidates: MiniMalloc's
// three preorderings (width, area, total / total, area, width / total, width,
// area) and five more for diversity across restarts (see pack_search.cc).
inline constexpr int kNumHeuristics = 8;

// Decides whether every buffer i fits with offset + size <= caps[i] (units),
// by depth-first search over canonical packings, trying at most `node_budget`
// nodes. On kFound, out_offsets holds the packing (units).
struct SearchStats {
  int64_t nodes = 0;
};
SearchOutcome ExactSearch(const Component& c, const std::vector<int64_t>& caps, int heuristic,
                          int64_t node_budget, Clock::time_point deadline,
                          std::vector<int64_t>* out_offsets, SearchStats* stats = nullptr);

}  // namespace baton::planner::pack_detail
