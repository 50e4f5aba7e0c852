#pragma once
// The arena packer: places buffers with half-open lifetimes [lower, upper) at
// byte offsets so that no two buffers whose lifetimes intersect share a byte.
// One packer serves every domain the planner plans and `baton pack`.

#include <cstdint>
#include <string>
#include <vector>

#include "baton/planner/result.h"

namespace baton::planner {

struct PackBuffer {
  std::string id;
  int64_t lower = 0;   // first time step the buffer is live
  int64_t upper = 0;   // one past the last; upper > lower
  int64_t size = 0;    // bytes, > 0
  // Optional: explicit pairs of buffers that must not overlap even though
  // their intervals do not intersect (or may overlap although they do)
  // are expressed by the planner through `conflicts` below instead.
};

struct PackProblem {
  std::vector<PackBuffer> buffers;
  int64_t alignment = 1;       // every offset is a multiple of this
  int64_t capacity = 0;        // 0: minimize the height; >0: fit within it
  double time_limit_s = 10.0;  // search budget; the best packing so far wins
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
  bool optimal = false;          // height == a proven lower bound / capacity met by exact search
  double seconds = 0;
};

// Fails (with a message) only for invalid input, or when a capacity is given
// and no packing within it was found in the time limit.
Result<PackSolution> Pack(const PackProblem& problem);

// Independent checker: every offset aligned, non-negative, and no two
// conflicting buffers overlap; height correct. Returns an error naming the
// first offending pair.
Check ValidatePacking(const PackProblem& problem, const PackSolution& solution);

// MiniMalloc CSV: header `id,lower,upper,size` (an `offset` column is
// accepted and ignored on input). Errors name the line.
Result<std::vector<PackBuffer>> ReadPackCsv(const std::string& text);
std::string WritePackCsv(const std::vector<PackBuffer>& buffers,
                         const std::vector<int64_t>& offsets);

}  // namespace baton::planner
