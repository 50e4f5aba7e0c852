// ValidatePacking: an independent check of any packing. It shares nothing
// with the packer on purpose: a plain all-pairs comparison, O(n^2).

#include <algorithm>
#include <set>
#include <string>
#include <utility>

#include "baton/planner/memory/pack.h"

namespace baton::planner {
namespace {

std::string Describe(const PackProblem& problem, size_t i) {
  const PackBuffer& b = problem.buffers[i];
  return "buffer " + std::to_string(i) + (b.id.empty() ? "" : " ('" + b.id + "')") + " [" +
         std::to_string(b.lower) + ", " + std::to_string(b.upper) + ") of " +
         std::to_string(b.size) + " bytes";
}

}  // namespace

Check ValidatePacking(const PackProblem& problem, const PackSolution& solution) {
  const size_t n = problem.buffers.size();
  if (solution.offsets.size() != n) {
    return Fail("packing has " + std::to_string(solution.offsets.size()) + " offsets for " +
                std::to_string(n) + " buffers");
  }
  if (problem.alignment < 1) return Fail("alignment must be >= 1");
  int64_t height = 0;
  for (size_t i = 0; i < n; ++i) {
    const int64_t offset = solution.offsets[i];
    if (offset < 0)
      return Fail(Describe(problem, i) + ": negative offset " + std::to_string(offset));
    if (offset % problem.alignment != 0) {
      return Fail(Describe(problem, i) + ": offset " + std::to_string(offset) +
                  " is not a multiple of " + std::to_string(problem.alignment));
    }
    height = std::max(height, offset + problem.buffers[i].size);
  }
  if (height != solution.height) {
    return Fail("packing claims height " + std::to_string(solution.height) + " but buffers reach " +
                std::to_string(height));
  }
  if (problem.capacity > 0 && height > problem.capacity) {
    return Fail("height " + std::to_string(height) + " exceeds the capacity " +
                std::to_string(problem.capacity));
  }
  std::set<std::pair<size_t, size_t>> extra;
  for (const auto& [a, b] : problem.extra_conflicts) {
    if (a < 0 || b < 0 || static_cast<size_t>(a) >= n || static_cast<size_t>(b) >= n) {
      return Fail("extra conflict (" + std::to_string(a) + ", " + std::to_string(b) +
                  ") names no buffer");
    }
    extra.emplace(std::min<size_t>(a, b), std::max<size_t>(a, b));
  }
  for (size_t i = 0; i < n; ++i) {
    const PackBuffer& x = problem.buffers[i];
    const int64_t xo = solution.offsets[i];
    for (size_t j = i + 1; j < n; ++j) {
      const PackBuffer& y = problem.buffers[j];
      const int64_t yo = solution.offsets[j];
      const bool share_bytes = xo < yo + y.size && yo < xo + x.size;
      if (!share_bytes) continue;
      const bool live_together = x.lower < y.upper && y.lower < x.upper;
      if (live_together || extra.count({i, j}) != 0) {
        return Fail(Describe(problem, i) + " at offset " + std::to_string(xo) + " overlaps " +
                    Describe(problem, j) + " at offset " + std::to_string(yo) +
                    (live_together ? "" : " (extra conflict)"));
      }
    }
  }
  return {};
}

}  // namespace baton::planner
