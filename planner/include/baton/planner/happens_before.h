#pragma once
// Happens-before over a periodic schedule (DESIGN §5), computed the way the
// runtime decides readiness: from queue counters.
//
// For every node n, R[n][q] is how far queue q's counter is known to have
// advanced when n starts inference i, relative to i: the counter has reached
// at least i * len(q) + R[n][q]. Knowledge flows along queue program order
// (including from one iteration to the next), along waits (with their lag),
// and from the in-flight limit (inference i starts after inference i - D has
// finished everywhere). R is the least fixpoint of those rules; it exists
// because every cycle of the schedule moves back at least one iteration.
//
// Node m has completed inference i + delta when n starts inference i iff
//   R[n][queue(m)] >= (delta + stage(m)) * len(queue(m)) + position(m) + 1.

#include <cstdint>
#include <vector>

#include "baton/planner/program.h"

namespace baton::planner {

class HappensBefore {
 public:
  // Needs order, programs, waits, node_stage, node_queue, in_flight.
  explicit HappensBefore(const Program& program);

  // When n starts inference i, has m completed inference i + delta?
  bool Completed(int m, int delta, int n) const;
  // Would n's knowledge, with `others` as its waits instead of its own,
  // imply `candidate`?
  bool ImpliedWithout(int n, const std::vector<WaitEdge>& others, WaitEdge candidate) const;

  int position(int n) const { return position_[n]; }

 private:
  static constexpr int64_t kNone = INT64_MIN / 4;
  std::vector<int64_t> Knowledge(int n, const std::vector<WaitEdge>& waits) const;
  int64_t Target(int m, int delta) const;

  const Program& p_;
  std::vector<int> position_;       // per node
  std::vector<int64_t> length_;     // per queue
  std::vector<int64_t> last_key_;   // per queue
  std::vector<std::vector<int64_t>> r_;
};

}  // namespace baton::planner
