#pragma once
// The arena packer: places buffers with half-open lifetimes [lower, upper) at
// byte offsets so that no two buffers whose lifetimes intersect share a byte.
// One packer serves every domain the planner plans and `baton pack`.
// Algorithm and measurements: docs/packing.md. Host only; may allocate;
// reentrant (no global state), so separate calls may run on separate threads.

#include <cstdint>
#include <string>
#include <vector>

#include "baton/planner/result.h"

namespace baton::planner {

struct PackBuffer {
  std::string id;
  int64_t lower = 0;  // first time step the buffer is live
  int64_t upper = 0;  // one past the last; upper > lower
  int64_t size = 0;   // bytes, > 0
  // Pairs that must not share bytes although their lifetimes do not
  // intersect go in PackProblem::extra_conflicts.
};

struct PackProblem {
  std::vector<PackBuffer> buffers;
  int64_t alignment = 1;  // every offset is a multiple of this
  // 0: minimize the height until it is proven optimal or time runs out.
  // >0: decide whether the buffers fit within this many bytes, and return the
  // first packing found that does (not necessarily the lowest).
  int64_t capacity = 0;
  // Search budget in seconds; the best packing so far wins. The greedy
  // answer comes first whatever the limit (0: greedy only). Given the same
  // problem, the result is the same unless the limit cut the search short.
  double time_limit_s = 10.0;
  // Extra conflicts beyond interval intersection (indices into buffers). When
  // non-empty, two buffers conflict iff their intervals intersect OR the pair
  // is listed. The planner uses this for happens-before conflicts that
  // lifetimes on one time axis cannot express.
  std::vector<std::pair<int, int>> extra_conflicts;
};

struct PackSolution {
  std::vector<int64_t> offsets;  // per buffer, aligned
  int64_t height = 0;            // max(offset + size)
  int64_t lower_bound = 0;       // max total size live at one time step
  // The height is proven minimal: it equals lower_bound, or an exhaustive
  // search showed that nothing lower fits.
  bool optimal = false;
  double seconds = 0;  // wall time Pack() took
};

// Fails (with a message) only for invalid input, or when a capacity is given
// and no packing within it was found in the time limit (the message tells a
// proof of infeasibility from a time-out). With extra_conflicts, lower_bound
// is the heaviest clique the packer found, still a valid bound.
Result<PackSolution> Pack(const PackProblem& problem);

// Independent checker: every offset aligned, non-negative, and no two
// conflicting buffers overlap; height correct and, if the problem has a
// capacity, within it. Returns an error naming the first offending pair.
// Shares no code with Pack(); O(n^2).
Check ValidatePacking(const PackProblem& problem, const PackSolution& solution);

// MiniMalloc CSV: header `id,lower,upper,size` (an `offset` column is
// accepted and ignored on input). Errors name the line. WritePackCsv adds the
// offset column when `offsets` has one entry per buffer; ids must not
// contain commas or line breaks.
Result<std::vector<PackBuffer>> ReadPackCsv(const std::string& text);
std::string WritePackCsv(const std::vector<PackBuffer>& buffers,
                         const std::vector<int64_t>& offsets);

}  // namespace baton::planner
